// SPDX-License-Identifier: Apache-2.0
#pragma once
// The scratch paths of a fuzz target that reads through the file system: two per process (the input and a
// round trip's copy), named after the target and the process id in the temporary folder, removed (files or whole
// folders) when the process exits; and the one way they write a file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

/// Writes `bytes` to `file`, replacing it.
inline void write_file(const std::filesystem::path& file, std::string_view bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
}

struct fuzz_scratch {
  std::filesystem::path input, again;
  explicit fuzz_scratch(const std::string& target) : input(path(target, "")), again(path(target, "-again")) {}
  fuzz_scratch(const fuzz_scratch&) = delete;
  fuzz_scratch& operator=(const fuzz_scratch&) = delete;
  ~fuzz_scratch() {
    std::error_code ec;
    std::filesystem::remove_all(input, ec);
    std::filesystem::remove_all(again, ec);
  }
  static std::filesystem::path path(const std::string& target, const char* suffix) {
    return std::filesystem::temp_directory_path() / ("tprod-" + target + "-" + std::to_string(::getpid()) + suffix);
  }
};
