// SPDX-License-Identifier: Apache-2.0
// combine_seeds (seeds.hpp), compiled once into the examples' support library.
#include "support/seeds.hpp"

namespace tprod::examples {

std::vector<model_summary> combine_seeds(const std::vector<std::vector<model_summary>>& runs,
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

}  // namespace tprod::examples
