// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_linear.hpp
/// @brief The CUDA backend's slice-linear tasks (contract: backend/kernels/slice_linear.hpp), the mirror of
/// backend/cpu/slice_linear.hpp: each map is one strided-batched cuBLAS GEMM over the p slices, with W's column
/// block c0 … c0+q−1 addressed in place (leading dimension n, slice stride n·Q). The forward GEMM starts from the
/// bias repeated down the rows (β = 1), the bias gradient is 1ᵀ·dY_k as a GEMM with a vector of ones.
#include <cstddef>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/backend/cuda/elementwise.hpp"

namespace tprod::backend::cuda {

/// @brief Y_k = X_k·W_k[:, c0:c0+q] (+ b_k[c0:c0+q] on every row) for every slice k, q = Y's width.
template <class T>
void slice_linear_forward(const system& sys, dview<const T> x, dview<const T> w, dview<const T> b, std::size_t c0,
                          dview<T> y) {
  const std::size_t r = x.m(), n = x.n(), p = x.p(), q = y.n(), wide = w.n();
  const bool bias = b.size() != 0;
  if (bias) raw::broadcast_rows(b.data() + c0, wide, y.data(), r, q, p, sys.stream());
  raw::gemm_strided_batched(false, false, r, q, n, p, x.data(), r, r * n, w.data() + c0 * n, n, n * wide,
                            T(bias ? 1 : 0), y.data(), r, r * q, sys.ex.tf32, sys.stream());
}

/// @brief dW_k[:, c0:c0+q] = X_kᵀ·dY_k, db_k[c0:c0+q] = 1ᵀ·dY_k (db not empty) and, when dx is not empty,
/// dX_k = dY_k·W_k[:, c0:c0+q]ᵀ (added to dX when `accumulate`), q = dY's width.
template <class T>
void slice_linear_backward(const system& sys, dview<const T> x, dview<const T> w, dview<const T> dy, std::size_t c0,
                           dview<T> dx, bool accumulate, dview<T> dw, dview<T> db) {
  const std::size_t r = x.m(), n = x.n(), p = x.p(), q = dy.n(), wide = w.n();
  const bool tf32 = sys.ex.tf32;
  raw::gemm_strided_batched(true, false, n, q, r, p, x.data(), r, r * n, dy.data(), r, r * q, T(0), dw.data() + c0 * n,
                            n, n * wide, tf32, sys.stream());
  if (db.size() != 0) {
    device_buffer<T> ones(r, sys.stream());
    raw::fill(ones.data(), r, T(1), sys.stream());
    raw::gemm_strided_batched(false, false, 1, q, r, p, ones.data(), 1, 0, dy.data(), r, r * q, T(0), db.data() + c0, 1,
                              wide, tf32, sys.stream());
  }
  if (dx.size() == 0) return;
  raw::gemm_strided_batched(false, true, r, n, q, p, dy.data(), r, r * q, w.data() + c0 * n, n, n * wide,
                            T(accumulate ? 1 : 0), dx.data(), r, r * n, tf32, sys.stream());
}

}  // namespace tprod::backend::cuda
