// SPDX-License-Identifier: Apache-2.0
// The attention's softmax kernels of the CUDA backend (backend/cuda/attention.hpp; its GEMMs are cuBLAS's batched
// GEMMs, gemm.cu). One thread per column of Sᵀ (a query of one block): the column's T_k scores are contiguous.
// Also the valid-row copies of dimension-wise attention (backend/cuda/dimension_wise_attention.hpp).
#include <algorithm>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

using namespace detail;

template <class T>
__global__ void softmax_kernel(T* probs, std::size_t tk, std::size_t tq, std::size_t batch, T scale, bool causal,
                               const std::size_t* key_lengths, std::size_t columns) {
  TPROD_GRID_LOOP(u, columns) {  // u = t + tq·f
    const std::size_t t = u % tq, f = u / tq;
    std::size_t valid = tk;
    if (causal && t + 1 < valid) valid = t + 1;
    if (key_lengths != nullptr && key_lengths[f % batch] < valid) valid = key_lengths[f % batch];
    T* col = probs + u * tk;
    T mx = col[0];
    for (std::size_t i = 1; i < valid; ++i) mx = col[i] > mx ? col[i] : mx;
    T sum = 0;
    for (std::size_t i = 0; i < valid; ++i) {
      col[i] = exp((col[i] - mx) * scale);
      sum += col[i];
    }
    const T inv = T(1) / sum;
    for (std::size_t i = 0; i < valid; ++i) col[i] *= inv;
    for (std::size_t i = valid; i < tk; ++i) col[i] = T(0);
  }
}

template <class T>
__global__ void softmax_backward_kernel(const T* probs, T* dp, std::size_t tk, T scale, std::size_t columns) {
  TPROD_GRID_LOOP(u, columns) {
    const T* p = probs + u * tk;
    T* g = dp + u * tk;
    T c = 0;
    for (std::size_t i = 0; i < tk; ++i) c += p[i] * g[i];
    for (std::size_t i = 0; i < tk; ++i) g[i] = scale * p[i] * (g[i] - c);
  }
}

// e = r + rows·(c + width·s) of dst: row r = t + seq·b of column c, slice s.
template <class T>
__global__ void valid_rows_kernel(const T* src, std::size_t ld, std::size_t slice_stride, std::size_t col0, T* dst,
                                  std::size_t seq, std::size_t rows, std::size_t width, const std::size_t* lengths,
                                  bool scaled, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {
    const std::size_t r = e % rows, c = (e / rows) % width, s = e / (rows * width);
    const std::size_t n = lengths != nullptr ? lengths[r / seq] : seq;
    const T x = src[s * slice_stride + (col0 + c) * ld + r];
    dst[e] = r % seq < n ? (scaled ? x * (T(1) / sqrt(T(n))) : x) : T(0);
  }
}

}  // namespace

namespace raw {

template <class T>
void valid_rows(const T* src, std::size_t ld, std::size_t slice_stride, std::size_t col0, T* dst, std::size_t seq,
                std::size_t batch, std::size_t width, std::size_t p, const std::size_t* key_lengths, bool scaled,
                cudaStream_t stream) {
  const std::size_t rows = seq * batch, total = rows * width * p;
  if (total == 0) return;
  const scratch<std::size_t> lengths(key_lengths != nullptr ? batch : 0, stream);
  if (key_lengths != nullptr) upload(lengths.ptr, key_lengths, batch, stream);
  valid_rows_kernel<<<blocks_for(total), 256, 0, stream>>>(src, ld, slice_stride, col0, dst, seq, rows, width,
                                                           key_lengths != nullptr ? lengths.ptr : nullptr, scaled,
                                                           total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void attention_softmax(T* probs, std::size_t tk, std::size_t tq, std::size_t blocks, std::size_t batch, T scale,
                       bool causal, const std::size_t* key_lengths, cudaStream_t stream) {
  const std::size_t columns = tq * blocks;
  if (columns == 0 || tk == 0) return;
  const scratch<std::size_t> lengths(key_lengths != nullptr ? batch : 0, stream);
  if (key_lengths != nullptr) upload(lengths.ptr, key_lengths, batch, stream);
  softmax_kernel<<<blocks_for(columns), 256, 0, stream>>>(probs, tk, tq, batch, scale, causal,
                                                          key_lengths != nullptr ? lengths.ptr : nullptr, columns);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void attention_softmax_backward(const T* probs, T* dp, std::size_t tk, std::size_t tq, std::size_t blocks, T scale,
                                cudaStream_t stream) {
  const std::size_t columns = tq * blocks;
  if (columns == 0 || tk == 0) return;
  softmax_backward_kernel<<<blocks_for(columns), 256, 0, stream>>>(probs, dp, tk, scale, columns);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

#define TPROD_INSTANTIATE(T)                                                                          \
  template void attention_softmax<T>(T*, std::size_t, std::size_t, std::size_t, std::size_t, T, bool, \
                                     const std::size_t*, cudaStream_t);                               \
  template void attention_softmax_backward<T>(const T*, T*, std::size_t, std::size_t, std::size_t, T, cudaStream_t); \
  template void valid_rows<T>(const T*, std::size_t, std::size_t, std::size_t, T*, std::size_t, std::size_t,        \
                              std::size_t, std::size_t, const std::size_t*, bool, cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
