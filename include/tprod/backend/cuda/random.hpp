// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file random.hpp
/// @brief Seeded random device tensors from cuRAND's Philox generator: i.i.d. entries uniform in [−1, 1] (both
/// parts when complex), for tests and benchmarks. The numbers differ from the host's random_tensor3 (another
/// generator); to compare both backends on the same data, make it on the host and copy it with to_device.
#include <cstdint>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"

namespace tprod::cuda {

template <scalar T>
device_tensor3<T> random_tensor3(std::size_t m, std::size_t n, std::size_t p, std::uint64_t seed,
                                 const execution& ex = default_execution()) {
  const execution_scope scope(ex);  // allocated on ex's stream
  device_tensor3<T> t(m, n, p, uninitialized);
  backend::cuda::raw::random_uniform(t.data(), t.size(), seed, ex.stream);
  return t;
}

}  // namespace tprod::cuda
