// SPDX-License-Identifier: Apache-2.0
// The L-SVD: reconstruction, L-orthogonality, f-diagonality, the energy and truncation-error identities,
// optimality against other tubal-rank-k tensors, the energy truncation against a brute-force search, and
// degenerate inputs. Every check is an identity built from the product and transpose, or an exhaustive search.
// Then the ranks and the spectral and nuclear norms, which rest on the same slice SVDs (one translation unit:
// Eigen's BDCSVD costs about a minute of compile time per scalar type).
#include <doctest/doctest.h>

#include <Eigen/SVD>
#include <array>
#include <cmath>
#include <limits>

#include "factorization_support.hpp"
#include "tprod/algebra/predicates.hpp"
#include "tprod/algebra/qr.hpp"
#include "tprod/algebra/rank.hpp"
#include "tprod/algebra/spectral_norms.hpp"
#include "tprod/algebra/svd.hpp"

using namespace tprod;
using namespace tprod::factor_test;

namespace {

/// Σ_k w_k Σ_{i ≥ first} σ_{ik}²: the transform-domain energy of the singular values from index `first` on.
template <class R, class Ahat>
double tail_energy(const R& result, const Ahat& ahat, std::size_t first) {
  double e = 0;
  for (std::size_t k = 0; k < ahat.stored_slices(); ++k)
    for (auto i = Eigen::Index(first); i < result.sigma.rows(); ++i)
      e += ahat.slice_weight(k) * std::pow(double(result.sigma(i, Eigen::Index(k))), 2);
  return e;
}

}  // namespace

namespace {

/// Checks the L-SVD of a random m×n×p tensor of T (promoted under L) in both modes.
template <class T, class L>
void check_svd(std::size_t m, std::size_t n, std::size_t p, const L& l) {
  using S = scalar_under<T, L>;
  CAPTURE(L::name());
  CAPTURE(shape_string(m, n, p));
  const auto a = random_tensor3<S>(m, n, p, 17);
  const double eps = factor_tol<T>(m * n * p) * double(frobenius_norm(a));
  for (factor_mode mode : {factor_mode::economy, factor_mode::full}) {
    const auto r = svd(a, l, mode);
    static_assert(std::same_as<value_type_of<decltype(r.u)>, S>, "U has the input's (promoted) scalar");
    const std::size_t k = std::min(m, n);
    const bool full = mode == factor_mode::full;
    CHECK(r.u.shape() == shape_string(m, full ? m : k, p));
    CHECK(r.s.shape() == (full ? shape_string(m, n, p) : shape_string(k, k, p)));
    CHECK(r.v.shape() == shape_string(n, full ? n : k, p));
    CHECK(r.tubes() == k);
    CHECK(distance(reconstruct(r.u, r.s, r.v, l), a) <= eps);
    CHECK(orthogonality_error(r.u, l) <= factor_tol<T>(m * m * p));
    CHECK(orthogonality_error(r.v, l) <= factor_tol<T>(n * n * p));
    if (full) {  // square factors: also U *_L Uᵀ = I and V *_L Vᵀ = I
      CHECK(orthogonality_error(transpose(r.u, l), l) <= factor_tol<T>(m * m * p));
      CHECK(orthogonality_error(transpose(r.v, l), l) <= factor_tol<T>(n * n * p));
    }
    CHECK(is_f_diagonal(r.s_hat));
    CHECK(is_f_diagonal(r.s));
    for (Eigen::Index c = 0; c < r.sigma.cols(); ++c)
      for (Eigen::Index i = 0; i < r.sigma.rows(); ++i) {
        CHECK(r.sigma(i, c) >= 0);
        if (i > 0) CHECK(r.sigma(i, c) <= r.sigma(i - 1, c));
      }
    // The singular tubes are the diagonal tubes of S.
    const auto tubes = r.singular_tubes();
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t t = 0; t < p; ++t) CHECK(tubes(Eigen::Index(i), Eigen::Index(t)) == r.s(i, i, t));
  }
}

