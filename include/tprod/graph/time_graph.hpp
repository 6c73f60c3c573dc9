// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file time_graph.hpp
/// @brief The time graph of a Recurrent Graph Tensor Network (RGTN) and its forward passes.
///
/// The L time steps of a sequence are the vertices; step l₁ feeds every later step l₂ > l₁ with weight
/// a_{l₁,l₂} = c^{l₂−l₁} (0 < c < 1 a damping constant), so the directed time adjacency A is strictly upper
/// triangular: the past influences the future, not the reverse. Where that direction is not wanted, the
/// bidirectional time graph is Ω = ½(A + Aᵀ), ω_{l₁,l₂} = ½c^{|l₂−l₁|} off the diagonal, 0 on it.
/// The RGTN forward pass with an idempotent feature propagation P ∈ ℝ^{J×J} (paper 002 §2.4) is
/// Y = ten(I + A ⊗ P) ×^{1,2}_{3,4} X = X + A·X·Pᵀ for a signal X ∈ ℝ^{L×J}; its normalized form
/// 𝒴 = (I + A)^{−1/2} ×₁ 𝒳 and its fast form 𝒴 = (I + A) ×₁ 𝒳 (P ≈ I) take any mode-1 signal.
///
/// Direction: with the mode-1 product, y_{l₁} = Σ_{l₂} a_{l₁,l₂} x_{l₂}, so the upper triangular A as defined makes
/// step l₁ aggregate its *later* steps l₂ > l₁. For a causal flow (each step aggregating its past), pass Aᵀ; every
/// function here accepts it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tprod/graph/fourier.hpp"

