// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file optimizer.hpp
/// @brief The kernel contract's multi-tensor optimizer tasks, for real scalars: one call covers every parameter
/// tensor of a model (on the device: one launch, not one per tensor). For a backend system `sys` of space S:
///   adamw_update(sys, slots, c)        for every slot (θ, g, m, v) and element:
///                                        m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²;
///                                        θ ← decay·θ − step·m / (√(v·inv_c2) + ε)
///                                      with c = {β₁, β₂, step = η/(1−β₁ᵗ), inv_c2 = 1/(1−β₂ᵗ), ε, decay = 1 − ηλ}
///   squared_norm_total(sys, tensors)   Σ_i ‖x_i‖²_F, accumulated in double              → double
///   weight_sensitivity(sys, w, g)      Σ_ij |w_ij·g_ij| in double (a weight's first-order importance, the loss
///                                      change estimated for its removal; nn/model/mpo_finetune.hpp) → double
#include <span>

#include "tprod/backend/kernels/nn_kinds.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

/// @brief One parameter tensor's part in an AdamW step: θ, its gradient and its two moments (equal sizes).
template <class T, class S>
struct adamw_slot {
  tensor3_view<T, dextents3, S> param;
  tensor3_view<const T, dextents3, S> grad;
  tensor3_view<T, dextents3, S> m, v;
};

template <class Sys, class T, class S>
concept optimizer_tasks = requires(const Sys& sys, std::span<const adamw_slot<T, S>> slots,
                                   const adamw_coefficients<T>& c,
                                   std::span<const tensor3_view<const T, dextents3, S>> tensors) {
  adamw_update(sys, slots, c);
  { squared_norm_total(sys, tensors) } -> std::same_as<double>;
  { weight_sensitivity(sys, tensors[0], tensors[0]) } -> std::same_as<double>;
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/optimizer.hpp"
