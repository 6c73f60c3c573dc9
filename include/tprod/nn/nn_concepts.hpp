// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file nn_concepts.hpp
/// @brief Concepts of the nn area: which transforms the layers accept, and what a parameter set is.
///
/// The layers run attention and the activations inside the transform domain, so they need a transform whose
/// domain scalar is the (real) original scalar: the orthonormal DCT (papers 000 and 001), the identity
/// (the standard matrix Transformer, p = 1) or any real invertible matrix_transform. The DFT keeps only half of
/// its complex slices and would put complex numbers into a softmax; it is refused at compile time.
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod::nn {

/// @brief A transform the layers accept for scalar T: real-valued slices in the transform domain.
template <class L, class T>
concept real_transform = std::floating_point<T> && transform_policy<L> &&
    std::same_as<typename L::template domain_scalar<T>, T> && std::same_as<typename L::template original_scalar<T>, T>;

/// @brief A transform whose matrix is trained (learned_transform.hpp): the layers report each pass of L and L⁻¹
/// of a forward pass to it, and the gradient at that pass in the backward pass.
template <class L, class T>
concept trained_transform =
    requires(const L& l, bool inverse, tensor3_view<const T, dextents3, typename L::memory_space_type> v,
             typename L::pass_ticket& ticket) {
      l.begin_pass(inverse);
      l.end_backward();
      l.begin_pass(ticket, inverse);
      l.end_backward(ticket);
      { l.skew() } -> std::same_as<tensor3<T, dextents3, typename L::memory_space_type>&>;
      { l.skew_grad() } -> std::same_as<tensor3<T, dextents3, typename L::memory_space_type>&>;
      l.record_pass(inverse, v);
      l.backward_pass(inverse, v);
    };

/// @brief A parameter set: a struct whose `for_each(f)` calls `f(name, tensor3<T, dextents3, S>&)` on every
/// trainable tensor, in a fixed order (so a parameter set and its gradient of the same type visit matching tensors).
template <class P, class T, class S = host_space>
concept parameter_set = requires(P& params) {
  params.for_each([](std::string_view, tensor3<T, dextents3, S>&) {});
};

/// @brief The memory space of a parameter set, state or layer type X: X::memory_space_type, the host where X names
/// none.
template <class X>
struct space_of_part {
  using type = host_space;
};
template <class X>
  requires requires { typename X::memory_space_type; }
struct space_of_part<X> {
  using type = typename X::memory_space_type;
};
template <class X>
using space_of_part_t = typename space_of_part<X>::type;

namespace detail {
/// @brief A parameter set or tensor in memory space To: p itself (moved) where it lives there, else copy(p, To{}),
/// the copy of its header (the device's comes with tprod/cuda.hpp). The model builders use it to build on the host,
/// with the host's random numbers, and then move the parameters once.
template <memory_space To, class P>
auto to_space(P&& p) {
  using V = std::remove_cvref_t<P>;
  if constexpr (std::same_as<space_of_part_t<V>, To>) return V(std::forward<P>(p));
  else return copy(p, To{});
}

/// @brief Every element of v in memory space To (to_space on each): a model's layers, say.
template <memory_space To, class P>
auto all_to_space(std::vector<P> v) {
  std::vector<decltype(to_space<To>(std::move(v.front())))> out;
  out.reserve(v.size());
  for (auto& x : v) out.push_back(to_space<To>(std::move(x)));
  return out;
}

/// @brief f with `prefix` put before every name: a parameter set visits its parts as prefixed(f, "attn.").
template <class F>
auto prefixed(F& f, const char* prefix) {
  return [&f, prefix](std::string_view name, auto& t) { f(std::string(prefix) + std::string(name), t); };
}
}  // namespace detail

/// @brief A parameter set (or layer part) in memory space To: itself, moved, when it lives there, else its copy
/// (`nn::to_space<device_space>(make_attention_params<float>(…))`; the device's copies come with tprod/cuda.hpp).
using detail::to_space;

}  // namespace tprod::nn
