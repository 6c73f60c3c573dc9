// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file t_attention.hpp
/// @brief Paper 001's transform-domain attention operators (§5.1): t-Softmax (Def. 5.2), t-Attention
/// (Def. 5.3) and t-MHSA (Def. 5.4), forward and backward.
///
/// - t-Softmax(𝒮) is the tensor 𝒜 with 𝒜(i, j, k) = exp(Ŝ_{ijk}) / Σ_ℓ exp(Ŝ_{iℓk}), Ŝ = L(𝒮): a row softmax of
///   every transform-domain slice, whose result is read as an original-domain tensor (the definition's
///   literal reading).
/// - t-Attention(𝒬, 𝒦, 𝒱) = t-Softmax(𝒬 *_L 𝒦ᵀ/√d_h) *_L 𝒱, so slice k of the output is
///   L(𝒜)_k·V̂_k = (Σ_l Z_kl·softmax(Ŝ_l))·V̂_k: the probabilities are mixed across slices once more.
/// - t-MHSA(𝒳) = [𝒪_1 … 𝒪_H]_(2) *_L 𝒲_O with 𝒪_j = t-Attention(𝒳 *_L 𝒲_{Q,j}, 𝒳 *_L 𝒲_{K,j}, 𝒳 *_L 𝒲_{V,j}): the
///   attention layer of attention.hpp with attention_variant::t_softmax and no biases (make_t_mhsa_params).
/// If one reads Def. 5.2's output as still in the transform domain (the "block-diagonal" remark after it),
/// t-Attention becomes paper 000's L-MHA core, i.e. attention_variant::spectral.
#include <cstdint>
#include <utility>

#include "tprod/nn/attention.hpp"

