// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer_norm.hpp
/// @brief The kernel contract's LayerNorm tasks, for real scalars: every (row t, slice k) of an r×n×p tensor is
/// normalized over its n features, with Γ, ℬ 1×n×p. For a backend system `sys` of space S:
///   layer_norm_forward(sys, kind, ε, x, Γ, ℬ, y, n̂, inv_s, c)
///       μ, σ² the mean and biased variance of x(t, :, k); s = √(σ² + ε) (original_domain) or σ + ε
///       (transform_domain); n̂ = (x − μ)/s, y = Γ ⊙ n̂ + ℬ, inv_s(t, 0, k) = 1/s and, for transform_domain only,
///       c(t, 0, k) = s/σ (0 where σ = 0; c is empty for original_domain)
///   layer_norm_backward(sys, Γ, n̂, inv_s, c, dY, dX, dΓ, dℬ)
///       with g = dY ⊙ Γ: dX = inv_s·(g − mean_j g − c·n̂·mean_j(g ⊙ n̂)) (c = 1 when empty; dX may be dY's
///       memory), dΓ = Σ_t dY ⊙ n̂, dℬ = Σ_t dY (assigned)
#include "tprod/backend/kernels/nn_kinds.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept layer_norm_tasks = requires(const Sys& sys, layer_norm_kind kind, T eps, tensor3_view<const T, dextents3, S> c,
                                    tensor3_view<T, dextents3, S> x) {
  layer_norm_forward(sys, kind, eps, c, c, c, x, x, x, x);
  layer_norm_backward(sys, c, c, c, c, c, x, x, x);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/layer_norm.hpp"
