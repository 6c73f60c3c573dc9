#pragma once
// The training loop the examples share: shuffled mini-batches, AdamW with a one-cycle schedule and gradient
// clipping (paper 000, Table 5), an evaluation on both splits after every epoch (logged to the CSV), progress
// lines, and a stop with a clear message when the loss diverges.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "support/training_report.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/schedule.hpp"

namespace tprod::examples {

/// @brief A batch as a model takes it: the input tensor (empty for token models), the batch description
/// (size, tokens, lengths, phase) and the labels.
template <class T>
struct example_batch {
  tensor3<T> input;
  nn::batch info;
  std::vector<std::size_t> labels;
};

struct fit_config {
  std::size_t epochs = 5;
  std::size_t batch_size = 32;
  double lr = 1e-3;  ///< the one-cycle schedule's peak
  double weight_decay = 0.01;
  double clip = 1.0;                 ///< global gradient-norm limit (0: no clipping)
  std::size_t progress_every = 50;   ///< a progress line every this many steps
  std::size_t eval_train_limit = 0;  ///< evaluate on at most this many training examples (0: all)
  std::uint64_t seed = 1;            ///< the order of the batches
  bool zero_gradients = false;       ///< a diagnostic (--zero-gradients): zero every gradient before each step
};

struct fit_result {
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double seconds_per_epoch = 0;     ///< training time only (no evaluation)
  double examples_per_second = 0;  ///< training throughput
};

/// @brief Mean loss and accuracy of `model` on the first `count` examples of a split, in evaluation mode.
/// make(indices) builds the batch of those examples.
template <class T, class Model, class Make>
std::pair<double, double> evaluate(Model& model, std::size_t count, std::size_t batch_size, Make&& make) {
  double loss = 0;
  std::size_t correct = 0;
  std::vector<std::size_t> idx;
  for (std::size_t first = 0; first < count; first += batch_size) {
    idx.resize(std::min(batch_size, count - first));
    std::iota(idx.begin(), idx.end(), first);
    example_batch<T> b = make(idx);
    b.info.mode = nn::phase::eval;
    const auto r = nn::classification_step(model, b.input, b.info, b.labels);
    loss += r.loss * double(idx.size());
    correct += r.correct;
  }
  return {loss / double(count), double(correct) / double(count)};
}

/// @brief Trains `model` for cfg.epochs on n_train examples, evaluating after every epoch on the training split
/// (at most cfg.eval_train_limit examples) and on all n_test test examples; rows go to `log` under `name`.
/// make_train(indices) / make_test(indices) build batches.
template <class T, class Model, class MakeTrain, class MakeTest>
fit_result fit(Model& model, const std::string& name, std::size_t n_train, MakeTrain&& make_train, std::size_t n_test,
               MakeTest&& make_test, const fit_config& cfg, training_log& log) {
  auto params = nn::parameters<T>(model);
  params.zero_grad();
  nn::adamw<T> opt({cfg.lr, 0.9, 0.999, 1e-8, cfg.weight_decay});
  const std::size_t steps_per_epoch = (n_train + cfg.batch_size - 1) / cfg.batch_size;
  const nn::one_cycle schedule{cfg.lr, std::max<std::size_t>(1, cfg.epochs * steps_per_epoch)};
  std::vector<std::size_t> order(n_train);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(cfg.seed);
  fit_result res;
  double train_seconds = 0;
  std::size_t step = 0, trained = 0;
  std::printf("[%s] %zu parameters, %zu training and %zu test examples, %zu epochs of %zu steps\n", name.c_str(),
              params.count(), n_train, n_test, cfg.epochs, steps_per_epoch);
  if (cfg.zero_gradients)
    std::printf("[%s] --zero-gradients: every gradient is zeroed before each step, so nothing is learned\n",
                name.c_str());
  for (std::size_t epoch = 1; epoch <= cfg.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    const auto t0 = std::chrono::steady_clock::now();
    double window_loss = 0;
    std::size_t window_correct = 0, window_examples = 0;
    auto window_start = t0;
    for (std::size_t s = 0; s < steps_per_epoch; ++s, ++step) {
      const std::size_t first = s * cfg.batch_size, count = std::min(cfg.batch_size, n_train - first);
      std::vector<std::size_t> idx(order.begin() + std::ptrdiff_t(first), order.begin() + std::ptrdiff_t(first + count));
      example_batch<T> b = make_train(idx);
      b.info.mode = nn::phase::train;
      const auto r = nn::classification_step(model, b.input, b.info, b.labels);
      if (cfg.zero_gradients) params.zero_grad();
      if (cfg.clip > 0) nn::clip_grad_norm(params.grads, cfg.clip);
      nn::step(opt, params, schedule(step));
      params.zero_grad();
      window_loss += r.loss * double(count);
      window_correct += r.correct;
      window_examples += count;
      trained += count;
      if ((s + 1) % cfg.progress_every == 0 || s + 1 == steps_per_epoch) {
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
    const std::size_t n_eval = cfg.eval_train_limit ? std::min(cfg.eval_train_limit, n_train) : n_train;
    std::tie(res.train_loss, res.train_accuracy) = evaluate<T>(model, n_eval, cfg.batch_size, make_train);
    std::tie(res.test_loss, res.test_accuracy) = evaluate<T>(model, n_test, cfg.batch_size, make_test);
    std::printf("[%s] epoch %zu done: train loss %.4f accuracy %.2f%%, test loss %.4f accuracy %.2f%% (%.1f s)\n",
                name.c_str(), epoch, res.train_loss, 100 * res.train_accuracy, res.test_loss, 100 * res.test_accuracy,
                train_seconds / double(epoch));
    std::fflush(stdout);
    log.add({name, epoch, step, res.train_loss, res.train_accuracy, res.test_loss, res.test_accuracy, train_seconds});
  }
  res.seconds_per_epoch = train_seconds / double(cfg.epochs);
  res.examples_per_second = double(trained) / train_seconds;
  return res;
}

}  // namespace tprod::examples
