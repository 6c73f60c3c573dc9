// SPDX-License-Identifier: Apache-2.0
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
#include "tprod/nn/model/layer_stack.hpp"
#include "tprod/nn/model/transform_training.hpp"

namespace tprod::nn {

/// The layers live in memory space S (the host by default).
template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
class decoder_stack {
 public:
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  std::string name = "decoder";

  /// @throws shape_error for an empty stack, layers of different widths or slice counts, or layers that do not
  /// share one learned transform.
  explicit decoder_stack(std::vector<decoder_params<T, L, S>> layers, std::string stack_name = "decoder")
      : name(std::move(stack_name)),
        stack_(detail::transform_training<T, L>::sharing_one(std::move(layers), "nn::decoder_stack"),
               "nn::decoder_stack") {}

  std::size_t size() const { return stack_.size(); }
  decoder_params<T, L, S>& operator[](std::size_t i) { return stack_[i]; }

  /// @brief The encoder output the next forward attends to ((B·T_enc)×d_s×p) and its valid lengths (empty: all).
  void set_memory(const tensor& memory, std::vector<std::size_t> lengths = {}) {
    memory_ = &memory;
    memory_lengths_ = std::move(lengths);
  }
  /// @brief d𝒳_enc of the last backward pass, summed over the layers.
  const tensor& memory_grad() const { return memory_grad_; }

  /// @throws shape_error when no memory was set, or as decoder_layer_forward.
  const tensor& forward(const tensor& x, const batch& b) {
    TPROD_EXPECTS(memory_ != nullptr, "nn::decoder_stack: set_memory(encoder output) before forward");
    training_.begin(transform(), b);
    const decoder_masks masks{attention_mask{true, b.lengths}, attention_mask{false, memory_lengths_}};
    return stack_.forward_layers(x, [&](const auto& prm, const tensor& in, tensor& out, auto& saved, auto& ws) {
      decoder_layer_forward(prm, in, *memory_, b.size, masks, out, saved, ws);
    });
  }

  const tensor& backward(const tensor& dy) {
    const std::size_t last = stack_.size() - 1;
    const tensor& dx = stack_.backward_layers(
        dy,
        [](const auto& prm, const auto& saved, const tensor& d, auto& g, auto& ws) {
          decoder_layer_backward(prm, saved, d, g, ws);
        },
        [&](std::size_t i, const auto& g) {  // every layer attends to the memory: its gradient is the sum
          if (i == last) memory_grad_ = g.d_memory;
          else memory_grad_ += g.d_memory;
        });
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
  layer_stack<T, decoder_params<T, L, S>, decoder_saved<T, S>, decoder_grads<T, L, S>, decoder_workspace<T, S>> stack_;
  tensor memory_grad_;
  const tensor* memory_ = nullptr;
  std::vector<std::size_t> memory_lengths_;
  detail::transform_training<T, L> training_;
};

}  // namespace tprod::nn
