// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file bert.hpp
/// @brief BERT (Devlin et al., 2019) built from tprod's layers, with its two heads, read from and written to a
/// checkpoint folder in the Hugging Face layout (config.json beside model.safetensors, or a sharded index):
///
///   x₀ = LN(E[tokens] + P[0 … T−1] + S[segments]) → dropout
///   xₗ₊₁ = LN₂(yₗ + ffn(yₗ)),  yₗ = LN₁(xₗ + attn(xₗ))              (num_hidden_layers times; post-norm, biases)
///   classifier:       logits = W_c · dropout(tanh(W_p · x_L[CLS] + b_p)) + b_c   (the pooler on the first token)
///   masked LM:        logits = LN(act(x_L·W_t + b_t)) · Eᵀ + b          (the decoder tied to the embedding)
///
/// with attn = dense ∘ softmax(QKᵀ/√d_h + padding mask)V. That is tprod's encoder layer with p = 1 under the
/// identity transform and post-norm placement (layer_config), so every tool that takes tprod's models
/// (compress_attention, mpo_finetune, checkpoints, fit) takes this one.
///
/// Published layout: BertModel's names ("embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.query
/// .weight", …), under "bert." in BertForSequenceClassification, BertForMaskedLM and BertForPreTraining (detected
/// from the file); LayerNorm's weight/bias or the older gamma/beta. nn.Linear stores out × in, so query, key and
/// value are each transposed into a column block of our fused w_qkv (head j in columns j·d_h … of each block, as
/// BERT splits them); the embeddings are V × d, our tables d × V. Skipped when present: the position_ids buffer,
/// the next-sentence head (cls.seq_relationship), and the heads the model does not have (a classifier ignores cls.*,
/// a masked LM the pooler and classifier). A head that the checkpoint lacks (fine-tuning a classifier from a
/// pre-trained encoder) keeps its fresh weights; the loaded checkpoint lists those parameters, as Hugging Face's
/// "newly initialized" warning does.
///
/// Config fields used: model_type (must be "bert"), vocab_size, max_position_embeddings, type_vocab_size,
/// hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, hidden_act (gelu, gelu_new, relu, …),
/// layer_norm_eps, hidden_dropout_prob, classifier_dropout, num_labels (or id2label's size), tie_word_embeddings.
/// Refused with the field's name: position_embedding_type other than "absolute", is_decoder, add_cross_attention,
/// problem_type other than single_label_classification. Not modelled (training only): attention_probs_dropout_prob.
/// Needs nlohmann-json: link tprod::io.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/nn/encoder.hpp"
#include "tprod/nn/model/activation_layer.hpp"
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

/// @brief BERT's hyper-parameters (config.json's fields, with BERT-base's values as defaults).
struct bert_config {
  std::size_t vocabulary = 30522;  ///< vocab_size
  std::size_t positions = 512;     ///< max_position_embeddings: the longest sequence
  std::size_t segments = 2;        ///< type_vocab_size
  std::size_t width = 768;         ///< hidden_size
  std::size_t layers = 12;         ///< num_hidden_layers
  std::size_t heads = 12;          ///< num_attention_heads
  std::size_t hidden = 3072;       ///< intermediate_size
  std::size_t labels = 2;          ///< num_labels: the classifier's outputs
  activation act = activation::gelu;
  double eps = 1e-12;               ///< layer_norm_eps
  double dropout = 0.1;             ///< hidden_dropout_prob
  double classifier_dropout = 0.1;  ///< classifier_dropout (hidden_dropout_prob when null)
  bool tied = true;                 ///< tie_word_embeddings: the masked LM's decoder is the embedding

  /// @brief The encoder layer this is: p = 1, post-norm, the activation as configured, biases, LayerNorm ε.
  /// @throws shape_error unless the heads divide the width and every size is positive.
  layer_config layer() const {
    layer_config c = paper000_config(width, heads, hidden, 1, act);
    c.eps = eps;
    return c;
  }
};

