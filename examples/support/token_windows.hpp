// SPDX-License-Identifier: Apache-2.0
#pragma once
// Next-token prediction on a text corpus: each document's token ids (from any tokenizer) cut into windows of T
// tokens, served as batches with every position labelled by the next token (nn::next_token_labels), and the
// unigram baseline's perplexity on them.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "support/fit.hpp"
#include "tprod/io/text_corpus.hpp"
#include "tprod/nn/model/language_model.hpp"

namespace tprod::examples {

/// @brief Windows of `length` token ids (window i is row i, padded after its valid length), served as batches
/// labelled with every position's next token.
struct token_windows {
  std::size_t length = 0;  ///< T
  std::vector<std::size_t> tokens, lengths;

  std::size_t size() const { return lengths.size(); }
  /// Every label of the split: the next-token targets of all windows (ignore_label excluded).
  std::vector<std::size_t> targets() const {
    std::vector<std::size_t> all;
    for (auto y : nn::next_token_labels(tokens, length, lengths))
      if (y != nn::ignore_label) all.push_back(y);
    return all;
  }
  example_batch<float> batch(const std::vector<std::size_t>& idx) const {
    example_batch<float> b;
    b.info.size = idx.size();
    for (std::size_t i : idx) {
      b.info.tokens.insert(b.info.tokens.end(), tokens.begin() + std::ptrdiff_t(i * length),
                           tokens.begin() + std::ptrdiff_t((i + 1) * length));
      b.info.lengths.push_back(lengths[i]);
    }
    b.labels = nn::next_token_labels(b.info.tokens, length, b.info.lengths);
    return b;
  }
};

/// @brief The first `max_windows` windows of `length` tokens of every document, its ids given by
/// ids_of(document) (at least length·max_windows of them where the document has them); a window needs 2 tokens
/// (one prediction), so a final window of a single token is dropped. Padding is `pad` (never a label).
template <class IdsOf>
token_windows cut_windows(const std::vector<const io::text_example*>& docs, IdsOf&& ids_of, std::size_t length,
                          std::size_t max_windows, std::size_t pad) {
  token_windows w;
  w.length = length;
  for (const auto* d : docs) {
    const std::vector<std::size_t> ids = ids_of(*d);
    const std::size_t usable = std::min(ids.size(), length * max_windows);
    for (std::size_t first = 0; first + 1 < usable; first += length) {
      const std::size_t n = std::min(length, usable - first);
      w.tokens.insert(w.tokens.end(), ids.begin() + std::ptrdiff_t(first), ids.begin() + std::ptrdiff_t(first + n));
      w.tokens.resize(w.tokens.size() + (length - n), pad);
      w.lengths.push_back(n);
    }
  }
  return w;
}

/// @brief The unigram model of the training targets with add-one smoothing over the vocabulary's tokens (less
/// `never`, a token no label can be, such as padding), and its perplexity exp(−mean log p(y)) on the test targets.
inline double unigram_perplexity(const std::vector<std::size_t>& train, const std::vector<std::size_t>& test,
                                 std::size_t vocabulary, std::optional<std::size_t> never = std::nullopt) {
  std::vector<double> counts(vocabulary, 1.0);
  if (never) counts[*never] = 0;
  for (auto y : train) counts[y] += 1;
  const double total = double(train.size() + vocabulary - (never ? 1 : 0));
  double nll = 0;
  for (auto y : test) nll -= std::log(counts[y] / total);
  return std::exp(nll / double(test.size()));
}

}  // namespace tprod::examples
