// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mode_product.hpp
/// @brief The CPU backend's mode-n product task (contract: backend/kernels/mode_product.hpp): slice GEMMs with Eigen
/// for modes 0 and 1, the tube GEMM for mode 2 (modes count from 0), on the system's threads.
#include <cstddef>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/cpu/tube_gemm.hpp"
#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

/// @brief out = a ×_mode u: mode 0 out_k = u·a_k, mode 1 out_k = a_k·uᵀ, mode 2 along the tubes by uᵀ.
template <class T>
void multiply_mode(const system& sys, int mode, tensor3_view<const T> a, const tprod::detail::dense_matrix<T>& u,
                   tensor3_view<T> out) {
  kernels::expect_mode_product(mode, a.extents(), std::size_t(u.rows()), std::size_t(u.cols()), out.extents());
  if (out.size() == 0) return;
  if (mode == 2) {
    apply_along_tubes(a, tprod::detail::dense_matrix<T>(u.transpose()), out, sys.threads());
    return;
  }
  parallel_for(a.p(), out.size() < (std::size_t(1) << 15) ? 1 : sys.threads(), [&](std::size_t k) {
    if (mode == 0) out.slice(k).noalias() = u * a.slice(k);
    else out.slice(k).noalias() = a.slice(k) * u.transpose();
  });
}

}  // namespace tprod::backend::cpu
