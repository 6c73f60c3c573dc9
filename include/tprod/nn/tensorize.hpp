// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tensorize.hpp
/// @brief Ten_p and Mat_p: folding a (tokens × d) matrix into a tokens × d_s × p tensor and back
/// (paper 000, §5.1, eq. 2), with zero padding when p does not divide d.
///
/// 𝒳(t, j, k) = X(t, k·d_s + j) (0-based), d_s = ⌈d/p⌉. With tprod's storage order (column-major slices,
/// slices contiguous) a column-major X and its fold have the same memory layout, so Ten_p is a copy at most.
/// When p ∤ d the feature dimension is padded with zeros to p·d_s and Mat_p truncates back to d (the option
/// the paper's footnote gives). Both maps are linear, and each is the other's adjoint: the backward pass of
/// Ten_p is Mat_p of the gradient and vice versa.
///
/// Batches: a batch of B sequences of T tokens is the (B·T)-row matrix whose row b·T + t is token t of
/// sequence b; every layer of the nn area uses this row order.
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

/// @brief d_s = ⌈d/p⌉, the slice width of a width-d embedding folded into p slices.
/// @throws shape_error when p = 0 or d = 0.
inline std::size_t slice_width(std::size_t d, std::size_t p) {
  TPROD_EXPECTS(p > 0 && d > 0, "nn::slice_width: d = " + std::to_string(d) + " and p = " + std::to_string(p) +
                                    " must both be positive");
  return (d + p - 1) / p;
}

/// @brief 𝒳 = Ten_p(X) ∈ ℝ^{rows×d_s×p}, 𝒳(t, j, k) = X(t, k·d_s + j), zero where k·d_s + j ≥ d.
template <std::floating_point T>
tensor3<T> ten_p(const detail::matrix<T>& x, std::size_t p) {
  const std::size_t rows = std::size_t(x.rows()), d = std::size_t(x.cols()), ds = slice_width(d, p);
  tensor3<T> out(rows, ds, p);  // zero-filled: the padding columns stay 0
  std::copy(x.data(), x.data() + x.size(), out.data());
  return out;
}

/// @brief X = Mat_p(𝒳) ∈ ℝ^{rows×d}: the slices side by side, truncated to the first d columns.
/// @throws shape_error unless the tensor's slice width is ⌈d/p⌉ (the shape Ten_p gives a width-d matrix).
template <std::floating_point T>
detail::matrix<T> mat_p(const tensor3<T>& x, std::size_t d) {
  TPROD_EXPECTS(d > 0 && x.p() > 0 && slice_width(d, x.p()) == x.n(),
                "nn::mat_p: width d = " + std::to_string(d) + " does not fold into a tensor of shape " + x.shape() +
                    " (its slice width must be ceil(d/p))");
  detail::matrix<T> out(Eigen::Index(x.m()), Eigen::Index(d));
  std::copy(x.data(), x.data() + out.size(), out.data());
  return out;
}

/// @brief Backward of Ten_p: dX = Mat_p(d𝒳) (the padding's gradient is dropped).
template <std::floating_point T>
detail::matrix<T> ten_p_backward(const tensor3<T>& d_out, std::size_t d) {
  return mat_p(d_out, d);
}

/// @brief Backward of Mat_p: d𝒳 = Ten_p(dX) (zero gradient on the padding).
template <std::floating_point T>
tensor3<T> mat_p_backward(const detail::matrix<T>& d_out, std::size_t p) {
  return ten_p(d_out, p);
}

/// @brief The r×(n·p)×1 tensor holding Mat_p(𝒳) for an r×n×p tensor (no padding involved): the input of a
/// matrix layer (a p = 1 linear head) after a tensor encoder. Same memory layout, so this is a copy.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> slices_side_by_side(const tensor3<T, dextents3, S>& x) {
  tensor3<T, dextents3, S> out(x.m(), x.n() * x.p(), 1, uninitialized);
  copy(tprod::detail::system_of<S>(), x.dynamic_view(), tensor3_view<T, dextents3, S>(out.data(), x.m(), x.n(), x.p()));
  return out;
}

/// @brief The inverse (and adjoint) of slices_side_by_side: an r×(n·p)×1 tensor folded into r×n×p.
/// @throws shape_error unless the tensor has one slice whose width p divides.
template <std::floating_point T, memory_space S>
tensor3<T, dextents3, S> slices_stacked(const tensor3<T, dextents3, S>& x, std::size_t p) {
  TPROD_EXPECTS(x.p() == 1 && p > 0 && x.n() % p == 0,
                "nn::slices_stacked: " + x.shape() + " is not r x (n*p) x 1 for p = " + std::to_string(p));
  tensor3<T, dextents3, S> out(x.m(), x.n() / p, p, uninitialized);
  copy(tprod::detail::system_of<S>(), x.dynamic_view(), tensor3_view<T, dextents3, S>(out.data(), x.m(), x.n(), 1));
  return out;
}

}  // namespace tprod::nn