/// @brief The config of a BERT config.json (see the file's comment for the fields).
/// @throws io_error naming the file and the field for another model_type, a field of the wrong type, or an option
///         tprod does not implement; shape_error for sizes that do not make a model.
inline bert_config read_bert_config(const std::filesystem::path& file) {
  const nlohmann::json j = detail::read_config_of(file, "bert", "read_bert_config");
  const std::string f = file.string();
  bert_config c;
  c.vocabulary = detail::json_count(j, "vocab_size", c.vocabulary, f);
  c.positions = detail::json_count(j, "max_position_embeddings", c.positions, f);
  c.segments = detail::json_count(j, "type_vocab_size", c.segments, f);
  c.width = detail::json_count(j, "hidden_size", c.width, f);
  c.layers = detail::json_count(j, "num_hidden_layers", c.layers, f);
  c.heads = detail::json_count(j, "num_attention_heads", c.heads, f);
  c.hidden = detail::json_count(j, "intermediate_size", c.hidden, f);
  const std::size_t named = j.contains("id2label") && j["id2label"].is_object() ? j["id2label"].size() : c.labels;
  c.labels = detail::json_count(j, "num_labels", named, f);
  c.act = detail::json_activation(j, "hidden_act", "gelu", f);
  c.eps = detail::json_number(j, "layer_norm_eps", c.eps, f);
  c.dropout = detail::json_number(j, "hidden_dropout_prob", c.dropout, f);
  c.classifier_dropout = detail::json_number(j, "classifier_dropout", c.dropout, f);
  c.tied = detail::json_flag(j, "tie_word_embeddings", true, f);
  if (const auto kind = detail::json_text(j, "position_embedding_type", "absolute", f); kind != "absolute")
    throw io_error(f + ": position_embedding_type '" + kind + "' is not supported (tprod reads \"absolute\")");
  if (detail::json_flag(j, "is_decoder", false, f))
    throw io_error(f + ": is_decoder = true (BERT as a causal decoder) is not supported");
  if (detail::json_flag(j, "add_cross_attention", false, f))
    throw io_error(f + ": add_cross_attention = true is not supported");
  if (const auto problem = detail::json_text(j, "problem_type", "single_label_classification", f);
      problem != "single_label_classification")
    throw io_error(f + ": problem_type '" + problem + "' is not supported (tprod's classifier is single-label)");
  TPROD_EXPECTS(c.vocabulary >= 2 && c.positions > 0 && c.segments > 0 && c.layers > 0 && c.labels > 0 &&
                    c.dropout >= 0 && c.dropout < 1 && c.classifier_dropout >= 0 && c.classifier_dropout < 1 &&
                    c.eps > 0,
                f + ": vocab_size " + std::to_string(c.vocabulary) + ", max_position_embeddings " +
                    std::to_string(c.positions) + ", type_vocab_size " + std::to_string(c.segments) +
                    ", num_hidden_layers " + std::to_string(c.layers) + ", num_labels " + std::to_string(c.labels) +
                    ", the dropouts and layer_norm_eps do not make a model");
  try {
    (void)c.layer();  // checks width, heads and hidden
  } catch (const shape_error& e) {
    throw shape_error(f + ": hidden_size " + std::to_string(c.width) + ", num_attention_heads " +
                      std::to_string(c.heads) + " and intermediate_size " + std::to_string(c.hidden) +
                      " do not make a layer (" + e.what() + ")");
  }
  return c;
}

/// @brief config.json's content for c, as Hugging Face's BertConfig writes the fields tprod uses; `architecture`
/// names the model class ("BertForSequenceClassification", "BertForMaskedLM").
inline nlohmann::json bert_config_json(const bert_config& c, const std::string& architecture) {
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  for (std::size_t k = 0; k < c.labels; ++k) {
    id2label[std::to_string(k)] = "LABEL_" + std::to_string(k);
    label2id["LABEL_" + std::to_string(k)] = k;
  }
  return {{"model_type", "bert"},
          {"architectures", {architecture}},
          {"vocab_size", c.vocabulary},
          {"max_position_embeddings", c.positions},
          {"type_vocab_size", c.segments},
          {"hidden_size", c.width},
          {"num_hidden_layers", c.layers},
          {"num_attention_heads", c.heads},
          {"intermediate_size", c.hidden},
          {"hidden_act", detail::published_name(c.act)},
          {"layer_norm_eps", c.eps},
          {"hidden_dropout_prob", c.dropout},
          {"attention_probs_dropout_prob", c.dropout},
          {"classifier_dropout", c.classifier_dropout},
          {"position_embedding_type", "absolute"},
          {"id2label", id2label},
          {"label2id", label2id},
          {"tie_word_embeddings", c.tied}};
}

