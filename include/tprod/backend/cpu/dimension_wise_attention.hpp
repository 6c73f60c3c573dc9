// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dimension_wise_attention.hpp
/// @brief The CPU backend's dimension-wise attention tasks (contract: backend/kernels/dimension_wise_attention.hpp):
/// one loop over the p·h·B blocks on the threads, Eigen GEMMs on strided block maps, the d_h×d_h products over the
/// block's n valid rows only.
#include <Eigen/Core>
#include <cmath>

#include "tprod/backend/cpu/attention.hpp"
#include "tprod/backend/kernels/dimension_wise_attention.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod::backend::cpu {

/// @brief Aᵀ_f = column softmax(K_nᵀ·Q_n / √n), O_f = V_f·Aᵀ_f.
template <class T>
void dimension_wise_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                                   head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                                   tensor3_view<T> probs, head_layout<T> out) {
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    const detail::block_index i(d, f);
    const auto n = Eigen::Index(mask.valid_keys(d, i.b, d.tk));
    const T scale = T(1) / std::sqrt(T(n));
    auto at = probs.slice(f);
    at.noalias() = detail::block_map(k, i.s, i.j, i.b, d.tk, d.dh).topRows(n).transpose() *
                   detail::block_map(q, i.s, i.j, i.b, d.tq, d.dh).topRows(n);
    for (Eigen::Index c = 0; c < at.cols(); ++c) {
      auto col = at.col(c).array();
      col = ((col - col.maxCoeff()) * scale).exp();
      col *= T(1) / col.sum();
    }
    detail::block_map(out, i.s, i.j, i.b, d.tq, d.dh).noalias() = detail::block_map(v, i.s, i.j, i.b, d.tk, d.dh) * at;
  });
}

/// @brief dV_f = dO_f·A_f; G = softmax backward of V_fᵀ·dO_f; dQ_n = K_n·G, dK_n = Q_n·Gᵀ, padded rows zero.
template <class T>
void dimension_wise_backward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                                    head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                                    tensor3_view<const T> probs, head_layout<const T> d_out, head_layout<T> dq,
                                    head_layout<T> dk, head_layout<T> dv) {
  const std::size_t threads = detail::attention_threads(sys, d);
  tensor3<T> scratch(d.dh, d.dh, std::max<std::size_t>(1, threads), uninitialized);  // G, one per thread
  parallel_for(d.blocks(), threads, [&](std::size_t f) {
    const detail::block_index i(d, f);
    auto g = scratch.slice(tprod::detail::thread_slot(scratch.p()));
    const auto n = Eigen::Index(mask.valid_keys(d, i.b, d.tk));
    const auto at = probs.slice(f);
    const auto dob = detail::block_map(d_out, i.s, i.j, i.b, d.tq, d.dh);
    detail::block_map(dv, i.s, i.j, i.b, d.tk, d.dh).noalias() = dob * at.transpose();  // O = V·Aᵀ
    g.noalias() = detail::block_map(v, i.s, i.j, i.b, d.tk, d.dh).transpose() * dob;  // dAᵀ
    softmax_backward<T>(at, g, T(1) / std::sqrt(T(n)));                               // dAᵀ → d(K_nᵀQ_n)
    auto dqb = detail::block_map(dq, i.s, i.j, i.b, d.tq, d.dh);
    auto dkb = detail::block_map(dk, i.s, i.j, i.b, d.tk, d.dh);
    dqb.topRows(n).noalias() = detail::block_map(k, i.s, i.j, i.b, d.tk, d.dh).topRows(n) * g;
    dkb.topRows(n).noalias() = detail::block_map(q, i.s, i.j, i.b, d.tq, d.dh).topRows(n) * g.transpose();
    dqb.bottomRows(dqb.rows() - n).setZero();
    dkb.bottomRows(dkb.rows() - n).setZero();
  });
}

}  // namespace tprod::backend::cpu
