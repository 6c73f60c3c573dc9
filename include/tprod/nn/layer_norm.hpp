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

#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

enum class layer_norm_kind {
  original_domain,  ///< paper 000, Def. 17: divide by √(σ² + ε), applied in the original domain
  transform_domain  ///< paper 001, Def. 5.5: divide by σ + ε, applied in the transform domain
};

/// @brief Γ and ℬ (1×n×p each), the kind and ε.
template <std::floating_point T>
struct layer_norm_params {
  tensor3<T> gamma;
  tensor3<T> beta;
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

template <std::floating_point T>
layer_norm_params<T> zeros_like(const layer_norm_params<T>& p) {
  return {tensor3<T>(1, p.width(), p.slices()), tensor3<T>(1, p.width(), p.slices()), p.kind, p.eps};
}

/// @brief What layer_norm_backward needs: the normalized tensor n̂ = (x − μ)/s, 1/s and the coupling factor
/// s/σ per (row, slice) (1 for the original-domain kind; s is the denominator of the kind's formula).
template <std::floating_point T>
struct layer_norm_saved {
  tensor3<T> normalized;  ///< r×n×p
  tensor3<T> inv_scale;   ///< r×1×p: 1/s
  tensor3<T> coupling;    ///< r×1×p: s/σ (0 where σ = 0); empty for the original-domain kind, where it is 1
  std::size_t bytes() const {
    return detail::bytes_of(normalized) + detail::bytes_of(inv_scale) + detail::bytes_of(coupling);
  }
};

template <std::floating_point T>
struct layer_norm_grads {
  tensor3<T> d_input;
  layer_norm_params<T> d_params;
};

/// @brief out = Γ ⊙ (x − μ)/s + ℬ along mode 2, s = √(σ² + ε) or σ + ε by the kind (buffers reused).
/// @throws shape_error when x is not r×n×p for the parameters' n and p.
template <std::floating_point T>
void layer_norm_forward(const layer_norm_params<T>& prm, const tensor3<T>& x, tensor3<T>& out,
                        layer_norm_saved<T>& saved) {
  TPROD_EXPECTS(x.n() == prm.width() && x.p() == prm.slices(),
                "nn::layer_norm_forward: input " + x.shape() + " does not match the parameters " + prm.gamma.shape());
  const std::size_t r = x.m(), n = x.n(), p = x.p();
  const auto rows = Eigen::Index(r);
  detail::ensure_shape_like(out, x);
  detail::ensure_shape_like(saved.normalized, x);
  detail::ensure_shape(saved.inv_scale, r, 1, p);
  // the coupling factor s/σ is 1 for √(σ² + ε), so only the transform-domain kind stores it
  if (prm.kind == layer_norm_kind::transform_domain)
    detail::ensure_shape(saved.coupling, r, 1, p);
  else
    saved.coupling = tensor3<T>();
  const T inv_n = T(1) / T(n), eps = T(prm.eps);
  backend::cpu::parallel_for(p, detail::elementwise_threads(x), [&](std::size_t k) {
    detail::vector<T> mean(rows), var(rows);
    const auto xk = x.slice(k);
    auto nk = saved.normalized.slice(k);
    auto yk = out.slice(k);
    // Column passes over the column-major slice: each reads one contiguous feature column for all rows.
    mean.setZero();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) mean += xk.col(j);
    mean *= inv_n;
    var.setZero();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) var.array() += (xk.col(j) - mean).array().square();
    var *= inv_n;
    auto inv_s = saved.inv_scale.slice(k).col(0).array();
    if (prm.kind == layer_norm_kind::original_domain) {
      inv_s = (var.array() + eps).rsqrt();
    } else {
      const auto sigma = var.array().sqrt();
      inv_s = T(1) / (sigma + eps);
      saved.coupling.slice(k).col(0).array() = (sigma > T(0)).select((sigma + eps) / sigma, T(0));
    }
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) {
      nk.col(j).array() = (xk.col(j) - mean).array() * inv_s;
      yk.col(j).array() = nk.col(j).array() * prm.gamma(0, std::size_t(j), k) + prm.beta(0, std::size_t(j), k);
    }
  });
}

template <std::floating_point T>
std::pair<tensor3<T>, layer_norm_saved<T>> layer_norm_forward(const layer_norm_params<T>& prm, const tensor3<T>& x) {
  std::pair<tensor3<T>, layer_norm_saved<T>> r;
  layer_norm_forward(prm, x, r.first, r.second);
  return r;
}

/// @brief Backward pass into d_in (may alias d_out) and the parameter gradients (assigned):
/// with g = dY ⊙ Γ, dx = (1/s)(g − mean(g) − (s/σ)·n̂·mean(g ⊙ n̂)); dΓ = Σ_t dY ⊙ n̂, dℬ = Σ_t dY.
template <std::floating_point T>
void layer_norm_backward(const layer_norm_params<T>& prm, const layer_norm_saved<T>& saved, const tensor3<T>& d_out,
                         tensor3<T>& d_in, layer_norm_params<T>& d_params) {
  const auto& nh = saved.normalized;
  TPROD_EXPECTS(d_out.m() == nh.m() && d_out.n() == nh.n() && d_out.p() == nh.p(),
                "nn::layer_norm_backward: gradient " + d_out.shape() + " does not match the output " + nh.shape());
  const std::size_t r = nh.m(), n = nh.n(), p = nh.p();
  const auto rows = Eigen::Index(r);
  if (&d_in != &d_out) detail::ensure_shape_like(d_in, d_out);
  const T inv_n = T(1) / T(n);
  backend::cpu::parallel_for(p, detail::elementwise_threads(d_out), [&](std::size_t k) {
    detail::vector<T> m1(rows), m2(rows);
    const auto nk = nh.slice(k);
    const auto gk = d_out.slice(k);
    auto dk = d_in.slice(k);
    m1.setZero();
    m2.setZero();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) {
      const T gam = prm.gamma(0, std::size_t(j), k);
      d_params.gamma(0, std::size_t(j), k) = gk.col(j).dot(nk.col(j));
      d_params.beta(0, std::size_t(j), k) = gk.col(j).sum();
      m1 += gam * gk.col(j);
      m2.array() += gam * gk.col(j).array() * nk.col(j).array();
    }
    m1 *= inv_n;
    m2 *= inv_n;
    if (saved.coupling.size() != 0) m2.array() *= saved.coupling.slice(k).col(0).array();
    const auto inv_s = saved.inv_scale.slice(k).col(0).array();
    for (Eigen::Index j = 0; j < Eigen::Index(n); ++j) {
      const T gam = prm.gamma(0, std::size_t(j), k);
      dk.col(j).array() = inv_s * (gam * gk.col(j).array() - m1.array() - nk.col(j).array() * m2.array());
    }
  });
}

template <std::floating_point T>
layer_norm_grads<T> layer_norm_backward(const layer_norm_params<T>& prm, const layer_norm_saved<T>& saved,
                                        const tensor3<T>& d_out) {
  layer_norm_grads<T> g{tensor3<T>(), zeros_like(prm)};
  layer_norm_backward(prm, saved, d_out, g.d_input, g.d_params);
  return g;
}

}  // namespace tprod::nn
