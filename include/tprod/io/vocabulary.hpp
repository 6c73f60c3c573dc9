// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file vocabulary.hpp
/// @brief A word-level tokenizer and its vocabulary: the most frequent words of a training set, with ids for
/// padding and unknown words, encoding to fixed-length id sequences, saved beside a checkpoint.
///
/// Words: the text is lower-cased (ASCII) and split on every byte that is not an ASCII letter or digit; bytes
/// of 0x80 and above count as letters, so UTF-8 words stay whole. Ids: 0 is padding ("<pad>"), 1 is unknown
/// ("<unk>"), then the words by decreasing count, ties by byte order, so the same texts always give the same ids.
///
/// File format (plain text, written atomically): the line `# tprod vocabulary 1`, then one token per line in id
/// order, starting with `<pad>` and `<unk>`. Loading checks all of it and names the file and line of a problem.
/// Standard library only.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/io/atomic_file.hpp"

namespace tprod::io {

/// @brief Whether a byte belongs to a word: an ASCII letter or digit, or any byte ≥ 0x80 (UTF-8).
constexpr bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u >= 0x80;
}

/// @brief Calls f(word) for each lower-cased word of the text, in order.
template <class F>
void for_each_word(std::string_view text, F&& f) {
  std::string word;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && is_word_byte(text[i])) {
      const char c = text[i];
      word += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    } else if (!word.empty()) {
      f(std::string_view(word));
      word.clear();
    }
  }
}

/// @brief The lower-cased words of a text.
inline std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  for_each_word(text, [&](std::string_view w) { words.emplace_back(w); });
  return words;
}

/// @brief Word ↔ id for the special tokens and the most frequent words.
class vocabulary {
 public:
  using id_type = std::int32_t;
  static constexpr id_type pad_id = 0;
  static constexpr id_type unk_id = 1;
  static constexpr std::string_view pad_token = "<pad>";
  static constexpr std::string_view unk_token = "<unk>";
  static constexpr std::string_view file_header = "# tprod vocabulary 1";

  /// @brief Only the special tokens.
  vocabulary() : words_{std::string(pad_token), std::string(unk_token)} { index(); }

  /// @brief The `max_words` most frequent words of the texts (ties by byte order) after the two special tokens.
  template <class Texts>
  static vocabulary build(const Texts& texts, std::size_t max_words = 20000) {
    std::unordered_map<std::string, std::size_t> counts;
    for (const auto& t : texts) for_each_word(std::string_view(t), [&](std::string_view w) { ++counts[std::string(w)]; });
    std::vector<std::pair<std::string, std::size_t>> ranked(counts.begin(), counts.end());
    const std::size_t keep = std::min(max_words, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + std::ptrdiff_t(keep), ranked.end(),
                      [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    vocabulary v;
    for (std::size_t r = 0; r < keep; ++r) v.words_.push_back(std::move(ranked[r].first));
    v.index();
    return v;
  }

  /// @brief The number of ids, special tokens included.
  std::size_t size() const { return words_.size(); }
  /// @brief The id of a (lower-case) word, unk_id when it is not in the vocabulary.
  id_type id(std::string_view word) const {
    const auto it = ids_.find(std::string(word));
    return it == ids_.end() ? unk_id : it->second;
  }
  /// @brief The token of an id. @throws std::out_of_range.
  const std::string& token(id_type id) const { return words_.at(std::size_t(id)); }
  /// @brief All tokens in id order.
  const std::vector<std::string>& tokens() const { return words_; }

  /// @brief The ids of the text's words, truncated to the first `length` words or padded with pad_id at the end.
  std::vector<id_type> encode(std::string_view text, std::size_t length) const {
    std::vector<id_type> ids;
    ids.reserve(length);
    for_each_word(text, [&](std::string_view w) {
      if (ids.size() < length) ids.push_back(id(w));
    });
    ids.resize(length, pad_id);
    return ids;
  }

  /// @brief Writes the vocabulary file atomically. @throws io_error naming the file.
  void save(const std::filesystem::path& file) const {
    std::string text(file_header);
    text += '\n';
    for (const auto& w : words_) text.append(w).append(1, '\n');
    atomic_file out(file);
    out.write(text.data(), text.size());
    out.commit();
  }

  /// @brief Reads a vocabulary file. @throws io_error naming the file and line of the first problem.
  static vocabulary load(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw io_error(file.string() + ": cannot open for reading");
    auto fail = [&](std::size_t line, const std::string& problem) {
      throw io_error(file.string() + ":" + std::to_string(line) + ": " + problem);
    };
    std::string line;
    if (!std::getline(in, line) || line != file_header)
      fail(1, "not a tprod vocabulary file (the first line must be '" + std::string(file_header) + "')");
    vocabulary v;
    v.words_.clear();
    v.ids_.clear();
    for (std::size_t n = 2; std::getline(in, line); ++n) {
      const std::size_t id = v.words_.size();
      const bool special = id == std::size_t(pad_id) || id == std::size_t(unk_id);
      if (special) {
        const std::string_view want = id == std::size_t(pad_id) ? pad_token : unk_token;
        if (line != want) fail(n, "id " + std::to_string(id) + " must be '" + std::string(want) + "', got '" + line + "'");
      } else if (line.empty() || !std::all_of(line.begin(), line.end(), [](char c) { return is_word_byte(c) && !(c >= 'A' && c <= 'Z'); })) {
        fail(n, "'" + line + "' is not a lower-case word");
      }
      v.words_.push_back(line);
      if (v.ids_.count(line)) fail(n, "'" + line + "' appears twice");
      v.ids_.emplace(line, id_type(id));
    }
    if (in.bad()) throw io_error(file.string() + ": read error");
    if (v.words_.size() < 2) fail(v.words_.size() + 2, "the file ends before the special tokens <pad> and <unk>");
    return v;
  }

 private:
  void index() {
    ids_.clear();
    for (std::size_t i = 0; i < words_.size(); ++i) ids_.emplace(words_[i], id_type(i));
  }

  std::vector<std::string> words_;
  std::unordered_map<std::string, id_type> ids_;
};

}  // namespace tprod::io
