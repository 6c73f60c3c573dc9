// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file ffn.hpp
/// @brief The L-feed-forward network (paper 000, Def. 15 and Thm. 16; paper 001's t-FFN, Def. 5.6):
///   TFFN(𝒳) = σ(𝒳 *_L 𝒲₁ + ℬ₁) *_L 𝒲₂ + ℬ₂,
/// computed in the transform domain as the standard FFN on every slice,
///   Ĥ_k = X̂_k Ŵ_{1,k} + b̂_{1,k},  Ĝ_k = σ(Ĥ_k),  Ŷ_k = Ĝ_k Ŵ_{2,k} + b̂_{2,k},
/// with one GEMM per slice over all B·T rows. σ is ReLU or GELU (activation.hpp), applied elementwise in the
/// transform domain as Thm. 16 states. Shapes: 𝒳 ∈ ℝ^{r×d_s×p}, 𝒲₁ ∈ ℝ^{d_s×d_ff,s×p}, 𝒲₂ ∈ ℝ^{d_ff,s×d_s×p},
/// ℬ₁ ∈ ℝ^{1×d_ff,s×p}, ℬ₂ ∈ ℝ^{1×d_s×p} (paper 001's t-FFN has no biases: 0-row bias tensors).
#include <cstdint>
#include <utility>

#include "tprod/nn/activation.hpp"
#include "tprod/nn/linear.hpp"

namespace tprod::nn {

/// @brief The FFN's parameters in the transform domain, in memory space S (`copy(params, space)` moves them).
template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
struct ffn_params {
  activation act = activation::gelu;
  transformed<T, L, dextents3, S> w1;  ///< d_s×d_ff,s×p
  transformed<T, L, dextents3, S> b1;  ///< 1×d_ff,s×p or 0×d_ff,s×p
  transformed<T, L, dextents3, S> w2;  ///< d_ff,s×d_s×p
  transformed<T, L, dextents3, S> b2;  ///< 1×d_s×p or 0×d_s×p

