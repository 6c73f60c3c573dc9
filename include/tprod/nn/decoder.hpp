// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file decoder.hpp
/// @brief The tensor decoder layer (paper 000, §5.9, Def. 20, eq. 6–8): masked self-attention,
/// cross-attention on the encoder output, FFN, each with a residual connection and a LayerNorm.
///
///   post:  𝒳' = LN₁(𝒳 + MHA_L^masked(𝒳)),  𝒳'' = LN₂(𝒳' + MHA_L^cross(𝒳', 𝒳_enc)),  𝒴 = LN₃(𝒳'' + TFFN(𝒳''))
///   pre:   the same sublayers as 𝒳' = 𝒳 + MHA(LN₁(𝒳)) etc. (the LayerNorm is not applied to 𝒳_enc).
/// 𝒳 ∈ ℝ^{(B·T_d)×d_s×p}, 𝒳_enc ∈ ℝ^{(B·T_e)×d_s×p}. The self-attention is causal by default; key-padding masks
/// apply to the decoder's own keys and to the encoder's keys separately. L(𝒳_enc) is computed once per call.
#include <cstdint>
#include <utility>

#include "tprod/nn/encoder.hpp"

namespace tprod::nn {

/// @brief One decoder layer's parameters, in memory space S (`copy(params, space)` moves them).
template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
struct decoder_params {
  using memory_space_type = S;
  layer_config config;
  attention_params<T, L, S> self_attn;
  attention_params<T, L, S> cross_attn;
  ffn_params<T, L, S> ffn;
  layer_norm_params<T, S> ln1, ln2, ln3;

