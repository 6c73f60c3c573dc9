// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file classifier.hpp
/// @brief The sequence classifier of papers 000 and 001 as one model type,
///   input → positional → dropout → N encoder layers → pool → flatten → linear head,
/// in two builds: a text classifier (token embedding, sinusoidal positions with paper 000's α strategies, mean
/// pooling over the valid tokens) and a vision transformer (patch projection, class token, learned positions,
/// class-token pooling); paper 002's classifier around any one attention layer; and the training/evaluation step
/// shared by all.
///
/// The encoder runs under the L-product with transform L over p slices; p = 1 with the identity transform is
/// the standard Transformer. The head is a p = 1 linear layer on Mat_p of the pooled tensor (all d = p·d_s
/// features), so the models differ only in their encoder.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tprod/nn/layer_config.hpp"
#include "tprod/nn/loss.hpp"
#include "tprod/nn/model/activation_layer.hpp"
#include "tprod/nn/model/dropout.hpp"
#include "tprod/nn/model/encoder_stack.hpp"
#include "tprod/nn/model/input_layers.hpp"
#include "tprod/nn/model/linear_layer.hpp"
#include "tprod/nn/model/norm_layer.hpp"
#include "tprod/nn/model/pooling_layer.hpp"
#include "tprod/nn/model/sequential.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace tprod::nn {

/// @brief N encoder layers of one config, seeded seed, seed + 1000, … (independent draws per layer).
template <std::floating_point T, real_transform<T> L>
std::vector<encoder_params<T, L>> make_encoder_layers(const layer_config& cfg, std::size_t layers, const L& l,
                                                      std::uint64_t seed) {
  std::vector<encoder_params<T, L>> v;
  for (std::size_t i = 0; i < layers; ++i) v.push_back(make_encoder_params<T>(cfg, l, seed + 1000 * i));
  return v;
}

/// @brief A text classifier: paper 000's layer (paper000_config) at model width d with H heads and FFN width
/// d_ff, folded into p slices.
struct text_classifier_config {
  std::size_t vocabulary = 20000;
  std::size_t classes = 2;
  std::size_t width = 128;   ///< d = p·d_s
  std::size_t heads = 4;     ///< H (p must divide it: h = H/p heads per slice)
  std::size_t hidden = 256;  ///< d_ff
  std::size_t layers = 2;
  std::size_t slices = 1;  ///< p
  activation act = activation::gelu;
  alpha_strategy positions = alpha_strategy::standard;
  bool learnable_positions = false;  ///< paper 000's "learnable α"
  double dropout = 0.1;
  double embedding_scale = 0.5;  ///< the table starts uniform in ±scale
  std::uint64_t seed = 1;
};

/// @brief The config as checkpoint metadata strings (keys: vocabulary, classes, width, heads, hidden, layers,
/// slices, activation, positions, learnable_positions, dropout, embedding_scale, seed), so that a program can
/// rebuild the model a checkpoint belongs to.
inline std::map<std::string, std::string> to_metadata(const text_classifier_config& c) {
  return {{"vocabulary", std::to_string(c.vocabulary)},
          {"classes", std::to_string(c.classes)},
          {"width", std::to_string(c.width)},
          {"heads", std::to_string(c.heads)},
          {"hidden", std::to_string(c.hidden)},
          {"layers", std::to_string(c.layers)},
          {"slices", std::to_string(c.slices)},
          {"activation", std::string(name(c.act))},
          {"positions", std::string(name(c.positions))},
          {"learnable_positions", c.learnable_positions ? "1" : "0"},
          {"dropout", number_text(c.dropout)},
          {"embedding_scale", number_text(c.embedding_scale)},
          {"seed", std::to_string(c.seed)}};
}

