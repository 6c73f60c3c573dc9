// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer_stack.hpp
/// @brief The bookkeeping the encoder and decoder stacks share: N layers of one parameter type P with their
/// gradients (trainable), every layer's saved state and output, one shared workspace and one gradient buffer, so a
/// training step on same-sized batches allocates nothing after the first. The stacks say what a layer's forward and
/// backward pass are (encoder_stack.hpp, decoder_stack.hpp); the storage lives in P's memory space.
#include <string>
#include <utility>
#include <vector>

#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

/// P: a layer's parameters (with `config.width`, `config.slices`); Saved, Grads, Workspace: what its passes take,
/// Grads an aggregate whose first two members are d_input and d_params.
template <std::floating_point T, class P, class Saved, class Grads, class Workspace>
class layer_stack {
 public:
  using memory_space_type = space_of_part_t<P>;
  using tensor = tensor3<T, dextents3, memory_space_type>;

  /// @throws shape_error naming `who` for an empty stack or layers of different widths or slice counts.
  layer_stack(std::vector<P> layers, const char* who) : fresh_{tensor(), zeros_like(first_of(layers, who))} {
    for (auto& l : layers) {
      TPROD_EXPECTS(l.config.width == layers[0].config.width && l.config.slices == layers[0].config.slices,
                    std::string(who) + ": every layer must have the first layer's d_s and p");
      layers_.emplace_back(std::move(l));
    }
    saved_.resize(layers_.size());
    outputs_.resize(layers_.size());
  }

  std::size_t size() const { return layers_.size(); }
  P& operator[](std::size_t i) { return layers_.at(i).value; }
  const P& operator[](std::size_t i) const { return layers_.at(i).value; }
  /// @brief The gradient accumulated for layer i.
  P& grad(std::size_t i) { return layers_.at(i).grad; }

  /// @brief Runs step(params, in, out, saved, workspace) on every layer, first to last; returns the last output.
  template <class Step>
  const tensor& forward_layers(const tensor& x, Step&& step) {
    const tensor* in = &x;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      step(layers_[i].value, *in, outputs_[i], saved_[i], ws_);
      in = &outputs_[i];
    }
    return *in;
  }

  /// @brief Runs step(params, saved, d_out, grads, workspace) on every layer, last to first, adds each layer's
  /// parameter gradients into its accumulated ones and calls after(i, grads) (for what a stack collects besides);
  /// returns d𝒳 of the first layer.
  template <class Step, class After>
  const tensor& backward_layers(const tensor& dy, Step&& step, After&& after) {
    const tensor* d = &dy;
    for (std::size_t i = layers_.size(); i-- > 0;) {
      step(layers_[i].value, saved_[i], *d, fresh_, ws_);
      layers_[i].accumulate(fresh_.d_params);
      after(i, fresh_);
      std::swap(fresh_.d_input, dx_);  // dx_ now holds d𝒳 of layer i; the old buffer is overwritten next
      d = &dx_;
    }
    return dx_;
  }

  /// @brief f(name, value, gradient) for every layer's parameters, named "<prefix>.<i>.<parameter>".
  template <class F>
  void for_each_layer_parameter(const std::string& prefix, F&& f) {
    for (std::size_t i = 0; i < layers_.size(); ++i)
      detail::visit_prefixed(layers_[i], prefix + "." + std::to_string(i), f);
  }

 private:
  static const P& first_of(const std::vector<P>& layers, const char* who) {
    TPROD_EXPECTS(!layers.empty(), std::string(who) + ": needs at least one layer");
    return layers.front();
  }

  std::vector<trainable<T, P>> layers_;
  std::vector<Saved> saved_;
  std::vector<tensor> outputs_;
  Grads fresh_;
  Workspace ws_;
  tensor dx_;
};

}  // namespace tprod::nn