using shapes = std::array<std::array<std::size_t, 3>, 3>;
constexpr shapes test_shapes = {{{5, 3, 4}, {3, 5, 3}, {4, 4, 1}}};

}  // namespace

// Scalars are swept under dct and dft; the other transforms with double (a complex Z makes it complex).
TEST_CASE_TEMPLATE("svd: A = U *_L S *_L Vᵀ with L-orthogonal U, V and f-diagonal S", T, float, double,
                   std::complex<float>, std::complex<double>) {
  for (const auto& [m, n, p] : test_shapes) {
    check_svd<T>(m, n, p, dct{});
    check_svd<T>(m, n, p, dft{});
  }
}
TEST_CASE("svd: the identity transform and real, orthogonal and complex matrices Z") {
  for (const auto& [m, n, p] : test_shapes) {
    check_svd<double>(m, n, p, identity_transform{});
    check_svd<double>(m, n, p, matrix_transform<double>(orthogonal_z(p)));
    check_svd<double>(m, n, p, matrix_transform<double>(skewed_z(p)));
    check_svd<double>(m, n, p, matrix_transform<cd>(complex_z(p)));
  }
}

namespace {

/// c·Σ_k w_k Σ_i σ_ik² = ‖A‖²_F, and ‖A − A_k‖²_F = c·(the discarded part of that sum) for every k.
template <class T, class L>
void check_truncation(std::size_t p, const L& l) {
  CAPTURE(L::name());
  CAPTURE(p);
  const std::size_t m = 6, n = 5;
  const auto a = random_tensor3<T>(m, n, p, 29);
  const auto ahat = transform(a, l);
  const auto full = svd(ahat);
  const double c = *l.norm_scale(p), norm2 = std::pow(double(frobenius_norm(a)), 2);
  CHECK(std::abs(c * tail_energy(full, ahat, 0) - norm2) <= factor_tol<T>(m * n * p) * norm2);
  for (std::size_t k = 1; k <= n; ++k) {
    CAPTURE(k);
    const auto r = truncated_svd(a, l, k);
    CHECK(r.u.shape() == shape_string(m, k, p));
    CHECK(r.s.shape() == shape_string(k, k, p));
    CHECK(r.v.shape() == shape_string(n, k, p));
    CHECK(r.kept == std::vector<std::size_t>(p, k));
    const double err2 = std::pow(distance(reconstruct(r.u, r.s, r.v, l), a), 2);
    CHECK(std::abs(err2 - c * tail_energy(full, ahat, k)) <= factor_tol<T>(m * n * p) * norm2);
    CHECK(orthogonality_error(r.u, l) <= factor_tol<T>(m * k * p));
  }
}

}  // namespace

TEST_CASE_TEMPLATE("truncated_svd: ‖A − A_k‖²_F is the discarded energy (÷p under the DFT)", T, float, double,
                   std::complex<float>, std::complex<double>) {
  for (std::size_t p : {4u, 3u}) {
    check_truncation<T>(p, dct{});
    check_truncation<T>(p, dft{});
  }
}
TEST_CASE("truncated_svd: the error identity under the identity transform and an orthogonal Z") {
  for (std::size_t p : {4u, 3u}) {
    check_truncation<double>(p, identity_transform{});
    check_truncation<double>(p, matrix_transform<double>(orthogonal_z(p)));
  }
}