/// @brief The config written by to_metadata. @throws shape_error naming a missing or malformed key.
inline text_classifier_config text_classifier_config_from(const std::map<std::string, std::string>& m) {
  const auto get = [&](const char* key) -> const std::string& {
    const auto it = m.find(key);
    TPROD_EXPECTS(it != m.end(), std::string("nn::text_classifier_config_from: no '") + key + "' in the metadata");
    return it->second;
  };
  const auto number = [&](const char* key) {
    const std::string& v = get(key);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    TPROD_EXPECTS(end != v.c_str() && *end == '\0',
                  std::string("nn::text_classifier_config_from: '") + key + "' is '" + v + "', not a number");
    return x;
  };
  const auto count = [&](const char* key) {
    const double x = number(key);
    TPROD_EXPECTS(x >= 0 && x == std::floor(x),
                  std::string("nn::text_classifier_config_from: '") + key + "' must be a non-negative integer");
    return std::size_t(x);
  };
  text_classifier_config c;
  c.vocabulary = count("vocabulary");
  c.classes = count("classes");
  c.width = count("width");
  c.heads = count("heads");
  c.hidden = count("hidden");
  c.layers = count("layers");
  c.slices = count("slices");
  const std::string& act = get("activation");
  bool known = false;
  for (auto a : {activation::relu, activation::gelu, activation::gelu_tanh})
    if (name(a) == act) c.act = a, known = true;
  TPROD_EXPECTS(known, "nn::text_classifier_config_from: unknown activation '" + act + "'");
  c.positions = alpha_strategy_from(get("positions"));
  c.learnable_positions = get("learnable_positions") == "1";
  c.dropout = number("dropout");
  c.embedding_scale = number("embedding_scale");
  c.seed = std::uint64_t(count("seed"));
  return c;
}

/// A is the encoder layers' attention (encoder.hpp), the standard one on the host by default; the model lives in
/// A's memory space (attention_params<T, L, device_space>: on the GPU).
template <std::floating_point T, real_transform<T> L, class A = attention_params<T, L>,
          memory_space S = space_of_part_t<A>>
using text_classifier = sequential<T, token_embedding<T, S>, positional_layer<T, sinusoidal_positional_params<T, S>>,
                                   dropout<T, S>, encoder_stack<T, L, A>, pooling_layer<T, S>, flatten_layer<T, S>,
                                   linear_layer<T, identity_transform, S>>;

/// @brief The text classifier of config c around given encoder layers (e.g. with another attention, built by
/// make_encoder_params_with); c.layers is ignored. Built in memory space To: the parameters are drawn on the host
/// (so a model has the same initial values in either space) and copied there once.
/// @throws shape_error when a layer's width or slices differ from c's, fewer than 2 classes or no layer.
template <std::floating_point T, real_transform<T> L, class A, memory_space To = space_of_part_t<A>>
auto make_text_classifier(const text_classifier_config& c, std::vector<encoder_params<T, L, A>> layers, To = {}) {
  detail::static_check_trained_in_space<T, To, L>();  // first, so that this is the first error a compiler shows
  TPROD_EXPECTS(c.classes >= 2 && !layers.empty(), "nn::make_text_classifier: need at least 2 classes and 1 layer");
  TPROD_EXPECTS(layers[0].config.width * layers[0].config.slices == c.width && layers[0].config.slices == c.slices,
                "nn::make_text_classifier: the encoder layers do not have the config's width and slices");
  auto encoder = detail::all_to_space<To>(std::move(layers));
  using moved_attention = typename decltype(encoder)::value_type::attention_type;
  return text_classifier<T, L, moved_attention>(
      token_embedding<T, To>(
          detail::to_space<To>(make_embedding_params<T>(c.vocabulary, c.width, c.seed, T(c.embedding_scale))),
          c.slices),
      positional_layer<T, sinusoidal_positional_params<T, To>>(
          detail::to_space<To>(make_sinusoidal_positional<T>(c.slices, c.positions, c.learnable_positions))),
      dropout<T, To>(c.dropout, c.seed + 7), encoder_stack<T, L, moved_attention>(std::move(encoder)),
      pooling_layer<T, To>(pooling::mean), flatten_layer<T, To>{},
      linear_layer<T, identity_transform, To>(
          detail::to_space<To>(make_linear_params<T>(c.width, c.classes, 1, identity_transform{}, c.seed + 3)),
          "head"));
}

