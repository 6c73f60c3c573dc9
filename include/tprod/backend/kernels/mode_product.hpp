#pragma once
/// @file mode_product.hpp
/// @brief The kernel contract's mode-n product task: multiply_mode(sys, mode, a, u, out) computes out = a ×_mode u
/// for a small host matrix u (r×extent), out already sized:
///   mode 1: out(:, :, k) = u·a(:, :, k)       mode 2: out(:, :, k) = a(:, :, k)·uᵀ       mode 3: out = a ×₃ u
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept mode_product_task = requires(const Sys& sys, tensor3_view<const T, dextents3, S> a,
                                     const tprod::detail::dense_matrix<T>& u, tensor3_view<T, dextents3, S> out) {
  multiply_mode(sys, 1, a, u, out);
};

}  // namespace tprod::backend::kernels
