#pragma once
// The examples' use of the library's training loop (tprod/nn/fit.hpp): every epoch's evaluation goes to the
// example's training_log (CSV and plot). The names the examples use for the library's types.
#include <string>

#include "support/training_report.hpp"
#include "tprod/nn/fit.hpp"

namespace tprod::examples {

template <class T>
using example_batch = nn::labelled_batch<T>;
using fit_config = nn::fit_options;
using fit_result = nn::fit_result;

/// @brief nn::fit with each epoch's evaluation logged under `name`.
template <class T, class Model, class MakeTrain, class MakeTest>
fit_result fit(Model& model, const std::string& name, std::size_t n_train, MakeTrain&& make_train, std::size_t n_test,
               MakeTest&& make_test, const fit_config& cfg, training_log& log) {
  return nn::fit<T>(model, name, n_train, make_train, n_test, make_test, cfg, [&](const nn::epoch_report& r) {
    log.add({r.name, r.epoch, r.step, r.train_loss, r.train_accuracy, r.test_loss, r.test_accuracy, r.train_seconds});
  });
}

}  // namespace tprod::examples
