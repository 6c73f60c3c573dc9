// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_linear.hpp
/// @brief The kernel contract's slice-linear tasks, the transform-domain linear map of every nn layer, for real
/// scalars. For a backend system `sys` of space S, with X r×n×p, W n×Q×p, b 1×Q×p or empty (no bias), the
/// columns c0 … c0+q−1 of W (q ≤ Q − c0):
///   slice_linear_forward(sys, x, w, b, c0, y)            Y_k = X_k·W_k[:, c0:c0+q] + 1·b_k[c0:c0+q]   (Y r×q×p sized)
///   slice_linear_backward(sys, x, w, dy, c0, dx, accumulate, dw, db)
///                                                        dW_k[:, c0:c0+q] = X_kᵀ·dY_k, db_k[c0:c0+q] = 1ᵀ·dY_k
///                                                        (db not empty), and, when dx is not empty (r×n×p),
///                                                        dX_k = dY_k·W_k[:, c0:c0+q]ᵀ (added to dX when
///                                                        `accumulate`); the other columns of dW, db are untouched
/// One GEMM per slice over all rows; the bias is the GEMM's starting value (no separate pass), as in cuBLASLt's
/// epilogues.
#include <cstddef>

#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept slice_linear_tasks = requires(const Sys& sys, tensor3_view<const T, dextents3, S> c,
                                      tensor3_view<T, dextents3, S> x, std::size_t c0, bool accumulate) {
  slice_linear_forward(sys, c, c, c, c0, x);
  slice_linear_backward(sys, c, c, c, c0, x, accumulate, x, x);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/slice_linear.hpp"