TEST_CASE("truncated_svd: A_k is closer to A than other tensors of tubal rank k") {
  const std::size_t m = 7, n = 6, p = 4, k = 2;
  for_each(unitary_transforms(p), [&](const auto& l) {
    CAPTURE(std::decay_t<decltype(l)>::name());
    const auto a = random_tensor3<double>(m, n, p, 5);
    const auto r = truncated_svd(a, l, k);
    const double best = distance(reconstruct(r.u, r.s, r.v, l), a);
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      // A random tensor B *_L Cᵀ of tubal rank ≤ k, and a small perturbation of the optimum's factors.
      const auto b = random_tensor3<double>(m, k, p, 100 + seed), c = random_tensor3<double>(n, k, p, 200 + seed);
      CHECK(best <= distance(product(b, transpose(c, l), l), a));
      const auto nudged_u = r.u + 0.01 * random_tensor3<double>(m, k, p, 300 + seed);
      CHECK(best <= distance(reconstruct(nudged_u, r.s, r.v, l), a) * (1 + 1e-12));
    }
  });
}

TEST_CASE("energy_truncated_svd: the smallest multi-rank keeping γ of the energy (checked exhaustively)") {
  const std::size_t m = 3, n = 3;
  auto check = [&](std::size_t p, const auto& l) {
    CAPTURE(std::decay_t<decltype(l)>::name());
    CAPTURE(p);
    const auto a = random_tensor3<double>(m, n, p, 40 + p);
    const auto ahat = transform(a, l);
    const auto full = svd(ahat);
    const std::size_t q = ahat.stored_slices();
    const double total = tail_energy(full, ahat, 0), c = *l.norm_scale(p);
    for (double gamma : {0.3, 0.5, 0.8, 0.9, 0.97, 0.999}) {
      CAPTURE(gamma);
      // Exhaustive search over every per-stored-slice rank vector (4^q of them).
      std::size_t best_cost = std::numeric_limits<std::size_t>::max();
      std::vector<std::size_t> ranks(q, 0);
      for (std::size_t code = 0; code < std::size_t(std::pow(4, q)); ++code) {
        double kept = 0;
        std::size_t cost = 0;
        for (std::size_t k = 0, rest = code; k < q; ++k, rest /= 4) {
          ranks[k] = rest % 4;
          cost += std::size_t(ahat.slice_weight(k)) * ranks[k];
          for (std::size_t i = 0; i < ranks[k]; ++i)
            kept += ahat.slice_weight(k) * std::pow(full.sigma(Eigen::Index(i), Eigen::Index(k)), 2);
        }
        if (kept >= gamma * total) best_cost = std::min(best_cost, cost);
      }
      const auto r = energy_truncated_svd(a, l, gamma);
      REQUIRE(r.kept.size() == p);
      std::size_t cost = 0;
      for (std::size_t j = 0; j < p; ++j) {
        cost += r.kept[j];
        CHECK(r.kept[j] == r.kept[j == 0 ? 0 : (q < p ? p - j : j)]);  // conjugate slices keep alike
      }
      CHECK(cost == best_cost);
      double discarded = 0;  // from the full SVD's values beyond each slice's kept rank (stored slice k is slice k)
      for (std::size_t k = 0; k < q; ++k)
        for (std::size_t i = r.kept[k]; i < std::min(m, n); ++i)
          discarded += ahat.slice_weight(k) * std::pow(full.sigma(Eigen::Index(i), Eigen::Index(k)), 2);
      const double kept_energy = total - discarded;
      CHECK(kept_energy >= gamma * total * (1 - 1e-12));
      CHECK(tail_energy(r, ahat, 0) == doctest::Approx(kept_energy).epsilon(1e-12));
      const double err2 = std::pow(distance(reconstruct(r.u, r.s, r.v, l), a), 2);
      CHECK(err2 == doctest::Approx(c * (total - kept_energy)).scale(c * total).epsilon(1e-12));
      CHECK(err2 <= (1 - gamma) * c * total * (1 + 1e-12));
    }
    // γ = 1 keeps everything, γ = 0 nothing (one zero singular tube remains).
    const auto all = energy_truncated_svd(a, l, 1.0);
    CHECK(distance(reconstruct(all.u, all.s, all.v, l), a) <= 1e-12 * double(frobenius_norm(a)));
    const auto none = energy_truncated_svd(a, l, 0.0);
    CHECK(none.kept == std::vector<std::size_t>(p, 0));
    CHECK(none.tubes() == 1);
    CHECK(frobenius_norm(reconstruct(none.u, none.s, none.v, l)) == 0.0);
  };
  check(4, dft{});  // stored slices weigh 1, 2, 1
  check(5, dft{});  // 1, 2, 2
  check(3, dct{});
  check(3, matrix_transform<double>(orthogonal_z(3)));
  for (double bad : {-0.1, 1.5, std::nan("")})
    CHECK_THROWS_AS(energy_truncated_svd(random_tensor3<double>(2, 2, 2, 1), dct{}, bad), shape_error);
}

