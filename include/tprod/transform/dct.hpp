// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dct.hpp
/// @brief dct: the orthonormal DCT-II along the tubes, the transform of the cosine product (c-product of
/// the TCP-ViT paper, and the L-product Transformer's default).
///
/// (Φ_p)_{jk} = √((2 − δ_{j0})/p) · cos(π(2k+1)j / (2p)),  Z = Φ_p,  Z⁻¹ = Φ_pᵀ.
/// This equals scipy.fft.dct(x, type=2, norm="ortho") and MATLAB's dct. Note: the "c-product" of
/// Kernfeld–Kilmer–Aeron (2015) uses the different, Toeplitz-plus-Hankel transform W⁻¹C(I + Z↓); pass that
/// matrix as a matrix_transform if you need it.
#include <cmath>
#include <numbers>

#include "tprod/core/extents.hpp"
#include "tprod/transform/detail/matrix_cache.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

struct dct {
  template <scalar T> using original_scalar = T;
  template <scalar T> using domain_scalar = T;
  static constexpr std::size_t static_size = dynamic_extent;
  static constexpr tube_algorithm algorithm = tube_algorithm::dct2;

  static constexpr std::string_view name() { return "dct"; }
  void check_size(std::size_t) const {}
  template <scalar T> std::size_t stored_slices(std::size_t p) const { return p; }
  template <scalar T> double slice_weight(std::size_t, std::size_t) const { return 1.0; }
  std::optional<double> norm_scale(std::size_t) const { return 1.0; }  // Φ is orthogonal
  bool is_real() const { return true; }
  friend constexpr bool operator==(const dct&, const dct&) { return true; }

  /// @brief Φ_p in double precision.
  static detail::dense_matrix<double> matrix(std::size_t p) {
    detail::dense_matrix<double> phi(p, p);
    for (std::size_t j = 0; j < p; ++j)
      for (std::size_t k = 0; k < p; ++k)
        phi(j, k) = std::sqrt((j == 0 ? 1.0 : 2.0) / double(p)) *
                    std::cos(std::numbers::pi * double((2 * k + 1) * j) / double(2 * p));
    return phi;
  }

  /// @brief Φᵀ (Â = A·Φᵀ on the (m·n)×p matrix of tubes), cached, in T's real precision.
  template <scalar T> auto forward_factor(std::size_t p) const {
    return cached<T>("dct-forward", p, [](auto phi) { return phi.transpose().eval(); });
  }
  /// @brief Φ (A = Â·Φ, since Φ⁻¹ = Φᵀ), cached.
  template <scalar T> auto inverse_factor(std::size_t p) const {
    return cached<T>("dct-inverse", p, [](auto phi) { return phi; });
  }

 private:
  template <class T, class F>
  static auto cached(const char* kind, std::size_t p, F shape) {
    return detail::cached_matrix<real_t<T>>(kind, p, [&] { return shape(matrix(p)).template cast<real_t<T>>().eval(); });
  }
};

}  // namespace tprod
