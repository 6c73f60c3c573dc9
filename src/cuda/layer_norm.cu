// SPDX-License-Identifier: Apache-2.0
// The LayerNorm kernels of the CUDA backend (backend/cuda/layer_norm.hpp), the mirror of
// backend/cpu/layer_norm.hpp. The data are column-major r×n×p: a (row t, slice k) pair's n features lie r apart,
// so one thread per (t, k) reads, for each feature j, a contiguous run across the warp's rows (coalesced), and sums
// its features in the CPU's order (j = 0, 1, …). The parameter gradients sum over the rows of each (j, k): one block
// per feature column, a contiguous run of r elements.
#include <cmath>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

using kernels::layer_norm_kind;
using namespace detail;

template <class T>
__global__ void forward_kernel(layer_norm_kind kind, T eps, const T* x, const T* gamma, const T* beta, T* y,
                               T* normalized, T* inv_scale, T* coupling, std::size_t r, std::size_t n, std::size_t p) {
  TPROD_GRID_LOOP(u, r * p) {
    const std::size_t t = u % r, k = u / r, base = t + r * n * k;
    T mean = 0, var = 0;
    for (std::size_t j = 0; j < n; ++j) mean += x[base + r * j];
    mean *= T(1) / T(n);
    for (std::size_t j = 0; j < n; ++j) {
      const T d = x[base + r * j] - mean;
      var += d * d;
    }
    var *= T(1) / T(n);
    T inv_s;
    if (kind == layer_norm_kind::original_domain) {
      inv_s = T(1) / sqrt(var + eps);
    } else {
      const T sigma = sqrt(var);
      inv_s = T(1) / (sigma + eps);
      coupling[u] = sigma > T(0) ? (sigma + eps) / sigma : T(0);
    }
    inv_scale[u] = inv_s;
    for (std::size_t j = 0; j < n; ++j) {
      const T nh = (x[base + r * j] - mean) * inv_s;
      normalized[base + r * j] = nh;
      y[base + r * j] = nh * gamma[j + n * k] + beta[j + n * k];
    }
  }
}

// γ·g rounded on its own, never fused into a following addition: dX subtracts the mean of these products from each
// of them, and where σ = 0 (transform_domain, inv_s = 1/ε) that difference is magnified 1/ε times, so both sides
// must carry the same rounding (with one feature it is then exactly 0, as on the CPU).
__device__ inline float rounded_product(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double rounded_product(double a, double b) { return __dmul_rn(a, b); }

// dX for one (t, k) per thread: m1 = mean_j γ·g, m2 = c·mean_j γ·g·n̂, dX = inv_s·(γ·g − m1 − n̂·m2).
template <class T>
__global__ void backward_input_kernel(const T* gamma, const T* normalized, const T* inv_scale, const T* coupling,
                                      const T* d_out, T* d_in, std::size_t r, std::size_t n, std::size_t p) {
  TPROD_GRID_LOOP(u, r * p) {
    const std::size_t t = u % r, k = u / r, base = t + r * n * k;
    T m1 = 0, m2 = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const T gg = rounded_product(gamma[j + n * k], d_out[base + r * j]);
      m1 += gg;
      m2 += gg * normalized[base + r * j];
    }
    m1 *= T(1) / T(n);
    m2 *= T(1) / T(n);
    if (coupling != nullptr) m2 *= coupling[u];
    const T inv_s = inv_scale[u];
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t e = base + r * j;
      d_in[e] = inv_s * (rounded_product(gamma[j + n * k], d_out[e]) - m1 - normalized[e] * m2);
    }
  }
}

// dΓ(0, j, k) = Σ_t dY ⊙ n̂, dℬ(0, j, k) = Σ_t dY: a block sums each column (j + n·k) it is given, the column's r
// contiguous elements; the blocks stride over the n·p columns, since a grid holds fewer blocks than a size_t counts.
template <class T>
__global__ void backward_parameters_kernel(const T* normalized, const T* d_out, T* d_gamma, T* d_beta, std::size_t r,
                                           std::size_t columns) {
  for (std::size_t column = blockIdx.x; column < columns; column += gridDim.x) {
    const std::size_t base = column * r;
    T sg = 0, sb = 0;
    for (std::size_t t = threadIdx.x; t < r; t += reduce_threads) {
      sg += d_out[base + t] * normalized[base + t];
      sb += d_out[base + t];
    }
    block_sum(sg, d_gamma + column, 0);
    block_sum(sb, d_beta + column, 0);
    __syncthreads();  // block_sum's shared memory is reused by the next column
  }
}

}  // namespace

namespace raw {

template <class T>
void layer_norm_forward(kernels::layer_norm_kind kind, T eps, const T* x, const T* gamma, const T* beta, T* y,
                        T* normalized, T* inv_scale, T* coupling, std::size_t r, std::size_t n, std::size_t p,
                        cudaStream_t stream) {
  if (r * n * p == 0) return;
  forward_kernel<<<blocks_for(r * p), 256, 0, stream>>>(kind, eps, x, gamma, beta, y, normalized, inv_scale, coupling,
                                                        r, n, p);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void layer_norm_backward(const T* gamma, const T* normalized, const T* inv_scale, const T* coupling, const T* d_out,
                         T* d_in, T* d_gamma, T* d_beta, std::size_t r, std::size_t n, std::size_t p,
                         cudaStream_t stream) {
  if (n * p == 0) return;
  // The parameters first: d_in may be d_out's memory.
  backward_parameters_kernel<<<blocks_for(n * p, 1), reduce_threads, 0, stream>>>(normalized, d_out, d_gamma, d_beta,
                                                                                   r, n * p);
  TPROD_CUDA_CHECK(cudaGetLastError());
  if (r == 0) return;
  backward_input_kernel<<<blocks_for(r * p), 256, 0, stream>>>(gamma, normalized, inv_scale, coupling, d_out, d_in, r,
                                                               n, p);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

#define TPROD_INSTANTIATE(T)                                                                                      \
  template void layer_norm_forward<T>(kernels::layer_norm_kind, T, const T*, const T*, const T*, T*, T*, T*, T*,  \
                                      std::size_t, std::size_t, std::size_t, cudaStream_t);                       \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, std::size_t, \
                                       std::size_t, std::size_t, cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
