// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention_layer.hpp
/// @brief A self-attention sublayer alone (no FFN, no LayerNorm, no residual) as a stateful layer, with the batch's
/// lengths as the key-padding mask. A is the attention's parameter type (see encoder.hpp): attention_params by
/// default — L-multi-head attention, which with p = 1 and the identity transform is the standard dot-product
/// multi-head attention, or dimension-wise attention through its variant — or multilinear_attention_params. It is
/// the baseline a model swaps against another attention layer (e.g. spectral_attention_layer) when everything else
/// stays the same. It computes in A's memory space (attention_params on the device: `nn::copy(prm, device_space{})`;
/// multi-linear attention lives on the host).
#include <string>
#include <utility>

#include "tprod/nn/encoder.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/model/transform_training.hpp"

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L, class A = attention_params<T, L>>
struct attention_layer {
  using memory_space_type = space_of_part_t<A>;  ///< the attention's memory space
  using tensor = tensor3<T, dextents3, memory_space_type>;
  trainable<T, A> params;
  std::string name = "attn";

  explicit attention_layer(A prm, std::string layer_name = "attn")
      : params(std::move(prm)), name(std::move(layer_name)), fresh_(zeros_like(params.value)) {}

  const tensor& forward(const tensor& x, const batch& b) {
    training_.begin(params.value.transform(), b);
    const auto tm = detail::transform_passes_of<T, memory_space_type>(params.value.transform());
    tm.forward(x, x_hat_);
    attention_sublayer_forward(params.value, tm, x_hat_, b.size, attention_mask{false, b.lengths}, cache_, y_hat_);
    tm.inverse(y_hat_, out_);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    const auto tm = detail::transform_passes_of<T, memory_space_type>(params.value.transform());
    tm.inverse_adjoint(dy, y_hat_);
    attention_sublayer_backward(params.value, tm, x_hat_, cache_, y_hat_, ws_, dx_hat_, fresh_);
    params.accumulate(fresh_);
    tm.adjoint(dx_hat_, dx_);
    training_.end(params.value.transform());
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
    detail::transform_training<T, L>::list(params.value.transform(), name, f);
  }

 private:
  detail::transform_training<T, L> training_;
  A fresh_;  ///< the last backward pass's gradients, before they are added into params.grad
  attention_cache_of<A> cache_;
  attention_workspace_of<A> ws_;
  tensor x_hat_, y_hat_, dx_hat_, out_, dx_;
};

}  // namespace tprod::nn
