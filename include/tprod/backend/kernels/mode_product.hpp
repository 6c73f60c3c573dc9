// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode_product.hpp
/// @brief The kernel contract's mode-n product task: multiply_mode(sys, mode, a, u, out) computes out = a ×_mode u
/// for a small host matrix u (r×extent), out already sized. Modes count from 0, as everywhere in tprod's code
/// (the papers' ×₁, ×₂, ×₃ are modes 0, 1, 2):
///   mode 0: out(:, :, k) = u·a(:, :, k)       mode 1: out(:, :, k) = a(:, :, k)·uᵀ       mode 2: out = a ×₃ u
#include <string>

#include "tprod/core/config.hpp"
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

/// @brief The task's preconditions, checked by every backend's multiply_mode before it computes, so that a caller
/// reaching the task directly gets the same shape_error on the host and the device: mode ∈ {0, 1, 2}, u has as many
/// columns as a's extent in that mode, and out is a's shape with that extent replaced by u's rows.
inline void expect_mode_product(int mode, const dextents3& a, std::size_t u_rows, std::size_t u_cols,
                                const dextents3& out) {
  TPROD_EXPECTS(mode >= 0 && mode <= 2, "multiply_mode: mode " + std::to_string(mode) + " of the " + a.to_string() +
                                            " tensor: a third-order tensor has modes 0, 1 and 2");
  const std::size_t extent = mode == 0 ? a.m() : mode == 1 ? a.n() : a.p();
  const dextents3 expected(mode == 0 ? u_rows : a.m(), mode == 1 ? u_rows : a.n(), mode == 2 ? u_rows : a.p());
  TPROD_EXPECTS(u_cols == extent && out == expected,
                "multiply_mode: U is " + std::to_string(u_rows) + "x" + std::to_string(u_cols) + ", mode " +
                    std::to_string(mode) + " of the " + a.to_string() + " tensor has extent " +
                    std::to_string(extent) + ", and the result is " + out.to_string() + " (" +
                    expected.to_string() + " expected)");
}

template <class Sys, class T, class S>
concept mode_product_task = requires(const Sys& sys, tensor3_view<const T, dextents3, S> a,
                                     const tprod::detail::dense_matrix<T>& u, tensor3_view<T, dextents3, S> out) {
  multiply_mode(sys, 0, a, u, out);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/mode_product.hpp"
