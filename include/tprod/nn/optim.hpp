// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file optim.hpp
/// @brief Training utilities over parameter sets: collecting a model's tensors, AdamW with decoupled weight
/// decay (Loshchilov & Hutter; paper 000 Table 5: lr 3·10⁻⁴, weight decay 0.01) and gradient-norm clipping
/// (Table 5: 1.0).
///
/// AdamW step t (every tensor θ with gradient g):
///   θ ← θ − η·λ·θ;   m ← β₁m + (1−β₁)g;   v ← β₂v + (1−β₂)g²;   θ ← θ − η·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε)
/// (PyTorch's order: the decay uses the weights before the Adam update). Clipping rescales all gradients by
/// max_norm/‖g‖ when the global norm ‖g‖ = √(Σ‖g_i‖²) exceeds max_norm.
#include <cmath>
#include <string>
#include <vector>

#include "tprod/backend/kernels/optimizer.hpp"
#include "tprod/nn/nn_concepts.hpp"

namespace tprod::nn {

/// @brief Pointers to a model's trainable tensors (in memory space S), in visiting order.
template <std::floating_point T, memory_space S = host_space>
struct parameter_refs {
  std::vector<tensor3<T, dextents3, S>*> tensors;
  std::vector<std::string> names;
  std::size_t count() const {
    std::size_t n = 0;
    for (const auto* t : tensors) n += t->size();
    return n;
  }
};

/// @brief Appends every tensor of `params` (a parameter set) to refs, names prefixed with `prefix`.
template <std::floating_point T, memory_space S, class P>
  requires parameter_set<P, T, S>
void collect(P& params, parameter_refs<T, S>& refs, const std::string& prefix = "") {
  params.for_each([&](std::string_view name, tensor3<T, dextents3, S>& t) {
    refs.tensors.push_back(&t);
    refs.names.push_back(prefix + std::string(name));
  });
}

struct adamw_config {
  double lr = 3e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

/// @brief AdamW's state (first and second moments per tensor, in the parameters' memory space S) and its step.
/// Each step is one multi-tensor backend task over all tensors (on the device: one launch).
template <std::floating_point T, memory_space S = host_space>
class adamw {
 public:
  using tensor = tensor3<T, dextents3, S>;

  explicit adamw(adamw_config config = {}) : config_(config) {}

  const adamw_config& config() const { return config_; }
  std::size_t steps() const { return t_; }
  /// @brief The first and second moments m and v, one tensor per parameter tensor in visiting order (empty before
  /// the first step): with steps(), everything a saved run needs to continue (nn/model/training_state.hpp).
  const std::vector<tensor>& first_moments() const { return m_; }
  const std::vector<tensor>& second_moments() const { return v_; }

  /// @brief Continues from a saved state: `steps` updates taken, moments m and v (empty when steps is 0).
  /// @throws shape_error when m and v differ in count or shape, or are empty after some steps.
  void restore(std::size_t steps, std::vector<tensor> m, std::vector<tensor> v) {
    TPROD_EXPECTS(m.size() == v.size() && (steps == 0) == m.empty(),
                  "nn::adamw::restore: " + std::to_string(m.size()) + " first and " + std::to_string(v.size()) +
                      " second moments after " + std::to_string(steps) + " steps");
    for (std::size_t i = 0; i < m.size(); ++i)
      TPROD_EXPECTS(m[i].m() == v[i].m() && m[i].n() == v[i].n() && m[i].p() == v[i].p(),
                    "nn::adamw::restore: moment " + std::to_string(i) + " is " + m[i].shape() + " and " + v[i].shape());
    t_ = steps;
    m_ = std::move(m);
    v_ = std::move(v);
  }

  /// @brief One update of every tensor in params with the matching gradient, at learning rate lr
  /// (config().lr when lr < 0, e.g. a schedule's value otherwise).
  /// @throws shape_error when params and grads do not match tensor for tensor (or change between steps).
  void step(parameter_refs<T, S>& params, const parameter_refs<T, S>& grads, double lr = -1) {
    TPROD_EXPECTS(params.tensors.size() == grads.tensors.size(),
                  "nn::adamw::step: " + std::to_string(params.tensors.size()) + " parameter tensors but " +
                      std::to_string(grads.tensors.size()) + " gradients");
    if (m_.empty()) {
      for (const auto* p : params.tensors) {
        m_.emplace_back(p->m(), p->n(), p->p());
        v_.emplace_back(p->m(), p->n(), p->p());
      }
    }
    TPROD_EXPECTS(m_.size() == params.tensors.size(), "nn::adamw::step: the parameter list changed between steps");
    std::vector<backend::kernels::adamw_slot<T, S>> slots;
    slots.reserve(m_.size());
    for (std::size_t i = 0; i < m_.size(); ++i) {
      tensor& p = *params.tensors[i];
      const tensor& g = *grads.tensors[i];
      TPROD_EXPECTS(
          p.size() == g.size() && p.size() == m_[i].size(),
          "nn::adamw::step: tensor " + params.names[i] + " is " + p.shape() + " but its gradient is " + g.shape());
      slots.push_back({p.dynamic_view(), g.dynamic_view(), m_[i].dynamic_view(), v_[i].dynamic_view()});
    }
    if (lr < 0) lr = config_.lr;
    ++t_;
    const double c1 = 1 - std::pow(config_.beta1, double(t_)), c2 = 1 - std::pow(config_.beta2, double(t_));
    const backend::kernels::adamw_coefficients<T> c{T(config_.beta1), T(config_.beta2), T(lr / c1),
                                                    T(1 / c2), T(config_.eps), T(1 - lr * config_.weight_decay)};
    adamw_update(tprod::detail::system_of<S>(), std::span<const backend::kernels::adamw_slot<T, S>>(slots), c);
  }

 private:
  adamw_config config_;
  std::vector<tensor> m_, v_;
  std::size_t t_ = 0;
};

/// @brief Global gradient norm √(Σ‖g_i‖²_F) (one multi-tensor reduction, accumulated in double).
template <std::floating_point T, memory_space S>
double grad_norm(const parameter_refs<T, S>& grads) {
  std::vector<tensor3_view<const T, dextents3, S>> views;
  views.reserve(grads.tensors.size());
  for (const auto* g : grads.tensors) views.push_back(g->dynamic_view());
  return std::sqrt(squared_norm_total(tprod::detail::system_of<S>(),
                                      std::span<const tensor3_view<const T, dextents3, S>>(views)));
}

/// @brief Scales all gradients by max_norm/‖g‖ when ‖g‖ > max_norm; returns ‖g‖ before clipping.
/// @throws shape_error when max_norm is not positive.
template <std::floating_point T, memory_space S>
double clip_grad_norm(parameter_refs<T, S>& grads, double max_norm) {
  TPROD_EXPECTS(max_norm > 0, "nn::clip_grad_norm: max_norm " + number_text(max_norm) + " must be positive");
  const double norm = grad_norm(grads);
  if (norm > max_norm) {
    const auto sys = tprod::detail::system_of<S>();
    for (auto* g : grads.tensors) scale(sys, T(max_norm / norm), g->dynamic_view());
  }
  return norm;
}

}  // namespace tprod::nn
