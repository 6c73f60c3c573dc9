// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file laplacian.hpp
/// @brief Degrees and Laplacians of a weighted graph given by its adjacency matrix A ∈ ℝ^{L×L}.
#include <cmath>

#include "tprod/graph/adjacency.hpp"

namespace tprod {

/// @brief The out-degrees d_l = Σ_{l₂} a_{l,l₂} (row sums; the degrees of an undirected graph).
/// @throws shape_error when A is not square.
template <real_scalar T>
dense_vector<T> degrees(const dense_matrix<T>& a) {
  detail::expect_square(a, "degrees");
  return a.rowwise().sum();
}

/// @brief The diagonal degree matrix D = diag(d).
/// @throws shape_error when A is not square.
template <real_scalar T>
dense_matrix<T> degree_matrix(const dense_matrix<T>& a) {
  return degrees(a).asDiagonal();
}

/// @brief The combinatorial Laplacian 𝐋 = D − A.
/// @throws shape_error when A is not square.
template <real_scalar T>
dense_matrix<T> laplacian(const dense_matrix<T>& a) {
  dense_matrix<T> l = -a;
  l.diagonal() += degrees(a);
  return l;
}

/// @brief The normalized Laplacian 𝐋_n = I − D^{−1/2} A D^{−1/2}, with 0^{−1/2} read as 0: an isolated vertex
///        keeps l_{ll} = 1 and no off-diagonal entries. Its eigenvalues lie in [0, 2] for a non-negative A = Aᵀ.
/// @throws shape_error when A is not square; numerical_error when a degree is negative.
template <real_scalar T>
dense_matrix<T> normalized_laplacian(const dense_matrix<T>& a) {
  const dense_vector<T> d = degrees(a);
  dense_vector<T> s(d.size());
  for (Eigen::Index l = 0; l < d.size(); ++l) {
    if (d(l) < T(0))
      throw numerical_error("normalized_laplacian: vertex " + std::to_string(l) + " has negative degree " +
                            number_text(double(d(l))) + "; D^{-1/2} is not real");
    s(l) = d(l) > T(0) ? T(1) / std::sqrt(d(l)) : T(0);
  }
  dense_matrix<T> l = -(s.asDiagonal() * a * s.asDiagonal());
  l.diagonal().array() += T(1);
  return l;
}

}  // namespace tprod
