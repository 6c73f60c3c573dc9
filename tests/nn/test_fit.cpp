// SPDX-License-Identifier: Apache-2.0
// nn::fit, the library's training loop: it learns a task a small text classifier can learn (and does not with
// its gradients zeroed), reports every epoch, repeats with the same seed, stops and resumes to the same result, and
// refuses empty settings and mismatched states by name.
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "model_test_util.hpp"
#include "scratch_dir.hpp"
#include "tprod/nn/model/fit.hpp"
#include "tprod/nn/model/mpo_finetune.hpp"

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

namespace {

/// A run of the keyword task with dropout (so the masks must repeat too), 4 epochs of 12 steps, its state saved
/// after every epoch and every 5 steps (steps 5, 10, 15, …: step 35 is the 11th step of epoch 3).
struct resumable_run {
  keyword_task train_set{192, 1}, test_set{48, 2};
  nn::fit_options options;
  std::size_t make_train_calls = 0;
  std::size_t stop_at_call = 0;  ///< make_train throws at this call (0: never)
  bool stop_after_epoch = false;  ///< on_epoch throws after the first epoch this run trains
  std::vector<nn::epoch_report> epochs;

  explicit resumable_run(const std::filesystem::path& state) {
    options.epochs = 4;
    options.batch_size = 16;
    options.lr = 2e-2;
    options.quiet = true;
    options.state_file = state;
    options.state_every = 5;
    options.eval_train_limit = 48;  // 3 evaluation batches from make_train per epoch
  }
  static nn::text_classifier_config config() {
    auto c = small_text_config();
    c.dropout = 0.2;
    return c;
  }
  template <class Model>
  nn::fit_result run(Model& model) {
    epochs.clear();
    return nn::fit<double>(
        model, "keyword", 192,
        [&](const auto& idx) {
          if (++make_train_calls == stop_at_call) throw std::runtime_error("stopped");
          return train_set.batch(idx);
        },
        48, [&](const auto& idx) { return test_set.batch(idx); }, options,
        [&](const nn::epoch_report& r) {
          epochs.push_back(r);
          if (stop_after_epoch && r.epoch == 1) throw std::runtime_error("stopped");
        });
  }
};

template <class Model>
std::vector<std::vector<double>> parameter_values(Model& model) {
  std::vector<std::vector<double>> out;
  model.for_each_parameter([&](std::string_view, tprod::tensor3<double>& v, tprod::tensor3<double>&) {
    out.emplace_back(v.data(), v.data() + v.size());
  });
  return out;
}

}  // namespace

TEST_CASE("nn::fit stopped after an epoch and within one, then resumed, ends where an uninterrupted run ends") {
  tprod::test::scratch_dir dir;
  resumable_run whole(dir / "whole.state");
  auto reference = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  const auto expected = whole.run(reference);
  REQUIRE(whole.epochs.size() == 4);
  CHECK(expected.test_accuracy > 0.5);  // it learns (chance: 1/3), so equal results are not trivially equal

  resumable_run parts(dir / "parts.state");
  {  // stopped by the caller after epoch 1: the state of epoch 1 is on disk
    auto model = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
    parts.stop_after_epoch = true;
    CHECK_THROWS_WITH(parts.run(model), "stopped");
  }
  {  // resumed in a fresh process's place (a new model), then stopped inside epoch 3: the state of step 35 remains
    auto model = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
    parts.stop_after_epoch = false;
    parts.options.resume = true;
    parts.make_train_calls = 0;
    parts.stop_at_call = 12 + 3 + 11 + 1;  // epoch 2's 12 steps and 3 evaluation batches, 11 steps of epoch 3, stop
    CHECK_THROWS_WITH(parts.run(model), "stopped");
    REQUIRE(parts.epochs.size() == 2);  // epoch 1 reported again from the state, then epoch 2
    CHECK(parts.epochs[0].test_loss == whole.epochs[0].test_loss);
  }
  auto model = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  parts.stop_at_call = 0;
  parts.make_train_calls = 0;
  const auto resumed = parts.run(model);
  CHECK(parts.make_train_calls == 1 + 3 + 12 + 3);  // epoch 3's last step (36), epoch 4, their evaluations
  REQUIRE(parts.epochs.size() == 4);
  for (std::size_t e = 0; e < 4; ++e) {
    CHECK(parts.epochs[e].epoch == whole.epochs[e].epoch);
    CHECK(parts.epochs[e].step == whole.epochs[e].step);
    CHECK(parts.epochs[e].train_loss == whole.epochs[e].train_loss);
    CHECK(parts.epochs[e].test_loss == whole.epochs[e].test_loss);
    CHECK(parts.epochs[e].test_accuracy == whole.epochs[e].test_accuracy);
  }
  CHECK(resumed.test_loss == expected.test_loss);
  CHECK(parameter_values(model) == parameter_values(reference));  // bit for bit

  // A finished run's state gives its result at once, without training.
  auto again = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  parts.make_train_calls = 0;
  const auto replayed = parts.run(again);
  CHECK(parts.make_train_calls == 0);
  CHECK(replayed.test_accuracy == expected.test_accuracy);
  CHECK(parameter_values(again) == parameter_values(reference));
}

