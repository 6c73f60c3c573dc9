// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file rank.hpp
/// @brief Ranks of distributed tensors (paper 000, Def. 9–10): every owned slice's singular values on its rank, one
/// MPI_Allgatherv of them, then the one-process decision (tolerance, multi-rank, average and tubal rank) on every
/// rank alike.
#include <algorithm>
#include <limits>
#include <vector>

#include "tprod/algebra/rank.hpp"
#include "tprod/distributed/svd.hpp"

namespace tprod::distributed {

/// @brief Collective: the multi-rank, average rank and tubal rank of Â, the same on every rank (and the same as
/// tprod::ranks of the whole tensor).
/// @param ahat Â, distributed by slices.
/// @param tol as tprod::ranks (the default tolerance uses the largest singular value over all ranks).
/// @param epsilon as tprod::ranks.
/// @throws shape_error (every rank alike) for an empty dimension; distributed_error on every rank for NaN or Inf.
template <scalar T, transform_policy L>
rank_info ranks(const transformed<T, L>& ahat, double tol = -1,
                double epsilon = std::numeric_limits<real_t<T>>::epsilon()) {
  tprod::detail::check_nonempty("distributed::ranks", ahat.m(), ahat.n(), ahat.p());
  const std::size_t r = std::min(ahat.m(), ahat.n());
  std::vector<real_t<T>> local;
  detail::factor_owned_slices(ahat, "distributed::ranks", [&] {
    local = singular_values_slices(tprod::detail::system_of<host_space>(), ahat.local().dynamic_view(),
                                   detail::owned_self_conjugate_slices(ahat));
  });
  return tprod::detail::ranks_from_singular_values(detail::gather_slice_columns(ahat.comm(), ahat.slices(), r, local),
                                                   ahat.m(), ahat.n(), ahat.p(), ahat.transform(), tol, epsilon);
}

/// @brief Collective: ranks(transform(A, L), tol, epsilon) for A distributed by tubes.
template <scalar T, transform_policy L>
rank_info ranks(const tensor3<T>& a, const L& policy, double tol = -1,
                double epsilon = std::numeric_limits<real_t<T>>::epsilon()) {
  return ranks(transform(a, policy), tol, epsilon);
}

}  // namespace tprod::distributed
