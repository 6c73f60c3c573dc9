// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file multilinear_encoder.hpp
/// @brief Paper 003's multi-linear attention put into a trained encoder: each layer's multi-head attention replaced
/// by multi-linear attention (multilinear_attention.hpp) whose factor projections start from the trained ones, the
/// rest of the layer (FFN, LayerNorms) kept. This is how the Tensorized Transformer's attention meets a pre-trained
/// model such as a BERT read from a checkpoint: the embeddings, FFNs and norms carry their training across, and the
/// new attention is fine-tuned with them.
///
/// Starting point. The trained layer computes [Q | K | V] = X·[W_q | W_k | W_v] + [b_q | b_k | b_v] (the fused
/// w_qkv's three column blocks, attention.hpp) and the multi-linear layer Q′, K′, V′ = X·W′ + b′ of rank R. The
/// multi-linear W′_q, W′_k, W′_v start as the first R columns of W_q, W_k, W_v (with R = d, exactly those
/// projections; the first R columns are the first R/d_h heads' whole), their biases likewise, and b_O as the trained
/// output bias. The cores and the N²×d output projection W_O have no counterpart in multi-head attention (SplitConcat
/// mixes the tokens' pairs, not the heads), so they are drawn as make_multilinear_attention_params draws them.
/// Columns are copied in the transform domain, which is the same as copying them in the spatial domain because the
/// transform acts along the tubes only.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tprod/nn/model/encoder_stack.hpp"
#include "tprod/nn/multilinear_attention.hpp"

namespace tprod::nn {

/// @brief Multi-linear attention for sequences of `length` tokens, of rank R and `terms` block terms, started from
/// trained multi-head attention a (see the file comment): the projections' first R columns and the output bias
/// copied, the cores and W_O drawn from seed.
/// @throws shape_error when R is zero or larger than a's width, or for make_multilinear_attention_params' reasons.
template <std::floating_point T, real_transform<T> L>
multilinear_attention_params<T, L> multilinear_attention_from(const attention_params<T, L>& a, std::size_t length,
                                                              std::size_t rank, std::size_t terms, std::uint64_t seed,
                                                              multilinear_core core = multilinear_core::superdiagonal) {
  const std::size_t d = a.width(), p = a.slices();
  TPROD_EXPECTS(rank > 0 && rank <= d, "nn::multilinear_attention_from: rank " + std::to_string(rank) +
                                           " must be between 1 and the attention's width " + std::to_string(d));
  auto ml = make_multilinear_attention_params<T>(d, length, rank, terms, p, a.transform(), seed, core, a.has_bias());
  // W′ (and b′): column block·R + c ← column block·d + c of every slice, for the blocks q, k, v and c < R.
  const auto copy_columns = [&](const auto& from, auto& to) {
    for (std::size_t k = 0; k < from.data().p(); ++k)  // the stored slices (p, or a packed form of them)
      for (std::size_t block = 0; block < 3; ++block)
        for (std::size_t c = 0; c < rank; ++c)
          for (std::size_t i = 0; i < from.m(); ++i) to.data()(i, block * rank + c, k) = from.data()(i, block * d + c, k);
  };
  copy_columns(a.w_qkv, ml.w_qkv);
  copy_columns(a.b_qkv, ml.b_qkv);
  ml.b_o = a.b_o;
  return ml;
}

/// @brief The stack s (moved from) with every layer's attention replaced by multilinear_attention_from(its
/// attention, length, rank, terms, seed + 1000·layer, core); the FFNs, LayerNorms, configs, name and causal flag
/// kept.
/// @throws shape_error as multilinear_attention_from.
template <std::floating_point T, real_transform<T> L>
encoder_stack<T, L, multilinear_attention_params<T, L>> with_multilinear_attention(
    encoder_stack<T, L>&& s, std::size_t length, std::size_t rank, std::size_t terms, std::uint64_t seed,
    multilinear_core core = multilinear_core::superdiagonal) {
  std::vector<encoder_params<T, L, multilinear_attention_params<T, L>>> layers;
  for (std::size_t l = 0; l < s.size(); ++l) {
    auto& layer = s[l];
    layers.push_back({layer.config, multilinear_attention_from(layer.attn, length, rank, terms, seed + 1000 * l, core),
                      std::move(layer.ffn), std::move(layer.ln1), std::move(layer.ln2)});
  }
  encoder_stack<T, L, multilinear_attention_params<T, L>> out(std::move(layers), s.name);
  out.causal = s.causal;
  return out;
}

}  // namespace tprod::nn
