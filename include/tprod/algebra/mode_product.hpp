// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode_product.hpp
/// @brief Mode-n products of a tensor3 with a matrix (Kolda–Bader): (A ×ₙ U) multiplies every mode-n fiber by U.
/// Modes count from 0, as everywhere in tprod's code (decomp's mode_product of order-N tensors too): the papers'
/// ×₁, ×₂, ×₃ are modes 0, 1, 2.
///
///   mode 0, A ×₁ U: out(:, :, k) = U·A(:, :, k)    U: r×m → r×n×p
///   mode 1, A ×₂ U: out(:, :, k) = A(:, :, k)·Uᵀ   U: r×n → m×r×p
///   mode 2, A ×₃ U: fold(A_(tubes)·Uᵀ)             U: r×p → m×n×r   (the L-transform is mode_product(A, Z, 2))
/// Computed where A lives, by the backend's multiply_mode task (Eigen slice GEMMs and the tube GEMM on the host,
/// cuBLAS on the device); U is a host matrix either way.
#include <Eigen/Core>

#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod {

/// @brief A ×_mode U for mode ∈ {0, 1, 2}; the result's scalar is promote_t of A's and U's, in A's memory space.
/// @throws shape_error for a mode above 2, or unless U has as many columns as A's extent in that mode.
template <any_tensor3 A, class Derived>
tensor3<promote_t<value_type_of<A>, typename Derived::Scalar>, dextents3, space_of<A>> mode_product(
    const A& a, const Eigen::MatrixBase<Derived>& u, std::size_t mode) {
  using T = promote_t<value_type_of<A>, typename Derived::Scalar>;
  using S = space_of<A>;
  const auto av = cview(a);
  TPROD_EXPECTS(mode <= 2, "mode_product: mode " + std::to_string(mode) + " of the " + av.shape() +
                               " tensor: a third-order tensor has modes 0, 1 and 2");
  const std::size_t extent = mode == 0 ? av.m() : mode == 1 ? av.n() : av.p();
  TPROD_EXPECTS(std::size_t(u.cols()) == extent,
                "mode_product: U is " + std::to_string(u.rows()) + "x" + std::to_string(u.cols()) + " but mode " +
                    std::to_string(mode) + " of the " + av.shape() + " tensor has extent " + std::to_string(extent));
  const std::size_t r = std::size_t(u.rows());
  tensor3<T, dextents3, S> out(mode == 0 ? r : av.m(), mode == 1 ? r : av.n(), mode == 2 ? r : av.p(), uninitialized);
  const auto sys = detail::system_of<S>();
  const detail::dense_matrix<T> ut = u.template cast<T>();
  if constexpr (std::same_as<value_type_of<A>, T>) {
    multiply_mode(sys, int(mode), tensor3_view<const T, dextents3, S>(av), ut, out.view());
  } else {
    const tensor3<T, dextents3, S> promoted(av);  // A in U's scalar
    multiply_mode(sys, int(mode), cview(promoted), ut, out.view());
  }
  return out;
}

}  // namespace tprod
