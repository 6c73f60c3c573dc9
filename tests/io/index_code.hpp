// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test values that encode their own position, so that a transposed or permuted layout shows in the numbers.
#include <cstddef>

namespace tprod::test {

/// 100·i + 10·j + k: each index readable from the value (indices below 10).
inline double index_code(std::size_t i, std::size_t j, std::size_t k) { return double(100 * i + 10 * j + k); }

}  // namespace tprod::test
