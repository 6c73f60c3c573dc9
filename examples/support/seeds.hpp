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
inline std::vector<model_summary> combine_seeds(const std::vector<std::vector<model_summary>>& runs,
                                                const std::vector<std::uint64_t>& seeds) {
  if (runs.empty()) return {};
  std::vector<model_summary> out = runs.front();
  for (std::size_t m = 0; m < out.size(); ++m) {
    model_summary& s = out[m];
    std::vector<double> train, test, seconds;
    for (const auto& run : runs) {
      if (run.size() != out.size() || run[m].name != s.name)
        throw std::logic_error("combine_seeds: the seeds' runs name different models");
      train.push_back(run[m].train_accuracy);
      test.push_back(run[m].test_accuracy);
      seconds.push_back(run[m].seconds_per_epoch);
    }
    const auto put = [&](const char* field, const std::vector<double>& xs, double& mean) {
      const spread sp = spread_of(xs);
      mean = sp.mean;
      s.extra[std::string(field) + "_sd"] = sp.sd;
    };
    put("train_accuracy", train, s.train_accuracy);
    put("test_accuracy", test, s.test_accuracy);
    put("seconds_per_epoch", seconds, s.seconds_per_epoch);
    nlohmann::json sds = nlohmann::json::object();
    for (auto& [key, value] : s.extra.items()) {  // the example's own numbers: their means, and the sd of any float
      if (!value.is_number() || key.ends_with("_sd")) continue;
      std::vector<double> xs;
      for (const auto& run : runs)
        if (run[m].extra.contains(key) && run[m].extra[key].is_number()) xs.push_back(run[m].extra[key].get<double>());
      const spread sp = spread_of(xs);
      if (value.is_number_float()) sds[key + "_sd"] = sp.sd;
      if (value.is_number_float() || sp.sd != 0) value = sp.mean;
    }
    s.extra.update(sds);
    s.extra["seeds"] = seeds;
    s.extra["test_accuracy_runs"] = test;
  }
  return out;
}

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
