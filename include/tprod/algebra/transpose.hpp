// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transpose.hpp
/// @brief The L-transpose Aᵀ = L⁻¹(slice-wise conjugate transpose of Â) (pinned; paper 000 Def. 6).
///
/// It satisfies (A *_L B)ᵀ = Bᵀ *_L Aᵀ. For a real Z it equals the slice-wise (conjugate) transpose in the
/// original domain, because a real Z commutes with transposing slices; under the DFT it is the classic
/// t-transpose (transpose every slice and reverse slices 1…p−1).
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief Transform-domain L-transpose: Âᵀ(:, :, k) = Â(:, :, k)ᴴ.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
auto transpose(const transformed<T, L, E, S>& ahat) {
  using Et = extents3<E::static_extent(1), E::static_extent(0), E::static_extent(2)>;
  transformed<T, L, Et, S> out(Et(ahat.n(), ahat.m(), ahat.p()), ahat.transform(), ahat.window(), uninitialized);
  adjoint_slices(detail::system_of<S>(), ahat.data().dynamic_view(),
                 out.data().dynamic_view());
  return out;
}

/// @brief The L-transpose of an original-domain tensor: n×m×p from m×n×p, in A's memory space.
/// Peak memory beyond A: Aᵀ only under a real Z (dct, identity, real matrix_transform); otherwise Â, Âᵀ and
/// Aᵀ (three blocks of A's size; the DFT's half spectrum about half that each).
template <any_tensor3 A, transform_policy L>
auto transpose(const A& a, const L& policy) {
  using T0 = value_type_of<A>;
  using E = extents_of<A>;
  using S = space_of<A>;
  const auto av = cview(a);
  policy.check_size(av.p());
  if constexpr (std::same_as<typename L::template original_scalar<T0>, T0>) {
    if (policy.is_real()) {  // a real Z commutes with the slice-wise (conjugate) transpose
      tensor3<T0, extents3<E::static_extent(1), E::static_extent(0), E::static_extent(2)>, S> at(av.n(), av.m(), av.p(),
                                                                                              uninitialized);
      adjoint_slices(detail::system_of<S>(), tensor3_view<const T0, dextents3, S>(av),
                     at.dynamic_view());
      return at;
    }
  }
  return inverse_transform(transpose(transform(a, policy)));
}

}  // namespace tprod
