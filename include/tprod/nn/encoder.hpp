// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file encoder.hpp
/// @brief The tensor encoder layer, forward and backward, in paper 000's post-norm form (eq. 4–5,
/// Def. 18) and paper 001's pre-norm form (eq. 5.9–5.10), selected by layer_config.
///
///   post:  𝒳' = LN₁(𝒳 + MHA_L(𝒳)),   𝒴 = LN₂(𝒳' + TFFN(𝒳'))
///   pre:   𝒳' = 𝒳 + MHA_L(LN₁(𝒳)),   𝒴 = 𝒳' + TFFN(LN₂(𝒳'))
/// 𝒳, 𝒴 ∈ ℝ^{(B·T)×d_s×p}. Attention and FFN run in the transform domain on all slices at once; with the
/// transform-domain LayerNorm the activations stay there for the whole layer (one L in, one L⁻¹ out).
/// With p = 1 and the identity transform this is the standard Transformer encoder layer.
///
/// The attention sublayer is a parameter type A: attention_params (token-wise, or dimension-wise through its
/// variant) by default, or another attention with the same shapes (multilinear_attention_params). An attention
/// type provides, found by argument-dependent lookup,
///   attention_sublayer_forward(a, tm, x̂, batch, mask, cache, ŷ)   and
///   attention_sublayer_backward(a, tm, x̂, cache, dŷ, workspace, dx̂, grads)   (gradients assigned),
/// and attention_state's specialization for A names its cache and workspace types. The LayerNorms, FFN and
/// residuals are shared.
#include <cstdint>
#include <utility>

#include "tprod/nn/attention.hpp"
#include "tprod/nn/detail/residual.hpp"
#include "tprod/nn/ffn.hpp"

namespace tprod::nn {

/// @brief The saved state (cache) and scratch (workspace) types of an attention sublayer type A.
template <class A>
struct attention_state;
template <std::floating_point T, class L, class S>
struct attention_state<attention_params<T, L, S>> {
  using cache = detail::attention_cache<T, S>;
  using workspace = detail::attention_workspace<T, S>;
};

/// The encoder's hooks for the token-wise (or dimension-wise) L-multi-head self-attention.
template <std::floating_point T, class L, class S>
void attention_sublayer_forward(const attention_params<T, L, S>& a, const detail::transform_passes<T, S>& tm,
                                const tensor3<T, dextents3, S>& x_hat, std::size_t batch, const attention_mask& mask,
                                detail::attention_cache<T, S>& cache, tensor3<T, dextents3, S>& y_hat) {
  detail::attention_hat_forward(detail::weights_of(a), tm, x_hat, nullptr, batch, mask, cache, y_hat);
}
template <std::floating_point T, class L, class S>
void attention_sublayer_backward(const attention_params<T, L, S>& a, const detail::transform_passes<T, S>& tm,
                                 const tensor3<T, dextents3, S>& x_hat, const detail::attention_cache<T, S>& cache,
                                 const tensor3<T, dextents3, S>& dy_hat, detail::attention_workspace<T, S>& ws,
                                 tensor3<T, dextents3, S>& dx_hat, attention_params<T, L, S>& g) {
  detail::attention_hat_backward(detail::weights_of(a), tm, x_hat, nullptr, cache, dy_hat, ws, dx_hat, nullptr,
                                 detail::grads_of(g));
}

/// @brief One encoder layer's parameters; they live in the attention's memory space (`copy(params, space)`).
template <std::floating_point T, real_transform<T> L, class A = attention_params<T, L>>
struct encoder_params {
  using memory_space_type = space_of_part_t<A>;
  using attention_type = A;
  layer_config config;
  A attn;
  ffn_params<T, L, memory_space_type> ffn;
  layer_norm_params<T, memory_space_type> ln1, ln2;

