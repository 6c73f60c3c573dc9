// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer_norm.hpp
/// @brief The CPU backend's LayerNorm tasks (contract: backend/kernels/layer_norm.hpp): slices on the threads,
/// and within a slice column passes over the column-major data (each reads one contiguous feature column for
/// all rows).
#include <Eigen/Core>
#include <cstddef>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/kernels/nn_kinds.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

using kernels::layer_norm_kind;

/// @brief n̂ = (x − μ)/s, y = Γ ⊙ n̂ + ℬ, inv_s = 1/s and (transform_domain) c = s/σ per (row, slice).
template <class T>
void layer_norm_forward(const system& sys, layer_norm_kind kind, T eps, tensor3_view<const T> x,
                        tensor3_view<const T> gamma, tensor3_view<const T> beta, tensor3_view<T> out,
                        tensor3_view<T> normalized, tensor3_view<T> inv_scale, tensor3_view<T> coupling) {
  const std::size_t n = x.n(), p = x.p();
  const auto rows = Eigen::Index(x.m());
  const T inv_n = T(1) / T(n);
  const std::size_t threads = threads_for(x.size(), sys.ex);
  parallel_for(p, threads, [&](std::size_t k) {
    Eigen::Matrix<T, Eigen::Dynamic, 1> mean(rows), var(rows);
    const auto xk = x.slice(k);
    auto nk = normalized.slice(k);
    auto yk = out.slice(k);
    mean.setZero();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) mean += xk.col(j);
    mean *= inv_n;
    var.setZero();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) var.array() += (xk.col(j) - mean).array().square();
    var *= inv_n;
    auto inv_s = inv_scale.slice(k).col(0).array();
    if (kind == layer_norm_kind::original_domain) {
      inv_s = (var.array() + eps).rsqrt();
    } else {
      const auto sigma = var.array().sqrt();
      inv_s = T(1) / (sigma + eps);
      coupling.slice(k).col(0).array() = (sigma > T(0)).select((sigma + eps) / sigma, T(0));
    }
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) {
      nk.col(j).array() = (xk.col(j) - mean).array() * inv_s;
      yk.col(j).array() = nk.col(j).array() * gamma(0, std::size_t(j), k) + beta(0, std::size_t(j), k);
    }
  });
}

/// @brief dX = inv_s·(g − mean g − c·n̂·mean(g ⊙ n̂)) with g = dY ⊙ Γ; dΓ = Σ_t dY ⊙ n̂, dℬ = Σ_t dY.
template <class T>
void layer_norm_backward(const system& sys, tensor3_view<const T> gamma, tensor3_view<const T> normalized,
                         tensor3_view<const T> inv_scale, tensor3_view<const T> coupling, tensor3_view<const T> d_out,
                         tensor3_view<T> d_in, tensor3_view<T> d_gamma, tensor3_view<T> d_beta) {
  const std::size_t n = normalized.n(), p = normalized.p();
  const auto rows = Eigen::Index(normalized.m());
  const T inv_n = T(1) / T(n);
  const std::size_t threads = threads_for(d_out.size(), sys.ex);
  parallel_for(p, threads, [&](std::size_t k) {
    Eigen::Matrix<T, Eigen::Dynamic, 1> m1(rows), m2(rows);
    const auto nk = normalized.slice(k);
    const auto gk = d_out.slice(k);
    auto dk = d_in.slice(k);
    m1.setZero();
    m2.setZero();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) {
      const T gam = gamma(0, std::size_t(j), k);
      d_gamma(0, std::size_t(j), k) = gk.col(j).dot(nk.col(j));
      d_beta(0, std::size_t(j), k) = gk.col(j).sum();
      m1 += gam * gk.col(j);
      m2.array() += gam * gk.col(j).array() * nk.col(j).array();
    }
    m1 *= inv_n;
    m2 *= inv_n;
    if (coupling.size() != 0) m2.array() *= coupling.slice(k).col(0).array();
    const auto inv_s = inv_scale.slice(k).col(0).array();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) {
      const T gam = gamma(0, std::size_t(j), k);
      dk.col(j).array() = inv_s * (gam * gk.col(j).array() - m1.array() - nk.col(j).array() * m2.array());
    }
  });
}

}  // namespace tprod::backend::cpu
