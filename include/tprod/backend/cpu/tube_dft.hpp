#pragma once
/// @file tube_dft.hpp
/// @brief The DFT of real tubes of length p ≤ tube_kernel_max_tubes on the tube kernel: the half spectrum
/// Â_k = Σ_j x_j·e^{−2πi·jk/p}, k < q = ⌊p/2⌋ + 1, and its inverse back to real tubes, tile by tile
/// (tube_kernel.hpp), the tensor read once and written once.
///
/// Why not the GEMM or FFTW: the GEMM path multiplies by the complex p×q factor as two real GEMMs writing strided
/// halves of the complex output, and FFTW's strided batches of short tubes run at 6–35× a copy of the same bytes
/// (docs/performance.md). Here the real input's symmetry halves the work, as the DCT's even/odd split does: with
/// θ = 2π·tk/p and the pairs (t, p − t),
///   e_0 = x_0,  e_t = x_t + x_{p−t},  o_t = x_t − x_{p−t}  (0 < t < p/2),  e_{p/2} = x_{p/2} (p even),
///   Re Â_k = Σ_{t<q} e_t·cos θ,   Im Â_k = −Σ_{0<t<p/2} o_t·sin θ,
/// a q×q and an ⌈p/2−1⌉-square product (about p²/2 multiply-adds per tube against 2pq for the complex factor).
/// The inverse keeps the real part, x_j = (1/p)·Σ_{k<q} w_k·Re(Â_k·e^{iθ}) with w_k = 2 for the slices that stand
/// for their conjugate partners (dft::slice_weight), so Im Â_0 and Im Â_{p/2} are not read:
///   E_j = (1/p)·Σ_{k<q} w_k·Re Â_k·cos θ,   O_j = −(1/p)·Σ_{0<k<p/2} w_k·Im Â_k·sin θ,
///   x_0 = E_0,  x_j = E_j + O_j,  x_{p−j} = E_j − O_j  (0 < j < p/2),  x_{p/2} = E_{p/2} (p even).
/// Every output is a short sum of products, so the rounding is that of the dense product.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <memory>
#include <numbers>
#include <vector>

#include "tprod/backend/cpu/tube_kernel.hpp"

namespace tprod::backend::cpu {

namespace tube_kernel {

/// The four factors of the real DFT of length p, in one cached vector: forward cos (q×q) and sin (h×h, h the
/// number of pairs), then inverse cos and sin, column-major as multiply() reads them, scales folded in.
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
    constexpr int V = tile_rows<R>;
    columns<R> e{scratch, V}, o{e.col(q_), V}, re{o.col(h_), V}, im{re.col(q_), V};
    std::copy_n(x.col(0), V, e.col(0));
    for (int t = 1; t <= h_; ++t) sum_and_difference(x.col(t), x.col(p_ - t), e.col(t), o.col(t - 1));
    if (p_ % 2 == 0) std::copy_n(x.col(p_ / 2), V, e.col(q_ - 1));
    multiply<R>(as_const(e), q_, forward_cos(), q_, re);
    multiply<R>(as_const(o), h_, forward_sin(), h_, {im.col(1), V});
    std::fill_n(im.col(0), V, R(0));
    if (p_ % 2 == 0) std::fill_n(im.col(q_ - 1), V, R(0));
    for (int k = 0; k < q_; ++k) interleave(re.col(k), im.col(k), y.col(k));
  }

  /// The p real columns x of the tile's inverse, from its q complex columns y.
  void inverse(columns<const R> y, R* scratch, columns<R> x) const {
    constexpr int V = tile_rows<R>;
    columns<R> re{scratch, V}, im{re.col(q_), V}, even{im.col(q_), V}, odd{even.col(q_), V};
    for (int k = 0; k < q_; ++k) deinterleave(y.col(k), re.col(k), im.col(k));
    multiply<R>(as_const(re), q_, inverse_cos(), q_, even);
    multiply<R>({im.col(1), V}, h_, inverse_sin(), h_, odd);
    std::copy_n(even.col(0), V, x.col(0));
    for (int j = 1; j <= h_; ++j) sum_and_difference(even.col(j), odd.col(j - 1), x.col(j), x.col(p_ - j));
    if (p_ % 2 == 0) std::copy_n(even.col(q_ - 1), V, x.col(p_ / 2));
  }

  /// Reals of scratch a tile needs: 4 columns per output.
  static constexpr std::size_t scratch_reals = 4 * (tube_kernel_max_tubes / 2 + 1) * std::size_t(tile_rows<R>);

 private:
  const R* forward_cos() const { return factors_->data(); }
  const R* forward_sin() const { return forward_cos() + q_ * q_; }
  const R* inverse_cos() const { return forward_sin() + h_ * h_; }
  const R* inverse_sin() const { return inverse_cos() + q_ * q_; }

  static columns<const R> as_const(columns<R> c) { return {c.data, c.ld}; }
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

  static tprod::detail::dense_matrix<R> build(int p) {
    const int q = p / 2 + 1, h = (p - 1) / 2;
    const auto angle = [p](int t, int k) { return 2 * std::numbers::pi * double((t * k) % p) / double(p); };
    const auto weight = [p](int k) { return (k == 0 || 2 * k == p) ? 1.0 : 2.0; };
    std::vector<double> all;
    const auto append = [&](int n_in, int n_out, int first, auto coefficient) {  // m[t + k·n_in]
      for (int k = 0; k < n_out; ++k)
        for (int t = 0; t < n_in; ++t) all.push_back(coefficient(t + first, k + first));
    };
    append(q, q, 0, [&](int t, int k) { return std::cos(angle(t, k)); });
    append(h, h, 1, [&](int t, int k) { return -std::sin(angle(t, k)); });
    append(q, q, 0, [&](int k, int j) { return weight(k) / p * std::cos(angle(j, k)); });
    append(h, h, 1, [&](int k, int j) { return -weight(k) / p * std::sin(angle(j, k)); });
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

}  // namespace tprod::backend::cpu
