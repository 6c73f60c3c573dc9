// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer_norm.hpp
/// @brief Tensor LayerNorm: every (token row t, slice k) is normalized along mode 2 (the d_s features),
/// with learnable Γ, ℬ ∈ ℝ^{1×d_s×p}.
///
/// Two definitions, which differ in where they are applied and in where ε goes:
/// - layer_norm_kind::original_domain, paper 000 Def. 17, applied to 𝒳 itself:
///   TLN(𝒳)(t,:,k) = Γ(:,:,k) ⊙ (𝒳(t,:,k) − μ_{t,k}) / √(σ²_{t,k} + ε) + ℬ(:,:,k);
/// - layer_norm_kind::transform_domain, paper 001 Def. 5.5, applied to X̂ = L(𝒳):
///   t-LN(X̂)_{tjk} = γ_{jk} (X̂_{tjk} − μ̂_{tk}) / (σ̂_{tk} + ε) + β_{jk}.
/// μ and σ² are the mean and the biased variance over the d_s features. The functions here normalize the
/// tensor they are given; the caller passes X̂ for the transform-domain kind (the encoder layers do this).
/// With p = 1 the original-domain kind is the standard LayerNorm.
#include <cstdint>
#include <utility>

#include "tprod/backend/kernels/layer_norm.hpp"
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

/// @brief original_domain (paper 000, Def. 17: divide by √(σ² + ε), applied in the original domain) or
/// transform_domain (paper 001, Def. 5.5: divide by σ + ε, applied in the transform domain).
using layer_norm_kind = backend::kernels::layer_norm_kind;

/// @brief Γ and ℬ (1×n×p each) in memory space S, the kind and ε.
template <std::floating_point T, memory_space S = host_space>
struct layer_norm_params {
  using memory_space_type = S;
  tensor3<T, dextents3, S> gamma;
  tensor3<T, dextents3, S> beta;
  layer_norm_kind kind = layer_norm_kind::original_domain;
  double eps = 1e-5;

  std::size_t width() const { return gamma.n(); }
  std::size_t slices() const { return gamma.p(); }
  template <class F>
  void for_each(F&& f) {
    f("gamma", gamma);
    f("beta", beta);
  }
};

/// @brief Γ = 1, ℬ = 0 of shape 1×n×p.
/// @throws shape_error when n or p is zero, or eps is negative.
template <std::floating_point T>
layer_norm_params<T> make_layer_norm_params(std::size_t n, std::size_t p,
                                            layer_norm_kind kind = layer_norm_kind::original_domain,
                                            double eps = 1e-5) {
  TPROD_EXPECTS(n > 0 && p > 0 && eps >= 0, "nn::make_layer_norm_params: width " + std::to_string(n) + ", p " +
                                                std::to_string(p) + ", eps " + number_text(eps) +
                                                " (need n, p > 0 and eps >= 0)");
  layer_norm_params<T> prm{tensor3<T>(1, n, p), tensor3<T>(1, n, p), kind, eps};
  prm.gamma.elements().setOnes();
  return prm;
}

template <std::floating_point T, class S>
layer_norm_params<T, S> zeros_like(const layer_norm_params<T, S>& p) {
  return {tensor3<T, dextents3, S>(1, p.width(), p.slices()), tensor3<T, dextents3, S>(1, p.width(), p.slices()),
          p.kind, p.eps};
}

/// @brief The parameters copied to memory space To.
template <memory_space To, std::floating_point T, class S>
layer_norm_params<T, To> copy(const layer_norm_params<T, S>& p, To to) {
  return {copy(p.gamma, to), copy(p.beta, to), p.kind, p.eps};
}

/// @brief What layer_norm_backward needs: the normalized tensor n̂ = (x − μ)/s, 1/s and the coupling factor
/// s/σ per (row, slice) (1 for the original-domain kind; s is the denominator of the kind's formula).
template <std::floating_point T, memory_space S = host_space>
struct layer_norm_saved {
  tensor3<T, dextents3, S> normalized;  ///< r×n×p
  tensor3<T, dextents3, S> inv_scale;   ///< r×1×p: 1/s
  tensor3<T, dextents3, S> coupling;    ///< r×1×p: s/σ (0 where σ = 0); empty for the original-domain kind (1)
  std::size_t bytes() const { return (normalized.size() + inv_scale.size() + coupling.size()) * sizeof(T); }
};

