// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mdspan.hpp
/// @brief tprod's tensors as C++23 `std::mdspan`s and back, without copies.
///
/// tprod's storage order, offset(i, j, k) = i + m·(j + n·k), is `std::layout_left` over the extents (m, n, p). So a
/// host tensor3 or tensor3_view is `std::mdspan<T, std::dextents<std::size_t, 3>, std::layout_left>` on the same
/// memory (`to_mdspan(a)`), and a 3-dimensional layout_left mdspan is a tensor3_view (`view_of(s)`).
/// Where the standard library has no `<mdspan>` (C++20, GCC 12's libstdc++), `tprod::mdspan3<T>` is a small
/// stand-in with the same layout and the members code needs across both: `data_handle()`, `extent(r)`, `rank()`,
/// `size()`, `empty()`, element access `s(i, j, k)` (std::mdspan's C++23 `s[i, j, k]` needs the multidimensional
/// subscript), `stride(r)`, and the `layout_type` tag `tprod::layout_left`. Code that names `tprod::mdspan3<T>`
/// compiles with either.
#include <array>
#include <concepts>
#include <cstddef>
#include <version>

#include "tprod/core/tensor3.hpp"

#if defined(__cpp_lib_mdspan) && __cpp_lib_mdspan >= 202207L
#include <mdspan>
#define TPROD_HAS_STD_MDSPAN 1
#else
#define TPROD_HAS_STD_MDSPAN 0
#endif

namespace tprod {

#if TPROD_HAS_STD_MDSPAN
using layout_left = std::layout_left;
/// @brief A 3-dimensional column-major (layout_left) mdspan: tprod's storage order.
template <class T>
using mdspan3 = std::mdspan<T, std::dextents<std::size_t, 3>, std::layout_left>;
#else
/// @brief The layout tag of mdspan3 (std::layout_left where the standard library has it).
struct layout_left {};

/// @brief A 3-dimensional layout_left span over T (std::mdspan's stand-in, see the file comment).
template <class T>
class mdspan3 {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using layout_type = layout_left;
  using index_type = std::size_t;

  constexpr mdspan3() = default;
  constexpr mdspan3(T* data, std::size_t m, std::size_t n, std::size_t p) : data_(data), extents_{m, n, p} {}

  static constexpr std::size_t rank() { return 3; }
  constexpr T* data_handle() const { return data_; }
  constexpr std::size_t extent(std::size_t r) const { return extents_[r]; }
  constexpr std::size_t size() const { return extents_[0] * extents_[1] * extents_[2]; }
  constexpr bool empty() const { return size() == 0; }
  /// @brief The distance between neighbours along dimension r: 1, m, m·n.
  constexpr std::size_t stride(std::size_t r) const { return r == 0 ? 1 : r == 1 ? extents_[0] : extents_[0] * extents_[1]; }
  constexpr T& operator()(std::size_t i, std::size_t j, std::size_t k) const {
    return data_[i + extents_[0] * (j + extents_[1] * k)];
  }

 private:
  T* data_ = nullptr;
  std::array<std::size_t, 3> extents_{};
};
#endif

/// @brief A 3-dimensional mdspan (std::mdspan or mdspan3) in tprod's storage order.
template <class M>
concept layout_left_mdspan3 = requires(const M& s) {
  { s.data_handle() };
  { s.extent(0) } -> std::convertible_to<std::size_t>;
  requires M::rank() == 3;
  requires std::same_as<typename M::layout_type, layout_left>;
};

/// @brief The mdspan of a host tensor3 or tensor3_view, on its memory (no copy); const elements for a const one.
template <host_tensor3 X>
auto to_mdspan(X& a) {
  using element = std::remove_reference_t<decltype(*a.data())>;
  return mdspan3<element>(a.data(), a.m(), a.n(), a.p());
}

/// @brief The tensor3_view of a 3-dimensional layout_left mdspan, on its memory (no copy).
template <layout_left_mdspan3 M>
auto view_of(const M& s) {
  using element = std::remove_reference_t<decltype(*s.data_handle())>;
  return tensor3_view<element>(s.data_handle(), std::size_t(s.extent(0)), std::size_t(s.extent(1)),
                               std::size_t(s.extent(2)));
}

}  // namespace tprod
