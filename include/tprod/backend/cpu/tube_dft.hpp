// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tube_dft.hpp
/// @brief The DFT along tubes of length p ≤ tube_kernel_max_tubes on the tube kernel: for real tubes the half
/// spectrum Â_k = Σ_j x_j·e^{−2πi·jk/p}, k < q = ⌊p/2⌋ + 1, and its inverse back to real tubes; for complex tubes
/// the whole spectrum and its inverse, from the real and imaginary parts' half spectra. Tile by tile
/// (tube_kernel.hpp), the tensor read once and written once.
///
/// Why not the GEMM or FFTW: the GEMM path multiplies by the complex p×q factor as two real GEMMs writing strided
/// halves of the complex output, and FFTW's strided batches of short tubes were no faster: 3.4–36× a copy of the
/// same bytes (docs/performance.md). Here the real input's symmetry halves the work, as the DCT's even/odd split does: with
/// θ = 2π·tk/p and the pairs (t, p − t),
///   e_0 = x_0,  e_t = x_t + x_{p−t},  o_t = x_t − x_{p−t}  (0 < t < p/2),  e_{p/2} = x_{p/2} (p even),
///   Re Â_k = Σ_{t<q} e_t·cos θ,   Im Â_k = −Σ_{0<t<p/2} o_t·sin θ,
/// a q×q and an h×h product, h = ⌈p/2⌉ − 1 pairs (about p²/2 multiply-adds per tube against 2pq for the complex
/// factor).
/// The inverse keeps the real part, x_j = (1/p)·Σ_{k<q} w_k·Re(Â_k·e^{iθ}) with w_k = 2 for the slices that stand
/// for their conjugate partners (dft::slice_weight), so Im Â_0 and Im Â_{p/2} are not read:
///   E_j = (1/p)·Σ_{k<q} w_k·Re Â_k·cos θ,   O_j = −(1/p)·Σ_{0<k<p/2} w_k·Im Â_k·sin θ,
///   x_0 = E_0,  x_j = E_j + O_j,  x_{p−j} = E_j − O_j  (0 < j < p/2),  x_{p/2} = E_{p/2} (p even).
/// Every output is a short sum of products, so the rounding is that of the dense product.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "tprod/backend/cpu/tube_kernel.hpp"
#include "tprod/transform/dft.hpp"

namespace tprod::backend::cpu {

namespace tube_kernel {

/// The four factors of the real DFT of length p, in one cached vector: forward cos (q×q) and sin (h×h, h the
/// number of pairs), then inverse cos and sin, column-major as multiply() reads them, scales folded in. Complex
/// tubes z = a + i·b go through the same two steps for a and b: Ẑ = â + i·b̂, where the half spectra of a and b
/// give the whole of Ẑ (â_{p−k} = conj(â_k)), and back, from the Hermitian parts (Ẑ_k + conj Ẑ_{p−k})/2 = â_k and
/// (Ẑ_k − conj Ẑ_{p−k})/(2i) = b̂_k: about p² multiply-adds per complex tube against 4p² for the complex factor.
template <class R>
class real_dft_plan {
 public:
  explicit real_dft_plan(int p)
      : p_(p),
        q_(p / 2 + 1),
        h_((p - 1) / 2),
        factors_(tprod::detail::cached_matrix<R>("tube-kernel-real-dft", std::size_t(p), [p] { return build(p); })) {}

  /// The half spectrum of the tile x (p real columns) into y (q complex columns, interleaved).
  void forward(columns<const R> x, R* scratch, columns<R> y) const {
    columns<R> re{scratch, V}, im{re.col(q_), V};
    half_spectrum(x, im.col(q_), re, im);
    for (int k = 0; k < q_; ++k) interleave(re.col(k), im.col(k), y.col(k));
  }

  /// The p real columns x of the tile's inverse, from its q complex columns y.
  void inverse(columns<const R> y, R* scratch, columns<R> x) const {
    columns<R> re{scratch, V}, im{re.col(q_), V};
    for (int k = 0; k < q_; ++k) deinterleave(y.col(k), re.col(k), im.col(k));
    from_half_spectrum(as_const(re), as_const(im), im.col(q_), x);
  }

