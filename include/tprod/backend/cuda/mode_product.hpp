// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode_product.hpp
/// @brief The CUDA backend's mode-n product task (contract: backend/kernels/mode_product.hpp), the mirror of
/// backend/cpu/mode_product.hpp; modes count from 0. With u uploaded (it is small): mode 0 is one GEMM
/// u·[a_0 … a_{p−1}] (the slices side by side are an m×(n·p) matrix), mode 1 one strided-batched GEMM a_k·uᵀ with uᵀ
/// shared (stride 0), mode 2 the tube transform's route with uᵀ as the factor (tprod's tube kernel when small,
/// else one GEMM).
#include <cstddef>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/core/detail/dense_matrix.hpp"

namespace tprod::backend::cuda {

/// @brief out = a ×_mode u: mode 0 out_k = u·a_k, mode 1 out_k = a_k·uᵀ, mode 2 along the tubes by uᵀ.
template <class T>
void multiply_mode(const system& sys, int mode, dview<const T> a, const tprod::detail::dense_matrix<T>& u,
                   dview<T> out) {
  kernels::expect_mode_product(mode, a.extents(), std::size_t(u.rows()), std::size_t(u.cols()), out.extents());
  if (out.size() == 0) return;
  const std::size_t r = std::size_t(u.rows()), m = a.m(), n = a.n(), p = a.p();
  if (a.size() == 0) {  // an empty contracted extent: the product is zero
    raw::fill(out.data(), out.size(), T(0), sys.stream());
    return;
  }
  // u for mode 0, uᵀ for modes 1 and 2, column-major on the device
  const tprod::detail::dense_matrix<T> factor = mode == 0 ? u : tprod::detail::dense_matrix<T>(u.transpose());
  device_buffer<T> f(std::size_t(factor.size()), sys.stream());
  raw::copy_bytes(f.data(), factor.data(), f.size() * sizeof(T), raw::direction::host_to_device, sys.stream());
  const bool tf32 = sys.ex.tf32;
  if (mode == 0) {
    raw::gemm(r, n * p, m, f.data(), r, a.data(), m, out.data(), r, tf32, sys.stream());
  } else if (mode == 1) {
    raw::gemm_strided_batched(m, r, n, p, a.data(), m * n, f.data(), 0, out.data(), m * r, tf32, sys.stream());
  } else if (raw::tube_kernel_applies(p, r, sizeof(T))) {
    raw::tube_transform(a.data(), f.data(), out.data(), m * n, p, r, sys.stream());
  } else {
    raw::gemm(m * n, r, p, a.data(), m * n, f.data(), p, out.data(), m * n, tf32, sys.stream());
  }
}

}  // namespace tprod::backend::cuda
