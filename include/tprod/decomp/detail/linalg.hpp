// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file detail/linalg.hpp
/// @brief Dense linear algebra shared by the decompositions: singular subspaces of unfoldings, truncation ranks,
///        least-squares solves. All factorizations are Eigen's BDCSVD and HouseholderQR
///        (one SVD for every purpose keeps the compile time of a translation unit down).
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tprod/core/detail/eigen_svd.hpp"
#include "tprod/decomp/mode_product.hpp"

namespace tprod {
namespace detail {

/// The smallest r ≥ 1 whose discarded tail Σ_{i≥r} energies[i] is at most `threshold`, then capped at `cap`.
/// `energies` are squared singular values in descending order. This is the rule behind every tolerance in the
/// area: discarding energy ≤ δ² costs at most δ in Frobenius norm.
inline std::size_t truncation_rank(const std::vector<double>& energies, double threshold, std::size_t cap) {
  std::size_t r = energies.size();
  double tail = 0;
  while (r > 1 && tail + energies[r - 1] <= threshold) tail += energies[--r];
  return std::max<std::size_t>(1, std::min(r, cap));
}

/// An orthonormal basis of ℝ^{I_n} ordered by the energy of X_(n) it captures (left singular vectors of the
/// unfolding), with those energies (squared singular values; zero for directions outside the range).
template <real_scalar T>
struct singular_subspace {
  dense_matrix<T> basis;
  std::vector<double> energies;
};

/// X_(n)·X_(n)ᵀ accumulated from the before×I_n blocks of the data (no unfolding is formed, except when the
/// blocks are too thin for an efficient rank update). Only the lower triangle is filled.
template <real_scalar T>
dense_matrix<T> mode_gram(const ndtensor<T>& x, std::size_t mode) {
  const auto [before, size, after] = split_at(shape_of(x), mode);
  dense_matrix<T> g = dense_matrix<T>::Zero(Eigen::Index(size), Eigen::Index(size));
  if (before == 1) {
    g.template selfadjointView<Eigen::Lower>().rankUpdate(as_matrix(x, size, after));
  } else if (before >= mode_product_min_block_rows || after == 1) {
    for (std::size_t b = 0; b < after; ++b)
      g.template selfadjointView<Eigen::Lower>().rankUpdate(
          Eigen::Map<const dense_matrix<T>>(x.data() + before * size * b, Eigen::Index(before), Eigen::Index(size))
              .transpose());
  } else {
    g.template selfadjointView<Eigen::Lower>().rankUpdate(unfold(x, mode));
  }
  return g;
}

/// The singular subspace of X_(n): from the Gram matrix X_(n)·X_(n)ᵀ (`gram`) or a thin SVD (see tucker's
/// subspace_method for the trade-off).
template <real_scalar T>
singular_subspace<T> mode_singular_subspace(const ndtensor<T>& x, std::size_t mode, bool gram) {
  const auto [before, size, after] = split_at(shape_of(x), mode);
  singular_subspace<T> s;
  s.energies.assign(size, 0.0);
  // The Gram matrix is symmetric positive semidefinite, so its SVD is its eigen-decomposition (singular values =
  // eigenvalues = σ_i² of X_(n)); BDCSVD serves both paths, which keeps one decomposition per scalar type.
  const auto svd = gram ? bdc_svd<Eigen::ComputeThinU>(
                              dense_matrix<T>(mode_gram(x, mode).template selfadjointView<Eigen::Lower>()))
                        : bdc_svd<Eigen::ComputeThinU>(unfold(x, mode));
  expect_success(svd, "mode_singular_subspace");
  const auto k = std::size_t(svd.singularValues().size());
  for (std::size_t i = 0; i < k; ++i) {
    const double sigma = double(svd.singularValues()(Eigen::Index(i)));
    s.energies[i] = gram ? sigma : sigma * sigma;
  }
  if (k == size) {
    s.basis = svd.matrixU();
  } else {  // a tall unfolding: complete U's k columns to an orthonormal basis of ℝ^{I_n}
    const Eigen::HouseholderQR<dense_matrix<T>> qr(svd.matrixU());
    s.basis = qr.householderQ();
    s.basis.leftCols(Eigen::Index(k)) = svd.matrixU();
  }
  return s;
}

/// The first r columns of a basis (the leading factor).
template <real_scalar T>
dense_matrix<T> leading_columns_of(const dense_matrix<T>& basis, std::size_t r) {
  return basis.leftCols(Eigen::Index(r));
}

/// The X minimizing ‖X·G − B‖ for a symmetric positive semidefinite G (the normal equations of a least-squares
/// problem), X = B·G⁺ with singular values below size·ε·σ_max dropped: the pseudo-inverse keeps alternating
/// least squares well defined when components become collinear.
template <real_scalar T>
dense_matrix<T> solve_right_psd(const dense_matrix<T>& b, const dense_matrix<T>& g) {
  const auto svd = bdc_svd<Eigen::ComputeThinU | Eigen::ComputeThinV>(g);
  expect_success(svd, "solve_right_psd");
  return svd.solve(b.transpose()).transpose();  // G = Gᵀ: X·G = B ⇔ G·Xᵀ = Bᵀ
}

}  // namespace detail
}  // namespace tprod