namespace tprod::nn {

/// @brief t-Softmax(𝒮) for 𝒮 ∈ ℝ^{N×M×C}: 𝒜_k = rowsoftmax(L(𝒮)_k).
template <std::floating_point T, real_transform<T> L>
tensor3<T> t_softmax(const tensor3<T>& s, const L& l) {
  tensor3<T> a;
  detail::to_transform(l, s, a);
  for (std::size_t k = 0; k < a.p(); ++k) {
    auto ak = a.slice(k);
    for (Eigen::Index i = 0; i < ak.rows(); ++i) {
      auto row = ak.row(i).array();
      row = (row - row.maxCoeff()).exp();
      row /= row.sum();
    }
  }
  return a;
}

/// @brief Backward of t-Softmax given its output 𝒜: dŜ_k = 𝒜_k ⊙ (d𝒜_k − rowsum(d𝒜_k ⊙ 𝒜_k)), d𝒮 = dŜ ×₃ Zᵀ.
template <std::floating_point T, real_transform<T> L>
tensor3<T> t_softmax_backward(const tensor3<T>& a, const tensor3<T>& d_a, const L& l) {
  TPROD_EXPECTS(a.m() == d_a.m() && a.n() == d_a.n() && a.p() == d_a.p(),
                "nn::t_softmax_backward: gradient " + d_a.shape() + " does not match the output " + a.shape());
  tensor3<T> ds_hat(a.m(), a.n(), a.p()), ds;
  for (std::size_t k = 0; k < a.p(); ++k) {
    const auto ak = a.slice(k);
    const auto gk = d_a.slice(k);
    const detail::vector<T> c = (ak.array() * gk.array()).rowwise().sum();
    ds_hat.slice(k).array() = ak.array() * (gk.array().colwise() - c.array());
  }
  detail::transform_adjoint(l, ds_hat, ds);
  return ds;
}

/// @brief What t_attention_backward needs.
template <std::floating_point T>
struct t_attention_saved {
  tensor3<T> q_hat, k_hat, v_hat, probs, probs_hat;
  std::size_t batch = 0;
  attention_mask mask;
};

template <std::floating_point T>
struct t_attention_grads {
  tensor3<T> d_q, d_k, d_v;
};

namespace detail {
template <class T>
attention_dims t_attention_shape(const tensor3<T>& q, const tensor3<T>& k, const tensor3<T>& v, std::size_t batch) {
  TPROD_EXPECTS(q.n() == k.n() && k.m() == v.m() && k.n() == v.n() && q.p() == k.p() && k.p() == v.p() && batch > 0 &&
                    q.m() % batch == 0 && k.m() % batch == 0 && q.m() > 0 && k.m() > 0,
                "nn::t_attention: Q " + q.shape() + ", K " + k.shape() + ", V " + v.shape() +
                    " are not (B*N_q) x d_h x C and (B*N_k) x d_h x C for B = " + std::to_string(batch));
  return {q.p(), 1, batch, q.m() / batch, k.m() / batch, q.n()};
}
}  // namespace detail

/// @brief t-Attention(𝒬, 𝒦, 𝒱) = t-Softmax(𝒬 *_L 𝒦ᵀ/√d_h) *_L 𝒱 for B sequences at once
/// (𝒬 ∈ ℝ^{(B·N_q)×d_h×C}, 𝒦, 𝒱 ∈ ℝ^{(B·N_k)×d_h×C}), with optional masks.
template <std::floating_point T, real_transform<T> L>
std::pair<tensor3<T>, t_attention_saved<T>> t_attention_forward(const tensor3<T>& q, const tensor3<T>& k,
                                                                const tensor3<T>& v, std::size_t batch, const L& l,
                                                                const attention_mask& mask = {}) {
  const auto d = detail::t_attention_shape(q, k, v, batch);
  detail::check_mask<T>(mask, d, "nn::t_attention_forward");
  std::pair<tensor3<T>, t_attention_saved<T>> r;
  auto& s = r.second;
  s.batch = batch;
  s.mask = mask;
  detail::to_transform(l, q, s.q_hat);
  detail::to_transform(l, k, s.k_hat);
  detail::to_transform(l, v, s.v_hat);
  tensor3<T> o_hat(q.m(), v.n(), q.p());
  detail::attention_scores_forward<T>(d, detail::blocks_of<const T>(s.q_hat.data(), q.m(), d.dh, 0),
                                      detail::blocks_of<const T>(s.k_hat.data(), k.m(), d.dh, 0),
                                      detail::blocks_of<const T>(s.v_hat.data(), k.m(), d.dh, 0), mask,
                                      attention_variant::t_softmax, detail::transform_passes_of<T>(l), s.probs, s.probs_hat,
                                      detail::blocks_of<T>(o_hat.data(), q.m(), d.dh, 0));
  detail::from_transform(l, o_hat, r.first);
  return r;
}

/// @brief Backward of t_attention_forward: d𝒬, d𝒦, d𝒱.
template <std::floating_point T, real_transform<T> L>
t_attention_grads<T> t_attention_backward(const t_attention_saved<T>& s, const tensor3<T>& d_out, const L& l) {
  const auto d = detail::t_attention_shape(s.q_hat, s.k_hat, s.v_hat, s.batch);
  TPROD_EXPECTS(d_out.m() == s.q_hat.m() && d_out.n() == s.v_hat.n() && d_out.p() == s.q_hat.p(),
                "nn::t_attention_backward: gradient " + d_out.shape() + " does not match the output");
  tensor3<T> do_hat, dq_hat(s.q_hat.m(), d.dh, d.p), dk_hat(s.k_hat.m(), d.dh, d.p), dv_hat(s.k_hat.m(), d.dh, d.p);
  tensor3<T> dp, dp_hat;
  detail::inverse_transform_adjoint(l, d_out, do_hat);
  const std::size_t rq = s.q_hat.m(), rk = s.k_hat.m();
  detail::attention_scores_backward<T>(
      d, detail::blocks_of<const T>(s.q_hat.data(), rq, d.dh, 0),
      detail::blocks_of<const T>(s.k_hat.data(), rk, d.dh, 0), detail::blocks_of<const T>(s.v_hat.data(), rk, d.dh, 0),
      attention_variant::t_softmax, detail::transform_passes_of<T>(l), s.probs, s.probs_hat,
      detail::blocks_of<const T>(do_hat.data(), rq, d.dh, 0), detail::blocks_of<T>(dq_hat.data(), rq, d.dh, 0),
      detail::blocks_of<T>(dk_hat.data(), rk, d.dh, 0), detail::blocks_of<T>(dv_hat.data(), rk, d.dh, 0), dp, dp_hat);
  t_attention_grads<T> g;
  detail::transform_adjoint(l, dq_hat, g.d_q);
  detail::transform_adjoint(l, dk_hat, g.d_k);
  detail::transform_adjoint(l, dv_hat, g.d_v);
  return g;
}

/// @brief t-MHSA parameters (paper 001, Def. 5.4): H heads of width d/H in every slice, no biases, the
/// t-Softmax attention. Use with attention_forward / attention_backward.
template <std::floating_point T, real_transform<T> L>
attention_params<T, L> make_t_mhsa_params(std::size_t d, std::size_t heads, std::size_t channels, const L& l,
                                          std::uint64_t seed) {
  return make_attention_params<T>(d, heads, channels, l, seed, false, attention_variant::t_softmax);
}

}  // namespace tprod::nn
