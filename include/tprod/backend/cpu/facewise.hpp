// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file facewise.hpp
/// @brief The facewise product on the CPU: C(:, :, k) = A(:, :, k)·B(:, :, k) for every slice k, as Eigen GEMMs
/// over (slice × column panel) units shared by the threads.
///
/// Why column panels: Eigen 3.4's GEMM has a size cliff. On this project's machines (AVX-512) a single
/// 256×256×256 float GEMM runs at 30–35 GFLOP/s where 256×256×128 runs at 145 (and 240³ or 288³ likewise
/// collapse while 384³ does not), whatever the operands' alignment or the slices' distance in memory
/// (docs/design.md, "The GEMM size cliff"). Computing such a product as panels of at most 128 columns of C
/// avoids it; larger products keep whole GEMMs, which pack A only once. Panels are also what lets the threads
/// share a product with fewer slices than threads.
#include <algorithm>
#include <cstddef>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

/// @brief Column-panel width for slice GEMMs whose three dimensions are all at most gemm_cliff_max.
inline constexpr std::size_t gemm_panel_columns = 128;
/// @brief The largest dimension at which Eigen's whole GEMM was measured to collapse (cliff from 192 to 320).
inline constexpr std::size_t gemm_cliff_max = 384;
/// @brief Narrowest column panel made only to give threads work.
inline constexpr std::size_t thread_panel_min_columns = 32;

/// @brief How many column panels each slice's m×l by l×n GEMM is cut into for `threads` threads and p slices.
inline std::size_t gemm_panels(std::size_t m, std::size_t l, std::size_t n, std::size_t p, std::size_t threads) {
  std::size_t panels = 1;
  if (n > gemm_panel_columns && std::max({m, l, n}) <= gemm_cliff_max)
    panels = (n + gemm_panel_columns - 1) / gemm_panel_columns;
  if (p * panels < threads) {  // too few units: cut the columns further, never below a useful width
    const std::size_t wanted = (threads + p - 1) / p;
    panels = std::max(panels, std::min(wanted, std::max<std::size_t>(1, n / thread_panel_min_columns)));
  }
  return panels;
}

/// @brief C(:, :, k) = A(:, :, k)·B(:, :, k) for every slice k (C already sized m×n×p), on up to `threads`
/// threads.
template <class T>
void facewise(tensor3_view<const T> a, tensor3_view<const T> b, tensor3_view<T> c, std::size_t threads) {
  const std::size_t m = a.m(), l = a.n(), n = b.n(), p = a.p();
  if (c.size() == 0) return;  // work follows the data: an empty C may still have p up to 2^63 − 1
  if (l == 0) {  // empty sums: C = 0 (Eigen's inner product of empty vectors reads past them)
    std::fill(c.data(), c.data() + c.size(), T(0));
    return;
  }
  if (m * l * n * p < parallel_min_macs) threads = 1;
  const std::size_t panels = gemm_panels(m, l, n, p, threads);
  const std::size_t width = (n + panels - 1) / std::max<std::size_t>(1, panels);
  parallel_for(p * panels, threads, [&](std::size_t unit) {
    const std::size_t k = unit / panels, j = (unit % panels) * width;
    if (j >= n) return;
    const auto q = Eigen::Index(std::min(width, n - j)), col = Eigen::Index(j);
    if (panels == 1)
      c.slice(k).noalias() = a.slice(k) * b.slice(k);
    else
      c.slice(k).middleCols(col, q).noalias() = a.slice(k) * b.slice(k).middleCols(col, q);
  });
}

/// @brief The facewise task of the kernel contract (backend/kernels/facewise.hpp), on the system's threads.
template <class T>
void facewise(const system& sys, tensor3_view<const T> a, tensor3_view<const T> b, tensor3_view<T> c) {
  facewise<T>(a, b, c, sys.threads());
}

}  // namespace tprod::backend::cpu
