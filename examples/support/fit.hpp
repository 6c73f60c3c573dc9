// SPDX-License-Identifier: Apache-2.0
#pragma once
// The examples' use of the library's training loop (tprod/nn/model/fit.hpp): every epoch's evaluation goes to the
// example's training_log (CSV and plot), and every model's training state to OUT/state/<model>.state.safetensors
// (<model>-seed<S> beyond the first seed), from which --resume continues it. The names the examples use for the
// library's types.
#include <filesystem>
#include <iostream>
#include <string>

#include "support/example_options.hpp"
#include "support/training_report.hpp"
#include "tprod/nn/model/fit.hpp"

namespace tprod::examples {

template <class T>
using example_batch = nn::labelled_batch<T>;
using fit_result = nn::fit_result;

/// @brief nn::fit's options, and where each model's training state goes.
struct fit_config : nn::fit_options {
  std::filesystem::path state_directory;  ///< <dir>/<model>.state.safetensors (empty: no state is written)
};

/// @brief The settings every example takes from its command line: --zero-gradients, --resume, and the training
/// states in OUT/state, written after every epoch and every 200 steps.
inline fit_config fit_defaults(const options& o) {
  fit_config c;
  c.zero_gradients = o.zero_gradients;
  c.resume = o.resume;
  c.state_directory = o.out / "state";
  c.state_every = 200;
  return c;
}

/// @brief A model's line of the summary from its fit: the accuracies, the seconds per epoch, and test_loss and
/// examples_per_second among the extras (an example adds its own with s.extra[...] or s.extra.update).
inline model_summary summary_of(const std::string& name, std::size_t parameters, std::size_t encoder_parameters,
                                const fit_result& r) {
  model_summary s{name, parameters, encoder_parameters, r.train_accuracy, r.test_accuracy, r.seconds_per_epoch};
  s.extra = {{"test_loss", r.test_loss}, {"examples_per_second", r.examples_per_second}};
  return s;
}

/// @brief nn::fit with each epoch's evaluation logged under `name`.
template <class T, class Model, class MakeTrain, class MakeTest>
fit_result fit(Model& model, const std::string& name, std::size_t n_train, MakeTrain&& make_train, std::size_t n_test,
               MakeTest&& make_test, const fit_config& cfg, training_log& log) {
  nn::fit_options run = cfg;
  if (!cfg.state_directory.empty()) {
    std::filesystem::create_directories(cfg.state_directory);
    run.state_file = cfg.state_directory / (log.file_name(name) + ".state.safetensors");
  } else {  // a run that keeps no training state (a measurement, a changing parameter list): say what --resume does
    run.state_every = 0;
    if (run.resume)
      std::cout << "note: " << name << " keeps no training state, so --resume trains it from the beginning\n";
    run.resume = false;
  }
  return nn::fit<T>(model, name, n_train, make_train, n_test, make_test, run, [&](const nn::epoch_report& r) {
    log.add({r.name, log.seed(), r.epoch, r.step, r.train_loss, r.train_accuracy, r.test_loss, r.test_accuracy,
             r.train_seconds});
  });
}

}  // namespace tprod::examples
