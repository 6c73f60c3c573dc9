// SPDX-License-Identifier: Apache-2.0
#pragma once
// A comparison over several seeds (--seed S --seeds N): every model is trained from the seeds S, S+1, …, S+N−1
// (its initialisation, dropout and batch order), and each model's summary is the mean over those runs, with the
// sample standard deviation beside it, so that a difference between two models can be read against the spread.
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/example_options.hpp"
#include "support/training_report.hpp"

namespace tprod::examples {

/// @brief One summary per model from its runs (runs[k][m]: model m under the k-th of `seeds`; the same models in
/// the same order for every seed). Every number is the mean over the runs; train_accuracy, test_accuracy,
/// seconds_per_epoch and every floating-point extra (test_loss, …) get "<field>_sd" beside them; "seeds" lists the
/// seeds and "test_accuracy_runs" each run's test accuracy. @throws std::logic_error when the runs name different models.
std::vector<model_summary> combine_seeds(const std::vector<std::vector<model_summary>>& runs,
                                         const std::vector<std::uint64_t>& seeds);

/// @brief Runs comparison(seed) → std::vector<model_summary> for every seed of `o` (logged under that seed),
/// prints each model's test accuracy as mean ± sd over them, and returns combine_seeds of the runs.
template <class Comparison>
std::vector<model_summary> over_seeds(const options& o, training_log& log, Comparison&& comparison) {
  std::vector<std::vector<model_summary>> runs;
  std::vector<std::uint64_t> seeds;
  for (std::size_t k = 0; k < o.seeds; ++k) {
    const std::uint64_t seed = o.seed + k;
    if (o.seeds > 1)
      std::printf("\n== seed %llu (%zu of %zu) ==\n", static_cast<unsigned long long>(seed), k + 1, o.seeds);
    log.set_seed(seed, k == 0);
    seeds.push_back(seed);
    runs.push_back(comparison(seed));
  }
  auto models = combine_seeds(runs, seeds);
  if (o.seeds > 1) {
    std::printf("\ntest accuracy over %zu seeds (mean ± sd; runs):\n", o.seeds);
    for (std::size_t m = 0; m < models.size(); ++m) {
      std::printf("  %-16s %6.2f%% ± %.2f  (", models[m].name.c_str(), 100 * models[m].test_accuracy,
                  100 * models[m].extra["test_accuracy_sd"].get<double>());
      for (std::size_t k = 0; k < runs.size(); ++k) std::printf("%s%.2f", k ? ", " : "", 100 * runs[k][m].test_accuracy);
      std::printf(")\n");
    }
  }
  return models;
}

}  // namespace tprod::examples
