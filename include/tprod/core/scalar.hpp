// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file scalar.hpp
/// @brief The scalar types tprod computes with and traits over them.
#include <complex>
#include <concepts>
#include <limits>
#include <type_traits>

namespace tprod {

template <class T> struct is_complex : std::false_type {};
template <class R> struct is_complex<std::complex<R>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<std::remove_cv_t<T>>::value;

template <class T> struct real_type { using type = T; };
template <class R> struct real_type<std::complex<R>> { using type = R; };
/// @brief The real type under T: float for std::complex<float>, T itself for a real T.
template <class T> using real_t = typename real_type<std::remove_cv_t<T>>::type;

/// @brief std::complex<real_t<T>>.
template <class T> using complex_t = std::complex<real_t<T>>;

/// @brief float, double, std::complex<float> or std::complex<double>.
template <class T>
concept scalar = std::same_as<real_t<T>, float> || std::same_as<real_t<T>, double>;

/// @brief The scalar of a result mixing T and U (complex wins, then the wider precision).
template <class T, class U>
using promote_t = std::conditional_t<is_complex_v<T> || is_complex_v<U>,
                                     std::complex<decltype(real_t<T>{} + real_t<U>{})>,
                                     decltype(real_t<T>{} + real_t<U>{})>;

/// @brief Machine epsilon of T's real type.
template <class T> inline constexpr real_t<T> epsilon_v = std::numeric_limits<real_t<T>>::epsilon();

/// @brief Complex conjugate that keeps real types real.
template <class T> constexpr T conj(const T& x) {
  if constexpr (is_complex_v<T>) return std::conj(x); else return x;
}

}  // namespace tprod