  /// The whole spectrum y of the tile z (p complex columns each): Ẑ_k = â_k + i·b̂_k, and for k = p − k′ (k′ ≤ h)
  /// Ẑ_k = conj(â_k′) + i·conj(b̂_k′).
  void forward_complex(columns<const R> z, R* scratch, columns<R> y) const {
    columns<R> a{scratch, V}, b{a.col(p_), V}, ra{b.col(p_), V}, ia{ra.col(q_), V}, rb{ia.col(q_), V},
        ib{rb.col(q_), V};
    R* rest = ib.col(q_);
    for (int t = 0; t < p_; ++t) deinterleave(z.col(t), a.col(t), b.col(t));
    half_spectrum(as_const(a), rest, ra, ia);
    half_spectrum(as_const(b), rest, rb, ib);
    for (int k = 0; k < q_; ++k) interleave_sums(ra.col(k), ib.col(k), R(-1), ia.col(k), rb.col(k), R(1), y.col(k));
    for (int k = 1; k <= h_; ++k)
      interleave_sums(ra.col(k), ib.col(k), R(1), rb.col(k), ia.col(k), R(-1), y.col(p_ - k));
  }

  /// The p complex columns z of the tile's inverse, from its whole spectrum y: a = from_half_spectrum(â) and
  /// b = from_half_spectrum(b̂), â and b̂ the Hermitian parts of Ẑ (their k = 0 and p/2 terms are real).
  void inverse_complex(columns<const R> y, R* scratch, columns<R> z) const {
    columns<R> zr{scratch, V}, zi{zr.col(p_), V}, ra{zi.col(p_), V}, ia{ra.col(q_), V}, rb{ia.col(q_), V},
        ib{rb.col(q_), V};
    R* rest = ib.col(q_);
    for (int k = 0; k < p_; ++k) deinterleave(y.col(k), zr.col(k), zi.col(k));
    std::copy_n(zr.col(0), V, ra.col(0));
    std::copy_n(zi.col(0), V, rb.col(0));
    // â_k = ((zr_k + zr_{p−k}) + i·(zi_k − zi_{p−k}))/2,  b̂_k = ((zi_k + zi_{p−k}) + i·(zr_{p−k} − zr_k))/2
    for (int k = 1; k <= h_; ++k) {
      half_sum_and_difference(zr.col(p_ - k), zr.col(k), ra.col(k), ib.col(k));
      half_sum_and_difference(zi.col(k), zi.col(p_ - k), rb.col(k), ia.col(k));
    }
    if (p_ % 2 == 0) {
      std::copy_n(zr.col(p_ / 2), V, ra.col(q_ - 1));
      std::copy_n(zi.col(p_ / 2), V, rb.col(q_ - 1));
    }
    columns<R> a = zr, b = zi;  // zr and zi are read: their columns take a and b
    from_half_spectrum(as_const(ra), as_const(ia), rest, a);
    from_half_spectrum(as_const(rb), as_const(ib), rest, b);
    for (int t = 0; t < p_; ++t) interleave(a.col(t), b.col(t), z.col(t));
  }

  /// Reals of scratch a tile needs (forward_complex and inverse_complex: 2p + 4q columns, then the q + h of a
  /// half spectrum's own).
  static constexpr std::size_t scratch_reals =
      (2 * tube_kernel_max_tubes + 6 * (tube_kernel_max_tubes / 2 + 1)) * std::size_t(tile_rows<R>);

 private:
  static constexpr int V = tile_rows<R>;
  const R* forward_cos() const { return factors_->data(); }
  const R* forward_sin() const { return forward_cos() + q_ * q_; }
  const R* inverse_cos() const { return forward_sin() + h_ * h_; }
  const R* inverse_sin() const { return inverse_cos() + q_ * q_; }