  const L& transform() const { return w1.transform(); }
  std::size_t width() const { return w1.m(); }
  std::size_t hidden() const { return w1.n(); }
  std::size_t slices() const { return w1.p(); }
  bool has_bias() const { return b1.m() == 1; }
  template <class F>
  void for_each(F&& f) {
    f("w1", w1.data());
    if (has_bias()) f("b1", b1.data());
    f("w2", w2.data());
    if (has_bias()) f("b2", b2.data());
  }
};

/// @brief Random parameters: 𝒲₁, ℬ₁ uniform in ±1/√d_s, 𝒲₂, ℬ₂ in ±1/√d_ff,s.
template <std::floating_point T, real_transform<T> L>
ffn_params<T, L> make_ffn_params(std::size_t ds, std::size_t hidden, std::size_t p, const L& l, std::uint64_t seed,
                                 activation act = activation::gelu, bool bias = true) {
  TPROD_EXPECTS(ds > 0 && hidden > 0 && p > 0, "nn::make_ffn_params: width " + std::to_string(ds) + ", hidden " +
                                                   std::to_string(hidden) + ", p " + std::to_string(p) +
                                                   " must be positive");
  const T a1 = T(1) / std::sqrt(T(ds)), a2 = T(1) / std::sqrt(T(hidden));
  const std::size_t nb = bias ? 1 : 0;
  return {act, random_transformed<T>(ds, hidden, p, l, a1, seed), random_transformed<T>(nb, hidden, p, l, a1, seed + 1),
          random_transformed<T>(hidden, ds, p, l, a2, seed + 2), random_transformed<T>(nb, ds, p, l, a2, seed + 3)};
}

template <std::floating_point T, class L, class S>
ffn_params<T, L, S> zeros_like(const ffn_params<T, L, S>& p) {
  return {p.act, zeros_like(p.w1), zeros_like(p.b1), zeros_like(p.w2), zeros_like(p.b2)};
}

/// @brief The parameters copied to memory space To.
template <memory_space To, std::floating_point T, class L, class S>
ffn_params<T, L, To> copy(const ffn_params<T, L, S>& p, To to) {
  return {p.act, copy(p.w1, to), copy(p.b1, to), copy(p.w2, to), copy(p.b2, to)};
}

namespace detail {

template <class T, memory_space S = host_space>
struct ffn_cache {
  tensor3<T, dextents3, S> dact;  ///< σ'(Ĥ), r×d_ff,s×p (the backward pass needs only the activation's derivative)
  tensor3<T, dextents3, S> g;     ///< Ĝ = σ(Ĥ)
  std::size_t bytes() const { return (dact.size() + g.size()) * sizeof(T); }
};

template <class T, memory_space S = host_space>
struct ffn_workspace {
  tensor3<T, dextents3, S> dy_hat, dg, dx_hat;
  std::size_t bytes() const { return (dy_hat.size() + dg.size() + dx_hat.size()) * sizeof(T); }
};

/// The tensors of ffn_params without their transform type.
template <class T, memory_space S = host_space>
struct ffn_weights {
  activation act;
  const tensor3<T, dextents3, S>& w1;
  const tensor3<T, dextents3, S>& b1;
  const tensor3<T, dextents3, S>& w2;
  const tensor3<T, dextents3, S>& b2;
};
template <class T, memory_space S = host_space>
struct ffn_weight_grads {
  tensor3<T, dextents3, S>& w1;
  tensor3<T, dextents3, S>& b1;
  tensor3<T, dextents3, S>& w2;
  tensor3<T, dextents3, S>& b2;
};
template <class T, class L, class S>
ffn_weights<T, S> weights_of(const ffn_params<T, L, S>& p) {
  return {p.act, p.w1.data(), p.b1.data(), p.w2.data(), p.b2.data()};
}
template <class T, class L, class S>
ffn_weight_grads<T, S> grads_of(ffn_params<T, L, S>& g) {
  return {g.w1.data(), g.b1.data(), g.w2.data(), g.b2.data()};
}

template <class T, class S>
void ffn_hat_forward(const ffn_weights<T, S>& w, const tensor3<T, dextents3, S>& x_hat, ffn_cache<T, S>& c,
                     tensor3<T, dextents3, S>& y_hat) {
  TPROD_EXPECTS(x_hat.n() == w.w1.m() && x_hat.p() == w.w1.p(),
                "nn::ffn_forward: input " + x_hat.shape() + " does not match the weight " + w.w1.shape());
  slice_linear_forward(x_hat, w.w1, w.b1, 0, w.w1.n(), c.dact);
  activation_forward_keep_derivative(w.act, c.dact, c.g);
  slice_linear_forward(c.g, w.w2, w.b2, 0, w.w2.n(), y_hat);
}

/// dX̂ assigned (or added when `accumulate`), parameter gradients assigned into g.
template <class T, class S>
void ffn_hat_backward(const ffn_weights<T, S>& w, const tensor3<T, dextents3, S>& x_hat, const ffn_cache<T, S>& c,
                      const tensor3<T, dextents3, S>& dy_hat, ffn_workspace<T, S>& ws, tensor3<T, dextents3, S>& dx_hat,
                      bool accumulate, const ffn_weight_grads<T, S>& g) {
  TPROD_EXPECTS(dy_hat.m() == x_hat.m() && dy_hat.n() == w.w2.n() && dy_hat.p() == w.w2.p(),
                "nn::ffn_backward: gradient " + dy_hat.shape() + " does not match the output " + x_hat.shape());
  slice_linear_backward(c.g, w.w2, dy_hat, 0, &ws.dg, false, g.w2, g.b2);
  multiply_elementwise(tprod::detail::system_of<S>(), c.dact.dynamic_view(), ws.dg.dynamic_view());  // dĜ ⊙ σ'(Ĥ)
  slice_linear_backward(x_hat, w.w1, ws.dg, 0, &dx_hat, accumulate, g.w1, g.b1);
}

}  // namespace detail

template <std::floating_point T, memory_space S = host_space>
struct ffn_saved {
  tensor3<T, dextents3, S> x_hat;
  detail::ffn_cache<T, S> cache;
  std::size_t bytes() const { return x_hat.size() * sizeof(T) + cache.bytes(); }
};

template <std::floating_point T, class L, memory_space S = host_space>
struct ffn_grads {
  tensor3<T, dextents3, S> d_input;
  ffn_params<T, L, S> d_params;
};

/// @brief TFFN(𝒳) into `out` and `saved` (storage reused).
/// @throws shape_error when 𝒳 is not r×d_s×p for the parameters.
template <std::floating_point T, real_transform<T> L, memory_space S>
void ffn_forward(const ffn_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x, tensor3<T, dextents3, S>& out,
                 ffn_saved<T, S>& saved) {
  tensor3<T, dextents3, S> y_hat;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  tm.forward(x, saved.x_hat);
  detail::ffn_hat_forward(detail::weights_of(prm), saved.x_hat, saved.cache, y_hat);
  tm.inverse(y_hat, out);
}

template <std::floating_point T, real_transform<T> L, memory_space S>
std::pair<tensor3<T, dextents3, S>, ffn_saved<T, S>> ffn_forward(const ffn_params<T, L, S>& prm,
                                                                 const tensor3<T, dextents3, S>& x) {
  std::pair<tensor3<T, dextents3, S>, ffn_saved<T, S>> r;
  ffn_forward(prm, x, r.first, r.second);
  return r;
}

/// @brief Backward: Ĝ_out = G ×₃ Z⁻ᵀ; dŴ₂ = Ĝᵀ·Ĝ_out; dĤ = (Ĝ_out Ŵ₂ᵀ) ⊙ σ'(Ĥ); dŴ₁ = X̂ᵀ dĤ;
/// d𝒳 = (dĤ Ŵ₁ᵀ) ×₃ Zᵀ.
template <std::floating_point T, real_transform<T> L, memory_space S>
ffn_grads<T, L, S> ffn_backward(const ffn_params<T, L, S>& prm, const ffn_saved<T, S>& saved,
                                const tensor3<T, dextents3, S>& d_out) {
  ffn_grads<T, L, S> g{tensor3<T, dextents3, S>(), zeros_like(prm)};
  detail::ffn_workspace<T, S> ws;
  const auto tm = detail::transform_passes_of<T, S>(prm.transform());
  tm.inverse_adjoint(d_out, ws.dy_hat);
  detail::ffn_hat_backward(detail::weights_of(prm), saved.x_hat, saved.cache, ws.dy_hat, ws, ws.dx_hat, false,
                           detail::grads_of(g.d_params));
  tm.adjoint(ws.dx_hat, g.d_input);
  return g;
}

}  // namespace tprod::nn
