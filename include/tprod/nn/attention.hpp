// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention.hpp
/// @brief L-multi-head attention (paper 000, §5.5, Alg. 1–2): self-attention, cross-attention, causal and
/// key-padding masks, forward and backward.
///
/// For 𝒳 ∈ ℝ^{(B·T)×d_s×p} (B sequences of T tokens, row b·T + t) and h heads per slice (d_s = h·d_h):
///   X̂ = L(𝒳);  Q̂_k = X̂_k Ŵ_{Q,k} + b̂_{Q,k},  K̂_k, V̂_k likewise (from the memory for cross-attention);
///   head_{k,j} = softmax(Q̂_k^{(j)} K̂_k^{(j)ᵀ}/√d_h) V̂_k^{(j)} per sequence;  Ĥ_k = [head_{k,1} … head_{k,h}];
///   Ŷ_k = Ĥ_k Ŵ_{O,k} + b̂_{O,k};  MHA_L(𝒳) = L⁻¹(Ŷ).
/// The projections are one GEMM per slice over all B·T rows; the attention itself is one flat loop over the
/// p·h·B (slice, head, sequence) blocks. With p = 1 and the identity transform this is the standard
/// multi-head attention with H = h heads (the bias-free form with variant t_softmax is paper 001's t-MHSA,
/// see t_attention.hpp). With variant dimension_wise each head attends over its d_h features instead of the
/// tokens (TensorCoder, paper 003; dimension_wise_kernels.hpp), everything else unchanged.
///
/// Parameters (transform domain): Ŵ_QKV = [Ŵ_Q | Ŵ_K | Ŵ_V] ∈ ℝ^{d_s×3d_s×p} — head j of Ŵ_Q is columns
/// j·d_h…(j+1)·d_h−1, the paper's 𝒲_Q^{(j)} ∈ ℝ^{d_s×d_h×p} — with bias B̂_QKV ∈ ℝ^{1×3d_s×p}, and
/// Ŵ_O ∈ ℝ^{d_s×d_s×p}, B̂_O ∈ ℝ^{1×d_s×p}. Layers without bias have 0-row bias tensors.
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tprod/nn/detail/dimension_wise_kernels.hpp"
#include "tprod/nn/linear.hpp"

namespace tprod::nn {

/// @brief The attention's parameters in the transform domain, in memory space S (`copy(params, space)` moves
/// them).
template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
struct attention_params {
  using memory_space_type = S;
  std::size_t heads = 1;  ///< h, heads per slice
  attention_variant variant = attention_variant::spectral;
  transformed<T, L, dextents3, S> w_qkv;  ///< d_s×3d_s×p
  transformed<T, L, dextents3, S> b_qkv;  ///< 1×3d_s×p or 0×3d_s×p
  transformed<T, L, dextents3, S> w_o;    ///< d_s×d_s×p
  transformed<T, L, dextents3, S> b_o;    ///< 1×d_s×p or 0×d_s×p

