// SPDX-License-Identifier: Apache-2.0
// The text examples' corpus handling (text_data.hpp), compiled once into the examples' support library.
#include "support/text_data.hpp"

namespace tprod::examples {

std::vector<const io::text_example*> pick_documents(const io::text_split& split, std::size_t count, std::uint64_t seed) {
  std::vector<const io::text_example*> docs;
  for (const auto& e : split.examples) docs.push_back(&e);
  std::shuffle(docs.begin(), docs.end(), std::mt19937_64(seed));
  if (count > 0 && count < docs.size()) docs.resize(count);
  return docs;
}

io::vocabulary vocabulary_of(const std::vector<const io::text_example*>& docs, std::size_t size) {
  std::vector<std::string_view> texts;
  for (const auto* d : docs) texts.push_back(d->text);
  return io::vocabulary::build(texts, size);
}

encoded_split encode_documents(const std::vector<const io::text_example*>& docs, const io::vocabulary& vocab,
                               std::size_t length) {
  encoded_split s;
  s.length = length;
  for (const auto* d : docs) {
    const auto ids = vocab.encode(d->text, length);
    // Padding only follows the words and no word maps to pad_id, so the valid length is the count of non-pad ids;
    // an empty document keeps one (padding) token so that mean pooling has something to average.
    const auto words =
        std::size_t(std::count_if(ids.begin(), ids.end(), [](auto id) { return id != io::vocabulary::pad_id; }));
    s.lengths.push_back(std::max<std::size_t>(1, words));
    for (auto id : ids) s.tokens.push_back(std::size_t(id));
    s.labels.push_back(d->label);
  }
  return s;
}

text_dataset load_text_dataset(const options& o, std::size_t length, std::size_t quick_train, std::size_t quick_test) {
  std::printf("reading %s\n", o.data.c_str());
  const auto corpus = io::read_text_corpus(o.data);
  const auto limit = [&](const std::string& key, std::size_t quick_count) {
    return o.extra.count(key) ? o.count(key, 0) : o.quick ? quick_count : 0;
  };
  const auto train_docs = pick_documents(corpus.train, limit("train-docs", quick_train), 11);
  const auto test_docs = pick_documents(corpus.test, limit("test-docs", quick_test), 12);
  auto vocab = vocabulary_of(train_docs);
  auto train = encode_documents(train_docs, vocab, length);
  auto test = encode_documents(test_docs, vocab, length);
  std::string labels;
  for (const auto& l : corpus.labels()) labels += (labels.empty() ? "" : ",") + l;
  return {std::move(vocab), std::move(train), std::move(test), corpus.labels().size(), std::move(labels)};
}

}  // namespace tprod::examples
