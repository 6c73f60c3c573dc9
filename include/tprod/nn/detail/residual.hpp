// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file residual.hpp
/// @brief One residual sublayer of an encoder or decoder layer with its LayerNorm, for both placements and
/// both LayerNorm domains, around any transform-domain sublayer F (attention or FFN).
///
/// The residual stream lives in the LayerNorm's domain, so a transform-domain LayerNorm keeps the whole layer
/// in the transform domain, while an original-domain one needs L before and L⁻¹ after every F (M below):
///   pre:  s' = s + M⁻¹(F(M(LN(s))))        post: s' = LN(s + M⁻¹(F(M(s))))
/// with M = L for the original-domain LayerNorm and M = identity for the transform-domain one.
#include <functional>
#include <type_traits>

#include "tprod/nn/layer_config.hpp"
#include "tprod/nn/layer_norm.hpp"

namespace tprod::nn::detail {

/// Saved state of one residual sublayer: F's transform-domain input and the LayerNorm's state.
template <class T, memory_space S = host_space>
struct residual_saved {
  tensor3<T, dextents3, S> f_in_hat;
  layer_norm_saved<T, S> ln;
  std::size_t bytes() const { return f_in_hat.size() * sizeof(T) + ln.bytes(); }
};

/// Scratch tensors of the residual wrapper (forward and backward).
template <class T, memory_space S = host_space>
struct residual_workspace {
  tensor3<T, dextents3, S> a, b;
  std::size_t bytes() const { return (a.size() + b.size()) * sizeof(T); }
};

/// A transform-domain sublayer (forward: input → output; backward: output gradient → input gradient).
template <class T, memory_space S = host_space>
using sublayer_fn = std::function<void(const tensor3<T, dextents3, S>&, tensor3<T, dextents3, S>&)>;

/// s_out = residual sublayer(s_in); `f(in_hat, out_hat)` runs the transform-domain sublayer.
template <class T, class S>
void residual_forward(const layer_config& cfg, const transform_passes<T, S>& tm, const layer_norm_params<T, S>& ln,
                      const tensor3<T, dextents3, S>& s_in, tensor3<T, dextents3, S>& s_out, residual_saved<T, S>& sv,
                      residual_workspace<T, S>& ws, const std::type_identity_t<sublayer_fn<T, S>>& f) {
  const bool orig = cfg.norm == layer_norm_kind::original_domain;
  if (cfg.placement == norm_placement::pre) {
    if (orig) {
      layer_norm_forward(ln, s_in, ws.a, sv.ln);
      tm.forward(ws.a, sv.f_in_hat);
    } else {
      layer_norm_forward(ln, s_in, sv.f_in_hat, sv.ln);
    }
    f(std::as_const(sv.f_in_hat), ws.b);
    if (orig) {
      tm.inverse(ws.b, ws.a);
      add_to(s_in, ws.a, s_out);
    } else {
      add_to(s_in, ws.b, s_out);
    }
    return;
  }
  if (orig)
    tm.forward(s_in, sv.f_in_hat);
  else
    copy_into(s_in, sv.f_in_hat);
  f(std::as_const(sv.f_in_hat), ws.b);
  if (orig) {
    tm.inverse(ws.b, ws.a);
    add_into(ws.a, s_in);
  } else {
    add_to(s_in, ws.b, ws.a);
  }
  layer_norm_forward(ln, ws.a, s_out, sv.ln);
}

/// ds_in from ds_out; `fb(d_out_hat, d_in_hat)` runs the sublayer's backward (assigning d_in_hat and its
/// parameter gradients); the LayerNorm's gradients go to d_ln. ds_in must not alias ds_out.
template <class T, class S>
void residual_backward(const layer_config& cfg, const transform_passes<T, S>& tm, const layer_norm_params<T, S>& ln,
                       const residual_saved<T, S>& sv, const tensor3<T, dextents3, S>& ds_out,
                       tensor3<T, dextents3, S>& ds_in, layer_norm_params<T, S>& d_ln, residual_workspace<T, S>& ws,
                       const std::type_identity_t<sublayer_fn<T, S>>& fb) {
  const bool orig = cfg.norm == layer_norm_kind::original_domain;
  if (cfg.placement == norm_placement::pre) {
    if (orig) {
      tm.inverse_adjoint(ds_out, ws.a);
      fb(std::as_const(ws.a), ws.b);
      tm.adjoint(ws.b, ws.a);
      layer_norm_backward(ln, sv.ln, ws.a, ds_in, d_ln);
    } else {
      fb(ds_out, ws.b);
      layer_norm_backward(ln, sv.ln, ws.b, ds_in, d_ln);
    }
    add_into(ds_in, ds_out);
    return;
  }
  // post: ds_in = dr + M-adjoint(F-backward(dr)), dr = LN-backward(ds_out)
  layer_norm_backward(ln, sv.ln, ds_out, ds_in, d_ln);
  if (orig) {
    tm.inverse_adjoint(ds_in, ws.a);
    fb(std::as_const(ws.a), ws.b);
    tm.adjoint(ws.b, ws.a);
    add_into(ds_in, ws.a);
  } else {
    fb(std::as_const(ds_in), ws.b);
    add_into(ds_in, ws.b);
  }
}

}  // namespace tprod::nn::detail
