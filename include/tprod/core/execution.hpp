// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file execution.hpp
/// @brief How host work runs, kept apart from what it computes: the thread count and the path of the tube
/// transforms (a GEMM with the cached p×p matrix, or FFTW). The execution of the default memory space, so it lives
/// in core: the CPU backend's system carries it (backend/cpu/system.hpp); the device's execution is
/// tprod::cuda::execution (backend/cuda/system.hpp).
///
/// A transform policy (dct, dft, matrix_transform, identity_transform) describes Z only. Which kernel applies it,
/// and on how many threads, is an execution choice:
/// - `tprod::set_num_threads(n)` (or the environment variable `TPROD_NUM_THREADS`) sets the process-wide thread
///   count; by default every core (OpenMP's `omp_get_max_threads()`, so `OMP_NUM_THREADS` is honoured too).
///   1 runs everything on the calling thread.
/// - an `execution` value passed as the first argument of `transform`, `inverse_transform` and `product`
///   (Thrust's execution-policy style) chooses the transform path and the threads for that call;
/// - an `execution_scope` makes an execution the default of the calling thread for its lifetime, for code that
///   takes no execution argument (factorizations, nn layers).
#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>

#include "tprod/core/detail/thread_default.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tprod {

/// Every path gives the same results up to rounding; `automatic` and the two forced paths give the same bits on
/// every run of the same call with the same thread count, `tuned` may not (its choice is a timing).
enum class transform_path {
  automatic,  ///< a fixed rule: the cached matrix for tubes up to 1024 long, FFTW beyond (when built with it)
  gemm,       ///< always the cached matrix: tprod's tube kernel for tubes up to 64 long, Eigen's GEMM beyond
  fftw,       ///< always FFTW (throws tprod::shape_error if tprod was built without it)
  tuned       ///< opt-in: the faster of FFTW and the matrix, timed on this machine at first use and kept for the
              ///< process; the choice can differ between runs, and with it the last bits of the results
};

namespace detail {
/// The thread count before any set_num_threads: TPROD_NUM_THREADS when set to a positive integer, else what
/// OpenMP offers (OMP_NUM_THREADS or every core), else 1 when tprod is built without OpenMP.
inline std::size_t initial_num_threads() {
  if (const char* env = std::getenv("TPROD_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) return std::size_t(n);
  }
#if defined(_OPENMP)
  return std::size_t(std::max(1, omp_get_max_threads()));
#else
  return 1;
#endif
}
inline std::atomic<std::size_t>& num_threads_setting() {
  // Eigen's own GEMM threading is set to 1 once, here: tprod shares every product out itself. Left on, Eigen
  // would start a team of its own for each of tprod's small unit GEMMs that happens to run outside a parallel
  // region (a 4096×16 by 16×16 block of a transform, say), which measured 10–40× slower on a loaded machine.
  static std::atomic<std::size_t> n{(Eigen::setNbThreads(1), initial_num_threads())};
  return n;
}
}  // namespace detail

/// @brief The process-wide number of threads tprod's kernels use (≥ 1).
inline std::size_t num_threads() { return detail::num_threads_setting().load(std::memory_order_relaxed); }

/// @brief Sets the process-wide thread count; 0 restores the default (TPROD_NUM_THREADS or every core).
/// tprod divides its work among these threads itself and keeps Eigen's own GEMM threading at 1
/// (Eigen::setNbThreads(1), done at tprod's first use), so the two never stack. Code of yours that wants Eigen
/// to thread its own products may call Eigen::setNbThreads(k) afterwards; tprod's kernels are unaffected, since
/// Eigen does not start threads inside tprod's parallel units.
/// Without OpenMP (tprod built with TPROD_USE_OPENMP=OFF) every kernel runs on the calling thread regardless.
inline void set_num_threads(std::size_t n) {
  detail::num_threads_setting().store(n == 0 ? detail::initial_num_threads() : n, std::memory_order_relaxed);
}

/// @brief An execution choice for one call: the transform path and the threads of tprod's parallel loops
/// (0: num_threads()).
struct execution {
  transform_path path = transform_path::automatic;
  std::size_t threads = 0;

  /// @brief The thread count this execution runs on. Reads the process setting even when `threads` is given: its
  /// first read is what turns Eigen's own GEMM threading off (see num_threads_setting), and a kernel reached only
  /// through explicit executions would otherwise run Eigen's teams inside tprod's (measured 570× slower).
  std::size_t thread_count() const {
    const std::size_t process = num_threads();
    return threads != 0 ? threads : process;
  }
  friend constexpr bool operator==(const execution&, const execution&) = default;
};

/// @brief The calling thread's default execution (what calls without an execution argument use).
inline const execution& default_execution() { return detail::thread_default<execution>(); }

/// @brief Makes an execution the calling thread's default until the scope ends (scopes nest):
/// `const tprod::execution_scope scope(tprod::execution{tprod::transform_path::gemm, 1});`.
using execution_scope = detail::thread_default_scope<execution>;

/// @brief "automatic", "gemm", "fftw" or "tuned".
inline std::string to_string(transform_path path) {
  switch (path) {
    case transform_path::gemm: return "gemm";
    case transform_path::fftw: return "fftw";
    case transform_path::tuned: return "tuned";
    default: return "automatic";
  }
}

}  // namespace tprod
