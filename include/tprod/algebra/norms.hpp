// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file norms.hpp
/// @brief Frobenius norm and inner product, in the original and the transform domain.
///
/// ‖A‖_F = √(Σ|a_ijk|²), ⟨A, B⟩ = Σ conj(a_ijk)·b_ijk. In the transform domain the norm and inner product are
/// those of the full p-slice tensor Â (stored slices counted with their slice_weight). For a Z that is a
/// multiple of a unitary matrix, ‖A‖²_F = c·‖Â‖²_F with c = L.norm_scale(p) (1 for dct, 1/p for dft).
#include <cmath>
#include <vector>

#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

namespace detail {
/// @brief Σ_k w_k·s_k: the squared Frobenius norm of the full p-slice tensor from its stored slices' squared norms
/// s_k, weight_of(k) the stored slice k's slice_weight.
template <class Weight>
double weighted_squares_sum(const std::vector<double>& squares, Weight&& weight_of) {
  double sum = 0;
  for (std::size_t k = 0; k < squares.size(); ++k) sum += weight_of(k) * squares[k];
  return sum;
}

/// @brief Σ over the full p-slice tensor of per-slice inner products, from the stored slices' dots: a stored slice
/// standing for itself and its conjugate partner (weight_of(k) = 2) adds s + conj(s) = 2·Re(s).
template <class D, class Weight>
D weighted_dots_sum(const std::vector<D>& dots, Weight&& weight_of) {
  D sum{};
  for (std::size_t k = 0; k < dots.size(); ++k) {
    if (weight_of(k) == 2.0) sum += D(2 * std::real(dots[k])); else sum += dots[k];
  }
  return sum;
}
}  // namespace detail

/// @brief ‖A‖_F, in A's memory space.
template <any_tensor3 A>
real_t<value_type_of<A>> frobenius_norm(const A& a) {
  using S = space_of<A>;
  using T = value_type_of<A>;
  return frobenius_norm(detail::system_of<S>(),
                        tensor3_view<const T, dextents3, S>(cview(a)));
}

/// @brief ⟨A, B⟩ = Σ conj(a_ijk)·b_ijk. @throws shape_error when the shapes differ.
template <any_tensor3 A, any_tensor3 B>
  requires std::same_as<value_type_of<A>, value_type_of<B>>
value_type_of<A> inner(const A& a, const B& b) {
  using S = space_of<A>;
  using T = value_type_of<A>;
  detail::static_check_same_space<S, space_of<B>>();
  const auto av = cview(a);
  const auto bv = cview(b);
  TPROD_EXPECTS(av.extents() == bv.extents(), "inner: shapes " + av.shape() + " and " + bv.shape() + " differ");
  return dot(detail::system_of<S>(), tensor3_view<const T, dextents3, S>(av),
             tensor3_view<const T, dextents3, S>(bv));
}

/// @brief ‖Â‖_F over all p transform-domain slices: √(Σ_k w_k‖Â(:, :, k)‖²_F).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
real_t<T> frobenius_norm(const transformed<T, L, E, S>& ahat) {
  const std::vector<double> squares =
      slice_squared_norms(detail::system_of<S>(), ahat.data().dynamic_view());
  const double sum = detail::weighted_squares_sum(squares, [&](std::size_t k) { return ahat.slice_weight(k); });
  return real_t<T>(std::sqrt(ahat.window().sum(sum)));  // over every holder's slices
}

/// @brief ⟨Â, B̂⟩ = Σ_k w_k⟨Â(:, :, k), B̂(:, :, k)⟩ over all p slices (real for real data under the DFT,
/// where a weighted pair k, p−k contributes 2·Re).
template <scalar T, transform_policy L, extents3_type E1, extents3_type E2, memory_space S>
auto inner(const transformed<T, L, E1, S>& a, const transformed<T, L, E2, S>& b) {
  a.check_same(b, "inner");
  using D = typename L::template domain_scalar<T>;
  const std::vector<D> dots =
      slice_dots(detail::system_of<S>(), a.data().dynamic_view(), b.data().dynamic_view());
  return a.window().sum(detail::weighted_dots_sum(dots, [&](std::size_t k) { return a.slice_weight(k); }));
}

}  // namespace tprod
