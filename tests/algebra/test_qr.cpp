// SPDX-License-Identifier: Apache-2.0
// The L-QR: A = Q *_L R, Q L-orthogonal, R f-upper-triangular, real factors for real input under the DFT.
#include <doctest/doctest.h>

#include <array>

#include "factorization_support.hpp"
#include "tprod/algebra/qr.hpp"

using namespace tprod;
using namespace tprod::factor_test;

namespace {

template <class T, class L>
void check_qr(std::size_t m, std::size_t n, std::size_t p, const L& l) {
  using S = scalar_under<T, L>;
  CAPTURE(L::name());
  CAPTURE(shape_string(m, n, p));
  const auto a = random_tensor3<S>(m, n, p, 23);
  for (factor_mode mode : {factor_mode::economy, factor_mode::full}) {
    const auto f = qr(a, l, mode);
    static_assert(std::same_as<value_type_of<decltype(f.q)>, S>);
    const std::size_t r = mode == factor_mode::full ? m : std::min(m, n);
    CHECK(f.q.shape() == shape_string(m, r, p));
    CHECK(f.r.shape() == shape_string(r, n, p));
    CHECK(distance(product(f.q, f.r, l), a) <= factor_tol<T>(m * n * p) * double(frobenius_norm(a)));
    CHECK(orthogonality_error(f.q, l) <= factor_tol<T>(m * r * p));
    if (mode == factor_mode::full) CHECK(orthogonality_error(transpose(f.q, l), l) <= factor_tol<T>(m * m * p));
    for (std::size_t k = 0; k < f.r_hat.stored_slices(); ++k) {  // every R̂_k upper triangular, exactly
      const auto rk = f.r_hat.slice(k);
      for (Eigen::Index j = 0; j < rk.cols(); ++j)
        for (Eigen::Index i = j + 1; i < rk.rows(); ++i) CHECK(std::abs(rk(i, j)) == 0);
    }
  }
}

constexpr std::array<std::array<std::size_t, 3>, 3> qr_shapes = {{{5, 3, 4}, {3, 5, 3}, {4, 4, 2}}};

}  // namespace

TEST_CASE_TEMPLATE("qr: A = Q *_L R with L-orthogonal Q and f-upper-triangular R", T, float, double,
                   std::complex<float>, std::complex<double>) {
  for (const auto& [m, n, p] : qr_shapes) {
    check_qr<T>(m, n, p, dct{});
    check_qr<T>(m, n, p, dft{});
  }
}

TEST_CASE("qr: the identity transform and real, orthogonal and complex matrices Z") {
  for (const auto& [m, n, p] : qr_shapes) {
    check_qr<double>(m, n, p, identity_transform{});
    check_qr<double>(m, n, p, matrix_transform<double>(orthogonal_z(p)));
    check_qr<double>(m, n, p, matrix_transform<double>(skewed_z(p)));
    check_qr<double>(m, n, p, matrix_transform<cd>(complex_z(p)));
  }
}

TEST_CASE("qr: real input under the DFT factorizes the self-conjugate slices as real matrices") {
  const auto a = random_tensor3<double>(4, 3, 6, 8);
  const auto f = qr(a, dft{});
  static_assert(std::same_as<decltype(f.q), tensor3<double>>);
  for (std::size_t k : {0u, 3u}) {
    CHECK(f.q_hat.slice(k).imag().cwiseAbs().maxCoeff() == 0.0);
    CHECK(f.r_hat.slice(k).imag().cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("qr: zero and empty tensors") {
  const tensor3<double> zero(3, 2, 3);
  const auto f = qr(zero, dct{});
  CHECK(frobenius_norm(product(f.q, f.r, dct{})) == 0.0);
  CHECK(orthogonality_error(f.q, dct{}) <= factor_tol<double>(20));
  CHECK_THROWS_WITH_AS(qr(tensor3<double>(3, 0, 2), dct{}), doctest::Contains("3x0x2"), shape_error);
}
