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
/// multiply-adds, each a tanh), run over the (sequence, head) blocks on all threads; the backward pass evaluates
/// the tanh again rather than storing T²·d of them.
///
/// Backward, with dS_ij = A_ij (dA_ij − Σ_k A_ik dA_ik) and t_ij = tanh(Q_i^h + K_j^h):
///   dQ_i^h = Σ_j dS_ij v_h ⊙ (1 − t_ij²),   dK_j^h = Σ_i dS_ij v_h ⊙ (1 − t_ij²),   dv_h = Σ_ij dS_ij t_ij.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tprod/core/parallel.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/model/layer.hpp"

namespace tprod::nn {

/// @brief The additive attention's parameters (see the file comment), p = 1 tensors.
template <std::floating_point T>
struct additive_attention_params {
  std::size_t heads = 1;
  tensor3<T> w_qkv, b_qkv, score, w_o, b_o;

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

template <std::floating_point T>
class additive_attention_layer {
  using matrix = tprod::detail::dense_matrix<T>;

 public:
  std::string name = "ada";

  explicit additive_attention_layer(additive_attention_params<T> prm, std::string layer_name = "ada")
      : name(std::move(layer_name)), value_(std::move(prm)), grad_(value_) {
    grad_.for_each([](std::string_view, tensor3<T>& g) { g.elements().setZero(); });
  }

  const additive_attention_params<T>& params() const { return value_; }

  const tensor3<T>& forward(const tensor3<T>& x, const batch& b) {
    const std::size_t d = value_.width();
    TPROD_EXPECTS(x.p() == 1 && x.n() == d,
                  "nn::additive_attention_layer: input " + x.shape() + " must be (B·T)x" + std::to_string(d) + "x1");
    TPROD_EXPECTS(b.size > 0 && x.m() % b.size == 0 && (b.lengths.empty() || b.lengths.size() == b.size),
                  "nn::additive_attention_layer: input " + x.shape() + " is not whole sequences of a batch of " +
                      std::to_string(b.size) + " with one length each");
    batch_ = b.size;
    steps_ = x.m() / b.size;
    lengths_ = b.lengths;
    x_ = x.slice(0);
    qkv_.noalias() = x_ * value_.w_qkv.slice(0);
    qkv_.rowwise() += value_.b_qkv.slice(0).row(0);
    probs_.resize(Eigen::Index(steps_), Eigen::Index(steps_ * blocks()));
    o_.resize(x_.rows(), Eigen::Index(d));
    for_each_block([&](std::size_t blk, std::size_t seq, std::size_t h) {
      const Eigen::Index t = Eigen::Index(steps_), dh = Eigen::Index(head_width()), first = Eigen::Index(seq) * t;
      const Eigen::Index valid = Eigen::Index(valid_keys(seq));
      const auto q = qkv_.block(first, Eigen::Index(h) * dh, t, dh);
      const auto k = qkv_.block(first, Eigen::Index(d + h * head_width()), valid, dh);
      const auto v = qkv_.block(first, Eigen::Index(2 * d + h * head_width()), valid, dh);
      const auto score = value_.score.slice(0).row(0).segment(Eigen::Index(h) * dh, dh).transpose();
      auto a = probs_.middleCols(Eigen::Index(blk) * t, t);
      a.setZero();
      for (Eigen::Index i = 0; i < t; ++i) {
        auto row = a.row(i).head(valid);
        row = ((k.rowwise() + q.row(i)).array().tanh().matrix() * score).transpose();  // s_ij over the valid j
        row = (row.array() - row.maxCoeff()).exp().matrix();
        row /= row.sum();
      }
      o_.block(first, Eigen::Index(h) * dh, t, dh).noalias() = a.leftCols(valid) * v;
    });
    detail::ensure_shape(out_, x.m(), d, 1);
    auto y = out_.slice(0);
    y.noalias() = o_ * value_.w_o.slice(0);
    y.rowwise() += value_.b_o.slice(0).row(0);
    return out_;
  }

