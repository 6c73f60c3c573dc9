// SPDX-License-Identifier: Apache-2.0
// The attention's softmax kernels of the CUDA backend (backend/cuda/attention.hpp; its GEMMs are cuBLAS's batched
// GEMMs, gemm.cu). One thread per column of Sᵀ (a query of one block): the column's T_k scores are contiguous.
// Also the valid-row copies of dimension-wise attention (backend/cuda/dimension_wise_attention.hpp) and the tanh
// scores of additive attention and their gradients (backend/cuda/additive_attention.hpp) and the graph of tensorized
// spectral attention (backend/cuda/spectral_attention.hpp), one thread per output entry.
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

// Valid keys of query t of sequence b: the host's attention_masking::valid_keys.
__device__ inline std::size_t valid_keys_of(std::size_t tk, bool causal, const std::size_t* lengths, std::size_t b,
                                            std::size_t t) {
  std::size_t n = tk;
  if (causal && t + 1 < n) n = t + 1;
  if (lengths != nullptr && lengths[b] < n) n = lengths[b];
  return n;
}

// Entry (r, c) of block f = (s·h + j)·B + b of a head layout whose sequences have `rows` rows.
template <class E>
__device__ E& head_entry(const kernels::head_layout<E>& h, const kernels::attention_blocks& d, std::size_t f,
                         std::size_t rows, std::size_t r, std::size_t c) {
  const std::size_t s = f / (d.heads * d.batch), j = (f / d.batch) % d.heads, b = f % d.batch;
  return h.data[s * h.slice_stride + (h.col0 + j * d.dh + c) * h.ld + b * rows + r];
}

template <class T>
__global__ void additive_scores_kernel(kernels::attention_blocks d, kernels::head_layout<const T> q,
                                       kernels::head_layout<const T> k, const T* score, bool causal,
                                       const std::size_t* lengths, T* probs, std::size_t total) {
  TPROD_GRID_LOOP(u, total) {  // u = key + tk·(t + tq·f): P_f(key, t)
    const std::size_t key = u % d.tk, t = (u / d.tk) % d.tq, f = u / (d.tk * d.tq);
    T s = 0;
    if (key < valid_keys_of(d.tk, causal, lengths, f % d.batch, t)) {
      const T* w = score + (f / d.batch) * d.dh;  // block (s, j)'s d_h entries at (s·h + j)·d_h
      for (std::size_t c = 0; c < d.dh; ++c)
        s += w[c] * tanh(head_entry(q, d, f, d.tq, t, c) + head_entry(k, d, f, d.tk, key, c));
    }
    probs[u] = s;
  }
}

// dQ(t, c) and the share Σ_k dS(k, t) t_tk(c) of the score gradient, one thread per (t, c, f).
template <class T>
__global__ void additive_query_gradient_kernel(kernels::attention_blocks d, kernels::head_layout<const T> q,
                                               kernels::head_layout<const T> k, const T* score, bool causal,
                                               const std::size_t* lengths, const T* ds, kernels::head_layout<T> dq,
                                               T* shares, std::size_t total) {
  TPROD_GRID_LOOP(u, total) {  // u = t + tq·(c + d_h·f)
    const std::size_t t = u % d.tq, c = (u / d.tq) % d.dh, f = u / (d.tq * d.dh);
    const std::size_t n = valid_keys_of(d.tk, causal, lengths, f % d.batch, t);
    const T qc = head_entry(q, d, f, d.tq, t, c);
    const T* g = ds + (f * d.tq + t) * d.tk;  // column t of block f's dS
    T acc = 0, share = 0;
    for (std::size_t key = 0; key < n; ++key) {
      const T th = tanh(qc + head_entry(k, d, f, d.tk, key, c));
      acc += g[key] * (T(1) - th * th);
      share += g[key] * th;
    }
    head_entry(dq, d, f, d.tq, t, c) = score[(f / d.batch) * d.dh + c] * acc;
    shares[u] = share;
  }
}

