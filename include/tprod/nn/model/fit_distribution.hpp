// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file fit_distribution.hpp
/// @brief How the processes of a distributed run share nn::fit's work. nn names no transport: the caller gives a
/// sum over the ranks, and tprod/distributed/{data,model}_parallel.hpp make one from an MPI communicator. Two forms:
/// - data parallel (`split_batches`): every rank holds the whole model and runs its block of every batch (and of
///   every evaluation); the gradients are averaged, weighted by the blocks' sizes, so every rank takes the step
///   one process would take on the whole batch;
/// - model parallel: every rank runs the whole batch through a model some of whose parameters (`sharded`) live on
///   that rank alone, such as a spectral encoder's slices. The model sums its activations over the ranks itself;
///   fit only sums the gradient norm that clipping needs.
/// In both, rank 0 alone prints, and a rank writes its training state only where it differs from rank 0's.
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

struct fit_distribution {
  int rank = 0;   ///< this process, 0 … ranks − 1
  int ranks = 1;  ///< 1: one process, nothing shared
  /// Data parallel: each rank runs its contiguous block of every batch. Else every rank runs the whole batch.
  bool split_batches = false;
  /// Sums the values over the ranks in place, the same result on every rank (MPI_Allreduce). Needed for ranks > 1.
  std::function<void(std::span<double>)> sum;
  /// Whether the parameter of that name lives on this rank alone (model parallel); unset: none does.
  std::function<bool(std::string_view)> sharded;

  bool distributed() const { return ranks > 1; }

  /// @throws argument_error for a rank outside [0, ranks), several ranks without a sum, or a model-parallel model
  /// trained data-parallel (both at once is not supported).
  void validate() const {
    if (ranks < 1 || rank < 0 || rank >= ranks)
      throw argument_error("nn::fit_distribution: rank " + std::to_string(rank) + " of " + std::to_string(ranks));
    if (distributed() && !sum)
      throw argument_error("nn::fit_distribution: " + std::to_string(ranks) +
                           " ranks need a sum over the ranks (see tprod/distributed)");
    if (split_batches && sharded)
      throw argument_error("nn::fit_distribution: a model with sharded parameters cannot also split its batches");
  }

  /// This rank's block of a batch's examples: all of them unless split_batches (then a block may be empty).
  std::vector<std::size_t> share(const std::vector<std::size_t>& examples) const {
    if (!split_batches) return examples;
    const std::size_t n = examples.size(), p = std::size_t(ranks), r = std::size_t(rank);
    return {examples.begin() + std::ptrdiff_t(n * r / p), examples.begin() + std::ptrdiff_t(n * (r + 1) / p)};
  }

  /// Where this rank's training state goes: `file` itself, or "<stem>.rank<r>-of-<P><ext>" beside it when the
  /// rank holds parameters of its own.
  std::filesystem::path state_file(const std::filesystem::path& file) const {
    if (!distributed() || !sharded || file.empty()) return file;
    return file.parent_path() / (file.stem().string() + ".rank" + std::to_string(rank) + "-of-" +
                                 std::to_string(ranks) + file.extension().string());
  }
  /// Whether this rank writes its state (every rank whose state differs from rank 0's).
  bool writes_state() const { return !distributed() || sharded || rank == 0; }
};

namespace detail {

/// @brief Every gradient replaced by Σ_r w_r·g_r / Σ_r w_r (w: this rank's weight, its examples in the batch): one
/// sum of all gradients and the weight, packed in doubles, so the result is the gradient of the mean loss over the
/// whole batch whatever the shares. Host parameters. @throws distributed-side errors from `sum`; argument_error
/// when every weight is 0 (`who` names the caller).
template <std::floating_point T>
void average_gradients(parameter_list<T>& params, double weight, const std::function<void(std::span<double>)>& sum,
                       const char* who) {
  std::vector<double> buffer;
  buffer.reserve(params.count() + 1);
  for (const auto* g : params.grads.tensors)
    for (std::size_t i = 0; i < g->size(); ++i) buffer.push_back(weight * double(g->data()[i]));
  buffer.push_back(weight);
  sum(buffer);
  const double total = buffer.back();
  if (!(total > 0))
    throw argument_error(std::string(who) + ": the ranks' weights sum to " + std::to_string(total) +
                         " (no rank had an example)");
  std::size_t at = 0;
  for (auto* g : params.grads.tensors)
    for (std::size_t i = 0; i < g->size(); ++i) g->data()[i] = T(buffer[at++] / total);
}

/// @brief Clipping to a global norm over the ranks: ‖g‖² = ‖g_replicated‖² (the same on every rank, counted once)
/// + Σ_r ‖g_sharded,r‖²; scales every gradient by max_norm/‖g‖ when ‖g‖ > max_norm; returns ‖g‖.
template <std::floating_point T, memory_space S>
double clip_grad_norm(parameter_list<T, S>& params, double max_norm, const fit_distribution& d) {
  if (!d.distributed() || !d.sharded) return clip_grad_norm(params.grads, max_norm);
  parameter_refs<T, S> own, shared;
  for (std::size_t i = 0; i < params.size(); ++i)
    (d.sharded(params.grads.names[i]) ? own : shared).tensors.push_back(params.grads.tensors[i]);
  double total[1] = {std::pow(grad_norm(own), 2) + (d.rank == 0 ? std::pow(grad_norm(shared), 2) : 0.0)};
  d.sum(total);
  const double norm = std::sqrt(total[0]);
  if (norm > max_norm)
    for (auto* g : params.grads.tensors) scale(tprod::detail::system_of<S>(), T(max_norm / norm), g->dynamic_view());
  return norm;
}

}  // namespace detail
}  // namespace tprod::nn
