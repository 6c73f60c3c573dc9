// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file fit.hpp
/// @brief A training loop for classifiers built from tprod's layers: shuffled mini-batches, AdamW with a one-cycle
/// schedule and global gradient-norm clipping (paper 000, Table 5), an evaluation on both splits after every epoch,
/// progress lines on stdout, and an `on_epoch` callback for the caller's own log or checkpoints.
///
/// A language model trains through the same loop as a classifier of every position's next token: its batch
/// carries one label per position (ignore_label at padding), and the losses and accuracies reported are means
/// over the labelled positions (per token), so exp(test_loss) is the held-out perplexity.
///
/// The model may live on the device (built there, e.g. make_text_classifier(c, l, device_space{})): each batch is
/// built on the host and its input tensor copied to the device once, and the loop runs there; the loss and the
/// predictions come back every step, so the times reported are those of finished work.
///
/// The data stay the caller's: `make_train(indices)` and `make_test(indices)` build a labelled_batch of the
/// examples at those indices (0-based positions in the split), so any dataset, tokenized or not, plugs in.
/// Repeatable: the batch order comes from `fit_options::seed` (std::mt19937_64) and dropout's masks from the step
/// (batch::pass); with the same seed, thread count and initial parameters two runs give the same numbers.
///
/// Resumable: with `fit_options::state_file` set, the whole training state (parameters, AdamW's moments and step,
/// the training time, every epoch's evaluation and the run's settings; training_state.hpp) is written there after
/// every epoch, and every `state_every` steps. A run with `resume` set continues from that file: it replays the
/// batch order up to the saved step, reports the saved epochs through `on_epoch` again, and ends with the same
/// parameters and evaluations as a run that was never stopped (same thread count). A state whose run finished
/// returns its result at once. Settings that would change the run (epochs, batch size, the learning rate, the
/// seed, the number of examples, …) must match the saved ones; the data behind make_train are the caller's.
///
/// Distributed: with `fit_options::distribution` (fit_distribution.hpp) the ranks of an MPI run train one model
/// together, data-parallel or model-parallel; every rank calls fit with the same data and options.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/fit_distribution.hpp"
#include "tprod/nn/model/training_state.hpp"
#include "tprod/nn/schedule.hpp"