// dK(key, c), one thread per (key, c, f): the queries that see the key.
template <class T>
__global__ void additive_key_gradient_kernel(kernels::attention_blocks d, kernels::head_layout<const T> q,
                                             kernels::head_layout<const T> k, const T* score, bool causal,
                                             const std::size_t* lengths, const T* ds, kernels::head_layout<T> dk,
                                             std::size_t total) {
  TPROD_GRID_LOOP(u, total) {  // u = key + tk·(c + d_h·f)
    const std::size_t key = u % d.tk, c = (u / d.tk) % d.dh, f = u / (d.tk * d.dh);
    const T kc = head_entry(k, d, f, d.tk, key, c);
    T acc = 0;
    for (std::size_t t = 0; t < d.tq; ++t) {
      if (key >= valid_keys_of(d.tk, causal, lengths, f % d.batch, t)) continue;
      const T th = tanh(head_entry(q, d, f, d.tq, t, c) + kc);
      acc += ds[(f * d.tq + t) * d.tk + key] * (T(1) - th * th);
    }
    head_entry(dk, d, f, d.tk, key, c) = score[(f / d.batch) * d.dh + c] * acc;
  }
}

// d_score((s·h + j)·d_h + c) = Σ_b Σ_t shares, in the order of b, then t (the host's order of the sequences).
template <class T>
__global__ void additive_score_sum_kernel(kernels::attention_blocks d, const T* shares, T* d_score, std::size_t total) {
  TPROD_GRID_LOOP(u, total) {  // u = c + d_h·(s·h + j)
    const std::size_t c = u % d.dh, head = u / d.dh;
    T acc = 0;
    for (std::size_t b = 0; b < d.batch; ++b) {
      const T* share = shares + ((head * d.batch + b) * d.dh + c) * d.tq;
      for (std::size_t t = 0; t < d.tq; ++t) acc += share[t];
    }
    d_score[u] = acc;
  }
}

// Ψᵀ of TSA, one thread per entry e = r + L·(c + L·b) of psi_t: Ψᵀ(r, c) = Ψ(c, r), from the unscaled scores.
template <class T>
__global__ void spectral_graph_kernel(const T* scores, const T* omega, std::size_t steps, std::size_t batch, T scale,
                                      const std::size_t* lengths, T* psi_t, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {
    const std::size_t r = e % steps, c = (e / steps) % steps, b = e / (steps * steps);
    const std::size_t n = lengths != nullptr ? lengths[b] : steps;
    T v = 0;
    if (r != c && r < n && c < n) {
      const T s = scale * scores[b * steps * steps + c + steps * r];  // S_b(c, r)
      v = s > T(0) ? omega[c + steps * r] * s : T(0);
    }
    psi_t[e] = v;
  }
}

