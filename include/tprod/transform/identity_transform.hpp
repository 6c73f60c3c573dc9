// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file identity_transform.hpp
/// @brief identity_transform: Z = I, so the L-product is the plain facewise product.
#include <algorithm>

#include "tprod/core/extents.hpp"
#include "tprod/transform/detail/matrix_cache.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

struct identity_transform {
  template <scalar T> using original_scalar = T;
  template <scalar T> using domain_scalar = T;
  static constexpr std::size_t static_size = dynamic_extent;
  static constexpr tube_algorithm algorithm = tube_algorithm::identity;

  static constexpr std::string_view name() { return "identity"; }
  void check_size(std::size_t) const {}
  template <scalar T> std::size_t stored_slices(std::size_t p) const { return p; }
  template <scalar T> double slice_weight(std::size_t, std::size_t) const { return 1.0; }
  std::optional<double> norm_scale(std::size_t) const { return 1.0; }
  bool is_real() const { return true; }

  /// @brief I (backends copy instead; the matrix serves those that only multiply), cached.
  template <scalar T> auto forward_factor(std::size_t p) const { return eye<T>(p); }
  template <scalar T> auto inverse_factor(std::size_t p) const { return eye<T>(p); }
  friend constexpr bool operator==(const identity_transform&, const identity_transform&) { return true; }

 private:
  template <scalar T> static auto eye(std::size_t p) {
    return detail::cached_matrix<real_t<T>>("identity", p, [&] {
      return detail::dense_matrix<real_t<T>>::Identity(Eigen::Index(p), Eigen::Index(p)).eval();
    });
  }
};

}  // namespace tprod
