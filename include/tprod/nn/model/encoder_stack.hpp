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

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L, class A = attention_params<T, L>>
class encoder_stack {
 public:
  std::string name = "encoder";
  /// Self-attention under the causal mask (a language model's); the token-wise and the multi-linear attention
  /// support it, the dimension-wise one refuses it with a shape_error.
  bool causal = false;

  /// @brief Takes the layers' parameters (e.g. from make_encoder_params), first layer first.
  /// @throws shape_error for an empty stack or layers of different widths or slice counts.
  explicit encoder_stack(std::vector<encoder_params<T, L, A>> layers, std::string stack_name = "encoder")
      : name(std::move(stack_name)), fresh_{tensor3<T>(), zeros_like(first_of(layers))} {
    for (auto& l : layers) {
      TPROD_EXPECTS(l.config.width == layers[0].config.width && l.config.slices == layers[0].config.slices,
                    "nn::encoder_stack: every layer must have the first layer's d_s and p");
      if constexpr (trained_transform<L, T>)
        TPROD_EXPECTS(layers_.empty() || l.transform() == layers_.front().value.transform(),
                      "nn::encoder_stack: every layer must share the first layer's learned transform");
      layers_.emplace_back(std::move(l));
    }
    saved_.resize(layers_.size());
    outputs_.resize(layers_.size());
  }

  std::size_t size() const { return layers_.size(); }
  encoder_params<T, L, A>& operator[](std::size_t i) { return layers_.at(i).value; }
  const encoder_params<T, L, A>& operator[](std::size_t i) const { return layers_.at(i).value; }
  /// @brief The gradient accumulated for layer i.
  encoder_params<T, L, A>& grad(std::size_t i) { return layers_.at(i).grad; }

  const tensor3<T>& forward(const tensor3<T>& x, const batch& b) {
    if constexpr (trained_transform<L, T>) transform().begin_pass(b.mode == phase::train);
    const attention_mask mask{causal, b.lengths};
    const tensor3<T>* in = &x;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      encoder_layer_forward(layers_[i].value, *in, b.size, mask, outputs_[i], saved_[i], ws_);
      in = &outputs_[i];
    }
    return *in;
  }

  const tensor3<T>& backward(const tensor3<T>& dy) {
    const tensor3<T>* d = &dy;
    for (std::size_t i = layers_.size(); i-- > 0;) {
      encoder_layer_backward(layers_[i].value, saved_[i], *d, fresh_, ws_);
      layers_[i].accumulate(fresh_.d_params);
      std::swap(fresh_.d_input, dx_);  // dx_ now holds d𝒳 of layer i; the old buffer is overwritten next
      d = &dx_;
    }
    if constexpr (trained_transform<L, T>) transform().end_backward();
    return dx_;
  }

  template <class F>
  void for_each_parameter(F&& f) {
    for (std::size_t i = 0; i < layers_.size(); ++i) detail::visit_prefixed(layers_[i], name + "." + std::to_string(i), f);
    if constexpr (trained_transform<L, T>) f(name + ".transform.skew", transform().skew(), transform().skew_grad());
  }

  /// @brief The layers' transform (one for the whole stack).
  const L& transform() const { return layers_.front().value.transform(); }

 private:
  static const encoder_params<T, L, A>& first_of(const std::vector<encoder_params<T, L, A>>& layers) {
    TPROD_EXPECTS(!layers.empty(), "nn::encoder_stack: needs at least one layer");
    return layers.front();
  }

  std::vector<trainable<T, encoder_params<T, L, A>>> layers_;
  std::vector<encoder_saved<T, attention_cache_of<A>>> saved_;
  std::vector<tensor3<T>> outputs_;
  encoder_grads<T, L, A> fresh_;
  encoder_workspace<T, attention_workspace_of<A>> ws_;
  tensor3<T> dx_;
};

}  // namespace tprod::nn
