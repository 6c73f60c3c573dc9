// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_gemm.hpp
/// @brief The transform-domain linear map of every layer: Ŷ_k = X̂_k·Ŵ_k + 1·b̂_k for each slice k, as one
/// GEMM per slice over all B·T rows at once, and its backward pass, in the tensors' memory space (the backend's
/// slice_linear tasks, backend/kernels/slice_linear.hpp).
#include "tprod/backend/kernels/slice_linear.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/mac_counter.hpp"

namespace tprod::nn::detail {

/// @brief Y_k = X_k · W_k[:, c0 : c0+q] (+ b_k[c0 : c0+q] on every row) for every slice k.
/// `b` is either 1×(≥c0+q)×p or empty (no bias).
template <class T, class S>
void slice_linear_forward(const tensor3<T, dextents3, S>& x, const tensor3<T, dextents3, S>& w,
                          const tensor3<T, dextents3, S>& b, std::size_t c0, std::size_t q,
                          tensor3<T, dextents3, S>& y) {
  ensure_shape(y, x.m(), q, x.p());
  tally_macs(std::uint64_t(x.m()) * x.n() * q * x.p());
  slice_linear_forward(tprod::detail::system_of<S>(), x.dynamic_view(), w.dynamic_view(), b.dynamic_view(), c0,
                       y.dynamic_view());
}

/// @brief Backward of slice_linear_forward for the columns c0…c0+q of W (q = dY's width):
/// dW_k[:, cols] = X_kᵀ·dY_k, db_k[cols] = 1ᵀ·dY_k (when db is not empty), and, when dx is given,
/// dX_k = dY_k·W_k[:, cols]ᵀ (added to dX when `accumulate`).
template <class T, class S>
void slice_linear_backward(const tensor3<T, dextents3, S>& x, const tensor3<T, dextents3, S>& w,
                           const tensor3<T, dextents3, S>& dy, std::size_t c0, tensor3<T, dextents3, S>* dx,
                           bool accumulate, tensor3<T, dextents3, S>& dw, tensor3<T, dextents3, S>& db) {
  if (dx != nullptr && !accumulate) ensure_shape_like(*dx, x);
  tally_macs(std::uint64_t(x.m()) * x.n() * dy.n() * x.p() * (dx != nullptr ? 2 : 1));
  slice_linear_backward(tprod::detail::system_of<S>(), x.dynamic_view(), w.dynamic_view(), dy.dynamic_view(), c0,
                        dx != nullptr ? dx->dynamic_view() : tensor3_view<T, dextents3, S>(), accumulate,
                        dw.dynamic_view(), db.dynamic_view());
}

}  // namespace tprod::nn::detail
