#pragma once
/// @file slice_factorization.hpp
/// @brief The CUDA backend's slice factorization tasks (contract: backend/kernels/slice_factorization.hpp), the
/// mirror of backend/cpu/slice_factorization.hpp: the slice-wise inverse by batched LU (cuBLAS getrf/getri).
#include <cstddef>
#include <vector>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"

namespace tprod::backend::cuda {

/// @brief out(:, :, k) = a(:, :, k)⁻¹ and each slice's reciprocal condition number against the largest slice's
/// 1-norm, 1/(‖A_k⁻¹‖₁·max_j ‖A_j‖₁) (exact, from the computed inverse; 0 at a zero pivot). Every slice is
/// written; the caller refuses the result when any rcond is not above min_rcond.
template <class T>
std::vector<real_t<T>> invert_slices(const system& sys, dview<const T> a, dview<T> out, real_t<T>) {
  const std::size_t p = a.size() == 0 ? 0 : a.p();
  std::vector<double> rconds(p);
  if (p != 0) raw::invert_slices(a.data(), out.data(), a.m(), p, rconds.data(), sys.stream());
  return std::vector<real_t<T>>(rconds.begin(), rconds.end());
}

}  // namespace tprod::backend::cuda
