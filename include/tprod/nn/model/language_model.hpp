// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file language_model.hpp
/// @brief A decoder-only language model: paper 000's decoder layer (§5.9) without its cross-attention, which is
/// its encoder layer under the causal mask, stacked as
///   tokens → embedding (Ten_p) → sinusoidal positions (α per slice) → dropout → N causal layers
///          → Mat_p of every position → linear head to V logits,
/// and trained by next-token prediction: position t of a sequence with n valid tokens is labelled with token t+1
/// for t < n − 1, and with ignore_label otherwise (the last token and the padding). With p = 1 and the identity
/// transform this is the standard (GPT-style, post-norm) decoder; with p = 4 under the DCT, the L-decoder.
///
/// Its logits are (B·T)×V×1, one row per position, so classification_step and nn::fit train it as they train a
/// classifier, with every loss and accuracy a mean over the labelled positions (the cross-entropy per token;
/// exp of it is the perplexity). generate() continues a prompt by sampling one token at a time.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tprod/nn/layer_config.hpp"
#include "tprod/nn/loss.hpp"
#include "tprod/nn/model/dropout.hpp"
#include "tprod/nn/model/encoder_stack.hpp"
#include "tprod/nn/model/input_layers.hpp"
#include "tprod/nn/model/linear_layer.hpp"
#include "tprod/nn/model/pooling_layer.hpp"
#include "tprod/nn/model/sequential.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace tprod::nn {

/// @brief A language model of paper 000's layer (paper000_config) at width d = p·d_s with H heads and FFN width
/// d_ff, folded into p slices.
struct language_model_config {
  std::size_t vocabulary = 10000;  ///< V, the logits per position (ids 0 … V−1)
  std::size_t width = 128;         ///< d = p·d_s
  std::size_t heads = 4;           ///< H (p must divide it)
  std::size_t hidden = 512;        ///< d_ff
  std::size_t layers = 2;
  std::size_t slices = 1;  ///< p
  activation act = activation::gelu;
  alpha_strategy positions = alpha_strategy::standard;
  double dropout = 0.1;
  double embedding_scale = 0.5;  ///< the table starts uniform in ±scale
  std::uint64_t seed = 1;
};

/// A is the layers' attention: the L-multi-head one by default, or multi-linear attention (its causal form); the
/// dimension-wise attention has no causal mask.
template <std::floating_point T, real_transform<T> L, class A = attention_params<T, L>,
          memory_space S = space_of_part_t<A>>
using language_model =
    sequential<T, token_embedding<T, S>, positional_layer<T, sinusoidal_positional_params<T, S>>, dropout<T, S>,
               encoder_stack<T, L, A>, flatten_layer<T, S>, linear_layer<T, identity_transform, S>>;

/// @brief The language model of config c around given layers (e.g. with multi-linear attention, built by
/// make_encoder_params_with); c.layers, c.heads and c.hidden are ignored.
/// @throws shape_error when a layer's width or slices differ from c's, no layer, or V < 2.
template <std::floating_point T, real_transform<T> L, class A, memory_space To = space_of_part_t<A>>
auto make_language_model(const language_model_config& c, std::vector<encoder_params<T, L, A>> layers, To = {}) {
  detail::static_check_trained_in_space<T, To, L>();  // first, so that this is the first error a compiler shows
  TPROD_EXPECTS(c.vocabulary >= 2 && !layers.empty(),
                "nn::make_language_model: need a vocabulary of at least 2 tokens and at least 1 layer (vocabulary " +
                    std::to_string(c.vocabulary) + ", layers " + std::to_string(layers.size()) + ")");
  TPROD_EXPECTS(layers[0].config.width * layers[0].config.slices == c.width && layers[0].config.slices == c.slices,
                "nn::make_language_model: the layers do not have the config's width and slices");
  using detail::to_space;
  auto moved = detail::all_to_space<To>(std::move(layers));
  using AT = typename decltype(moved)::value_type::attention_type;
  encoder_stack<T, L, AT> stack(std::move(moved), "decoder");
  stack.causal = true;
  return language_model<T, L, AT>(
      token_embedding<T, To>(
          to_space<To>(make_embedding_params<T>(c.vocabulary, c.width, c.seed, T(c.embedding_scale))), c.slices),
      positional_layer<T, sinusoidal_positional_params<T, To>>(
          to_space<To>(make_sinusoidal_positional<T>(c.slices, c.positions))),
      dropout<T, To>(c.dropout, c.seed + 7), std::move(stack), flatten_layer<T, To>{},
      linear_layer<T, identity_transform, To>(
          to_space<To>(make_linear_params<T>(c.width, c.vocabulary, 1, identity_transform{}, c.seed + 3)), "head"));
}

