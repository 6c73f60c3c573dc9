// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer.hpp
/// @brief The composition API's one concept: a stateful layer that owns its parameters, their gradients and
/// the state its backward pass needs, above the stateless forward/backward functions of the nn area.
///
/// A layer M over scalar T, in memory space S = M::memory_space_type (the host where M names none), has, with
/// X = tensor3<T, dextents3, S> (layer_tensor<M, T>),
///   - `const X& forward(const X& x, const batch& b)` — the output, owned by the layer (or x itself for a layer that
///     passes it through) and valid until the next forward;
///   - `const X& backward(const X& dy)` — d𝒳 for the last forward's input, and the parameter gradients *added* into
///     the layer's gradient tensors (so several backward passes accumulate);
///   - `for_each_parameter(f)` calling f(name, value, gradient) on every trainable tensor in a fixed order;
///   - a `name`, the prefix of its parameters in a model's parameter-name tree ("encoder.0.attn.w_qkv").
/// Values and gradients live inside the layer and keep their addresses while it lives, so an optimizer holds
/// references across steps (`parameters(model)`); models built by sequential keep them across moves too.
///
/// The batch description stays on the host; the activations, parameters and gradients live in S, so a model is
/// built for one space (the builders take it) and moves its batches there once.
///
/// A layer whose input is not a tensor (a token embedding) reads it from the batch and ignores x; every layer
/// reads the batch size, the valid lengths (padding) and the phase (train or eval) from it.
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/nn/optim.hpp"

namespace tprod::nn {

/// @brief Training or evaluation: dropout is active only in training.
enum class phase { train, eval };

/// @brief What a forward pass knows about its batch besides the activations.
struct batch {
  batch(std::size_t batch_size = 0, std::vector<std::size_t> token_ids = {}, std::vector<std::size_t> valid = {},
        phase m = phase::train)
      : size(batch_size), tokens(std::move(token_ids)), lengths(std::move(valid)), mode(m) {}

  std::size_t size = 0;              ///< B, the number of sequences (or images)
  std::vector<std::size_t> tokens;   ///< B·T token ids, row b·T + t (token-embedding models only)
  std::vector<std::size_t> lengths;  ///< valid tokens of every sequence, the rest is padding; empty: all valid
  /// B·T segment ids (BERT's token types: 0 for a first sentence, 1 for a second), row b·T + t; empty: all 0.
  std::vector<std::size_t> segments;
  phase mode = phase::train;
  /// The training step this pass belongs to; dropout draws its mask from (its seed, pass). nn::fit sets it to the
  /// optimizer step, so that a resumed run draws the masks an uninterrupted one would; unset, each dropout layer
  /// counts its own training passes.
  std::optional<std::uint64_t> pass;
};

/// @brief The memory space of a layer (or model) type M.
template <class M>
using layer_space_t = space_of_part_t<std::remove_cvref_t<M>>;
/// @brief The tensors a layer M over T takes and returns.
template <class M, class T>
using layer_tensor = tensor3<T, dextents3, layer_space_t<M>>;

/// @brief The stateful layer (see the file comment).
template <class M, class T>
concept layer = std::floating_point<T> && requires(M& m, const layer_tensor<M, T>& x, const batch& b) {
  { m.forward(x, b) } -> std::same_as<const layer_tensor<M, T>&>;
  { m.backward(x) } -> std::same_as<const layer_tensor<M, T>&>;
  m.for_each_parameter([](std::string_view, layer_tensor<M, T>&, layer_tensor<M, T>&) {});
  { m.name } -> std::convertible_to<std::string>;
};

/// @brief A parameter set P and its gradient of the same type, visited together, in P's memory space.
template <std::floating_point T, class P>
  requires parameter_set<P, T, space_of_part_t<P>>
struct trainable {
  using memory_space_type = space_of_part_t<P>;
  using tensor = tensor3<T, dextents3, memory_space_type>;
  P value;
  P grad;

  explicit trainable(P v) : value(std::move(v)), grad(zeros_like(value)) {}

  /// f(name, value tensor, gradient tensor) in P's order.
  template <class F>
  void for_each(F&& f) {
    std::vector<tensor*> grads;
    grad.for_each([&](std::string_view, tensor& g) { grads.push_back(&g); });
    std::size_t i = 0;
    value.for_each([&](std::string_view name, tensor& v) { f(name, v, *grads[i++]); });
  }

  /// grad += fresh, tensor by tensor (fresh: a gradient just computed, of the same type and shapes).
  void accumulate(P& fresh) {
    std::vector<tensor*> parts;
    fresh.for_each([&](std::string_view, tensor& g) { parts.push_back(&g); });
    std::size_t i = 0;
    grad.for_each([&](std::string_view, tensor& g) { g += *parts[i++]; });
  }
};

/// @brief A model's trainable tensors and their gradients, in visiting order, with dotted names, in space S.
template <std::floating_point T, memory_space S = host_space>
struct parameter_list {
  parameter_refs<T, S> values, grads;

  std::size_t size() const { return values.tensors.size(); }
  /// The number of trainable scalars.
  std::size_t count() const { return values.count(); }
  /// Sets every gradient to zero (after an optimizer step, before accumulating the next).
  void zero_grad() {
    for (auto* g : grads.tensors) fill(tprod::detail::system_of<S>(), g->dynamic_view(), T(0));
  }
  /// Multiplies every gradient by s (1/k after accumulating k micro-batches of mean losses).
  void scale_grads(T s) {
    for (auto* g : grads.tensors) *g *= s;
  }
};

/// @brief The parameters of a layer (or model), names prefixed with its name, in the model's memory space.
template <std::floating_point T, layer<T> M>
parameter_list<T, layer_space_t<M>> parameters(M& model) {
  parameter_list<T, layer_space_t<M>> list;
  model.for_each_parameter([&](std::string_view name, layer_tensor<M, T>& v, layer_tensor<M, T>& g) {
    list.values.tensors.push_back(&v);
    list.values.names.emplace_back(name);
    list.grads.tensors.push_back(&g);
    list.grads.names.emplace_back(name);
  });
  return list;
}

/// @brief One AdamW update of every parameter from its accumulated gradient (lr < 0: the configured rate).
template <std::floating_point T, memory_space S>
void step(adamw<T, S>& opt, parameter_list<T, S>& params, double lr = -1) {
  opt.step(params.values, params.grads, lr);
}

namespace detail {
/// Calls f(prefix + "." + name, value, grad) on a trainable's tensors.
template <class T, class P, class F>
void visit_prefixed(trainable<T, P>& t, const std::string& prefix, F&& f) {
  t.for_each([&](std::string_view name, auto& v, auto& g) { f(prefix + "." + std::string(name), v, g); });
}
}  // namespace detail

}  // namespace tprod::nn
