// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file facewise.hpp
/// @brief The facewise product C = A △ B, C(:, :, k) = A(:, :, k)·B(:, :, k), in either domain.
///
/// In the transform domain the facewise product *is* the L-product: L(A *_L B) = L(A) △ L(B). So
/// `Ahat * Bhat` on transformed tensors is the L-product kept in the transform domain.
#include <string>

#include "tprod/backend/kernels/facewise.hpp"
#include "tprod/core/execution.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

namespace detail {

/// @brief The extents of A △ B (m×l×p times l×n×p → m×n×p), fixed wherever either operand fixes them.
template <class E1, class E2>
using product_extents = extents3<E1::static_extent(0), E2::static_extent(1),
                                 common_extent(E1::static_extent(2), E2::static_extent(2))>;

template <class E1, class E2>
constexpr void static_check_product() {
  static_assert(extents_compatible(E1::static_extent(1), E2::static_extent(0)),
                "tprod: in A*B the left operand's fixed column count must equal the right operand's fixed row count");
  static_assert(extents_compatible(E1::static_extent(2), E2::static_extent(2)),
                "tprod: in A*B both operands must have the same fixed number of tubes p");
}

/// @throws shape_error unless A is m×l×p and B is l×n×p.
inline void check_product_shapes(const char* what, std::size_t am, std::size_t an, std::size_t ap, std::size_t bm,
                                 std::size_t bn, std::size_t bp) {
  const std::string shapes = std::string(what) + ": A is " + shape_string(am, an, ap) + " and B is " +
                             shape_string(bm, bn, bp) + "; ";
  TPROD_EXPECTS(an == bm, shapes + "A's columns (" + std::to_string(an) + ") must equal B's rows (" +
                              std::to_string(bm) + ")");
  TPROD_EXPECTS(ap == bp, shapes + "A's tubes (p = " + std::to_string(ap) + ") must equal B's tubes (p = " +
                              std::to_string(bp) + ")");
}

}  // namespace detail

/// @brief Original-domain facewise product C(:, :, k) = A(:, :, k)·B(:, :, k) (the L-product under the identity),
/// in the operands' memory space, run as `ex` says.
/// @throws shape_error unless A is m×l×p and B is l×n×p.
template <any_tensor3 A, any_tensor3 B>
  requires std::same_as<value_type_of<A>, value_type_of<B>>
auto facewise(const detail::execution_of<space_of<A>>& ex, const A& a, const B& b) {
  using E1 = extents_of<A>;
  using E2 = extents_of<B>;
  using S = space_of<A>;
  detail::static_check_same_space<S, space_of<B>>();
  detail::static_check_product<E1, E2>();
  if constexpr (std::same_as<S, space_of<B>>) {  // else only the sentence above
    const detail::execution_scope_of<S> scope(ex);
    const auto av = cview(a);
    const auto bv = cview(b);
    detail::check_product_shapes("facewise", av.m(), av.n(), av.p(), bv.m(), bv.n(), bv.p());
    tensor3<value_type_of<A>, detail::product_extents<E1, E2>, S> c(av.m(), bv.n(), av.p(), uninitialized);
    using T = value_type_of<A>;
    facewise(detail::system_of<S>(ex), tensor3_view<const T, dextents3, S>(av),
             tensor3_view<const T, dextents3, S>(bv), c.dynamic_view());
    return c;
  }
}

/// @brief facewise(ex, a, b) on the calling thread's default execution.
template <any_tensor3 A, any_tensor3 B>
  requires std::same_as<value_type_of<A>, value_type_of<B>>
auto facewise(const A& a, const B& b) {
  return facewise(detail::default_execution_of<space_of<A>>(), a, b);
}

/// @brief Transform-domain L-product: (Â·B̂)(:, :, k) = Â(:, :, k)·B̂(:, :, k); stays in the transform domain.
/// @throws shape_error on mismatched shapes or different transforms (matrix_transforms with different Z).
template <scalar T, transform_policy L, extents3_type E1, extents3_type E2, memory_space S1, memory_space S2>
auto operator*(const transformed<T, L, E1, S1>& a, const transformed<T, L, E2, S2>& b) {
  detail::static_check_same_space<S1, S2>();
  detail::static_check_product<E1, E2>();
  detail::check_product_shapes("L-product", a.m(), a.n(), a.p(), b.m(), b.n(), b.p());
  a.check_same_transform(b, "*");
  using E = detail::product_extents<E1, E2>;
  transformed<T, L, E, S1> c(E(a.m(), b.n(), a.p()), a.transform(), a.window(), uninitialized);
  facewise(detail::system_of<S1>(), a.data().dynamic_view(),
           b.data().dynamic_view(), c.data().dynamic_view());
  return c;
}

}  // namespace tprod
