// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file fwd.hpp
/// @brief Forward declarations and aliases only.
#include <cstddef>
#include <span>

namespace tprod {
inline constexpr std::size_t dynamic_extent = std::dynamic_extent;
template <std::size_t M, std::size_t N, std::size_t P> class extents3;
using dextents3 = extents3<dynamic_extent, dynamic_extent, dynamic_extent>;
struct host_space;
struct device_space;
struct dct;
struct dft;
struct identity_transform;
struct shape_error;
struct numerical_error;
struct io_error;
}  // namespace tprod
