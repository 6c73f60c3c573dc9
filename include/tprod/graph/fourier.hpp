// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file fourier.hpp
/// @brief The graph Fourier transform of an undirected graph and spectral convolution.
///
/// A symmetric adjacency or Laplacian matrix Ψ = ΦΛΦᵀ (Φ orthonormal eigenvectors, Λ real eigenvalues, in
/// ascending order as Eigen's SelfAdjointEigenSolver returns them). The graph Fourier transform of a signal is
/// x̂ = Φᵀ ×₁ x, its inverse x = Φ ×₁ x̂, and a spectral convolution with multipliers Γ = diag(γ) is
/// y = Φ Γ Φᵀ ×₁ x. For an adjacency matrix the smoothest basis vector belongs to the largest eigenvalue, for a
/// Laplacian to the smallest.
#include <Eigen/Eigenvalues>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "tprod/graph/adjacency.hpp"
#include "tprod/graph/mode1.hpp"

namespace tprod {

/// @brief Throws unless Ψ is square and symmetric to within 100·L·ε·max|ψ|.
/// @throws shape_error when Ψ is not square; numerical_error naming the largest asymmetry |ψ_ij − ψ_ji| and
///         where it is.
template <real_scalar T>
void expect_symmetric(const dense_matrix<T>& psi, const char* where) {
  detail::expect_square(psi, where, "matrix");
  if (psi.rows() == 0) return;  // the graph without vertices (Eigen's maxCoeff of nothing is undefined)
  const double scale = double(psi.cwiseAbs().maxCoeff()), n = double(psi.rows());
  Eigen::Index i = 0, j = 0;
  const double asym = double((psi - psi.transpose()).cwiseAbs().maxCoeff(&i, &j));
  if (!(asym <= 100.0 * n * double(std::numeric_limits<T>::epsilon()) * scale))
    throw numerical_error(std::string(where) + ": the matrix is not symmetric (|psi(" + std::to_string(i) + ", " +
                          std::to_string(j) + ") - psi(" + std::to_string(j) + ", " + std::to_string(i) +
                          ")| = " + number_text(double(asym)) +
                          "); an undirected graph is needed, e.g. (A + A^T)/2");
}

/// @brief The eigenbasis Ψ = ΦΛΦᵀ of a symmetric graph matrix.
template <real_scalar T>
struct graph_fourier_basis {
  dense_matrix<T> phi;     ///< Φ ∈ ℝ^{L×L}, orthonormal columns (the graph Fourier modes)
  dense_vector<T> lambda;  ///< the eigenvalues (graph frequencies), ascending

  std::size_t vertices() const { return std::size_t(lambda.size()); }
};

/// @brief Φ and Λ of a symmetric Ψ by Eigen's SelfAdjointEigenSolver.
/// @throws shape_error when Ψ is not square; numerical_error when it is not symmetric or the solver fails.
template <real_scalar T>
graph_fourier_basis<T> graph_fourier(const dense_matrix<T>& psi) {
  expect_symmetric(psi, "graph_fourier");
  if (psi.rows() == 0) return {};  // no vertices, no modes (Eigen's solver would scale by the max of nothing)
  const Eigen::SelfAdjointEigenSolver<dense_matrix<T>> eig(psi);
  if (eig.info() != Eigen::Success) throw numerical_error("graph_fourier: the eigensolver did not converge");
  return {eig.eigenvectors(), eig.eigenvalues()};
}

namespace detail {
template <class T>
void expect_basis_fits(const graph_fourier_basis<T>& b, Eigen::Index rows, const char* where) {
  TPROD_EXPECTS(std::size_t(rows) == b.vertices(), std::string(where) + ": a signal on " + std::to_string(rows) +
                                                       " vertices for a graph of " +
                                                       std::to_string(b.vertices()) + " vertices");
}
}  // namespace detail

/// @brief x̂ = Φᵀ ×₁ x, the graph Fourier transform of a vector, matrix or tensor signal (in a memory space:
///        computed there, graph/mode1.hpp).
/// @throws shape_error when the signal's first mode is not L.
template <real_scalar T, class Signal>
Signal graph_fourier_transform(const graph_fourier_basis<T>& b, const Signal& x) {
  if constexpr (detail::signal_in_space<Signal>)
    return detail::mode1_product_in(dense_matrix<T>(b.phi.transpose()), x, "graph_fourier_transform");
  else return apply_mode1(x, [&](const auto& x1) -> dense_matrix<T> {
    detail::expect_basis_fits(b, x1.rows(), "graph_fourier_transform");
    return b.phi.transpose() * x1;
  });
}

/// @brief x = Φ ×₁ x̂, the inverse graph Fourier transform.
/// @throws shape_error when the signal's first mode is not L.
template <real_scalar T, class Signal>
Signal inverse_graph_fourier_transform(const graph_fourier_basis<T>& b, const Signal& xh) {
  if constexpr (detail::signal_in_space<Signal>)
    return detail::mode1_product_in(b.phi, xh, "inverse_graph_fourier_transform");
  else return apply_mode1(xh, [&](const auto& x1) -> dense_matrix<T> {
    detail::expect_basis_fits(b, x1.rows(), "inverse_graph_fourier_transform");
    return b.phi * x1;
  });
}

/// @brief y = Φ diag(γ) Φᵀ ×₁ x: spectral convolution with one multiplier γ_l per graph frequency λ_l.
/// @throws shape_error when γ or the signal's first mode does not have L entries.
template <real_scalar T, class Signal>
Signal spectral_convolution(const graph_fourier_basis<T>& b, const dense_vector<T>& gamma, const Signal& x) {
  TPROD_EXPECTS(std::size_t(gamma.size()) == b.vertices(),
                "spectral_convolution: " + std::to_string(gamma.size()) + " multipliers for " +
                    std::to_string(b.vertices()) + " graph frequencies");
  if constexpr (detail::signal_in_space<Signal>)  // Φ diag(γ) Φᵀ formed once on the host (L×L), applied where x is
    return detail::mode1_product_in(dense_matrix<T>(b.phi * gamma.asDiagonal() * b.phi.transpose()), x,
                                    "spectral_convolution");
  else return apply_mode1(x, [&](const auto& x1) -> dense_matrix<T> {
    detail::expect_basis_fits(b, x1.rows(), "spectral_convolution");
    return b.phi * (gamma.asDiagonal() * (b.phi.transpose() * x1));
  });
}

/// @brief The multipliers f_α(λ_l) = Σ_{k<K} α_k λ_lᵏ of a polynomial filter (Horner in each eigenvalue), so
///        that spectral_convolution(b, polynomial_multipliers(b.lambda, α), x) = f_α(Ψ) ×₁ x.
template <real_scalar T>
dense_vector<T> polynomial_multipliers(const dense_vector<T>& lambda, std::type_identity_t<std::span<const T>> alpha) {
  dense_vector<T> g = dense_vector<T>::Zero(lambda.size());
  for (std::size_t k = alpha.size(); k-- > 0;) g = (g.array() * lambda.array() + alpha[k]).matrix();
  return g;
}

}  // namespace tprod
