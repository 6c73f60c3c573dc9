// SPDX-License-Identifier: Apache-2.0
#pragma once
// Thread counts for benchmark cases: tprod's (process-wide) for the case's lifetime, and Eigen's own GEMM threading
// (which tprod keeps at 1) for the plain-Eigen limits and baselines.
#include <Eigen/Core>
#include <cstddef>

#include "tprod/core/execution.hpp"

namespace bench {

/// Runs a case on `threads` threads (0: every core) and restores the default afterwards.
struct thread_count {
  explicit thread_count(std::size_t threads) { tprod::set_num_threads(threads); }
  ~thread_count() { tprod::set_num_threads(0); }
};

/// Eigen's own GEMM threading on tprod's thread count for the case's lifetime, then back to 1.
struct eigen_threads {
  eigen_threads() { Eigen::setNbThreads(int(tprod::num_threads())); }
  ~eigen_threads() { Eigen::setNbThreads(1); }
};

}  // namespace bench
