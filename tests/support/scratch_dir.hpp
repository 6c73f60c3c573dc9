// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fresh temporary directory per test, removed with everything in it afterwards; and helpers to list it and to
// catch an exception's message.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace tprod::test {

struct scratch_dir {
  std::filesystem::path path;
  scratch_dir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("tprod-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return path / name; }
  /// The names of the entries in the directory (hidden temporary files included).
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path)) names.insert(e.path().filename().string());
    return names;
  }
};

inline std::string file_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
inline void put_bytes(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

/// The message of the exception of type E that f throws ("" and a failed check if it throws none).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL_CHECK("the expected exception was not thrown");
  return {};
}

}  // namespace tprod::test
