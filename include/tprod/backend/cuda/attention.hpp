#pragma once
/// @file attention.hpp
/// @brief The CUDA backend's attention tasks (contract: backend/kernels/attention.hpp), the mirror of
/// backend/cpu/attention.hpp: each product over the p·h·B blocks is one cuBLAS batched GEMM on tables of block
/// pointers (the blocks are strided three ways: slice, head, sequence), the masked softmax and its backward one
/// kernel each (src/cuda/attention.cu). The backward pass runs as its two halves, with dP for every block in
/// the scratch (attention_scratch_blocks = all blocks).
#include <cmath>
#include <vector>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/kernels/attention.hpp"

namespace tprod::backend::cuda {

using kernels::attention_blocks;
using kernels::attention_masking;
using kernels::head_layout;

namespace detail {
/// The pointers of every block (s, j, b) of one operand, in block order f = (s·h + j)·B + b.
template <class E>
std::vector<E*> block_pointers(const attention_blocks& d, const head_layout<E>& h, std::size_t rows) {
  std::vector<E*> out;
  out.reserve(d.blocks());
  for (std::size_t s = 0; s < d.p; ++s)
    for (std::size_t j = 0; j < d.heads; ++j)
      for (std::size_t b = 0; b < d.batch; ++b) out.push_back(h.block(s, j, b, rows, d.dh));
  return out;
}
/// The T_k×T_q blocks of a probabilities (or dP) tensor.
template <class E>
std::vector<E*> prob_pointers(const attention_blocks& d, E* data) {
  std::vector<E*> out(d.blocks());
  for (std::size_t f = 0; f < out.size(); ++f) out[f] = data + f * d.tk * d.tq;
  return out;
}
}  // namespace detail

/// @brief O_f = P_fᵀ·V_f.
template <class T>
void attention_weighting(const system& sys, const attention_blocks& d, dview<const T> probs, head_layout<const T> v,
                         head_layout<T> out) {
  const auto p = detail::prob_pointers(d, probs.data());
  const auto vb = detail::block_pointers(d, v, d.tk);
  const auto ob = detail::block_pointers(d, out, d.tq);
  raw::gemm_batched(true, false, d.tq, d.dh, d.tk, p.data(), d.tk, vb.data(), v.ld, T(0), ob.data(), out.ld, d.blocks(),
                    sys.ex.tf32, sys.stream());
}

/// @brief P_f = masked softmax(scale·K_f·Q_fᵀ), and O_f = P_fᵀ·V_f when `weight`.
template <class T>
void attention_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                              head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                              dview<T> probs, head_layout<T> out, bool weight) {
  const auto kb = detail::block_pointers(d, k, d.tk);
  const auto qb = detail::block_pointers(d, q, d.tq);
  const auto p = detail::prob_pointers(d, probs.data());
  raw::gemm_batched(false, true, d.tk, d.tq, d.dh, kb.data(), k.ld, qb.data(), q.ld, T(0), p.data(), d.tk, d.blocks(),
                    sys.ex.tf32, sys.stream());
  raw::attention_softmax(probs.data(), d.tk, d.tq, d.blocks(), d.batch, T(1) / std::sqrt(T(d.dh)), mask.causal,
                         mask.key_lengths.empty() ? nullptr : mask.key_lengths.data(), sys.stream());
  if (weight) attention_weighting(sys, d, dview<const T>(probs), v, out);
}

/// @brief dV_f = P_f·dO_f, dP_f = V_f·dO_fᵀ.
template <class T>
void attention_backward_values(const system& sys, const attention_blocks& d, dview<const T> probs,
                               head_layout<const T> v, head_layout<const T> d_out, head_layout<T> dv, dview<T> dp) {
  const auto p = detail::prob_pointers(d, probs.data());
  const auto dob = detail::block_pointers(d, d_out, d.tq);
  const auto vb = detail::block_pointers(d, v, d.tk);
  const auto dvb = detail::block_pointers(d, dv, d.tk);
  const auto dpb = detail::prob_pointers(d, dp.data());
  raw::gemm_batched(false, false, d.tk, d.dh, d.tq, p.data(), d.tk, dob.data(), d_out.ld, T(0), dvb.data(), dv.ld,
                    d.blocks(), sys.ex.tf32, sys.stream());
  raw::gemm_batched(false, true, d.tk, d.tq, d.dh, vb.data(), v.ld, dob.data(), d_out.ld, T(0), dpb.data(), d.tk,
                    d.blocks(), sys.ex.tf32, sys.stream());
}

/// @brief dS_f = softmax backward (in dP's memory), dQ_f = dS_fᵀ·K_f, dK_f = dS_f·Q_f.
template <class T>
void attention_backward_scores(const system& sys, const attention_blocks& d, dview<const T> probs, dview<T> dp,
                               head_layout<const T> q, head_layout<const T> k, head_layout<T> dq, head_layout<T> dk) {
  raw::attention_softmax_backward(probs.data(), dp.data(), d.tk, d.tq, d.blocks(), T(1) / std::sqrt(T(d.dh)),
                                  sys.stream());
  const auto ds = detail::prob_pointers(d, dp.data());
  const auto kb = detail::block_pointers(d, k, d.tk);
  const auto qb = detail::block_pointers(d, q, d.tq);
  const auto dqb = detail::block_pointers(d, dq, d.tq);
  const auto dkb = detail::block_pointers(d, dk, d.tk);
  raw::gemm_batched(true, false, d.tq, d.dh, d.tk, ds.data(), d.tk, kb.data(), k.ld, T(0), dqb.data(), dq.ld,
                    d.blocks(), sys.ex.tf32, sys.stream());
  raw::gemm_batched(false, false, d.tk, d.dh, d.tq, ds.data(), d.tk, qb.data(), q.ld, T(0), dkb.data(), dk.ld,
                    d.blocks(), sys.ex.tf32, sys.stream());
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
