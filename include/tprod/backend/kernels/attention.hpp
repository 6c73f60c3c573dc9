// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention.hpp
/// @brief The kernel contract's attention tasks, for real scalars: scaled dot-product attention over all
/// (slice, head, sequence) blocks of a batch at once.
///
/// Layout. Q, K, V and the head outputs O live inside (B·T)×w×p tensors: the block of slice s, head j and sequence b
/// is rows b·T … b·T+T−1, columns col0 + j·d_h … of slice s (head_layout). Scores are kept transposed,
/// Sᵀ = K·Qᵀ (T_k×T_q), so each query's softmax runs over one contiguous column; the probabilities of block
/// f = (s·h + j)·B + b are slice f of a T_k×T_q×(p·h·B) tensor. Query t of sequence b sees its first
/// valid_keys(b, t) keys: all T_k, at most t + 1 when causal, at most key_lengths[b] when lengths are given.
/// With scale = 1/√d_h, for a backend system `sys` of space S:
///   attention_forward_blocks(sys, d, q, k, v, mask, P, o, weight)
///                    P_f = masked column softmax(scale·K_f·Q_fᵀ) (0 beyond the valid keys); when `weight`,
///                    also O_f = P_fᵀ·V_f
///   attention_weighting(sys, d, P, v, o)                       O_f = P_fᵀ·V_f
///   attention_backward_values(sys, d, P, v, dO, dv, dP)        dV_f = P_f·dO_f,  dP_f = V_f·dO_fᵀ
///   attention_backward_scores(sys, d, P, dP, q, k, dq, dk)     dS_f = scale·P_f ⊙ (dP_f − 1·colsum(P_f ⊙ dP_f))
///                                                              (in dP's memory), dQ_f = dS_fᵀ·K_f, dK_f = dS_f·Q_f
///   attention_backward_blocks(sys, d, q, k, v, P, dO, dq, dk, dv, scratch)
///                    the last two in one pass (a backend may fuse them per block); scratch has
///                    attention_scratch_blocks(sys, d) slices of T_k×T_q
/// The head outputs and gradients are assigned.
#include "tprod/backend/kernels/attention_blocks.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept attention_tasks = requires(const Sys& sys, const attention_blocks& d, head_layout<const T> c, head_layout<T> h,
                                   const attention_masking& mask, tensor3_view<const T, dextents3, S> pc,
                                   tensor3_view<T, dextents3, S> pm) {
  attention_forward_blocks(sys, d, c, c, c, mask, pm, h, true);
  attention_weighting(sys, d, pc, c, h);
  attention_backward_values(sys, d, pc, c, c, h, pm);
  attention_backward_scores(sys, d, pc, pm, c, c, h, h);
  attention_backward_blocks(sys, d, c, c, c, pc, c, h, h, h, pm);
  { attention_scratch_blocks(sys, d) } -> std::same_as<std::size_t>;
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/attention.hpp"
