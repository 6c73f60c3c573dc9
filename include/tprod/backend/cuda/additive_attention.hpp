// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file additive_attention.hpp
/// @brief The CUDA backend's additive-attention tasks (contract: backend/kernels/additive_attention.hpp), the mirror
/// of backend/cpu/additive_attention.hpp. The tanh scores and their gradients are kernels of one thread per output
/// entry (src/cuda/attention.cu); the products with V and dO are the dot-product attention's batched GEMMs and the
/// softmax its column kernels, with scale 1:
///   P = softmax(wᵀ tanh(Q_t + K_k)),  O = Pᵀ·V,  dV = P·dO,  dP = V·dOᵀ,  dS = softmax′(dP),  then dQ, dK, d_score.
#include "tprod/backend/cuda/attention.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/backend/kernels/additive_attention.hpp"

namespace tprod::backend::cuda {

/// @brief P_f(k, i) = softmax_k(wᵀ tanh(Q_i + K_k)) over the valid keys, O_f = P_fᵀ·V_f.
template <class T>
void additive_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                             head_layout<const T> k, head_layout<const T> v, dview<const T> score,
                             const attention_masking& mask, dview<T> probs, head_layout<T> out) {
  const std::size_t* lengths = mask.key_lengths.empty() ? nullptr : mask.key_lengths.data();
  raw::additive_scores(d, q, k, score.data(), mask.causal, lengths, probs.data(), sys.stream());
  raw::attention_softmax(probs.data(), d.tk, d.tq, d.blocks(), d.batch, T(1), mask.causal, lengths, sys.stream());
  attention_weighting(sys, d, dview<const T>(probs), v, out);
}

/// @brief dV_f = P_f·dO_f; dS = softmax backward of V_f·dO_fᵀ; dQ, dK and the score vectors' gradient from dS.
template <class T>
void additive_backward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                              head_layout<const T> k, head_layout<const T> v, dview<const T> score,
                              const attention_masking& mask, dview<const T> probs, head_layout<const T> d_out,
                              head_layout<T> dq, head_layout<T> dk, head_layout<T> dv, dview<T> d_score) {
  device_buffer<T> ds(d.tk * d.tq * d.blocks(), sys.stream());
  attention_backward_values(sys, d, probs, v, d_out, dv, dview<T>(ds.data(), d.tk, d.tq, d.blocks()));
  raw::attention_softmax_backward(probs.data(), ds.data(), d.tk, d.tq, d.blocks(), T(1), sys.stream());
  raw::additive_score_gradients(d, q, k, score.data(), mask.causal,
                                mask.key_lengths.empty() ? nullptr : mask.key_lengths.data(), ds.data(), dq, dk,
                                d_score.data(), sys.stream());
}

}  // namespace tprod::backend::cuda