/// @brief The text classifier of config c under L, in memory space To (the host by default; device_space{}: the
/// GPU, with tprod/cuda.hpp).
/// @throws shape_error when p does not divide d, H and d_ff, or a size is zero.
template <std::floating_point T, real_transform<T> L, memory_space To = host_space>
auto make_text_classifier(const text_classifier_config& c, const L& l, To to = {}) {
  detail::static_check_trained_in_space<T, To, L>();  // first, so that this is the first error a compiler shows
  const layer_config cfg = paper000_config(c.width, c.heads, c.hidden, c.slices, c.act);
  TPROD_EXPECTS(c.layers > 0, "nn::make_text_classifier: need at least 1 layer");
  return make_text_classifier<T>(c, make_encoder_layers<T>(cfg, c.layers, l, c.seed + 100), to);
}

/// @brief A vision transformer on patches: every image is T patches of `patch_features` values per slice
/// (input (B·T)×patch_features×p), projected to d_s per slice by an L-linear layer. With the paper001_config
/// layer (pre-norm, transform-domain LayerNorm, t-softmax, no biases) and p = C channels this is TCP-ViT
/// (paper 001 §7); with p = 1 and the identity transform the standard ViT. As pre-norm encoders do, the class
/// token is normalized once more (the layer's kind of LayerNorm) before the head.
struct vit_config {
  std::size_t patches = 49;         ///< T, patches per image
  std::size_t patch_features = 16;  ///< values of one patch in one slice
  std::size_t classes = 10;
  layer_config layer;  ///< e.g. paper001_config(d_s, C, heads, r_ff)
  std::size_t layers = 2;
  double dropout = 0.1;
  std::uint64_t seed = 1;
};

/// The model lives in memory space S (the host by default).
template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
using vit_classifier =
    sequential<T, linear_layer<T, L, S>, class_token_layer<T, S>,
               positional_layer<T, learned_positional_params<T, S>>, dropout<T, S>,
               encoder_stack<T, L, attention_params<T, L, S>>, pooling_layer<T, S>, norm_layer<T, L, S>,
               flatten_layer<T, S>, linear_layer<T, identity_transform, S>>;

/// @brief The vision transformer of config c under L, in memory space To: drawn on the host (the same initial
/// values in either space) and copied there once.
template <std::floating_point T, real_transform<T> L, memory_space To = host_space>
vit_classifier<T, L, To> make_vit_classifier(const vit_config& c, const L& l, To = {}) {
  detail::static_check_trained_in_space<T, To, L>();  // first, so that this is the first error a compiler shows
  c.layer.validate();
  const std::size_t ds = c.layer.width, p = c.layer.slices;
  TPROD_EXPECTS(c.patches > 0 && c.patch_features > 0 && c.classes >= 2 && c.layers > 0,
                "nn::make_vit_classifier: need patches, patch features, at least 2 classes and 1 layer");
  using detail::to_space;
  return vit_classifier<T, L, To>(
      linear_layer<T, L, To>(to_space<To>(make_linear_params<T>(c.patch_features, ds, p, l, c.seed, c.layer.bias)),
                             "patch"),
      class_token_layer<T, To>(to_space<To>(make_class_token<T>(ds, p, c.seed + 1))),
      positional_layer<T, learned_positional_params<T, To>>(
          to_space<To>(make_learned_positional<T>(c.patches + 1, ds, p, c.seed + 2))),
      dropout<T, To>(c.dropout, c.seed + 7), encoder_stack<T, L, attention_params<T, L, To>>(
          detail::all_to_space<To>(make_encoder_layers<T>(c.layer, c.layers, l, c.seed + 100))),
      pooling_layer<T, To>(pooling::class_token),
      norm_layer<T, L, To>(to_space<To>(make_layer_norm_params<T>(ds, p, c.layer.norm, c.layer.eps)), l),
      flatten_layer<T, To>{},
      linear_layer<T, identity_transform, To>(
          to_space<To>(make_linear_params<T>(ds * p, c.classes, 1, identity_transform{}, c.seed + 3)), "head"));
}

/// @brief Paper 002's sequence classifier (§6) around one attention layer of width d, the same for every attention
/// of a comparison: token embedding (d) → sinusoidal positions → the attention → mean pooling over the valid tokens
/// → dropout → a hidden ReLU layer → dropout → a linear softmax layer.
struct attention_classifier_config {
  std::size_t vocabulary = 0;
  std::size_t width = 0;    ///< d, the attention's input and output width
  std::size_t hidden = 20;  ///< units of the ReLU layer (paper 002: 20)
  std::size_t classes = 2;
  double dropout = 0.1;
  double embedding_scale = 0.5;
  std::uint64_t seed = 1;
};

