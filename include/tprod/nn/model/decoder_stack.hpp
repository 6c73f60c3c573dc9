#pragma once
/// @file decoder_stack.hpp
/// @brief N decoder layers (decoder.hpp) applied in turn over one encoder output (the memory), owning every
/// layer's saved state and one shared workspace. The self-attention is causal with the batch's lengths as its
/// key-padding mask; the cross-attention masks the memory's padding (set_memory's lengths).
///
/// The memory is not an input of forward(x, batch) (a layer takes one tensor), so it is given before:
/// `set_memory(encoder_output, lengths)`, which keeps a pointer to it (it must stay alive and unchanged until the
/// backward pass). Every layer attends to it, so its gradient is the sum over the layers: `memory_grad()` after
/// backward, to pass on to the encoder (encoder.backward(decoder.memory_grad())).
#include <string>
#include <utility>
#include <vector>

#include "tprod/nn/decoder.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

template <std::floating_point T, real_transform<T> L>
class decoder_stack {
 public:
  std::string name = "decoder";

  /// @throws shape_error for an empty stack or layers of different widths or slice counts.
  explicit decoder_stack(std::vector<decoder_params<T, L>> layers, std::string stack_name = "decoder")
      : name(std::move(stack_name)), fresh_{tensor3<T>(), tensor3<T>(), zeros_like(first_of(layers))} {
    for (auto& l : layers) {
      TPROD_EXPECTS(l.config.width == layers[0].config.width && l.config.slices == layers[0].config.slices,
                    "nn::decoder_stack: every layer must have the first layer's d_s and p");
      layers_.emplace_back(std::move(l));
    }
    saved_.resize(layers_.size());
    outputs_.resize(layers_.size());
  }

  std::size_t size() const { return layers_.size(); }
  decoder_params<T, L>& operator[](std::size_t i) { return layers_.at(i).value; }

  /// @brief The encoder output the next forward attends to ((B·T_enc)×d_s×p) and its valid lengths (empty: all).
  void set_memory(const tensor3<T>& memory, std::vector<std::size_t> lengths = {}) {
    memory_ = &memory;
    memory_lengths_ = std::move(lengths);
  }
  /// @brief d𝒳_enc of the last backward pass, summed over the layers.
  const tensor3<T>& memory_grad() const { return memory_grad_; }

  /// @throws shape_error when no memory was set, or as decoder_layer_forward.
  const tensor3<T>& forward(const tensor3<T>& x, const batch& b) {
    TPROD_EXPECTS(memory_ != nullptr, "nn::decoder_stack: set_memory(encoder output) before forward");
    const decoder_masks masks{attention_mask{true, b.lengths}, attention_mask{false, memory_lengths_}};
    const tensor3<T>* in = &x;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      decoder_layer_forward(layers_[i].value, *in, *memory_, b.size, masks, outputs_[i], saved_[i], ws_);
      in = &outputs_[i];
    }
    return *in;
  }

  const tensor3<T>& backward(const tensor3<T>& dy) {
    const tensor3<T>* d = &dy;
    for (std::size_t i = layers_.size(); i-- > 0;) {
      decoder_layer_backward(layers_[i].value, saved_[i], *d, fresh_, ws_);
      layers_[i].accumulate(fresh_.d_params);
      if (i + 1 == layers_.size()) memory_grad_ = fresh_.d_memory;
      else memory_grad_.elements() += fresh_.d_memory.elements();
      std::swap(fresh_.d_input, dx_);
      d = &dx_;
    }
    return dx_;
  }

  template <class F>
  void for_each_parameter(F&& f) {
    for (std::size_t i = 0; i < layers_.size(); ++i) detail::visit_prefixed(layers_[i], name + "." + std::to_string(i), f);
  }

 private:
  static const decoder_params<T, L>& first_of(const std::vector<decoder_params<T, L>>& layers) {
    TPROD_EXPECTS(!layers.empty(), "nn::decoder_stack: needs at least one layer");
    return layers.front();
  }

  std::vector<trainable<T, decoder_params<T, L>>> layers_;
  std::vector<decoder_saved<T>> saved_;
  std::vector<tensor3<T>> outputs_;
  decoder_grads<T, L> fresh_;
  decoder_workspace<T> ws_;
  tensor3<T> dx_, memory_grad_;
  const tensor3<T>* memory_ = nullptr;
  std::vector<std::size_t> memory_lengths_;
};

}  // namespace tprod::nn
