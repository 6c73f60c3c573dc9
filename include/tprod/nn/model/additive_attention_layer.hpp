// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file additive_attention_layer.hpp
/// @brief Multi-head additive (Bahdanau-style) self-attention as a stateful layer, (B·T)×d×1 → (B·T)×d×1: paper
/// 002's third attention ("ADA"), beside dot-product attention and TSA. Head h of H (width d_h = d/H) scores query
/// i against key j with a learned vector v_h instead of a dot product (Bahdanau et al. 2015, e_ij = vᵀ tanh(W s_i +
/// U h_j)):
///   [Q | K | V] = X·W_QKV + b_QKV,   s_ij = v_hᵀ tanh(Q_i^h + K_j^h),   A_i = softmax_j(s_ij) over the valid keys,
///   O_i^h = Σ_j A_ij V_j^h,   Y = [O^1 … O^H]·W_O + b_O.
/// Parameters (4d² + 5d): W_QKV (d×3d), b_QKV (1×3d), the score vectors v = [v_1 … v_H] (1×d), W_O (d×d), b_O
/// (1×d), all as p = 1 tensors. The T×T scores cost T²·d tanh evaluations per sequence (a dot product's T²·d
/// multiply-adds, each a tanh); the backend's additive-attention tasks (backend/kernels/additive_attention.hpp) run
/// them over the (head, sequence) blocks, and the backward pass evaluates the tanh again rather than storing T²·d of
/// them. The layer computes in the memory space S of its parameters (`nn::copy(params, device_space{})` moves them).
///
/// Backward, with dS_ij = A_ij (dA_ij − Σ_k A_ik dA_ik) and t_ij = tanh(Q_i^h + K_j^h):
///   dQ_i^h = Σ_j dS_ij v_h ⊙ (1 − t_ij²),   dK_j^h = Σ_i dS_ij v_h ⊙ (1 − t_ij²),   dv_h = Σ_ij dS_ij t_ij.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tprod/backend/kernels/additive_attention.hpp"
#include "tprod/nn/detail/attention_kernels.hpp"
#include "tprod/nn/detail/slice_gemm.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

/// @brief The additive attention's parameters (see the file comment), p = 1 tensors in memory space S.
template <std::floating_point T, memory_space S = host_space>
struct additive_attention_params {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  std::size_t heads = 1;
  tensor w_qkv, b_qkv, score, w_o, b_o;

  std::size_t width() const { return w_o.m(); }
  template <class F>
  void for_each(F&& f) {
    f("w_qkv", w_qkv);
    f("b_qkv", b_qkv);
    f("score", score);
    f("w_o", w_o);
    f("b_o", b_o);
  }
};

/// @brief Random parameters, uniform in [−1/√d, 1/√d] (the score vectors in [−1/√d_h, 1/√d_h]), from `seed`.
/// @throws shape_error when d or heads is zero, or heads does not divide d.
template <std::floating_point T>
additive_attention_params<T> make_additive_attention_params(std::size_t d, std::size_t heads, std::uint64_t seed) {
  TPROD_EXPECTS(d > 0 && heads > 0 && d % heads == 0,
                "nn::make_additive_attention_params: width d = " + std::to_string(d) + " with " +
                    std::to_string(heads) + " heads (need positive sizes and heads dividing d)");
  std::mt19937_64 rng(seed);
  const auto draw = [&](std::size_t m, std::size_t n, double bound) {
    std::uniform_real_distribution<double> u(-bound, bound);
    tensor3<T> t(m, n, 1);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = T(u(rng));
    return t;
  };
  const double a = 1 / std::sqrt(double(d)), a_h = 1 / std::sqrt(double(d / heads));
  return {heads, draw(d, 3 * d, a), draw(1, 3 * d, a), draw(1, d, a_h), draw(d, d, a), draw(1, d, a)};
}

template <std::floating_point T, class S>
additive_attention_params<T, S> zeros_like(const additive_attention_params<T, S>& p) {
  const auto zero = [](const tensor3<T, dextents3, S>& t) { return tensor3<T, dextents3, S>(t.m(), t.n(), t.p()); };
  return {p.heads, zero(p.w_qkv), zero(p.b_qkv), zero(p.score), zero(p.w_o), zero(p.b_o)};
}

/// @brief The parameters copied to memory space To.
template <memory_space To, std::floating_point T, class S>
additive_attention_params<T, To> copy(const additive_attention_params<T, S>& p, To to) {
  return {p.heads, copy(p.w_qkv, to), copy(p.b_qkv, to), copy(p.score, to), copy(p.w_o, to), copy(p.b_o, to)};
}

template <std::floating_point T, memory_space S = host_space>
class additive_attention_layer {
 public:
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  std::string name = "ada";

  explicit additive_attention_layer(additive_attention_params<T, S> prm, std::string layer_name = "ada")
      : name(std::move(layer_name)), params_(std::move(prm)), fresh_(zeros_like(params_.value)) {}