  const tensor3<T>& backward(const tensor3<T>& dy) {
    const std::size_t d = value_.width();
    TPROD_EXPECTS(dy.m() == std::size_t(x_.rows()) && dy.n() == d && dy.p() == 1,
                  "nn::additive_attention_layer: gradient " + dy.shape() + " does not match the last forward");
    const auto g = dy.slice(0);
    grad_.w_o.slice(0).noalias() += o_.transpose() * g;
    grad_.b_o.slice(0) += g.colwise().sum();
    const matrix d_o = g * value_.w_o.slice(0).transpose();
    dqkv_.setZero(qkv_.rows(), qkv_.cols());
    d_score_.setZero(Eigen::Index(blocks()), Eigen::Index(head_width()));  // one row per block, summed in order
    for_each_block([&](std::size_t blk, std::size_t seq, std::size_t h) {
      const Eigen::Index t = Eigen::Index(steps_), dh = Eigen::Index(head_width()), first = Eigen::Index(seq) * t;
      const Eigen::Index valid = Eigen::Index(valid_keys(seq)), kc = Eigen::Index(d + h * head_width());
      const Eigen::Index qc = Eigen::Index(h) * dh, vc = Eigen::Index(2 * d + h * head_width());
      const auto a = probs_.middleCols(Eigen::Index(blk) * t, t).leftCols(valid);
      const auto q = qkv_.block(first, qc, t, dh);
      const auto k = qkv_.block(first, kc, valid, dh);
      const auto v = qkv_.block(first, vc, valid, dh);
      const auto d_out = d_o.block(first, qc, t, dh);
      const auto score = value_.score.slice(0).row(0).segment(qc, dh);
      dqkv_.block(first, vc, valid, dh).noalias() = a.transpose() * d_out;  // dV = Aᵀ dO
      matrix ds = d_out * v.transpose();                                    // dA, then dS
      for (Eigen::Index i = 0; i < t; ++i) {
        const T inner = a.row(i).dot(ds.row(i));
        ds.row(i) = (a.row(i).array() * (ds.row(i).array() - inner)).matrix();
      }
      auto dq = dqkv_.block(first, qc, t, dh);
      auto dk = dqkv_.block(first, kc, valid, dh);
      auto dv = d_score_.row(Eigen::Index(blk));
      matrix th(valid, dh), gq(valid, dh);  // one query's rows at a time, reused across the queries
      for (Eigen::Index i = 0; i < t; ++i) {
        th = (k.rowwise() + q.row(i)).array().tanh().matrix();  // t_ij for every valid j
        dv.noalias() += ds.row(i) * th;
        gq = (ds.row(i).transpose() * score).array() * (T(1) - th.array().square());  // dS_ij v ⊙ (1 − t_ij²)
        dq.row(i) += gq.colwise().sum();
        dk += gq;
      }
    });
    auto d_score = grad_.score.slice(0);
    for (std::size_t blk = 0; blk < blocks(); ++blk) {
      const std::size_t h = blk % value_.heads;
      d_score.row(0).segment(Eigen::Index(h * head_width()), Eigen::Index(head_width())) +=
          d_score_.row(Eigen::Index(blk));
    }
    grad_.w_qkv.slice(0).noalias() += x_.transpose() * dqkv_;
    grad_.b_qkv.slice(0) += dqkv_.colwise().sum();
    detail::ensure_shape(dx_, dy.m(), d, 1);
    dx_.slice(0).noalias() = dqkv_ * value_.w_qkv.slice(0).transpose();
    return dx_;
  }

  /// f(name, value, gradient): "<name>.w_qkv", "<name>.b_qkv", "<name>.score", "<name>.w_o", "<name>.b_o".
  template <class F>
  void for_each_parameter(F&& f) {
    std::vector<tensor3<T>*> grads;
    grad_.for_each([&](std::string_view, tensor3<T>& g) { grads.push_back(&g); });
    std::size_t i = 0;
    value_.for_each([&](std::string_view n, tensor3<T>& v) { f(name + "." + std::string(n), v, *grads[i++]); });
  }

 private:
  std::size_t head_width() const { return value_.width() / value_.heads; }
  std::size_t blocks() const { return batch_ * value_.heads; }
  std::size_t valid_keys(std::size_t seq) const {
    const std::size_t n = lengths_.empty() ? steps_ : std::min(lengths_[seq], steps_);
    TPROD_EXPECTS(n > 0, "nn::additive_attention_layer: sequence " + std::to_string(seq) + " has no valid token");
    return n;
  }
  /// f(block, sequence, head) for every (sequence, head) block, on all threads: the blocks touch disjoint rows and
  /// columns of every output.
  template <class F>
  void for_each_block(F&& f) {
    tprod::detail::parallel_for(blocks(), num_threads(),
                               [&](std::size_t blk) { f(blk, blk / value_.heads, blk % value_.heads); });
  }

  additive_attention_params<T> value_, grad_;
  std::size_t batch_ = 0, steps_ = 0;
  std::vector<std::size_t> lengths_;
  matrix x_, qkv_, probs_, o_, dqkv_, d_score_;
  tensor3<T> out_, dx_;
};

}  // namespace tprod::nn
