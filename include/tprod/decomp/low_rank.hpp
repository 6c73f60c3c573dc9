// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file low_rank.hpp
/// @brief The best rank-k approximation of one matrix (Eckart–Young), A ≈ U_k Σ_k V_kᵀ by a thin SVD: the rank
///        reduction LASER (Sharma, Ash and Misra 2024) applies to a single weight matrix, and the per-matrix
///        baseline TensorLLM's shared-factor Tucker is compared with.
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <string>

#include "tprod/core/detail/eigen_svd.hpp"
#include "tprod/decomp/ndtensor.hpp"

namespace tprod {

/// @brief A rank-k factorization A_k = left · rightᵀ with left = U_k Σ_k (m×k) and right = V_k (n×k).
template <real_scalar T>
struct low_rank_result {
  dense_matrix<T> left;   ///< U_k Σ_k ∈ ℝ^{m×k}
  dense_matrix<T> right;  ///< V_k ∈ ℝ^{n×k}, orthonormal columns
  double relative_error = 0;  ///< ‖A − A_k‖_F/‖A‖_F from the discarded singular values (0 when A = 0)

  std::size_t rank() const { return std::size_t(left.cols()); }
  /// @brief The numbers stored, k(m + n) (Σ_k is folded into the left factor).
  std::size_t parameter_count() const { return std::size_t(left.size() + right.size()); }
  /// @brief A_k = U_k Σ_k V_kᵀ.
  dense_matrix<T> reconstruct() const { return left * right.transpose(); }
};

/// @brief The rank-k truncated SVD of `a`: the closest matrix of rank ≤ k in the Frobenius and spectral norms.
/// @throws shape_error unless 1 ≤ k ≤ min(m, n) (the message names the shape); numerical_error for non-finite
///         entries or an SVD that does not converge.
template <real_scalar T>
low_rank_result<T> low_rank_approximation(const dense_matrix<T>& a, std::size_t rank) {
  const auto full = std::size_t(std::min(a.rows(), a.cols()));
  TPROD_EXPECTS(rank >= 1 && rank <= full, "low_rank_approximation: the rank k = " + std::to_string(rank) +
                                               " must lie in 1..min(m, n) for a " + shape_string(a) + " matrix");
  if (!a.allFinite())
    throw numerical_error("low_rank_approximation: the " + shape_string(a) + " matrix has non-finite entries");
  const auto svd = tprod::detail::bdc_svd<Eigen::ComputeThinU | Eigen::ComputeThinV>(a);
  detail::expect_success(svd, "low_rank_approximation");
  const auto k = Eigen::Index(rank);
  const auto& sigma = svd.singularValues();
  low_rank_result<T> r{svd.matrixU().leftCols(k) * sigma.head(k).asDiagonal(), svd.matrixV().leftCols(k), 0};
  const double total = sigma.template cast<double>().squaredNorm();
  const double tail = sigma.tail(sigma.size() - k).template cast<double>().squaredNorm();
  r.relative_error = total == 0 ? 0 : std::sqrt(tail / total);
  return r;
}

}  // namespace tprod
