// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file norms.hpp
/// @brief Frobenius norms and inner products of distributed tensors: each rank's partial sums, then one
/// MPI_Allreduce, so every rank gets the same value. In the transform domain the slices count with their global
/// slice weights, as on one process.
#include <cmath>
#include <vector>

#include "tprod/algebra/norms.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/distributed/transformed.hpp"

namespace tprod::distributed {

namespace detail {
/// @brief Collective: Σ over the ranks of each rank's `value` (MPI_SUM on every rank).
template <class V>
V sum_over_ranks(const communicator& comm, V value) {
  V total{};
  TPROD_MPI_CHECK(MPI_Allreduce(&value, &total, 1, mpi_type<V>(), MPI_SUM, comm.get()));
  return total;
}
}  // namespace detail

/// @brief Collective: ‖A‖_F.
template <scalar T>
real_t<T> frobenius_norm(const tensor3<T>& a) {
  double sum = 0;
  for (double s : slice_squared_norms(tprod::detail::system_of<host_space>(), a.local().dynamic_view())) sum += s;
  return real_t<T>(std::sqrt(detail::sum_over_ranks(a.comm(), sum)));
}

/// @brief Collective: ⟨A, B⟩ = Σ conj(a_ijk)·b_ijk. @throws shape_error (on every rank alike) when the shapes differ.
template <scalar T>
T inner(const tensor3<T>& a, const tensor3<T>& b) {
  if (!(a.comm() == b.comm())) throw shape_error("distributed::inner: the operands live on different communicators");
  TPROD_EXPECTS(a.m() == b.m() && a.n() == b.n() && a.p() == b.p(),
                "distributed::inner: shapes " + a.shape() + " and " + b.shape() + " differ");
  T sum{};
  const auto sys = tprod::detail::system_of<host_space>();
  for (const T& d : slice_dots(sys, a.local().dynamic_view(), b.local().dynamic_view())) sum += d;
  return detail::sum_over_ranks(a.comm(), sum);
}

/// @brief Collective: ‖Â‖_F over all p transform-domain slices, √(Σ_k w_k‖Â(:, :, k)‖²_F).
template <scalar T, transform_policy L>
real_t<T> frobenius_norm(const transformed<T, L>& ahat) {
  const std::vector<double> squares =
      slice_squared_norms(tprod::detail::system_of<host_space>(), ahat.local().dynamic_view());
  const double sum = tprod::detail::weighted_squares_sum(
      squares, [&](std::size_t k) { return ahat.slice_weight(ahat.first_slice() + k); });
  return real_t<T>(std::sqrt(detail::sum_over_ranks(ahat.comm(), sum)));
}

/// @brief Collective: ⟨Â, B̂⟩ = Σ_k w_k⟨Â(:, :, k), B̂(:, :, k)⟩ over all p slices, as tprod::inner.
template <scalar T, transform_policy L>
auto inner(const transformed<T, L>& a, const transformed<T, L>& b) {
  a.check_same(b, "inner");
  using D = typename L::template domain_scalar<T>;
  const std::vector<D> dots =
      slice_dots(tprod::detail::system_of<host_space>(), a.local().dynamic_view(), b.local().dynamic_view());
  const D sum =
      tprod::detail::weighted_dots_sum(dots, [&](std::size_t k) { return a.slice_weight(a.first_slice() + k); });
  return detail::sum_over_ranks(a.comm(), sum);
}

}  // namespace tprod::distributed
