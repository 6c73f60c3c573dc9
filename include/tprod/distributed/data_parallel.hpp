// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file data_parallel.hpp
/// @brief Data-parallel training of any nn model over MPI: every rank holds the whole model, trains on its own
/// share of each batch, and the ranks average their gradients before the optimizer step, so every rank takes the
/// same step and the models stay equal.
///
///   distributed::broadcast_parameters(comm, params);            // once: rank 0's initial values everywhere
///   for each batch:
///     params.zero_grad();
///     nn::classification_step(model, x, my_share, my_labels);   // this rank's examples (mean loss over them)
///     distributed::average_gradients(comm, params, my_share.size);
///     nn::step(opt, params);                                     // the same on every rank
///
/// With each rank's gradient the mean over its b_r examples, the weighted average Σ_r b_r·g_r / Σ_r b_r is the
/// gradient of the mean loss over the whole batch: the one-process step, whatever the shares (a rank may have none).
/// Communication per step: one MPI_Allreduce of all gradients packed in one buffer of doubles (8 bytes per parameter,
/// whatever T: the weighted sum is formed in double). nn::fit does all of this with
/// `opts.distribution = distributed::data_parallel(comm)`.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tprod/distributed/communicator.hpp"
#include "tprod/nn/model/fit_distribution.hpp"

namespace tprod::distributed {

namespace detail {
/// @throws distributed_error on every rank unless every rank has the same number of parameter tensors and scalars.
template <class T>
void check_same_parameters(const communicator& comm, const nn::parameter_list<T>& params, const char* who) {
  const auto r = range_over_ranks<2>(comm, {params.size(), params.count()});
  if (!r.equal())
    throw distributed_error(std::string(who) + ": the ranks' models differ (" + std::to_string(r.low[0]) + " to " +
                            std::to_string(r.high[0]) + " parameter tensors, " + std::to_string(r.low[1]) + " to " +
                            std::to_string(r.high[1]) + " parameters)");
}
}  // namespace detail

/// @brief The sum over the ranks that nn's distributed training takes (fit_distribution::sum): MPI_Allreduce of
/// doubles in place, checked.
inline std::function<void(std::span<double>)> sum_over(const communicator& comm) {
  return [comm](std::span<double> values) {
    TPROD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), mpi_int(values.size(), "values summed"), MPI_DOUBLE,
                                  MPI_SUM, comm.get()));
  };
}

/// @brief Collective: every gradient replaced by Σ_r w_r·g_r / Σ_r w_r over the ranks (w: this rank's weight, its
/// number of examples in the batch). One MPI_Allreduce of all gradients and the weight, packed in one buffer.
/// @throws distributed_error on every rank when the ranks' models differ; argument_error on every rank when every
/// weight is 0.
template <std::floating_point T>
void average_gradients(const communicator& comm, nn::parameter_list<T>& params, double weight = 1.0) {
  detail::check_same_parameters(comm, params, "distributed::average_gradients");
  nn::detail::average_gradients(params, weight, sum_over(comm), "distributed::average_gradients");
}

/// @brief nn::fit's data-parallel form on comm (fit_options::distribution): each rank runs its block of every
/// batch and evaluation, and the gradients are averaged before every step. Every rank calls nn::fit with the same
/// model, data and options; rank 0 prints and writes the training state.
inline nn::fit_distribution data_parallel(const communicator& comm) {
  return {comm.rank(), comm.size(), true, sum_over(comm), {}};
}

/// @brief Collective: rank `root`'s parameter values on every rank (a common starting point).
/// @throws distributed_error on every rank when the ranks' models differ.
template <std::floating_point T>
void broadcast_parameters(const communicator& comm, nn::parameter_list<T>& params, int root = 0) {
  detail::check_same_parameters(comm, params, "distributed::broadcast_parameters");
  for (auto* v : params.values.tensors)
    TPROD_MPI_CHECK(
        MPI_Bcast(v->data(), mpi_int(v->size(), "a parameter's elements"), mpi_type<T>(), root, comm.get()));
}

}  // namespace tprod::distributed
