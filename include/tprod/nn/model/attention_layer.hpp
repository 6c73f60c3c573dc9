#pragma once
/// @file attention_layer.hpp
/// @brief L-multi-head self-attention alone (attention.hpp: no FFN, no LayerNorm, no residual) as a stateful layer,
/// with the batch's lengths as the key-padding mask. With p = 1 and the identity transform it is the standard
/// dot-product multi-head attention: the baseline a model swaps against another attention layer (e.g.
/// spectral_attention_layer) when everything else stays the same.
#include <string>
#include <utility>

#include "tprod/nn/attention.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L>
struct attention_layer {
  trainable<T, attention_params<T, L>> params;
  std::string name = "attn";

  explicit attention_layer(attention_params<T, L> prm, std::string layer_name = "attn")
      : params(std::move(prm)), name(std::move(layer_name)) {}

  const tensor3<T>& forward(const tensor3<T>& x, const batch& b) {
    attention_forward(params.value, x, b.size, attention_mask{false, b.lengths}, out_, saved_);
    return out_;
  }
  const tensor3<T>& backward(const tensor3<T>& dy) {
    auto g = attention_backward(params.value, saved_, dy);
    params.accumulate(g.d_params);
    dx_ = std::move(g.d_input);
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
  }

 private:
  attention_saved<T> saved_;
  tensor3<T> out_, dx_;
};

}  // namespace tprod::nn
