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

/// probs (d_h×d_h×blocks) = Aᵀ, out = V·Aᵀ per block.
template <class T>
void dimension_wise_forward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                            head_blocks<const T> v, const attention_mask& mask, tensor3<T>& probs, head_blocks<T> out) {
  check_dimension_wise(mask, d, "nn::attention_forward");
  ensure_shape(probs, d.dh, d.dh, d.blocks());
  tally_dimension_wise(mask, d, 1, 1);  // S over the n valid tokens, O over all T
  const std::size_t hb = d.heads * d.batch;
  tprod::detail::parallel_for(d.blocks(), d.threads(), [&](std::size_t f) {
    const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
    const Eigen::Index n = valid_tokens(mask, d, b);
    const T scale = T(1) / std::sqrt(T(n));
    auto at = prob_block(probs, f);
    at.noalias() = k.at(s, j, b, d.tk, d.dh).topRows(n).transpose() * q.at(s, j, b, d.tq, d.dh).topRows(n);
    for (Eigen::Index i = 0; i < at.cols(); ++i) {
      auto col = at.col(i).array();
      col = ((col - col.maxCoeff()) * scale).exp();
      col *= T(1) / col.sum();
    }
    out.at(s, j, b, d.tq, d.dh).noalias() = v.at(s, j, b, d.tk, d.dh) * at;
  });
}

/// dQ, dK, dV (assigned) from dO; `dp` is workspace (one d_h×d_h slice per thread). Padded rows of dQ and dK
/// are zero (those rows do not enter S).
template <class T>
void dimension_wise_backward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                             head_blocks<const T> v, const attention_mask& mask, const tensor3<T>& probs,
                             head_blocks<const T> d_out, head_blocks<T> dq, head_blocks<T> dk, head_blocks<T> dv,
                             tensor3<T>& dp) {
  const std::size_t hb = d.heads * d.batch, threads = d.threads();
  tally_dimension_wise(mask, d, 2, 2);  // dV, dAᵀ over all T; dQ, dK over the n valid tokens
  ensure_shape(dp, d.dh, d.dh, std::max<std::size_t>(1, threads));
  tprod::detail::parallel_for(d.blocks(), threads, [&](std::size_t f) {
    auto dat = dp.slice(tprod::detail::thread_slot(dp.p()));
    const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
    const Eigen::Index n = valid_tokens(mask, d, b);
    const auto at = prob_block(probs, f);
    const auto dob = d_out.at(s, j, b, d.tq, d.dh);
    const auto vb = v.at(s, j, b, d.tk, d.dh);
    dv.at(s, j, b, d.tk, d.dh).noalias() = dob * at.transpose();  // O = V·Aᵀ
    dat.noalias() = vb.transpose() * dob;                         // dAᵀ
    backend::cpu::softmax_backward<T>(at, dat, T(1) / std::sqrt(T(n)));  // dAᵀ → d(K_nᵀQ_n)
    auto dqb = dq.at(s, j, b, d.tq, d.dh);
    auto dkb = dk.at(s, j, b, d.tk, d.dh);
    dqb.topRows(n).noalias() = k.at(s, j, b, d.tk, d.dh).topRows(n) * dat;
    dkb.topRows(n).noalias() = q.at(s, j, b, d.tq, d.dh).topRows(n) * dat.transpose();
    dqb.bottomRows(dqb.rows() - n).setZero();
    dkb.bottomRows(dkb.rows() - n).setZero();
  });
}

}  // namespace tprod::nn::detail
