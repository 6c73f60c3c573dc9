#pragma once
/// @file mode_product.hpp
/// @brief Mode-n products of a tensor3 with a matrix (Kolda–Bader): (A ×ₙ U) multiplies every mode-n fiber by U.
///
///   (A ×₁ U)(:, :, k) = U·A(:, :, k)        U: r×m → r×n×p
///   (A ×₂ U)(:, :, k) = A(:, :, k)·Uᵀ       U: r×n → m×r×p
///   A ×₃ U = fold(A_(tubes)·Uᵀ)             U: r×p → m×n×r   (the L-transform is A ×₃ Z)
/// Computed where A lives, by the backend's multiply_mode task (Eigen slice GEMMs and the tube GEMM on the host,
/// cuBLAS on the device); U is a host matrix either way.
#include <Eigen/Core>

#include "tprod/backend/cpu/mode_product.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod {

/// @brief A ×_Mode U for Mode ∈ {1, 2, 3}; the result's scalar is promote_t of A's and U's, in A's memory space.
/// @throws shape_error unless U has as many columns as A's mode-Mode extent.
template <int Mode, any_tensor3 A, class Derived>
auto mode_product(const A& a, const Eigen::MatrixBase<Derived>& u) {
  static_assert(Mode >= 1 && Mode <= 3, "tprod::mode_product: Mode must be 1, 2 or 3 for a third-order tensor");
  using T = promote_t<value_type_of<A>, typename Derived::Scalar>;
  using E = extents_of<A>;
  using S = space_of<A>;
  using Er = extents3<Mode == 1 ? dynamic_extent : E::static_extent(0), Mode == 2 ? dynamic_extent : E::static_extent(1),
                      Mode == 3 ? dynamic_extent : E::static_extent(2)>;
  const auto av = cview(a);
  const std::size_t extent = Mode == 1 ? av.m() : Mode == 2 ? av.n() : av.p();
  TPROD_EXPECTS(std::size_t(u.cols()) == extent,
                "mode_product: U is " + std::to_string(u.rows()) + "x" + std::to_string(u.cols()) + " but mode " +
                    std::to_string(Mode) + " of the " + av.shape() + " tensor has extent " + std::to_string(extent));
  const std::size_t r = std::size_t(u.rows());
  tensor3<T, Er, S> out(Mode == 1 ? r : av.m(), Mode == 2 ? r : av.n(), Mode == 3 ? r : av.p(), uninitialized);
  const auto sys = detail::system_of<S>();
  const detail::dense_matrix<T> ut = u.template cast<T>();
  if constexpr (std::same_as<value_type_of<A>, T>) {
    multiply_mode(sys, Mode, tensor3_view<const T, dextents3, S>(av), ut, out.dynamic_view());
  } else {
    const tensor3<T, dextents3, S> promoted(av);  // A in U's scalar
    multiply_mode(sys, Mode, cview(promoted), ut, out.dynamic_view());
  }
  return out;
}

}  // namespace tprod
