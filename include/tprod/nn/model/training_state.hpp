// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file training_state.hpp
/// @brief A training run's whole state in one safetensors file, so that a run can stop and continue to the result
/// an uninterrupted run gives:
///   - the model's parameters under their names ("encoder.0.attn.w_qkv"), as in a checkpoint (checkpoint.hpp);
///   - AdamW's moments under "adamw.m.<name>" and "adamw.v.<name>", its step count as the metadata "adamw.steps";
///   - the caller's progress as further metadata strings (nn::fit: its step, training time, every epoch's
///     evaluation and the settings a resumed run must share).
/// The model may live in either memory space; the file does not record which.
/// Written atomically (the previous state stays until the new one is complete); loaded strictly, like a checkpoint:
/// every tensor in the file with its dtype and shape and nothing else, and nothing changes unless all of it matches.
/// Needs nlohmann-json: link tprod::io.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>
#include <string>
#include <vector>

#include "tprod/nn/model/checkpoint.hpp"
#include "tprod/nn/optim.hpp"

namespace tprod::nn {

/// @brief Writes the parameters of `model`, the moments and step count of `optimizer` (which steps that model's
/// parameters, in their visiting order) and the `progress` strings to `file`, atomically.
/// @throws shape_error when the optimizer's moments do not match the model's tensors (count or shape, naming the
///         tensor); io_error naming the file.
template <std::floating_point T, layer<T> M>
void save_training_state(const std::filesystem::path& file, M& model, const adamw<T, layer_space_t<M>>& optimizer,
                         const std::map<std::string, std::string>& progress = {}) {
  io::safetensors_writer w;
  std::vector<std::string> names;
  std::vector<const layer_tensor<M, T>*> values;
  model.for_each_parameter([&](std::string_view name, layer_tensor<M, T>& value, layer_tensor<M, T>&) {
    w.add(std::string(name), detail::on_host(value));
    names.emplace_back(name);
    values.push_back(&value);
  });
  const auto& m = optimizer.first_moments();
  const auto& v = optimizer.second_moments();
  TPROD_EXPECTS(m.empty() || m.size() == names.size(),
                "nn::save_training_state: the optimizer holds moments for " + std::to_string(m.size()) +
                    " tensors, the model has " + std::to_string(names.size()));
  for (std::size_t i = 0; i < m.size(); ++i) {
    TPROD_EXPECTS(m[i].m() == values[i]->m() && m[i].n() == values[i]->n() && m[i].p() == values[i]->p(),
                  "nn::save_training_state: the optimizer's moment for " + names[i] + " is " + m[i].shape() +
                      ", the parameter is " + values[i]->shape());
    w.add("adamw.m." + names[i], detail::on_host(m[i]));
    w.add("adamw.v." + names[i], detail::on_host(v[i]));
  }
  w.set_metadata("format", "pt");
  w.set_metadata("adamw.steps", std::to_string(optimizer.steps()));
  for (const auto& [k, s] : progress) w.set_metadata(k, s);
  w.write(file);
}

/// @brief Loads a state written by save_training_state into `model` and `optimizer` and returns the file's metadata
/// (the progress strings among it).
/// @throws io_error naming the file for a file that is not a training state, a missing or unexpected tensor or a
///         wrong dtype; shape_error naming both shapes. Neither model nor optimizer changes when it throws.
template <std::floating_point T, layer<T> M>
std::map<std::string, std::string> load_training_state(const std::filesystem::path& file, M& model,
                                                       adamw<T, layer_space_t<M>>& optimizer) {
  const io::safetensors_reader r(file);
  const auto meta = r.metadata();
  const auto steps_it = meta.find("adamw.steps");
  std::size_t steps = 0;
  try {
    if (steps_it == meta.end()) throw std::invalid_argument("missing");
    std::size_t used = 0;
    steps = std::stoull(steps_it->second, &used);
    if (used != steps_it->second.size()) throw std::invalid_argument("trailing text");
  } catch (const std::logic_error&) {
    throw io_error(r.name() + ": not a training state (its metadata has no step count 'adamw.steps')");
  }
  using tensor = layer_tensor<M, T>;
  std::vector<std::pair<std::string, tensor*>> targets;
  model.for_each_parameter([&](std::string_view name, tensor& value, tensor&) { targets.emplace_back(name, &value); });
  const std::size_t count = targets.size();
  std::vector<tensor> m, v;
  if (steps > 0) {
    m.reserve(count);  // the targets point into m and v: no reallocation
    v.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto [name, value] = targets[i];
      m.emplace_back(value->m(), value->n(), value->p());
      v.emplace_back(value->m(), value->n(), value->p());
      targets.emplace_back("adamw.m." + name, &m.back());
      targets.emplace_back("adamw.v." + name, &v.back());
    }
  }
  detail::load_strictly(r, targets, "model's parameter or AdamW moment");
  optimizer.restore(steps, std::move(m), std::move(v));
  return meta;
}

}  // namespace tprod::nn