namespace tprod {

/// @brief The directed time adjacency A ∈ ℝ^{L×L}: a_{l₁,l₂} = c^{l₂−l₁} for l₂ > l₁, 0 otherwise.
/// @throws shape_error unless 0 < c < 1.
template <real_scalar T>
dense_matrix<T> time_adjacency(std::size_t steps, double c) {
  TPROD_EXPECTS(c > 0 && c < 1, "time_adjacency: the damping constant c = " + number_text(double(c)) +
                                    " must lie in (0, 1)");
  dense_matrix<T> a = dense_matrix<T>::Zero(Eigen::Index(steps), Eigen::Index(steps));
  for (std::size_t l2 = 1; l2 < steps; ++l2)
    for (std::size_t l1 = 0; l1 < l2; ++l1) a(Eigen::Index(l1), Eigen::Index(l2)) = T(std::pow(c, double(l2 - l1)));
  return a;
}

/// @brief The bidirectional time adjacency Ω = ½(A + Aᵀ) of time_adjacency(L, c).
/// @throws shape_error unless 0 < c < 1.
template <real_scalar T>
dense_matrix<T> bidirectional_time_adjacency(std::size_t steps, double c) {
  const dense_matrix<T> a = time_adjacency<T>(steps, c);
  return T(0.5) * (a + a.transpose());
}

/// @brief (I + A)^{−1/2}, the principal inverse square root: through the eigendecomposition when A is symmetric
///        (I + A must then be positive definite), through the triangular square root (Björck–Hammarling,
///        r_ij = (u_ij − Σ_{i<k<j} r_ik r_kj)/(r_ii + r_jj) for U = I + A = R²) when A is upper triangular, as the
///        directed time adjacency is (I + A must then have a positive diagonal), or lower triangular (its
///        transpose, through ((I + Aᵀ)^{−1/2})ᵀ).
/// @throws shape_error when A is not square; numerical_error when A is neither symmetric nor triangular, or
///         I + A has no real inverse square root.
template <real_scalar T>
dense_matrix<T> shifted_inverse_sqrt(const dense_matrix<T>& a) {
  detail::expect_square(a, "shifted_inverse_sqrt");
  const Eigen::Index n = a.rows();
  if (n == 0) return dense_matrix<T>(0, 0);  // the empty time graph
  const dense_matrix<T> u = dense_matrix<T>::Identity(n, n) + a;
  if (a.isApprox(a.transpose(), T(100) * T(n) * std::numeric_limits<T>::epsilon()) || n <= 1) {
    const auto b = graph_fourier(dense_matrix<T>(T(0.5) * (u + u.transpose())));
    if (!(b.lambda.minCoeff() > T(0)))
      throw numerical_error("shifted_inverse_sqrt: I + A has the eigenvalue " +
                            number_text(double(b.lambda.minCoeff())) + " <= 0; it has no real inverse square root");
    return b.phi * b.lambda.array().rsqrt().matrix().asDiagonal() * b.phi.transpose();
  }
  if (!u.template triangularView<Eigen::StrictlyLower>().toDenseMatrix().isZero(0)) {
    // a lower triangular A (the transposed time graph, past → future): (I + A)^{−1/2} = ((I + Aᵀ)^{−1/2})ᵀ
    if (u.template triangularView<Eigen::StrictlyUpper>().toDenseMatrix().isZero(0))
      return shifted_inverse_sqrt<T>(a.transpose()).transpose();
    throw numerical_error("shifted_inverse_sqrt: A (" + shape_string(a) +
                          ") is neither symmetric nor triangular; (I + A)^(-1/2) is supported for undirected "
                          "graphs and for directed time graphs");
  }
  dense_matrix<T> r = dense_matrix<T>::Zero(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    if (!(u(j, j) > T(0)))
      throw numerical_error("shifted_inverse_sqrt: diagonal entry " + std::to_string(j) + " of I + A is " +
                            number_text(double(u(j, j))) + " <= 0; it has no real inverse square root");
    r(j, j) = std::sqrt(u(j, j));
    for (Eigen::Index i = j - 1; i >= 0; --i) {
      const T s = j - i > 1 ? T(r.row(i).segment(i + 1, j - i - 1).dot(r.col(j).segment(i + 1, j - i - 1))) : T(0);
      r(i, j) = (u(i, j) - s) / (r(i, i) + r(j, j));
    }
  }
  return r.template triangularView<Eigen::Upper>().solve(dense_matrix<T>::Identity(n, n));
}

/// @brief The RGTN forward pass 𝒴 = (I + A)^{−1/2} ×₁ 𝒳 for a vector, matrix or tensor signal.
/// @throws as shifted_inverse_sqrt and mode1_product.
template <real_scalar T, class Signal>
Signal rgtn_forward(const dense_matrix<T>& a, const Signal& x) {
  return mode1_product(shifted_inverse_sqrt(a), x);
}

namespace detail {
/// The checks of rgtn_forward(A, P, X) for a signal of the given shape (steps × features).
template <real_scalar T>
void check_rgtn_propagation(const dense_matrix<T>& a, const dense_matrix<T>& p, std::size_t steps,
                            std::size_t features, const std::string& signal_shape) {
  expect_square(a, "rgtn_forward");
  expect_square(p, "rgtn_forward");
  TPROD_EXPECTS(std::size_t(a.cols()) == steps && std::size_t(p.cols()) == features,
                "rgtn_forward: a " + shape_string(a) + " time graph and a " + shape_string(p) +
                    " propagation for a " + signal_shape + " signal (steps × features)");
  const double largest = p.size() == 0 ? 0.0 : double(p.cwiseAbs().maxCoeff());
  const double scale = std::max(1.0, largest * largest);
  const double defect = p.rows() == 0 ? 0.0 : double((p * p - p).cwiseAbs().maxCoeff());
  if (!(defect <= 100 * double(std::numeric_limits<T>::epsilon()) * double(p.rows()) * scale))
    throw numerical_error("rgtn_forward: the propagation P (" + shape_string(p) +
                          ") is not idempotent: max |P² − P| = " + number_text(defect));
}
}  // namespace detail

/// @brief The RGTN forward pass with an idempotent P (paper 002 §2.4): Y = ten(I + A ⊗ P) ×^{1,2}_{3,4} X, i.e.
///        Y(l, j) = X(l, j) + Σ_{l′, j′} A(l, l′)·P(j, j′)·X(l′, j′) = (X + A·X·Pᵀ)(l, j), for X ∈ ℝ^{L×J}.
/// @throws shape_error when A is not L×L or P not J×J for X; numerical_error when P is not idempotent
///         (‖P² − P‖_max above 100·ε·J·max(1, ‖P‖²_max), the roundings of P² allowed for).
template <real_scalar T>
dense_matrix<T> rgtn_forward(const dense_matrix<T>& a, const dense_matrix<T>& p, const dense_matrix<T>& x) {
  detail::check_rgtn_propagation(a, p, std::size_t(x.rows()), std::size_t(x.cols()), shape_string(x));
  dense_matrix<T> y = a * x * p.transpose();
  return y += x;
}
/// @brief The same for a signal X (L×J×1) in memory space S, computed there: (A ×₁ X) ×₂ P by two multiply_mode
///        tasks, + X by an axpy.
/// @throws as above, and shape_error unless X has one slice.
template <real_scalar T, memory_space S>
tensor3<T, dextents3, S> rgtn_forward(const dense_matrix<T>& a, const dense_matrix<T>& p,
                                      const tensor3<T, dextents3, S>& x) {
  TPROD_EXPECTS(x.p() == 1, "rgtn_forward: the signal " + x.shape() + " must be one steps × features matrix (p = 1)");
  detail::check_rgtn_propagation(a, p, x.m(), x.n(), x.shape());
  tensor3<T, dextents3, S> y = mode_product(mode_product(x, a, 0), p, 1);
  return y += x;
}

/// @brief The fast RGTN forward pass 𝒴 = (I + A) ×₁ 𝒳 = 𝒳 + A ×₁ 𝒳.
/// @throws shape_error when A is not L×L for the signal's first mode L.
template <real_scalar T, class Signal>
Signal fast_rgtn_forward(const dense_matrix<T>& a, const Signal& x) {
  detail::expect_square(a, "fast_rgtn_forward");
  if constexpr (detail::signal_in_space<Signal>)
    return detail::mode1_product_in(dense_matrix<T>(dense_matrix<T>::Identity(a.rows(), a.cols()) + a), x,
                                    "fast_rgtn_forward");
  else return apply_mode1(x, [&](const auto& x1) -> dense_matrix<T> {
    TPROD_EXPECTS(a.cols() == x1.rows(), "fast_rgtn_forward: a " + shape_string(a) +
                                             " time graph for a signal on " + std::to_string(x1.rows()) + " steps");
    dense_matrix<T> y = a * x1;
    return y += x1;
  });
}

}  // namespace tprod
