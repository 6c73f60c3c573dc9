// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file linear_layer.hpp
/// @brief The L-linear layer 𝒴 = 𝒳 *_L 𝒲 + ℬ (linear.hpp) as a stateful layer: a patch projection, or with the
/// identity transform and p = 1 a classification head. A learned transform is trained with it
/// (transform_training.hpp).
#include <string>
#include <utility>

#include "tprod/nn/linear.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/model/transform_training.hpp"

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
struct linear_layer {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  trainable<T, linear_params<T, L, S>> params;
  std::string name = "linear";

  explicit linear_layer(linear_params<T, L, S> prm, std::string layer_name = "linear")
      : params(std::move(prm)), name(std::move(layer_name)) {}

  const tensor& forward(const tensor& x, const batch& b) {
    training_.begin(params.value.transform(), b);
    linear_forward(params.value, x, out_, saved_);
    return out_;
  }
  const tensor& backward(const tensor& dy) {
    auto g = linear_backward(params.value, saved_, dy);
    params.accumulate(g.d_params);
    dx_ = std::move(g.d_input);
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
  linear_saved<T, S> saved_;
  tensor out_, dx_;
};

}  // namespace tprod::nn
