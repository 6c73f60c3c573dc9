// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tensor3_view.hpp
/// @brief tensor3_view<T, Extents>: a non-owning view of a third-order tensor in tprod's storage order.
///
/// Storage (pinned): frontal slices contiguous, column-major inside a slice,
///   offset(i, j, k) = i + m·(j + n·k),
/// i.e. NumPy's Fortran order of an (m, n, p) array. So a slice is an m×n column-major matrix and the whole
/// tensor is an (m·n)×p column-major matrix whose column k is slice k.
///
/// A view knows its memory space: element access and the Eigen maps exist only for host_space, so a device
/// pointer can never reach Eigen (the CUDA backend's views are tensor3_view<T, E, device_space>).
#include <Eigen/Core>
#include <cstddef>
#include <type_traits>

#include "tprod/core/extents.hpp"
#include "tprod/core/memory_space.hpp"
#include "tprod/core/scalar.hpp"

namespace tprod {

template <class T, extents3_type Extents = dextents3, memory_space Space = host_space>
class tensor3_view {
  static constexpr bool on_host = std::same_as<Space, host_space>;

 public:
  using element_type = T;  ///< may be const
  using value_type = std::remove_cv_t<T>;
  using extents_type = Extents;
  using memory_space_type = Space;
  using matrix_type = Eigen::Matrix<value_type, Eigen::Dynamic, Eigen::Dynamic>;
  using vector_type = Eigen::Matrix<value_type, Eigen::Dynamic, 1>;
  using slice_map = Eigen::Map<std::conditional_t<std::is_const_v<T>, const matrix_type, matrix_type>>;
  using tube_map = Eigen::Map<std::conditional_t<std::is_const_v<T>, const vector_type, vector_type>, 0,
                              Eigen::InnerStride<>>;

  constexpr tensor3_view() = default;
  constexpr tensor3_view(T* data, const Extents& extents) : data_(data), extents_(extents) {}
  constexpr tensor3_view(T* data, std::size_t m, std::size_t n, std::size_t p) : data_(data), extents_(m, n, p) {}

  /// @brief Views of const elements and of compatible extents, in the same memory space, convert implicitly.
  template <class U, class E2>
    requires(std::is_convertible_v<U (*)[], T (*)[]> && std::is_constructible_v<Extents, E2>)
  constexpr tensor3_view(const tensor3_view<U, E2, Space>& other) : data_(other.data()), extents_(other.extents()) {}

  constexpr T* data() const { return data_; }
  constexpr const Extents& extents() const { return extents_; }
  constexpr std::size_t m() const { return extents_.m(); }  ///< rows (the first extent)
  constexpr std::size_t n() const { return extents_.n(); }  ///< columns (the second extent)
  constexpr std::size_t p() const { return extents_.p(); }  ///< tube length: the number of frontal slices
  constexpr std::size_t size() const { return extents_.size(); }
  std::string shape() const { return extents_.to_string(); }

  /// @brief A(i, j, k) with offset i + m·(j + n·k).
  constexpr T& operator()(std::size_t i, std::size_t j, std::size_t k) const
    requires on_host
  {
    return data_[i + m() * (j + n() * k)];
  }

  /// @brief Frontal slice A(:, :, k) as an m×n Eigen map (no copy).
  slice_map slice(std::size_t k) const
    requires on_host
  {
    return slice_map(data_ + k * m() * n(), Eigen::Index(m()), Eigen::Index(n()));
  }
  /// @brief The tensor as the (m·n)×p matrix whose column k is slice k (no copy).
  slice_map unfold_tubes() const
    requires on_host
  {
    return slice_map(data_, Eigen::Index(m() * n()), Eigen::Index(p()));
  }
  /// @brief Tube A(i, j, :) as a length-p strided Eigen map (no copy).
  tube_map tube(std::size_t i, std::size_t j) const
    requires on_host
  {
    return tube_map(data_ + i + m() * j, Eigen::Index(p()), Eigen::InnerStride<>(Eigen::Index(m() * n())));
  }

  constexpr tensor3_view view() const { return *this; }

 private:
  T* data_ = nullptr;
  Extents extents_{};
};

}  // namespace tprod
