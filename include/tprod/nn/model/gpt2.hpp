// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file gpt2.hpp
/// @brief GPT-2 (Radford et al., 2019) built from tprod's layers, read from and written to a checkpoint folder in
/// the Hugging Face layout (config.json beside model.safetensors, or a sharded model.safetensors.index.json):
///
///   x₀ = wte[tokens] + wpe[0 … T−1]  → dropout
///   xₗ₊₁ = yₗ + mlp(ln_2(yₗ)),  yₗ = xₗ + attn(ln_1(xₗ))          (n_layer times; causal, with biases)
///   logits = ln_f(x_L) · wteᵀ                                      (the head tied to the embedding)
///
/// with attn = c_proj ∘ softmax(QKᵀ/√d_h + causal mask)V on [Q | K | V] = x·c_attn + b and mlp = c_proj ∘ act ∘ c_fc.
/// That is tprod's encoder layer with p = 1 under the identity transform, pre-norm placement and the causal mask
/// (layer_config), so every tool that takes tprod's models (compress_attention, the Tucker denoising of paper 004,
/// checkpoints, fit) takes this one.
///
/// Published layout: GPT2Model's names ("h.0.attn.c_attn.weight", …), or GPT2LMHeadModel's under "transformer."
/// (detected from the file). GPT-2's Conv1D stores its weights in × out and computes x·W + b, as tprod's layers do,
/// so c_attn [d, 3d] is our w_qkv as it stands (Q, K, V in column blocks, head j in columns j·d_h … of each), and
/// wte [V, d] is our d×V table transposed. The head is wteᵀ when tie_word_embeddings (the default); once training
/// makes the two differ, save_gpt2 writes lm_head.weight and tie_word_embeddings = false, so nothing is lost.
/// The causal-mask buffers some checkpoints hold (".attn.bias", ".attn.masked_bias") are skipped.
///
/// Config fields used: model_type (must be "gpt2"), vocab_size, n_positions (n_ctx in old files), n_embd, n_layer,
/// n_head, n_inner (null: 4·n_embd), activation_function (gelu_new, gelu_pytorch_tanh, gelu_fast: GELU's tanh
/// form; gelu; relu), layer_norm_epsilon, embd_pdrop, tie_word_embeddings. Refused with the field's name:
/// scale_attn_weights = false, scale_attn_by_inverse_layer_idx = true, add_cross_attention = true, another
/// activation. Not modelled (they change training, not the forward pass): attn_pdrop and resid_pdrop, since
/// tprod's layers drop out only after the embedding. Needs nlohmann-json: link tprod::io.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tprod/nn/encoder.hpp"
#include "tprod/nn/model/dropout.hpp"
#include "tprod/nn/model/encoder_stack.hpp"
#include "tprod/nn/model/input_layers.hpp"
#include "tprod/nn/model/linear_layer.hpp"
#include "tprod/nn/model/norm_layer.hpp"
#include "tprod/nn/model/pooling_layer.hpp"
#include "tprod/nn/model/published_folder.hpp"
#include "tprod/nn/model/published_layout.hpp"
#include "tprod/nn/model/sequential.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace tprod::nn {

/// @brief GPT-2's hyper-parameters (config.json's fields, with GPT-2 small's values as defaults).
struct gpt2_config {
  std::size_t vocabulary = 50257;  ///< vocab_size
  std::size_t positions = 1024;    ///< n_positions: the longest sequence
  std::size_t width = 768;         ///< n_embd
  std::size_t layers = 12;         ///< n_layer
  std::size_t heads = 12;          ///< n_head
  std::size_t hidden = 3072;       ///< n_inner (4·n_embd)
  activation act = activation::gelu_tanh;
  double eps = 1e-5;     ///< layer_norm_epsilon
  double dropout = 0.1;  ///< embd_pdrop
  bool tied = true;      ///< tie_word_embeddings

  /// @brief The encoder layer this is: p = 1, pre-norm, GELU as configured, biases, LayerNorm ε.
  /// @throws shape_error unless the heads divide the width and every size is positive.
  layer_config layer() const {
    layer_config c = paper000_config(width, heads, hidden, 1, act);
    c.placement = norm_placement::pre;
    c.eps = eps;
    return c;
  }
};

