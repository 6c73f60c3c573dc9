// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_linear.hpp
/// @brief The CPU backend's slice-linear tasks (contract: backend/kernels/slice_linear.hpp): the nn layers'
/// transform-domain linear map Y_k = X_k·W_k[:, c0:c0+q] + 1·b_k[c0:c0+q] and its backward pass, as GEMMs over
/// (slice × column panel) units shared by the threads: Eigen's, or the tube kernel's small GEMM for narrow slices.
#include <algorithm>
#include <cstddef>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/cpu/tube_kernel.hpp"
#include "tprod/core/detail/buffer.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

/// @brief Calls f(k, j, n) for every slice k < p and column panel [j, j + n) of a `cols`-wide destination, on up
/// to `threads` threads: slices first, column panels when there are fewer slices than threads (so that one large
/// slice, p = 1, still uses them all). `macs` is the multiply-adds of one slice's GEMM.
template <class F>
void for_each_slice_panel(std::size_t p, std::size_t cols, std::size_t macs, std::size_t threads, F&& f) {
  if (macs * p < parallel_min_macs) threads = 1;
  const std::size_t panels = p >= threads ? 1 : std::max<std::size_t>(1, std::min((threads + p - 1) / p, cols / 16));
  const std::size_t width = (cols + panels - 1) / panels;
  parallel_for(p * panels, threads, [&](std::size_t u) {
    const std::size_t k = u / panels, j = (u % panels) * width;
    if (j < cols) f(k, Eigen::Index(j), Eigen::Index(std::min(width, cols - j)));
  });
}

namespace detail {
/// Whether products whose inner dimension is `inner` run on the tube kernel's small GEMM (tube_kernel.hpp) rather
/// than Eigen's: real scalars it vectorises and inner ≤ tube_kernel_max_tubes, the 16- to 64-wide slices of the
/// compressed models. On TCP-ViT's 3,200-row slices, one thread, it took 0.55–0.92× the time of Eigen's GEMM for inner
/// widths 16 to 64 and 16 to 96 outputs, except at 32 × 32, which moved between 0.66× and 1.23× from run to run
/// (bench_nn's slice_linear/ and eigen_gemm/ cases; docs/performance.md, "The narrow slices' GEMMs").
template <class T>
bool on_small_gemm(std::size_t inner) {
  if constexpr (tube_kernel::supported<T>)
    return inner <= tube_kernel_max_tubes;
  else
    return false;
}
}  // namespace detail

/// @brief Y_k = X_k·W_k[:, c0:c0+q] (+ b_k[c0:c0+q] on every row) for every slice k, q = Y's width.
template <class T>
void slice_linear_forward(const system& sys, tensor3_view<const T> x, tensor3_view<const T> w, tensor3_view<const T> b,
                          std::size_t c0, tensor3_view<T> y) {
  for_each_slice_panel(x.p(), y.n(), x.m() * x.n() * y.n(), sys.threads(),
                       [&](std::size_t k, Eigen::Index j, Eigen::Index n) {
                         if (detail::on_small_gemm<T>(x.n())) {
                           const std::size_t rows = x.m(), col = c0 + std::size_t(j);
                           small_gemm<T>(x.slice(k).data(), rows, int(x.n()), w.slice(k).data() + col * w.m(), int(n),
                                         y.slice(k).data() + std::size_t(j) * rows,
                                         {b.size() != 0 ? b.slice(k).data() + col : nullptr, false}, 1);
                           return;
                         }
                         auto yk = y.slice(k).middleCols(j, n);
                         const auto wk = w.slice(k).middleCols(Eigen::Index(c0) + j, n);
                         if (b.size() != 0) {
                           // Eigen's `=` product zero-fills Y before accumulating; filling it with the bias instead
                           // saves both that pass and a separate bias pass.
                           yk.rowwise() = b.slice(k).row(0).segment(Eigen::Index(c0) + j, n);
                           yk.noalias() += x.slice(k) * wk;
                         } else {
                           yk.noalias() = x.slice(k) * wk;
                         }
                       });
}

/// @brief dW_k[:, c0:c0+q] = X_kᵀ·dY_k, db_k[c0:c0+q] = 1ᵀ·dY_k (db not empty) and, when dx is not empty,
/// dX_k = dY_k·W_k[:, c0:c0+q]ᵀ (added to dX when `accumulate`), q = dY's width.
template <class T>
void slice_linear_backward(const system& sys, tensor3_view<const T> x, tensor3_view<const T> w,
                           tensor3_view<const T> dy, std::size_t c0, tensor3_view<T> dx, bool accumulate,
                           tensor3_view<T> dw, tensor3_view<T> db) {
  const auto q = Eigen::Index(dy.n()), c = Eigen::Index(c0);
  const std::size_t macs = x.m() * x.n() * dy.n();
  // dW and db by column panels of dY, then dX by column panels of its own (the rows of W).
  for_each_slice_panel(x.p(), dy.n(), macs, sys.threads(), [&](std::size_t k, Eigen::Index j, Eigen::Index n) {
    const auto dyk = dy.slice(k).middleCols(j, n);
    dw.slice(k).middleCols(c + j, n).noalias() = x.slice(k).transpose() * dyk;
    if (db.size() != 0) db.slice(k).row(0).segment(c + j, n) = dyk.colwise().sum();
  });
  if (dx.size() == 0) return;
  for_each_slice_panel(x.p(), x.n(), macs, sys.threads(), [&](std::size_t k, Eigen::Index j, Eigen::Index n) {
    const auto wk = w.slice(k).middleCols(c, q).middleRows(j, n);
    if (detail::on_small_gemm<T>(std::size_t(q))) {
      // The small GEMM's factor is column-major with its inner dimension first: Wᵀ's panel, copied (q ≤ 64 rows),
      // into tprod's recycled memory.
      tprod::detail::buffer<T> wt(std::size_t(q) * std::size_t(n));
      Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>(wt.data(), q, n) = wk.transpose();
      const std::size_t rows = x.m();
      small_gemm<T>(dy.slice(k).data(), rows, int(q), wt.data(), int(n), dx.slice(k).data() + std::size_t(j) * rows,
                    {nullptr, accumulate}, 1);
      return;
    }
    if (accumulate)
      dx.slice(k).middleCols(j, n).noalias() += dy.slice(k) * wk.transpose();
    else
      dx.slice(k).middleCols(j, n).noalias() = dy.slice(k) * wk.transpose();
  });
}

}  // namespace tprod::backend::cpu
