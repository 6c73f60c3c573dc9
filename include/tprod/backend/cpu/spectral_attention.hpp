// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file spectral_attention.hpp
/// @brief The CPU backend's tasks of tensorized spectral attention's graph (contract:
/// backend/kernels/spectral_attention.hpp): one loop over the sequences on the threads, the scores as a symmetric
/// rank update of each sequence's keys (as graph/attention_graph.hpp's attention_scores), Ψᵀ and the scores'
/// gradient entry by entry.
#include <Eigen/Core>
#include <algorithm>

#include "tprod/backend/cpu/attention.hpp"
#include "tprod/backend/kernels/spectral_attention.hpp"

namespace tprod::backend::cpu {

/// @brief scores_b = scale·K_b·K_bᵀ, psi_t_b = (Ω ⊙ max(scores_b, 0))ᵀ on the real tokens, zero diagonal.
template <class T>
void spectral_graph_forward(const system& sys, const attention_blocks& d, head_layout<const T> k, T scale,
                            tensor3_view<const T> omega, const attention_masking& mask, tensor3_view<T> scores,
                            tensor3_view<T> psi_t) {
  const auto w = omega.slice(0);
  parallel_for(d.batch, detail::attention_threads(sys, d), [&](std::size_t b) {
    const auto kb = detail::block_map(k, 0, 0, b, d.tk, d.dh);
    auto s = scores.slice(b);
    s.setZero();
    s.template selfadjointView<Eigen::Lower>().rankUpdate(kb, scale);
    s.template triangularView<Eigen::StrictlyUpper>() = s.transpose();
    const auto n = Eigen::Index(mask.valid_keys(d, b, d.tk));
    auto pt = psi_t.slice(b);
    pt.setZero();
    for (Eigen::Index i = 0; i < n; ++i)      // Ψ(i, j) at Ψᵀ(j, i)
      for (Eigen::Index j = 0; j < n; ++j)
        if (i != j) pt(j, i) = w(i, j) * std::max(s(i, j), T(0));
  });
}

/// @brief d_scores_b = scale·(E_b + E_bᵀ), E_b = Ω ⊙ d_psi_b ⊙ [scores_b > 0] on the real tokens off the diagonal.
template <class T>
void spectral_graph_backward(const system& sys, const attention_blocks& d, tensor3_view<const T> scores,
                             tensor3_view<const T> omega, const attention_masking& mask, T scale,
                             tensor3_view<const T> d_psi, tensor3_view<T> d_scores) {
  const auto w = omega.slice(0);
  parallel_for(d.batch, detail::attention_threads(sys, d), [&](std::size_t b) {
    const auto s = scores.slice(b);
    const auto g = d_psi.slice(b);
    auto out = d_scores.slice(b);
    out.setZero();
    const auto n = Eigen::Index(mask.valid_keys(d, b, d.tk));
    const auto e = [&](Eigen::Index i, Eigen::Index j) { return s(i, j) > T(0) ? w(i, j) * g(i, j) : T(0); };
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < j; ++i) out(i, j) = out(j, i) = scale * (e(i, j) + e(j, i));
  });
}

}  // namespace tprod::backend::cpu
