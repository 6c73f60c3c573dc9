// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a training example leaves behind: a CSV log of every evaluation (one row per model, seed and epoch), a PNG
// plot of the curves drawn by gnuplot (the mean over the seeds, with ± one sd as error bars), and a summary JSON
//   {"example": …, "test_majority_rate": …, "models": [{"name", "parameters", "encoder_parameters",
//    "train_accuracy", "test_accuracy", "seconds_per_epoch", …}, …], …}
// All files are written whole or not at all (tprod::io::atomic_file).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tprod/io/atomic_file.hpp"

namespace tprod::examples {

/// @brief One evaluation of one model.
struct log_row {
  std::string model;
  std::uint64_t seed = 1;
  std::size_t epoch = 0;
  std::size_t step = 0;
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0, seconds = 0;
};

/// @brief One model's line of the summary; `extra` adds example-specific fields.
struct model_summary {
  std::string name;
  std::size_t parameters = 0, encoder_parameters = 0;
  double train_accuracy = 0, test_accuracy = 0, seconds_per_epoch = 0;
  nlohmann::json extra = nlohmann::json::object();
};

/// @brief The trainable scalars of a model whose parameter names start with `prefix` (all for ""; "encoder." for
/// a classifier's encoder).
template <class Model>
std::size_t parameter_count(Model& model, const std::string& prefix = "") {
  std::size_t n = 0;
  model.for_each_parameter([&](std::string_view name, auto& value, auto&) {
    if (name.substr(0, prefix.size()) == prefix) n += value.size();
  });
  return n;
}

/// @brief Writes `text` to `file` whole or not at all (io::atomic_file).
void write_whole_file(const std::filesystem::path& file, const std::string& text);

/// @brief The rows so far, rewritten as a whole CSV file after every evaluation (so an interrupted run keeps a
/// valid log). It also knows the seed of the runs being logged (set_seed), which the rows record and the names of
/// the files those runs write carry (file_name).
class training_log {
 public:
  /// `csv` empty: the rows are kept but written nowhere (an MPI rank other than the one that writes).
  explicit training_log(std::filesystem::path csv) : csv_(std::move(csv)) {}
  const std::filesystem::path& file() const { return csv_; }
  const std::vector<log_row>& rows() const { return rows_; }

  /// @brief The runs logged from now on use `seed`; `first`: it is the comparison's first seed.
  void set_seed(std::uint64_t seed, bool first) {
    seed_ = seed;
    first_seed_ = first;
  }
  std::uint64_t seed() const { return seed_; }
  /// @brief The name of a file `model` writes in this seed's run: the model's name for the first seed (what a
  /// one-seed run writes, and what tensorllm_denoise reads), "<model>-seed<S>" for the others.
  std::string file_name(const std::string& model) const {
    return first_seed_ ? model : model + "-seed" + std::to_string(seed_);
  }

  /// @brief The log a run wrote to `csv` (to plot it again elsewhere, e.g. after a run on a machine without
  /// gnuplot); std::runtime_error naming the file and line for a missing file, a wrong header or a bad row.
  static training_log read(const std::filesystem::path& csv);

  /// @brief Adds a row under the current seed and rewrites the CSV file whole.
  void add(log_row r);

 private:
  static constexpr std::string_view header =
      "model,seed,epoch,step,train_loss,train_accuracy,test_loss,test_accuracy,seconds";
  std::filesystem::path csv_;
  std::vector<log_row> rows_;
  std::uint64_t seed_ = 1;
  bool first_seed_ = true;
};

/// @brief Mean and sample standard deviation (n − 1; 0 for a single value) of xs.
struct spread {
  double mean = 0, sd = 0;
};
spread spread_of(const std::vector<double>& xs);

/// @brief What the left panel of plot_training_curves shows: the test accuracy (%), or the test perplexity
/// exp(test loss) of a language model, whose loss is the cross-entropy per token.
enum class test_curve { accuracy, perplexity };

/// @brief Draws the test curve (accuracy or perplexity) and the training loss per epoch for every model into a PNG
/// with gnuplot (Debian: gnuplot-nox): with several seeds, the mean over them with ± one sd as error bars. Returns
/// false, with a message, when gnuplot is missing or fails; the CSV has the same numbers.
bool plot_training_curves(const training_log& log, const std::filesystem::path& png, const std::string& title,
                          test_curve left = test_curve::accuracy);

/// @brief The share of the most frequent label: the accuracy of a model that always answers it, the rate every
/// trained model must clearly beat (0 for no labels).
double majority_rate(const std::vector<std::size_t>& labels);

/// @brief Writes the summary JSON with the test split's majority-class rate (see majority_rate) beside the models, so
/// that a check can tell a model that learned from one that answers the majority class; refuses
/// (std::runtime_error) a non-finite number, which would make the JSON invalid.
void write_summary(const std::filesystem::path& file, const std::string& example, double test_majority_rate,
                   const std::vector<model_summary>& models, const nlohmann::json& extra = nlohmann::json::object());

}  // namespace tprod::examples