// The scores' gradient of TSA, one thread per entry e = r + L·(c + L·b).
template <class T>
__global__ void spectral_graph_backward_kernel(const T* scores, const T* omega, const T* d_psi, std::size_t steps,
                                               T scale, const std::size_t* lengths, T* d_scores, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {
    const std::size_t r = e % steps, c = (e / steps) % steps, b = e / (steps * steps);
    const std::size_t n = lengths != nullptr ? lengths[b] : steps;
    T v = 0;
    if (r != c && r < n && c < n) {
      const std::size_t rc = r + steps * c, cr = c + steps * r, base = b * steps * steps;
      const T e_rc = scores[base + rc] > T(0) ? omega[rc] * d_psi[base + rc] : T(0);
      const T e_cr = scores[base + cr] > T(0) ? omega[cr] * d_psi[base + cr] : T(0);
      v = scale * (e_rc + e_cr);
    }
    d_scores[e] = v;
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

template <class T>
void additive_scores(const kernels::attention_blocks& d, kernels::head_layout<const T> q,
                     kernels::head_layout<const T> k, const T* score, bool causal, const std::size_t* key_lengths,
                     T* probs, cudaStream_t stream) {
  const std::size_t total = d.tk * d.tq * d.blocks();
  if (total == 0) return;
  const scratch<std::size_t> lengths(key_lengths != nullptr ? d.batch : 0, stream);
  if (key_lengths != nullptr) upload(lengths.ptr, key_lengths, d.batch, stream);
  additive_scores_kernel<<<blocks_for(total), 256, 0, stream>>>(d, q, k, score, causal,
                                                                key_lengths != nullptr ? lengths.ptr : nullptr, probs,
                                                                total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void additive_score_gradients(const kernels::attention_blocks& d, kernels::head_layout<const T> q,
                              kernels::head_layout<const T> k, const T* score, bool causal,
                              const std::size_t* key_lengths, const T* ds, kernels::head_layout<T> dq,
                              kernels::head_layout<T> dk, T* d_score, cudaStream_t stream) {
  const std::size_t queries = d.tq * d.dh * d.blocks(), keys = d.tk * d.dh * d.blocks(),
                    scores = d.p * d.heads * d.dh;
  if (scores == 0) return;
  const scratch<std::size_t> lengths(key_lengths != nullptr ? d.batch : 0, stream);
  if (key_lengths != nullptr) upload(lengths.ptr, key_lengths, d.batch, stream);
  const std::size_t* device_lengths = key_lengths != nullptr ? lengths.ptr : nullptr;
  const scratch<T> shares(queries, stream);
  if (queries > 0) {
    additive_query_gradient_kernel<<<blocks_for(queries), 256, 0, stream>>>(d, q, k, score, causal, device_lengths,
                                                                             ds, dq, shares.ptr, queries);
    TPROD_CUDA_CHECK(cudaGetLastError());
  }
  if (keys > 0) {
    additive_key_gradient_kernel<<<blocks_for(keys), 256, 0, stream>>>(d, q, k, score, causal, device_lengths, ds,
                                                                       dk, keys);
    TPROD_CUDA_CHECK(cudaGetLastError());
  }
  additive_score_sum_kernel<<<blocks_for(scores), 256, 0, stream>>>(d, shares.ptr, d_score, scores);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void spectral_graph(T* scores, const T* omega, std::size_t steps, std::size_t batch, T scale,
                    const std::size_t* key_lengths, T* psi_t, cudaStream_t stream) {
  const std::size_t total = steps * steps * batch;
  if (total == 0) return;
  const scratch<std::size_t> lengths(key_lengths != nullptr ? batch : 0, stream);
  if (key_lengths != nullptr) upload(lengths.ptr, key_lengths, batch, stream);
  spectral_graph_kernel<<<blocks_for(total), 256, 0, stream>>>(scores, omega, steps, batch, scale,
                                                               key_lengths != nullptr ? lengths.ptr : nullptr, psi_t,
                                                               total);
  TPROD_CUDA_CHECK(cudaGetLastError());
  raw::scale(scale, scores, total, stream);  // after Ψᵀ, which read the unscaled scores
}

template <class T>
void spectral_graph_backward(const T* scores, const T* omega, const T* d_psi, std::size_t steps, std::size_t batch,
                             T scale, const std::size_t* key_lengths, T* d_scores, cudaStream_t stream) {
  const std::size_t total = steps * steps * batch;
  if (total == 0) return;
  const scratch<std::size_t> lengths(key_lengths != nullptr ? batch : 0, stream);
  if (key_lengths != nullptr) upload(lengths.ptr, key_lengths, batch, stream);
  spectral_graph_backward_kernel<<<blocks_for(total), 256, 0, stream>>>(
      scores, omega, d_psi, steps, scale, key_lengths != nullptr ? lengths.ptr : nullptr, d_scores, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

#define TPROD_INSTANTIATE(T)                                                                          \
  template void attention_softmax<T>(T*, std::size_t, std::size_t, std::size_t, std::size_t, T, bool, \
                                     const std::size_t*, cudaStream_t);                               \
  template void attention_softmax_backward<T>(const T*, T*, std::size_t, std::size_t, std::size_t, T, cudaStream_t); \
  template void valid_rows<T>(const T*, std::size_t, std::size_t, std::size_t, T*, std::size_t, std::size_t,        \
                              std::size_t, std::size_t, const std::size_t*, bool, cudaStream_t);                  \
  template void additive_scores<T>(const kernels::attention_blocks&, kernels::head_layout<const T>,                 \
                                   kernels::head_layout<const T>, const T*, bool, const std::size_t*, T*,           \
                                   cudaStream_t);                                                                    \
  template void additive_score_gradients<T>(const kernels::attention_blocks&, kernels::head_layout<const T>,        \
                                            kernels::head_layout<const T>, const T*, bool, const std::size_t*,      \
                                            const T*, kernels::head_layout<T>, kernels::head_layout<T>, T*,         \
                                            cudaStream_t);                                                   \
  template void spectral_graph<T>(T*, const T*, std::size_t, std::size_t, T, const std::size_t*, T*, cudaStream_t); \
  template void spectral_graph_backward<T>(const T*, const T*, const T*, std::size_t, std::size_t, T,               \
                                           const std::size_t*, T*, cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