  /// re (q columns) and im (q columns, 0 where the spectrum is real) of the half spectrum of the p real columns x;
  /// `scratch` holds the q sums and h differences.
  void half_spectrum(columns<const R> x, R* scratch, columns<R> re, columns<R> im) const {
    columns<R> e{scratch, V}, o{e.col(q_), V};
    std::copy_n(x.col(0), V, e.col(0));
    for (int t = 1; t <= h_; ++t) sum_and_difference(x.col(t), x.col(p_ - t), e.col(t), o.col(t - 1));
    if (p_ % 2 == 0) std::copy_n(x.col(p_ / 2), V, e.col(q_ - 1));
    multiply<R>(as_const(e), q_, forward_cos(), q_, re);
    multiply<R>(as_const(o), h_, forward_sin(), h_, {im.col(1), V});
    std::fill_n(im.col(0), V, R(0));
    if (p_ % 2 == 0) std::fill_n(im.col(q_ - 1), V, R(0));
  }

  /// The p real columns x whose half spectrum has real parts re and imaginary parts im (columns 1…h read).
  void from_half_spectrum(columns<const R> re, columns<const R> im, R* scratch, columns<R> x) const {
    columns<R> even{scratch, V}, odd{even.col(q_), V};
    multiply<R>(re, q_, inverse_cos(), q_, even);
    multiply<R>({im.col(1), V}, h_, inverse_sin(), h_, odd);
    std::copy_n(even.col(0), V, x.col(0));
    for (int j = 1; j <= h_; ++j) sum_and_difference(even.col(j), odd.col(j - 1), x.col(j), x.col(p_ - j));
    if (p_ % 2 == 0) std::copy_n(even.col(q_ - 1), V, x.col(p_ / 2));
  }

  static columns<const R> as_const(columns<R> c) { return {c.data, c.ld}; }
  /// sum = (a + b)/2, difference = (a − b)/2 over a tile column.
  static EIGEN_ALWAYS_INLINE void half_sum_and_difference(const R* a, const R* b, R* sum, R* difference) {
    using namespace Eigen::internal;
    using P = packet<R>;
    const P half = pset1<P>(R(0.5));
    for (int w = 0; w < V; w += width<R>) {
      const P x = ploadu<P>(a + w), y = ploadu<P>(b + w);
      pstoreu(sum + w, pmul(half, padd(x, y)));
      pstoreu(difference + w, pmul(half, psub(x, y)));
    }
  }
  /// z[2w] = a[w] + sb·b[w], z[2w + 1] = c[w] + sd·d[w] (sb, sd = ±1).
  static EIGEN_ALWAYS_INLINE void interleave_sums(const R* __restrict a, const R* __restrict b, R sb,
                                                  const R* __restrict c, const R* __restrict d, R sd,
                                                  R* __restrict z) {
#pragma omp simd
    for (int w = 0; w < V; ++w) {
      z[2 * w] = a[w] + sb * b[w];
      z[2 * w + 1] = c[w] + sd * d[w];
    }
  }
  /// z[2w] = re[w], z[2w + 1] = im[w] over a tile's rows. `omp simd` makes GCC vectorise it with two-source
  /// permutes at -O1 and -O2 too (without it, -O2 built each packet from scalar inserts: the DFT of 256×256×4
  /// floats took 1.8× as long).
  static EIGEN_ALWAYS_INLINE void interleave(const R* __restrict re, const R* __restrict im, R* __restrict z) {
#pragma omp simd
    for (int w = 0; w < tile_rows<R>; ++w) {
      z[2 * w] = re[w];
      z[2 * w + 1] = im[w];
    }
  }
  static EIGEN_ALWAYS_INLINE void deinterleave(const R* __restrict z, R* __restrict re, R* __restrict im) {
#pragma omp simd
    for (int w = 0; w < tile_rows<R>; ++w) {
      re[w] = z[2 * w];
      im[w] = z[2 * w + 1];
    }
  }

