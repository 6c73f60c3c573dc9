// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file additive_attention.hpp
/// @brief The kernel contract's additive (Bahdanau-style) attention tasks, for real scalars (paper 002's third
/// attention), on the (slice, head, sequence) blocks and layout of backend/kernels/attention.hpp.
///
/// Block f = (s·h + j)·B + b scores query i against key k with the head's vector w = score[s](j·d_h … (j+1)·d_h − 1)
/// (score: a 1×(h·d_h)×p tensor) instead of a dot product, t_ik = tanh(Q_i + K_k) ∈ ℝ^{d_h}:
///   additive_forward_blocks(sys, d, q, k, v, score, mask, P, o)
///       P_f(k, i) = softmax_k(wᵀ t_ik) over the valid keys k < valid_keys(b, i) (0 beyond),  O_f = P_fᵀ·V_f
///   additive_backward_blocks(sys, d, q, k, v, score, mask, P, dO, dq, dk, dv, d_score)
///       dV_f = P_f·dO_f,  dS = P_f ⊙ (V_f·dO_fᵀ − 1·colsum(P_f ⊙ V_f·dO_fᵀ)),
///       dQ_i = Σ_k dS(k, i) w ⊙ (1 − t_ik²),  dK_k = Σ_i dS(k, i) w ⊙ (1 − t_ik²),
///       d_score[s](head j) = Σ_b Σ_{i,k} dS(k, i) t_ik   (summed over the sequences in order b = 0, 1, …)
/// P is slice f of a T_k×T_q×(p·h·B) tensor, as for dot-product attention (a query's scores are one contiguous
/// column). The masked entries have P = 0, so they add nothing to any gradient. The backward pass evaluates the
/// tanh again rather than storing T_q·T_k·d_h of them. Outputs and gradients are assigned.
#include "tprod/backend/kernels/attention_blocks.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept additive_attention_tasks =
    requires(const Sys& sys, const attention_blocks& d, head_layout<const T> c, head_layout<T> h,
             const attention_masking& mask, tensor3_view<const T, dextents3, S> pc, tensor3_view<T, dextents3, S> pm) {
      additive_forward_blocks(sys, d, c, c, c, pc, mask, pm, h);
      additive_backward_blocks(sys, d, c, c, c, pc, mask, pc, c, h, h, h, pm);
    };

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/additive_attention.hpp"
