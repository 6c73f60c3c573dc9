#pragma once
/// @file slice_factorization.hpp
/// @brief The CPU backend's slice factorization tasks (contract: backend/kernels/slice_factorization.hpp).
/// Today: the slice-wise LU inverse. The L-SVD and L-QR still call Eigen from algebra/ (see docs/design.md).
#include <Eigen/LU>
#include <algorithm>
#include <cstddef>
#include <vector>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

/// @brief out(:, :, k) = a(:, :, k)⁻¹ by LU with partial pivoting, for every slice of the square-sliced a, and
/// each slice's reciprocal condition estimate measured against the largest slice's 1-norm (so a slice that is
/// zero up to rounding counts as singular): rcond_k = rcond(A_k)·‖A_k‖₁ / max_j ‖A_j‖₁, 0 where LU meets an
/// exactly zero pivot (Eigen's estimator returns 1 for diag(1, 0)). A slice whose rcond is not above
/// `min_rcond` is left unwritten. The slices run on the system's threads when worth it.
template <class T>
std::vector<real_t<T>> invert_slices(const system& sys, tensor3_view<const T> a, tensor3_view<T> out,
                                     real_t<T> min_rcond) {
  using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const std::size_t p = a.size() == 0 ? 0 : a.p();
  const auto one_norm = [&](std::size_t k) { return a.slice(k).cwiseAbs().colwise().sum().maxCoeff(); };
  real_t<T> scale = 0;
  for (std::size_t k = 0; k < p; ++k) scale = std::max(scale, one_norm(k));
  std::vector<real_t<T>> rconds(p);
  const std::size_t work = a.m() * a.m() * a.m() * p;
  parallel_for(p, work < parallel_min_macs ? 1 : sys.threads(), [&](std::size_t k) {
    const Eigen::PartialPivLU<matrix> lu(a.slice(k));
    const bool zero_pivot = !(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > real_t<T>(0));
    rconds[k] = scale > 0 && !zero_pivot ? lu.rcond() * one_norm(k) / scale : real_t<T>(0);
    if (rconds[k] > min_rcond) out.slice(k) = lu.inverse();
  });
  return rconds;
}

}  // namespace tprod::backend::cpu
