// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file contraction.hpp
/// @brief Contractions of order-N tensors over one shared mode.
///
///   contract(A, n, B, m)   the (m, n)-contraction C = A ×ₙᵐ B of paper 002 §2: order N + M − 2,
///                          C(i_1…i_{n−1} i_{n+1}…i_N, j_1…j_{m−1} j_{m+1}…j_M) = Σ_{i_n} A(…, i_n, …)·B(…, i_n, …),
///                          A's remaining modes first, then B's, each in their order;
///   contract(A, n, v)      the order-reducing contraction with a vector A ×̄ₙ v of paper 000 §3.3: order N − 1,
///                          (A ×̄ₙ v)(i_1…i_{n−1} i_{n+1}…i_N) = Σ_{i_n} A(…, i_n, …)·v_{i_n}, the (1, n)-contraction
///                          with v as an order-1 tensor.
/// Modes are numbered from 0 (mode n of the papers is n − 1 here). Computed as one GEMM of the unfoldings,
/// C = A_(n)ᵀ·B_(m): the Kolda–Bader column order of an unfolding is the column-major order of the remaining modes,
/// so the product's (column-major) storage is C's.
#include <string>
#include <type_traits>

#include "tprod/decomp/ndtensor.hpp"
#include "tprod/decomp/unfold.hpp"

namespace tprod {

/// @brief The (m, n)-contraction A ×ₙᵐ B over mode `mode_a` of A and mode `mode_b` of B (paper 002 §2).
/// @throws shape_error when a mode is out of range or empty, the two modes differ in size, or the result would
/// have order 0 (two vectors: use their dot product).
template <real_scalar T>
ndtensor<T> contract(const ndtensor<T>& a, std::size_t mode_a, const ndtensor<T>& b, std::size_t mode_b) {
  const nd_shape sa = shape_of(a), sb = shape_of(b);
  detail::expect_nonempty(sa, "contract");
  detail::expect_nonempty(sb, "contract");
  detail::expect_mode(mode_a, sa, "contract (first tensor)");
  detail::expect_mode(mode_b, sb, "contract (second tensor)");
  TPROD_EXPECTS(sa[mode_a] == sb[mode_b], "contract: mode " + std::to_string(mode_a) + " of " +
                                              shape_string(sa) + " has " + std::to_string(sa[mode_a]) +
                                              " indices but mode " + std::to_string(mode_b) + " of " +
                                              shape_string(sb) + " has " + std::to_string(sb[mode_b]));
  nd_shape sc;
  for (std::size_t k = 0; k < sa.size(); ++k)
    if (k != mode_a) sc.push_back(sa[k]);
  for (std::size_t k = 0; k < sb.size(); ++k)
    if (k != mode_b) sc.push_back(sb[k]);
  TPROD_EXPECTS(!sc.empty(), "contract: contracting two order-1 tensors gives a scalar (order 0): use a dot product");
  ndtensor<T> c = ndtensor<T>::from_shape(sc);
  const std::size_t rows = detail::product(sa) / sa[mode_a], cols = detail::product(sb) / sb[mode_b];
  detail::as_matrix(c, rows, cols).noalias() = unfold(a, mode_a).transpose() * unfold(b, mode_b);
  return c;
}

/// @brief The order-reducing contraction A ×̄ₙ v with a vector over mode `mode` (paper 000 §3.3); v may be any
/// Eigen vector expression.
/// @throws shape_error when the mode is out of range, v's length is not the mode's size, or A is a vector.
template <real_scalar T>
ndtensor<T> contract(const ndtensor<T>& a, std::size_t mode, const std::type_identity_t<dense_vector<T>>& v) {
  ndtensor<T> vt = ndtensor<T>::from_shape({std::size_t(v.size())});
  detail::elements(vt) = v;
  return contract(a, mode, vt, 0);
}

}  // namespace tprod