  const additive_attention_params<T, S>& params() const { return params_.value; }

  const tensor& forward(const tensor& x, const batch& b) {
    const std::size_t d = params_.value.width();
    TPROD_EXPECTS(x.p() == 1 && x.n() == d,
                  "nn::additive_attention_layer: input " + x.shape() + " must be (B·T)x" + std::to_string(d) + "x1");
    TPROD_EXPECTS(b.size > 0 && x.m() % b.size == 0 && (b.lengths.empty() || b.lengths.size() == b.size),
                  "nn::additive_attention_layer: input " + x.shape() + " is not whole sequences of a batch of " +
                      std::to_string(b.size) + " with one length each");
    const std::size_t steps = x.m() / b.size;
    for (std::size_t s = 0; s < b.lengths.size(); ++s)
      TPROD_EXPECTS(b.lengths[s] > 0, "nn::additive_attention_layer: sequence " + std::to_string(s) +
                                          " has no valid token");
    dims_ = {{1, params_.value.heads, b.size, steps, steps, d / params_.value.heads}};
    mask_ = attention_mask{false, b.lengths};
    for (auto& n : mask_.key_lengths) n = std::min(n, steps);
    x_ = x;
    const auto& w = params_.value;
    detail::slice_linear_forward(x_, w.w_qkv, w.b_qkv, 0, 3 * d, qkv_);
    detail::ensure_shape(probs_, steps, steps, dims_.blocks());
    detail::ensure_shape(o_, x.m(), d, 1);
    detail::tally_macs(2 * dims_.block_product_macs());  // the scores (a tanh each) and O = Pᵀ·V
    const auto src = sources<const T>(qkv_.data());
    additive_forward_blocks(tprod::detail::system_of<S>(), dims_, src.q, src.k, src.v, w.score.dynamic_view(),
                            detail::masking_of(mask_), probs_.dynamic_view(), layout<T>(o_.data(), d, 0));
    detail::slice_linear_forward(o_, w.w_o, w.b_o, 0, d, out_);
    return out_;
  }

  const tensor& backward(const tensor& dy) {
    const std::size_t d = params_.value.width();
    TPROD_EXPECTS(dy.m() == x_.m() && dy.n() == d && dy.p() == 1,
                  "nn::additive_attention_layer: gradient " + dy.shape() + " does not match the last forward");
    const auto& w = params_.value;
    detail::slice_linear_backward(o_, w.w_o, dy, 0, &d_o_, false, fresh_.w_o, fresh_.b_o);
    detail::ensure_shape_like(dqkv_, qkv_);
    detail::tally_macs(4 * dims_.block_product_macs());  // dV, dP, and the tanh passes of dQ and dK
    const auto src = sources<const T>(qkv_.data());
    const auto dst = sources<T>(dqkv_.data());
    additive_backward_blocks(tprod::detail::system_of<S>(), dims_, src.q, src.k, src.v, w.score.dynamic_view(),
                             detail::masking_of(mask_), std::as_const(probs_).dynamic_view(),
                             layout<const T>(d_o_.data(), d, 0), dst.q, dst.k, dst.v, fresh_.score.dynamic_view());
    detail::slice_linear_backward(x_, w.w_qkv, dqkv_, 0, &dx_, false, fresh_.w_qkv, fresh_.b_qkv);
    params_.accumulate(fresh_);
    return dx_;
  }

  /// f(name, value, gradient): "<name>.w_qkv", "<name>.b_qkv", "<name>.score", "<name>.w_o", "<name>.b_o".
  template <class F>
  void for_each_parameter(F&& f) {
    detail::visit_prefixed(params_, name, f);
  }

 private:
  /// The head blocks of a (B·T)×width×1 tensor whose heads start at column col0.
  template <class E>
  backend::kernels::head_layout<E> layout(E* data, std::size_t width, std::size_t col0) const {
    return detail::blocks_of<E>(data, x_.m(), width, col0).layout();
  }
  template <class E>
  struct qkv_layouts {
    backend::kernels::head_layout<E> q, k, v;
  };
  /// Q, K and V inside the (B·T)×3d×1 tensor [Q | K | V].
  template <class E>
  qkv_layouts<E> sources(E* qkv) const {
    const std::size_t d = params_.value.width();
    return {layout<E>(qkv, 3 * d, 0), layout<E>(qkv, 3 * d, d), layout<E>(qkv, 3 * d, 2 * d)};
  }

  trainable<T, additive_attention_params<T, S>> params_;
  additive_attention_params<T, S> fresh_;  ///< the last backward pass's gradients, before they are added
  detail::attention_dims dims_{};
  attention_mask mask_;
  tensor x_, qkv_, probs_, o_, out_, d_o_, dqkv_, dx_;
};

}  // namespace tprod::nn
