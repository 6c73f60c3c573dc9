// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file cp.hpp
/// @brief CP (CANDECOMP/PARAFAC) decomposition X ≈ Σ_{r=1}^{R} λ_r a_r⁽¹⁾ ∘ ⋯ ∘ a_r⁽ᴺ⁾ by alternating least squares,
///        computed as the rank-(1, …, 1) case of the block-term ALS (each term's core is the scalar λ_r).
///
/// Conventions (Kolda–Bader's Kruskal form): factor A⁽ⁿ⁾ ∈ ℝ^{I_n×R} has unit-norm columns, the weights λ_r ≥ 0
/// are sorted in decreasing order, and X̂_(0) = A⁽⁰⁾·diag(λ)·(A⁽ᴺ⁻¹⁾ ⊙ ⋯ ⊙ A⁽¹⁾)ᵀ.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/kron.hpp"
#include "tprod/decomp/unfold.hpp"

namespace tprod {

/// @brief A rank-R CP decomposition with the fit history of its ALS.
template <real_scalar T>
struct cp_result {
  dense_vector<T> weights;              ///< λ ∈ ℝ^R, nonnegative, decreasing
  std::vector<dense_matrix<T>> factors;  ///< factors[n] = A⁽ⁿ⁾ ∈ ℝ^{I_n×R}, unit-norm columns
  nd_shape shape;                       ///< the shape of X
  std::vector<double> fit_history;      ///< fit 1 − ‖X − X̂‖_F/‖X‖_F after the initialization and after every sweep
  double relative_error = 0;
  std::size_t sweeps = 0;

  /// @brief X̂ from its mode-0 unfolding A⁽⁰⁾·diag(λ)·(A⁽ᴺ⁻¹⁾ ⊙ ⋯ ⊙ A⁽¹⁾)ᵀ.
  ndtensor<T> reconstruct() const {
    if (factors.size() == 1) {
      const dense_vector<T> v = factors[0] * weights;
      return from_column_major<T>(shape, v.data(), std::size_t(v.size()));
    }
    std::vector<dense_matrix<T>> rest(factors.rbegin(), factors.rend() - 1);
    const dense_matrix<T> x0 = factors[0] * weights.asDiagonal() * khatri_rao(rest).transpose();
    return fold(x0, 0, shape);
  }
  /// @brief Entries stored: R + Σ_n I_n·R.
  std::size_t parameter_count() const {
    std::size_t n = std::size_t(weights.size());
    for (const auto& a : factors) n += std::size_t(a.size());
    return n;
  }
};

namespace detail {
/// cp_als of X in any memory space: the block-term ALS's terms sorted by weight, signs moved into the first factor.
template <real_scalar T, class Tensor>
cp_result<T> cp_als_of(const Tensor& x, std::size_t rank, const block_term_options& options) {
  const nd_shape shape = shape_of(x);
  TPROD_EXPECTS(rank >= 1, "cp_als: the rank must be at least 1 (tensor of shape " + shape_string(shape) + ")");
  const block_term_result<T> btd = block_term_als_of<T>(x, rank, nd_shape(shape.size(), 1), options);
  cp_result<T> r;
  r.shape = btd.shape;
  r.fit_history = btd.fit_history;
  r.relative_error = btd.relative_error;
  r.sweeps = btd.sweeps;
  std::vector<std::size_t> order(rank);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(btd.cores[a].data()[0]) > std::abs(btd.cores[b].data()[0]);
  });
  r.weights.resize(Eigen::Index(rank));
  r.factors.assign(shape.size(), dense_matrix<T>(0, Eigen::Index(rank)));
  for (std::size_t n = 0; n < shape.size(); ++n) r.factors[n].resize(Eigen::Index(shape[n]), Eigen::Index(rank));
  for (std::size_t k = 0; k < rank; ++k) {
    const std::size_t p = order[k];
    const T lambda = btd.cores[p].data()[0];
    r.weights(Eigen::Index(k)) = std::abs(lambda);
    for (std::size_t n = 0; n < shape.size(); ++n)
      r.factors[n].col(Eigen::Index(k)) = (n == 0 && lambda < 0 ? T(-1) : T(1)) * btd.factors[p][n].col(0);
  }
  return r;
}
}  // namespace detail

/// @brief Rank-R CP-ALS (the block-term ALS with R terms of multilinear rank (1, …, 1)).
/// @throws shape_error when rank is 0 or X is empty.
template <real_scalar T>
cp_result<T> cp_als(const ndtensor<T>& x, std::size_t rank, const block_term_options& options = {}) {
  return detail::cp_als_of<T>(x, rank, options);
}

/// @brief The same for X in memory space S (the ALS's contractions with X where it lives; the result on the host).
/// @throws shape_error when rank is 0 or X is empty.
template <real_scalar T, memory_space S>
cp_result<T> cp_als(const ndtensor_in<T, S>& x, std::size_t rank, const block_term_options& options = {}) {
  return detail::cp_als_of<T>(x, rank, options);
}

}  // namespace tprod
