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
/// whatever T: the weighted sum is formed in double).
#include <string>
#include <vector>

#include "tprod/distributed/communicator.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::distributed {

namespace detail {
/// @throws distributed_error on every rank unless every rank has the same number of parameter tensors and scalars.
template <class T>
void check_same_parameters(const communicator& comm, const nn::parameter_list<T>& params, const char* who) {
  unsigned long long mine[2] = {params.size(), params.count()}, low[2], high[2];
  TPROD_MPI_CHECK(MPI_Allreduce(mine, low, 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm.get()));
  TPROD_MPI_CHECK(MPI_Allreduce(mine, high, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm.get()));
  if (low[0] != high[0] || low[1] != high[1])
    throw distributed_error(std::string(who) + ": the ranks' models differ (" + std::to_string(low[0]) + " to " +
                            std::to_string(high[0]) + " parameter tensors, " + std::to_string(low[1]) + " to " +
                            std::to_string(high[1]) + " parameters)");
}
}  // namespace detail

/// @brief Collective: every gradient replaced by Σ_r w_r·g_r / Σ_r w_r over the ranks (w: this rank's weight, its
/// number of examples in the batch). One MPI_Allreduce of all gradients and the weight, packed in one buffer.
/// @throws distributed_error on every rank when the ranks' models differ, or when every weight is 0.
template <std::floating_point T>
void average_gradients(const communicator& comm, nn::parameter_list<T>& params, double weight = 1.0) {
  detail::check_same_parameters(comm, params, "distributed::average_gradients");
  std::vector<double> buffer;
  buffer.reserve(params.count() + 1);
  for (const auto* g : params.grads.tensors)
    for (std::size_t i = 0; i < g->size(); ++i) buffer.push_back(weight * double(g->data()[i]));
  buffer.push_back(weight);
  TPROD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), mpi_int(buffer.size(), "parameters"), MPI_DOUBLE, MPI_SUM,
                                comm.get()));
  const double total = buffer.back();
  if (!(total > 0))
    throw distributed_error("distributed::average_gradients: the ranks' weights sum to " + std::to_string(total) +
                            " (no rank had an example)");
  std::size_t at = 0;
  for (auto* g : params.grads.tensors)
    for (std::size_t i = 0; i < g->size(); ++i) g->data()[i] = T(buffer[at++] / total);
}

/// @brief Collective: rank `root`'s parameter values on every rank (a common starting point).
/// @throws distributed_error on every rank when the ranks' models differ.
template <std::floating_point T>
void broadcast_parameters(const communicator& comm, nn::parameter_list<T>& params, int root = 0) {
  detail::check_same_parameters(comm, params, "distributed::broadcast_parameters");
  for (auto* v : params.values.tensors)
    TPROD_MPI_CHECK(MPI_Bcast(v->data(), mpi_int(v->size(), "a parameter's elements"), mpi_type<T>(), root, comm.get()));
}

}  // namespace tprod::distributed