namespace tprod::nn {

/// @brief A batch as a classifier takes it: the input tensor (empty for token models), the batch description
/// (size, tokens, lengths; fit sets the phase) and one label per example (per position for a language model).
template <class T>
struct labelled_batch {
  tensor3<T> input;                 ///< the model's input, (B·T)×d×p (or B×d×p); empty for token-embedding models
  batch info;                       ///< B, the token ids, the valid lengths; `fit` sets its phase and pass
  std::vector<std::size_t> labels;  ///< one class per example (B), or per position (B·T) for a language model
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
  std::filesystem::path state_file;  ///< where the training state is written after every epoch (empty: nowhere)
  std::size_t state_every = 0;       ///< also write it every this many steps within an epoch (0: only at its end)
  bool resume = false;               ///< continue from state_file when it exists (else start and say so)
  fit_distribution distribution;     ///< the ranks of a distributed run (default: one process)
  /// Called after every optimizer step with the steps taken so far, while that step's gradients are still in place.
  /// It returns true when it changed the model's parameter list (paper 003's dynamic strategy over-parameterizes
  /// matrices as training goes); fit then takes the new list and a fresh AdamW, and the schedule goes on. A run
  /// with it writes no training state: a parameter list that changes cannot be resumed.
  std::function<bool(std::size_t)> after_step;
};

/// @brief What one epoch ended with (the argument of `on_epoch`).
struct epoch_report {
  std::string name;
  std::size_t epoch = 0, step = 0;  ///< 1-based epoch; optimizer steps taken so far
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double train_seconds = 0;  ///< training time so far, evaluations excluded
};

/// @brief The last epoch's evaluation and the throughput.
struct fit_result {
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double seconds_per_epoch = 0;    ///< training time only (no evaluation)
  double examples_per_second = 0;  ///< training throughput
};

/// @brief Mean cross-entropy and accuracy of `model` on the first `count` examples of a split, in evaluation mode,
/// in batches of `batch_size`; make(indices) builds the labelled_batch of those examples. Data-parallel ranks
/// (`dist`) each evaluate their block of every batch, and the sums are combined.
template <class T, class Model, class Make>
std::pair<double, double> evaluate(Model& model, std::size_t count, std::size_t batch_size, Make&& make,
                                   const fit_distribution& dist = {}) {
  if (count == 0) return {0.0, 0.0};
  if (batch_size == 0) throw argument_error("nn::evaluate: batch_size must be at least 1");
  double sums[3] = {0, 0, 0};  // loss · counted, correct, counted
  std::vector<std::size_t> idx;
  for (std::size_t first = 0; first < count; first += batch_size) {
    idx.resize(std::min(batch_size, count - first));
    std::iota(idx.begin(), idx.end(), first);
    const auto mine = dist.share(idx);
    if (mine.empty()) continue;
    labelled_batch<T> b = make(mine);
    b.info.mode = phase::eval;
    const auto r =
        classification_step(model, detail::to_space<layer_space_t<Model>>(std::move(b.input)), b.info, b.labels);
    sums[0] += r.loss * double(r.counted);
    sums[1] += double(r.correct);
    sums[2] += double(r.counted);
  }
  if (dist.distributed() && dist.split_batches) dist.sum(sums);
  return {sums[0] / sums[2], sums[1] / sums[2]};
}

namespace detail {

/// @brief The settings a resumed run must share with the run that wrote its state, as metadata strings.
inline std::map<std::string, std::string> fit_settings(const fit_options& o, std::size_t n_train, std::size_t n_test) {
  const auto exact = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", x);
    return std::string(b);
  };
  return {{"fit.epochs", std::to_string(o.epochs)},
          {"fit.batch_size", std::to_string(o.batch_size)},
          {"fit.lr", exact(o.lr)},
          {"fit.weight_decay", exact(o.weight_decay)},
          {"fit.clip", exact(o.clip)},
          {"fit.seed", std::to_string(o.seed)},
          {"fit.eval_train_limit", std::to_string(o.eval_train_limit)},
          {"fit.zero_gradients", o.zero_gradients ? "1" : "0"},
          {"fit.train_examples", std::to_string(n_train)},
          {"fit.test_examples", std::to_string(n_test)}};
}

/// @brief Every epoch's evaluation as text, one line per epoch, numbers exact (%.17g), and back.
inline std::string history_text(const std::vector<epoch_report>& epochs) {
  std::string s;
  char line[256];
  for (const auto& r : epochs) {
    std::snprintf(line, sizeof line, "%zu %zu %.17g %.17g %.17g %.17g %.17g\n", r.epoch, r.step, r.train_loss,
                  r.train_accuracy, r.test_loss, r.test_accuracy, r.train_seconds);
    s += line;
  }
  return s;
}
inline std::vector<epoch_report> history_from(const std::string& text, const std::string& name,
                                              const std::string& file) {
  std::vector<epoch_report> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    epoch_report r;
    r.name = name;
    if (std::sscanf(line.c_str(), "%zu %zu %lf %lf %lf %lf %lf", &r.epoch, &r.step, &r.train_loss, &r.train_accuracy,
                    &r.test_loss, &r.test_accuracy, &r.train_seconds) != 7)
      throw io_error(file + ": epoch " + std::to_string(out.size() + 1) +
                     " of 'fit.history' is not a saved evaluation: '" + line + "'");
    out.push_back(r);
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

/// @brief A metadata entry of a saved state as a count. @throws io_error naming the file and the key.
inline std::size_t saved_count(const std::map<std::string, std::string>& meta, const std::string& key,
                               const std::string& file) {
  const auto it = meta.find(key);
  std::size_t used = 0, v = 0;
  try {
    if (it != meta.end()) v = std::stoull(it->second, &used);
  } catch (const std::logic_error&) {
  }
  if (it == meta.end() || used == 0 || used != it->second.size())
    throw io_error(file + ": not a state written by nn::fit (its metadata '" + key + "' is missing or not a count)");
  return v;
}

}  // namespace detail

/// @brief Trains `model` for opts.epochs on n_train examples and evaluates it after every epoch on the training
/// split (at most opts.eval_train_limit examples) and on all n_test test examples, calling on_epoch(epoch_report)
/// then. `name` prefixes the progress lines. Each step: forward and backward of the batch
/// (classification_step), optional gradient zeroing (the diagnostic), clipping to opts.clip, one AdamW step at
/// the one-cycle rate, gradients zeroed. With opts.state_file the run can stop and resume (see the file comment).
/// @throws argument_error for zero epochs, batch size or training examples, resume or state_every without a
///         state_file, or a saved state whose settings differ (naming the setting); io_error for an unreadable state; whatever the model or make_* throw.
template <class T, class Model, class MakeTrain, class MakeTest, class OnEpoch>
fit_result fit(Model& model, const std::string& name, std::size_t n_train, MakeTrain&& make_train, std::size_t n_test,
               MakeTest&& make_test, const fit_options& opts, OnEpoch&& on_epoch) {
  if (opts.epochs == 0 || opts.batch_size == 0 || n_train == 0)
    throw argument_error("nn::fit: epochs (" + std::to_string(opts.epochs) + "), batch_size (" +
                         std::to_string(opts.batch_size) + ") and the training examples (" + std::to_string(n_train) +
                         ") must all be at least 1");
  const fit_distribution& dist = opts.distribution;
  dist.validate();
  if constexpr (!std::same_as<layer_space_t<Model>, host_space>)
    if (dist.distributed()) throw argument_error("nn::fit: distributed training runs models on the host");
  if (opts.state_file.empty() && (opts.resume || opts.state_every != 0))
    throw argument_error(std::string("nn::fit: ") + (opts.resume ? "resume" : "state_every") +
                         " needs a state_file to read or write the training state (it is empty)");
  const std::filesystem::path state_file = dist.state_file(opts.state_file);
  if (opts.after_step && !state_file.empty())
    throw argument_error("nn::fit: a run with after_step cannot write a training state (" + state_file.string() +
                         "): its parameter list may change");
  auto params = parameters<T>(model);
  params.zero_grad();
  adamw<T, layer_space_t<Model>> opt({opts.lr, 0.9, 0.999, 1e-8, opts.weight_decay});
  const std::size_t steps_per_epoch = (n_train + opts.batch_size - 1) / opts.batch_size;
  const one_cycle schedule{opts.lr, opts.epochs * steps_per_epoch};
  const auto settings = detail::fit_settings(opts, n_train, n_test);
  const bool talk = !opts.quiet && dist.rank == 0;
  fit_result res;
  double train_seconds = 0;
  std::size_t step = 0;
  std::vector<epoch_report> history;

  if (opts.resume && !state_file.empty()) {
    if (std::filesystem::exists(state_file)) {
      const std::string file = state_file.string();
      // Everything the metadata says is checked before the state is loaded, so a refused state changes nothing.
      const auto meta = io::safetensors_reader(state_file).metadata();
      if (!meta.count("fit.step"))
        throw io_error(file + ": not a training state written by nn::fit (its metadata has no 'fit.step')");
      for (const auto& [key, value] : settings) {
        const auto it = meta.find(key);
        if (it == meta.end() || it->second != value)
          throw argument_error("nn::fit: cannot resume from " + file + ": it was written with " + key.substr(4) +
                               " = " + (it == meta.end() ? std::string("(none)") : it->second) + ", this run has " +
                               key.substr(4) + " = " + value + " (a resumed run needs the same settings)");
      }
      step = detail::saved_count(meta, "fit.step", file);
      if (step != detail::saved_count(meta, "adamw.steps", file) || step > opts.epochs * steps_per_epoch)
        throw io_error(file + ": its step " + std::to_string(step) + " does not match AdamW's " +
                       meta.at("adamw.steps") + " steps or lies beyond the run's " +
                       std::to_string(opts.epochs * steps_per_epoch));
      train_seconds =
          std::strtod(meta.count("fit.train_seconds") ? meta.at("fit.train_seconds").c_str() : "0", nullptr);
      history = detail::history_from(meta.count("fit.history") ? meta.at("fit.history") : "", name, file);
      if (history.size() != step / steps_per_epoch)
        throw io_error(file + ": holds " + std::to_string(history.size()) + " evaluations after step " +
                       std::to_string(step) + " (" + std::to_string(step / steps_per_epoch) + " epochs)");
      load_training_state(state_file, model, opt);  // the tensors: strict, all or nothing
      if (talk && step == opts.epochs * steps_per_epoch)
        std::printf("[%s] %s holds the finished run (%zu steps): nothing to train\n", name.c_str(), file.c_str(), step);
      else if (talk)
        std::printf("[%s] resumed from %s at step %zu of %zu (epoch %zu)\n", name.c_str(), file.c_str(), step,
                    opts.epochs * steps_per_epoch, step / steps_per_epoch + 1);
    } else if (talk) {
      std::printf("[%s] no saved state at %s: starting from the beginning\n", name.c_str(),
                  state_file.string().c_str());
    }
  }
  const auto save_state = [&](double seconds) {
    if (state_file.empty() || !dist.writes_state()) return;
    auto progress = settings;
    char b[32];
    std::snprintf(b, sizeof b, "%.17g", seconds);
    progress["fit.step"] = std::to_string(step);
    progress["fit.train_seconds"] = b;
    progress["fit.history"] = detail::history_text(history);
    save_training_state(state_file, model, opt, progress);
  };
  for (const auto& r : history) {  // the saved epochs, reported again so the caller's log is whole
    std::tie(res.train_loss, res.train_accuracy, res.test_loss, res.test_accuracy) =
        std::tuple(r.train_loss, r.train_accuracy, r.test_loss, r.test_accuracy);
    on_epoch(r);
  }

  std::vector<std::size_t> order(n_train);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(opts.seed);
  if (talk && step == 0) {
    std::printf("[%s] %zu parameters, %zu training and %zu test examples, %zu epochs of %zu steps\n", name.c_str(),
                params.count(), n_train, n_test, opts.epochs, steps_per_epoch);
    if (opts.zero_gradients)
      std::printf("[%s] zero_gradients: every gradient is zeroed before each step, so nothing is learned\n",
                  name.c_str());
  }
  for (std::size_t epoch = 1; epoch <= opts.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);  // also for the epochs a resumed run skips: the same order
    if (step >= epoch * steps_per_epoch) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const auto seconds_so_far = [&] {
      return train_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double window_loss = 0;
    std::size_t window_correct = 0, window_labels = 0, window_examples = 0;
    auto window_start = t0;
    for (std::size_t s = step - (epoch - 1) * steps_per_epoch; s < steps_per_epoch; ++s) {
      const std::size_t first = s * opts.batch_size, count = std::min(opts.batch_size, n_train - first);
      std::vector<std::size_t> idx(order.begin() + std::ptrdiff_t(first),
                                   order.begin() + std::ptrdiff_t(first + count));
      const auto mine = dist.share(idx);  // all of idx unless data-parallel
      step_result r;
      if (!mine.empty()) {
        labelled_batch<T> b = make_train(mine);
        b.info.mode = phase::train;
        b.info.pass = step;
        r = classification_step(model, detail::to_space<layer_space_t<Model>>(std::move(b.input)), b.info, b.labels);
      }
      if (dist.distributed() && dist.split_batches) {
        if constexpr (std::same_as<layer_space_t<Model>, host_space>)
          // Each rank's loss is the mean over its labelled positions (examples, or a language model's tokens):
          // weighting by those counts gives the one-process gradient, the mean over all of them.
          detail::average_gradients(params, double(r.counted), dist.sum, "nn::fit");
        double stats[3] = {r.loss * double(r.counted), double(r.correct), double(r.counted)};
        dist.sum(stats);
        r.loss = stats[0] / stats[2];
        r.correct = std::size_t(stats[1]);
        r.counted = std::size_t(stats[2]);
      }
      if (opts.zero_gradients) params.zero_grad();
      if (opts.clip > 0) detail::clip_grad_norm(params, opts.clip, dist);
      nn::step(opt, params, schedule(step));
      ++step;
      if (opts.after_step && opts.after_step(step)) {
        params = parameters<T>(model);
        opt = adamw<T, layer_space_t<Model>>(opt.config());
      }
      params.zero_grad();
      window_loss += r.loss * double(r.counted);
      window_correct += r.correct;
      window_labels += r.counted;
      window_examples += count;
      const bool report = opts.progress_every != 0 && (s + 1) % opts.progress_every == 0;
      if (talk && (report || s + 1 == steps_per_epoch)) {
        const auto now = std::chrono::steady_clock::now();
        const double sec = std::chrono::duration<double>(now - window_start).count();
        std::printf("[%s] epoch %zu  step %zu/%zu  loss %.4f  accuracy %5.1f%%  %.0f examples/s  lr %.2e\n",
                    name.c_str(), epoch, s + 1, steps_per_epoch, window_loss / double(window_labels),
                    100.0 * double(window_correct) / double(window_labels), double(window_examples) / sec,
                    schedule(step - 1));
        std::fflush(stdout);
        window_loss = 0;
        window_correct = window_labels = window_examples = 0;
        window_start = now;
      }
      if (opts.state_every != 0 && step % opts.state_every == 0 && s + 1 < steps_per_epoch)
        save_state(seconds_so_far());
    }
    train_seconds = seconds_so_far();
    const std::size_t n_eval = opts.eval_train_limit ? std::min(opts.eval_train_limit, n_train) : n_train;
    std::tie(res.train_loss, res.train_accuracy) = evaluate<T>(model, n_eval, opts.batch_size, make_train, dist);
    std::tie(res.test_loss, res.test_accuracy) = evaluate<T>(model, n_test, opts.batch_size, make_test, dist);
    if (talk) {
      std::printf("[%s] epoch %zu done: train loss %.4f accuracy %.2f%%, test loss %.4f accuracy %.2f%% (%.1f s)\n",
                  name.c_str(), epoch, res.train_loss, 100 * res.train_accuracy, res.test_loss, 100 * res.test_accuracy,
                  train_seconds / double(epoch));
      std::fflush(stdout);
    }
    history.push_back(epoch_report{name, epoch, step, res.train_loss, res.train_accuracy, res.test_loss,
                                   res.test_accuracy, train_seconds});
    save_state(train_seconds);
    on_epoch(history.back());
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
