// nn::fit, the library's training loop: it learns a task a small text classifier can learn (and does not with
// its gradients zeroed), reports every epoch, repeats with the same seed, and refuses empty settings by name.
#include <cstdint>
#include <random>
#include <vector>

#include "model_test_util.hpp"
#include "tprod/nn/fit.hpp"

using namespace nn_test;
namespace nn = tprod::nn;

namespace {

/// Sequences of 5 tokens: one keyword (2, 5 or 8: the label) at a random position among filler tokens
/// (1, 3, 4, 6, 7, 9, 10). A classifier must find the keyword wherever it is.
struct keyword_task {
  std::vector<std::vector<std::size_t>> tokens;
  std::vector<std::size_t> labels;

  keyword_task(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::size_t keywords[] = {2, 5, 8}, filler[] = {1, 3, 4, 6, 7, 9, 10};
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t label = i % 3;
      std::vector<std::size_t> seq(5);
      for (auto& t : seq) t = filler[rng() % 7];
      seq[rng() % 5] = keywords[label];
      tokens.push_back(seq);
      labels.push_back(label);
    }
  }
  nn::labelled_batch<double> batch(const std::vector<std::size_t>& idx) const {
    nn::labelled_batch<double> b;
    b.info.size = idx.size();
    for (std::size_t i : idx) {
      b.info.tokens.insert(b.info.tokens.end(), tokens[i].begin(), tokens[i].end());
      b.info.lengths.push_back(5);
      b.labels.push_back(labels[i]);
    }
    return b;
  }
};

struct trained {
  nn::fit_result result;
  std::vector<nn::epoch_report> epochs;
};

trained train(bool zero_gradients) {
  const keyword_task train_set(192, 1), test_set(48, 2);
  auto model = nn::make_text_classifier<double>(small_text_config(), tprod::dct{});
  nn::fit_options o;
  o.epochs = 20;
  o.batch_size = 16;
  o.lr = 2e-2;
  o.quiet = true;
  o.zero_gradients = zero_gradients;
  trained t;
  t.result = nn::fit<double>(
      model, "keyword", 192, [&](const auto& idx) { return train_set.batch(idx); }, 48,
      [&](const auto& idx) { return test_set.batch(idx); }, o, [&](const nn::epoch_report& r) { t.epochs.push_back(r); });
  return t;
}

}  // namespace

TEST_CASE("nn::fit learns a keyword task, reports every epoch and repeats with the same seed") {
  const trained a = train(false);
  CHECK(a.result.test_accuracy >= 0.8);  // chance: 1/3
  REQUIRE(a.epochs.size() == 20);
  for (std::size_t e = 0; e < 20; ++e) {
    CHECK(a.epochs[e].epoch == e + 1);
    CHECK(a.epochs[e].step == (e + 1) * 12);  // 192 examples in batches of 16
    CHECK(a.epochs[e].name == "keyword");
  }
  CHECK(a.epochs.back().train_loss < 0.5 * a.epochs.front().train_loss);
  CHECK(a.epochs.back().test_accuracy == a.result.test_accuracy);
  const trained b = train(false);
  CHECK(b.result.test_loss == a.result.test_loss);
  CHECK(b.result.train_accuracy == a.result.train_accuracy);
}

TEST_CASE("nn::fit with every gradient zeroed learns nothing (the diagnostic the examples' checks rely on)") {
  const trained z = train(true);
  CHECK(z.result.test_accuracy <= 0.6);
  // Only AdamW's decoupled weight decay moves the parameters (toward zero), so the loss barely changes.
  CHECK(z.epochs.back().train_loss == doctest::Approx(z.epochs.front().train_loss).epsilon(0.01));
}

TEST_CASE("nn::fit and nn::evaluate refuse empty settings by name") {
  auto model = nn::make_text_classifier<double>(small_text_config(), tprod::dct{});
  const keyword_task set(6, 3);
  const auto make = [&](const auto& idx) { return set.batch(idx); };
  nn::fit_options o;
  o.quiet = true;
  o.epochs = 0;
  CHECK_THROWS_WITH_AS(nn::fit<double>(model, "m", 6, make, 6, make, o), doctest::Contains("epochs (0)"),
                       tprod::argument_error);
  o.epochs = 1;
  o.batch_size = 0;
  CHECK_THROWS_WITH_AS(nn::fit<double>(model, "m", 6, make, 6, make, o), doctest::Contains("batch_size (0)"),
                       tprod::argument_error);
  o.batch_size = 4;
  CHECK_THROWS_WITH_AS(nn::fit<double>(model, "m", 0, make, 6, make, o), doctest::Contains("training examples (0)"),
                       tprod::argument_error);
  CHECK_THROWS_AS(nn::evaluate<double>(model, 6, 0, make), tprod::argument_error);
  const auto [loss, accuracy] = nn::evaluate<double>(model, 6, 4, make);
  CHECK(loss > 0);
  CHECK(accuracy >= 0);
  CHECK(accuracy <= 1);
}
