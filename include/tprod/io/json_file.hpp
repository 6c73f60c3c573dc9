// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file json_file.hpp
/// @brief A whole JSON file parsed, every failure an io_error naming the file (the configs and vocabularies of
/// published checkpoints: config.json, encoder.json). Needs nlohmann-json: link tprod::io.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tprod/core/error.hpp"

namespace tprod::io {

/// @brief The JSON value of `file`. @throws io_error naming the file when it cannot be opened or is not JSON.
inline nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw io_error(file.string() + ": cannot be opened");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw io_error(file.string() + ": is not valid JSON (" + e.what() + ")");
  }
}

}  // namespace tprod::io
