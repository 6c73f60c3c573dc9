// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file sequential.hpp
/// @brief Layers applied in order, itself a layer: forward runs them first to last, backward last to first,
/// and the parameters are named "<layer name>.<parameter name>". A parameter that several layers share (the S of
/// one learned transform given to several layers) is listed once, under the first layer's name, so an optimizer
/// steps it once with the gradient all of them accumulated.
///
/// The layers share one memory space, the model's. The layers live on the heap, so the references that `parameters(model)` hands to an optimizer stay valid
/// when the model is moved (a sequential is move-only).
#include <algorithm>
#include <memory>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

template <std::floating_point T, layer<T>... Ms>
class sequential {
 public:
  /// The layers' memory space (they must share one).
  using memory_space_type = layer_space_t<std::tuple_element_t<0, std::tuple<Ms...>>>;
  using tensor = tensor3<T, dextents3, memory_space_type>;
  static_assert((std::same_as<layer_space_t<Ms>, memory_space_type> && ...),
                "tprod::nn::sequential: every layer must live in the same memory space (a layer type that names no "
                "space, such as activation_layer<T>, lives on the host: give each layer the model's space)");

  explicit sequential(Ms... layers) : layers_(std::make_unique<std::tuple<Ms...>>(std::move(layers)...)) {}

  std::string name = "model";

  /// @brief Layer I (e.g. the encoder stack, to read or replace its weights).
  template <std::size_t I>
  auto& get() {
    return std::get<I>(*layers_);
  }
  template <std::size_t I>
  const auto& get() const {
    return std::get<I>(*layers_);
  }
  static constexpr std::size_t size() { return sizeof...(Ms); }

  const tensor& forward(const tensor& x, const batch& b) {
    const tensor* cur = &x;
    std::apply([&](auto&... l) { ((cur = &l.forward(*cur, b)), ...); }, *layers_);
    return *cur;
  }

  const tensor& backward(const tensor& dy) {
    return backward_from<sizeof...(Ms)>(dy);
  }

  /// f(name, value, gradient) for every parameter, "<layer>.<parameter>" (the model's own name is not prepended,
  /// so checkpoint names read "encoder.0.attn.w_qkv"); a shared parameter once, under its first name.
  template <class F>
  void for_each_parameter(F&& f) {
    std::vector<const tensor*> seen;
    const auto once = [&](std::string_view name, tensor& value, tensor& grad) {
      if (std::find(seen.begin(), seen.end(), &value) != seen.end()) return;
      seen.push_back(&value);
      f(name, value, grad);
    };
    std::apply([&](auto&... l) { (l.for_each_parameter(once), ...); }, *layers_);
  }

 private:
  template <std::size_t I>
  const tensor& backward_from(const tensor& dy) {
    if constexpr (I == 0) {
      return dy;
    } else {
      return backward_from<I - 1>(std::get<I - 1>(*layers_).backward(dy));
    }
  }

  std::unique_ptr<std::tuple<Ms...>> layers_;
};

/// @brief The model m (moved from) with layer I replaced by replace(std::move(layer I)), whose type may differ
/// (e.g. an encoder stack with another attention, multilinear_encoder.hpp); the other layers and the name moved
/// across.
template <std::size_t I, std::floating_point T, layer<T>... Ms, class F>
  requires(I < sizeof...(Ms))
auto with_layer_replaced(sequential<T, Ms...>&& m, F&& replace) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    const auto moved = [&]<std::size_t J>() -> decltype(auto) {
      if constexpr (J == I)
        return std::forward<F>(replace)(std::move(m.template get<J>()));
      else
        return std::move(m.template get<J>());
    };
    using replaced = std::remove_cvref_t<decltype(moved.template operator()<I>())>;
    sequential<T, std::conditional_t<K == I, replaced, Ms>...> out(moved.template operator()<K>()...);
    out.name = std::move(m.name);
    return out;
  }(std::index_sequence_for<Ms...>{});
}

}  // namespace tprod::nn
