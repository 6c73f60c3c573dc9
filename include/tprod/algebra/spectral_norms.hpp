// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file spectral_norms.hpp
/// @brief The spectral and nuclear norms under an L-product, from the singular values of the transform-domain
/// slices (computed where the tensor lives; the norms are host values).
///
/// - spectral: ‖A‖ = max_k σ_1(Â_k), the operator norm of X ↦ A *_L X on (𝔽^{n×s×p}, ‖·‖_F) when Z is a multiple
///   of a unitary matrix (dct, dft, identity, orthogonal Z).
/// - nuclear: ‖A‖_* = c·Σ_k w_k ‖Â_k‖_*, with c = norm_scale(p) (1 for dct, 1/p for the DFT, the tensor nuclear
///   norm of the t-SVD literature) and w_k the slice weights; for such Z it is the dual of the spectral norm
///   under ⟨A, B⟩ = Σ A(i,j,k)·conj(B(i,j,k)). For a Z that is not a multiple of a unitary matrix, c = 1.
#include "tprod/algebra/detail/slice_singular_values.hpp"

namespace tprod {

/// @brief max_k σ_1(Â_k) for a tensor given in the transform domain.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
real_t<T> spectral_norm(const transformed<T, L, E, S>& ahat) {
  return detail::slice_singular_values(ahat).maxCoeff();
}
/// @brief The L-spectral norm max_k σ_1(Â_k), Â = L(A).
template <any_tensor3 A, transform_policy L>
real_t<value_type_of<A>> spectral_norm(const A& a, const L& policy) {
  return spectral_norm(transform(a, policy));
}

/// @brief c·Σ_k w_k Σ_i σ_i(Â_k) for a tensor given in the transform domain.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
real_t<T> nuclear_norm(const transformed<T, L, E, S>& ahat) {
  const auto sigma = detail::slice_singular_values(ahat);  // every stored slice's, from every holder
  double sum = 0;
  for (Eigen::Index k = 0; k < sigma.cols(); ++k)
    sum += ahat.transform().template slice_weight<T>(std::size_t(k), ahat.p()) *
           double(sigma.col(k).template cast<double>().sum());
  return real_t<T>(ahat.transform().norm_scale(ahat.p()).value_or(1.0) * sum);
}
/// @brief The L-nuclear norm c·Σ_k w_k ‖Â_k‖_*, Â = L(A).
template <any_tensor3 A, transform_policy L>
real_t<value_type_of<A>> nuclear_norm(const A& a, const L& policy) {
  return nuclear_norm(transform(a, policy));
}

}  // namespace tprod
