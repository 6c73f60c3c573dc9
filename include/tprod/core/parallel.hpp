// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file parallel.hpp
/// @brief How host work is shared among threads: one parallel loop over independent work units, on OpenMP. The CPU
/// backend runs on it (backend/cpu/parallel.hpp), and so do the layers that stay on the host.
///
/// Why OpenMP: Eigen parallelizes its own GEMMs with OpenMP, and refuses to start threads inside an active
/// OpenMP region. Running our units (slices, column panels, row blocks) in an OpenMP team therefore makes every
/// Eigen call inside them single-threaded: the machine is never oversubscribed, whatever Eigen's own setting.
/// Measurements behind the choice are in docs/design.md ("Threads").
#include <algorithm>
#include <cstddef>
#include <exception>

#include "tprod/core/execution.hpp"

namespace tprod::detail {

/// @brief Work with fewer multiply-adds than this (about 10–20 µs on one core) runs on one thread: starting a
/// team costs microseconds, and far more when the other cores are busy (a 32×32×16 float L-product measured
/// 10 µs on one thread and 60–240 µs on two of a loaded 2-core machine).
inline constexpr std::size_t parallel_min_macs = std::size_t(1) << 20;
/// @brief Likewise for elementwise passes and tube transforms: fewer elements than this run on one thread.
inline constexpr std::size_t parallel_min_elements = std::size_t(1) << 16;

/// @brief The threads an elementwise pass over `elements` gets: one below parallel_min_elements, else ex's count.
inline std::size_t threads_for(std::size_t elements, const execution& ex) {
  return elements < parallel_min_elements ? 1 : ex.thread_count();
}

/// @brief Whether the caller already runs inside one of tprod's (or the user's) OpenMP teams.
inline bool in_parallel_region() {
#if defined(_OPENMP)
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

/// @brief The index of the calling thread inside its parallel_for team (0 outside one): for per-thread
/// workspaces, sized by the team's thread count.
inline std::size_t thread_index() {
#if defined(_OPENMP)
  return std::size_t(omp_get_thread_num());
#else
  return 0;
#endif
}

/// @brief Which of `slots` per-thread workspaces the calling thread uses inside a parallel_for sized for `slots`
/// threads: its team index, or the last slot when the loop runs on the calling thread inside a larger team of the
/// user's (parallel_for does not nest, so that thread is then the loop's only one). slots ≥ 1.
inline std::size_t thread_slot(std::size_t slots) { return std::min(thread_index(), slots - 1); }

/// @brief Calls f(i) for every i < count on up to `threads` threads (dynamic schedule: units may differ in
/// cost). Runs on the calling thread when threads ≤ 1, count ≤ 1, or inside a parallel region already (no
/// nesting). The first exception thrown by f is rethrown on the caller once every unit has finished.
template <class F>
void parallel_for(std::size_t count, std::size_t threads, F&& f) {
  // The first read of the process setting turns Eigen's own GEMM threading off (num_threads_setting). Kernels
  // below the parallel thresholds ask for one thread without reading it, and a unit run on the calling thread
  // outside a team would otherwise start Eigen's: a 2000×8 by 8×8 block of a DCT took 5× longer.
  (void)num_threads();
  threads = std::min(threads, count);
  if (threads <= 1 || in_parallel_region()) {
    for (std::size_t i = 0; i < count; ++i) f(i);
    return;
  }
#if defined(_OPENMP)
  std::exception_ptr error;
#pragma omp parallel for num_threads(int(threads)) schedule(dynamic, 1)
  for (long long i = 0; i < (long long)count; ++i) {
    try {
      f(std::size_t(i));
    } catch (...) {
#pragma omp critical(tprod_parallel_for_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
#else
  for (std::size_t i = 0; i < count; ++i) f(i);
#endif
}

/// @brief Units of `grain` consecutive indices for a loop of `count` cheap iterations: enough units to keep
/// `threads` threads busy, few enough that each amortizes its scheduling. f(begin, end) per unit.
template <class F>
void parallel_ranges(std::size_t count, std::size_t threads, std::size_t min_grain, F&& f) {
  const std::size_t units = std::max<std::size_t>(1, std::min(count / std::max<std::size_t>(1, min_grain), 4 * threads));
  const std::size_t step = (count + units - 1) / std::max<std::size_t>(1, units);
  parallel_for(units, threads, [&](std::size_t u) {
    const std::size_t begin = u * step, end = std::min(count, begin + step);
    if (begin < end) f(begin, end);
  });
}

}  // namespace tprod::detail