TEST_CASE("svd: real input under the DFT has real factors, including the self-conjugate slices") {
  const auto a = random_tensor3<float>(4, 3, 6, 8);
  const auto r = svd(a, dft{});
  static_assert(std::same_as<decltype(r.u), tensor3<float>>);
  REQUIRE(r.u_hat.stored_slices() == 4);
  for (std::size_t k : {0u, 3u}) {  // slices 0 and p/2 are their own conjugates
    CHECK(r.u_hat.slice(k).imag().cwiseAbs().maxCoeff() == 0.0f);
    CHECK(r.v_hat.slice(k).imag().cwiseAbs().maxCoeff() == 0.0f);
  }
  CHECK(distance(reconstruct(r.u, r.s, r.v, dft{}), a) <= factor_tol<float>(72) * double(frobenius_norm(a)));
}

TEST_CASE("svd: zero, rank-deficient and empty tensors") {
  for_each(factorization_transforms(5), [&](const auto& l) {
    CAPTURE(std::decay_t<decltype(l)>::name());
    using S = scalar_under<double, std::decay_t<decltype(l)>>;
    const tensor3<S> z(4, 3, 5);
    const auto r = svd(z, l);
    CHECK(r.sigma.cwiseAbs().maxCoeff() == 0.0);
    CHECK(frobenius_norm(reconstruct(r.u, r.s, r.v, l)) == 0.0);
    CHECK(orthogonality_error(r.u, l) <= factor_tol<double>(60));
    CHECK(energy_truncated_svd(z, l, 0.9).kept == std::vector<std::size_t>(5, 0));
  });
  // Rank one in every slice: all but the first singular values vanish and A_1 = A.
  const auto u = random_tensor3<double>(5, 1, 4, 1), v = random_tensor3<double>(4, 1, 4, 2);
  const auto a = product(u, transpose(v, dct{}), dct{});
  const auto r = svd(a, dct{});
  CHECK(r.sigma.bottomRows(3).cwiseAbs().maxCoeff() <= 1e-14 * r.sigma.maxCoeff());
  const auto r1 = truncated_svd(a, dct{}, 1);
  CHECK(distance(reconstruct(r1.u, r1.s, r1.v, dct{}), a) <= 1e-13 * double(frobenius_norm(a)));

  CHECK_THROWS_WITH_AS(truncated_svd(a, dct{}, 0), doctest::Contains("5x4x4"), shape_error);
  CHECK_THROWS_WITH_AS(truncated_svd(a, dct{}, 5), doctest::Contains("1..min(m, n) = 4"), shape_error);
  CHECK_THROWS_WITH_AS(svd(tensor3<double>(0, 3, 2), dct{}), doctest::Contains("0x3x2"), shape_error);
}

// Ranks (multi, average, tubal) and the spectral and nuclear norms. The norms are checked against the matrix
// of the operator X ↦ A *_L X (built column by column with the product) and its SVD: for Z a multiple of a
// unitary matrix that operator is unitarily similar to blockdiag(Â_0, …, Â_{p−1}).

