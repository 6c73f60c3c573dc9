// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file kron.hpp
/// @brief Kronecker and Khatri–Rao products of matrices and of order-N tensors.
///
/// Index convention (the standard one, and paper 002's "left" Kronecker product): in A ⊗ B the index of B
/// varies fastest, c(i·J + j) = a(i)·b(j) in every mode. With column-major unfoldings this gives
/// Kolda–Bader's identities, e.g. X_(1) = A·(C ⊙ B)ᵀ for a CP tensor with factors A, B, C.
#include <concepts>
#include <string>
#include <vector>

#include "tprod/decomp/ndtensor.hpp"

namespace tprod {

namespace detail {

/// Where each element of a (column-major, shape `own`) lands in the Kronecker result over modes 0…k−1:
/// the result index of mode n is own_n·scale_n + shift_n; `outer` says whether this operand is the left one
/// (scaled by the other's size) or the right one. The offsets of both operands add up to the result offset.
inline std::vector<std::size_t> kron_offsets(const nd_shape& own, const nd_shape& other, std::size_t k, bool outer) {
  std::vector<std::size_t> offsets(product(own, 0, k));
  std::vector<std::size_t> index(k, 0);
  for (std::size_t e = 0; e < offsets.size(); ++e) {
    std::size_t offset = 0, stride = 1;
    for (std::size_t n = 0; n < k; ++n) {
      offset += index[n] * (outer ? other[n] : 1) * stride;
      stride *= own[n] * other[n];
    }
    offsets[e] = offset;
    for (std::size_t n = 0; n < k && ++index[n] == own[n]; ++n) index[n] = 0;  // odometer, first index fastest
  }
  return offsets;
}

/// Kronecker product over modes 0…k−1 of a and b, batched over the remaining (equal) modes:
/// the common engine of kron (k = N) and khatri_rao (k = N−1).
template <real_scalar T>
ndtensor<T> kron_batched(const ndtensor<T>& a, const ndtensor<T>& b, std::size_t k, const char* where) {
  const nd_shape sa = shape_of(a), sb = shape_of(b);
  expect_nonempty(sa, where);
  expect_nonempty(sb, where);
  TPROD_EXPECTS(sa.size() == sb.size(), std::string(where) + ": shapes " + shape_string(sa) + " and " +
                                            shape_string(sb) + " differ in order");
  nd_shape sc(sa.size());
  for (std::size_t n = 0; n < sa.size(); ++n) {
    TPROD_EXPECTS(n < k || sa[n] == sb[n], std::string(where) + ": shapes " + shape_string(sa) + " and " +
                                               shape_string(sb) + " differ in mode " + std::to_string(n));
    sc[n] = n < k ? sa[n] * sb[n] : sa[n];
  }
  const std::vector<std::size_t> oa = kron_offsets(sa, sb, k, true), ob = kron_offsets(sb, sa, k, false);
  const std::size_t block_a = oa.size(), block_b = ob.size(), block_c = block_a * block_b;
  ndtensor<T> c = ndtensor<T>::from_shape(sc);
  for (std::size_t batch = 0; batch < product(sa, k, sa.size()); ++batch) {
    const T* pa = a.data() + batch * block_a;
    const T* pb = b.data() + batch * block_b;
    T* pc = c.data() + batch * block_c;
    for (std::size_t i = 0; i < block_a; ++i)
      for (std::size_t j = 0; j < block_b; ++j) pc[oa[i] + ob[j]] = pa[i] * pb[j];
  }
  return c;
}

template <class D>
auto matrix_as_ndtensor(const Eigen::MatrixBase<D>& m) {
  using T = typename D::Scalar;
  const dense_matrix<T> plain = m;
  return from_column_major<T>({std::size_t(plain.rows()), std::size_t(plain.cols())}, plain.data(),
                              std::size_t(plain.size()));
}

template <real_scalar T>
dense_matrix<T> ndtensor_as_matrix(const ndtensor<T>& x) {
  return as_matrix(x, x.shape()[0], x.shape()[1]);
}

}  // namespace detail

/// @brief The Kronecker product of two tensors of equal order N: C ∈ ℝ^{I_1J_1 × ⋯ × I_NJ_N},
///        C(i_1J_1 + j_1, …, i_NJ_N + j_N) = A(i_1, …, i_N)·B(j_1, …, j_N).
/// @throws shape_error when the orders differ.
template <real_scalar T>
ndtensor<T> kron(const ndtensor<T>& a, const ndtensor<T>& b) {
  return detail::kron_batched(a, b, a.dimension(), "kron");
}

/// @brief The Khatri–Rao product of two tensors with equal order N and equal last mode R: slice r of C along the
///        last mode is the Kronecker product of the slices r of A and B. For matrices (N = 2) it is the
///        column-wise Kronecker product, column r of A ⊙ B = a_r ⊗ b_r.
/// @throws shape_error when the orders or the last modes differ.
template <real_scalar T>
ndtensor<T> khatri_rao(const ndtensor<T>& a, const ndtensor<T>& b) {
  TPROD_EXPECTS(a.dimension() >= 1, "khatri_rao: the tensors have no modes");
  return detail::kron_batched(a, b, a.dimension() - 1, "khatri_rao");
}

/// @brief The Kronecker product A ⊗ B of matrices: (A ⊗ B)(i·p + k, j·q + l) = A(i, j)·B(k, l), B being p×q.
template <class DA, class DB>
  requires real_scalar<typename DA::Scalar> && std::same_as<typename DA::Scalar, typename DB::Scalar>
dense_matrix<typename DA::Scalar> kron(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b) {
  return detail::ndtensor_as_matrix(
      kron(detail::matrix_as_ndtensor(a), detail::matrix_as_ndtensor(b)));
}

/// @brief The Khatri–Rao (column-wise Kronecker) product A ⊙ B of matrices with equal column counts.
/// @throws shape_error when the column counts differ.
template <class DA, class DB>
  requires real_scalar<typename DA::Scalar> && std::same_as<typename DA::Scalar, typename DB::Scalar>
dense_matrix<typename DA::Scalar> khatri_rao(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b) {
  return detail::ndtensor_as_matrix(
      khatri_rao(detail::matrix_as_ndtensor(a), detail::matrix_as_ndtensor(b)));
}

/// @brief A_1 ⊙ A_2 ⊙ ⋯ ⊙ A_K (left to right) of matrices with equal column counts.
/// @throws shape_error when the list is empty or the column counts differ.
template <real_scalar T>
dense_matrix<T> khatri_rao(const std::vector<dense_matrix<T>>& matrices) {
  TPROD_EXPECTS(!matrices.empty(), "khatri_rao: no matrices given");
  dense_matrix<T> c = matrices.front();
  for (std::size_t k = 1; k < matrices.size(); ++k) c = khatri_rao(c, matrices[k]);
  return c;
}

}  // namespace tprod
