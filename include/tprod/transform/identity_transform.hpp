#pragma once
/// @file identity_transform.hpp
/// @brief identity_transform: Z = I, so the L-product is the plain facewise product.
#include <algorithm>

#include "tprod/core/extents.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

struct identity_transform {
  template <scalar T> using original_scalar = T;
  template <scalar T> using domain_scalar = T;
  static constexpr std::size_t static_size = dynamic_extent;

  static constexpr std::string_view name() { return "identity"; }
  void check_size(std::size_t) const {}
  template <scalar T> std::size_t stored_slices(std::size_t p) const { return p; }
  template <scalar T> double slice_weight(std::size_t, std::size_t) const { return 1.0; }
  std::optional<double> norm_scale(std::size_t) const { return 1.0; }
  bool is_real() const { return true; }

  template <scalar T> void forward(tensor3_view<const T> a, tensor3_view<T> ahat) const {
    std::copy(a.data(), a.data() + a.size(), ahat.data());
  }
  template <scalar T> void inverse(tensor3_view<const T> ahat, tensor3_view<T> a) const {
    std::copy(ahat.data(), ahat.data() + ahat.size(), a.data());
  }
  friend constexpr bool operator==(const identity_transform&, const identity_transform&) { return true; }
};

}  // namespace tprod
