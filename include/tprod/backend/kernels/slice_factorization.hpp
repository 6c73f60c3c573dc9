// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_factorization.hpp
/// @brief The kernel contract's slice factorization tasks:
///   invert_slices(sys, a, out, min_rcond)   out(:, :, k) = a(:, :, k)⁻¹ for the square slices of a, and each
///                                           slice's reciprocal condition number against the largest slice's
///                                           1-norm (0 at a zero pivot)                  → std::vector<real_t<T>>
///   svd_slices(sys, a, real_slices, u, v)   a(:, :, k) = u_k·diag(σ_k)·v_kᴴ for every slice: u m×c_u×q and v
///                                           n×c_v×q with c_u ∈ {r, m}, c_v ∈ {r, n}, r = min(m, n) (economy or
///                                           full); a slice k with real_slices[k] is factored as the real matrix
///                                           Re a(:, :, k) (a self-conjugate DFT slice, whose factors must stay
///                                           real); numerical_error naming a slice that did not converge
///                                                                   → σ, r×q column-major, non-increasing per slice
///   singular_values_slices(sys, a, real_slices)
///                                           σ of every slice as svd_slices gives it, without forming the
///                                           singular vectors                    → σ, r×q column-major
///   qr_slices(sys, a, real_slices, q, r)    a(:, :, k) = q_k·r_k for every slice (Householder): q m×c×q with
///                                           orthonormal columns, r c×n×q upper triangular, c ∈ {min(m, n), m};
///                                           real_slices as for svd_slices
///   leading_columns(sys, x, y)              y(:, j, k) = x(:, j, k) for the y.n() ≤ x.n() leading columns
#include <concepts>
#include <vector>

#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept slice_factorization_tasks = requires(const Sys& sys, tensor3_view<const T, dextents3, S> a,
                                             tensor3_view<T, dextents3, S> out, real_t<T> min_rcond) {
  { invert_slices(sys, a, out, min_rcond) } -> std::same_as<std::vector<real_t<T>>>;
  { svd_slices(sys, a, std::vector<char>{}, out, out) } -> std::same_as<std::vector<real_t<T>>>;
  { singular_values_slices(sys, a, std::vector<char>{}) } -> std::same_as<std::vector<real_t<T>>>;
  qr_slices(sys, a, std::vector<char>{}, out, out);
  leading_columns(sys, a, out);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/slice_factorization.hpp"
