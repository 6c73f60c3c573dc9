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

namespace detail {
/// Work follows the data: an empty tensor (whose p may be up to 2^63 − 1) has nothing to transpose.
template <class T>
void adjoint_slices_into(tensor3_view<const T> a, tensor3_view<T> at) {
  if (a.size() == 0) return;
  for (std::size_t k = 0; k < a.p(); ++k) at.slice(k) = a.slice(k).adjoint();
}
}  // namespace detail

/// @brief Transform-domain L-transpose: Âᵀ(:, :, k) = Â(:, :, k)ᴴ.
template <scalar T, transform_policy L, extents3_type E>
auto transpose(const transformed<T, L, E>& ahat) {
  using Et = extents3<E::static_extent(1), E::static_extent(0), E::static_extent(2)>;
  transformed<T, L, Et> out(Et(ahat.n(), ahat.m(), ahat.p()), ahat.transform(), uninitialized);
  detail::adjoint_slices_into<typename L::template domain_scalar<T>>(ahat.data().view(), out.data().view());
  return out;
}

/// @brief The L-transpose of an original-domain tensor: n×m×p from m×n×p.
/// Peak memory beyond A: Aᵀ only under a real Z (dct, identity, real matrix_transform); otherwise Â, Âᵀ and
/// Aᵀ (three blocks of A's size; the DFT's half spectrum about half that each).
template <host_tensor3 A, transform_policy L>
auto transpose(const A& a, const L& policy) {
  using T0 = value_type_of<A>;
  using E = extents_of<A>;
  const auto av = cview(a);
  policy.check_size(av.p());
  if constexpr (std::same_as<typename L::template original_scalar<T0>, T0>) {
    if (policy.is_real()) {  // a real Z commutes with the slice-wise (conjugate) transpose
      tensor3<T0, extents3<E::static_extent(1), E::static_extent(0), E::static_extent(2)>> at(av.n(), av.m(), av.p(), uninitialized);
      detail::adjoint_slices_into<T0>(av, at.view());
      return at;
    }
  }
  return inverse_transform(transpose(transform(a, policy)));
}

}  // namespace tprod
