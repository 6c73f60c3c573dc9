// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention_kinds.hpp
/// @brief What a user chooses about an attention call: its variant (how the transform-domain scores are used) and
/// its masks (causal, key padding). The layers (attention.hpp, encoder.hpp, decoder.hpp) and the layer configs
/// (layer_config.hpp) take these.
#include <cstddef>
#include <vector>

namespace tprod::nn {

/// @brief Which attention the transform-domain scores feed.
enum class attention_variant {
  /// Paper 000, Alg. 2 (L-MHA): slice k's probabilities softmax(Q̂_k K̂_kᵀ/√d_h) weight V̂_k directly.
  spectral,
  /// Paper 001, Def. 5.2–5.3 read literally: 𝒜 = t-Softmax(𝒮) is the original-domain tensor whose slice k is
  /// softmax(Ŝ_k), and t-Attention = 𝒜 *_L 𝒱, so slice k uses L(𝒜)_k = Σ_l Z_kl·softmax(Ŝ_l) to weight V̂_k.
  t_softmax,
  /// TensorCoder's dimension-wise attention (paper 003): a d_h×d_h softmax(Q̂ᵀK̂/√n) over the features of each
  /// head instead of a T×T one over the tokens (dimension_wise_kernels.hpp); self-attention, no causal mask.
  dimension_wise
};

/// @brief Masks of an attention call: causal (query t sees keys u ≤ t) and key padding (sequence b has
/// key_lengths[b] valid keys, the rest are padding). Both keep a prefix of the keys of every query.
struct attention_mask {
  bool causal = false;
  std::vector<std::size_t> key_lengths;  ///< empty: every key is valid; else one length per sequence
};

}  // namespace tprod::nn
