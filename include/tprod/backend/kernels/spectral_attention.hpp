// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file spectral_attention.hpp
/// @brief The kernel contract's tasks of tensorized spectral attention's graph (TSA, paper 002, Alg. 1), for real
/// scalars, on the sequence blocks of a (B·L)×J_k×1 key tensor: the blocks and layout of backend/kernels/attention.hpp
/// with p = 1, one head, T_q = T_k = L and d_h = J_k. Sequence b has n_b real tokens (mask.key_lengths[b], or all L);
/// Ω is an L×L×1 tensor, `scale` is 1/d_k. For a backend system `sys` of space S:
///   spectral_graph_forward(sys, d, k, scale, omega, mask, scores, psi_t)
///       scores_b = scale·K_b·K_bᵀ (slice b of an L×L×B tensor), and psi_t_b = Ψ_bᵀ with
///       Ψ_b(i, j) = Ω(i, j)·max(scores_b(i, j), 0) for i ≠ j, i < n_b, j < n_b, and 0 elsewhere
///   spectral_graph_backward(sys, d, scores, omega, mask, scale, d_psi, d_scores)
///       d_scores_b = scale·(E_b + E_bᵀ), E_b(i, j) = Ω(i, j)·d_psi_b(i, j)·[scores_b(i, j) > 0] for i ≠ j,
///       i < n_b, j < n_b, and 0 elsewhere: the factor of K in ∂J/∂K_b = d_scores_b·K_b
/// Ψ is stored transposed so that the attention's weighting task (O_f = P_fᵀ·V_f) computes Ψ·V with P = Ψᵀ, and
/// Ψᵀ·G with P = Ψ. Outputs are assigned.
#include "tprod/backend/kernels/attention_blocks.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept spectral_attention_tasks =
    requires(const Sys& sys, const attention_blocks& d, head_layout<const T> c, const attention_masking& mask, T scale,
             tensor3_view<const T, dextents3, S> pc, tensor3_view<T, dextents3, S> pm) {
      spectral_graph_forward(sys, d, c, scale, pc, mask, pm, pm);
      spectral_graph_backward(sys, d, pc, pc, mask, scale, pc, pm);
    };

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/spectral_attention.hpp"
