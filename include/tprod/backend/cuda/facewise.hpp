// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file facewise.hpp
/// @brief The CUDA backend's facewise task (contract: backend/kernels/facewise.hpp): C(:, :, k) = A(:, :, k)·B(:, :, k)
/// for every slice as one strided-batched GEMM (cublasGemmStridedBatchedEx), TF32 for float when the execution
/// allows it.
#include <cstddef>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"

namespace tprod::backend::cuda {

template <class T>
void facewise(const system& sys, dview<const T> a, dview<const T> b, dview<T> c) {
  if (c.size() == 0) return;
  if (a.n() == 0) return fill(sys, c, T(0));  // empty sums
  raw::gemm_strided_batched(a.m(), b.n(), a.n(), a.p(), a.data(), b.data(), c.data(), sys.ex.tf32, sys.stream());
}

}  // namespace tprod::backend::cuda
