#pragma once
/// @file mode_product.hpp
/// @brief Mode-n products of a tensor3 with a matrix (Kolda–Bader): (A ×ₙ U) multiplies every mode-n fiber by U.
///
///   (A ×₁ U)(:, :, k) = U·A(:, :, k)        U: r×m → r×n×p
///   (A ×₂ U)(:, :, k) = A(:, :, k)·Uᵀ       U: r×n → m×r×p
///   A ×₃ U = fold(A_(tubes)·Uᵀ)             U: r×p → m×n×r   (the L-transform is A ×₃ Z)
#include <Eigen/Core>

#include "tprod/core/tensor3.hpp"
#include "tprod/backend/cpu/tube_gemm.hpp"

namespace tprod {

/// @brief A ×_Mode U for Mode ∈ {1, 2, 3}; the result's scalar is promote_t of A's and U's.
/// @throws shape_error unless U has as many columns as A's mode-Mode extent.
template <int Mode, host_tensor3 A, class Derived>
auto mode_product(const A& a, const Eigen::MatrixBase<Derived>& u) {
  static_assert(Mode >= 1 && Mode <= 3, "tprod::mode_product: Mode must be 1, 2 or 3 for a third-order tensor");
  using T = promote_t<value_type_of<A>, typename Derived::Scalar>;
  using E = extents_of<A>;
  using Er = extents3<Mode == 1 ? dynamic_extent : E::static_extent(0), Mode == 2 ? dynamic_extent : E::static_extent(1),
                      Mode == 3 ? dynamic_extent : E::static_extent(2)>;
  const auto av = cview(a);
  const std::size_t extent = Mode == 1 ? av.m() : Mode == 2 ? av.n() : av.p();
  TPROD_EXPECTS(std::size_t(u.cols()) == extent,
                "mode_product: U is " + std::to_string(u.rows()) + "x" + std::to_string(u.cols()) + " but mode " +
                    std::to_string(Mode) + " of the " + av.shape() + " tensor has extent " + std::to_string(extent));
  const auto at = tensor3<T, E>(av);  // promoted copy (a plain copy when the scalars agree)
  const detail::dense_matrix<T> ut = u.template cast<T>();
  const std::size_t r = std::size_t(u.rows());
  tensor3<T, Er> out(Mode == 1 ? r : av.m(), Mode == 2 ? r : av.n(), Mode == 3 ? r : av.p(), uninitialized);
  const std::size_t threads = default_execution().thread_count();
  if constexpr (Mode == 3) {
    backend::cpu::apply_along_tubes(tensor3_view<const T>(at.view()), detail::dense_matrix<T>(ut.transpose()),
                                    tensor3_view<T>(out.view()), threads);
  } else {
    backend::cpu::parallel_for(av.p(), out.size() < (std::size_t(1) << 15) ? 1 : threads, [&](std::size_t k) {
      if constexpr (Mode == 1) out.slice(k).noalias() = ut * at.slice(k);
      else out.slice(k).noalias() = at.slice(k) * ut.transpose();
    });
  }
  return out;
}

}  // namespace tprod
