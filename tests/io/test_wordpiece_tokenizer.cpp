// SPDX-License-Identifier: Apache-2.0
// BERT's WordPiece (io/wordpiece_tokenizer.hpp) on a vocabulary written here: cleaning, lower-casing and accent
// stripping, punctuation and CJK splits, the greedy longest match with "##" continuations, [UNK], the model's
// framing and truncation, decoding, and bad files. bert-base-uncased's vocabulary against a reference written from
// tokenization.py is in python/tests/test_bert_tokenizer.py.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "tprod/io/wordpiece_tokenizer.hpp"

using namespace tprod;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

const std::vector<std::string> small_vocabulary = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "un",   "##aff", "##able",
                                                   "!",     ",",     "run",   "##ning", "cafe", "中",    "x",
                                                   "##x",   "a",     "b",     "c"};

io::wordpiece_tokenizer make_small(scratch_dir& dir, bool lower = true) {
  std::ofstream out(dir / "vocab.txt");
  for (const auto& t : small_vocabulary) out << t << "\n";
  out.close();
  return io::wordpiece_tokenizer(dir / "vocab.txt", lower);
}

}  // namespace

TEST_CASE("wordpiece_tokenizer: tokenization.py's steps, in order") {
  scratch_dir dir;
  const auto t = make_small(dir);
  using v = std::vector<std::string>;
  CHECK(t.size() == small_vocabulary.size());
  CHECK(t.tokenize("Unaffable, RUNNING!") == v{"un", "##aff", "##able", ",", "run", "##ning", "!"});
  // accents stripped after NFD (é = e + U+0301; the precomposed é too), control characters dropped, tabs split
  CHECK(t.tokenize("Caf\u00e9\tcafe\u0301\x07!") == v{"cafe", "cafe", "!"});
  CHECK(t.tokenize("x中x") == v{"x", "中", "x"});          // CJK ideographs stand alone
  CHECK(t.tokenize("unx") == v{"un", "##x"});
  CHECK(t.tokenize("uny") == v{"[UNK]"});  // "##y" matches nothing: the whole word is [UNK]
  CHECK(t.tokenize(std::string(100, 'x')).size() == 100);   // x ##x … : 100 characters is still a word
  CHECK(t.tokenize(std::string(101, 'x')) == v{"[UNK]"});   // beyond: [UNK]
  CHECK(t.tokenize("a\xff" "b") == v{"[UNK]"});             // invalid UTF-8 is U+FFFD, dropped: "ab" has no piece
  CHECK(t.tokenize("").empty());
  CHECK(t.tokenize(" \u3000\u2028 ").empty());
  const auto cased = make_small(dir, false);
  CHECK(cased.tokenize("Run run") == v{"[UNK]", "run"});
  CHECK(t.ids("run!") == std::vector<std::size_t>{9, 7});
}

TEST_CASE("wordpiece_tokenizer: [CLS] and [SEP], segments, truncation, decoding") {
  scratch_dir dir;
  const auto t = make_small(dir);
  const auto one = t.encode("a b c");
  CHECK(one.ids == std::vector<std::size_t>{2, 15, 16, 17, 3});
  CHECK(one.segments == std::vector<std::size_t>(5, 0));
  const auto two = t.encode("a b c", "x x", 7);  // longest first: a b | x x
  CHECK(two.ids == std::vector<std::size_t>{2, 15, 16, 3, 13, 13, 3});
  CHECK(two.segments == std::vector<std::size_t>{0, 0, 0, 0, 1, 1, 1});
  CHECK(message_of<argument_error>([&] { (void)t.encode("a", std::nullopt, 2); }).find("max_length 2") !=
        std::string::npos);
  CHECK(t.decode(t.ids("unaffable running")) == "unaffable running");
  CHECK(t.token(5) == "##aff");
  CHECK(t.id("[SEP]") == 3);
  CHECK(message_of<argument_error>([&] { (void)t.decode(std::vector<std::size_t>{1, 18}); })
            .find("id 18 at position 1") != std::string::npos);
}

TEST_CASE("wordpiece_tokenizer: bad vocabularies refused by file and line") {
  scratch_dir dir;
  const auto refused = [&](const std::string& text) {
    std::ofstream(dir / "v.txt") << text;
    return message_of<io_error>([&] { io::wordpiece_tokenizer t(dir / "v.txt"); });
  };
  CHECK(refused("[UNK]\n[CLS]\n[SEP]\na\na\n").find("line 5 repeats the token 'a'") != std::string::npos);
  CHECK(refused("[UNK]\n\n").find("line 2 is empty") != std::string::npos);
  CHECK(refused("[UNK]\n[SEP]\n").find("no token [CLS]") != std::string::npos);
  CHECK(message_of<io_error>([&] { io::wordpiece_tokenizer t(dir / "none.txt"); }).find("cannot be opened") !=
        std::string::npos);
  CHECK(message_of<io_error>([&] { (void)io::wordpiece_tokenizer::from_folder(dir.path); }).find("no vocab.txt") !=
        std::string::npos);
}
