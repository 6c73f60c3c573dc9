// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file text_corpus.hpp
/// @brief Text classification corpora in the folder-per-class layout of IMDB's aclImdb:
/// `ROOT/train/<label>/*.txt` and `ROOT/test/<label>/*.txt` (scripts/make-text-corpus.sh builds one from the
/// SpamAssassin corpus, see docs/howto/data.md).
///
/// Labels are the sub-folder names sorted (label id = position), files are read sorted by name within each
/// label, so the order is the same on every machine; shuffle for training. Both splits must have the same
/// labels, and every label folder must hold at least one .txt file. Errors are io_error naming the folder or file.
/// Standard library only.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "tprod/core/error.hpp"

namespace tprod::io {

/// @brief One document: its text, its label id, and the file it came from.
struct text_example {
  std::string text;
  std::size_t label = 0;
  std::filesystem::path file;
};

/// @brief One split: the label names (sorted) and the documents, grouped by label in label order.
struct text_split {
  std::vector<std::string> labels;
  std::vector<text_example> examples;
};

/// @brief Both splits of a corpus; train.labels == test.labels.
struct text_corpus {
  text_split train, test;
  const std::vector<std::string>& labels() const { return train.labels; }
};

namespace detail {

[[noreturn]] inline void corpus_fail(const std::filesystem::path& where, const std::string& problem) {
  throw io_error(where.string() + ": " + problem);
}

/// @brief The entries of a directory passing `keep`, sorted by name. @throws io_error naming the directory.
template <class Keep>
std::vector<std::filesystem::path> sorted_entries(const std::filesystem::path& dir, Keep keep) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) corpus_fail(dir, "no such directory");
  std::vector<std::filesystem::path> out;
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec))
    if (keep(*it)) out.push_back(it->path());
  if (ec) corpus_fail(dir, "cannot list: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string read_text_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) corpus_fail(file, "cannot open for reading");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) corpus_fail(file, "read error");
  return text;
}

}  // namespace detail

/// @brief Reads `ROOT/<split>/<label>/*.txt` (hidden files and other extensions are ignored).
/// @throws io_error naming the missing split folder, a split without label folders, or a label folder
/// without .txt files.
inline text_split read_text_split(const std::filesystem::path& root, std::string_view split) {
  const std::filesystem::path dir = root / split;
  text_split s;
  const auto label_dirs = detail::sorted_entries(dir, [](const std::filesystem::directory_entry& e) {
    return e.is_directory() && e.path().filename().string().front() != '.';
  });
  if (label_dirs.empty()) detail::corpus_fail(dir, "has no label folders (expected " + dir.string() + "/<label>/*.txt)");
  for (const auto& label_dir : label_dirs) {
    const auto files = detail::sorted_entries(label_dir, [](const std::filesystem::directory_entry& e) {
      return e.is_regular_file() && e.path().extension() == ".txt" && e.path().filename().string().front() != '.';
    });
    if (files.empty()) detail::corpus_fail(label_dir, "holds no .txt files");
    for (const auto& f : files) s.examples.push_back({detail::read_text_file(f), s.labels.size(), f});
    s.labels.push_back(label_dir.filename().string());
  }
  return s;
}

/// @brief Reads `ROOT/train` and `ROOT/test`. @throws io_error as read_text_split, and when the two splits have
/// different labels.
inline text_corpus read_text_corpus(const std::filesystem::path& root) {
  text_corpus c{read_text_split(root, "train"), read_text_split(root, "test")};
  if (c.train.labels != c.test.labels) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& l : v) s += (s.empty() ? "" : ", ") + l;
      return s;
    };
    detail::corpus_fail(root, "train has the labels {" + join(c.train.labels) + "} but test has {" +
                                  join(c.test.labels) + "}");
  }
  return c;
}

}  // namespace tprod::io