/// @brief BERT's encoder (embed, pos, segment, embed_norm, dropout, encoder) followed by a head's layers.
template <std::floating_point T, class... Head>
using bert_with_head =
    sequential<T, token_embedding<T>, positional_layer<T, learned_positional_params<T>>, segment_embedding<T>,
               norm_layer<T, identity_transform>, dropout<T>,
               encoder_stack<T, identity_transform, attention_params<T, identity_transform>>, Head...>;

/// @brief BertForSequenceClassification: the encoder, then pool (the [CLS] token), pooler, pooler_tanh,
/// classifier_dropout, classifier: B×labels logits.
template <std::floating_point T>
using bert_classifier = bert_with_head<T, pooling_layer<T>, linear_layer<T, identity_transform>, activation_layer<T>,
                                       dropout<T>, linear_layer<T, identity_transform>>;

/// @brief BertForMaskedLM: the encoder, then mlm_dense, mlm_act, mlm_norm, mlm_decoder: (B·T)×V logits.
template <std::floating_point T>
using bert_masked_lm = bert_with_head<T, linear_layer<T, identity_transform>, activation_layer<T>,
                                      norm_layer<T, identity_transform>, linear_layer<T, identity_transform>>;

namespace detail {

/// The encoder's six layers, their weights drawn (seeded) or, for a checkpoint to overwrite, left blank.
template <std::floating_point T>
auto bert_encoder_layers(const bert_config& c, std::uint64_t seed, bool draw) {
  const layer_config cfg = c.layer();
  auto words = draw ? make_embedding_params<T>(c.vocabulary, c.width, seed, T(0.02))
                    : embedding_params<T>{tensor3<T>(c.width, c.vocabulary, 1, uninitialized)};
  auto positions = draw ? make_learned_positional<T>(c.positions, c.width, 1, seed + 2, T(0.02))
                        : learned_positional_params<T>{tensor3<T>(c.positions, c.width, 1, uninitialized)};
  auto segments = make_embedding_params<T>(c.segments, c.width, seed + 3, T(0.02));
  std::vector<encoder_params<T, identity_transform>> layers;
  for (std::size_t l = 0; l < c.layers; ++l)
    layers.push_back(draw ? make_encoder_params<T>(cfg, identity_transform{}, seed + 100 + 1000 * l)
                          : blank_encoder_layer<T>(cfg));
  return std::make_tuple(
      token_embedding<T>(std::move(words), 1), positional_layer<T, learned_positional_params<T>>(std::move(positions)),
      segment_embedding<T>(std::move(segments), 1),
      norm_layer<T, identity_transform>(make_layer_norm_params<T>(c.width, 1, cfg.norm, c.eps), identity_transform{},
                                        "embed_norm"),
      dropout<T>(c.dropout, seed + 7),
      encoder_stack<T, identity_transform, attention_params<T, identity_transform>>(std::move(layers), "encoder"));
}

template <std::floating_point T>
linear_layer<T, identity_transform> bert_linear(std::size_t in, std::size_t out, std::uint64_t seed, std::string name) {
  return linear_layer<T, identity_transform>(make_linear_params<T>(in, out, 1, identity_transform{}, seed),
                                             std::move(name));
}

template <std::floating_point T>
bert_classifier<T> make_bert_classifier(const bert_config& c, std::uint64_t seed, bool draw) {
  return std::apply(
      [&](auto&&... encoder) {
        return bert_classifier<T>(std::move(encoder)..., pooling_layer<T>(pooling::class_token),
                                  bert_linear<T>(c.width, c.width, seed + 11, "pooler"),
                                  activation_layer<T>(activation::tanh, "pooler_tanh"),
                                  dropout<T>(c.classifier_dropout, seed + 13, "classifier_dropout"),
                                  bert_linear<T>(c.width, c.labels, seed + 17, "classifier"));
      },
      bert_encoder_layers<T>(c, seed, draw));
}

template <std::floating_point T>
bert_masked_lm<T> make_bert_masked_lm(const bert_config& c, std::uint64_t seed, bool draw) {
  auto encoder = bert_encoder_layers<T>(c, seed, draw);
  // The decoder starts as the embedding's copy (tied) with a zero bias.
  const auto& words = std::get<0>(encoder).params.value.table;
  const dextents3 decoder_shape(c.width, c.vocabulary, 1);
  linear_params<T, identity_transform> decoder{
      {decoder_shape, identity_transform{}, draw ? tensor3<T>(words) : tensor3<T>(decoder_shape, uninitialized)},
      {dextents3(1, c.vocabulary, 1), identity_transform{}}};
  return std::apply(
      [&](auto&&... layers) {
        return bert_masked_lm<T>(
            std::move(layers)..., bert_linear<T>(c.width, c.width, seed + 11, "mlm_dense"),
            activation_layer<T>(c.act, "mlm_act"),
            norm_layer<T, identity_transform>(make_layer_norm_params<T>(c.width, 1, c.layer().norm, c.eps),
                                              identity_transform{}, "mlm_norm"),
            linear_layer<T, identity_transform>(std::move(decoder), "mlm_decoder"));
      },
      std::move(encoder));
}

}  // namespace detail

