// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file random.hpp
/// @brief Seeded random tensors (uniform in [−1, 1], real and imaginary parts), for tests, benchmarks and examples.
#include <cstdint>
#include <random>

#include "tprod/core/tensor3.hpp"

namespace tprod {

/// @brief A tensor of the given extents with i.i.d. entries uniform in [−1, 1] (both parts when complex).
template <scalar T, extents3_type E>
tensor3<T, E> random_tensor3(const E& extents, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<real_t<T>> uniform(real_t<T>(-1), real_t<T>(1));
  tensor3<T, E> t(extents);
  for (std::size_t e = 0; e < t.size(); ++e) {
    if constexpr (is_complex_v<T>) {
      const real_t<T> re = uniform(engine);
      t.data()[e] = T(re, uniform(engine));
    } else {
      t.data()[e] = uniform(engine);
    }
  }
  return t;
}

/// @brief A dynamic m×n×p random tensor; see random_tensor3(extents, seed).
template <scalar T>
tensor3<T> random_tensor3(std::size_t m, std::size_t n, std::size_t p, std::uint64_t seed) {
  return random_tensor3<T>(dextents3(m, n, p), seed);
}

}  // namespace tprod
