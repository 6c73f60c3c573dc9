// SPDX-License-Identifier: Apache-2.0
#pragma once
// Command-line options shared by the training examples:
//   --quick            a small run for CI (under a minute on 2 cores)
//   --data DIR         where the data set is (each example has a default)
//   --out DIR          where the CSV log, the plot and the checkpoints go (default: example-output/<example>)
//   --summary FILE     also write the run's summary JSON there
//   --threads N        worker threads (default: all cores, or TPROD_NUM_THREADS)
//   --epochs N         override the number of epochs
//   --seed S           the first seed (default 1): the models' initialisation, dropout and the batch order
//   --seeds N          train every model of the comparison from seeds S, S+1, …, S+N−1 and report mean ± sd over
//                      them (default 3; 1 in quick mode)
//   --resume           continue each model's training from its state in OUT/state (written after every epoch and
//                      every 200 steps), or start it when there is none; a finished model is not trained again
//   --zero-gradients   a diagnostic: zero every gradient before each optimizer step, so the models learn nothing
//                      (CI runs each example so and checks that its accuracy floor then fails)
//   --help
// An example may accept further "--name value" options; anything unknown is refused with the usage text.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tprod/core/execution.hpp"

namespace tprod::examples {

struct options {
  std::string example;
  bool quick = false;
  bool zero_gradients = false;  ///< --zero-gradients: train with every gradient zeroed (examples::fit_config)
  bool resume = false;          ///< --resume: continue from the training states in out/state (examples::fit_config)
  std::filesystem::path data, out;
  std::optional<std::filesystem::path> summary;
  std::optional<std::size_t> epochs;
  std::uint64_t seed = 1;  ///< --seed: the first seed
  std::size_t seeds = 3;   ///< --seeds: how many seeds (default 3; 1 with --quick)
  std::map<std::string, std::string> extra;  ///< the example's own "--name value" options

  /// @brief An example's own numeric option, or `fallback`. @throws std::invalid_argument naming the option.
  double number(const std::string& key, double fallback) const;

  /// @brief An example's own positive integer option, or `fallback`. @throws std::invalid_argument naming it.
  std::size_t count(const std::string& key, double fallback) const;
};

/// @brief Parses argv; prints the usage and exits 0 on --help, 2 on a bad option (naming it).
/// `own` lists the example's own value options as {"name", "what it does"}.
options parse_options(int argc, char** argv, const std::string& example, const std::string& what,
                      const std::filesystem::path& default_data,
                      const std::vector<std::pair<std::string, std::string>>& own = {});

/// @brief An example's main: runs `body(argc, argv)` and turns any exception into "<example>: error: <message>" on
/// standard error and exit status 1 (bad data, a diverged model, an unwritable output), never a crash.
template <class Body>
int run_example(const char* example, int argc, char** argv, Body&& body) {
  try {
    return body(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << example << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tprod::examples