/// @brief A BERT classifier of config c with fresh weights: the embeddings uniform in ±0.02 (BERT draws
/// N(0, 0.02²)), the layers as make_encoder_params draws them, the pooler and classifier as make_linear_params.
template <std::floating_point T>
bert_classifier<T> make_bert_classifier(const bert_config& c, std::uint64_t seed = 1) {
  return detail::make_bert_classifier<T>(c, seed, true);
}

/// @brief A BERT masked language model of config c with fresh weights (as make_bert_classifier; the decoder a copy
/// of the embedding, its bias zero).
template <std::floating_point T>
bert_masked_lm<T> make_bert_masked_lm(const bert_config& c, std::uint64_t seed = 1) {
  return detail::make_bert_masked_lm<T>(c, seed, true);
}

/// @brief Which of BERT's heads a table covers.
enum class bert_head { classifier, masked_lm };

/// @brief The LayerNorm parameters' published names: "weight"/"bias", or the older "gamma"/"beta".
using bert_norm_names = std::pair<std::string, std::string>;

/// @brief The correspondence between the encoder's parameters (embed, pos, segment, embed_norm, encoder) and the
/// published names under `prefix` ("" or "bert.").
inline std::vector<published_tensor> bert_encoder_tensors(const bert_config& c, const std::string& prefix = {},
                                                          const bert_norm_names& norm_names = {"weight", "bias"}) {
  using enum published_layout;
  const auto& [scale, shift] = norm_names;
  const std::string e = prefix + "embeddings.";
  std::vector<published_tensor> t{{"embed.table", e + "word_embeddings.weight", transposed},
                                  {"pos.table", e + "position_embeddings.weight", same},
                                  {"segment.table", e + "token_type_embeddings.weight", transposed},
                                  {"embed_norm.gamma", e + "LayerNorm." + scale, vector},
                                  {"embed_norm.beta", e + "LayerNorm." + shift, vector}};
  const std::size_t d = c.width;
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string ours = "encoder." + std::to_string(l) + ".",
                      theirs = prefix + "encoder.layer." + std::to_string(l) + ".";
    const char* blocks[] = {"query", "key", "value"};
    for (std::size_t k = 0; k < 3; ++k) {
      const std::string self = theirs + "attention.self." + blocks[k];
      t.push_back({ours + "attn.w_qkv", self + ".weight", transposed, k * d, d});
      t.push_back({ours + "attn.b_qkv", self + ".bias", vector, k * d, d});
    }
    const std::pair<const char*, std::string> rest[] = {
        {"attn.w_o", "attention.output.dense.weight"},
        {"attn.b_o", "attention.output.dense.bias"},
        {"ln1.gamma", "attention.output.LayerNorm." + scale},
        {"ln1.beta", "attention.output.LayerNorm." + shift},
        {"ffn.w1", "intermediate.dense.weight"},
        {"ffn.b1", "intermediate.dense.bias"},
        {"ffn.w2", "output.dense.weight"},
        {"ffn.b2", "output.dense.bias"},
        {"ln2.gamma", "output.LayerNorm." + scale},
        {"ln2.beta", "output.LayerNorm." + shift}};
    for (const auto& [o, th] : rest)
      t.push_back({ours + o, theirs + th, th.ends_with(".weight") && th.find("LayerNorm") == std::string::npos ? transposed : vector});
  }
  return t;
}

