// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file activation.hpp
/// @brief Elementwise activations of the feed-forward layers: ReLU, GELU (exact, with erf), GELU's tanh
/// approximation, and tanh (BERT's pooler), with their derivatives, in the tensors' memory space (the backend's activation tasks,
/// backend/kernels/activation.hpp).
///
/// ReLU(x) = max(x, 0);  GELU(x) = x·Φ(x) = ½x(1 + erf(x/√2));
/// GELU_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³)));  tanh'(x) = 1 − tanh²(x).
#include <string_view>

#include "tprod/backend/kernels/activation.hpp"
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

/// @brief relu, gelu, gelu_tanh, tanh.
using activation = backend::kernels::activation;

/// @brief The activation's name, for messages and benchmark labels.
constexpr std::string_view name(activation a) {
  switch (a) {
    case activation::relu:
      return "relu";
    case activation::gelu:
      return "gelu";
    case activation::gelu_tanh:
      return "gelu_tanh";
    case activation::tanh:
      return "tanh";
  }
  return "?";
}

/// @brief out = σ(in) elementwise (out may alias in).
template <std::floating_point T, class S>
void activation_forward(activation a, const tensor3<T, dextents3, S>& in, tensor3<T, dextents3, S>& out) {
  detail::ensure_shape_like(out, in);
  activation_forward(tprod::detail::system_of<S>(), a, in.dynamic_view(), out.dynamic_view());
}

/// @brief d_in = d_out ⊙ σ'(in) (d_in may alias d_out).
template <std::floating_point T, class S>
void activation_backward(activation a, const tensor3<T, dextents3, S>& in, const tensor3<T, dextents3, S>& d_out,
                         tensor3<T, dextents3, S>& d_in) {
  detail::ensure_shape_like(d_in, in);
  activation_backward(tprod::detail::system_of<S>(), a, in.dynamic_view(), d_out.dynamic_view(), d_in.dynamic_view());
}

/// @brief g = σ(x) and, in place of x, σ'(x): what a layer that only needs σ' later (the FFN's backward pass)
/// keeps, so that the backward pass is one multiplication instead of re-evaluating erf and exp.
template <std::floating_point T, class S>
void activation_forward_keep_derivative(activation a, tensor3<T, dextents3, S>& x_to_derivative,
                                        tensor3<T, dextents3, S>& g) {
  detail::ensure_shape_like(g, x_to_derivative);
  activation_keep_derivative(tprod::detail::system_of<S>(), a, x_to_derivative.dynamic_view(), g.dynamic_view());
}

}  // namespace tprod::nn
