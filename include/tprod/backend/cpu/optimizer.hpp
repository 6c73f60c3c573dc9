// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file optimizer.hpp
/// @brief The CPU backend's multi-tensor optimizer tasks (contract: backend/kernels/optimizer.hpp): Eigen array
/// expressions, tensor after tensor.
#include <span>

#include "tprod/backend/cpu/elementwise.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/kernels/optimizer.hpp"

namespace tprod::backend::cpu {

using kernels::adamw_coefficients;
using kernels::adamw_slot;

/// @brief m ← β₁m + (1−β₁)g; v ← β₂v + (1−β₂)g²; θ ← decay·θ − step·m/(√(v·inv_c2) + ε), for every slot.
template <class T>
void adamw_update(const system&, std::span<const adamw_slot<T, host_space>> slots, const adamw_coefficients<T>& c) {
  for (const auto& s : slots) {
    auto m = detail::array(s.m);
    auto v = detail::array(s.v);
    auto theta = detail::array(s.param);
    const auto g = detail::array(s.grad);
    m = c.beta1 * m + (T(1) - c.beta1) * g;
    v = c.beta2 * v + (T(1) - c.beta2) * g.square();
    theta = c.decay * theta - c.step * m / ((v * c.inv_c2).sqrt() + c.eps);
  }
}

/// @brief Σ_i ‖x_i‖²_F, each tensor's squared norm in T then summed in double.
template <class T>
double squared_norm_total(const system&, std::span<const tensor3_view<const T>> tensors) {
  double total = 0;
  for (const auto& x : tensors) total += double(detail::vec(x).squaredNorm());
  return total;
}

/// @brief Σ_ij |w_ij·g_ij|, the products and the sum in double.
template <class T>
double weight_sensitivity(const system&, tensor3_view<const T> w, tensor3_view<const T> g) {
  return (detail::vec(w).template cast<double>().array() * detail::vec(g).template cast<double>().array()).abs().sum();
}

}  // namespace tprod::backend::cpu