/// @brief The correspondence of a head's parameters: pooler (under the prefix) and classifier, or cls.predictions
/// with the decoder read from the word embeddings when `c.tied`, else from cls.predictions.decoder.weight.
inline std::vector<published_tensor> bert_head_tensors(const bert_config& c, bert_head head,
                                                       const std::string& prefix = {},
                                                       const bert_norm_names& norm_names = {"weight", "bias"}) {
  using enum published_layout;
  const auto& [scale, shift] = norm_names;
  std::vector<published_tensor> t;
  if (head == bert_head::classifier) {
    t.push_back({"pooler.weight", prefix + "pooler.dense.weight", transposed});
    t.push_back({"pooler.bias", prefix + "pooler.dense.bias", vector});
    t.push_back({"classifier.weight", "classifier.weight", transposed});
    t.push_back({"classifier.bias", "classifier.bias", vector});
  } else {
    const std::string p = "cls.predictions.";
    t.push_back({"mlm_dense.weight", p + "transform.dense.weight", transposed});
    t.push_back({"mlm_dense.bias", p + "transform.dense.bias", vector});
    t.push_back({"mlm_norm.gamma", p + "transform.LayerNorm." + scale, vector});
    t.push_back({"mlm_norm.beta", p + "transform.LayerNorm." + shift, vector});
    t.push_back({"mlm_decoder.weight", c.tied ? prefix + "embeddings.word_embeddings.weight" : p + "decoder.weight",
                 transposed});
    t.push_back({"mlm_decoder.bias", p + "bias", vector});
  }
  return t;
}

/// @brief The whole table of a BERT model: bert_encoder_tensors, then bert_head_tensors.
inline std::vector<published_tensor> bert_tensors(const bert_config& c, bert_head head, const std::string& prefix = {},
                                                  const bert_norm_names& norm_names = {"weight", "bias"}) {
  auto t = bert_encoder_tensors(c, prefix, norm_names);
  for (auto& row : bert_head_tensors(c, head, prefix, norm_names)) t.push_back(std::move(row));
  return t;
}

/// @brief A BERT model M (bert_classifier or bert_masked_lm) and its config, as read from a checkpoint folder;
/// `fresh` names the head's parameters that the checkpoint did not hold (left as drawn from the seed).
template <class M>
struct bert_checkpoint {
  bert_config config;
  M model;
  std::vector<std::string> fresh;
};

namespace detail {

template <std::floating_point T, class M>
bert_checkpoint<M> load_bert(const std::filesystem::path& folder, bert_head head, std::uint64_t seed,
                             M (*make)(const bert_config&, std::uint64_t, bool)) {
  bert_config c = read_bert_config(folder / "config.json");
  if (head == bert_head::classifier && c.labels < 2)
    throw io_error((folder / "config.json").string() + ": num_labels = " + std::to_string(c.labels) +
                   " (one output is regression in transformers); tprod's classifier needs two labels or more");
  std::vector<std::string> fresh;
  auto model = detail::with_checkpoint(folder, [&](const auto& r) {
    const std::string prefix = r.contains("bert.embeddings.word_embeddings.weight") ? "bert." : "";
    const auto norm_names = r.contains(prefix + "embeddings.LayerNorm.gamma") ? bert_norm_names{"gamma", "beta"}
                                                                               : bert_norm_names{"weight", "bias"};
    // A decoder stored beside a tied embedding is read as an untied one (as gpt2's head).
    if (head == bert_head::masked_lm && c.tied && r.contains("cls.predictions.decoder.weight")) c.tied = false;
    auto m = make(c, seed, false);
    // Every encoder row is required (load_published names a missing tensor); a head row the file lacks is fresh.
    std::vector<published_tensor> table = bert_encoder_tensors(c, prefix, norm_names);
    for (auto& row : bert_head_tensors(c, head, prefix, norm_names)) {
      if (r.contains(row.theirs))
        table.push_back(std::move(row));
      else
        fresh.push_back(row.ours);
    }
    const auto other_head = head == bert_head::classifier ? std::vector<std::string>{"cls."}
                                                          : std::vector<std::string>{prefix + "pooler.", "classifier."};
    load_published<T>(
        r, m, table,
        [&](std::string_view name) {
          if (name.ends_with("embeddings.position_ids") || name.starts_with("cls.seq_relationship.") ||
              name == "cls.predictions.decoder.bias")
            return true;
          for (const auto& p : other_head)
            if (name.starts_with(p)) return true;
          return false;
        },
        [&](std::string_view name) { return std::find(fresh.begin(), fresh.end(), name) != fresh.end(); });
    if constexpr (std::is_same_v<M, bert_masked_lm<T>>)
      if (std::find(fresh.begin(), fresh.end(), "mlm_decoder.weight") != fresh.end()) {
        // blank: a fresh decoder starts as the embedding, as make_bert_masked_lm's does
        auto& decoder = m.template get<9>().params.value.weight;
        decoder = {decoder.extents(), identity_transform{}, tensor3<T>(m.template get<0>().params.value.table)};
      }
    return m;
  });
  return {c, std::move(model), std::move(fresh)};
}

}  // namespace detail

