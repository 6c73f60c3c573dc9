// SPDX-License-Identifier: Apache-2.0
// The decoder-only language model (nn/model/language_model.hpp): next-token labels, the gradient of the whole
// model, causality (no position sees a later token), learning a language whose next token needs the context (and
// not with its gradients zeroed), and generation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "model_test_util.hpp"
#include "tprod/nn/model/fit.hpp"
#include "tprod/nn/model/language_model.hpp"
#include "tprod/nn/multilinear_attention.hpp"
#include "tprod/transform/dct.hpp"

using namespace nn_test;
using tprod::test::small_lm_config;
namespace nn = tprod::nn;

namespace {

/// Sequences "a b a b a b …" of `length` tokens with a ≠ b drawn from 1…9: from the third token on, the next
/// token is the one two places back, which only attention over the context can tell (the current token alone
/// does not: every token follows every other). The best possible next-token accuracy is (length − 2)/(length − 1)
/// plus a guess at b.
struct alternating_language {
  std::size_t length;
  std::vector<std::vector<std::size_t>> sequences;

  alternating_language(std::size_t n, std::size_t len, std::uint64_t seed) : length(len) {
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t a = 1 + rng() % 9, b = 1 + (a + rng() % 8) % 9;  // b ≠ a
      std::vector<std::size_t> s(len);
      for (std::size_t t = 0; t < len; ++t) s[t] = t % 2 ? b : a;
      sequences.push_back(s);
    }
  }
  nn::labelled_batch<float> batch(const std::vector<std::size_t>& idx) const {
    nn::labelled_batch<float> b;
    b.info.size = idx.size();
    for (std::size_t i : idx) b.info.tokens.insert(b.info.tokens.end(), sequences[i].begin(), sequences[i].end());
    b.labels = nn::next_token_labels(b.info.tokens, length, {});
    return b;
  }
};

nn::fit_result train(nn::language_model<float, tprod::dct>& model, bool zero_gradients) {
  const alternating_language train_set(256, 8, 1), test_set(64, 8, 2);
  nn::fit_options o;
  o.epochs = 12;
  o.batch_size = 16;
  o.lr = 1e-2;
  o.quiet = true;
  o.zero_gradients = zero_gradients;
  return nn::fit<float>(
      model, "lm", 256, [&](const auto& idx) { return train_set.batch(idx); }, 64,
      [&](const auto& idx) { return test_set.batch(idx); }, o);
}

}  // namespace

TEST_CASE("next_token_labels: token t+1 for every valid position but the last, ignore_label elsewhere") {
  const std::vector<std::size_t> tokens{4, 5, 6, 7, 1, 2, 0, 0};
  const auto labels = nn::next_token_labels(tokens, 4, {4, 2});
  const auto x = nn::ignore_label;
  CHECK(labels == std::vector<std::size_t>{5, 6, 7, x, 2, x, x, x});
  CHECK(nn::next_token_labels(tokens, 4, {}) == std::vector<std::size_t>{5, 6, 7, x, 2, 0, 0, x});
  CHECK_THROWS_AS(nn::next_token_labels(tokens, 3, {}), tprod::shape_error);
  CHECK_THROWS_AS(nn::next_token_labels(tokens, 4, {5, 2}), tprod::shape_error);
  CHECK_THROWS_AS(nn::next_token_labels(tokens, 4, {4}), tprod::shape_error);
}

TEST_CASE("language model: the backward pass is the gradient of the forward pass, every parameter") {
  for (const std::size_t p : {std::size_t(1), std::size_t(2)}) {
    CAPTURE(p);
    auto model = nn::make_language_model<double>(small_lm_config(p), tprod::dct{});
    auto f = model_map(model, small_text_batch(), nullptr);
    CHECK(f.forward().m() == 15);  // one row of logits per position
    CHECK(f.forward().n() == 11);
    check_gradients(f, 31 + p);
  }
}

namespace {

/// The largest change of a logit when tokens 3 and 4 of sequence 1 (of small_text_batch, all positions valid)
/// change: at the positions before them, and at those two.
template <class Model>
std::pair<double, double> change_when_later_tokens_change(Model& model) {
  nn::batch b = small_text_batch(nn::phase::eval);
  b.lengths.clear();
  const t3 none;
  const t3 before = model.forward(none, b);
  for (std::size_t t = 3; t < 5; ++t) b.tokens[5 + t] = (b.tokens[5 + t] + 4) % 11;
  const t3 after = model.forward(none, b);
  double earlier = 0, later = 0;
  for (std::size_t row = 0; row < 15; ++row) {
    const bool changed = row == 8 || row == 9;
    for (std::size_t v = 0; v < 11; ++v) {
      double& largest = changed ? later : earlier;
      largest = std::max(largest, std::abs(after(row, v, 0) - before(row, v, 0)));
    }
  }
  return {earlier, later};
}

/// The small config's language model with multi-linear attention (N = 5, R = 2, P = 2) in its causal form.
nn::language_model<double, tprod::dct, nn::multilinear_attention_params<double, tprod::dct>> small_multilinear_lm() {
  const auto c = small_lm_config(2);
  const nn::layer_config cfg = nn::paper000_config(c.width, c.heads, c.hidden, c.slices);
  std::vector<nn::encoder_params<double, tprod::dct, nn::multilinear_attention_params<double, tprod::dct>>> layers;
  for (std::uint64_t i = 0; i < 2; ++i)
    layers.push_back(nn::make_encoder_params_with<double>(
        cfg, tprod::dct{}, 40 + i,
        nn::make_multilinear_attention_params<double>(cfg.width, 5, 2, 2, c.slices, tprod::dct{}, 50 + i)));
  return nn::make_language_model<double>(c, std::move(layers));
}

}  // namespace

