// SPDX-License-Identifier: Apache-2.0
// Published architectures from Python: tprod.GPT2, tprod.BertForSequenceClassification and tprod.BertForMaskedLM
// read a Hugging Face checkpoint folder (config.json beside model.safetensors or a sharded index; F32, F16 or BF16
// weights), compute the model's logits with tprod's layers, and write it back in the same layout
// (nn/model/gpt2.hpp, nn/model/bert.hpp).
#include <cstdint>
#include <mutex>
#include <optional>

#include "arrays.hpp"
#include "tprod/nn/extern_templates.hpp"
#include "tprod/nn/model/bert.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/model/gpt2.hpp"

namespace tprod::python {

namespace {

/// What the bindings need of each architecture: its checkpoint, how to load and save it, where its stack of
/// layers is, and how its logits are laid out.
template <class T>
struct gpt2_kind {
  using checkpoint = nn::gpt2_checkpoint<T>;
  static constexpr const char* name = "tprod.GPT2";
  static constexpr std::size_t stack = 3;
  static constexpr bool per_sequence = false;  // logits per token
  static checkpoint load(const std::string& folder, std::uint64_t) { return nn::load_gpt2<T>(folder); }
  static void save(const std::string& folder, checkpoint& c, const std::string& dtype) {
    nn::save_gpt2<T>(folder, c.model, c.config, dtype);
  }
  static std::string config_json(const checkpoint& c) { return nn::gpt2_config_json(c.config).dump(); }
  static std::size_t positions(const checkpoint& c) { return c.config.positions; }
  static std::size_t vocabulary(const checkpoint& c) { return c.config.vocabulary; }
  static bool counted(const checkpoint& c, std::string_view parameter) {
    return parameter != "head.weight" || !c.config.tied;  // the tied head counts once, as GPT-2's papers count
  }
  static std::vector<std::string> fresh(const checkpoint&) { return {}; }
};

template <class T, class M, nn::bert_head Head>
struct bert_kind {
  using checkpoint = nn::bert_checkpoint<M>;
  static constexpr const char* name =
      Head == nn::bert_head::classifier ? "tprod.BertForSequenceClassification" : "tprod.BertForMaskedLM";
  static constexpr std::size_t stack = 5;
  static constexpr bool per_sequence = Head == nn::bert_head::classifier;
  static checkpoint load(const std::string& folder, std::uint64_t seed) {
    if constexpr (Head == nn::bert_head::classifier)
      return nn::load_bert_classifier<T>(folder, seed);
    else
      return nn::load_bert_masked_lm<T>(folder, seed);
  }
  static void save(const std::string& folder, checkpoint& c, const std::string& dtype) {
    nn::save_bert<T>(folder, c.model, c.config, dtype);
  }
  static std::string config_json(const checkpoint& c) {
    return nn::bert_config_json(c.config, Head == nn::bert_head::classifier ? "BertForSequenceClassification"
                                                                           : "BertForMaskedLM")
        .dump();
  }
  static std::size_t positions(const checkpoint& c) { return c.config.positions; }
  static std::size_t vocabulary(const checkpoint& c) { return c.config.vocabulary; }
  static bool counted(const checkpoint& c, std::string_view parameter) {
    return parameter != "mlm_decoder.weight" || !c.config.tied;
  }
  static std::vector<std::string> fresh(const checkpoint& c) { return c.fresh; }
};

/// A loaded model; one forward pass at a time (its layers keep their activations between calls).
template <class Kind>
struct model_object {
  typename Kind::checkpoint loaded;
  std::mutex busy;
};

/// The values of a [T] or [B, T] integer array (the tokens, or another array of their shape), each below `bound`.
std::vector<std::size_t> id_values(const py::array& a, const std::string& who, const char* what, std::size_t bound,
                                   const char* range, bool flags = false) {
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u' && !(flags && kind == 'b'))
    throw py::type_error(who + ": " + what + " must be an integer array, got dtype " + dtype_text(a.dtype()));
  const auto ids = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  std::vector<std::size_t> out(std::size_t(ids.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t v = ids.data()[i];
    if (v < 0 || std::uint64_t(v) >= bound)
      throw py::value_error(who + ": " + what + " " + std::to_string(v) + " at position " + std::to_string(i) +
                            " is outside " + range + " 0 … " + std::to_string(bound - 1));
    out[i] = std::size_t(v);
  }
  return out;
}

/// The batch of a [T] or [B, T] token array, with segment ids and an attention mask of the same shape when given
/// (the mask 1 on each sequence's tokens and 0 on the padding after them), checked against the model's sizes.
nn::batch token_batch(const std::string& who, const py::array& tokens, const std::optional<py::array>& segments,
                      const std::optional<py::array>& mask, std::size_t vocabulary, std::size_t positions,
                      std::size_t segment_types) {
  if (tokens.ndim() != 1 && tokens.ndim() != 2)
    throw py::value_error(who + ": tokens must have shape (T,) or (B, T), got " + shape_text(tokens));
  const std::size_t batch = tokens.ndim() == 2 ? std::size_t(tokens.shape(0)) : 1;
  const std::size_t length = std::size_t(tokens.shape(tokens.ndim() - 1));
  if (batch == 0 || length == 0) throw py::value_error(who + ": tokens of shape " + shape_text(tokens) + " hold no sequence");
  if (length > positions)
    throw py::value_error(who + ": sequences of " + std::to_string(length) + " tokens; the model holds " +
                          std::to_string(positions) + " positions");
  nn::batch b(batch, id_values(tokens, who, "token", vocabulary, "the vocabulary"), {}, nn::phase::eval);
  const auto same_shape = [&](const py::array& a, const char* what) {
    if (shape_text(a) != shape_text(tokens))
      throw py::value_error(who + ": " + what + " of shape " + shape_text(a) + " for tokens of shape " +
                            shape_text(tokens));
  };
  if (segments) {
    same_shape(*segments, "token_type_ids");
    b.segments = id_values(*segments, who, "token type", segment_types, "the token types");
  }
  if (mask) {
    same_shape(*mask, "attention_mask");
    const auto m = id_values(*mask, who, "attention_mask value", 2, "the values", true);
    for (std::size_t s = 0; s < batch; ++s) {
      std::size_t valid = 0;
      while (valid < length && m[s * length + valid] == 1) ++valid;
      for (std::size_t t = valid; t < length; ++t)
        if (m[s * length + t] != 0)
          throw py::value_error(who + ": attention_mask of sequence " + std::to_string(s) + " has a 1 at position " +
                                std::to_string(t) + " after a 0 (tprod masks padding at the end of a sequence)");
      if (valid == 0) throw py::value_error(who + ": attention_mask of sequence " + std::to_string(s) + " is all 0");
      b.lengths.push_back(valid);
    }
  }
  return b;
}

/// The logits as a [B, T, V] array ([T, V] for a 1-D input) over the model's (B·T)×V output, or [B, C] ([C]) for a
/// per-sequence head's B×C, without a copy.
template <class T>
py::array logits_array(tensor3<T>&& out, std::size_t batch, std::size_t length, bool per_sequence, bool one) {
  auto* owned = new tensor3<T>(std::move(out));
  py::capsule owner(owned, [](void* p) { delete static_cast<tensor3<T>*>(p); });
  const auto s = py::ssize_t(sizeof(T)), b = py::ssize_t(batch), t = py::ssize_t(length);
  const auto v = py::ssize_t(owned->n());
  if (per_sequence) {
    if (one) return py::array_t<T>({v}, {s * b}, owned->data(), owner);
    return py::array_t<T>({b, v}, {s, s * b}, owned->data(), owner);
  }
  if (one) return py::array_t<T>({t, v}, {s, s * t}, owned->data(), owner);
  return py::array_t<T>({b, t, v}, {s * t, s, s * b * t}, owned->data(), owner);
}

/// One layer's compression as a dict: the layer, the ratio, the ranks, the relative errors.
py::dict compression_dict(const nn::attention_compression& c) {
  py::dict d;
  d["layer"] = c.layer;
  d["compression_ratio"] = c.compression_ratio;
  d["ranks"] = c.ranks;
  d["relative_error"] = py::dict(py::arg("query") = c.relative_error.query, py::arg("key") = c.relative_error.key,
                                 py::arg("value") = c.relative_error.value, py::arg("output") = c.relative_error.output);
  return d;
}
py::dict compression_dict(const nn::ffn_compression& c) {
  py::dict d;
  d["layer"] = c.layer;
  d["compression_ratio"] = c.compression_ratio;
  d["rank"] = c.rank;
  d["relative_error"] = py::dict(py::arg("input") = c.input_error, py::arg("output") = c.output_error);
  return d;
}

/// Runs f(the model's stack of layers) under the lock, without the GIL, and returns its results as dicts.
template <class Kind, class F>
py::list on_layers(model_object<Kind>& g, F&& f) {
  auto results = without_gil([&] {
    std::lock_guard lock(g.busy);
    return f(g.loaded.model.template get<Kind::stack>());
  });
  py::list out;
  for (const auto& r : results) out.append(compression_dict(r));
  return out;
}

template <class T, class Kind>
void bind_model(py::module_& m, const char* name) {
  using object = model_object<Kind>;
  py::class_<object, std::shared_ptr<object>>(m, name)
      .def(py::init([](const std::string& folder, std::uint64_t seed) {
             return std::make_shared<object>(without_gil([&] { return Kind::load(folder, seed); }));
           }),
           py::arg("folder"), py::arg("seed") = 1)
      .def(
          "logits",
          [](object& g, const py::array& tokens, const std::optional<py::array>& segments,
             const std::optional<py::array>& mask) {
            std::size_t types = 1;
            if constexpr (requires { g.loaded.config.segments; }) types = g.loaded.config.segments;
            nn::batch b = token_batch(std::string(Kind::name) + ".logits", tokens, segments, mask,
                                      Kind::vocabulary(g.loaded), Kind::positions(g.loaded), types);
            const std::size_t batch = b.size, length = b.tokens.size() / b.size;
            auto out = without_gil([&] {
              std::lock_guard lock(g.busy);
              const nn::layer_tensor<decltype(g.loaded.model), T> none;
              return tensor3<T>(g.loaded.model.forward(none, b));
            });
            return logits_array(std::move(out), batch, length, Kind::per_sequence, tokens.ndim() == 1);
          },
          py::arg("tokens"), py::arg("token_type_ids") = std::nullopt, py::arg("attention_mask") = std::nullopt)
      .def(
          "save",
          [](object& g, const std::string& folder, const std::string& dtype) {
            without_gil([&] {
              std::lock_guard lock(g.busy);
              Kind::save(folder, g.loaded, dtype);
            });
          },
          py::arg("folder"), py::arg("dtype") = "")
      .def("config_json", [](const object& g) { return Kind::config_json(g.loaded); })
      .def("fresh", [](const object& g) { return Kind::fresh(g.loaded); })
      .def(
          "compress_attention",
          [](object& g, const std::vector<std::size_t>& ranks, const std::vector<std::size_t>& layers) {
            tucker_options o;
            o.ranks = ranks;
            return on_layers(g, [&](auto& stack) { return nn::compress_attention(stack, layers, o); });
          },
          py::arg("ranks"), py::arg("layers"))
      .def(
          "laser_attention",
          [](object& g, std::size_t rank, const std::vector<std::size_t>& layers) {
            return on_layers(g, [&](auto& stack) { return nn::laser_attention(stack, layers, rank); });
          },
          py::arg("rank"), py::arg("layers"))
      .def(
          "laser_mlp",
          [](object& g, std::size_t rank, const std::vector<std::size_t>& layers, bool input, bool output) {
            std::vector<nn::ffn_matrix> which;
            if (input) which.push_back(nn::ffn_matrix::input);
            if (output) which.push_back(nn::ffn_matrix::output);
            return on_layers(g, [&](auto& stack) { return nn::laser_ffn(stack, layers, rank, which); });
          },
          py::arg("rank"), py::arg("layers"), py::arg("input"), py::arg("output"))
      .def("parameter_count", [](object& g) {
        std::lock_guard lock(g.busy);
        std::size_t n = 0;
        g.loaded.model.for_each_parameter([&](std::string_view parameter, auto& v, auto&) {
          if (Kind::counted(g.loaded, parameter)) n += v.size();
        });
        return n;
      });
}

}  // namespace

void bind_models(py::module_& m) {
  bind_model<float, gpt2_kind<float>>(m, "_GPT2_float32");
  bind_model<double, gpt2_kind<double>>(m, "_GPT2_float64");
  using enum nn::bert_head;
  bind_model<float, bert_kind<float, nn::bert_classifier<float>, classifier>>(m, "_BertClassifier_float32");
  bind_model<double, bert_kind<double, nn::bert_classifier<double>, classifier>>(m, "_BertClassifier_float64");
  bind_model<float, bert_kind<float, nn::bert_masked_lm<float>, masked_lm>>(m, "_BertMaskedLM_float32");
  bind_model<double, bert_kind<double, nn::bert_masked_lm<double>, masked_lm>>(m, "_BertMaskedLM_float64");
}

}  // namespace tprod::python