/// The model around attention layer M, in M's memory space.
template <std::floating_point T, layer<T> M, memory_space S = layer_space_t<M>>
using attention_classifier =
    sequential<T, token_embedding<T, S>, positional_layer<T, sinusoidal_positional_params<T, S>>, M,
               pooling_layer<T, S>, dropout<T, S>, flatten_layer<T, S>, linear_layer<T, identity_transform, S>,
               activation_layer<T, S>, dropout<T, S>, linear_layer<T, identity_transform, S>>;

/// @brief The classifier of config c around `attention` (a layer taking and returning (B·T)×d×1, e.g.
/// attention_layer, spectral_attention_layer or additive_attention_layer), in the attention's memory space: the
/// other parameters are drawn on the host (the same initial values in either space) and copied there once.
/// @throws shape_error when a size is zero or there are fewer than 2 classes.
template <std::floating_point T, layer<T> M>
attention_classifier<T, M> make_attention_classifier(M attention, const attention_classifier_config& c) {
  using S = layer_space_t<M>;
  using detail::to_space;
  using linear = linear_layer<T, identity_transform, S>;
  TPROD_EXPECTS(c.vocabulary > 0 && c.width > 0 && c.hidden > 0 && c.classes >= 2,
                "nn::make_attention_classifier: need a vocabulary, a width, hidden units and at least 2 classes");
  return attention_classifier<T, M>(
      token_embedding<T, S>(to_space<S>(make_embedding_params<T>(c.vocabulary, c.width, c.seed, T(c.embedding_scale))),
                            1),
      positional_layer<T, sinusoidal_positional_params<T, S>>(
          to_space<S>(make_sinusoidal_positional<T>(1, alpha_strategy::standard))),
      std::move(attention), pooling_layer<T, S>(pooling::mean), dropout<T, S>(c.dropout, c.seed + 7),
      flatten_layer<T, S>{},
      linear(to_space<S>(make_linear_params<T>(c.width, c.hidden, 1, identity_transform{}, c.seed + 3)), "dense"),
      activation_layer<T, S>(activation::relu, "relu"), dropout<T, S>(c.dropout, c.seed + 8),
      linear(to_space<S>(make_linear_params<T>(c.hidden, c.classes, 1, identity_transform{}, c.seed + 4)), "head"));
}

/// @brief The outcome of one classification step on a batch.
struct step_result {
  double loss = 0;                     ///< mean softmax cross-entropy over the labelled rows
  std::size_t correct = 0;             ///< predictions equal to the label
  std::size_t counted = 0;             ///< labelled rows (not ignore_label): B for a classifier
  std::vector<std::size_t> predicted;  ///< argmax per row
};

/// @brief Forward pass and loss; in the training phase also the backward pass, which adds the gradients of the
/// mean loss into the model's gradient tensors (call zero_grad after each optimizer step). One label per row of
/// the logits: per example for a classifier, per position for a language model (ignore_label where none).
/// @throws numerical_error when the loss is not finite (a diverged model), naming the loss;
///         shape_error when the logits are not B×C×1 for the labels.
template <std::floating_point T, layer<T> M>
step_result classification_step(M& model, const layer_tensor<M, T>& input, const batch& b,
                                 const std::vector<std::size_t>& labels) {
  const layer_tensor<M, T>& logits = model.forward(input, b);
  auto ce = softmax_cross_entropy(logits, labels);
  if (!std::isfinite(double(ce.loss)))
    throw numerical_error("nn::classification_step: the loss is " + number_text(double(ce.loss)) +
                        " (the model diverged: lower the learning rate or clip the gradients)");
  step_result r{double(ce.loss), 0, ce.counted, std::move(ce.predicted)};
  for (std::size_t i = 0; i < labels.size(); ++i) r.correct += r.predicted[i] == labels[i];  // ignored: never equal
  if (b.mode == phase::train) model.backward(ce.d_logits);
  return r;
}

}  // namespace tprod::nn