TEST_CASE_TEMPLATE("ranks: a product of 15x10xp and 10x15xp random tensors has tubal rank 10", T, float, double) {
  for (std::size_t p : {4u, 5u}) {
    for_each(factorization_transforms(p), [&](const auto& l) {
      using S = scalar_under<T, std::decay_t<decltype(l)>>;
      CAPTURE(std::decay_t<decltype(l)>::name());
      const auto a = product(random_tensor3<S>(15, 10, p, 1), random_tensor3<S>(10, 15, p, 2), l);
      const rank_info r = ranks(a, l);
      CHECK(r.tubal_rank == 10);
      CHECK(r.multi_rank == std::vector<std::size_t>(p, 10));
      CHECK(r.average_rank == 10.0);
      CHECK(tubal_rank(a, l) == 10);
      CHECK(average_rank(a, l) == 10.0);
      CHECK(multi_rank(a, l) == r.multi_rank);
    });
  }
}

TEST_CASE("ranks: the default tolerance counts the transform's conditioning (a random real 200x200 Z)") {
  // Tubal rank 10 under a random Z of condition about 450 (1-norm estimate larger): the 11th singular values
  // are rounding amplified by Z (4.2e-10 here) and were counted with max(m, n)·ε·σ_max = 1.5e-10.
  const std::size_t p = 200;
  std::srand(5);
  const matrix_transform<double> l(Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p)), 1e6);
  CAPTURE(l.condition());
  const auto a = product(random_tensor3<double>(15, 10, p, 1), random_tensor3<double>(10, 15, p, 2), l);
  const rank_info r = ranks(a, l);
  CHECK(r.tubal_rank == 10);
  CHECK(r.tolerance == doctest::Approx(default_rank_tolerance(detail::slice_singular_values(transform(a, l)), 15, 15,
                                                              epsilon_v<double>, l.condition())));
  CHECK(transform_condition(dct{}) == 1.0);
  CHECK(transform_condition(l) == l.condition());
}

TEST_CASE("svd, ranks and qr refuse NaN and Inf instead of returning uninitialized factors") {
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    auto a = random_tensor3<double>(3, 4, 5, 1);
    a(1, 2, 3) = bad;
    CHECK_THROWS_WITH_AS(svd(a, dct{}), doctest::Contains("svd: the 3x4x5 tensor holds NaN or Inf"), numerical_error);
    CHECK_THROWS_WITH_AS(ranks(a, dft{}), doctest::Contains("holds NaN or Inf"), numerical_error);
    CHECK_THROWS_AS(truncated_svd(a, identity_transform{}, 1), numerical_error);
    CHECK_THROWS_AS(spectral_norm(a, dct{}), numerical_error);
    CHECK_THROWS_WITH_AS(qr(a, dct{}), doctest::Contains("qr: the 3x4x5 tensor holds NaN or Inf"), numerical_error);
  }
}

TEST_CASE("ranks: slices of chosen ranks give that multi-rank, its mean and its maximum") {
  // Build Â slice by slice with rank r_k (a random m×r_k times r_k×n product), then map back.
  auto build = [](auto ahat, const std::vector<std::size_t>& r) {
    using D = typename std::decay_t<decltype(ahat)>::value_type;
    using M = Eigen::Matrix<D, Eigen::Dynamic, Eigen::Dynamic>;
    for (std::size_t k = 0; k < ahat.stored_slices(); ++k) {
      std::srand(unsigned(k + 1));
      const auto rk = Eigen::Index(r[k]);
      M left = M::Random(Eigen::Index(ahat.m()), rk), right = M::Random(rk, Eigen::Index(ahat.n()));
      if (ahat.slice_weight(k) == 1.0 && ahat.stored_slices() < ahat.p()) {  // a self-conjugate DFT slice is real
        left = left.real().template cast<D>();
        right = right.real().template cast<D>();
      }
      ahat.slice(k) = left * right;
    }
    return inverse_transform(ahat);
  };
  const std::size_t m = 6, n = 5;
  {  // dct: all p slices are free
    const std::vector<std::size_t> r = {5, 0, 2, 3, 1};
    const auto a = build(transformed<double, dct>(dextents3(m, n, 5), dct{}), r);
    const rank_info info = ranks(a, dct{});
    CHECK(info.multi_rank == r);
    CHECK(info.tubal_rank == 5);
    CHECK(info.average_rank == doctest::Approx(11.0 / 5));
  }
  {  // dft of a real tensor: stored slices 0..3 of p = 6 give slices 4, 5 by conjugation
    const std::vector<std::size_t> r = {1, 4, 0, 2};
    const auto a = build(transformed<double, dft>(dextents3(m, n, 6), dft{}), r);
    static_assert(std::same_as<value_type_of<decltype(a)>, double>);
    const rank_info info = ranks(a, dft{});
    CHECK(info.multi_rank == std::vector<std::size_t>{1, 4, 0, 2, 0, 4});
    CHECK(info.tubal_rank == 4);
    CHECK(info.average_rank == doctest::Approx(11.0 / 6));
  }
}

