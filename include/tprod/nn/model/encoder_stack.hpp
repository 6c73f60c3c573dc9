// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file encoder_stack.hpp
/// @brief N encoder layers (encoder.hpp) applied in turn, owning every layer's saved state and one shared
/// workspace, so a training step on same-sized batches allocates nothing after the first. The batch's lengths
/// become the self-attention's key-padding mask; with `causal` set, token t also sees only tokens u ≤ t, which
/// makes the stack a decoder-only model's (the decoder layer of decoder.hpp without its cross-attention). A is the layers' attention (see encoder.hpp): attention_params
/// (token-wise or dimension-wise) by default, or multilinear_attention_params. With a trained transform
/// (learned_transform.hpp) the stack also trains its matrix: it records the transform's passes in the training
/// phase and lists its parameter as `<name>.transform.skew`.
#include <string>
#include <utility>
#include <vector>

#include "tprod/nn/encoder.hpp"
#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/model/layer_stack.hpp"
#include "tprod/nn/model/transform_training.hpp"

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L, class A = attention_params<T, L>>
class encoder_stack {
  using stack_type = layer_stack<T, encoder_params<T, L, A>, encoder_saved<T, attention_cache_of<A>>,
                                 encoder_grads<T, L, A>, encoder_workspace<T, attention_workspace_of<A>>>;

 public:
  using memory_space_type = space_of_part_t<A>;  ///< the attention's (so the layers') memory space
  using tensor = tensor3<T, dextents3, memory_space_type>;
  std::string name = "encoder";
  /// Self-attention under the causal mask (a language model's); the token-wise and the multi-linear attention
  /// support it, the dimension-wise one refuses it with a shape_error.
  bool causal = false;

  /// @brief Takes the layers' parameters (e.g. from make_encoder_params), first layer first.
  /// @throws shape_error for an empty stack or layers of different widths or slice counts.
  explicit encoder_stack(std::vector<encoder_params<T, L, A>> layers, std::string stack_name = "encoder")
      : name(std::move(stack_name)),
        stack_(detail::transform_training<T, L>::sharing_one(std::move(layers), "nn::encoder_stack"),
               "nn::encoder_stack") {}

  std::size_t size() const { return stack_.size(); }
  encoder_params<T, L, A>& operator[](std::size_t i) { return stack_[i]; }
  const encoder_params<T, L, A>& operator[](std::size_t i) const { return stack_[i]; }
  /// @brief The gradient accumulated for layer i.
  encoder_params<T, L, A>& grad(std::size_t i) { return stack_.grad(i); }

  const tensor& forward(const tensor& x, const batch& b) {
    training_.begin(transform(), b);
    const attention_mask mask{causal, b.lengths};
    return stack_.forward_layers(x, [&](const auto& prm, const tensor& in, tensor& out, auto& saved, auto& ws) {
      encoder_layer_forward(prm, in, b.size, mask, out, saved, ws);
    });
  }

  const tensor& backward(const tensor& dy) {
    const tensor& dx = stack_.backward_layers(
        dy,
        [](const auto& prm, const auto& saved, const tensor& d, auto& g, auto& ws) {
          encoder_layer_backward(prm, saved, d, g, ws);
        },
        [](std::size_t, const auto&) {});
    training_.end(transform());
    return dx;
  }

  template <class F>
  void for_each_parameter(F&& f) {
    stack_.for_each_layer_parameter(name, f);
    detail::transform_training<T, L>::list(transform(), name, f);
  }

  /// @brief The layers' transform (one for the whole stack).
  const L& transform() const { return stack_[0].transform(); }

 private:
  stack_type stack_;
  detail::transform_training<T, L> training_;
};

}  // namespace tprod::nn
