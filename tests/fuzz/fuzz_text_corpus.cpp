// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the text-corpus reader (ROOT/{train,test}/<label>/*.txt) and the tokenizer behind it: the
// input describes a folder tree, files separated by a zero byte, each "<relative path>\n<content>" (the path's
// bytes limited to [a-z0-9._/-], no "..", at most 32 files). The tree is either read or refused with an io_error
// naming the folder, never a crash, hang, leak or undefined behaviour; what is read has matching labels in both
// splits, and a vocabulary built from it encodes every document to ids inside its range.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_scratch.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"

namespace {
bool path_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '/' || c == '-';
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  static const fuzz_scratch scratch("fuzz-corpus");
  const fs::path& root = scratch.input;
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t files = 0;
  for (std::size_t at = 0; at < input.size() && files < 32; ++files) {
    std::size_t end = input.find('\0', at);
    if (end == input.npos) end = input.size();
    const std::string_view record = input.substr(at, end - at);
    at = end + 1;
    const std::size_t newline = record.find('\n');
    const std::string_view path = record.substr(0, newline);
    const std::string_view content = newline == record.npos ? std::string_view() : record.substr(newline + 1);
    if (path.empty() || path.front() == '/' || path.find("..") != path.npos) continue;
    bool ok = true;
    for (char c : path) ok = ok && path_byte(c);
    if (!ok) continue;
    const fs::path file = root / fs::path(path);
    fs::create_directories(file.parent_path(), ec);
    if (ec || fs::is_directory(file, ec)) continue;
    write_file(file, content);
  }
  try {
    const tprod::io::text_corpus c = tprod::io::read_text_corpus(root);
    if (c.train.labels != c.test.labels || c.train.examples.empty() || c.test.examples.empty()) __builtin_trap();
    std::vector<std::string> texts;
    for (const auto& e : c.train.examples) {
      if (e.label >= c.labels().size()) __builtin_trap();
      texts.push_back(e.text);
    }
    const auto v = tprod::io::vocabulary::build(texts, 100);
    for (const auto& e : c.test.examples)
      for (const auto id : v.encode(e.text, 32))
        if (std::size_t(id) >= v.size()) __builtin_trap();
  } catch (const tprod::io_error&) {
  }
  return 0;
}