TEST_CASE("nn::fit refuses to resume from a state with other settings or from a file that is no state") {
  tprod::test::scratch_dir dir;
  resumable_run first(dir / "run.state");
  first.options.epochs = 1;
  auto model = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  first.run(model);

  resumable_run longer(dir / "run.state");
  longer.options.epochs = 2;
  longer.options.resume = true;
  auto other = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  CHECK_THROWS_WITH_AS(longer.run(other), doctest::Contains("written with epochs = 1, this run has epochs = 2"),
                       tprod::argument_error);

  auto untouched = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  CHECK(parameter_values(other) == parameter_values(untouched));  // the refused state changed nothing

  tprod::nn::save_checkpoint<double>(dir / "weights.safetensors", model);
  resumable_run from_weights(dir / "weights.safetensors");
  from_weights.options.resume = true;
  CHECK_THROWS_WITH_AS(from_weights.run(other), doctest::Contains("not a training state"), tprod::io_error);

  auto wider_config = resumable_run::config();
  wider_config.width = 12;
  wider_config.hidden = 12;
  auto wider = nn::make_text_classifier<double>(wider_config, tprod::dct{});
  resumable_run mismatched(dir / "run.state");
  mismatched.options.epochs = 1;
  mismatched.options.resume = true;
  CHECK_THROWS_AS(mismatched.run(wider), tprod::shape_error);

  // With no state yet, resume starts from the beginning.
  resumable_run fresh(dir / "none.state");
  fresh.options.epochs = 1;
  fresh.options.resume = true;
  auto new_model = nn::make_text_classifier<double>(resumable_run::config(), tprod::dct{});
  fresh.run(new_model);
  CHECK(std::filesystem::exists(dir / "none.state"));

  // resume or state_every with no state_file would do nothing: refused, not ignored.
  resumable_run nowhere("");
  nowhere.options.resume = true;
  CHECK_THROWS_WITH_AS(nowhere.run(new_model), doctest::Contains("resume needs a state_file"), tprod::argument_error);
  nowhere.options.resume = false;  // state_every = 5 is still set
  CHECK_THROWS_WITH_AS(nowhere.run(new_model), doctest::Contains("state_every needs a state_file"),
                       tprod::argument_error);
}

TEST_CASE("nn::fit's after_step changes the parameter list mid-run (paper 003's dynamic strategy) and trains it") {
  const keyword_task train_set(192, 1), test_set(48, 2);
  auto model = nn::make_text_classifier<double>(small_text_config(), tprod::dct{});
  nn::mpo_overparameterized<double, decltype(model)> over(model);
  nn::fit_options o;
  o.epochs = 20;
  o.batch_size = 16;
  o.lr = 2e-2;
  o.quiet = true;
  tprod::tensor3<double> at_round;
  std::vector<std::size_t> calls;
  o.after_step = [&](std::size_t step) {
    calls.push_back(step);
    if (step != 24) return false;
    over.over_parameterize("head.weight");  // from here the head trains as MPO cores
    const auto dense = nn::parameters<double>(model);
    for (std::size_t i = 0; i < dense.size(); ++i)
      if (dense.values.names[i] == "head.weight") at_round = *dense.values.tensors[i];
    return true;
  };
  const auto r = nn::fit<double>(
      over, "dynamic", 192, [&](const auto& idx) { return train_set.batch(idx); }, 48,
      [&](const auto& idx) { return test_set.batch(idx); }, o);
  CHECK(calls.size() == 20 * 12);
  CHECK(calls.front() == 1);
  CHECK(nn::parameters<double>(over).values.names.back() == "head.weight.core_2");
  // The cores were trained after the round: the merged head moved away from where it was over-parameterized.
  over.merged();
  const auto dense = nn::parameters<double>(model);
  for (std::size_t i = 0; i < dense.size(); ++i)
    if (dense.values.names[i] == "head.weight") CHECK(max_diff(*dense.values.tensors[i], at_round) > 1e-3);
  CHECK(at_round.size() > 0);
  CHECK(r.test_accuracy >= 0.9);
  // A parameter list that changes cannot be saved and resumed.
  o.state_file = "unused.safetensors";
  CHECK_THROWS_WITH_AS(nn::fit<double>(
                           over, "dynamic", 192, [&](const auto& idx) { return train_set.batch(idx); }, 48,
                           [&](const auto& idx) { return test_set.batch(idx); }, o),
                       doctest::Contains("after_step cannot write a training state"), tprod::argument_error);
}