  /// From dft's own definitions: F_p(k, t) = e^{−iθ} = cos θ − i·sin θ (dft::root), so the forward factors are
  /// Re F_p and Im F_p; the inverse's N(k, j) = w_k/p·e^{iθ} (dft::inverse_factor, w_k = dft::slice_weight), so
  /// they are Re N and −Im N.
  static tprod::detail::dense_matrix<R> build(int p) {
    const int q = p / 2 + 1, h = (p - 1) / 2;
    const auto root = [p](int t, int k, double sign) { return dft::root(std::size_t(t * k), std::size_t(p), sign); };
    const auto n = [&](int k, int j) {
      return dft{}.slice_weight<R>(std::size_t(k), std::size_t(p)) / p * root(j, k, 1.0);
    };
    std::vector<double> all;
    const auto append = [&](int n_in, int n_out, int first, auto coefficient) {  // m[t + k·n_in]
      for (int k = 0; k < n_out; ++k)
        for (int t = 0; t < n_in; ++t) all.push_back(coefficient(t + first, k + first));
    };
    append(q, q, 0, [&](int t, int k) { return root(t, k, -1.0).real(); });
    append(h, h, 1, [&](int t, int k) { return root(t, k, -1.0).imag(); });
    append(q, q, 0, [&](int k, int j) { return n(k, j).real(); });
    append(h, h, 1, [&](int k, int j) { return -n(k, j).imag(); });
    tprod::detail::dense_matrix<R> v(Eigen::Index(all.size()), 1);
    for (std::size_t i = 0; i < all.size(); ++i) v(Eigen::Index(i)) = R(all[i]);
    return v;
  }

  int p_, q_, h_;
  std::shared_ptr<const tprod::detail::dense_matrix<R>> factors_;
};

}  // namespace tube_kernel

/// @brief The DFT of real tubes of length p ≤ tube_kernel_max_tubes: the half spectrum out (rows × (⌊p/2⌋ + 1),
/// complex) of the (rows × p) real in, both column-major (the tensors' tube unfoldings).
template <class R>
void tube_real_dft(const R* in, std::complex<R>* out, std::size_t rows, std::size_t p, std::size_t threads) {
  const tube_kernel::real_dft_plan<R> plan{int(p)};
  tube_kernel::for_each_tile<R>(in, int(p), out, int(p / 2 + 1), rows, threads,
                                [&](tube_kernel::columns<const R> x, tube_kernel::columns<R> y) {
                                  alignas(64) R scratch[tube_kernel::real_dft_plan<R>::scratch_reals];
                                  plan.forward(x, scratch, y);
                                });
}

/// @brief The inverse of tube_real_dft: the real tubes of length p whose half spectrum is `in`, taking the real
/// part (the imaginary parts of slices 0 and p/2 are not read).
template <class R>
void tube_real_idft(const std::complex<R>* in, R* out, std::size_t rows, std::size_t p, std::size_t threads) {
  const tube_kernel::real_dft_plan<R> plan{int(p)};
  tube_kernel::for_each_tile<R>(in, int(p / 2 + 1), out, int(p), rows, threads,
                                [&](tube_kernel::columns<const R> y, tube_kernel::columns<R> x) {
                                  alignas(64) R scratch[tube_kernel::real_dft_plan<R>::scratch_reals];
                                  plan.inverse(y, scratch, x);
                                });
}

/// @brief The DFT of complex tubes of length p ≤ tube_kernel_max_tubes (forward, the whole spectrum) or its inverse,
/// on the (rows × p) complex column-major unfolding; in == out is allowed.
template <class R>
void tube_complex_dft(const std::complex<R>* in, std::complex<R>* out, std::size_t rows, std::size_t p, bool forward,
                      std::size_t threads) {
  const tube_kernel::real_dft_plan<R> plan{int(p)};
  tube_kernel::for_each_tile<R>(in, int(p), out, int(p), rows, threads,
                                [&](tube_kernel::columns<const R> src, tube_kernel::columns<R> dst) {
                                  alignas(64) R scratch[tube_kernel::real_dft_plan<R>::scratch_reals];
                                  if (forward)
                                    plan.forward_complex(src, scratch, dst);
                                  else
                                    plan.inverse_complex(src, scratch, dst);
                                });
}

}  // namespace tprod::backend::cpu
