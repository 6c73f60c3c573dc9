// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_singular_values.hpp
/// @brief The singular values of every stored transform-domain slice, without the singular vectors.
#include <Eigen/Core>
#include <algorithm>

#include "tprod/algebra/detail/slice_factorization.hpp"

namespace tprod::detail {

/// @brief σ(i, k): the i-th largest singular value of stored slice k of Â, a min(m, n) × stored_slices matrix,
/// computed where Â lives (the backend's singular_values_slices task; self-conjugate DFT slices as real matrices).
/// @throws shape_error for an empty dimension; numerical_error for NaN or Inf, or an SVD that did not converge.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> slice_singular_values(const transformed<T, L, E, S>& ahat) {
  check_nonempty("singular values", ahat.m(), ahat.n(), ahat.p());
  check_finite("singular values", ahat);
  const auto sigma = singular_values_slices(system_of<S>(), ahat.data().dynamic_view(), self_conjugate_slices(ahat));
  return Eigen::Map<const Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>>(
      sigma.data(), Eigen::Index(std::min(ahat.m(), ahat.n())), Eigen::Index(ahat.stored_slices()));
}

}  // namespace tprod::detail
