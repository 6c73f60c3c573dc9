// SPDX-License-Identifier: Apache-2.0
// Rank-k truncated SVD of one matrix (LASER's rank reduction), checked against Eigen's JacobiSVD and the
// Eckart–Young error.
#include <doctest/doctest.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <cmath>
#include <limits>

#include "decomp_test_support.hpp"
#include "tprod/decomp/low_rank.hpp"

using namespace decomp_test;

namespace {

// An m×n matrix with the known singular values n, n − 1, …, 1 (gaps of 1, so every truncation is well defined):
// A = Q_1 diag(σ) Q_2ᵀ with orthonormal Q from the QR of random matrices.
template <class T>
dense_matrix<T> known_spectrum(std::size_t m, std::size_t n, std::uint64_t seed) {
  const auto orthonormal = [](std::size_t rows, std::size_t cols, std::uint64_t s) {
    const Eigen::HouseholderQR<dense_matrix<T>> qr(tprod::random_matrix<T>(rows, cols, s));
    return dense_matrix<T>(qr.householderQ() * dense_matrix<T>::Identity(Eigen::Index(rows), Eigen::Index(cols)));
  };
  const auto sigma = Eigen::Matrix<T, Eigen::Dynamic, 1>::LinSpaced(Eigen::Index(n), T(n), T(1));
  return orthonormal(m, n, seed) * sigma.asDiagonal() * orthonormal(n, n, seed + 1).transpose();
}

}  // namespace

TEST_CASE_TEMPLATE("low_rank_approximation equals Eigen's truncated SVD and has the Eckart-Young error", T, float,
                   double) {
  const std::size_t m = 12, n = 9;
  const dense_matrix<T> a = known_spectrum<T>(m, n, 5);
  const auto reference = tprod::detail::jacobi_svd<Eigen::ComputeThinU | Eigen::ComputeThinV>(a);
  const auto& s = reference.singularValues();
  // A backward-stable SVD perturbs the rank-k projector by O(ε·σ_1/gap) with gap = 1 and σ_1 = n: allow 50·ε·σ_1
  // per accumulated rounding over the m·n-sized products.
  const double t = tol<T>(double(m * n)) * double(n);
  for (std::size_t k = 1; k <= n; ++k) {
    CAPTURE(k);
    const auto r = tprod::low_rank_approximation(a, k);
    CHECK(r.rank() == k);
    CHECK(r.parameter_count() == k * (m + n));
    const auto kk = Eigen::Index(k);
    const dense_matrix<T> expected =
        reference.matrixU().leftCols(kk) * s.head(kk).asDiagonal() * reference.matrixV().leftCols(kk).transpose();
    const dense_matrix<T> ak = r.reconstruct();
    CHECK((ak - expected).cwiseAbs().maxCoeff() <= t);
    // ‖A − A_k‖_F² = Σ_{i>k} σ_i² with σ_i = n + 1 − i
    double tail = 0, total = 0;
    for (std::size_t i = 1; i <= n; ++i) (i > k ? tail : total) += double((n + 1 - i) * (n + 1 - i));
    total += tail;
    CHECK((a - ak).template cast<double>().norm() == doctest::Approx(std::sqrt(tail)).epsilon(t).scale(double(n)));
    CHECK(r.relative_error == doctest::Approx(std::sqrt(tail / total)).epsilon(t).scale(1));
    CHECK(orthonormality_defect(r.right) <= tol<T>(double(n)));
  }
  CHECK(rel_diff_matrix(tprod::low_rank_approximation(a, n).reconstruct(), a) <= t);
}

TEST_CASE("low_rank_approximation of a wide matrix and of zero") {
  const dense_matrix<double> wide = known_spectrum<double>(10, 6, 9).transpose();  // 6×10
  const auto r = tprod::low_rank_approximation(wide, 2);
  CHECK(r.left.rows() == 6);
  CHECK(r.right.rows() == 10);
  CHECK(r.parameter_count() == 2 * 16);
  const auto z = tprod::low_rank_approximation(dense_matrix<double>(dense_matrix<double>::Zero(4, 3)), 1);
  CHECK(z.relative_error == 0);
  CHECK(z.reconstruct().isZero(0));
}

TEST_CASE("low_rank_approximation rejects bad ranks and non-finite matrices, naming the shape") {
  dense_matrix<double> a = known_spectrum<double>(5, 3, 1);
  CHECK_THROWS_WITH_AS(tprod::low_rank_approximation(a, 0), doctest::Contains("5x3"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::low_rank_approximation(a, 4), doctest::Contains("1..min(m, n)"), tprod::shape_error);
  a(2, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(tprod::low_rank_approximation(a, 1), doctest::Contains("non-finite"), tprod::numerical_error);
}
