// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file spectral_attention.hpp
/// @brief The CUDA backend's tasks of tensorized spectral attention's graph (contract:
/// backend/kernels/spectral_attention.hpp), the mirror of backend/cpu/spectral_attention.hpp: the scores K_b·K_bᵀ of
/// every sequence in one cuBLAS batched GEMM (attention.hpp's gemm_over_blocks), then Ψᵀ, the scale and the scores'
/// gradient by kernels of one thread per entry (src/cuda/attention.cu).
#include "tprod/backend/cuda/attention.hpp"
#include "tprod/backend/kernels/spectral_attention.hpp"

namespace tprod::backend::cuda {

/// @brief scores_b = scale·K_b·K_bᵀ, psi_t_b = (Ω ⊙ max(scores_b, 0))ᵀ on the real tokens, zero diagonal.
template <class T>
void spectral_graph_forward(const system& sys, const attention_blocks& d, head_layout<const T> k, T scale,
                            dview<const T> omega, const attention_masking& mask, dview<T> scores, dview<T> psi_t) {
  const auto kb = detail::head_blocks(d, k, d.tk);
  detail::gemm_over_blocks<T>(sys, d, false, true, d.tk, d.tk, d.dh, kb, k.ld, kb, k.ld,
                              detail::prob_blocks(d, scores.data()), d.tk);
  raw::spectral_graph(scores.data(), omega.data(), d.tk, d.batch, scale,
                      mask.key_lengths.empty() ? nullptr : mask.key_lengths.data(), psi_t.data(), sys.stream());
}

/// @brief d_scores_b = scale·(E_b + E_bᵀ), E_b = Ω ⊙ d_psi_b ⊙ [scores_b > 0] on the real tokens off the diagonal.
template <class T>
void spectral_graph_backward(const system& sys, const attention_blocks& d, dview<const T> scores,
                             dview<const T> omega, const attention_masking& mask, T scale, dview<const T> d_psi,
                             dview<T> d_scores) {
  raw::spectral_graph_backward(scores.data(), omega.data(), d_psi.data(), d.tk, d.batch, scale,
                               mask.key_lengths.empty() ? nullptr : mask.key_lengths.data(), d_scores.data(),
                               sys.stream());
}

}  // namespace tprod::backend::cuda
