// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode_product.hpp
/// @brief The kernel contract's mode-n product task: multiply_mode(sys, mode, a, u, out) computes out = a ×_mode u
/// for a small host matrix u (r×extent), out already sized. Modes count from 0, as everywhere in tprod's code
/// (the papers' ×₁, ×₂, ×₃ are modes 0, 1, 2):
///   mode 0: out(:, :, k) = u·a(:, :, k)       mode 1: out(:, :, k) = a(:, :, k)·uᵀ       mode 2: out = a ×₃ u
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept mode_product_task = requires(const Sys& sys, tensor3_view<const T, dextents3, S> a,
                                     const tprod::detail::dense_matrix<T>& u, tensor3_view<T, dextents3, S> out) {
  multiply_mode(sys, 0, a, u, out);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/mode_product.hpp"
