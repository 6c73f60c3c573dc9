#pragma once
/// @file slice_factorization.hpp
/// @brief The kernel contract's slice factorization tasks:
///   invert_slices(sys, a, out, min_rcond)   out(:, :, k) = a(:, :, k)⁻¹ for the square slices of a, and each
///                                           slice's reciprocal condition number against the largest slice's
///                                           1-norm (0 at a zero pivot)                  → std::vector<real_t<T>>
/// The slice SVD and QR join the contract with the device L-SVD (docs/design.md).
#include <concepts>
#include <vector>

#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept slice_factorization_tasks = requires(const Sys& sys, tensor3_view<const T, dextents3, S> a,
                                             tensor3_view<T, dextents3, S> out, real_t<T> min_rcond) {
  { invert_slices(sys, a, out, min_rcond) } -> std::same_as<std::vector<real_t<T>>>;
};

}  // namespace tprod::backend::kernels