  const L& transform() const { return attn.transform(); }
  template <class F>
  void for_each(F&& f) {
    attn.for_each(detail::prefixed(f, "attn."));
    ffn.for_each(detail::prefixed(f, "ffn."));
    ln1.for_each(detail::prefixed(f, "ln1."));
    ln2.for_each(detail::prefixed(f, "ln2."));
  }
};

/// @brief The layer of config cfg around a given attention sublayer (of width cfg.width over cfg.slices slices):
/// random FFN projections (make_ffn_params), Γ = 1, ℬ = 0.
/// @throws shape_error for an invalid config or a transform that cannot act on p tubes.
template <std::floating_point T, real_transform<T> L, class A>
encoder_params<T, L, A> make_encoder_params_with(const layer_config& cfg, const L& l, std::uint64_t seed, A attn) {
  cfg.validate();
  l.check_size(cfg.slices);
  return {cfg, std::move(attn), make_ffn_params<T>(cfg.width, cfg.hidden, cfg.slices, l, seed + 10, cfg.act, cfg.bias),
          make_layer_norm_params<T>(cfg.width, cfg.slices, cfg.norm, cfg.eps),
          make_layer_norm_params<T>(cfg.width, cfg.slices, cfg.norm, cfg.eps)};
}

/// @brief Random projections (see make_attention_params, make_ffn_params), Γ = 1, ℬ = 0.
/// @throws shape_error for an invalid config or a transform that cannot act on p tubes.
template <std::floating_point T, real_transform<T> L>
encoder_params<T, L> make_encoder_params(const layer_config& cfg, const L& l, std::uint64_t seed) {
  cfg.validate();
  return make_encoder_params_with<T>(
      cfg, l, seed, make_attention_params<T>(cfg.width, cfg.heads, cfg.slices, l, seed, cfg.bias, cfg.attention));
}

template <std::floating_point T, class L, class A>
encoder_params<T, L, A> zeros_like(const encoder_params<T, L, A>& p) {
  return {p.config, zeros_like(p.attn), zeros_like(p.ffn), zeros_like(p.ln1), zeros_like(p.ln2)};
}

/// @brief The parameters copied to memory space To (refused at compile time for an attention that has no copy
/// there: multilinear attention lives on the host only).
template <memory_space To, std::floating_point T, class L, class A>
auto copy(const encoder_params<T, L, A>& p, To to) {
  detail::static_check_trained_in_space<T, To, L>();
  static_assert(requires(const A& a) { copy(a, To{}); },
                "tprod::nn: this encoder's attention runs on the host only (multilinear attention has no device "
                "version): build its model in host_space");
  auto attn = copy(p.attn, to);
  return encoder_params<T, L, decltype(attn)>{p.config, std::move(attn), copy(p.ffn, to), copy(p.ln1, to),
                                              copy(p.ln2, to)};
}

/// @brief What encoder_layer_backward needs (activations of the forward pass); C is the attention's cache, whose
/// memory space the rest follows.
template <std::floating_point T, class C = detail::attention_cache<T>>
struct encoder_saved {
  using memory_space_type = space_of_part_t<C>;
  std::size_t batch = 0;
  detail::residual_saved<T, memory_space_type> r1, r2;
  C attn;
  detail::ffn_cache<T, memory_space_type> ffn;
  std::size_t bytes() const { return r1.bytes() + r2.bytes() + attn.bytes() + ffn.bytes(); }
};

/// @brief Scratch tensors of the forward and backward passes, kept between calls so that training steps on
/// same-sized batches allocate nothing; W is the attention's workspace, whose memory space the rest follows.
template <std::floating_point T, class W = detail::attention_workspace<T>>
struct encoder_workspace {
  using memory_space_type = space_of_part_t<W>;
  tensor3<T, dextents3, memory_space_type> s0, s1, ds1, ds0;
  detail::residual_workspace<T, memory_space_type> res;
  W attn;
  detail::ffn_workspace<T, memory_space_type> ffn;
  std::size_t bytes() const {
    return (s0.size() + s1.size() + ds1.size() + ds0.size()) * sizeof(T) + res.bytes() + attn.bytes() + ffn.bytes();
  }
};

template <std::floating_point T, class L, class A = attention_params<T, L>>
struct encoder_grads {
  tensor3<T, dextents3, space_of_part_t<A>> d_input;
  encoder_params<T, L, A> d_params;
};

template <class A>
using attention_cache_of = typename attention_state<A>::cache;
template <class A>
using attention_workspace_of = typename attention_state<A>::workspace;

/// @brief The encoder layer on a batch of `batch` sequences ((B·T)×d_s×p), with an optional key-padding (or
/// causal) mask for the self-attention; writes `out`, `saved` and uses `ws` (all reused across calls).
/// @throws shape_error when 𝒳 does not match the layer or the batch, or the mask is invalid.
template <std::floating_point T, real_transform<T> L, class A, class C, class W>
void encoder_layer_forward(const encoder_params<T, L, A>& prm,
                           const tensor3<T, dextents3, space_of_part_t<A>>& x, std::size_t batch,
                           const attention_mask& mask, tensor3<T, dextents3, space_of_part_t<A>>& out,
                           encoder_saved<T, C>& saved, encoder_workspace<T, W>& ws) {
  using S = space_of_part_t<A>;
  using tensor = tensor3<T, dextents3, S>;
  const auto& cfg = prm.config;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  TPROD_EXPECTS(x.n() == cfg.width && x.p() == cfg.slices,
                "nn::encoder_layer_forward: input " + x.shape() + " does not match the layer (rows x " +
                    std::to_string(cfg.width) + " x " + std::to_string(cfg.slices) + ")");
  saved.batch = batch;
  const bool in_transform = cfg.norm == layer_norm_kind::transform_domain;
  if (in_transform) tm.forward(x, ws.s0);
  const tensor& s0 = in_transform ? ws.s0 : x;
  detail::residual_forward(cfg, tm, prm.ln1, s0, ws.s1, saved.r1, ws.res, [&](const tensor& in, tensor& o) {
    attention_sublayer_forward(prm.attn, tm, in, batch, mask, saved.attn, o);
  });
  tensor& s2 = in_transform ? ws.s0 : out;  // s0 is free again once the first sublayer is done
  detail::residual_forward(cfg, tm, prm.ln2, std::as_const(ws.s1), s2, saved.r2, ws.res,
                           [&](const tensor& in, tensor& o) {
                             detail::ffn_hat_forward(detail::weights_of(prm.ffn), in, saved.ffn, o);
                           });
  if (in_transform) tm.inverse(ws.s0, out);
}

template <std::floating_point T, real_transform<T> L, class A>
std::pair<tensor3<T, dextents3, space_of_part_t<A>>, encoder_saved<T, attention_cache_of<A>>> encoder_layer_forward(
    const encoder_params<T, L, A>& prm, const tensor3<T, dextents3, space_of_part_t<A>>& x, std::size_t batch,
    const attention_mask& mask = {}) {
  std::pair<tensor3<T, dextents3, space_of_part_t<A>>, encoder_saved<T, attention_cache_of<A>>> r;
  encoder_workspace<T, attention_workspace_of<A>> ws;
  encoder_layer_forward(prm, x, batch, mask, r.first, r.second, ws);
  return r;
}

/// @brief Backward pass: d𝒳 and all parameter gradients (assigned into g).
template <std::floating_point T, real_transform<T> L, class A, class C, class W>
void encoder_layer_backward(const encoder_params<T, L, A>& prm, const encoder_saved<T, C>& saved,
                            const tensor3<T, dextents3, space_of_part_t<A>>& d_out, encoder_grads<T, L, A>& g,
                            encoder_workspace<T, W>& ws) {
  using S = space_of_part_t<A>;
  using tensor = tensor3<T, dextents3, S>;
  const auto& cfg = prm.config;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  TPROD_EXPECTS(d_out.n() == cfg.width && d_out.p() == cfg.slices && d_out.m() == saved.r1.f_in_hat.m(),
                "nn::encoder_layer_backward: gradient " + d_out.shape() + " does not match the layer output");
  const bool in_transform = cfg.norm == layer_norm_kind::transform_domain;
  if (in_transform) tm.inverse_adjoint(d_out, ws.ds0);
  const tensor& ds2 = in_transform ? ws.ds0 : d_out;
  detail::residual_backward(cfg, tm, prm.ln2, saved.r2, ds2, ws.ds1, g.d_params.ln2, ws.res,
                            [&](const tensor& dy, tensor& dx) {
                              detail::ffn_hat_backward(detail::weights_of(prm.ffn), saved.r2.f_in_hat, saved.ffn, dy,
                                                       ws.ffn, dx, false, detail::grads_of(g.d_params.ffn));
                            });
  tensor& ds0 = in_transform ? ws.ds0 : g.d_input;
  detail::residual_backward(cfg, tm, prm.ln1, saved.r1, std::as_const(ws.ds1), ds0, g.d_params.ln1, ws.res,
                            [&](const tensor& dy, tensor& dx) {
                              attention_sublayer_backward(prm.attn, tm, saved.r1.f_in_hat, saved.attn, dy, ws.attn,
                                                          dx, g.d_params.attn);
                            });
  if (in_transform) tm.adjoint(ws.ds0, g.d_input);
}

template <std::floating_point T, real_transform<T> L, class A, class C>
encoder_grads<T, L, A> encoder_layer_backward(const encoder_params<T, L, A>& prm, const encoder_saved<T, C>& saved,
                                              const tensor3<T, dextents3, space_of_part_t<A>>& d_out) {
  encoder_grads<T, L, A> g{{}, zeros_like(prm)};
  encoder_workspace<T, attention_workspace_of<A>> ws;
  encoder_layer_backward(prm, saved, d_out, g, ws);
  return g;
}

}  // namespace tprod::nn
