// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file linear.hpp
/// @brief The L-linear layer 𝒴 = 𝒳 *_L 𝒲 + ℬ (paper 000 Def. 15's building block, paper 001's t-Linear,
/// Def. 5.1), with its gradients (paper 000 Prop. 22).
///
/// Shapes: 𝒳 ∈ ℝ^{r×n×p} (r = B·T token rows), 𝒲 ∈ ℝ^{n×q×p}, ℬ ∈ ℝ^{1×q×p} broadcast over the rows,
/// 𝒴 ∈ ℝ^{r×q×p}. In the transform domain Ŷ_k = X̂_k·Ŵ_k + 1·B̂_k, one GEMM per slice over all rows.
///
/// The parameters are stored in the transform domain (Ŵ = L(𝒲), B̂ = L(ℬ)), as paper 000 recommends, and the
/// gradients returned are those with respect to Ŵ and B̂. For an orthogonal Z (the DCT) the gradient with
/// respect to the original-domain 𝒲 is L⁻¹(dŴ) = 𝒳ᵀ *_L G, and d𝒳 = G *_L 𝒲ᵀ (Prop. 22).
#include <cstdint>
#include <utility>

#include "tprod/core/random.hpp"
#include "tprod/nn/detail/slice_gemm.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod::nn {

/// @brief A transform-domain parameter tensor of shape m×n×p, entries uniform in [−scale, scale].
template <std::floating_point T, real_transform<T> L>
transformed<T, L> random_transformed(std::size_t m, std::size_t n, std::size_t p, const L& l, T scale,
                                     std::uint64_t seed) {
  transformed<T, L> t(dextents3(m, n, p), l);
  t.data() = random_tensor3<T>(m, n, p, seed);
  t.data() *= scale;
  return t;
}

/// @brief A zero transform-domain tensor with the shape, transform and memory space of `like`.
template <std::floating_point T, class L, class S>
transformed<T, L, dextents3, S> zeros_like(const transformed<T, L, dextents3, S>& like) {
  return transformed<T, L, dextents3, S>(like.extents(), like.transform());
}

/// @brief Parameters of an L-linear layer, stored in the transform domain, in memory space S (host_space or
/// device_space; `copy(params, space)` moves them).
template <std::floating_point T, real_transform<T> L, memory_space S = host_space>
struct linear_params {
  using memory_space_type = S;
  transformed<T, L, dextents3, S> weight;  ///< Ŵ = L(𝒲), n×q×p
  transformed<T, L, dextents3, S> bias;    ///< B̂ = L(ℬ), 1×q×p, or 0×q×p for a layer without bias

  const L& transform() const { return weight.transform(); }
  std::size_t in_width() const { return weight.m(); }
  std::size_t out_width() const { return weight.n(); }
  std::size_t slices() const { return weight.p(); }
  bool has_bias() const { return bias.m() == 1; }

  /// @brief Visits the trainable tensors (the transform-domain data).
  template <class F>
  void for_each(F&& f) {
    f("weight", weight.data());
    if (has_bias()) f("bias", bias.data());
  }
};

/// @brief Ŵ, B̂ with entries uniform in [−1/√n, 1/√n] (PyTorch's default for a width-n input).
/// @throws shape_error when a width or p is zero, or L cannot act on length-p tubes.
template <std::floating_point T, real_transform<T> L>
linear_params<T, L> make_linear_params(std::size_t n, std::size_t q, std::size_t p, const L& l, std::uint64_t seed,
                                       bool bias = true) {
  TPROD_EXPECTS(n > 0 && q > 0 && p > 0,
                "nn::make_linear_params: shape " + shape_string(n, q, p) + " must have positive sizes");
  const T a = T(1) / std::sqrt(T(n));
  return {random_transformed<T>(n, q, p, l, a, seed), random_transformed<T>(bias ? 1 : 0, q, p, l, a, seed + 1)};
}

/// @brief A zero parameter set shaped like `p` (the gradient's container), in p's memory space.
template <std::floating_point T, class L, class S>
linear_params<T, L, S> zeros_like(const linear_params<T, L, S>& p) {
  return {zeros_like(p.weight), zeros_like(p.bias)};
}

/// @brief The parameters copied to memory space To (tprod::copy on each tensor; the device side comes with
/// tprod/cuda.hpp).
template <memory_space To, std::floating_point T, class L, class S>
linear_params<T, L, To> copy(const linear_params<T, L, S>& p, To to) {
  return {copy(p.weight, to), copy(p.bias, to)};
}

