// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file z_gradient.hpp
/// @brief Gradients with respect to the transform matrix Z of a real matrix_transform: of the transform
/// Â = L(A) = A ×₃ Z, of its inverse A = L⁻¹(Â) = Â ×₃ Z⁻¹, and of the L-product C = L⁻¹(L(A) △ L(B)),
/// the inverse's dependence on Z included (what a learned transform trains with, nn/learned_transform.hpp).
///
/// With G = ∂ℓ/∂(output) for a scalar loss ℓ, and every tensor seen as the p×(m·n) matrix of its tubes
/// (U_X, one column per tube), the differentials dÂ = dZ·A and d(Z⁻¹) = −Z⁻¹·dZ·Z⁻¹ give
///   Â = L(A):       ∂ℓ/∂Z = U_G·U_Aᵀ                                   (gradient at the output × input)
///   Y = L⁻¹(Ŷ):     ∂ℓ/∂Z = −Z⁻ᵀ·U_G·U_Ŷᵀ·Z⁻ᵀ = −U_Ĝ·U_Yᵀ,  Ĝ = G ×₃ Z⁻ᵀ   (gradient at the input × output)
///   C = A *_L B:    ∂ℓ/∂Z = U_{dÂ}·U_Aᵀ + U_{dB̂}·U_Bᵀ − U_{dĈ}·U_Cᵀ,
///                   dĈ = G ×₃ Z⁻ᵀ,  dÂ_k = dĈ_k·B̂_kᵀ,  dB̂_k = Â_kᵀ·dĈ_k.
/// Every case is one rule: (a gradient in the transform domain) × (the value in the original domain)ᵀ, with a
/// plus for L and a minus for L⁻¹ (tests/algebra/test_z_gradient.cpp checks each by finite differences).
#include <Eigen/Core>
#include <type_traits>

#include "tprod/core/error.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/core/tensor3_view.hpp"
#include "tprod/algebra/facewise.hpp"
#include "tprod/transform/matrix_transform.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

namespace detail {

/// U_g·U_vᵀ = Σ over tubes of g_tube·v_tubeᵀ (p×p, in double) for two views of one shape, in memory space S. A
/// tensor's elements are the (m·n)×p matrix of its tubes, one row per tube, so this is one product of that matrix's
/// transpose with the other's: Eigen on the host; elsewhere one transpose and one GEMM (the backend's
/// adjoint_slices and facewise tasks), the p×p result copied to the host.
template <class T, memory_space S = host_space>
Eigen::MatrixXd tube_outer(tensor3_view<const T, dextents3, std::type_identity_t<S>> g,
                           tensor3_view<const T, dextents3, std::type_identity_t<S>> v) {
  const std::size_t tubes = g.m() * g.n(), p = g.p();
  if constexpr (std::same_as<S, host_space>) {
    using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    const Eigen::Map<const matrix> ug(g.data(), Eigen::Index(tubes), Eigen::Index(p)),
        uv(v.data(), Eigen::Index(tubes), Eigen::Index(p));
    return (ug.transpose() * uv).template cast<double>();
  } else {
    using view = tensor3_view<const T, dextents3, S>;
    const auto sys = system_of<S>();
    tensor3<T, dextents3, S> gt(p, tubes, 1, uninitialized), out(p, p, 1, uninitialized);
    adjoint_slices(sys, view(g.data(), tubes, p, 1), gt.view());
    facewise(sys, cview(gt), view(v.data(), tubes, p, 1), out.view());
    const tensor3<T> host = copy(out, host_space{});
    return host.slice(0).template cast<double>();
  }
}

template <class T>
void check_same_shape(const tensor3<T>& a, const tensor3<T>& b, const char* who, const char* a_name,
                      const char* b_name) {
  TPROD_EXPECTS(a.m() == b.m() && a.n() == b.n() && a.p() == b.p(),
                std::string(who) + ": " + a_name + " " + a.shape() + " and " + b_name + " " + b.shape() +
                    " must have the same shape");
}

}  // namespace detail

/// @brief ∂ℓ/∂Z of Â = L(A) = A ×₃ Z, given g = ∂ℓ/∂Â: Σ over tubes of ĝ·aᵀ (p×p).
/// @throws shape_error when A and g differ in shape.
template <std::floating_point T>
Eigen::MatrixXd transform_z_gradient(const tensor3<T>& a, const tensor3<T>& g) {
  detail::check_same_shape(a, g, "transform_z_gradient", "A", "the gradient");
  return detail::tube_outer<T>(g.view(), a.view());
}

/// @brief ∂ℓ/∂Z of Y = L⁻¹(Ŷ) = Ŷ ×₃ Z⁻¹, given g = ∂ℓ/∂Y: −Z⁻ᵀ·(Σ g·ŷᵀ)·Z⁻ᵀ.
/// @throws shape_error when Ŷ and g differ in shape or Z is not p×p.
template <std::floating_point T, class S>
Eigen::MatrixXd inverse_transform_z_gradient(const matrix_transform<S>& l, const tensor3<T>& y_hat,
                                             const tensor3<T>& g) {
  static_assert(!is_complex_v<S>, "inverse_transform_z_gradient: Z must be real");
  detail::check_same_shape(y_hat, g, "inverse_transform_z_gradient", "Y-hat", "the gradient");
  l.check_size(y_hat.p());
  const Eigen::MatrixXd zit = l.inverse_matrix().transpose();
  return -zit * detail::tube_outer<T>(g.view(), y_hat.view()) * zit;
}

/// @brief ∂ℓ/∂Z of C = A *_L B = L⁻¹(L(A) △ L(B)), given g = ∂ℓ/∂C (A: m×n×p, B: n×q×p, g: m×q×p).
/// @throws shape_error when the shapes do not chain or Z is not p×p.
template <std::floating_point T, class S>
Eigen::MatrixXd product_z_gradient(const matrix_transform<S>& l, const tensor3<T>& a, const tensor3<T>& b,
                                   const tensor3<T>& g) {
  static_assert(!is_complex_v<S>, "product_z_gradient: Z must be real");
  TPROD_EXPECTS(a.n() == b.m() && a.p() == b.p() && g.m() == a.m() && g.n() == b.n() && g.p() == a.p(),
                "product_z_gradient: A " + a.shape() + ", B " + b.shape() + " and the gradient " + g.shape() +
                    " do not chain (need m x n x p, n x q x p and m x q x p)");
  l.check_size(a.p());
  const auto a_hat = transform(a, l), b_hat = transform(b, l);
  const auto c_hat = a_hat * b_hat;
  const tensor3<T> c = inverse_transform(c_hat);
  // dĈ = G ×₃ Z⁻ᵀ: the transform whose matrix is Z⁻ᵀ (as well conditioned as Z, which was accepted).
  const matrix_transform<double> z_inv_t(Eigen::MatrixXd(l.inverse_matrix().transpose()));
  const tensor3<T> dc_hat = transform(g, z_inv_t).data();
  tensor3<T> da_hat(a.m(), a.n(), a.p()), db_hat(b.m(), b.n(), b.p());
  for (std::size_t k = 0; k < a.p(); ++k) {
    da_hat.slice(k).noalias() = dc_hat.slice(k) * b_hat.slice(k).transpose();
    db_hat.slice(k).noalias() = a_hat.slice(k).transpose() * dc_hat.slice(k);
  }
  return detail::tube_outer<T>(da_hat.view(), a.view()) + detail::tube_outer<T>(db_hat.view(), b.view()) -
         detail::tube_outer<T>(dc_hat.view(), c.view());
}

}  // namespace tprod
