// SPDX-License-Identifier: Apache-2.0
#pragma once
// The small models the nn, io and device tests share: a text classifier, its batch, a language model and a vision
// transformer, each a few hundred parameters, so that a finite-difference check or a step on two backends is quick.
#include <cstdint>

#include "tprod/nn/layer_config.hpp"
#include "tprod/nn/model/classifier.hpp"
#include "tprod/nn/model/language_model.hpp"

namespace tprod::test {

/// A small text classifier: V = 11, d = 8 folded into p = 2 slices, H = 2 heads, d_ff = 8, two layers, learnable α
/// (so every layer kind has a trainable tensor), no dropout.
inline nn::text_classifier_config small_text_config(std::uint64_t seed = 3) {
  nn::text_classifier_config c;
  c.vocabulary = 11;
  c.classes = 3;
  c.width = 8;
  c.heads = 2;
  c.hidden = 8;
  c.layers = 2;
  c.slices = 2;
  c.positions = nn::alpha_strategy::exponential;
  c.learnable_positions = true;
  c.dropout = 0;
  c.seed = seed;
  return c;
}

/// B = 3 sequences of T = 5 tokens (ids below 11), the first padded after 5, the others after 3 and 4 tokens.
inline nn::batch small_text_batch(nn::phase mode = nn::phase::train) {
  nn::batch b{3, {}, {5, 3, 4}, mode};
  for (std::size_t i = 0; i < 15; ++i) b.tokens.push_back((i * 7 + 3) % 11);
  return b;
}

/// A small language model: V = 11, d = 8 in p slices, H = 2, d_ff = 8, two layers, no dropout.
inline nn::language_model_config small_lm_config(std::size_t p) {
  nn::language_model_config c;
  c.vocabulary = 11;
  c.width = 8;
  c.heads = 2;
  c.hidden = 8;
  c.layers = 2;
  c.slices = p;
  c.positions = nn::alpha_strategy::exponential;
  c.dropout = 0;
  c.seed = 5;
  return c;
}

/// A small vision transformer with paper 001's layer over 3 slices: 4 patches of 5 values, 3 classes, two layers
/// (d_s = 4, 2 heads, r_ff = 2), no dropout.
inline nn::vit_config small_vit_config() {
  nn::vit_config c;
  c.patches = 4;
  c.patch_features = 5;
  c.classes = 3;
  c.layer = nn::paper001_config(4, 3, 2, 2);
  c.layers = 2;
  c.dropout = 0;
  return c;
}

}  // namespace tprod::test