/// @brief The config of a GPT-2 config.json (see the file's comment for the fields).
/// @throws io_error naming the file and the field for another model_type, a field of the wrong type, or an option
///         tprod does not implement; shape_error for sizes that do not make a model.
inline gpt2_config read_gpt2_config(const std::filesystem::path& file) {
  const nlohmann::json j = detail::read_config_of(file, "gpt2", "read_gpt2_config");
  const std::string f = file.string();
  gpt2_config c;
  c.vocabulary = detail::json_count(j, "vocab_size", c.vocabulary, f);
  c.positions = detail::json_count(j, "n_positions", detail::json_count(j, "n_ctx", c.positions, f), f);
  c.width = detail::json_count(j, "n_embd", c.width, f);
  c.layers = detail::json_count(j, "n_layer", c.layers, f);
  c.heads = detail::json_count(j, "n_head", c.heads, f);
  c.hidden = detail::json_count(j, "n_inner", 4 * c.width, f);
  c.eps = detail::json_number(j, "layer_norm_epsilon", c.eps, f);
  c.dropout = detail::json_number(j, "embd_pdrop", c.dropout, f);
  c.tied = detail::json_flag(j, "tie_word_embeddings", true, f);
  c.act = detail::json_activation(j, "activation_function", "gelu_new", f);
  if (!detail::json_flag(j, "scale_attn_weights", true, f))
    throw io_error(f + ": scale_attn_weights = false (attention without 1/√d_h) is not supported");
  if (detail::json_flag(j, "scale_attn_by_inverse_layer_idx", false, f))
    throw io_error(f + ": scale_attn_by_inverse_layer_idx = true is not supported");
  if (detail::json_flag(j, "add_cross_attention", false, f))
    throw io_error(f + ": add_cross_attention = true (GPT-2 as a decoder with cross-attention) is not supported");
  TPROD_EXPECTS(c.vocabulary >= 2 && c.positions > 0 && c.layers > 0 && c.dropout >= 0 && c.dropout < 1 && c.eps > 0,
                f + ": vocab_size " + std::to_string(c.vocabulary) + ", n_positions " + std::to_string(c.positions) +
                    ", n_layer " + std::to_string(c.layers) + ", embd_pdrop and layer_norm_epsilon do not make a model");
  try {
    (void)c.layer();  // checks width, heads and hidden
  } catch (const shape_error& e) {
    throw shape_error(f + ": n_embd " + std::to_string(c.width) + ", n_head " + std::to_string(c.heads) +
                      " and n_inner " + std::to_string(c.hidden) + " do not make a layer (" + e.what() + ")");
  }
  return c;
}

/// @brief config.json's content for c, as Hugging Face's GPT2Config writes the fields tprod uses.
inline nlohmann::json gpt2_config_json(const gpt2_config& c) {
  return {{"model_type", "gpt2"},
          {"architectures", {"GPT2LMHeadModel"}},
          {"vocab_size", c.vocabulary},
          {"n_positions", c.positions},
          {"n_ctx", c.positions},
          {"n_embd", c.width},
          {"n_layer", c.layers},
          {"n_head", c.heads},
          {"n_inner", c.hidden},
          {"activation_function", detail::published_name(c.act)},
          {"layer_norm_epsilon", c.eps},
          {"embd_pdrop", c.dropout},
          {"resid_pdrop", c.dropout},
          {"attn_pdrop", c.dropout},
          {"tie_word_embeddings", c.tied},
          {"scale_attn_weights", true}};
}

/// GPT-2 in memory space S (its layers' names: embed, pos, decoder.ℓ, norm, head).
template <std::floating_point T, memory_space S = host_space>
using gpt2_model =
    sequential<T, token_embedding<T, S>, positional_layer<T, learned_positional_params<T, S>>, dropout<T, S>,
               encoder_stack<T, identity_transform, attention_params<T, identity_transform, S>>,
               norm_layer<T, identity_transform, S>, flatten_layer<T, S>, linear_layer<T, identity_transform, S>>;

namespace detail {
/// GPT-2 of config c, its weights drawn (seeded) or left zero (for a checkpoint to overwrite, without drawing 124M
/// numbers first).
template <std::floating_point T>
gpt2_model<T> make_gpt2(const gpt2_config& c, std::uint64_t seed, bool draw) {
  const layer_config cfg = c.layer();
  // Undrawn, the embedding, positions and head are left uninitialized: load_gpt2 overwrites every element.
  auto embedding = draw ? make_embedding_params<T>(c.vocabulary, c.width, seed, T(0.02))
                        : embedding_params<T>{tensor3<T>(c.width, c.vocabulary, 1, uninitialized)};
  auto positions = draw ? make_learned_positional<T>(c.positions, c.width, 1, seed + 2, T(0.02))
                        : learned_positional_params<T>{tensor3<T>(c.positions, c.width, 1, uninitialized)};
  const dextents3 head_shape(c.width, c.vocabulary, 1);
  linear_params<T, identity_transform> head{
      {head_shape, identity_transform{}, draw ? tensor3<T>(embedding.table) : tensor3<T>(head_shape, uninitialized)},
      {dextents3(0, c.vocabulary, 1), identity_transform{}}};
  std::vector<encoder_params<T, identity_transform>> layers;
  for (std::size_t l = 0; l < c.layers; ++l)
    layers.push_back(draw ? make_encoder_params<T>(cfg, identity_transform{}, seed + 100 + 1000 * l)
                          : blank_encoder_layer<T>(cfg));
  encoder_stack<T, identity_transform, attention_params<T, identity_transform>> stack(std::move(layers), "decoder");
  stack.causal = true;
  return gpt2_model<T>(token_embedding<T>(std::move(embedding), 1),
                       positional_layer<T, learned_positional_params<T>>(std::move(positions)),
                       dropout<T>(c.dropout, seed + 7), std::move(stack),
                       norm_layer<T, identity_transform>(make_layer_norm_params<T>(c.width, 1, cfg.norm, c.eps),
                                                         identity_transform{}),
                       flatten_layer<T>{}, linear_layer<T, identity_transform>(std::move(head), "head"));
}
}  // namespace detail

