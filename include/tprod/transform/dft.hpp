// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dft.hpp
/// @brief dft: the unnormalized DFT along the tubes, the transform of the t-product.
///
/// Z = F_p with (F_p)_{kj} = e^{−2πi·jk/p} (numpy.fft.fft), Z⁻¹ = F_pᴴ / p.
/// For real tensors only slices 0…⌊p/2⌋ are computed and stored: the others are their conjugates
/// (Â_{p−k} = conj(Â_k)), so products, transposes and inverses of real tensors come back real.
#include <cmath>
#include <complex>
#include <numbers>

#include "tprod/core/extents.hpp"
#include "tprod/transform/detail/matrix_cache.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

struct dft {
  template <scalar T> using original_scalar = T;
  template <scalar T> using domain_scalar = complex_t<T>;
  static constexpr std::size_t static_size = dynamic_extent;
  static constexpr tube_algorithm algorithm = tube_algorithm::dft;

  static constexpr std::string_view name() { return "dft"; }
  void check_size(std::size_t) const {}
  /// @brief p for complex tensors, ⌊p/2⌋ + 1 for real ones.
  template <scalar T> std::size_t stored_slices(std::size_t p) const {
    return is_complex_v<T> || p == 0 ? p : p / 2 + 1;  // p = 0: nothing to store
  }
  /// @brief 2 for a stored slice that also stands for its conjugate partner p − k, else 1.
  template <scalar T> double slice_weight(std::size_t k, std::size_t p) const {
    return (!is_complex_v<T> && k != 0 && 2 * k != p) ? 2.0 : 1.0;
  }
  std::optional<double> norm_scale(std::size_t p) const { return 1.0 / double(p); }  // F_pᴴF_p = p·I
  bool is_real() const { return false; }
  friend constexpr bool operator==(const dft&, const dft&) { return true; }

  /// @brief e^{sign·2πi·jk/p}, with jk reduced mod p first so large indices keep full accuracy.
  static std::complex<double> root(std::size_t jk, std::size_t p, double sign) {
    const double angle = sign * 2.0 * std::numbers::pi * double(jk % p) / double(p);
    return {std::cos(angle), std::sin(angle)};
  }
  /// @brief F_p in double precision.
  static detail::dense_matrix<std::complex<double>> matrix(std::size_t p) {
    detail::dense_matrix<std::complex<double>> f(p, p);
    for (std::size_t k = 0; k < p; ++k)
      for (std::size_t j = 0; j < p; ++j) f(k, j) = root(j * k, p, -1.0);
    return f;
  }

  /// @brief F_pᵀ restricted to the stored columns (Â = A·F_pᵀ; F_p is symmetric), cached.
  template <scalar T> auto forward_factor(std::size_t p) const {
    const std::size_t q = stored_slices<T>(p);
    return detail::cached_matrix<complex_t<T>>(is_complex_v<T> ? "dft-forward" : "dft-forward-half", p, [&] {
      return matrix(p).leftCols(Eigen::Index(q)).template cast<complex_t<T>>().eval();
    });
  }

  /// @brief N with A = Â·N: F_pᴴ/p, and from a half spectrum A_j = (1/p)·Σ_{k≤p/2} w_k·Re(Â_k e^{2πi·jk/p}), so
  /// N(k, j) = w_k/p·e^{2πi·jk/p} and the backend keeps the real part. Cached.
  template <scalar T> auto inverse_factor(std::size_t p) const {
    const std::size_t q = stored_slices<T>(p);
    return detail::cached_matrix<complex_t<T>>(is_complex_v<T> ? "dft-inverse" : "dft-inverse-half", p, [&] {
      detail::dense_matrix<std::complex<double>> m(q, p);
      for (std::size_t k = 0; k < q; ++k)
        for (std::size_t j = 0; j < p; ++j) m(k, j) = slice_weight<T>(k, p) / double(p) * root(j * k, p, 1.0);
      return m.template cast<complex_t<T>>().eval();
    });
  }
};

}  // namespace tprod
