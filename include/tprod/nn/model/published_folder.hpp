// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file published_folder.hpp
/// @brief What every published architecture (gpt2.hpp, bert.hpp) does with a checkpoint folder in the Hugging Face
/// layout: config.json's fields read strictly (the field's name in every error), the weights file found (the sharded
/// index model.safetensors.index.json, else model.safetensors), a layer of zeros for the weights to overwrite, and
/// the folder written (config.json and model.safetensors both, or neither). Needs nlohmann-json: link tprod::io.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tprod/io/atomic_file.hpp"
#include "tprod/io/json_file.hpp"
#include "tprod/io/safetensors.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace tprod::nn::detail {

/// A non-negative integer field, or `fallback` when the field is absent or null.
inline std::size_t json_count(const nlohmann::json& j, const char* field, std::size_t fallback,
                              const std::string& file) {
  if (!j.contains(field) || j[field].is_null()) return fallback;
  if (!j[field].is_number_unsigned())
    throw io_error(file + ": field '" + field + "' must be a non-negative integer, got " + j[field].dump());
  return j[field].get<std::size_t>();
}

inline double json_number(const nlohmann::json& j, const char* field, double fallback, const std::string& file) {
  if (!j.contains(field) || j[field].is_null()) return fallback;
  if (!j[field].is_number()) throw io_error(file + ": field '" + field + "' must be a number, got " + j[field].dump());
  return j[field].get<double>();
}

inline bool json_flag(const nlohmann::json& j, const char* field, bool fallback, const std::string& file) {
  if (!j.contains(field) || j[field].is_null()) return fallback;
  if (!j[field].is_boolean()) throw io_error(file + ": field '" + field + "' must be true or false, got " + j[field].dump());
  return j[field].get<bool>();
}

inline std::string json_text(const nlohmann::json& j, const char* field, const std::string& fallback,
                             const std::string& file) {
  if (!j.contains(field) || j[field].is_null()) return fallback;
  if (!j[field].is_string()) throw io_error(file + ": field '" + field + "' must be a string, got " + j[field].dump());
  return j[field].get<std::string>();
}

/// An activation field as Hugging Face's configs name it (ACT2FN's names): gelu_new, gelu_pytorch_tanh and gelu_fast
/// are GELU's tanh form, gelu the exact one.
inline activation json_activation(const nlohmann::json& j, const char* field, const std::string& fallback,
                                  const std::string& file) {
  const std::string name = j.contains(field) ? j[field].dump() : "\"" + fallback + "\"";
  if (name == "\"gelu_new\"" || name == "\"gelu_pytorch_tanh\"" || name == "\"gelu_fast\"") return activation::gelu_tanh;
  if (name == "\"gelu\"") return activation::gelu;
  if (name == "\"relu\"") return activation::relu;
  if (name == "\"tanh\"") return activation::tanh;
  throw io_error(file + ": " + field + " " + name + " is not one tprod has (gelu_new, gelu_pytorch_tanh, gelu_fast, " +
                 "gelu, relu, tanh)");
}

/// The name json_activation reads back as a.
inline const char* published_name(activation a) {
  switch (a) {
    case activation::gelu_tanh:
      return "gelu_new";
    case activation::gelu:
      return "gelu";
    case activation::relu:
      return "relu";
    case activation::tanh:
      return "tanh";
  }
  return "?";
}

/// config.json as an object whose model_type is `type`.
inline nlohmann::json read_config_of(const std::filesystem::path& file, const std::string& type, const char* who) {
  nlohmann::json j = io::read_json_file(file);
  const std::string f = file.string();
  if (!j.is_object()) throw io_error(f + ": is not a JSON object");
  const std::string found = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>()
                                                                                   : std::string("(none)");
  if (found != type)
    throw io_error(f + ": model_type '" + found + "' is not an architecture " + who + " knows (it reads \"" + type +
                   "\")");
  return j;
}

/// The checkpoint file of a Hugging Face folder: the sharded index when there is one, else model.safetensors.
inline std::filesystem::path checkpoint_in(const std::filesystem::path& folder) {
  for (const char* name : {"model.safetensors.index.json", "model.safetensors"})
    if (std::filesystem::exists(folder / name)) return folder / name;
  throw io_error(folder.string() + ": holds neither model.safetensors nor model.safetensors.index.json (a "
                                   "pytorch_model.bin must be converted to safetensors first)");
}

/// Calls load(reader) with the folder's checkpoint opened (sharded or not) and returns its result.
template <class F>
auto with_checkpoint(const std::filesystem::path& folder, F&& load) {
  const auto file = checkpoint_in(folder);
  if (file.filename().string().ends_with(".index.json")) return load(io::safetensors_shards(file));
  return load(io::safetensors_reader(file));
}

/// One p = 1 layer of cfg's shapes with zero projections and Γ = 1, ℬ = 0: nothing drawn, for a checkpoint to
/// overwrite.
template <std::floating_point T>
encoder_params<T, identity_transform> blank_encoder_layer(const layer_config& cfg) {
  const std::size_t d = cfg.width, hidden = cfg.hidden;
  const auto zero = [](std::size_t m, std::size_t n) {
    return transformed<T, identity_transform>(dextents3(m, n, 1), identity_transform{});
  };
  return {cfg,
          {cfg.heads, cfg.attention, zero(d, 3 * d), zero(1, 3 * d), zero(d, d), zero(1, d)},
          {cfg.act, zero(d, hidden), zero(1, hidden), zero(hidden, d), zero(1, d)},
          make_layer_norm_params<T>(d, 1, cfg.norm, cfg.eps),
          make_layer_norm_params<T>(d, 1, cfg.norm, cfg.eps)};
}

/// Writes config.json and model.safetensors into `folder` (created if needed); on any error neither file is
/// replaced.
inline void write_published_folder(const std::filesystem::path& folder, const nlohmann::json& config,
                                   io::safetensors_writer& w) {
  w.set_metadata("format", "pt");
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw io_error(folder.string() + ": cannot be created (" + ec.message() + ")");
  const std::string json = config.dump(2) + "\n";
  io::atomic_file file(folder / "config.json");
  file.write(json.data(), json.size());
  file.finish();
  w.write(folder / "model.safetensors");
  file.commit();
}

}  // namespace tprod::nn::detail
