// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file elementwise.hpp
/// @brief The kernel contract's elementwise and reduction tasks, declared once as a concept; each backend
/// implements them in its own backend/cpu/elementwise.hpp and backend/cuda/elementwise.hpp and checks itself against the concept.
///
/// For a backend system `sys` of space S and scalar T, with views `x, y` of T in S (dynamic extents):
///   fill(sys, x, v)                  x = v everywhere
///   convert(sys, x_const, y)         y = x (same scalar; real to complex is also required)
///   copy(sys, x_const, y)            y = x
///   axpy(sys, α, x_const, y)         y += α·x
///   scale(sys, α, x)                 x *= α
///   all_finite(sys, x_const)         no NaN or ±Inf                          → bool
///   frobenius_norm(sys, x_const)     ‖x‖_F                                   → real_t<T>
///   dot(sys, x_const, y_const)       Σ conj(x)·y                             → T
///   slice_squared_norms(sys, x)      ‖x(:, :, k)‖²_F per slice, in double    → std::vector<double>
///   slice_dots(sys, x, y)            Σ_ij conj(x)·y per slice                → std::vector<T>
///   adjoint_slices(sys, a, at)       at(:, :, k) = a(:, :, k)ᴴ
///   identity_slices(sys, x)          x(:, :, k) = I
///   permute_modes(sys, x_const, shape, perm, y)
///                                    y = x with its modes reordered: x holds a column-major order-N tensor of
///                                    `shape` (a host list), y's mode k is x's mode perm[k] (numpy.transpose);
///                                    x and y are flat views of equal size
/// Host values (the reductions) are returned once the device work they need has finished.
#include <concepts>
#include <span>
#include <vector>

#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept elementwise_tasks = requires(const Sys& sys, tensor3_view<T, dextents3, S> x,
                                     tensor3_view<const T, dextents3, S> c, const T& v) {
  fill(sys, x, v);
  convert(sys, c, x);
  copy(sys, c, x);
  axpy(sys, v, c, x);
  scale(sys, v, x);
  { all_finite(sys, c) } -> std::same_as<bool>;
  { frobenius_norm(sys, c) } -> std::same_as<real_t<T>>;
  { dot(sys, c, c) } -> std::same_as<T>;
  { slice_squared_norms(sys, c) } -> std::same_as<std::vector<double>>;
  { slice_dots(sys, c, c) } -> std::same_as<std::vector<T>>;
  adjoint_slices(sys, c, x);
  identity_slices(sys, x);
  permute_modes(sys, c, std::span<const std::size_t>(), std::span<const std::size_t>(), x);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/elementwise.hpp"