/// @brief The gradient with respect to the original-domain parameter 𝒲 (with Ŵ = L(𝒲) = 𝒲 ×₃ Z) from the gradient
/// with respect to Ŵ that the layers return: d𝒲 = dŴ ×₃ Zᵀ, the adjoint of L. For an orthogonal Z (the DCT) this is
/// L⁻¹(dŴ); for a general matrix_transform it is not, and this is the one to use (e.g. to update 𝒲 itself or to
/// compare with a framework that stores 𝒲). Under the DCT, d𝒲 = 𝒳ᵀ *_L G (Prop. 22).
template <std::floating_point T, real_transform<T> L>
tensor3<T> original_domain_gradient(const transformed<T, L>& d_hat) {
  tensor3<T> out;
  detail::transform_adjoint(d_hat.transform(), d_hat.data(), out);
  return out;
}

/// @brief What linear_backward needs: the transformed input X̂.
template <std::floating_point T, memory_space S = host_space>
struct linear_saved {
  tensor3<T, dextents3, S> x_hat;
  std::size_t bytes() const { return x_hat.size() * sizeof(T); }
};

/// @brief d𝒳 and the gradients with respect to Ŵ, B̂.
template <std::floating_point T, class L, memory_space S = host_space>
struct linear_grads {
  tensor3<T, dextents3, S> d_input;
  linear_params<T, L, S> d_params;
};

namespace detail {
template <class T, class L, class S>
void check_linear_input(const linear_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x, const char* who) {
  TPROD_EXPECTS(x.n() == prm.in_width() && x.p() == prm.slices(),
                std::string(who) + ": input " + x.shape() + " does not match the weight " + prm.weight.shape() +
                    " (need rows x " + std::to_string(prm.in_width()) + " x " + std::to_string(prm.slices()) + ")");
}
}  // namespace detail

/// @brief 𝒴 = 𝒳 *_L 𝒲 + ℬ = L⁻¹(X̂_k·Ŵ_k + 1·B̂_k), writing into `out` and `saved` (their storage is reused
/// when the shapes repeat), in the memory space of the parameters and 𝒳.
/// @throws shape_error when 𝒳 is not r×n×p for the weight's n and p.
template <std::floating_point T, real_transform<T> L, memory_space S>
void linear_forward(const linear_params<T, L, S>& prm, const tensor3<T, dextents3, S>& x,
                    tensor3<T, dextents3, S>& out, linear_saved<T, S>& saved) {
  detail::check_linear_input(prm, x, "nn::linear_forward");
  tensor3<T, dextents3, S> y_hat;
  detail::to_transform(prm.transform(), x, saved.x_hat);
  detail::slice_linear_forward(saved.x_hat, prm.weight.data(), prm.bias.data(), 0, prm.out_width(), y_hat);
  detail::from_transform(prm.transform(), y_hat, out);
}

/// @brief 𝒴 = 𝒳 *_L 𝒲 + ℬ and the state its backward pass needs.
template <std::floating_point T, real_transform<T> L, memory_space S>
std::pair<tensor3<T, dextents3, S>, linear_saved<T, S>> linear_forward(const linear_params<T, L, S>& prm,
                                                                       const tensor3<T, dextents3, S>& x) {
  std::pair<tensor3<T, dextents3, S>, linear_saved<T, S>> r;
  linear_forward(prm, x, r.first, r.second);
  return r;
}

/// @brief Backward pass: with G = ∂J/∂𝒴 and Ĝ = G ×₃ Z⁻ᵀ, dŴ_k = X̂_kᵀĜ_k, dB̂_k = 1ᵀĜ_k and
/// d𝒳 = (Ĝ_k Ŵ_kᵀ) ×₃ Zᵀ.
/// @throws shape_error when d_out does not have the output's shape.
template <std::floating_point T, real_transform<T> L, memory_space S>
linear_grads<T, L, S> linear_backward(const linear_params<T, L, S>& prm, const linear_saved<T, S>& saved,
                                      const tensor3<T, dextents3, S>& d_out) {
  TPROD_EXPECTS(d_out.m() == saved.x_hat.m() && d_out.n() == prm.out_width() && d_out.p() == prm.slices(),
                "nn::linear_backward: gradient " + d_out.shape() + " does not match the output shape " +
                    shape_string(saved.x_hat.m(), prm.out_width(), prm.slices()));
  linear_grads<T, L, S> g{tensor3<T, dextents3, S>(), zeros_like(prm)};
  tensor3<T, dextents3, S> dy_hat, dx_hat;
  detail::inverse_transform_adjoint(prm.transform(), d_out, dy_hat);
  detail::slice_linear_backward(saved.x_hat, prm.weight.data(), dy_hat, 0, &dx_hat, false, g.d_params.weight.data(),
                                g.d_params.bias.data());
  detail::transform_adjoint(prm.transform(), dx_hat, g.d_input);
  return g;
}

}  // namespace tprod::nn
