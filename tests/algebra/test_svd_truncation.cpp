// SPDX-License-Identifier: Apache-2.0
// Truncating a computed L-SVD (svd_truncation.hpp): truncate(svd(A), k) and truncate_energy(svd(A), γ) agree with
// the direct truncated_svd and energy_truncated_svd, reconstruct(r) agrees with U *_L S *_L Vᵀ formed by products,
// truncations compose, and storage / compression_ratio count Σ_j r_j (m + n + 1).
#include <doctest/doctest.h>

#include "factorization_support.hpp"
#include "tprod/algebra/svd_truncation.hpp"

using namespace tprod;
using namespace tprod::factor_test;

namespace {

template <class T, class L>
void check_truncations(std::size_t m, std::size_t n, std::size_t p, const L& l) {
  using S = scalar_under<T, L>;
  CAPTURE(L::name());
  CAPTURE(shape_string(m, n, p));
  const auto a = random_tensor3<S>(m, n, p, 41);
  const double eps = factor_tol<T>(m * n * p) * double(frobenius_norm(a));
  const auto r = svd(a, l);
  CHECK(distance(reconstruct(r), a) <= eps);
  CHECK(storage(r) == p * std::min(m, n) * (m + n + 1));
  for (std::size_t k = 1; k <= r.tubes(); ++k) {
    CAPTURE(k);
    const auto t = truncate(r, k);
    const auto direct = truncated_svd(a, l, k);
    CHECK(t.kept == direct.kept);
    CHECK(t.u.shape() == direct.u.shape());
    CHECK(distance(reconstruct(t), reconstruct(direct.u, direct.s, direct.v, l)) <= eps);
    CHECK(distance(reconstruct(t), reconstruct(t.u, t.s, t.v, l)) <= eps);
    CHECK(storage(t) == p * k * (m + n + 1));
    CHECK(compression_ratio(t) == doctest::Approx(double(m * n) / double(k * (m + n + 1))));
    if (k > 1) CHECK(distance(reconstruct(truncate(t, k - 1)), reconstruct(truncate(r, k - 1))) <= eps);
  }
  for (double gamma : {0.0, 0.3, 0.8, 0.95, 1.0}) {
    CAPTURE(gamma);
    const auto t = truncate_energy(r, gamma);
    const auto direct = energy_truncated_svd(a, l, gamma);
    CHECK(t.kept == direct.kept);
    CHECK(distance(reconstruct(t), reconstruct(direct.u, direct.s, direct.v, l)) <= eps);
  }
  CHECK_THROWS_AS(truncate(r, 0), shape_error);
  CHECK_THROWS_AS(truncate(r, r.tubes() + 1), shape_error);
  CHECK_THROWS_AS(truncate_energy(r, 1.5), shape_error);
}

}  // namespace

TEST_CASE_TEMPLATE("truncate / truncate_energy / reconstruct agree with the direct truncations", T, float, double,
                   std::complex<double>) {
  for (std::size_t p : {4u, 3u}) {
    check_truncations<T>(6, 5, p, dct{});
    check_truncations<T>(4, 7, p, dft{});
    check_truncations<T>(5, 5, p, identity_transform{});
  }
}

TEST_CASE("storage counts a DFT conjugate pair twice: one complex slice stands for two real ones") {
  const auto a = random_tensor3<double>(6, 4, 4, 3);
  const auto r = truncate(svd(a, dft{}), 2);
  CHECK(r.kept == std::vector<std::size_t>(4, 2));
  CHECK(storage(r) == 4 * 2 * (6 + 4 + 1));
  CHECK(compression_ratio(r) == doctest::Approx(6.0 * 4 * 4 / (4 * 2 * 11)));
}

TEST_CASE("an L-SVD of a fixed-extents tensor keeps m, n and p fixed through truncation and reconstruction") {
  using E = extents3<6, 4, 5>;
  const tensor3<double, E> a(random_tensor3<double>(6, 4, 5, 7).view());
  const auto r = svd(a, dct{});
  static_assert(std::is_same_v<decltype(r.u), tensor3<double, extents3<6, dynamic_extent, 5>>>);
  static_assert(std::is_same_v<decltype(r.s), tensor3<double, extents3<dynamic_extent, dynamic_extent, 5>>>);
  static_assert(std::is_same_v<decltype(r.v), tensor3<double, extents3<4, dynamic_extent, 5>>>);
  const auto t = truncate(r, 2);
  const auto e = truncate_energy(truncated_svd(a, dft{}, 3), 0.9);
  static_assert(std::is_same_v<decltype(reconstruct(t)), tensor3<double, E>>);
  static_assert(std::is_same_v<decltype(reconstruct(e)), tensor3<double, E>>);
  static_assert(std::is_same_v<decltype(energy_truncated_svd(a, dct{}, 0.5).u), tensor3<double, extents3<6, dynamic_extent, 5>>>);
  // The same numbers as the dynamic-extents L-SVD of the same tensor.
  const auto dynamic = truncate(svd(tensor3<double>(a.view()), dct{}), 2);
  const double eps = factor_tol<double>(6 * 4 * 5) * double(frobenius_norm(a));
  CHECK(t.kept == dynamic.kept);
  CHECK(distance(tensor3<double>(reconstruct(t).view()), reconstruct(dynamic)) <= eps);
  CHECK(distance(tensor3<double>(t.u.view()), dynamic.u) <= eps);
  CHECK(storage(t) == storage(dynamic));
  CHECK(distance(reconstruct(t), reconstruct(t.u, t.s, t.v, dct{})) <= eps);  // fixed-extents products agree
}
