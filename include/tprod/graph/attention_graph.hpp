// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention_graph.hpp
/// @brief The attention graph of tensorized spectral attention: Θ = ε(K Kᵀ / d_k) with a zero diagonal, and the
///        time-domain attention adjacency Ψ = Ω ⊙ Θ.
///
/// K ∈ ℝ^{L×J} holds one key per time step (for a tensor 𝒦 ∈ ℝ^{L×J_1×⋯×J_N}, its mode-1 unfolding, so that
/// K Kᵀ = 𝒦 ×_{2…N+1} 𝒦). θ_{l₁,l₂} = ε(⟨k_{l₁}, k_{l₂}⟩ / d_k) for l₁ ≠ l₂ and 0 on the diagonal: a symmetric,
/// context-dependent adjacency matrix (with ε = ReLU, non-negative and sparse). Ω (e.g. the bidirectional time
/// graph) adds the time proximity: ψ_{l₁,l₂} = ω_{l₁,l₂}·θ_{l₁,l₂}, symmetric when Ω is.
#include <algorithm>
#include <string>

#include "tprod/graph/adjacency.hpp"

namespace tprod {

/// @brief ε(s) = max(s, 0), the default activation of the attention graph.
struct relu_activation {
  template <class T>
  T operator()(T s) const {
    return std::max(s, T(0));
  }
};

/// @brief Θ from the scaled scores S = K Kᵀ / d_k: θ_{l₁,l₂} = ε(s_{l₁,l₂}) off the diagonal, 0 on it.
/// @throws shape_error when S is not square.
template <real_scalar T, class Activation = relu_activation>
dense_matrix<T> attention_coefficients_from_scores(const dense_matrix<T>& scores, Activation epsilon = {}) {
  detail::expect_square(scores, "attention_coefficients_from_scores", "score matrix");
  dense_matrix<T> theta = scores.unaryExpr([&](T s) { return T(epsilon(s)); });
  theta.diagonal().setZero();
  return theta;
}

/// @brief The scaled scores S = K Kᵀ / d_k for keys K ∈ ℝ^{L×J}, into s (resized; no allocation when it has the
///        size already), computed as a symmetric rank-J update of the lower triangle and mirrored: exactly symmetric
///        (a general GEMM need not be) at half the flops.
/// @throws shape_error unless d_k > 0.
template <real_scalar T>
void attention_scores(const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& k, double d_k,
                      dense_matrix<T>& s) {
  TPROD_EXPECTS(d_k > 0, "attention_scores: the scale d_k = " + number_text(double(d_k)) + " must be positive");
  s.setZero(k.rows(), k.rows());
  s.template selfadjointView<Eigen::Lower>().rankUpdate(k, T(1 / d_k));
  s.template triangularView<Eigen::StrictlyUpper>() = s.transpose();
}

/// @brief The scaled scores S = K Kᵀ / d_k as above, returned.
/// @throws shape_error unless d_k > 0.
template <real_scalar T>
dense_matrix<T> attention_scores(const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& k, double d_k) {
  dense_matrix<T> s;
  attention_scores<T>(k, d_k, s);
  return s;
}

/// @brief Θ = ε(K Kᵀ / d_k) with θ_ll = 0, for keys K ∈ ℝ^{L×J} (one row per time step) and any ε: T → T.
/// @throws shape_error unless d_k > 0.
template <real_scalar T, class Activation = relu_activation>
dense_matrix<T> attention_coefficients(const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& k, double d_k,
                                       Activation epsilon = {}) {
  return attention_coefficients_from_scores<T>(attention_scores<T>(k, d_k), epsilon);
}

/// @brief Θ for a key tensor 𝒦 ∈ ℝ^{L×J_1×⋯×J_N}: the same on its mode-1 unfolding.
/// @throws shape_error unless d_k > 0.
template <real_scalar T, class Activation = relu_activation>
dense_matrix<T> attention_coefficients(const ndtensor<T>& k, double d_k, Activation epsilon = {}) {
  TPROD_EXPECTS(k.dimension() >= 1, "attention_coefficients: the key tensor needs a time mode");
  const std::size_t steps = k.shape()[0];
  return attention_coefficients<T>(detail::as_matrix(k, steps, steps == 0 ? 0 : k.size() / steps), d_k, epsilon);
}

/// @brief Ψ = Ω ⊙ Θ, the time-domain attention adjacency matrix.
/// @throws shape_error when Ω and Θ differ in shape or are not square.
template <real_scalar T>
dense_matrix<T> attention_adjacency(const dense_matrix<T>& omega, const dense_matrix<T>& theta) {
  detail::expect_square(omega, "attention_adjacency", "time graph");
  TPROD_EXPECTS(omega.rows() == theta.rows() && omega.cols() == theta.cols(),
                "attention_adjacency: the time graph is " + shape_string(omega) +
                    " but the attention coefficients are " + shape_string(theta));
  return omega.cwiseProduct(theta);
}

}  // namespace tprod
