// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file product.hpp
/// @brief The L-product of distributed tensors: Â·B̂ on the owned slices (no communication), and
/// A *_L B = L⁻¹(L(A)·L(B)) with two all-to-alls (A and B forward together, C back).
#include "tprod/algebra/facewise.hpp"
#include "tprod/distributed/transformed.hpp"

namespace tprod::distributed {

/// @brief Transform-domain L-product (Â·B̂)(:, :, k) = Â(:, :, k)·B̂(:, :, k): local, on each rank's own slices.
/// @throws shape_error (on every rank alike) unless A is m×l×p and B l×n×p on one communicator and transform.
template <scalar T, transform_policy L>
transformed<T, L> operator*(const transformed<T, L>& a, const transformed<T, L>& b) {
  a.check_compatible(b, "*");
  tprod::detail::check_product_shapes("distributed L-product", a.m(), a.n(), a.p(), b.m(), b.n(), b.p());
  transformed<T, L> c(a.comm(), a.m(), b.n(), a.p(), a.transform(), uninitialized);
  c.local() = tprod::facewise(a.local(), b.local());
  return c;
}

/// @brief Collective: C = A *_L B, distributed by tubes like its operands: the local transforms of A and B, one
/// all-to-all carrying both to the slice layout, the local facewise product, one all-to-all back.
/// @throws shape_error (on every rank alike) unless A is m×l×p and B l×n×p on one communicator.
template <scalar T, transform_policy L>
auto product(const tensor3<T>& a, const tensor3<T>& b, const L& policy) {
  if (!(a.comm() == b.comm()))
    throw shape_error("distributed::product: the operands live on different communicators");
  tprod::detail::check_product_shapes("distributed::product", a.m(), a.n(), a.p(), b.m(), b.n(), b.p());
  const auto hats = detail::transform_together<T>({&a, &b}, policy);
  return inverse_transform(hats[0] * hats[1]);
}

}  // namespace tprod::distributed
