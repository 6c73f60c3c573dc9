// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file param_count.hpp
/// @brief Parameter counts of layer configurations from their formulas, and of actual parameter sets by
/// enumeration (the two are checked against each other and against the papers' figures in the tests).
///
/// Per encoder layer of width d_s, p slices, hidden width d_ff,s (biases optional):
///   attention  4·d_s²·p (+ 4·d_s·p biases),  FFN 2·d_s·d_ff,s·p (+ (d_ff,s + d_s)·p),  two norms 4·d_s·p.
/// Paper 000 (d = 768, H = 8, d_ff = 3072, 4 layers): 28,351,488 for the standard encoder, 7,117,824 for p = 4.
/// Paper 001, no biases, r_ff = d_ff,s/d_s: eq. 6.7 (4 + 2r_ff)·d²·C + 4dC per TCP-ViT layer (d = d_s, C = p),
/// eq. 6.8 (4 + 2r_ff)·d²·C² + 4dC for the standard layer of width dC.
#include <cstddef>

#include "tprod/nn/layer_config.hpp"
#include "tprod/nn/nn_concepts.hpp"

namespace tprod::nn {

struct param_breakdown {
  std::size_t attention = 0, ffn = 0, norm = 0;
  std::size_t total() const { return attention + ffn + norm; }
};

/// @brief One attention block: Ŵ_QKV, Ŵ_O and their biases.
inline std::size_t attention_param_count(const layer_config& c) {
  return 4 * c.width * c.width * c.slices + (c.bias ? 4 * c.width * c.slices : 0);
}
/// @brief One FFN: Ŵ₁, Ŵ₂ and their biases.
inline std::size_t ffn_param_count(const layer_config& c) {
  return 2 * c.width * c.hidden * c.slices + (c.bias ? (c.hidden + c.width) * c.slices : 0);
}
/// @brief One LayerNorm: Γ and ℬ.
inline std::size_t norm_param_count(const layer_config& c) { return 2 * c.width * c.slices; }

/// @brief An encoder layer: attention, FFN, two LayerNorms.
inline param_breakdown encoder_layer_param_count(const layer_config& c) {
  return {attention_param_count(c), ffn_param_count(c), 2 * norm_param_count(c)};
}
/// @brief A decoder layer: self- and cross-attention, FFN, three LayerNorms.
inline param_breakdown decoder_layer_param_count(const layer_config& c) {
  return {2 * attention_param_count(c), ffn_param_count(c), 3 * norm_param_count(c)};
}
/// @brief A stack of `layers` encoder layers.
inline std::size_t encoder_param_count(const layer_config& c, std::size_t layers) {
  return layers * encoder_layer_param_count(c).total();
}

/// @brief Paper 001 eq. 6.7: (4 + 2r_ff)·d²·C + 4dC (TCP-ViT layer, no biases).
inline std::size_t tcp_vit_layer_param_formula(std::size_t d, std::size_t channels, std::size_t r_ff) {
  return (4 + 2 * r_ff) * d * d * channels + 4 * d * channels;
}
/// @brief Paper 001 eq. 6.8: (4 + 2r_ff)·d²·C² + 4dC (standard ViT layer of width dC, no biases).
inline std::size_t std_vit_layer_param_formula(std::size_t d, std::size_t channels, std::size_t r_ff) {
  return (4 + 2 * r_ff) * d * d * channels * channels + 4 * d * channels;
}

/// @brief The number of trainable scalars of a parameter set (by enumerating its tensors).
template <std::floating_point T, parameter_set<T> P>
std::size_t count_parameters(P& params) {
  std::size_t n = 0;
  params.for_each([&](std::string_view, tensor3<T>& t) { n += t.size(); });
  return n;
}

}  // namespace tprod::nn
