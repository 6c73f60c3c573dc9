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
#include "tprod/transform/detail/fftw.hpp"
#include "tprod/transform/detail/matrix_cache.hpp"
#include "tprod/transform/detail/tube_gemm.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

struct dct {
  transform_path path = transform_path::automatic;

  template <scalar T> using original_scalar = T;
  template <scalar T> using domain_scalar = T;
  static constexpr std::size_t static_size = dynamic_extent;

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

  /// @brief Â = A ×₃ Φ_p.
  template <scalar T> void forward(tensor3_view<const T> a, tensor3_view<T> ahat) const {
    if (detail::use_fftw(path, a.p(), fftw_min_tubes_dct)) return fftw_pass<T>(a, ahat, true);
    // Â = A·Φᵀ: the GEMM's right factor is Φᵀ.
    detail::apply_along_tubes(a, *cached<T>("dct-forward", a.p(), [](auto phi) { return phi.transpose().eval(); }),
                              ahat);
  }
  /// @brief A = Â ×₃ Φ_pᵀ.
  template <scalar T> void inverse(tensor3_view<const T> ahat, tensor3_view<T> a) const {
    if (detail::use_fftw(path, ahat.p(), fftw_min_tubes_dct)) return fftw_pass<T>(ahat, a, false);
    detail::apply_along_tubes(ahat, *cached<T>("dct-inverse", ahat.p(), [](auto phi) { return phi; }), a);
  }

 private:
  template <class T, class F>
  static auto cached(const char* kind, std::size_t p, F shape) {
    return detail::cached_matrix<real_t<T>>(kind, p, [&] { return shape(matrix(p)).template cast<real_t<T>>().eval(); });
  }

  // FFTW's REDFT10 is the unnormalized DCT-II, Y_k = 2·Σ_j x_j cos(π(2j+1)k/(2p)), and REDFT01 its inverse
  // pattern x_j = Y_0 + 2·Σ_{k≥1} Y_k cos(…); one scaling pass over the output makes both orthonormal.
  // Complex tensors are transformed as real ones with twice the rows (Φ is real).
  template <class T>
  static void fftw_pass([[maybe_unused]] tensor3_view<const T> in, [[maybe_unused]] tensor3_view<T> out,
                        [[maybe_unused]] bool forward) {
#if TPROD_HAS_FFTW
    using R = real_t<T>;
    const std::size_t p = in.p(), rows = in.m() * in.n() * (is_complex_v<T> ? 2 : 1);
    const R* src = reinterpret_cast<const R*>(in.data());
    R* dst = reinterpret_cast<R*>(out.data());
    detail::fftw::execute<R>(forward ? detail::fftw::kind::dct2 : detail::fftw::kind::dct3, p, rows, src, dst);
    Eigen::Map<detail::dense_matrix<R>> o(dst, Eigen::Index(rows), Eigen::Index(p));
    const R s_rest = R(1 / std::sqrt(2.0 * double(p)));
    if (forward) {  // c_0 = Y_0/(2√p), c_k = Y_k/√(2p)
      o.col(0) *= R(1 / (2 * std::sqrt(double(p))));
      o.rightCols(Eigen::Index(p - 1)) *= s_rest;
    } else {  // x_j = REDFT01(c)_j/√(2p) + c_0·(1/√p − 1/√(2p))
      Eigen::Map<const detail::dense_matrix<R>> c(src, Eigen::Index(rows), Eigen::Index(p));
      const R s0 = R(1 / std::sqrt(double(p))) - s_rest;
      o = (o * s_rest).colwise() + c.col(0) * s0;
    }
#endif
  }
};

}  // namespace tprod