/// @brief A GPT-2 of config c with fresh weights: the embedding and positions uniform in ±0.02 (GPT-2 draws
/// N(0, 0.02²)), the layers as make_encoder_params draws them, the head a copy of the embedding (tied).
template <std::floating_point T>
gpt2_model<T> make_gpt2(const gpt2_config& c, std::uint64_t seed = 1) {
  return detail::make_gpt2<T>(c, seed, true);
}

/// @brief The correspondence between gpt2_model's parameters and the published names under `prefix` ("" or
/// "transformer."); the head reads wte when `tied`, else lm_head.weight (never prefixed).
inline std::vector<published_tensor> gpt2_tensors(const gpt2_config& c, const std::string& prefix = {}) {
  using enum published_layout;
  std::vector<published_tensor> t{{"embed.table", prefix + "wte.weight", transposed},
                                  {"pos.table", prefix + "wpe.weight", same}};
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string ours = "decoder." + std::to_string(l) + ".", theirs = prefix + "h." + std::to_string(l) + ".";
    const std::pair<const char*, const char*> names[] = {
        {"attn.w_qkv", "attn.c_attn.weight"}, {"attn.b_qkv", "attn.c_attn.bias"}, {"attn.w_o", "attn.c_proj.weight"},
        {"attn.b_o", "attn.c_proj.bias"},     {"ffn.w1", "mlp.c_fc.weight"},      {"ffn.b1", "mlp.c_fc.bias"},
        {"ffn.w2", "mlp.c_proj.weight"},      {"ffn.b2", "mlp.c_proj.bias"},      {"ln1.gamma", "ln_1.weight"},
        {"ln1.beta", "ln_1.bias"},            {"ln2.gamma", "ln_2.weight"},       {"ln2.beta", "ln_2.bias"}};
    for (const auto& [o, th] : names) {
      const std::string s = th;
      t.push_back({ours + o, theirs + th, s.ends_with(".bias") || s.starts_with("ln_") ? vector : same});
    }
  }
  t.push_back({"norm.gamma", prefix + "ln_f.weight", vector});
  t.push_back({"norm.beta", prefix + "ln_f.bias", vector});
  t.push_back({"head.weight", c.tied ? prefix + "wte.weight" : std::string("lm_head.weight"), transposed});
  return t;
}

/// @brief A GPT-2 and its config, as read from a checkpoint folder.
template <std::floating_point T>
struct gpt2_checkpoint {
  gpt2_config config;
  gpt2_model<T> model;
};

/// @brief The GPT-2 of a checkpoint folder, its parameters converted to T (F32, F16 and BF16 files load into
/// float or double exactly; F64 only into double).
/// @throws io_error naming the file and the field or tensor for anything the folder lacks or tprod does not
///         support (see read_gpt2_config and load_published); shape_error naming both shapes.
template <std::floating_point T>
gpt2_checkpoint<T> load_gpt2(const std::filesystem::path& folder) {
  gpt2_config c = read_gpt2_config(folder / "config.json");
  auto model = detail::with_checkpoint(folder, [&](const auto& r) {
    const std::string prefix = r.contains("transformer.wte.weight") ? "transformer." : "";
    // A head stored beside a tied embedding (as some exporters write it) is read as an untied head: equal to wte,
    // it changes nothing; different, it is what the checkpoint computes with.
    if (c.tied && r.contains("lm_head.weight")) c.tied = false;
    auto model = detail::make_gpt2<T>(c, 1, false);
    load_published<T>(r, model, gpt2_tensors(c, prefix), [](std::string_view name) {
      return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias");
    });
    return model;
  });
  return {c, std::move(model)};
}

/// @brief Writes config.json and model.safetensors into `folder` (created if needed) in the published layout
/// (GPT2Model's names), in `dtype` ("" for T's own, "F16", "BF16"). The head is written as lm_head.weight, with
/// tie_word_embeddings = false, when it no longer equals the embedding.
/// @throws io_error when the folder or a file cannot be written; numerical_error for a value `dtype` cannot hold.
template <std::floating_point T>
void save_gpt2(const std::filesystem::path& folder, gpt2_model<T>& model, gpt2_config c,
               std::string_view dtype = {}) {
  const auto& table = model.template get<0>().params.value.table;
  const auto& head = model.template get<6>().params.value.weight.data();
  c.tied = table.m() == head.m() && table.n() == head.n() &&
           std::equal(table.data(), table.data() + table.size(), head.data());
  io::safetensors_writer w;
  add_published<T>(w, model, gpt2_tensors(c), dtype);
  detail::write_published_folder(folder, gpt2_config_json(c), w);
}

}  // namespace tprod::nn
