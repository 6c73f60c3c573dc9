// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file norm_layer.hpp
/// @brief A tensor LayerNorm (layer_norm.hpp) as a stateful layer: the final normalization of a pre-norm encoder,
/// which paper 001's ViTs apply before the head (its §7 parameter counts include it).
/// The original-domain kind normalizes 𝒳 itself; the transform-domain kind (paper 001, Def. 5.5) normalizes
/// X̂ = L(𝒳) and returns L⁻¹ of the result, as the encoder layers do around their sublayers.
#include <string>
#include <utility>

#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/layer_norm.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/model/transform_training.hpp"

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
struct norm_layer {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  trainable<T, layer_norm_params<T, S>> params;
  L transform;
  std::string name = "norm";

  norm_layer(layer_norm_params<T, S> prm, L l, std::string layer_name = "norm")
      : params(std::move(prm)), transform(std::move(l)), name(std::move(layer_name)), fresh_(zeros_like(params.value)) {
    transform.check_size(params.value.slices());
  }

  const tensor& forward(const tensor& x, const batch& b) {
    if (!in_transform()) {
      layer_norm_forward(params.value, x, out_, saved_);
      return out_;
    }
    training_.begin(transform, b);
    const auto tm = detail::transform_passes_of<T, S>(transform);
    tm.forward(x, hat_);
    layer_norm_forward(params.value, hat_, hat_out_, saved_);
    tm.inverse(hat_out_, out_);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    if (!in_transform()) {
      layer_norm_backward(params.value, saved_, dy, dx_, fresh_);
    } else {
      // y = L⁻¹(LN(L x)): the cotangent goes through L⁻ᵀ, the norm's backward, then Lᵀ.
      const auto tm = detail::transform_passes_of<T, S>(transform);
      tm.inverse_adjoint(dy, hat_);
      layer_norm_backward(params.value, saved_, hat_, hat_out_, fresh_);
      tm.adjoint(hat_out_, dx_);
      training_.end(transform);
    }
    params.accumulate(fresh_);
    return dx_;
  }
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params, name, f);
    if (in_transform()) detail::transform_training<T, L>::list(transform, name, f);
  }

 private:
  detail::transform_training<T, L> training_;
  bool in_transform() const { return params.value.kind == layer_norm_kind::transform_domain; }

  layer_norm_params<T, S> fresh_;
  layer_norm_saved<T, S> saved_;
  tensor hat_, hat_out_, out_, dx_;
};

}  // namespace tprod::nn
