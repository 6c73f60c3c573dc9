#pragma once
/// @file checkpoint.hpp
/// @brief Saving and loading a model's parameters as a safetensors file (io/safetensors.hpp), under the names of
/// its parameter tree ("encoder.0.attn.w_qkv"), so weights move between tprod and PyTorch
/// (`safetensors.torch.load_file` gives a dict of tensors of shape [m, n, p], C order, arr[i, j, k] = A(i, j, k)).
///
/// Loading is strict, like PyTorch's `load_state_dict(strict=True)`: every parameter must be in the file with its
/// dtype and shape, and the file must hold nothing else; every error names the file and the parameter. Nothing
/// is changed unless the whole file matches. Writing is atomic (the old file stays until the new one is complete).
/// Needs nlohmann-json: link tprod::io.
#include <filesystem>
#include <map>
#include <string>

#include "tprod/io/safetensors.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

/// @brief Writes every parameter of `model` and the metadata strings to `file`, atomically.
/// @throws io_error naming the file when it cannot be written.
template <std::floating_point T, layer<T> M>
void save_checkpoint(const std::filesystem::path& file, M& model,
                     const std::map<std::string, std::string>& metadata = {}) {
  io::safetensors_writer w;
  model.for_each_parameter([&](std::string_view name, tensor3<T>& v, tensor3<T>&) { w.add(std::string(name), v); });
  w.set_metadata("format", "pt");
  for (const auto& [k, v] : metadata) w.set_metadata(k, v);
  w.write(file);
}

namespace detail {

/// @brief Loads the tensors of `r` into `targets` (name → tensor of the expected shape): every target must be in the
/// file with dtype T and its shape, and the file must hold nothing else; everything is read and checked before
/// anything is overwritten. @throws io_error, shape_error naming the file and the tensor.
template <std::floating_point T>
void load_strictly(const io::safetensors_reader& r, const std::map<std::string, tensor3<T>*>& targets,
                   const std::string& what) {
  for (const auto& [name, _] : targets)
    if (!r.contains(name)) throw io_error(r.name() + ": has no tensor '" + name + "' (" + what + ")");
  for (const auto& name : r.names())
    if (!targets.count(name)) throw io_error(r.name() + ": tensor '" + name + "' is not " + what);
  std::map<std::string, tensor3<T>> loaded;
  for (const auto& [name, t] : targets) {
    tensor3<T> staged(t->m(), t->n(), t->p());
    r.load_into(name, staged);
    loaded.emplace(name, std::move(staged));
  }
  for (const auto& [name, t] : targets) *t = std::move(loaded.at(name));
}

}  // namespace detail

/// @brief Loads every parameter of `model` from `file` and returns the file's metadata.
/// @throws io_error naming the file and the parameter for a missing tensor, a wrong dtype or an unexpected
///         tensor; shape_error naming both shapes for a wrong shape. The model is unchanged when it throws.
template <std::floating_point T, layer<T> M>
std::map<std::string, std::string> load_checkpoint(const std::filesystem::path& file, M& model) {
  const io::safetensors_reader r(file);
  std::map<std::string, tensor3<T>*> targets;
  model.for_each_parameter([&](std::string_view name, tensor3<T>& v, tensor3<T>&) { targets.emplace(name, &v); });
  detail::load_strictly<T>(r, targets, "a parameter of the model");
  return r.metadata();
}

}  // namespace tprod::nn
