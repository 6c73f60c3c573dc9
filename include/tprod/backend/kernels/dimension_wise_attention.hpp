// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dimension_wise_attention.hpp
/// @brief The kernel contract's dimension-wise attention tasks (TensorCoder, paper 003), for real scalars, on the
/// (slice, head, sequence) blocks and layout of backend/kernels/attention.hpp (self-attention: T_q = T_k = T).
///
/// For block f with n = valid_keys(d, b, T) valid tokens (the key-padding length) and Q_n, K_n their first n rows:
///   dimension_wise_forward_blocks(sys, d, q, k, v, mask, Aᵀ, o)
///       Aᵀ_f = column softmax(K_nᵀ·Q_n / √n)   (d_h×d_h: slice f of a d_h×d_h×(p·h·B) tensor),  O_f = V_f·Aᵀ_f
///   dimension_wise_backward_blocks(sys, d, q, k, v, mask, Aᵀ, dO, dq, dk, dv)
///       dV_f = dO_f·A_f,  G = softmax backward of V_fᵀ·dO_f with scale 1/√n,
///       dQ_n = K_n·G, dK_n = Q_n·Gᵀ, and the padded rows (≥ n) of dQ and dK zero.
/// Outputs and gradients are assigned.
#include "tprod/backend/kernels/attention_blocks.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept dimension_wise_attention_tasks =
    requires(const Sys& sys, const attention_blocks& d, head_layout<const T> c, head_layout<T> h,
             const attention_masking& mask, tensor3_view<const T, dextents3, S> pc, tensor3_view<T, dextents3, S> pm) {
      dimension_wise_forward_blocks(sys, d, c, c, c, mask, pm, h);
      dimension_wise_backward_blocks(sys, d, c, c, c, mask, pc, c, h, h, h);
    };

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/dimension_wise_attention.hpp"
