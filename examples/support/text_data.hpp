// SPDX-License-Identifier: Apache-2.0
#pragma once
// A text corpus as a token model takes it: documents picked in a seeded shuffled order (the corpus is grouped by
// label), encoded by an io::vocabulary into fixed-length rows of word ids with their valid lengths, and served as
// example batches.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support/example_options.hpp"
#include "support/fit.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/io/vocabulary.hpp"

namespace tprod::examples {

/// @brief Documents as fixed-length token rows (document i is row i), with their valid lengths and labels.
struct encoded_split {
  std::size_t length = 0;  ///< T
  std::vector<std::size_t> tokens, lengths, labels;

  std::size_t size() const { return labels.size(); }

  /// @brief The batch of documents `idx` (the input tensor stays empty: the model reads the tokens).
  example_batch<float> batch(const std::vector<std::size_t>& idx) const {
    example_batch<float> b;
    b.info.size = idx.size();
    b.info.tokens.reserve(idx.size() * length);
    for (std::size_t i : idx) {
      b.info.tokens.insert(b.info.tokens.end(), tokens.begin() + std::ptrdiff_t(i * length),
                           tokens.begin() + std::ptrdiff_t((i + 1) * length));
      b.info.lengths.push_back(lengths[i]);
      b.labels.push_back(labels[i]);
    }
    return b;
  }
};

/// @brief `count` documents of a split (all when count is 0) in an order shuffled by `seed`.
std::vector<const io::text_example*> pick_documents(const io::text_split& split, std::size_t count, std::uint64_t seed);

/// @brief The vocabulary of the `size` most frequent words of `docs`.
io::vocabulary vocabulary_of(const std::vector<const io::text_example*>& docs, std::size_t size = 20000);

/// @brief The documents' first `length` words as ids (padded with pad_id); valid length = min(words, length) ≥ 1.
encoded_split encode_documents(const std::vector<const io::text_example*>& docs, const io::vocabulary& vocab,
                               std::size_t length);

/// @brief A corpus as a text classifier trains on it: both splits encoded to `length` tokens over the vocabulary
/// of the 20,000 most frequent training words, and the labels (comma-separated, in label order).
struct text_dataset {
  io::vocabulary vocabulary;
  encoded_split train, test;
  std::size_t classes = 0;
  std::string labels;
};

/// @brief Reads the corpus at o.data and takes --train-docs / --test-docs documents of each split (else
/// quick_train / quick_test in quick mode, else all) in a seeded shuffled order — the corpus is grouped by label,
/// and fit evaluates the training split on a prefix.
/// @throws what io::read_text_corpus throws for a missing or malformed corpus.
text_dataset load_text_dataset(const options& o, std::size_t length, std::size_t quick_train, std::size_t quick_test);

}  // namespace tprod::examples
