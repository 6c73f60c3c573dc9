// SPDX-License-Identifier: Apache-2.0
// Folder-per-class text corpora and the word tokenizer: a tiny corpus written here whose vocabulary and ids can be
// checked by hand, the vocabulary file round trip, and the error paths.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"

using namespace tprod;
using namespace tprod::io;
using tprod::test::message_of;
using tprod::test::put_bytes;
using tprod::test::scratch_dir;

namespace {
void put_text(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  put_bytes(file, text);
}

/// train: spam/{b,a}.txt, ham/a.txt; test: ham/x.txt, spam/y.txt; plus files the reader must ignore.
void tiny_corpus(const std::filesystem::path& root) {
  put_text(root / "train/spam/b.txt", "Buy now! Buy cheap pills, buy.");
  put_text(root / "train/spam/a.txt", "Cheap, cheap offer");
  put_text(root / "train/ham/a.txt", "The meeting is now at 10am.");
  put_text(root / "train/ham/notes.md", "ignored: not .txt");
  put_text(root / "train/ham/.hidden.txt", "ignored: hidden");
  put_text(root / "test/ham/x.txt", "see you at the meeting");
  put_text(root / "test/spam/y.txt", "BUY pills");
}
}  // namespace

TEST_CASE("text corpus: labels sorted, files sorted within a label, other files ignored") {
  scratch_dir dir;
  tiny_corpus(dir.path);
  const text_corpus c = read_text_corpus(dir.path);
  CHECK(c.labels() == std::vector<std::string>{"ham", "spam"});
  REQUIRE(c.train.examples.size() == 3);
  CHECK(c.train.examples[0].label == 0);
  CHECK(c.train.examples[0].text == "The meeting is now at 10am.");
  CHECK(c.train.examples[1].file.filename() == "a.txt");
  CHECK(c.train.examples[1].label == 1);
  CHECK(c.train.examples[2].text == "Buy now! Buy cheap pills, buy.");
  REQUIRE(c.test.examples.size() == 2);
  CHECK(c.test.examples[1].text == "BUY pills");
}

TEST_CASE("text corpus: missing or empty folders and differing labels are errors naming the folder") {
  scratch_dir dir;
  CHECK(message_of<io_error>([&] { read_text_corpus(dir.path); }).find("train: no such directory") != std::string::npos);
  std::filesystem::create_directories(dir / "train");
  CHECK(message_of<io_error>([&] { read_text_corpus(dir.path); }).find("has no label folders") != std::string::npos);
  std::filesystem::create_directories(dir / "train/ham");
  CHECK(message_of<io_error>([&] { read_text_corpus(dir.path); }).find("ham: holds no .txt files") != std::string::npos);
  put_text(dir / "train/ham/1.txt", "hello");
  put_text(dir / "test/spam/1.txt", "hello");
  CHECK(message_of<io_error>([&] { read_text_corpus(dir.path); })
            .find("train has the labels {ham} but test has {spam}") != std::string::npos);
}

TEST_CASE("tokenizer: lower-cased words split on non-alphanumerics, UTF-8 kept whole") {
  CHECK(split_words("Buy now! 10am, e-mail:x_y") == std::vector<std::string>{"buy", "now", "10am", "e", "mail", "x", "y"});
  CHECK(split_words("Caf\xc3\xa9 ol\xc3\xa9") == std::vector<std::string>{"caf\xc3\xa9", "ol\xc3\xa9"});
  CHECK(split_words(" ,;").empty());
}

TEST_CASE("vocabulary: the most frequent words by count then byte order, ids after <pad> and <unk>") {
  scratch_dir dir;
  tiny_corpus(dir.path);
  const text_corpus c = read_text_corpus(dir.path);
  std::vector<std::string> texts;
  for (const auto& e : c.train.examples) texts.push_back(e.text);
  // Counts: buy 3, cheap 3, now 2, then 1 each: 10am, at, is, meeting, offer, pills, the.
  const vocabulary v = vocabulary::build(texts, 5);
  CHECK(v.tokens() == std::vector<std::string>{"<pad>", "<unk>", "buy", "cheap", "now", "10am", "at"});
  CHECK(v.size() == 7);
  CHECK(v.id("cheap") == 3);
  CHECK(v.id("pills") == vocabulary::unk_id);
  // "BUY pills": buy, unknown, then padding; a longer text is cut after `length` words.
  CHECK(v.encode(c.test.examples[1].text, 4) == std::vector<vocabulary::id_type>{2, 1, 0, 0});
  CHECK(v.encode("now now buy cheap", 2) == std::vector<vocabulary::id_type>{4, 4});
  CHECK(vocabulary::build(texts).size() == 2 + 10);  // every word when fewer than the default 20,000

  v.save(dir / "vocab.txt");
  CHECK(tprod::test::file_bytes(dir / "vocab.txt") == "# tprod vocabulary 1\n<pad>\n<unk>\nbuy\ncheap\nnow\n10am\nat\n");
  const vocabulary back = vocabulary::load(dir / "vocab.txt");
  CHECK(back.tokens() == v.tokens());
  CHECK(back.id("now") == 4);
}

TEST_CASE("vocabulary: malformed files are refused naming the file and line") {
  scratch_dir dir;
  auto reject = [&](const std::string& text) {
    put_bytes(dir / "v.txt", text);
    return message_of<io_error>([&] { vocabulary::load(dir / "v.txt"); });
  };
  CHECK(reject("hello\n").find("v.txt:1: not a tprod vocabulary file") != std::string::npos);
  CHECK(reject("# tprod vocabulary 1\n<unk>\n<pad>\n").find("v.txt:2: id 0 must be '<pad>'") != std::string::npos);
  CHECK(reject("# tprod vocabulary 1\n<pad>\n").find("ends before the special tokens") != std::string::npos);
  CHECK(reject("# tprod vocabulary 1\n<pad>\n<unk>\nbuy\nBuy\n").find("v.txt:5: 'Buy' is not a lower-case word") !=
        std::string::npos);
  CHECK(reject("# tprod vocabulary 1\n<pad>\n<unk>\nbuy\nbuy\n").find("v.txt:5: 'buy' appears twice") != std::string::npos);
  CHECK(reject("# tprod vocabulary 1\n<pad>\n<unk>\n\n").find("v.txt:4: '' is not") != std::string::npos);
  CHECK(message_of<io_error>([&] { vocabulary::load(dir / "none.txt"); }).find("none.txt: cannot open") != std::string::npos);
}
