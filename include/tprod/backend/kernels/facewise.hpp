// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file facewise.hpp
/// @brief The kernel contract's facewise task: facewise(sys, a, b, c) computes C(:, :, k) = A(:, :, k)·B(:, :, k)
/// for every slice (A m×l×p, B l×n×p, C m×n×p already sized; l = 0 gives C = 0).
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept facewise_task = requires(const Sys& sys, tensor3_view<const T, dextents3, S> a, tensor3_view<T, dextents3, S> c) {
  facewise(sys, a, a, c);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/facewise.hpp"