template <std::floating_point T, memory_space S = host_space>
struct layer_norm_grads {
  tensor3<T, dextents3, S> d_input;
  layer_norm_params<T, S> d_params;
};

/// @brief out = Γ ⊙ (x − μ)/s + ℬ along mode 2, s = √(σ² + ε) or σ + ε by the kind (buffers reused).
/// @throws shape_error when x is not r×n×p for the parameters' n and p.
template <std::floating_point T, memory_space S>
void layer_norm_forward(const layer_norm_params<T, S>& prm, const tensor3<T, dextents3, S>& x,
                        tensor3<T, dextents3, S>& out, layer_norm_saved<T, S>& saved) {
  TPROD_EXPECTS(x.n() == prm.width() && x.p() == prm.slices(),
                "nn::layer_norm_forward: input " + x.shape() + " does not match the parameters " + prm.gamma.shape());
  const std::size_t r = x.m(), p = x.p();
  detail::ensure_shape_like(out, x);
  detail::ensure_shape_like(saved.normalized, x);
  detail::ensure_shape(saved.inv_scale, r, 1, p);
  // the coupling factor s/σ is 1 for √(σ² + ε), so only the transform-domain kind stores it
  if (prm.kind == layer_norm_kind::transform_domain)
    detail::ensure_shape(saved.coupling, r, 1, p);
  else
    saved.coupling = tensor3<T, dextents3, S>();
  layer_norm_forward(tprod::detail::system_of<S>(), prm.kind, T(prm.eps), x.dynamic_view(),
                     prm.gamma.dynamic_view(), prm.beta.dynamic_view(), out.dynamic_view(),
                     saved.normalized.dynamic_view(), saved.inv_scale.dynamic_view(), saved.coupling.dynamic_view());
}

template <std::floating_point T, memory_space S>
std::pair<tensor3<T, dextents3, S>, layer_norm_saved<T, S>> layer_norm_forward(const layer_norm_params<T, S>& prm,
                                                                               const tensor3<T, dextents3, S>& x) {
  std::pair<tensor3<T, dextents3, S>, layer_norm_saved<T, S>> r;
  layer_norm_forward(prm, x, r.first, r.second);
  return r;
}

/// @brief Backward pass into d_in (may alias d_out) and the parameter gradients (assigned):
/// with g = dY ⊙ Γ, dx = (1/s)(g − mean(g) − (s/σ)·n̂·mean(g ⊙ n̂)); dΓ = Σ_t dY ⊙ n̂, dℬ = Σ_t dY.
template <std::floating_point T, memory_space S>
void layer_norm_backward(const layer_norm_params<T, S>& prm, const layer_norm_saved<T, S>& saved,
                         const tensor3<T, dextents3, S>& d_out, tensor3<T, dextents3, S>& d_in,
                         layer_norm_params<T, S>& d_params) {
  const auto& nh = saved.normalized;
  TPROD_EXPECTS(d_out.m() == nh.m() && d_out.n() == nh.n() && d_out.p() == nh.p(),
                "nn::layer_norm_backward: gradient " + d_out.shape() + " does not match the output " + nh.shape());
  if (&d_in != &d_out) detail::ensure_shape_like(d_in, d_out);
  layer_norm_backward(tprod::detail::system_of<S>(), prm.gamma.dynamic_view(), nh.dynamic_view(),
                      saved.inv_scale.dynamic_view(), saved.coupling.dynamic_view(), d_out.dynamic_view(),
                      d_in.dynamic_view(), d_params.gamma.dynamic_view(), d_params.beta.dynamic_view());
}

template <std::floating_point T, memory_space S>
layer_norm_grads<T, S> layer_norm_backward(const layer_norm_params<T, S>& prm, const layer_norm_saved<T, S>& saved,
                                           const tensor3<T, dextents3, S>& d_out) {
  layer_norm_grads<T, S> g{tensor3<T, dextents3, S>(), zeros_like(prm)};
  layer_norm_backward(prm, saved, d_out, g.d_input, g.d_params);
  return g;
}

}  // namespace tprod::nn
