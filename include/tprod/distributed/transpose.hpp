// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transpose.hpp
/// @brief The L-transpose of distributed tensors: Âᵀ(:, :, k) = Â(:, :, k)ᴴ on the owned slices (no communication),
/// and Aᵀ = L⁻¹(L(A)ᵀ) (two all-to-alls: the tubes of an n×m tensor belong to other ranks than those of m×n).
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/distributed/transformed.hpp"

namespace tprod::distributed {

/// @brief Transform-domain L-transpose, n×m×p from m×n×p: local.
template <scalar T, transform_policy L>
transformed<T, L> transpose(const transformed<T, L>& ahat) {
  transformed<T, L> out(ahat.comm(), ahat.n(), ahat.m(), ahat.p(), ahat.transform(), uninitialized);
  adjoint_slices(tprod::detail::system_of<host_space>(), ahat.local().dynamic_view(), out.local().dynamic_view());
  return out;
}

/// @brief Collective: the L-transpose Aᵀ, n×m×p, distributed by tubes.
template <scalar T, transform_policy L>
auto transpose(const tensor3<T>& a, const L& policy) {
  return inverse_transform(transpose(transform(a, policy)));
}

}  // namespace tprod::distributed
