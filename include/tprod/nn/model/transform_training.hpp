// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transform_training.hpp
/// @brief What a layer that applies a transform L does when L is trained (a learned_transform, learned_transform.hpp):
/// it starts the recording of L's passes at each forward pass in the training phase, checks after its backward pass
/// that every recorded pass was taken, and lists Z's parameter S as `<layer>.transform.skew`. For a fixed transform
/// it does nothing and takes no memory. Every layer of the composition API that takes a transform holds one, so a
/// learned Z is trained wherever it is given, never silently used as a fixed one.
#include <string>

#include "tprod/core/error.hpp"

#include "tprod/nn/model/layer.hpp"
#include "tprod/nn/nn_concepts.hpp"

namespace tprod::nn::detail {

template <std::floating_point T, class L>
class transform_training {
  static constexpr bool trained = trained_transform<L, T>;
  struct fixed {};
  template <class U> struct ticket_of { using type = fixed; };
  template <class U> requires trained_transform<U, T> struct ticket_of<U> { using type = typename U::pass_ticket; };

 public:
  /// @brief At the start of the layer's forward pass.
  void begin(const L& l, const batch& b) {
    if constexpr (trained) l.begin_pass(ticket_, b.mode == phase::train);
  }
  /// @brief At the end of the layer's backward pass.
  /// @throws numerical_error when a recorded pass of L was not taken (the backward pass must mirror the forward).
  void end(const L& l) {
    if constexpr (trained) l.end_backward(ticket_);
  }
  /// @brief The layers of a stack, checked to share one learned transform (a trained Z is one matrix for the whole
  /// stack: a layer with a Z of its own would run it untrained).
  /// @throws shape_error naming `where` when a layer's learned transform is not the first layer's.
  template <class Layers>
  static Layers sharing_one(Layers layers, const std::string& where) {
    if constexpr (trained)
      for (const auto& layer : layers)
        TPROD_EXPECTS(layer.transform() == layers.front().transform(),
                      where + ": every layer must share the first layer's learned transform");
    return layers;
  }
  /// @brief f(layer_name + ".transform.skew", S, ∂S) when L is trained.
  template <class F>
  static void list(const L& l, const std::string& layer_name, F& f) {
    if constexpr (trained) f(layer_name + ".transform.skew", l.skew(), l.skew_grad());
  }

 private:
  [[no_unique_address]] typename ticket_of<L>::type ticket_{};
};

}  // namespace tprod::nn::detail
