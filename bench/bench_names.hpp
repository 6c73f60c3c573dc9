// SPDX-License-Identifier: Apache-2.0
#pragma once
// Benchmark case names: the shape part is spelled the same in every area, so that filters and tables match.
#include <cstddef>
#include <string>

namespace bench {

/// "m<m>_n<n>_p<p>". (Starting from std::string, not a literal: GCC 12 reports a false -Wrestrict on
/// `"literal" + std::string&&`.)
inline std::string shape_name(std::size_t m, std::size_t n, std::size_t p) {
  return std::string("m") + std::to_string(m) + "_n" + std::to_string(n) + "_p" + std::to_string(p);
}

}  // namespace bench
