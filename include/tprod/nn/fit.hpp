#pragma once
/// @file fit.hpp
/// @brief A training loop for classifiers built from tprod's layers: shuffled mini-batches, AdamW with a one-cycle
/// schedule and global gradient-norm clipping (paper 000, Table 5), an evaluation on both splits after every epoch,
/// progress lines on stdout, and an `on_epoch` callback for the caller's own log or checkpoints.
///
/// The data stay the caller's: `make_train(indices)` and `make_test(indices)` build a labelled_batch of the
/// examples at those indices (0-based positions in the split), so any dataset, tokenized or not, plugs in.
/// Repeatable: the batch order comes from `fit_options::seed` (std::mt19937_64); with the same seed, thread count
/// and initial parameters two runs give the same numbers.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/schedule.hpp"

namespace tprod::nn {

/// @brief A batch as a classifier takes it: the input tensor (empty for token models), the batch description
/// (size, tokens, lengths; fit sets the phase) and one label per example.
template <class T>
struct labelled_batch {
  tensor3<T> input;
  batch info;
  std::vector<std::size_t> labels;
};

/// @brief The loop's settings; the defaults are paper 000's (Table 5) apart from the epochs.
struct fit_options {
  std::size_t epochs = 5;
  std::size_t batch_size = 32;
  double lr = 1e-3;                  ///< the one-cycle schedule's peak learning rate
  double weight_decay = 0.01;        ///< AdamW's decoupled weight decay
  double clip = 1.0;                 ///< global gradient-norm limit (0: no clipping)
  std::size_t progress_every = 50;   ///< a progress line every this many steps (0: only the end of each epoch)
  std::size_t eval_train_limit = 0;  ///< evaluate on at most this many training examples (0: all)
  std::uint64_t seed = 1;            ///< the order of the batches
  bool quiet = false;                ///< no progress lines at all
  bool zero_gradients = false;       ///< a diagnostic: zero every gradient before each step, so nothing is learned
};

/// @brief What one epoch ended with (the argument of `on_epoch`).
struct epoch_report {
  std::string name;
  std::size_t epoch = 0, step = 0;   ///< 1-based epoch; optimizer steps taken so far
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double train_seconds = 0;          ///< training time so far, evaluations excluded
};

/// @brief The last epoch's evaluation and the throughput.
struct fit_result {
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double seconds_per_epoch = 0;     ///< training time only (no evaluation)
  double examples_per_second = 0;   ///< training throughput
};

/// @brief Mean cross-entropy and accuracy of `model` on the first `count` examples of a split, in evaluation mode,
/// in batches of `batch_size`; make(indices) builds the labelled_batch of those examples.
template <class T, class Model, class Make>
std::pair<double, double> evaluate(Model& model, std::size_t count, std::size_t batch_size, Make&& make) {
  if (count == 0) return {0.0, 0.0};
  if (batch_size == 0) throw argument_error("nn::evaluate: batch_size must be at least 1");
  double loss = 0;
  std::size_t correct = 0;
  std::vector<std::size_t> idx;
  for (std::size_t first = 0; first < count; first += batch_size) {
    idx.resize(std::min(batch_size, count - first));
    std::iota(idx.begin(), idx.end(), first);
    labelled_batch<T> b = make(idx);
    b.info.mode = phase::eval;
    const auto r = classification_step(model, b.input, b.info, b.labels);
    loss += r.loss * double(idx.size());
    correct += r.correct;
  }
  return {loss / double(count), double(correct) / double(count)};
}

/// @brief Trains `model` for opts.epochs on n_train examples and evaluates it after every epoch on the training
/// split (at most opts.eval_train_limit examples) and on all n_test test examples, calling on_epoch(epoch_report)
/// then. `name` prefixes the progress lines. Each step: forward and backward of the batch
/// (classification_step), optional gradient zeroing (the diagnostic), clipping to opts.clip, one AdamW step at
/// the one-cycle rate, gradients zeroed.
/// @throws argument_error for zero epochs, batch size or training examples; whatever the model or make_* throw.
template <class T, class Model, class MakeTrain, class MakeTest, class OnEpoch>
fit_result fit(Model& model, const std::string& name, std::size_t n_train, MakeTrain&& make_train, std::size_t n_test,
               MakeTest&& make_test, const fit_options& opts, OnEpoch&& on_epoch) {
  if (opts.epochs == 0 || opts.batch_size == 0 || n_train == 0)
    throw argument_error("nn::fit: epochs (" + std::to_string(opts.epochs) + "), batch_size (" +
                         std::to_string(opts.batch_size) + ") and the training examples (" + std::to_string(n_train) +
                         ") must all be at least 1");
  auto params = parameters<T>(model);
  params.zero_grad();
  adamw<T> opt({opts.lr, 0.9, 0.999, 1e-8, opts.weight_decay});
  const std::size_t steps_per_epoch = (n_train + opts.batch_size - 1) / opts.batch_size;
  const one_cycle schedule{opts.lr, opts.epochs * steps_per_epoch};
  std::vector<std::size_t> order(n_train);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(opts.seed);
  const bool talk = !opts.quiet;
  fit_result res;
  double train_seconds = 0;
  std::size_t step = 0;
  if (talk) {
    std::printf("[%s] %zu parameters, %zu training and %zu test examples, %zu epochs of %zu steps\n", name.c_str(),
                params.count(), n_train, n_test, opts.epochs, steps_per_epoch);
    if (opts.zero_gradients)
      std::printf("[%s] zero_gradients: every gradient is zeroed before each step, so nothing is learned\n",
                  name.c_str());
  }
  for (std::size_t epoch = 1; epoch <= opts.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    const auto t0 = std::chrono::steady_clock::now();
    double window_loss = 0;
    std::size_t window_correct = 0, window_examples = 0;
    auto window_start = t0;
    for (std::size_t s = 0; s < steps_per_epoch; ++s, ++step) {
      const std::size_t first = s * opts.batch_size, count = std::min(opts.batch_size, n_train - first);
      std::vector<std::size_t> idx(order.begin() + std::ptrdiff_t(first),
                                   order.begin() + std::ptrdiff_t(first + count));
      labelled_batch<T> b = make_train(idx);
      b.info.mode = phase::train;
      const auto r = classification_step(model, b.input, b.info, b.labels);
      if (opts.zero_gradients) params.zero_grad();
      if (opts.clip > 0) clip_grad_norm(params.grads, opts.clip);
      nn::step(opt, params, schedule(step));
      params.zero_grad();
      window_loss += r.loss * double(count);
      window_correct += r.correct;
      window_examples += count;
      const bool report = opts.progress_every != 0 && (s + 1) % opts.progress_every == 0;
      if (talk && (report || s + 1 == steps_per_epoch)) {
        const auto now = std::chrono::steady_clock::now();
        const double sec = std::chrono::duration<double>(now - window_start).count();
        std::printf("[%s] epoch %zu  step %zu/%zu  loss %.4f  accuracy %5.1f%%  %.0f examples/s  lr %.2e\n",
                    name.c_str(), epoch, s + 1, steps_per_epoch, window_loss / double(window_examples),
                    100.0 * double(window_correct) / double(window_examples), double(window_examples) / sec,
                    schedule(step));
        std::fflush(stdout);
        window_loss = 0;
        window_correct = window_examples = 0;
        window_start = now;
      }
    }
    train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::size_t n_eval = opts.eval_train_limit ? std::min(opts.eval_train_limit, n_train) : n_train;
    std::tie(res.train_loss, res.train_accuracy) = evaluate<T>(model, n_eval, opts.batch_size, make_train);
    std::tie(res.test_loss, res.test_accuracy) = evaluate<T>(model, n_test, opts.batch_size, make_test);
    if (talk) {
      std::printf("[%s] epoch %zu done: train loss %.4f accuracy %.2f%%, test loss %.4f accuracy %.2f%% (%.1f s)\n",
                  name.c_str(), epoch, res.train_loss, 100 * res.train_accuracy, res.test_loss,
                  100 * res.test_accuracy, train_seconds / double(epoch));
      std::fflush(stdout);
    }
    on_epoch(epoch_report{name, epoch, step, res.train_loss, res.train_accuracy, res.test_loss, res.test_accuracy,
                          train_seconds});
  }
  res.seconds_per_epoch = train_seconds / double(opts.epochs);
  res.examples_per_second = train_seconds > 0 ? double(opts.epochs * n_train) / train_seconds : 0.0;
  return res;
}

/// @brief The same without a callback.
template <class T, class Model, class MakeTrain, class MakeTest>
fit_result fit(Model& model, const std::string& name, std::size_t n_train, MakeTrain&& make_train, std::size_t n_test,
               MakeTest&& make_test, const fit_options& opts) {
  return fit<T>(model, name, n_train, make_train, n_test, make_test, opts, [](const epoch_report&) {});
}

}  // namespace tprod::nn