TEST_CASE("ranks: the tolerance decides which singular values count") {
  // Under the identity transform the slices are the matrices themselves: diag(3, 1e-3, 1e-9) and diag(2, 0, 0).
  tensor3<double> a(3, 3, 2);
  a(0, 0, 0) = 3, a(1, 1, 0) = 1e-3, a(2, 2, 0) = 1e-9, a(0, 0, 1) = 2;
  CHECK(ranks(a, identity_transform{}).multi_rank == std::vector<std::size_t>{3, 1});  // default 3·ε·3 ≈ 2e-15
  CHECK(ranks(a, identity_transform{}, 1e-6).multi_rank == std::vector<std::size_t>{2, 1});
  CHECK(ranks(a, identity_transform{}, 1e-2).multi_rank == std::vector<std::size_t>{1, 1});
  CHECK(ranks(a, identity_transform{}, 5).tubal_rank == 0);
  CHECK(ranks(a, identity_transform{}).tolerance == doctest::Approx(3 * epsilon_v<double> * 3));
  const rank_info zero = ranks(tensor3<float>(4, 2, 3), dct{});
  CHECK(zero.tubal_rank == 0);
  CHECK(zero.average_rank == 0.0);
  CHECK(zero.multi_rank == std::vector<std::size_t>(3, 0));
  CHECK_THROWS_WITH_AS(ranks(tensor3<double>(0, 2, 3), dct{}), doctest::Contains("0x2x3"), shape_error);
}

TEST_CASE_TEMPLATE("spectral_norm and nuclear_norm: the 2-norm and c·(nuclear norm) of the operator X ↦ A *_L X", T,
                   double, std::complex<double>) {
  const std::size_t m = 4, n = 3;
  for (std::size_t p : {4u, 5u}) {
    for_each(unitary_transforms(p), [&](const auto& l) {
      CAPTURE(std::decay_t<decltype(l)>::name());
      const auto a = random_tensor3<T>(m, n, p, 61);
      // Column (j, k) of the operator's matrix is vec(A *_L E_jk), E_jk the n×1×p unit tensor.
      Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> op(Eigen::Index(m * p), Eigen::Index(n * p));
      for (std::size_t k = 0; k < p; ++k)
        for (std::size_t j = 0; j < n; ++j) {
          tensor3<T> e(n, 1, p);
          e(j, 0, k) = T(1);
          const auto col = product(a, e, l);
          op.col(Eigen::Index(j + n * k)) = col.elements();
        }
      const auto sv = Eigen::JacobiSVD<decltype(op)>(op).singularValues();
      CHECK(spectral_norm(a, l) == doctest::Approx(sv(0)).epsilon(1e-12));
      CHECK(nuclear_norm(a, l) == doctest::Approx(*l.norm_scale(p) * sv.sum()).epsilon(1e-12));
    });
  }
}