TEST_CASE("language model: a position's logits do not depend on any later token") {
  auto model = nn::make_language_model<double>(small_lm_config(2), tprod::dct{});
  const auto [earlier, later] = change_when_later_tokens_change(model);
  CHECK(earlier == 0.0);          // the masked keys' weights are exactly zero, and every other sum is row by row
  CHECK(later > 1e-3);            // and the changed positions do see their own tokens
  model.get<3>().causal = false;  // the check can fail: without the mask, earlier positions see the change
  CHECK(change_when_later_tokens_change(model).first > 1e-6);

  auto multilinear = small_multilinear_lm();  // multi-linear attention's causal form, the same checks
  const auto [ml_earlier, ml_later] = change_when_later_tokens_change(multilinear);
  CHECK(ml_earlier <= 1e-14);  // a prefix sum adds exact zeros for no pair, so only rounding could differ
  CHECK(ml_later > 1e-3);
  multilinear.get<3>().causal = false;
  CHECK(change_when_later_tokens_change(multilinear).first > 1e-6);
}

TEST_CASE("language model with multi-linear attention: gradients of every parameter, generation at length N") {
  auto model = small_multilinear_lm();
  auto f = model_map(model, small_text_batch(), nullptr);
  check_gradients(f, 61);
  nn::generation_options g;  // the layer's length is N = 5: generate pads every window to it
  g.tokens = 4;
  g.seed = 3;
  const auto text = nn::generate<double>(model, {2, 9}, 5, g);
  CHECK(text.size() == 6);
  g.pad = 4;
  CHECK(nn::generate<double>(model, {2, 9}, 5, g) == text);
  CHECK_THROWS_AS(nn::generate<double>(model, {2, 9}, 4, g), tprod::shape_error);  // a window the layer cannot take
}

TEST_CASE("language model: learns a language whose next token needs the context; zeroed gradients do not") {
  auto model = nn::make_language_model<float>(
      [] {
        auto c = small_lm_config(2);
        c.width = 16;
        c.hidden = 32;
        return c;
      }(),
      tprod::dct{});
  const auto learned = train(model, false);
  // Best possible: 6 of the 7 labelled positions are determined, so about 0.87; a model that ignores the context
  // (a bigram) gets about 1/8 at the determined positions.
  CHECK(learned.test_accuracy >= 0.75);
  auto untrained = nn::make_language_model<float>(small_lm_config(2), tprod::dct{});
  const auto none = train(untrained, true);
  CHECK(none.test_accuracy < 0.3);

  // Generation continues the pattern, repeats by seed and respects the exclusions.
  {
    nn::generation_options g;
    g.tokens = 6;
    g.top_k = 1;  // greedy
    const auto out = nn::generate<float>(model, {3, 7, 3}, 8, g);
    CHECK(out == std::vector<std::size_t>{3, 7, 3, 7, 3, 7, 3, 7, 3});
    g.top_k = 11;
    g.temperature = 3;  // flat: every token likely
    g.seed = 9;
    g.excluded = {0, 7};
    const auto a = nn::generate<float>(model, {3, 7, 3}, 4, g), b = nn::generate<float>(model, {3, 7, 3}, 4, g);
    CHECK(a == b);
    CHECK(a.size() == 9);
    g.pad = 9;  // the padding after the window's tokens is masked: another pad id gives the same text
    CHECK(nn::generate<float>(model, {3, 7, 3}, 4, g) == a);
    g.pad = 0;
    for (std::size_t i = 3; i < a.size(); ++i) CHECK((a[i] != 0 && a[i] != 7 && a[i] < 11));
    CHECK_THROWS_AS(nn::generate<float>(model, {}, 4, g), tprod::argument_error);
    g.temperature = 0;
    CHECK_THROWS_AS(nn::generate<float>(model, {3}, 4, g), tprod::argument_error);
  }
}

TEST_CASE("language model: errors name what is wrong") {
  auto c = small_lm_config(2);
  c.vocabulary = 1;
  CHECK_THROWS_WITH_AS(nn::make_language_model<double>(c, tprod::dct{}), doctest::Contains("vocabulary 1"),
                       tprod::shape_error);
  c = small_lm_config(3);  // 3 does not divide d = 8
  CHECK_THROWS_AS(nn::make_language_model<double>(c, tprod::dct{}), tprod::shape_error);
}