/// @brief The BERT classifier of a checkpoint folder (BertForSequenceClassification's tensors, or an encoder
/// without them: the pooler and classifier then keep weights drawn from `seed` and are listed in `fresh`).
/// Parameters convert to T as load_published converts them (F32, F16, BF16 into either; F64 into double).
/// @throws io_error naming the file and the field or tensor for anything the folder lacks (an encoder tensor) or
///         tprod does not support; shape_error naming both shapes.
template <std::floating_point T>
bert_checkpoint<bert_classifier<T>> load_bert_classifier(const std::filesystem::path& folder,
                                                         std::uint64_t seed = 1) {
  return detail::load_bert<T>(folder, bert_head::classifier, seed, &detail::make_bert_classifier<T>);
}

/// @brief The BERT masked language model of a checkpoint folder (BertForMaskedLM's or BertForPreTraining's
/// tensors; a head the folder lacks keeps weights drawn from `seed` and is listed in `fresh`).
/// @throws as load_bert_classifier.
template <std::floating_point T>
bert_checkpoint<bert_masked_lm<T>> load_bert_masked_lm(const std::filesystem::path& folder, std::uint64_t seed = 1) {
  return detail::load_bert<T>(folder, bert_head::masked_lm, seed, &detail::make_bert_masked_lm<T>);
}

namespace detail {
template <std::floating_point T, class M>
void save_bert(const std::filesystem::path& folder, M& model, bert_config c, bert_head head, std::string_view dtype) {
  if constexpr (std::is_same_v<M, bert_masked_lm<T>>) {
    const auto& table = model.template get<0>().params.value.table;
    const auto& decoder = model.template get<9>().params.value.weight.data();
    c.tied = std::equal(table.data(), table.data() + table.size(), decoder.data(), decoder.data() + decoder.size());
  }
  io::safetensors_writer w;
  add_published<T>(w, model, bert_tensors(c, head, "bert."), dtype);
  write_published_folder(folder,
                         bert_config_json(c, head == bert_head::classifier ? "BertForSequenceClassification"
                                                                           : "BertForMaskedLM"),
                         w);
}
}  // namespace detail

/// @brief Writes config.json and model.safetensors into `folder` (created if needed) in
/// BertForSequenceClassification's names and layouts, in `dtype` ("" for T's own, "F16", "BF16").
/// @throws io_error when the folder or a file cannot be written; numerical_error for a value `dtype` cannot hold.
template <std::floating_point T>
void save_bert(const std::filesystem::path& folder, bert_classifier<T>& model, const bert_config& c,
               std::string_view dtype = {}) {
  detail::save_bert<T>(folder, model, c, bert_head::classifier, dtype);
}

/// @brief As above, in BertForMaskedLM's names; the decoder is written as cls.predictions.decoder.weight, with
/// tie_word_embeddings = false, once it no longer equals the embedding.
template <std::floating_point T>
void save_bert(const std::filesystem::path& folder, bert_masked_lm<T>& model, const bert_config& c,
               std::string_view dtype = {}) {
  detail::save_bert<T>(folder, model, c, bert_head::masked_lm, dtype);
}

}  // namespace tprod::nn
