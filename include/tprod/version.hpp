// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file version.hpp
/// @brief The library version (semantic versioning: a change of MAJOR breaks the API, of MINOR adds to it, of
/// PATCH fixes; while MAJOR is 0, a change of MINOR may break it). CMake reads the three macros from here, and the
/// installed package accepts a request of the same major version (SameMajorVersion). CHANGELOG.md lists what each
/// release changed.
#include <string_view>

#define TPROD_VERSION_MAJOR 0
#define TPROD_VERSION_MINOR 1
#define TPROD_VERSION_PATCH 0
#define TPROD_VERSION_STRING "0.1.0"

namespace tprod {

/// @brief A version as its three numbers, comparable (`tprod::version >= tprod::version_number{0, 1, 0}`).
struct version_number {
  int major = 0, minor = 0, patch = 0;
  friend constexpr auto operator<=>(const version_number&, const version_number&) = default;
};

/// @brief The version of these headers.
inline constexpr version_number version{TPROD_VERSION_MAJOR, TPROD_VERSION_MINOR, TPROD_VERSION_PATCH};
/// @brief The same as "MAJOR.MINOR.PATCH".
inline constexpr std::string_view version_string = TPROD_VERSION_STRING;

}  // namespace tprod
