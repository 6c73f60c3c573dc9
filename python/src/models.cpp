// SPDX-License-Identifier: Apache-2.0
// Published architectures from Python: tprod.GPT2 reads a Hugging Face GPT-2 checkpoint folder (config.json beside
// model.safetensors or a sharded index; F32, F16 or BF16 weights), computes its logits with tprod's layers, and
// writes it back in the same layout (nn/model/gpt2.hpp).
#include <cstdint>
#include <mutex>

#include "arrays.hpp"
#include "tprod/nn/extern_templates.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/model/gpt2.hpp"

namespace tprod::python {

namespace {

/// A loaded GPT-2; one forward pass at a time (its layers keep their activations between calls).
template <class T>
struct gpt2_object {
  nn::gpt2_checkpoint<T> loaded;
  std::mutex busy;
};

/// The token ids of a [T] or [B, T] integer array, checked against the vocabulary and the positions.
std::pair<std::size_t, std::vector<std::size_t>> token_batch(const py::array& tokens, const nn::gpt2_config& c) {
  const char kind = tokens.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error("tprod.GPT2.logits: tokens must be an integer array, got dtype " +
                         dtype_text(tokens.dtype()));
  if (tokens.ndim() != 1 && tokens.ndim() != 2)
    throw py::value_error("tprod.GPT2.logits: tokens must have shape (T,) or (B, T), got " + shape_text(tokens));
  const auto ids = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(tokens);
  const std::size_t batch = tokens.ndim() == 2 ? std::size_t(tokens.shape(0)) : 1;
  const std::size_t length = std::size_t(tokens.shape(tokens.ndim() - 1));
  if (batch == 0 || length == 0)
    throw py::value_error("tprod.GPT2.logits: tokens of shape " + shape_text(tokens) + " hold no sequence");
  if (length > c.positions)
    throw py::value_error("tprod.GPT2.logits: sequences of " + std::to_string(length) + " tokens; the model holds " +
                          std::to_string(c.positions) + " positions (n_positions)");
  std::vector<std::size_t> out(std::size_t(ids.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t v = ids.data()[i];
    if (v < 0 || std::uint64_t(v) >= c.vocabulary)
      throw py::value_error("tprod.GPT2.logits: token " + std::to_string(v) + " at position " + std::to_string(i) +
                            " is outside the vocabulary 0 … " + std::to_string(c.vocabulary - 1));
    out[i] = std::size_t(v);
  }
  return {batch, std::move(out)};
}

/// The logits as a [B, T, V] array (or [T, V] for a 1-D input) over the model's (B·T)×V output, without a copy.
template <class T>
py::array logits(gpt2_object<T>& g, const py::array& tokens) {
  auto [batch, ids] = token_batch(tokens, g.loaded.config);
  const std::size_t length = ids.size() / batch;
  auto out = without_gil([&] {
    std::lock_guard lock(g.busy);
    const nn::layer_tensor<nn::gpt2_model<T>, T> none;
    return tensor3<T>(g.loaded.model.forward(none, nn::batch(batch, std::move(ids), {}, nn::phase::eval)));
  });
  auto* owned = new tensor3<T>(std::move(out));
  py::capsule owner(owned, [](void* p) { delete static_cast<tensor3<T>*>(p); });
  const auto s = py::ssize_t(sizeof(T)), b = py::ssize_t(batch), t = py::ssize_t(length);
  const auto v = py::ssize_t(owned->n());
  if (tokens.ndim() == 1) return py::array_t<T>({t, v}, {s, s * t}, owned->data(), owner);
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
template <class T, class F>
py::list on_layers(gpt2_object<T>& g, F&& f) {
  auto results = without_gil([&] {
    std::lock_guard lock(g.busy);
    return f(g.loaded.model.template get<3>());
  });
  py::list out;
  for (const auto& r : results) out.append(compression_dict(r));
  return out;
}

template <class T>
void bind_gpt2(py::module_& m, const char* name) {
  using object = gpt2_object<T>;
  py::class_<object, std::shared_ptr<object>>(m, name)
      .def(py::init([](const std::string& folder) {
             auto o = std::make_shared<object>(without_gil([&] { return nn::load_gpt2<T>(folder); }));
             return o;
           }),
           py::arg("folder"))
      .def("logits", &logits<T>, py::arg("tokens"))
      .def(
          "save",
          [](object& g, const std::string& folder, const std::string& dtype) {
            without_gil([&] {
              std::lock_guard lock(g.busy);
              nn::save_gpt2<T>(folder, g.loaded.model, g.loaded.config, dtype);
            });
          },
          py::arg("folder"), py::arg("dtype") = "")
      .def("config_json", [](const object& g) { return nn::gpt2_config_json(g.loaded.config).dump(); })
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
        std::size_t n = 0;  // the head counts once when it is the embedding (tied), as GPT-2's papers count
        g.loaded.model.for_each_parameter([&](std::string_view name, auto& v, auto&) {
          if (name != "head.weight" || !g.loaded.config.tied) n += v.size();
        });
        return n;
      });
}

}  // namespace

void bind_models(py::module_& m) {
  bind_gpt2<float>(m, "_GPT2_float32");
  bind_gpt2<double>(m, "_GPT2_float64");
}

}  // namespace tprod::python
