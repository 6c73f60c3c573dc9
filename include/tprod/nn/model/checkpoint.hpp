// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file checkpoint.hpp
/// @brief Saving and loading a model's parameters as a safetensors file (io/safetensors.hpp), under the names of
/// its parameter tree ("encoder.0.attn.w_qkv"), so weights move between tprod and PyTorch
/// (`safetensors.torch.load_file` gives a dict of tensors of shape [m, n, p], C order, arr[i, j, k] = A(i, j, k)).
///
/// Loading is strict, like PyTorch's `load_state_dict(strict=True)`: every parameter must be in the file with its
/// dtype and shape, and the file must hold nothing else; every error names the file and the parameter. Nothing
/// is changed unless the whole file matches. Writing is atomic (the old file stays until the new one is complete).
/// A model on the device is saved from and loaded into device memory through a host copy: the file does not record
/// where the model lives, so a checkpoint written from one space loads into the other.
/// Needs nlohmann-json: link tprod::io.
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>
#include <string>

#include "tprod/io/safetensors.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

/// @brief Writes every parameter of `model` and the metadata strings to `file`, atomically: in the model's own
/// dtype, or as `dtype` "F16" or "BF16" (half precision, rounded to nearest even, as published checkpoints are
/// often distributed; io::safetensors_writer::add_as).
/// @throws io_error naming the file when it cannot be written; argument_error for another dtype; numerical_error
///         naming the parameter for a value the half format cannot hold.
template <std::floating_point T, layer<T> M>
void save_checkpoint(const std::filesystem::path& file, M& model,
                     const std::map<std::string, std::string>& metadata = {}, std::string_view dtype = {}) {
  io::safetensors_writer w;
  model.for_each_parameter([&](std::string_view name, layer_tensor<M, T>& v, layer_tensor<M, T>&) {
    if (dtype.empty())
      w.add(std::string(name), detail::on_host(v));
    else
      w.add_as(std::string(name), detail::on_host(v), dtype);
  });
  w.set_metadata("format", "pt");
  for (const auto& [k, v] : metadata) w.set_metadata(k, v);
  w.write(file);
}

namespace detail {

/// @brief Loads the tensors of `r` into `targets` (name and tensor of the expected shape, in the model's visiting
/// order, which is the order problems are reported in): every target must be in the file with dtype T (or one that
/// converts to T exactly) and its shape, and the file must hold nothing else; everything is read (into host memory)
/// and checked before anything is overwritten, then copied into the targets' space.
/// @throws io_error, shape_error naming the file and the tensor.
template <std::floating_point T, memory_space S, class Reader>
void load_strictly(const Reader& r,
                   const std::vector<std::pair<std::string, tensor3<T, dextents3, S>*>>& targets,
                   const std::string& what) {
  std::set<std::string> expected;
  for (const auto& [name, _] : targets) {
    if (!r.contains(name)) throw io_error(r.name() + ": has no tensor for the " + what + " '" + name + "'");
    expected.insert(name);
  }
  for (const auto& name : r.names())
    if (!expected.count(name)) throw io_error(r.name() + ": tensor '" + name + "' is not a " + what);
  std::vector<tensor3<T>> loaded;
  loaded.reserve(targets.size());
  for (const auto& [name, t] : targets) {
    loaded.emplace_back(t->m(), t->n(), t->p());
    r.load_into(name, loaded.back());
  }
  for (std::size_t i = 0; i < targets.size(); ++i) *targets[i].second = to_space<S>(std::move(loaded[i]));
}

}  // namespace detail

/// @brief Loads every parameter of `model` from `file` and returns the file's metadata. `file` is a safetensors
/// file, or the index of a sharded checkpoint (a name ending in ".index.json", as `model.safetensors.index.json`;
/// see io::safetensors_shards), whose shards are then read together as one checkpoint.
/// A tensor of another dtype loads when it converts exactly (F16, BF16, small integers into float; F32 too into
/// double: see io/safetensors.hpp).
/// @throws io_error naming the file and the parameter for a missing tensor, a dtype that does not convert exactly,
///         or an unexpected tensor; shape_error naming both shapes for a wrong shape. The model is unchanged when
///         it throws.
template <std::floating_point T, layer<T> M>
std::map<std::string, std::string> load_checkpoint(const std::filesystem::path& file, M& model) {
  std::vector<std::pair<std::string, layer_tensor<M, T>*>> targets;
  model.for_each_parameter(
      [&](std::string_view name, layer_tensor<M, T>& v, layer_tensor<M, T>&) { targets.emplace_back(name, &v); });
  const auto load = [&](const auto& r) {
    detail::load_strictly(r, targets, "model's parameter");
    return r.metadata();
  };
  const std::string name = file.filename().string();
  if (name.size() > 11 && name.ends_with(".index.json")) return load(io::safetensors_shards(file));
  return load(io::safetensors_reader(file));
}

}  // namespace tprod::nn
