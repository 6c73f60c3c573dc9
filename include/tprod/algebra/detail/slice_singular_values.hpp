// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_singular_values.hpp
/// @brief The singular values of every stored transform-domain slice, without the singular vectors.
#include <Eigen/Core>
#include <algorithm>

#include "tprod/algebra/detail/slice_factorization.hpp"

namespace tprod::detail {

/// @brief σ(i, k): the i-th largest singular value of stored slice k of Â, a min(m, n) × (all stored slices)
/// matrix, computed where Â lives (the backend's singular_values_slices task; self-conjugate DFT slices as real
/// matrices), each holder's slices gathered on every holder when Â is spread over several.
/// @throws shape_error for an empty dimension; numerical_error for NaN or Inf, or an SVD that did not converge.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> slice_singular_values(const transformed<T, L, E, S>& ahat) {
  check_nonempty("singular values", ahat.m(), ahat.n(), ahat.p());
  const std::size_t r = std::min(ahat.m(), ahat.n());
  std::vector<real_t<T>> sigma;
  ahat.window().agree_on_slices([&] {
    check_finite("singular values", ahat);
    sigma = singular_values_slices(system_of<S>(), ahat.data().dynamic_view(), self_conjugate_slices(ahat));
  });
  sigma = ahat.window().gather_columns(sigma, r);
  return Eigen::Map<const Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>>(
      sigma.data(), Eigen::Index(r), Eigen::Index(ahat.window().total));
}

}  // namespace tprod::detail
