// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file additive_attention.hpp
/// @brief The CPU backend's additive-attention tasks (contract: backend/kernels/additive_attention.hpp): one loop over
/// the p·h·B blocks on the threads; per query, the tanh of its valid keys' sums as one n×d_h Eigen expression, the
/// products with V through Eigen's GEMMs on strided block maps, and the softmax columns of dot-product attention.
#include <Eigen/Core>
#include <vector>

#include "tprod/backend/cpu/attention.hpp"
#include "tprod/backend/kernels/additive_attention.hpp"

namespace tprod::backend::cpu {

namespace detail {
/// The score vector w of block i: d_h entries of the 1×(h·d_h)×p score tensor.
template <class E>
auto score_of(E* score, const attention_blocks& d, const block_index& i) {
  using V = Eigen::Matrix<std::remove_const_t<E>, Eigen::Dynamic, 1>;
  using M = std::conditional_t<std::is_const_v<E>, const V, V>;
  return Eigen::Map<M>(score + (i.s * d.heads + i.j) * d.dh, Eigen::Index(d.dh));
}
}  // namespace detail

/// @brief P_f(k, i) = softmax_k(wᵀ tanh(Q_i + K_k)) over the valid keys, O_f = P_fᵀ·V_f.
template <class T>
void additive_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                             head_layout<const T> k, head_layout<const T> v, tensor3_view<const T> score,
                             const attention_masking& mask, tensor3_view<T> probs, head_layout<T> out) {
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    const detail::block_index i(d, f);
    const auto qb = detail::block_map(q, i.s, i.j, i.b, d.tq, d.dh);
    const auto kb = detail::block_map(k, i.s, i.j, i.b, d.tk, d.dh);
    const auto w = detail::score_of(score.data(), d, i);
    auto pt = probs.slice(f);
    for (std::size_t t = 0; t < d.tq; ++t) {
      const auto n = Eigen::Index(mask.valid_keys(d, i.b, t));
      pt.col(Eigen::Index(t)).head(n).noalias() =
          (kb.topRows(n).rowwise() + qb.row(Eigen::Index(t))).array().tanh().matrix() * w;
    }
    detail::masked_softmax<T>(pt, T(1), mask, d, i.b);
    detail::block_map(out, i.s, i.j, i.b, d.tq, d.dh).noalias() =
        pt.transpose() * detail::block_map(v, i.s, i.j, i.b, d.tk, d.dh);
  });
}

/// @brief dV_f = P_f·dO_f; dS = softmax backward of V_f·dO_fᵀ; dQ, dK and the score vectors' gradient from dS and
/// the tanh evaluated again (see the contract). Each block's share of d_score is kept apart and summed over the
/// sequences in order afterwards, so the result does not depend on the thread count.
template <class T>
void additive_backward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                              head_layout<const T> k, head_layout<const T> v, tensor3_view<const T> score,
                              const attention_masking& mask, tensor3_view<const T> probs, head_layout<const T> d_out,
                              head_layout<T> dq, head_layout<T> dk, head_layout<T> dv, tensor3_view<T> d_score) {
  using matrix = detail::matrix<T>;
  matrix shares(Eigen::Index(d.dh), Eigen::Index(d.blocks()));  // column f: block f's Σ_{i,k} dS(k, i) t_ik
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    const detail::block_index i(d, f);
    const auto qb = detail::block_map(q, i.s, i.j, i.b, d.tq, d.dh);
    const auto kb = detail::block_map(k, i.s, i.j, i.b, d.tk, d.dh);
    const auto w = detail::score_of(score.data(), d, i);
    const auto pt = probs.slice(f);
    const auto dob = detail::block_map(d_out, i.s, i.j, i.b, d.tq, d.dh);
    detail::block_map(dv, i.s, i.j, i.b, d.tk, d.dh).noalias() = pt * dob;
    matrix ds = detail::block_map(v, i.s, i.j, i.b, d.tk, d.dh) * dob.transpose();  // dP, then dS
    softmax_backward<T>(pt, Eigen::Map<matrix>(ds.data(), ds.rows(), ds.cols()), T(1));
    auto dqb = detail::block_map(dq, i.s, i.j, i.b, d.tq, d.dh);
    auto dkb = detail::block_map(dk, i.s, i.j, i.b, d.tk, d.dh);
    dqb.setZero();
    dkb.setZero();
    auto share = shares.col(Eigen::Index(f));
    share.setZero();
    matrix th(Eigen::Index(d.tk), Eigen::Index(d.dh)), g(Eigen::Index(d.tk), Eigen::Index(d.dh));  // reused per query
    for (std::size_t t = 0; t < d.tq; ++t) {
      const auto n = Eigen::Index(mask.valid_keys(d, i.b, t));
      auto thn = th.topRows(n);
      auto gn = g.topRows(n);
      const auto dsn = ds.col(Eigen::Index(t)).head(n);
      thn = (kb.topRows(n).rowwise() + qb.row(Eigen::Index(t))).array().tanh().matrix();  // t_ik, k < n
      share.noalias() += thn.transpose() * dsn;
      gn = (dsn * w.transpose()).array() * (T(1) - thn.array().square());  // dS(k, i) w ⊙ (1 − t_ik²)
      dqb.row(Eigen::Index(t)) = gn.colwise().sum();
      dkb.topRows(n) += gn;
    }
  });
  for (std::size_t s = 0; s < d.p; ++s)
    for (std::size_t j = 0; j < d.heads; ++j) {
      auto out = detail::score_of(d_score.data(), d, detail::block_index(d, (s * d.heads + j) * d.batch));
      out.setZero();
      for (std::size_t b = 0; b < d.batch; ++b) out += shares.col(Eigen::Index((s * d.heads + j) * d.batch + b));
    }
}

}  // namespace tprod::backend::cpu
