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

template <std::floating_point T, real_transform<T> L>
struct ffn_params {
  activation act = activation::gelu;
  transformed<T, L> w1;  ///< d_s×d_ff,s×p
  transformed<T, L> b1;  ///< 1×d_ff,s×p or 0×d_ff,s×p
  transformed<T, L> w2;  ///< d_ff,s×d_s×p
  transformed<T, L> b2;  ///< 1×d_s×p or 0×d_s×p

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

template <std::floating_point T, class L>
ffn_params<T, L> zeros_like(const ffn_params<T, L>& p) {
  return {p.act, zeros_like(p.w1), zeros_like(p.b1), zeros_like(p.w2), zeros_like(p.b2)};
}

namespace detail {

template <class T>
struct ffn_cache {
  tensor3<T> dact;  ///< σ'(Ĥ), r×d_ff,s×p (the backward pass needs only the derivative of the activation)
  tensor3<T> g;     ///< Ĝ = σ(Ĥ)
  std::size_t bytes() const { return bytes_of(dact) + bytes_of(g); }
};

template <class T>
struct ffn_workspace {
  tensor3<T> dy_hat, dg, dx_hat;
  std::size_t bytes() const { return bytes_of(dy_hat) + bytes_of(dg) + bytes_of(dx_hat); }
};

/// The tensors of ffn_params without their transform type.
template <class T>
struct ffn_weights {
  activation act;
  const tensor3<T>& w1;
  const tensor3<T>& b1;
  const tensor3<T>& w2;
  const tensor3<T>& b2;
};
template <class T>
struct ffn_weight_grads {
  tensor3<T>& w1;
  tensor3<T>& b1;
  tensor3<T>& w2;
  tensor3<T>& b2;
};
template <class T, class L>
ffn_weights<T> weights_of(const ffn_params<T, L>& p) {
  return {p.act, p.w1.data(), p.b1.data(), p.w2.data(), p.b2.data()};
}
template <class T, class L>
ffn_weight_grads<T> grads_of(ffn_params<T, L>& g) {
  return {g.w1.data(), g.b1.data(), g.w2.data(), g.b2.data()};
}

template <class T>
void ffn_hat_forward(const ffn_weights<T>& w, const tensor3<T>& x_hat, ffn_cache<T>& c, tensor3<T>& y_hat) {
  TPROD_EXPECTS(x_hat.n() == w.w1.m() && x_hat.p() == w.w1.p(),
                "nn::ffn_forward: input " + x_hat.shape() + " does not match the weight " + w.w1.shape());
  slice_linear_forward(x_hat, w.w1, w.b1, 0, w.w1.n(), c.dact);
  activation_forward_keep_derivative(w.act, c.dact, c.g);
  slice_linear_forward(c.g, w.w2, w.b2, 0, w.w2.n(), y_hat);
}

/// dX̂ assigned (or added when `accumulate`), parameter gradients assigned into g.
template <class T>
void ffn_hat_backward(const ffn_weights<T>& w, const tensor3<T>& x_hat, const ffn_cache<T>& c, const tensor3<T>& dy_hat,
                      ffn_workspace<T>& ws, tensor3<T>& dx_hat, bool accumulate, const ffn_weight_grads<T>& g) {
  TPROD_EXPECTS(dy_hat.m() == x_hat.m() && dy_hat.n() == w.w2.n() && dy_hat.p() == w.w2.p(),
                "nn::ffn_backward: gradient " + dy_hat.shape() + " does not match the output " + x_hat.shape());
  slice_linear_backward(c.g, w.w2, dy_hat, 0, &ws.dg, false, g.w2, g.b2);
  ws.dg.elements().array() *= c.dact.elements().array();  // dĤ = dĜ ⊙ σ'(Ĥ)
  slice_linear_backward(x_hat, w.w1, ws.dg, 0, &dx_hat, accumulate, g.w1, g.b1);
}

}  // namespace detail

template <std::floating_point T>
struct ffn_saved {
  tensor3<T> x_hat;
  detail::ffn_cache<T> cache;
  std::size_t bytes() const { return detail::bytes_of(x_hat) + cache.bytes(); }
};

template <std::floating_point T, class L>
struct ffn_grads {
  tensor3<T> d_input;
  ffn_params<T, L> d_params;
};

/// @brief TFFN(𝒳) into `out` and `saved` (storage reused).
/// @throws shape_error when 𝒳 is not r×d_s×p for the parameters.
template <std::floating_point T, real_transform<T> L>
void ffn_forward(const ffn_params<T, L>& prm, const tensor3<T>& x, tensor3<T>& out, ffn_saved<T>& saved) {
  tensor3<T> y_hat;
  const auto tm = detail::tube_maps_of<T>(prm.transform());
  tm.forward(x, saved.x_hat);
  detail::ffn_hat_forward(detail::weights_of(prm), saved.x_hat, saved.cache, y_hat);
  tm.inverse(y_hat, out);
}

template <std::floating_point T, real_transform<T> L>
std::pair<tensor3<T>, ffn_saved<T>> ffn_forward(const ffn_params<T, L>& prm, const tensor3<T>& x) {
  std::pair<tensor3<T>, ffn_saved<T>> r;
  ffn_forward(prm, x, r.first, r.second);
  return r;
}

/// @brief Backward: Ĝ_out = G ×₃ Z⁻ᵀ; dŴ₂ = Ĝᵀ·Ĝ_out; dĤ = (Ĝ_out Ŵ₂ᵀ) ⊙ σ'(Ĥ); dŴ₁ = X̂ᵀ dĤ;
/// d𝒳 = (dĤ Ŵ₁ᵀ) ×₃ Zᵀ.
template <std::floating_point T, real_transform<T> L>
ffn_grads<T, L> ffn_backward(const ffn_params<T, L>& prm, const ffn_saved<T>& saved, const tensor3<T>& d_out) {
  ffn_grads<T, L> g{tensor3<T>(), zeros_like(prm)};
  detail::ffn_workspace<T> ws;
  const auto tm = detail::tube_maps_of<T>(prm.transform());
  tm.inverse_adjoint(d_out, ws.dy_hat);
  detail::ffn_hat_backward(detail::weights_of(prm), saved.x_hat, saved.cache, ws.dy_hat, ws, ws.dx_hat, false,
                           detail::grads_of(g.d_params));
  tm.adjoint(ws.dx_hat, g.d_input);
  return g;
}

}  // namespace tprod::nn
