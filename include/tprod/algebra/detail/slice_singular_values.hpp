// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_singular_values.hpp
/// @brief The singular values of every stored transform-domain slice, without the singular vectors.
#include <Eigen/SVD>
#include <algorithm>

#include "tprod/algebra/detail/slice_factorization.hpp"
#include "tprod/algebra/svd.hpp"

namespace tprod::detail {

/// @brief σ(i, k): the i-th largest singular value of stored slice k of Â, a min(m, n) × stored_slices matrix.
/// On the device, the backend's slice SVDs (which also form the singular vectors: cuSOLVER's Jacobi gives no
/// values-only shortcut that tprod uses yet).
/// @throws shape_error for an empty dimension; numerical_error for NaN or Inf, or an SVD that did not converge.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
  requires(!std::same_as<S, host_space>)
Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> slice_singular_values(const transformed<T, L, E, S>& ahat) {
  return slice_svds(ahat, factor_mode::economy).sigma;
}
template <scalar T, transform_policy L, extents3_type E>
Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> slice_singular_values(const transformed<T, L, E>& ahat) {
  check_nonempty("singular values", ahat.m(), ahat.n(), ahat.p());
  check_finite("singular values", ahat);
  Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> sigma(Eigen::Index(std::min(ahat.m(), ahat.n())),
                                                                   Eigen::Index(ahat.stored_slices()));
  for_each_stored_slice(ahat, [&](std::size_t k) {
    visit_slice(ahat, k, [&](const auto& x) {
      const Eigen::BDCSVD<matrix_of<decltype(x)>> svd(x);
      check_converged("singular values", svd, k);
      sigma.col(Eigen::Index(k)) = svd.singularValues();
    });
  });
  return sigma;
}

}  // namespace tprod::detail
