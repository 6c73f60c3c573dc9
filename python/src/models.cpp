// SPDX-License-Identifier: Apache-2.0
// Published architectures from Python: tprod.GPT2 reads a Hugging Face GPT-2 checkpoint folder (config.json beside
// model.safetensors or a sharded index; F32, F16 or BF16 weights), computes its logits with tprod's layers, and
// writes it back in the same layout (nn/model/gpt2.hpp).
#include <cstdint>
#include <mutex>

#include "arrays.hpp"
#include "tprod/nn/extern_templates.hpp"
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
      .def("config_json", [](const object& g) { return nn::gpt2_config_json(g.loaded.config).dump(); });
}

}  // namespace

void bind_models(py::module_& m) {
  bind_gpt2<float>(m, "_GPT2_float32");
  bind_gpt2<double>(m, "_GPT2_float64");
}

}  // namespace tprod::python
