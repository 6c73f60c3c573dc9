// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention.hpp
/// @brief The CUDA backend's attention tasks (contract: backend/kernels/attention.hpp), the mirror of
/// backend/cpu/attention.hpp: each product over the p·h·B blocks is one cuBLAS batched GEMM on tables of block
/// pointers that a kernel writes from the three strides (slice, head, sequence), so no table crosses from the host, the masked softmax and its backward one
/// kernel each (src/cuda/attention.cu). The backward pass runs as its two halves, with dP for every block in
/// the scratch (attention_scratch_blocks = all blocks).
#include <cmath>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/kernels/attention.hpp"

namespace tprod::backend::cuda {

using kernels::attention_blocks;
using kernels::attention_masking;
using kernels::head_layout;

namespace detail {
/// The blocks (s, j, b) of Q, K, V, O or their gradients: block (s, j, b) at h.block(s, j, b, rows, d_h).
template <class E>
raw::block_grid<E> head_blocks(const attention_blocks& d, const head_layout<E>& h, std::size_t rows) {
  return {h.data + h.col0 * h.ld, h.slice_stride, d.dh * h.ld, rows};
}
/// The T_k×T_q blocks of a probabilities (or dP) tensor, block f at data + f·T_k·T_q.
template <class E>
raw::block_grid<E> prob_blocks(const attention_blocks& d, E* data) {
  const std::size_t block = d.tk * d.tq;
  return {data, d.heads * d.batch * block, d.batch * block, block};
}
/// One batched GEMM over all blocks.
template <class T>
void gemm_over_blocks(const system& sys, const attention_blocks& d, bool trans_a, bool trans_b, std::size_t m,
                      std::size_t n, std::size_t k, raw::block_grid<const T> a, std::size_t lda,
                      raw::block_grid<const T> b, std::size_t ldb, raw::block_grid<T> c, std::size_t ldc) {
  raw::gemm_blocks(trans_a, trans_b, m, n, k, a, lda, b, ldb, T(0), c, ldc, d.heads, d.batch, d.blocks(), sys.ex.tf32,
                   sys.stream());
}
}  // namespace detail

/// @brief O_f = P_fᵀ·V_f.
template <class T>
void attention_weighting(const system& sys, const attention_blocks& d, dview<const T> probs, head_layout<const T> v,
                         head_layout<T> out) {
  detail::gemm_over_blocks<T>(sys, d, true, false, d.tq, d.dh, d.tk, detail::prob_blocks(d, probs.data()), d.tk,
                              detail::head_blocks(d, v, d.tk), v.ld, detail::head_blocks(d, out, d.tq), out.ld);
}

/// @brief P_f = masked softmax(scale·K_f·Q_fᵀ), and O_f = P_fᵀ·V_f when `weight`.
template <class T>
void attention_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                              head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                              dview<T> probs, head_layout<T> out, bool weight) {
  detail::gemm_over_blocks<T>(sys, d, false, true, d.tk, d.tq, d.dh, detail::head_blocks(d, k, d.tk), k.ld,
                              detail::head_blocks(d, q, d.tq), q.ld, detail::prob_blocks(d, probs.data()), d.tk);
  raw::attention_softmax(probs.data(), d.tk, d.tq, d.blocks(), d.batch, T(1) / std::sqrt(T(d.dh)), mask.causal,
                         mask.key_lengths.empty() ? nullptr : mask.key_lengths.data(), sys.stream());
  if (weight) attention_weighting(sys, d, dview<const T>(probs), v, out);
}

/// @brief dV_f = P_f·dO_f, dP_f = V_f·dO_fᵀ.
template <class T>
void attention_backward_values(const system& sys, const attention_blocks& d, dview<const T> probs,
                               head_layout<const T> v, head_layout<const T> d_out, head_layout<T> dv, dview<T> dp) {
  const auto dob = detail::head_blocks(d, d_out, d.tq);
  detail::gemm_over_blocks<T>(sys, d, false, false, d.tk, d.dh, d.tq, detail::prob_blocks(d, probs.data()), d.tk, dob,
                              d_out.ld, detail::head_blocks(d, dv, d.tk), dv.ld);
  detail::gemm_over_blocks<T>(sys, d, false, true, d.tk, d.tq, d.dh, detail::head_blocks(d, v, d.tk), v.ld, dob,
                              d_out.ld, detail::prob_blocks(d, dp.data()), d.tk);
}

/// @brief dS_f = softmax backward (in dP's memory), dQ_f = dS_fᵀ·K_f, dK_f = dS_f·Q_f.
template <class T>
void attention_backward_scores(const system& sys, const attention_blocks& d, dview<const T> probs, dview<T> dp,
                               head_layout<const T> q, head_layout<const T> k, head_layout<T> dq, head_layout<T> dk) {
  raw::attention_softmax_backward(probs.data(), dp.data(), d.tk, d.tq, d.blocks(), T(1) / std::sqrt(T(d.dh)),
                                  sys.stream());
  const auto ds = detail::prob_blocks(d, static_cast<const T*>(dp.data()));
  detail::gemm_over_blocks<T>(sys, d, true, false, d.tq, d.dh, d.tk, ds, d.tk, detail::head_blocks(d, k, d.tk), k.ld,
                              detail::head_blocks(d, dq, d.tq), dq.ld);
  detail::gemm_over_blocks<T>(sys, d, false, false, d.tk, d.dh, d.tq, ds, d.tk, detail::head_blocks(d, q, d.tq), q.ld,
                              detail::head_blocks(d, dk, d.tk), dk.ld);
}

/// @brief Every block's dP is kept: the scratch has one T_k×T_q slice per block.
inline std::size_t attention_scratch_blocks(const system&, const attention_blocks& d) { return d.blocks(); }

/// @brief attention_backward_values, then attention_backward_scores, with dP in `scratch`.
template <class T>
void attention_backward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                               head_layout<const T> k, head_layout<const T> v, dview<const T> probs,
                               head_layout<const T> d_out, head_layout<T> dq, head_layout<T> dk, head_layout<T> dv,
                               dview<T> scratch) {
  attention_backward_values(sys, d, probs, v, d_out, dv, scratch);
  attention_backward_scores(sys, d, probs, scratch, q, k, dq, dk);
}

}  // namespace tprod::backend::cuda
