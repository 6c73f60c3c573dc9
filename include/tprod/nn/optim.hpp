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

#include "tprod/nn/nn_concepts.hpp"

namespace tprod::nn {

/// @brief Pointers to a model's trainable tensors, in visiting order.
template <std::floating_point T>
struct parameter_refs {
  std::vector<tensor3<T>*> tensors;
  std::vector<std::string> names;
  std::size_t count() const {
    std::size_t n = 0;
    for (const auto* t : tensors) n += t->size();
    return n;
  }
};

/// @brief Appends every tensor of `params` (a parameter set) to refs, names prefixed with `prefix`.
template <std::floating_point T, parameter_set<T> P>
void collect(P& params, parameter_refs<T>& refs, const std::string& prefix = "") {
  params.for_each([&](std::string_view name, tensor3<T>& t) {
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

/// @brief AdamW's state (first and second moments per tensor) and its step.
template <std::floating_point T>
class adamw {
 public:
  explicit adamw(adamw_config config = {}) : config_(config) {}

  const adamw_config& config() const { return config_; }
  std::size_t steps() const { return t_; }
  /// @brief The first and second moments m and v, one tensor per parameter tensor in visiting order (empty before
  /// the first step): with steps(), everything a saved run needs to continue (nn/training_state.hpp).
  const std::vector<tensor3<T>>& first_moments() const { return m_; }
  const std::vector<tensor3<T>>& second_moments() const { return v_; }

  /// @brief Continues from a saved state: `steps` updates taken, moments m and v (empty when steps is 0).
  /// @throws shape_error when m and v differ in count or shape, or are empty after some steps.
  void restore(std::size_t steps, std::vector<tensor3<T>> m, std::vector<tensor3<T>> v) {
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
  void step(parameter_refs<T>& params, const parameter_refs<T>& grads, double lr = -1) {
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
    if (lr < 0) lr = config_.lr;
    ++t_;
    const double c1 = 1 - std::pow(config_.beta1, double(t_)), c2 = 1 - std::pow(config_.beta2, double(t_));
    const T b1 = T(config_.beta1), b2 = T(config_.beta2), step = T(lr / c1), inv_c2 = T(1 / c2), eps = T(config_.eps);
    const T decay = T(1 - lr * config_.weight_decay);
    for (std::size_t i = 0; i < m_.size(); ++i) {
      tensor3<T>& p = *params.tensors[i];
      const tensor3<T>& g = *grads.tensors[i];
      TPROD_EXPECTS(
          p.size() == g.size() && p.size() == m_[i].size(),
          "nn::adamw::step: tensor " + params.names[i] + " is " + p.shape() + " but its gradient is " + g.shape());
      auto m = m_[i].elements().array();
      auto v = v_[i].elements().array();
      const auto ga = g.elements().array();
      m = b1 * m + (T(1) - b1) * ga;
      v = b2 * v + (T(1) - b2) * ga.square();
      p.elements().array() = decay * p.elements().array() - step * m / ((v * inv_c2).sqrt() + eps);
    }
  }

 private:
  adamw_config config_;
  std::vector<tensor3<T>> m_, v_;
  std::size_t t_ = 0;
};

/// @brief Global gradient norm √(Σ‖g_i‖²_F).
template <std::floating_point T>
double grad_norm(const parameter_refs<T>& grads) {
  double s = 0;
  for (const auto* g : grads.tensors) s += double(g->elements().squaredNorm());
  return std::sqrt(s);
}

/// @brief Scales all gradients by max_norm/‖g‖ when ‖g‖ > max_norm; returns ‖g‖ before clipping.
/// @throws shape_error when max_norm is not positive.
template <std::floating_point T>
double clip_grad_norm(parameter_refs<T>& grads, double max_norm) {
  TPROD_EXPECTS(max_norm > 0, "nn::clip_grad_norm: max_norm " + number_text(max_norm) + " must be positive");
  const double norm = grad_norm(grads);
  if (norm > max_norm) {
    const T s = T(max_norm / norm);
    for (auto* g : grads.tensors) *g *= s;
  }
  return norm;
}

}  // namespace tprod::nn
