// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_factorization.hpp
/// @brief Shared machinery of the slice-wise factorizations (L-SVD, L-QR, ranks): which stored slices are factored
/// as real matrices, the checks before factoring, and per-stored-slice counts mapped to all p slices.
#include <Eigen/Core>
#include <cstddef>
#include <string>
#include <vector>

#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/slice_factorization.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod::detail {

/// @brief Whether stored slice k of Â is its own complex conjugate: a real tensor under a transform that stores
/// a conjugate-symmetric half spectrum (the DFT's slices 0 and p/2). Its factors must be real, or the real part
/// that the half-spectrum inverse takes would not be a factorization any more.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool self_conjugate_slice(const transformed<T, L, E, S>& ahat, std::size_t k) {
  using D = typename L::template domain_scalar<T>;
  return !is_complex_v<T> && is_complex_v<D> && ahat.window().total < ahat.p() && ahat.slice_weight(k) == 1.0;
}

/// @brief Per-stored-slice values extended to all p transform-domain slices: identical when every slice is
/// stored, else (the DFT's conjugate-symmetric half spectrum) slice j takes the value of stored slice min(j, p−j).
template <class V>
std::vector<V> to_all_slices(const std::vector<V>& stored, std::size_t p) {
  if (stored.size() == p) return stored;
  std::vector<V> all(p);
  for (std::size_t j = 0; j < p; ++j) all[j] = stored[std::min(j, p - j)];
  return all;
}

/// @brief Throws numerical_error unless every stored transform-domain element is finite, judged where Â lives (the
/// backend's all_finite task): a factorization of NaN or Inf means nothing (Eigen's SVD then fails and leaves its
/// outputs uninitialized; cuSOLVER's Jacobi does not converge).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
void check_finite(const char* what, const transformed<T, L, E, S>& ahat) {
  if (!all_finite(system_of<S>(), ahat.data().dynamic_view()))
    throw numerical_error(std::string(what) + ": the " + ahat.shape() + " tensor holds NaN or Inf (in the " +
                          std::string(L::name()) + " transform domain); a factorization needs finite data");
}

/// @brief self_conjugate_slice(Â, k) for every stored slice k: the real_slices argument of the slice
/// factorization tasks.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
std::vector<char> self_conjugate_slices(const transformed<T, L, E, S>& ahat) {
  std::vector<char> real(ahat.stored_slices());
  for (std::size_t k = 0; k < real.size(); ++k) real[k] = self_conjugate_slice(ahat, k);
  return real;
}

/// @brief Throws shape_error for a tensor with an empty dimension (the factorizations need m, n, p ≥ 1).
inline void check_nonempty(const char* what, std::size_t m, std::size_t n, std::size_t p) {
  TPROD_EXPECTS(m > 0 && n > 0 && p > 0,
                std::string(what) + ": the tensor " + shape_string(m, n, p) + " has an empty dimension");
}

}  // namespace tprod::detail
