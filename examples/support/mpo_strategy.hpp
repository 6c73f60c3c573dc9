// SPDX-License-Identifier: Apache-2.0
#pragma once
// Paper 003's over-parameterization in the examples mpo_finetune and bert_finetune: the static strategy's selection
// (the importance I_W = Σ_b Σ_ij |w_ij ∂L_b/∂w_ij| of every weight matrix of a fine-tuned model but its embedding
// tables, accumulated over one pass of the fine-tuning data, gradients only, in training mode; printed per matrix;
// the top N of every module group, nn::select_top), the selected matrices made MPOs with a line each, the --cores
// option, and the closing table of the models.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/example_options.hpp"
#include "support/training_report.hpp"

#include "tprod/nn/model.hpp"
#include "tprod/nn/model/mpo_finetune.hpp"

namespace tprod::examples {

/// `data` has size() and batch(indices) → nn::labelled_batch; its batches are taken in order, `batch_size` at a time.
template <class T, class Model, class Split>
std::vector<std::string> static_mpo_selection(Model& model, const Split& data, std::size_t batch_size,
                                              std::size_t per_group) {
  std::vector<std::string> candidates;
  for (const auto& n : nn::weight_matrix_names<T>(model))
    if (!n.ends_with(".table")) candidates.push_back(n);  // embeddings are lookups, not products: not candidates
  using S = nn::layer_space_t<Model>;  // the model's memory space, where the meter sums
  nn::importance_meter<T, S> meter(model, candidates);
  auto params = nn::parameters<T>(model);
  for (std::size_t first = 0; first < data.size(); first += batch_size) {
    std::vector<std::size_t> idx(std::min(batch_size, data.size() - first));
    std::iota(idx.begin(), idx.end(), first);
    auto b = data.batch(idx);
    b.info.mode = nn::phase::train;
    params.zero_grad();
    nn::classification_step(model, nn::to_space<S>(std::move(b.input)), b.info, b.labels);
    meter.accumulate();
  }
  const auto selected = nn::select_top(meter.scores(), per_group);
  std::printf("\nI_W per matrix (selected: *):\n");
  for (const auto& [name, score] : meter.scores())
    std::printf("  %c %-24s %-22s %.4g\n", std::count(selected.begin(), selected.end(), name) ? '*' : ' ',
                name.c_str(), nn::module_group(name).c_str(), score);
  return selected;
}

/// Over-parameterizes each of `matrices` of `over` as an exact MPO of `cores` cores, printing its factorization;
/// returns the dense entries replaced.
template <class Over>
std::size_t over_parameterize_all(Over& over, const std::vector<std::string>& matrices, std::size_t cores) {
  std::size_t replaced = 0;
  for (const auto& matrix : matrices) {
    over.over_parameterize(matrix, std::nullopt, cores);
    const auto& w = over.weight(matrix);
    replaced += w.rows() * w.cols();
    std::printf("  %s: %zux%zu = (%s) x (%s), ranks %s, %zu core entries\n", matrix.c_str(), w.rows(), w.cols(),
                shape_string(w.row_dims()).c_str(), shape_string(w.col_dims()).c_str(), shape_string(w.ranks()).c_str(),
                w.parameter_count());
  }
  return replaced;
}

/// The --cores option: MPO cores per matrix, a comma-separated list of numbers from 1 to 16 (`fallback` when absent).
inline std::vector<std::size_t> core_counts(const options& o, const std::string& fallback) {
  std::vector<std::size_t> counts;
  std::stringstream list(o.extra.count("cores") ? o.extra.at("cores") : fallback);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (end == item.c_str() || *end != '\0' || v < 1 || v > 16)
      throw std::invalid_argument("--cores expects numbers from 1 to 16 separated by commas, got '" + item + "'");
    counts.push_back(v);
  }
  return counts;
}

/// The closing table: each model's trained parameters, the encoder's, the accuracies and the seconds per epoch.
inline void print_models(const std::vector<model_summary>& summaries) {
  std::printf("\n%-11s %10s %10s %8s %8s %8s\n", "model", "trained", "encoder", "train", "test", "s/epoch");
  for (const auto& s : summaries)
    std::printf("%-11s %10zu %10zu %7.2f%% %7.2f%% %8.1f\n", s.name.c_str(), s.parameters, s.encoder_parameters,
                100 * s.train_accuracy, 100 * s.test_accuracy, s.seconds_per_epoch);
}

}  // namespace tprod::examples
