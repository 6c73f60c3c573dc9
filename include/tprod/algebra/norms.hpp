#pragma once
/// @file norms.hpp
/// @brief Frobenius norm and inner product, in the original and the transform domain.
///
/// ‖A‖_F = √(Σ|a_ijk|²), ⟨A, B⟩ = Σ conj(a_ijk)·b_ijk. In the transform domain the norm and inner product are
/// those of the full p-slice tensor Â (stored slices counted with their slice_weight). For a Z that is a
/// multiple of a unitary matrix, ‖A‖²_F = c·‖Â‖²_F with c = L.norm_scale(p) (1 for dct, 1/p for dft).
#include <cmath>

#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief ‖A‖_F.
template <host_tensor3 A>
real_t<value_type_of<A>> frobenius_norm(const A& a) {
  const auto v = cview(a);
  return Eigen::Map<const Eigen::Matrix<value_type_of<A>, Eigen::Dynamic, 1>>(v.data(), Eigen::Index(v.size()))
      .norm();
}

/// @brief ⟨A, B⟩ = Σ conj(a_ijk)·b_ijk. @throws shape_error when the shapes differ.
template <host_tensor3 A, host_tensor3 B>
  requires std::same_as<value_type_of<A>, value_type_of<B>>
value_type_of<A> inner(const A& a, const B& b) {
  using T = value_type_of<A>;
  using vec = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
  const auto av = cview(a);
  const auto bv = cview(b);
  TPROD_EXPECTS(av.extents() == bv.extents(), "inner: shapes " + av.shape() + " and " + bv.shape() + " differ");
  return vec(av.data(), Eigen::Index(av.size())).dot(vec(bv.data(), Eigen::Index(bv.size())));
}

/// @brief ‖Â‖_F over all p transform-domain slices: √(Σ_k w_k‖Â(:, :, k)‖²_F).
template <scalar T, transform_policy L, extents3_type E>
real_t<T> frobenius_norm(const transformed<T, L, E>& ahat) {
  double sum = 0;
  for (std::size_t k = 0; k < ahat.stored_slices(); ++k) sum += ahat.slice_weight(k) * ahat.slice(k).squaredNorm();
  return real_t<T>(std::sqrt(sum));
}

/// @brief ⟨Â, B̂⟩ = Σ_k w_k⟨Â(:, :, k), B̂(:, :, k)⟩ over all p slices (real for real data under the DFT,
/// where a weighted pair k, p−k contributes 2·Re).
template <scalar T, transform_policy L, extents3_type E1, extents3_type E2>
auto inner(const transformed<T, L, E1>& a, const transformed<T, L, E2>& b) {
  a.check_same(b, "inner");
  using D = typename L::template domain_scalar<T>;
  D sum{};
  for (std::size_t k = 0; k < a.stored_slices(); ++k) {
    const D s = (a.slice(k).array().conjugate() * b.slice(k).array()).sum();
    // A stored slice standing for itself and its conjugate partner adds s + conj(s) = 2·Re(s).
    if (a.slice_weight(k) == 2.0) sum += D(2 * std::real(s)); else sum += s;
  }
  return sum;
}

}  // namespace tprod
