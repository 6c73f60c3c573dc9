// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file xtensor_interop.hpp
/// @brief A user's xtensor arrays in tprod and tprod's tensors as xtensor arrays: any `xt::xarray` or
/// `xt::xtensor` of either layout, or an unevaluated xtensor expression, of float or double.
///
/// - The decompositions (`hosvd`, `st_hosvd`, `hooi`, `tt_svd`, `cp_als`, `block_term_als`) take any such
///   expression. tprod's own `ndtensor<T>` (column-major `xt::xarray`) is used as it is; anything else, a row-major
///   array, an `xt::xtensor<T, N>`, a view or an expression, is evaluated once into a column-major copy, since the
///   unfoldings read the first index fastest.
/// - `view_of(x)` is a `tensor3_view` of a column-major container of order 3 (`ndtensor<T>`,
///   `xt::xtensor<T, 3, column_major>`): the algebra then runs on the user's memory, without a copy (tprod's
///   storage order is that of a column-major (m, n, p) array, offset i + m·(j + n·k)). A row-major array has
///   another order and cannot be viewed: `to_tensor3(x)` copies any expression of order 3.
/// - `as_xtensor(a)` is an xtensor view of a `tensor3` or `tensor3_view` on the host, of shape (m, n, p) and
///   column-major, without a copy: xtensor's functions then run on tprod's memory.
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/ndtensor.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"

// xtensor 0.26 moved its headers into folders; 0.24 and 0.25 have them flat.
#if __has_include(<xtensor/containers/xadapt.hpp>)
#include <xtensor/containers/xadapt.hpp>
#include <xtensor/core/xexpression.hpp>
#else
#include <xtensor/xadapt.hpp>
#include <xtensor/xexpression.hpp>
#endif

namespace tprod {

/// @brief An xtensor expression (container, view or unevaluated expression) of float or double that is not
/// tprod's ndtensor itself (which the decompositions take directly).
template <class E>
concept xtensor_input = xt::is_xexpression<std::remove_cvref_t<E>>::value &&
                        real_scalar<typename std::remove_cvref_t<E>::value_type> &&
                        !std::same_as<std::remove_cvref_t<E>, ndtensor<typename std::remove_cvref_t<E>::value_type>>;

/// @brief x evaluated into tprod's column-major ndtensor (a copy).
template <xtensor_input E>
ndtensor<typename E::value_type> to_ndtensor(const xt::xexpression<E>& x) {
  return ndtensor<typename E::value_type>(x.derived_cast());
}

/// @brief hosvd (tucker.hpp) of an xtensor expression, through its column-major copy.
template <xtensor_input E>
auto hosvd(const xt::xexpression<E>& x, const tucker_options& options = {}) {
  return hosvd(to_ndtensor(x), options);
}
/// @brief st_hosvd (tucker.hpp) of an xtensor expression, through its column-major copy.
template <xtensor_input E>
auto st_hosvd(const xt::xexpression<E>& x, const tucker_options& options = {}) {
  return st_hosvd(to_ndtensor(x), options);
}
/// @brief hooi (tucker.hpp) of an xtensor expression, through its column-major copy.
template <xtensor_input E>
auto hooi(const xt::xexpression<E>& x, const tucker_options& options = {}) {
  return hooi(to_ndtensor(x), options);
}
/// @brief tt_svd (tensor_train.hpp) of an xtensor expression, through its column-major copy.
template <xtensor_input E>
auto tt_svd(const xt::xexpression<E>& x, const tt_options& options = {}) {
  return tt_svd(to_ndtensor(x), options);
}
/// @brief cp_als (cp.hpp) of an xtensor expression, through its column-major copy.
template <xtensor_input E>
auto cp_als(const xt::xexpression<E>& x, std::size_t rank, const block_term_options& options = {}) {
  return cp_als(to_ndtensor(x), rank, options);
}
/// @brief block_term_als (block_term.hpp) of an xtensor expression, through its column-major copy.
template <xtensor_input E>
auto block_term_als(const xt::xexpression<E>& x, std::size_t terms, const std::vector<std::size_t>& ranks,
                    const block_term_options& options = {}) {
  return block_term_als(to_ndtensor(x), terms, ranks, options);
}

namespace detail {
template <class X>
void expect_order3(const X& x, const char* where) {
  TPROD_EXPECTS(x.dimension() == 3, std::string(where) + ": an xtensor array of shape " +
                                        shape_string(nd_shape(x.shape().begin(), x.shape().end())) +
                                        " is not of order 3");
}
}  // namespace detail

/// @brief A tensor3_view of a column-major xtensor container of order 3 (ndtensor<T>, xt::xtensor<T, 3,
/// column_major>), on its memory: no copy. A row-major container does not compile (its order is not tprod's).
/// @throws shape_error when x is not of order 3.
template <class C>
  requires(std::remove_cvref_t<C>::static_layout == xt::layout_type::column_major)
auto view_of(C& x) {
  detail::expect_order3(x, "view_of");
  using element = std::remove_reference_t<decltype(*x.data())>;
  return tensor3_view<element>(x.data(), x.shape()[0], x.shape()[1], x.shape()[2]);
}

/// @brief A tensor3 holding a copy of any xtensor expression of order 3 (either layout).
/// @throws shape_error when x is not of order 3.
template <class E>
  requires xt::is_xexpression<E>::value
tensor3<typename E::value_type> to_tensor3(const xt::xexpression<E>& x) {
  const ndtensor<typename E::value_type> column_major(x.derived_cast());
  return to_tensor3(column_major);
}

/// @brief An xtensor view of a host tensor3 (or tensor3_view), shape (m, n, p), column-major, on its memory: no
/// copy. It stays valid while the tensor's memory does.
template <host_tensor3 X>
auto as_xtensor(X& a) {
  const std::array<std::size_t, 3> shape{a.m(), a.n(), a.p()};
  return xt::adapt<xt::layout_type::column_major>(a.data(), a.size(), xt::no_ownership(), shape);
}

}  // namespace tprod
