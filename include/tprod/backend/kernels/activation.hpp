// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file activation.hpp
/// @brief The kernel contract's activation tasks, for real scalars. For a backend system `sys` of space S, an
/// activation σ (nn_kinds.hpp) and views of equal size:
///   activation_forward(sys, σ, x, y)                   y = σ(x)                      (y may be x's memory)
///   activation_backward(sys, σ, x, g, dx)              dx = g ⊙ σ'(x)                (dx may be g's memory)
///   activation_keep_derivative(sys, σ, x_to_dx, y)     y = σ(x), then x ← σ'(x): what the FFN's backward needs,
///                                                      in one pass
///   multiply_elementwise(sys, f, y)                    y ← y ⊙ f
#include "tprod/backend/kernels/nn_kinds.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept activation_tasks = requires(const Sys& sys, activation a, tensor3_view<const T, dextents3, S> c,
                                    tensor3_view<T, dextents3, S> x) {
  activation_forward(sys, a, c, x);
  activation_backward(sys, a, c, c, x);
  activation_keep_derivative(sys, a, x, x);
  multiply_elementwise(sys, c, x);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/activation.hpp"
