// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file activation_layer.hpp
/// @brief An elementwise activation (ReLU, GELU, GELU-tanh; activation.hpp) as a stateful layer, for networks
/// composed by hand: 𝒴 = σ(𝒳) forward, ∂𝒳 = ∂𝒴 ⊙ σ'(𝒳) backward (from the input it saved), in memory space S.
/// No parameters.
#include <string>
#include <utility>

#include "tprod/nn/activation.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

template <std::floating_point T, memory_space S = host_space>
struct activation_layer {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  activation kind = activation::relu;
  std::string name = "activation";

  explicit activation_layer(activation a, std::string layer_name = "activation")
      : kind(a), name(std::move(layer_name)) {}

  const tensor& forward(const tensor& x, const batch&) {
    input_ = x;
    detail::ensure_shape_like(out_, x);
    activation_forward(kind, x, out_);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    TPROD_EXPECTS(dy.extents() == input_.extents(), "nn::activation_layer '" + name + "': the gradient is " +
                                                        dy.shape() + " but the forward input was " + input_.shape());
    detail::ensure_shape_like(dx_, dy);
    activation_backward(kind, input_, dy, dx_);
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&&) {}

 private:
  tensor input_, out_, dx_;
};

}  // namespace tprod::nn
