// SPDX-License-Identifier: Apache-2.0
// GPT-2's byte-level BPE (io/bpe_tokenizer.hpp) on a vocabulary written here: the pattern's pieces, the merges by
// rank with every occurrence of a pair taken left to right, ids, decoding, invalid UTF-8 and bad files. The real
// GPT-2 files against a reference written from encoder.py are in python/tests/test_gpt2_tokenizer.py.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "tprod/io/bpe_tokenizer.hpp"

using namespace tprod;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

/// A vocabulary of the printable ASCII symbols (ids 0 … 93), Ġ (the space byte's symbol, 94), Ċ (newline, 95) and
/// the merges "a b" (rank 0, id 96), "ab c" (1, 97), "x x" (2, 98), "Ġ ab" (3, 99).
io::bpe_tokenizer make_small(scratch_dir& dir) {
  std::string json = "{";
  int id = 0;
  for (int b = '!'; b <= '~'; ++b) {
    const std::string s(1, char(b));
    json += (b == '"' || b == '\\' ? "\"\\" + s : "\"" + s) + "\": " + std::to_string(id++) + ", ";
  }
  json += "\"\\u0120\": 94, \"\\u010a\": 95, \"ab\": 96, \"abc\": 97, \"xx\": 98, \"\\u0120ab\": 99}";
  std::ofstream(dir / "encoder.json") << json;
  std::ofstream(dir / "vocab.bpe") << "#version: 0.2\na b\nab c\nx x\n\xc4\xa0 ab\n";
  return io::bpe_tokenizer(dir / "encoder.json", dir / "vocab.bpe");
}

}  // namespace

TEST_CASE("bpe_tokenizer: GPT-2's pattern splits text into pieces") {
  scratch_dir dir;
  const auto t = make_small(dir);
  using v = std::vector<std::string>;
  CHECK(t.pieces("Hello world! I'm here") == v{"Hello", " world", "!", " I", "'m", " here"});
  CHECK(t.pieces("they're 42x") == v{"they", "'re", " 42", "x"});
  CHECK(t.pieces("a   b") == v{"a", "  ", " b"});       // \s+(?!\S) leaves the last space to " b"
  CHECK(t.pieces("a\n\nb") == v{"a", "\n", "\n", "b"});  // a lone \s before a non-space: \s+
  CHECK(t.pieces("end  ") == v{"end", "  "});
  CHECK(t.pieces("\xc3\xa7" "a va?") == v{"\xc3\xa7" "a", " va", "?"});  // ç is a letter
  CHECK(t.pieces("x\xff" "y") == v{"x", "\xef\xbf\xbd", "y"});       // an invalid byte reads as U+FFFD
  CHECK(t.pieces("").empty());
}

TEST_CASE("bpe_tokenizer: merges by rank, every occurrence of the best pair left to right") {
  scratch_dir dir;
  const auto t = make_small(dir);
  CHECK(t.size() == 100);
  CHECK(t.encode("abc") == std::vector<std::size_t>{97});
  CHECK(t.encode("abab") == std::vector<std::size_t>{96, 96});
  CHECK(t.encode("xxx") == std::vector<std::size_t>{98, t.id("x")});
  CHECK(t.encode(" ab") == std::vector<std::size_t>{99});      // "a b" first, then "Ġ ab"
  CHECK(t.encode(" abc") == std::vector<std::size_t>{94, 97});  // "ab c" ranks before "Ġ ab"
  for (const std::string s : {"abc abcab x", "Hello, world!\n", ""})
    CHECK(t.decode(t.encode(s)) == s);
  const std::vector<std::size_t> out_of_range{1, 100};
  CHECK(message_of<argument_error>([&] { (void)t.decode(out_of_range); }).find("id 100 at position 1") !=
        std::string::npos);
  CHECK_THROWS_AS((void)t.id("abcd"), argument_error);
  CHECK(message_of<io_error>([&] { (void)t.encode("\xc3\xa7"); }).find("encoder.json does not have") !=
        std::string::npos);  // ç's bytes have no symbols in this small vocabulary
}

TEST_CASE("bpe_tokenizer: malformed files are refused naming the file and line") {
  scratch_dir dir;
  (void)make_small(dir);
  std::ofstream(dir / "bad.bpe") << "#version: 0.2\na b\nab\n";
  CHECK(message_of<io_error>([&] { io::bpe_tokenizer(dir / "encoder.json", dir / "bad.bpe"); }).find("line 3") !=
        std::string::npos);
  std::ofstream(dir / "bad.json") << "{\"a\": 0, \"b\": 2}";
  CHECK(message_of<io_error>([&] { io::bpe_tokenizer(dir / "bad.json", dir / "vocab.bpe"); }).find("'b'") !=
        std::string::npos);
  std::ofstream(dir / "text.json") << "[1, 2]";
  CHECK_THROWS_AS(io::bpe_tokenizer(dir / "text.json", dir / "vocab.bpe"), io_error);
  CHECK(message_of<io_error>([&] { io::bpe_tokenizer(dir / "none.json", dir / "vocab.bpe"); })
            .find("cannot be opened") != std::string::npos);
}
