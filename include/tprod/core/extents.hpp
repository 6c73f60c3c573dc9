// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file extents.hpp
/// @brief extents3<M, N, P>: the shape of a third-order tensor, each extent fixed at compile time or dynamic.
///
/// Like std::extents, only the dynamic extents are stored. Three tiers are intended:
/// all fixed (`extents3<2, 3, 4>`), fixed slice with dynamic tubes (`extents3<8, 8, dynamic_extent>`)
/// and all dynamic (`dextents3`), but any combination works.
#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include <string>

#include "tprod/core/error.hpp"
#include "tprod/fwd.hpp"  // defines tprod::dynamic_extent (= std::dynamic_extent): an extent known only at run time

namespace tprod {

/// @brief A shape of any order as text, "3x4x5x6"; "(scalar)" for order 0. The one way tprod writes a shape in its
/// messages (the overloads below and core/detail/dense_matrix.hpp's for matrices use it; files in NumPy's format
/// write theirs as NumPy does, io::numpy_shape).
inline std::string shape_string(std::span<const std::size_t> shape) {
  if (shape.empty()) return "(scalar)";
  std::string s;
  for (std::size_t n = 0; n < shape.size(); ++n) {
    if (n) s += 'x';  // (not "x" + to_string(...): GCC 12 warns falsely (-Wrestrict) on that operator+)
    s += std::to_string(shape[n]);
  }
  return s;
}
/// @brief "m×n×p" as text ("3x4x5").
inline std::string shape_string(std::size_t m, std::size_t n, std::size_t p) {
  return shape_string(std::array<std::size_t, 3>{m, n, p});
}

/// @brief The largest extent, and the largest element count of a tensor or of any part of it: what a signed
/// index (Eigen::Index, std::ptrdiff_t) can hold.
inline constexpr std::size_t max_index = std::size_t(std::numeric_limits<std::ptrdiff_t>::max());

/// @brief Empty when an m×n×p tensor can be addressed, else why not: every extent, every product of two
/// extents (a slice, an unfolding) and the element count must fit max_index, whatever the other extents
/// (so an empty tensor cannot carry an extent no index can reach either).
inline std::string shape_limit_problem(std::size_t m, std::size_t n, std::size_t p) {
  const auto fits = [](std::size_t a, std::size_t b) { return a == 0 || b <= max_index / a; };
  if (m > max_index || n > max_index || p > max_index)
    return "an extent exceeds the largest index " + std::to_string(max_index);
  if (!fits(m, n) || !fits(n, p) || !fits(m, p) || (m * n != 0 && !fits(m * n, p)))
    return "its element count (or that of a slice or an unfolding) exceeds the largest index " +
           std::to_string(max_index);
  return {};
}

template <std::size_t M, std::size_t N, std::size_t P>
class extents3 {
 public:
  static constexpr std::array<std::size_t, 3> static_extents{M, N, P};
  static constexpr std::size_t rank_dynamic =
      (M == dynamic_extent) + (N == dynamic_extent) + (P == dynamic_extent);

  /// @brief The compile-time extent r (0: rows, 1: columns, 2: tubes), or dynamic_extent.
  static constexpr std::size_t static_extent(std::size_t r) { return static_extents[r]; }
  static constexpr bool is_static() { return rank_dynamic == 0; }

  /// @brief Extents with every dynamic extent zero (or the fixed shape).
  constexpr extents3() = default;

  /// @brief From all three extents; a fixed extent must match its compile-time value.
  /// @throws shape_error when a given extent contradicts a fixed one, or when the shape cannot be addressed
  /// (shape_limit_problem: an extent, a product of two, or the element count beyond max_index).
  constexpr extents3(std::size_t m, std::size_t n, std::size_t p) {
    if (m > max_index || n > max_index || p > max_index || (m != 0 && n > max_index / m) ||
        (n != 0 && p > max_index / n) || (m != 0 && p > max_index / m) || (m * n != 0 && p > max_index / (m * n)))
      throw shape_error("extents3: shape " + shape_string(m, n, p) + " is too large: " +
                        shape_limit_problem(m, n, p));
    const std::array<std::size_t, 3> given{m, n, p};
    std::size_t d = 0;
    for (std::size_t r = 0; r < 3; ++r) {
      if (static_extents[r] == dynamic_extent) {
        dynamic_[d++] = given[r];
      } else if (static_extents[r] != given[r]) {
        throw shape_error("extents3: shape " + shape_string(m, n, p) + " contradicts the fixed shape " +
                          static_string());
      }
    }
  }

  /// @brief Converts from other extents with compatible fixed values (checked at run time where needed).
  /// Two different fixed values are refused by a static_assert rather than a constraint, so that the compiler
  /// error is a sentence instead of a list of rejected overloads.
  template <std::size_t M2, std::size_t N2, std::size_t P2>
  constexpr extents3(const extents3<M2, N2, P2>& other) : extents3(other.m(), other.n(), other.p()) {
    static_assert((M == dynamic_extent || M2 == dynamic_extent || M == M2) &&
                      (N == dynamic_extent || N2 == dynamic_extent || N == N2) &&
                      (P == dynamic_extent || P2 == dynamic_extent || P == P2),
                  "tprod::extents3: cannot convert between shapes whose fixed extents differ; every extent fixed "
                  "in both the source and the target type must be equal (use dynamic_extent to check it at run time)");
  }

  constexpr std::size_t extent(std::size_t r) const {
    if (static_extents[r] != dynamic_extent) return static_extents[r];
    std::size_t d = 0;
    for (std::size_t q = 0; q < r; ++q) d += static_extents[q] == dynamic_extent;
    return dynamic_[d];
  }
  constexpr std::size_t m() const { return extent(0); }  ///< rows
  constexpr std::size_t n() const { return extent(1); }  ///< columns
  constexpr std::size_t p() const { return extent(2); }  ///< tube length (number of frontal slices)
  /// @brief m·n·p; cannot overflow (the constructor refuses shapes beyond max_index).
  constexpr std::size_t size() const { return m() * n() * p(); }

  std::string to_string() const { return shape_string(m(), n(), p()); }

  template <std::size_t M2, std::size_t N2, std::size_t P2>
  friend constexpr bool operator==(const extents3& a, const extents3<M2, N2, P2>& b) {
    return a.m() == b.m() && a.n() == b.n() && a.p() == b.p();
  }

 private:
  static std::string static_string() {
    auto one = [](std::size_t e) { return e == dynamic_extent ? std::string("?") : std::to_string(e); };
    return one(M) + "x" + one(N) + "x" + one(P);
  }
  std::array<std::size_t, rank_dynamic> dynamic_{};
};

/// @brief All-dynamic extents.
using dextents3 = extents3<dynamic_extent, dynamic_extent, dynamic_extent>;

template <class E> struct is_extents3 : std::false_type {};
template <std::size_t M, std::size_t N, std::size_t P> struct is_extents3<extents3<M, N, P>> : std::true_type {};
/// @brief A specialization of tprod::extents3.
template <class E> concept extents3_type = is_extents3<E>::value;

/// @brief True when two compile-time extents may be equal (one is dynamic, or both are the same).
inline constexpr bool extents_compatible(std::size_t a, std::size_t b) {
  return a == dynamic_extent || b == dynamic_extent || a == b;
}
/// @brief The fixed one of two compatible extents, or dynamic_extent when both are dynamic.
inline constexpr std::size_t common_extent(std::size_t a, std::size_t b) {
  return a != dynamic_extent ? a : b;
}

}  // namespace tprod