  const L& transform() const { return self_attn.transform(); }
  template <class F>
  void for_each(F&& f) {
    self_attn.for_each(detail::prefixed(f, "self_attn."));
    cross_attn.for_each(detail::prefixed(f, "cross_attn."));
    ffn.for_each(detail::prefixed(f, "ffn."));
    ln1.for_each(detail::prefixed(f, "ln1."));
    ln2.for_each(detail::prefixed(f, "ln2."));
    ln3.for_each(detail::prefixed(f, "ln3."));
  }
};

template <std::floating_point T, real_transform<T> L>
decoder_params<T, L> make_decoder_params(const layer_config& cfg, const L& l, std::uint64_t seed) {
  cfg.validate();
  l.check_size(cfg.slices);
  auto ln = [&] { return make_layer_norm_params<T>(cfg.width, cfg.slices, cfg.norm, cfg.eps); };
  return {cfg,
          make_attention_params<T>(cfg.width, cfg.heads, cfg.slices, l, seed, cfg.bias, cfg.attention),
          make_attention_params<T>(cfg.width, cfg.heads, cfg.slices, l, seed + 5, cfg.bias, cfg.attention),
          make_ffn_params<T>(cfg.width, cfg.hidden, cfg.slices, l, seed + 10, cfg.act, cfg.bias),
          ln(),
          ln(),
          ln()};
}

template <std::floating_point T, class L, class S>
decoder_params<T, L, S> zeros_like(const decoder_params<T, L, S>& p) {
  return {p.config,          zeros_like(p.self_attn), zeros_like(p.cross_attn), zeros_like(p.ffn),
          zeros_like(p.ln1), zeros_like(p.ln2),       zeros_like(p.ln3)};
}

/// @brief The parameters copied to memory space To.
template <memory_space To, std::floating_point T, class L, class S>
decoder_params<T, L, To> copy(const decoder_params<T, L, S>& p, To to) {
  return {p.config,         copy(p.self_attn, to), copy(p.cross_attn, to), copy(p.ffn, to),
          copy(p.ln1, to),  copy(p.ln2, to),       copy(p.ln3, to)};
}

/// @brief The decoder's masks: its own (causal by default) and the encoder keys' padding.
struct decoder_masks {
  attention_mask self{true, {}};
  attention_mask memory{};
};

template <std::floating_point T, memory_space S = host_space>
struct decoder_saved {
  using memory_space_type = S;
  std::size_t batch = 0;
  tensor3<T, dextents3, S> memory_hat;  ///< L(𝒳_enc)
  detail::residual_saved<T, S> r1, r2, r3;
  detail::attention_cache<T, S> self_attn, cross_attn;
  detail::ffn_cache<T, S> ffn;
  std::size_t bytes() const {
    return detail::bytes_of(memory_hat) + r1.bytes() + r2.bytes() + r3.bytes() + self_attn.bytes() +
           cross_attn.bytes() + ffn.bytes();
  }
};

template <std::floating_point T, memory_space S = host_space>
struct decoder_workspace {
  tensor3<T, dextents3, S> s0, s1, s2, ds0, ds1, ds2, dm_hat;
  detail::residual_workspace<T, S> res;
  detail::attention_workspace<T, S> attn;
  detail::ffn_workspace<T, S> ffn;
};

template <std::floating_point T, class L, memory_space S = host_space>
struct decoder_grads {
  tensor3<T, dextents3, S> d_input;
  decoder_params<T, L, S> d_params;
  tensor3<T, dextents3, S> d_memory{};  ///< d𝒳_enc
};

/// @brief The decoder layer on B sequences 𝒳 with encoder output 𝒳_enc (reusing out, saved, ws).
/// @throws shape_error when the inputs do not match the layer or the batch, or a mask is invalid.
template <std::floating_point T, real_transform<T> L, memory_space S>
void decoder_layer_forward(const decoder_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x,
                           const tensor3<T, dextents3, S>& memory, std::size_t batch, const decoder_masks& masks,
                           tensor3<T, dextents3, S>& out, decoder_saved<T, S>& saved, decoder_workspace<T, S>& ws) {
  using tensor = tensor3<T, dextents3, S>;
  const auto& cfg = prm.config;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  TPROD_EXPECTS(x.n() == cfg.width && x.p() == cfg.slices && memory.n() == cfg.width && memory.p() == cfg.slices,
                "nn::decoder_layer_forward: inputs " + x.shape() + " and " + memory.shape() +
                    " do not match the layer (rows x " + std::to_string(cfg.width) + " x " +
                    std::to_string(cfg.slices) + ")");
  saved.batch = batch;
  tm.forward(memory, saved.memory_hat);
  const bool in_transform = cfg.norm == layer_norm_kind::transform_domain;
  if (in_transform) tm.forward(x, ws.s0);
  const tensor& s0 = in_transform ? ws.s0 : x;
  detail::residual_forward(cfg, tm, prm.ln1, s0, ws.s1, saved.r1, ws.res, [&](const tensor& in, tensor& o) {
    detail::attention_hat_forward(detail::weights_of(prm.self_attn), tm, in, nullptr, batch, masks.self,
                                  saved.self_attn, o);
  });
  detail::residual_forward(cfg, tm, prm.ln2, std::as_const(ws.s1), ws.s2, saved.r2, ws.res,
                           [&](const tensor& in, tensor& o) {
                             detail::attention_hat_forward(detail::weights_of(prm.cross_attn), tm, in,
                                                           &saved.memory_hat, batch, masks.memory, saved.cross_attn, o);
                           });
  tensor& s3 = in_transform ? ws.s0 : out;
  detail::residual_forward(cfg, tm, prm.ln3, std::as_const(ws.s2), s3, saved.r3, ws.res,
                           [&](const tensor& in, tensor& o) {
                             detail::ffn_hat_forward(detail::weights_of(prm.ffn), in, saved.ffn, o);
                           });
  if (in_transform) tm.inverse(ws.s0, out);
}

template <std::floating_point T, real_transform<T> L, memory_space S>
std::pair<tensor3<T, dextents3, S>, decoder_saved<T, S>> decoder_layer_forward(
    const decoder_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x, const tensor3<T, dextents3, S>& memory,
    std::size_t batch, const decoder_masks& masks = {}) {
  std::pair<tensor3<T, dextents3, S>, decoder_saved<T, S>> r;
  decoder_workspace<T, S> ws;
  decoder_layer_forward(prm, x, memory, batch, masks, r.first, r.second, ws);
  return r;
}

/// @brief Backward pass: d𝒳, d𝒳_enc and all parameter gradients (assigned into g).
template <std::floating_point T, real_transform<T> L, memory_space S>
void decoder_layer_backward(const decoder_params<T, L, S>& prm, const decoder_saved<T, S>& saved,
                            const tensor3<T, dextents3, S>& d_out, decoder_grads<T, L, S>& g,
                            decoder_workspace<T, S>& ws) {
  using tensor = tensor3<T, dextents3, S>;
  const auto& cfg = prm.config;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  TPROD_EXPECTS(d_out.n() == cfg.width && d_out.p() == cfg.slices && d_out.m() == saved.r1.f_in_hat.m(),
                "nn::decoder_layer_backward: gradient " + d_out.shape() + " does not match the layer output");
  const bool in_transform = cfg.norm == layer_norm_kind::transform_domain;
  if (in_transform) tm.inverse_adjoint(d_out, ws.ds0);
  const tensor& ds3 = in_transform ? ws.ds0 : d_out;
  detail::residual_backward(cfg, tm, prm.ln3, saved.r3, ds3, ws.ds2, g.d_params.ln3, ws.res,
                            [&](const tensor& dy, tensor& dx) {
                              detail::ffn_hat_backward(detail::weights_of(prm.ffn), saved.r3.f_in_hat, saved.ffn, dy,
                                                       ws.ffn, dx, false, detail::grads_of(g.d_params.ffn));
                            });
  detail::residual_backward(cfg, tm, prm.ln2, saved.r2, std::as_const(ws.ds2), ws.ds1, g.d_params.ln2, ws.res,
                            [&](const tensor& dy, tensor& dx) {
                              detail::attention_hat_backward(detail::weights_of(prm.cross_attn), tm, saved.r2.f_in_hat,
                                                             &saved.memory_hat, saved.cross_attn, dy, ws.attn, dx,
                                                             &ws.dm_hat, detail::grads_of(g.d_params.cross_attn));
                            });
  tensor& ds0 = in_transform ? ws.ds0 : g.d_input;
  detail::residual_backward(cfg, tm, prm.ln1, saved.r1, std::as_const(ws.ds1), ds0, g.d_params.ln1, ws.res,
                            [&](const tensor& dy, tensor& dx) {
                              detail::attention_hat_backward(detail::weights_of(prm.self_attn), tm, saved.r1.f_in_hat,
                                                             nullptr, saved.self_attn, dy, ws.attn, dx, nullptr,
                                                             detail::grads_of(g.d_params.self_attn));
                            });
  if (in_transform) tm.adjoint(ws.ds0, g.d_input);
  tm.adjoint(ws.dm_hat, g.d_memory);
}

template <std::floating_point T, real_transform<T> L, memory_space S>
decoder_grads<T, L, S> decoder_layer_backward(const decoder_params<T, L, S>& prm, const decoder_saved<T, S>& saved,
                                              const tensor3<T, dextents3, S>& d_out) {
  decoder_grads<T, L, S> g{{}, zeros_like(prm), {}};
  decoder_workspace<T, S> ws;
  decoder_layer_backward(prm, saved, d_out, g, ws);
  return g;
}

}  // namespace tprod::nn
