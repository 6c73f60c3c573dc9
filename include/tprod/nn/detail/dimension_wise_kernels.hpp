// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dimension_wise_kernels.hpp
/// @brief TensorCoder's dimension-wise attention (paper 003, the MLM encoder) on the (slice, head, sequence)
/// blocks of attention_kernels.hpp: the attention_variant::dimension_wise branch of the attention layer.
///
/// For one block with Q, K, V ∈ ℝ^{T×d_h} and n valid tokens (the key-padding length; rows ≥ n are padding):
///   S = Q_nᵀ K_n / √n ∈ ℝ^{d_h×d_h},   A = row-softmax(S),   O = V Aᵀ ∈ ℝ^{T×d_h}
/// (Q_n, K_n: the first n rows). Dimension i of a token's output mixes the token's own value features with the
/// weights A(i, :), which compare feature i of the queries with every feature of the keys *over the valid
/// tokens*. Padded tokens therefore change no valid output: they are left out of the sums that make S, and an
/// output row depends only on its own value row. The scale 1/√n is the dot product's length (n tokens), as
/// 1/√d_h is for token-wise attention. Cost per block: 2·n·d_h² (S) + 2·T·d_h² (O), i.e. O(T·d²/h) per
/// sequence against token-wise attention's O(T²·d) — linear in the sequence length.
///
/// Like token-wise attention the probabilities are stored transposed, Aᵀ (column i is row i of A), so the
/// softmax runs over contiguous columns. Self-attention only (T_q = T_k) and no causal mask: a query token's
/// output would still see the later tokens through S.
#include <cmath>

#include "tprod/backend/kernels/dimension_wise_attention.hpp"
#include "tprod/nn/detail/attention_kernels.hpp"

namespace tprod::nn::detail {

inline void check_dimension_wise(const attention_mask& mask, const attention_dims& d, const char* who) {
  TPROD_EXPECTS(!mask.causal, std::string(who) +
                                  ": dimension-wise attention has no causal mask (every output "
                                  "feature mixes statistics over all valid tokens)");
  TPROD_EXPECTS(d.tq == d.tk, std::string(who) + ": dimension-wise attention is self-attention only, got " +
                                  std::to_string(d.tq) + " query and " + std::to_string(d.tk) + " key tokens");
}

/// Valid tokens of sequence b (the key-padding length, or all T).
inline Eigen::Index valid_tokens(const attention_mask& mask, const attention_dims& d, std::size_t b) {
  return Eigen::Index(mask.key_lengths.empty() ? d.tk : mask.key_lengths[b]);
}

/// Tallies (valid_factor·n_b + token_factor·T)·d_h² multiply-adds for every block (mac_counter).
inline void tally_dimension_wise(const attention_mask& mask, const attention_dims& d, std::uint64_t valid_factor,
                                 std::uint64_t token_factor) {
  std::uint64_t per_head = 0;
  for (std::size_t b = 0; b < d.batch; ++b)
    per_head += valid_factor * std::uint64_t(valid_tokens(mask, d, b)) + token_factor * d.tq;
  tally_macs(per_head * d.p * d.heads * d.dh * d.dh);
}

/// probs (d_h×d_h×blocks) = Aᵀ, out = V·Aᵀ per block, by the backend's tasks in memory space S.
template <class T, class S>
void dimension_wise_forward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                            head_blocks<const T> v, const attention_mask& mask, tensor3<T, dextents3, S>& probs,
                            head_blocks<T> out) {
  check_dimension_wise(mask, d, "nn::attention_forward");
  ensure_shape(probs, d.dh, d.dh, d.blocks());
  tally_dimension_wise(mask, d, 1, 1);  // S over the n valid tokens, O over all T
  dimension_wise_forward_blocks(tprod::detail::system_of<S>(), d, q.layout(), k.layout(), v.layout(),
                                masking_of(mask), probs.dynamic_view(), out.layout());
}

/// dQ, dK, dV (assigned) from dO. Padded rows of dQ and dK are zero (those rows do not enter S).
template <class T, class S>
void dimension_wise_backward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                             head_blocks<const T> v, const attention_mask& mask, const tensor3<T, dextents3, S>& probs,
                             head_blocks<const T> d_out, head_blocks<T> dq, head_blocks<T> dk, head_blocks<T> dv) {
  tally_dimension_wise(mask, d, 2, 2);  // dV, dAᵀ over all T; dQ, dK over the n valid tokens
  dimension_wise_backward_blocks(tprod::detail::system_of<S>(), d, q.layout(), k.layout(), v.layout(),
                                 masking_of(mask), probs.dynamic_view(), d_out.layout(), dq.layout(), dk.layout(),
                                 dv.layout());
}

}  // namespace tprod::nn::detail