/// @brief The language model of config c: c.layers of paper 000's layer, seeded seed + 100, + 1100, ….
/// @throws shape_error when p does not divide d, H and d_ff, a size is zero, or V < 2.
template <std::floating_point T, real_transform<T> L, memory_space To = host_space>
auto make_language_model(const language_model_config& c, const L& l, To to = {}) {
  detail::static_check_trained_in_space<T, To, L>();  // first, so that this is the first error a compiler shows
  TPROD_EXPECTS(c.layers > 0, "nn::make_language_model: need at least 1 layer (layers 0)");
  const layer_config cfg = paper000_config(c.width, c.heads, c.hidden, c.slices, c.act);
  std::vector<encoder_params<T, L>> layers;
  for (std::size_t i = 0; i < c.layers; ++i) layers.push_back(make_encoder_params<T>(cfg, l, c.seed + 100 + 1000 * i));
  return make_language_model<T>(c, std::move(layers), to);
}

/// @brief The next-token labels of B sequences of T token ids (row b·T + t) with valid lengths n_b (empty: all
/// T): label b·T + t is token b·T + t + 1 when t + 1 < n_b, else ignore_label.
/// @throws shape_error when the tokens are not B·T or a length exceeds T.
inline std::vector<std::size_t> next_token_labels(const std::vector<std::size_t>& tokens, std::size_t length,
                                                  const std::vector<std::size_t>& lengths) {
  TPROD_EXPECTS(
      length > 0 && tokens.size() % length == 0 && (lengths.empty() || lengths.size() * length == tokens.size()),
      "nn::next_token_labels: " + std::to_string(tokens.size()) + " tokens are not " + std::to_string(lengths.size()) +
          " sequences of " + std::to_string(length));
  std::vector<std::size_t> labels(tokens.size(), ignore_label);
  for (std::size_t b = 0; b < tokens.size() / length; ++b) {
    const std::size_t n = lengths.empty() ? length : lengths[b];
    TPROD_EXPECTS(n <= length, "nn::next_token_labels: sequence " + std::to_string(b) + " has length " +
                                   std::to_string(n) + " > " + std::to_string(length));
    for (std::size_t t = 0; t + 1 < n; ++t) labels[b * length + t] = tokens[b * length + t + 1];
  }
  return labels;
}

/// @brief How generate() picks each token: among the top_k most likely, with probabilities softmax(z/temperature),
/// never one of `excluded` (padding, say), from a generator seeded by `seed`.
struct generation_options {
  std::size_t tokens = 20;  ///< how many to generate
  std::size_t top_k = 10;   ///< 1: greedy
  double temperature = 1.0;
  std::uint64_t seed = 1;
  std::vector<std::size_t> excluded;
  std::size_t pad = 0;  ///< the id that fills the window after the tokens (masked: it changes no logit used)
};

/// @brief The prompt continued by o.tokens tokens. Each step runs the model (evaluation mode) on a window of
/// `context` positions holding the last n ≤ context tokens, padded (valid length n, so that models of a fixed
/// length such as multi-linear attention's N = context take it too), and samples from the logits of position
/// n − 1, which the causal mask keeps independent of the padding.
/// @throws argument_error for an empty prompt, a zero context or top_k, a temperature ≤ 0, or when every token is
///         excluded; shape_error when the model's logits are not one row per token.
template <std::floating_point T, layer<T> M>
std::vector<std::size_t> generate(M& model, std::vector<std::size_t> prompt, std::size_t context,
                                  const generation_options& o) {
  if (prompt.empty() || context == 0 || o.top_k == 0 || !(o.temperature > 0))
    throw argument_error("nn::generate: need a prompt (" + std::to_string(prompt.size()) + " tokens), context (" +
                         std::to_string(context) + ") and top_k (" + std::to_string(o.top_k) +
                         ") of at least 1 and a positive temperature (" + std::to_string(o.temperature) + ")");
  std::mt19937_64 rng(o.seed);
  const layer_tensor<M, T> none;
  for (std::size_t k = 0; k < o.tokens; ++k) {
    const std::size_t n = std::min(context, prompt.size());
    std::vector<std::size_t> window(prompt.end() - std::ptrdiff_t(n), prompt.end());
    window.resize(context, o.pad);
    const batch b(1, std::move(window), {n}, phase::eval);
    const auto& logits = detail::on_host(model.forward(none, b));  // a host copy where the model lives on the device
    TPROD_EXPECTS(logits.m() == context && logits.p() == 1, "nn::generate: the model gave logits " + logits.shape() +
                                                                " for " + std::to_string(context) +
                                                                " positions (need one row per position, one slice)");
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t v = 0; v < logits.n(); ++v)
      if (std::find(o.excluded.begin(), o.excluded.end(), v) == o.excluded.end())
        ranked.emplace_back(double(logits(n - 1, v, 0)) / o.temperature, v);
    if (ranked.empty()) throw argument_error("nn::generate: every token of the vocabulary is excluded");
    const std::size_t k_best = std::min(o.top_k, ranked.size());
    std::partial_sort(
        ranked.begin(), ranked.begin() + std::ptrdiff_t(k_best), ranked.end(),
        [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    std::vector<double> weights(k_best);
    for (std::size_t i = 0; i < k_best; ++i) weights[i] = std::exp(ranked[i].first - ranked[0].first);
    prompt.push_back(ranked[std::discrete_distribution<std::size_t>(weights.begin(), weights.end())(rng)].second);
  }
  return prompt;
}

}  // namespace tprod::nn