  const L& transform() const { return w_o.transform(); }
  std::size_t width() const { return w_o.m(); }  ///< d_s
  std::size_t slices() const { return w_o.p(); }
  std::size_t head_dim() const { return width() / heads; }
  bool has_bias() const { return b_o.m() == 1; }
  template <class F>
  void for_each(F&& f) {
    f("w_qkv", w_qkv.data());
    if (has_bias()) f("b_qkv", b_qkv.data());
    f("w_o", w_o.data());
    if (has_bias()) f("b_o", b_o.data());
  }
};

/// @brief Random parameters, uniform in [−1/√d_s, 1/√d_s] (biases likewise).
/// @throws shape_error when d_s, heads or p is zero, or heads does not divide d_s.
template <std::floating_point T, real_transform<T> L>
attention_params<T, L> make_attention_params(std::size_t ds, std::size_t heads, std::size_t p, const L& l,
                                             std::uint64_t seed, bool bias = true,
                                             attention_variant variant = attention_variant::spectral) {
  TPROD_EXPECTS(ds > 0 && p > 0 && heads > 0 && ds % heads == 0,
                "nn::make_attention_params: width d_s = " + std::to_string(ds) + " with " + std::to_string(heads) +
                    " heads and p = " + std::to_string(p) + " (need positive sizes and heads dividing d_s)");
  const T a = T(1) / std::sqrt(T(ds));
  const std::size_t nb = bias ? 1 : 0;
  return {heads,
          variant,
          random_transformed<T>(ds, 3 * ds, p, l, a, seed),
          random_transformed<T>(nb, 3 * ds, p, l, a, seed + 1),
          random_transformed<T>(ds, ds, p, l, a, seed + 2),
          random_transformed<T>(nb, ds, p, l, a, seed + 3)};
}

template <std::floating_point T, class L, class S>
attention_params<T, L, S> zeros_like(const attention_params<T, L, S>& p) {
  return {p.heads, p.variant, zeros_like(p.w_qkv), zeros_like(p.b_qkv), zeros_like(p.w_o), zeros_like(p.b_o)};
}

/// @brief The parameters copied to memory space To.
template <memory_space To, std::floating_point T, class L, class S>
attention_params<T, L, To> copy(const attention_params<T, L, S>& p, To to) {
  return {p.heads, p.variant, copy(p.w_qkv, to), copy(p.b_qkv, to), copy(p.w_o, to), copy(p.b_o, to)};
}

namespace detail {

/// Transform-domain intermediate results of one attention call.
template <class T, memory_space S = host_space>
struct attention_cache {
  using memory_space_type = S;
  using tensor = tensor3<T, dextents3, S>;
  tensor q;          ///< self-attention: (B·T)×3d_s×p, [Q̂ | K̂ | V̂]; cross-attention: Q̂, (B·T_q)×d_s×p
  tensor kv;         ///< cross-attention: (B·T_k)×2d_s×p, [K̂ | V̂]; empty for self-attention
  tensor probs;      ///< T_k×T_q×(p·h·B)
  tensor probs_hat;  ///< t_softmax variant: L(probs) across slices
  tensor hcat;       ///< (B·T_q)×d_s×p: concatenated heads Ĥ
  std::size_t batch = 0;
  attention_mask mask;
  std::size_t bytes() const {
    return (q.size() + kv.size() + probs.size() + probs_hat.size() + hcat.size()) * sizeof(T);
  }
};

/// Temporaries of the backward pass, kept between calls so repeated steps allocate nothing.
template <class T, memory_space S = host_space>
struct attention_workspace {
  using memory_space_type = S;
  tensor3<T, dextents3, S> dy_hat, dhcat, dq, dkv, dp, dp_hat, dx_hat, dm_hat;
  std::size_t bytes() const {
    return (dy_hat.size() + dhcat.size() + dq.size() + dkv.size() + dp.size() + dp_hat.size() + dx_hat.size() +
            dm_hat.size()) *
           sizeof(T);
  }
};

/// The tensors of attention_params without their transform type (the kernels below are compiled per scalar).
template <class T, memory_space S = host_space>
struct attention_tensors {
  std::size_t heads;
  attention_variant variant;
  const tensor3<T, dextents3, S>& w_qkv;
  const tensor3<T, dextents3, S>& b_qkv;
  const tensor3<T, dextents3, S>& w_o;
  const tensor3<T, dextents3, S>& b_o;
  std::size_t width() const { return w_o.m(); }
  std::size_t slices() const { return w_o.p(); }
};
template <class T, memory_space S = host_space>
struct attention_weight_grads {
  tensor3<T, dextents3, S>& w_qkv;
  tensor3<T, dextents3, S>& b_qkv;
  tensor3<T, dextents3, S>& w_o;
  tensor3<T, dextents3, S>& b_o;
};
template <class T, class L, class S>
attention_tensors<T, S> weights_of(const attention_params<T, L, S>& p) {
  return {p.heads, p.variant, p.w_qkv.data(), p.b_qkv.data(), p.w_o.data(), p.b_o.data()};
}
template <class T, class L, class S>
attention_weight_grads<T, S> grads_of(attention_params<T, L, S>& g) {
  return {g.w_qkv.data(), g.b_qkv.data(), g.w_o.data(), g.b_o.data()};
}

/// Where the Q, K, V head blocks live: one fused (B·T)×3d_s×p tensor for self-attention (kv = nullptr), or a
/// (B·T_q)×d_s×p query tensor and a (B·T_k)×2d_s×p key/value tensor for cross-attention.
template <class E>
struct qkv_blocks {
  head_blocks<E> q, k, v;
};
template <class E>
qkv_blocks<E> qkv_sources(E* q, E* kv, std::size_t rq, std::size_t rk, std::size_t ds) {
  if (kv == nullptr)
    return {blocks_of<E>(q, rq, 3 * ds, 0), blocks_of<E>(q, rq, 3 * ds, ds), blocks_of<E>(q, rq, 3 * ds, 2 * ds)};
  return {blocks_of<E>(q, rq, ds, 0), blocks_of<E>(kv, rk, 2 * ds, 0), blocks_of<E>(kv, rk, 2 * ds, ds)};
}

template <class T, class S>
attention_dims attention_shape(const attention_tensors<T, S>& w, const tensor3<T, dextents3, S>& xq,
                               const tensor3<T, dextents3, S>& xkv, std::size_t batch, const char* who) {
  const std::size_t ds = w.width(), p = w.slices();
  TPROD_EXPECTS(xq.n() == ds && xq.p() == p && xkv.n() == ds && xkv.p() == p,
                std::string(who) + ": inputs " + xq.shape() + " and " + xkv.shape() +
                    " do not match the attention width and slices (rows x " + std::to_string(ds) + " x " +
                    std::to_string(p) + ")");
  TPROD_EXPECTS(batch > 0 && xq.m() % batch == 0 && xkv.m() % batch == 0 && xq.m() > 0 && xkv.m() > 0,
                std::string(who) + ": " + std::to_string(xq.m()) + " query rows and " + std::to_string(xkv.m()) +
                    " key rows are not whole sequences of a batch of " + std::to_string(batch));
  return {p, w.heads, batch, xq.m() / batch, xkv.m() / batch, ds / w.heads};
}

/// Ŷ = MHA core in the transform domain (xkv_hat = nullptr: self-attention on xq_hat).
template <class T, class S>
void attention_hat_forward(const attention_tensors<T, S>& w, const transform_passes<T, S>& tm,
                           const tensor3<T, dextents3, S>& xq_hat,
                           std::type_identity_t<const tensor3<T, dextents3, S>*> xkv_hat, std::size_t batch,
                           const attention_mask& mask, attention_cache<T, S>& c, tensor3<T, dextents3, S>& y_hat) {
  const tensor3<T, dextents3, S>& xm = xkv_hat ? *xkv_hat : xq_hat;
  const auto d = attention_shape(w, xq_hat, xm, batch, "nn::attention_forward");
  check_mask<T>(mask, d, "nn::attention_forward");
  const std::size_t ds = d.heads * d.dh, rq = xq_hat.m(), rk = xm.m();
  c.batch = batch;
  c.mask = mask;
  if (xkv_hat) {
    slice_linear_forward(xq_hat, w.w_qkv, w.b_qkv, 0, ds, c.q);
    slice_linear_forward(xm, w.w_qkv, w.b_qkv, ds, 2 * ds, c.kv);
  } else {
    // self-attention: Q, K and V in one GEMM per slice, [Q̂ | K̂ | V̂] = X̂_k Ŵ_QKV,k
    slice_linear_forward(xq_hat, w.w_qkv, w.b_qkv, 0, 3 * ds, c.q);
    c.kv = tensor3<T, dextents3, S>();
  }
  ensure_shape(c.hcat, rq, ds, d.p);
  const auto src = qkv_sources<const T>(c.q.data(), xkv_hat ? c.kv.data() : nullptr, rq, rk, ds);
  if (w.variant == attention_variant::dimension_wise) {
    dimension_wise_forward<T, S>(d, src.q, src.k, src.v, mask, c.probs, blocks_of<T>(c.hcat.data(), rq, ds, 0));
    c.probs_hat = tensor3<T, dextents3, S>();
  } else {
    attention_scores_forward<T>(d, src.q, src.k, src.v, mask, w.variant, tm, c.probs, c.probs_hat,
                                blocks_of<T>(c.hcat.data(), rq, ds, 0));
  }
  slice_linear_forward(c.hcat, w.w_o, w.b_o, 0, ds, y_hat);
}

/// Backward of attention_hat_forward: dX̂_q (and dX̂_kv for cross-attention) assigned, parameter gradients
/// assigned into g.
template <class T, class S>
void attention_hat_backward(const attention_tensors<T, S>& w, const transform_passes<T, S>& tm,
                            const tensor3<T, dextents3, S>& xq_hat,
                            std::type_identity_t<const tensor3<T, dextents3, S>*> xkv_hat,
                            const attention_cache<T, S>& c, const tensor3<T, dextents3, S>& dy_hat,
                            attention_workspace<T, S>& ws, tensor3<T, dextents3, S>& dxq_hat,
                            std::type_identity_t<tensor3<T, dextents3, S>*> dxkv_hat,
                            const attention_weight_grads<T, S>& g) {
  const tensor3<T, dextents3, S>& xm = xkv_hat ? *xkv_hat : xq_hat;
  const auto d = attention_shape(w, xq_hat, xm, c.batch, "nn::attention_backward");
  TPROD_EXPECTS(dy_hat.m() == xq_hat.m() && dy_hat.n() == w.width() && dy_hat.p() == w.slices(),
                "nn::attention_backward: gradient " + dy_hat.shape() + " does not match the output " + xq_hat.shape());
  const std::size_t ds = d.heads * d.dh, rq = xq_hat.m(), rk = xm.m();
  slice_linear_backward(c.hcat, w.w_o, dy_hat, 0, &ws.dhcat, false, g.w_o, g.b_o);
  ensure_shape_like(ws.dq, c.q);
  if (xkv_hat) ensure_shape_like(ws.dkv, c.kv);
  const auto src = qkv_sources<const T>(c.q.data(), xkv_hat ? c.kv.data() : nullptr, rq, rk, ds);
  const auto dst = qkv_sources<T>(ws.dq.data(), xkv_hat ? ws.dkv.data() : nullptr, rq, rk, ds);
  const auto dhcat = blocks_of<const T>(ws.dhcat.data(), rq, ds, 0);
  if (w.variant == attention_variant::dimension_wise) {
    dimension_wise_backward<T, S>(d, src.q, src.k, src.v, c.mask, c.probs, dhcat, dst.q, dst.k, dst.v);
  } else {
    attention_scores_backward<T>(d, src.q, src.k, src.v, w.variant, tm, c.probs, c.probs_hat, dhcat, dst.q, dst.k,
                                 dst.v, ws.dp, ws.dp_hat);
  }
  if (xkv_hat) {
    slice_linear_backward(xq_hat, w.w_qkv, ws.dq, 0, &dxq_hat, false, g.w_qkv, g.b_qkv);
    slice_linear_backward(xm, w.w_qkv, ws.dkv, ds, dxkv_hat, false, g.w_qkv, g.b_qkv);
  } else {
    slice_linear_backward(xq_hat, w.w_qkv, ws.dq, 0, &dxq_hat, false, g.w_qkv, g.b_qkv);  // dX̂ = [dQ̂|dK̂|dV̂]·Ŵ_QKVᵀ
  }
}

}  // namespace detail

/// @brief What attention_backward needs.
template <std::floating_point T, memory_space S = host_space>
struct attention_saved {
  tensor3<T, dextents3, S> x_hat;       ///< L(𝒳)
  tensor3<T, dextents3, S> memory_hat;  ///< L(memory) for cross-attention, empty for self-attention
  detail::attention_cache<T, S> cache;
  std::size_t bytes() const { return (x_hat.size() + memory_hat.size()) * sizeof(T) + cache.bytes(); }
};

template <std::floating_point T, class L, memory_space S = host_space>
struct attention_grads {
  tensor3<T, dextents3, S> d_input;
  tensor3<T, dextents3, S> d_memory;  ///< cross-attention only
  attention_params<T, L, S> d_params;
};

/// @brief Self-attention MHA_L(𝒳) for a batch of `batch` sequences, into `out` and `saved` (reused).
/// @throws shape_error for inputs that do not match the parameters or the batch, or a bad mask.
template <std::floating_point T, real_transform<T> L, memory_space S>
void attention_forward(const attention_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x, std::size_t batch,
                       const attention_mask& mask, tensor3<T, dextents3, S>& out, attention_saved<T, S>& saved) {
  tensor3<T, dextents3, S> y_hat;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  tm.forward(x, saved.x_hat);
  saved.memory_hat = tensor3<T, dextents3, S>();
  detail::attention_hat_forward(detail::weights_of(prm), tm, saved.x_hat, nullptr, batch, mask, saved.cache, y_hat);
  tm.inverse(y_hat, out);
}

template <std::floating_point T, real_transform<T> L, memory_space S>
std::pair<tensor3<T, dextents3, S>, attention_saved<T, S>> attention_forward(const attention_params<T, L, S>& prm,
                                                                             const tensor3<T, dextents3, S>& x,
                                                                             std::size_t batch,
                                                                             const attention_mask& mask = {}) {
  std::pair<tensor3<T, dextents3, S>, attention_saved<T, S>> r;
  attention_forward(prm, x, batch, mask, r.first, r.second);
  return r;
}

/// @brief Cross-attention MHA_L^cross(𝒳, 𝓜): queries from 𝒳 ((B·T_q)×d_s×p), keys and values from the
/// memory 𝓜 ((B·T_k)×d_s×p, e.g. the encoder output).
template <std::floating_point T, real_transform<T> L, memory_space S>
void cross_attention_forward(const attention_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x,
                             const tensor3<T, dextents3, S>& memory, std::size_t batch, const attention_mask& mask,
                             tensor3<T, dextents3, S>& out, attention_saved<T, S>& saved) {
  tensor3<T, dextents3, S> y_hat;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  tm.forward(x, saved.x_hat);
  tm.forward(memory, saved.memory_hat);
  detail::attention_hat_forward(detail::weights_of(prm), tm, saved.x_hat, &saved.memory_hat, batch, mask, saved.cache,
                                y_hat);
  tm.inverse(y_hat, out);
}

template <std::floating_point T, real_transform<T> L, memory_space S>
std::pair<tensor3<T, dextents3, S>, attention_saved<T, S>> cross_attention_forward(
    const attention_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x, const tensor3<T, dextents3, S>& memory,
    std::size_t batch, const attention_mask& mask = {}) {
  std::pair<tensor3<T, dextents3, S>, attention_saved<T, S>> r;
  cross_attention_forward(prm, x, memory, batch, mask, r.first, r.second);
  return r;
}

/// @brief Backward pass of attention_forward / cross_attention_forward: d𝒳 (and d𝓜) and the gradients with
/// respect to the transform-domain parameters.
template <std::floating_point T, real_transform<T> L, memory_space S>
attention_grads<T, L, S> attention_backward(const attention_params<T, L, S>& prm, const attention_saved<T, S>& saved,
                                            const tensor3<T, dextents3, S>& d_out) {
  attention_grads<T, L, S> g{tensor3<T, dextents3, S>(), tensor3<T, dextents3, S>(), zeros_like(prm)};
  detail::attention_workspace<T, S> ws;
  const bool cross = saved.memory_hat.size() != 0;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  tm.inverse_adjoint(d_out, ws.dy_hat);
  detail::attention_hat_backward(detail::weights_of(prm), tm, saved.x_hat, cross ? &saved.memory_hat : nullptr,
                                 saved.cache, ws.dy_hat, ws, ws.dx_hat, cross ? &ws.dm_hat : nullptr,
                                 detail::grads_of(g.d_params));
  tm.adjoint(ws.dx_hat, g.d_input);
  if (cross) tm.adjoint(ws.dm_hat, g.d_memory);
  return g;
}

}  // namespace tprod::nn
