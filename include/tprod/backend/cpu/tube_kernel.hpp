// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tube_kernel.hpp
/// @brief Short-tube transforms at memory speed: OUT = IN · Mt for tubes of length p ≤ tube_kernel_max_tubes, and
/// the orthonormal DCT-II and its inverse by a recursive even/odd split, both in tiles of tile_rows rows, the
/// tensor read once and written once (tile by tile in its own memory, or panel by panel for long tubes in large
/// tensors).
///
/// Why not Eigen's GEMM: on a (m·n)×p by p×q product with p ≤ 64 Eigen packs both operands and its kernel is tuned
/// for long inner dimensions; it ran at a third of the machine's FMA rate and 3.4× a copy of the same bytes
/// (docs/performance.md). Here a tile of 2 SIMD packets of rows (32 floats or 16 doubles with AVX-512; the DCT's
/// tiles are taller, dct_tile_packets) is held in L1, each output column accumulates in registers over the p inputs
/// (the factor's entries broadcast), and the tiles are the units of the threads. Vectorised across tubes with
/// Eigen's packets, so it follows the -march the user compiles with; no intrinsics.
///
/// The DCT-II of length n (unnormalized, X_k = Σ_t x_t·cos(π(2t+1)k/(2n))) splits, for n even and h = n/2, as
///   u_t = x_t + x_{n−1−t},  v_t = x_t − x_{n−1−t}   (t < h),
///   X_{2k} = DCT-II_h(u)_k,  X_{2k+1} = Σ_t v_t·cos(π(2t+1)(2k+1)/(2n))   (a dense h×h DCT-IV),
/// applied again to the even half down to length 8, after which a dense DCT-II of length 4 (or of the odd length
/// that remains) finishes. The orthonormal scales (√(1/p) for output 0, √(2/p) for the others) are folded into the
/// dense factors. At p = 64 that is 1376 multiply-adds per tube against 4096 for Φ and 2048 for one split; every
/// output is still a short sum of products of the inputs with cosines (no recurrences), so the rounding is that of
/// the dense product.
/// The inverse (Φ⁻¹ = Φᵀ) runs the same steps transposed and in reverse order.
#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <complex>
#include <cstddef>
#include <memory>
#include <numbers>
#include <type_traits>
#include <vector>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/transform/detail/matrix_cache.hpp"

namespace tprod::backend::cpu {

/// @brief The longest tubes (and the most outputs) the tube kernel takes: its p×q factor and a tile's inputs and
/// outputs then stay in L1/L2 (64×64 doubles = 32 KiB); longer tubes go to Eigen's GEMM or FFTW.
inline constexpr std::size_t tube_kernel_max_tubes = 64;

namespace tube_kernel {

/// Whether the kernel applies to the real scalar R (Eigen vectorises it).
template <class R>
inline constexpr bool supported = Eigen::internal::packet_traits<R>::Vectorizable &&
                                  (std::is_same_v<R, float> || std::is_same_v<R, double>);

template <class R>
using packet = typename Eigen::internal::packet_traits<R>::type;
/// Elements of R per SIMD packet.
template <class R>
inline constexpr int width = Eigen::internal::unpacket_traits<packet<R>>::size;
/// Packets of rows in a tile of the GEMM and DFT kernels: two, so that the tile's inputs are reused by many output
/// columns in registers (their p·q multiply-adds per row bound them, not the memory).
inline constexpr int gemm_tile_packets = 2;
/// Packets of rows in a tile of the split DCT: 8 on 32-register machines (AVX-512), 4 on 16. After its splits the
/// DCT does few multiply-adds per element (6 at p = 16), and the order in which a tile walks the tensor's columns
/// bounds it: a tile reads and writes p columns a tensor's slice apart (256 KiB for 256×256 slices), and runs of 8
/// cache lines per column ran at 1.2× a memcpy of the same bytes where runs of 2 took 3× (2-core AMD EPYC, AVX-512;
/// docs/design.md). The 256×256×16 float DCT took 134 µs in tiles of 8 packets against 237 in tiles of 2; built
/// for AVX2 (16 registers, tiles of 4 packets) 0.65–0.8× the time of tiles of 2 at p = 16, 0.95–1.06× at 32 and 64.
inline constexpr int dct_tile_packets = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS >= 32 ? 8 : 4;
/// Rows per tile of TP packets.
template <class R, int TP = gemm_tile_packets>
inline constexpr int tile_rows = TP * width<R>;
/// Output columns a tile of TP packets accumulates at once: half the vector registers hold the accumulators (8
/// columns × 2 packets on 32-register machines, 4 on 16; 2 columns in the DCT's taller tiles).
template <int TP = gemm_tile_packets>
inline constexpr int outputs = EIGEN_ARCH_DEFAULT_NUMBER_OF_REGISTERS / (2 * TP);

/// A tile of columns, in the tensor or in a thread's local panel: `tile_rows` rows each, column j at data + j·ld.
template <class R>
struct columns {
  R* data;
  std::ptrdiff_t ld;
  R* col(std::ptrdiff_t j) const { return data + j * ld; }
};

/// Where the accumulators of output column k start: at zero (the default), at bias[k] on every row, or at the
/// output's own values (OUT += …).
template <class R>
struct start_values {
  const R* bias = nullptr;   ///< when not null, output column k starts at bias[k]
  bool from_output = false;  ///< when set, output column k starts at its own values
};

/// dst column k = start_k + Σ_{t<n} m[t + k·n]·src column t for the K columns k0 ≤ k < k0 + K over a tile of TP
/// packets of rows, accumulated in registers.
template <int K, int TP, class R>
EIGEN_ALWAYS_INLINE void accumulate(columns<const R> src, int n, const R* m, int k0, columns<R> dst,
                                    start_values<R> start) {
  using namespace Eigen::internal;
  using P = packet<R>;
  constexpr int W = width<R>;
  // The accumulators must live in registers: the unroll pragmas make that so at -O2 too (without them, -O2 kept
  // them on the stack and ran at half the speed of -O3). At -O1, CI's setting for tprod::instances, the kernel is
  // still about 1.5× slower than at -O2.
  P acc[K][TP];
  if (start.from_output) {
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
      for (int w = 0; w < TP; ++w) acc[k][w] = ploadu<P>(dst.col(k0 + k) + w * W);
  } else {
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
      for (int w = 0; w < TP; ++w) acc[k][w] = pset1<P>(start.bias ? start.bias[k0 + k] : R(0));
  }
  for (int t = 0; t < n; ++t) {
    const R* x = src.col(t);
    P xs[TP];
#pragma GCC unroll 8
    for (int w = 0; w < TP; ++w) xs[w] = ploadu<P>(x + w * W);
#pragma GCC unroll 16
    for (int k = 0; k < K; ++k) {
      const P c = pset1<P>(m[t + (k0 + k) * n]);
#pragma GCC unroll 8
      for (int w = 0; w < TP; ++w) acc[k][w] = pmadd(c, xs[w], acc[k][w]);
    }
  }
#pragma GCC unroll 16
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
    for (int w = 0; w < TP; ++w) pstoreu(dst.col(k0 + k) + w * W, acc[k][w]);
}

/// dst columns k < q = start_k + Σ_{t<n} m(t, k)·src column t, with m an n×q column-major factor, over a tile of
/// TP packets of rows.
template <class R, int TP = gemm_tile_packets>
void multiply(columns<const R> src, int n, const R* m, int q, columns<R> dst, start_values<R> start = {}) {
  constexpr int K = outputs<TP>;
  int k = 0;
  for (; k + K <= q; k += K) accumulate<K, TP>(src, n, m, k, dst, start);
  if constexpr (K > 4)
    if (k + 4 <= q) accumulate<4, TP>(src, n, m, k, dst, start), k += 4;
  if constexpr (K > 2)
    if (k + 2 <= q) accumulate<2, TP>(src, n, m, k, dst, start), k += 2;
  if constexpr (K > 1)
    if (k < q) accumulate<1, TP>(src, n, m, k, dst, start);
}

/// multiply() for small_gemm, inlined into a function of its own name, so that a profile tells the GEMM tiles (the
/// nn layers' slice products, and tube_multiply's general transforms) from the DCT's and the DFT's
/// (scripts/profile-train-step.py sorts samples by function name).
template <class R>
#if defined(__GNUC__)
__attribute__((flatten, noinline))
#endif
void gemm_tile(columns<const R> src, int n, const R* m, int q, columns<R> dst, start_values<R> start) {
  multiply<R>(src, n, m, q, dst, start);
}

/// The butterfly of one tile column pair: sum = a + b, difference = a − b, over a tile of TP packets of rows.
template <class R, int TP = gemm_tile_packets>
EIGEN_ALWAYS_INLINE void sum_and_difference(const R* a, const R* b, R* sum, R* difference) {
  using namespace Eigen::internal;
  using P = packet<R>;
  for (int w = 0; w < tile_rows<R, TP>; w += width<R>) {
    const P x = ploadu<P>(a + w), y = ploadu<P>(b + w);
    pstoreu(sum + w, padd(x, y));
    pstoreu(difference + w, psub(x, y));
  }
}

/// The factors of the split DCT of length p, in one cached vector: for each even length n = p, p/2, … the h×h
/// DCT-IV factor of the odd outputs (forward form, then transposed), then the dense DCT-II of the odd length that
/// remains (forward, then transposed), every one scaled for orthonormal outputs. Its tiles are dct_tile_packets
/// packets of rows.
template <class R>
class dct_plan {
 public:
  static constexpr int TP = dct_tile_packets;
  /// Rows per tile.
  static constexpr int V = tile_rows<R, TP>;

  explicit dct_plan(int p)
      : factors_(tprod::detail::cached_matrix<R>("tube-kernel-dct", std::size_t(p), [p] { return build(p); })) {}

  /// Out column k·stride of the unnormalized-then-scaled DCT-II of the n columns of x.
  void forward(columns<const R> x, int n, int stride, const R* f, R* scratch, columns<R> out) const {
    if (!splits(n)) {  // the dense DCT-II of what remains
      multiply<R, TP>(x, n, f, n, {out.data, out.ld * stride});
      return;
    }
    const int h = n / 2;
    columns<R> u{scratch, V}, v{scratch + h * V, V};
    for (int t = 0; t < h; ++t) sum_and_difference<R, TP>(x.col(t), x.col(n - 1 - t), u.col(t), v.col(t));
    multiply<R, TP>(as_const(v), h, f, h, {out.data + out.ld * stride, out.ld * 2 * stride});
    forward(as_const(u), h, 2 * stride, f + 2 * h * h, scratch + 2 * h * V, out);
  }

  /// The n columns x of the inverse, from the columns k·stride of y.
  void inverse(columns<const R> y, int n, int stride, const R* f, R* scratch, columns<R> x) const {
    if (!splits(n)) {
      multiply<R, TP>({y.data, y.ld * stride}, n, f + n * n, n, x);
      return;
    }
    const int h = n / 2;
    columns<R> a{scratch, V}, b{scratch + h * V, V};
    multiply<R, TP>({y.data + y.ld * stride, y.ld * 2 * stride}, h, f + h * h, h, b);
    inverse(y, h, 2 * stride, f + 2 * h * h, scratch + 2 * h * V, a);
    for (int t = 0; t < h; ++t) sum_and_difference<R, TP>(a.col(t), b.col(t), x.col(t), x.col(n - 1 - t));
  }

  const R* factors() const { return factors_->data(); }

 private:
  static columns<const R> as_const(columns<R> c) { return {c.data, c.ld}; }
  /// Whether length n splits once more: down to 8, whose split leaves 4×4 products (measured in tiles of 8
  /// packets: stopping at 16 took 1.3×, and splitting 4 as well 1.35×, the time of stopping at 8 at p = 16).
  static constexpr bool splits(int n) { return n % 2 == 0 && n >= 8; }

  static tprod::detail::dense_matrix<R> build(int p) {
    const double s_first = std::sqrt(1.0 / p), s_rest = std::sqrt(2.0 / p);
    std::vector<double> all;
    auto append = [&](int n_in, int n_out, auto coefficient) {  // forward m[t + k·n_in], then its transpose
      for (int k = 0; k < n_out; ++k)
        for (int t = 0; t < n_in; ++t) all.push_back(coefficient(t, k));
      for (int t = 0; t < n_in; ++t)
        for (int k = 0; k < n_out; ++k) all.push_back(coefficient(t, k));
    };
    int n = p;
    for (; splits(n); n /= 2)
      append(n / 2, n / 2, [&](int t, int k) {
        return s_rest * std::cos(std::numbers::pi * double((2 * t + 1) * (2 * k + 1)) / double(2 * n));
      });
    append(n, n, [&](int t, int k) {
      return (k == 0 ? s_first : s_rest) * std::cos(std::numbers::pi * double((2 * t + 1) * k) / double(2 * n));
    });
    tprod::detail::dense_matrix<R> v(Eigen::Index(all.size()), 1);
    for (std::size_t i = 0; i < all.size(); ++i) v(Eigen::Index(i)) = R(all[i]);
    return v;
  }

  std::shared_ptr<const tprod::detail::dense_matrix<R>> factors_;
};

/// Elements of a panel of tiles of V rows: the rows a thread copies in (and out) at once, 16 KiB of inputs and as
/// much of outputs, or one tile of the widest row where that is more (p = tube_kernel_max_tubes reals in, or its
/// half spectrum's p/2 + 1 complex numbers out).
template <class R, int V = tile_rows<R>>
inline constexpr std::size_t panel_elements =
    std::max((std::size_t(16) << 10) / sizeof(R), std::size_t(V) * (tube_kernel_max_tubes + 2));

/// A tensor runs its tiles straight from and into its own memory when its tubes are short (direct_max_columns
/// inputs and outputs), or out of place when it is small (direct_max_bytes of inputs or of outputs); otherwise
/// through panels. Measured on the DCT (float and double, docs/design.md), direct tiles took, as a share of the
/// panels' time: out of place, 0.6–1.0× at p ≤ 16 for every size (64×64 to 1024×1024); at p = 32 and 64 0.7–0.9×
/// up to 4 MiB on two threads, but 1.07–1.10× for a 4 MiB forward inside a one-thread product (hence 1 MiB) and
/// 1.25–1.35× from 8 MiB; in place, where each tile first copies its inputs, 0.84–1.0× at p ≤ 16 and 1.1–1.3× at
/// p = 32 and 64. Those were tiles of 2 packets; the DCT's taller tiles (dct_tile_packets) run in the tensor's memory
/// at every p and size: against panels they took 0.65–0.85× at p = 24 to 64 on 256×256 slices, 0.92× on 1024×1024,
/// and 0.75–0.9× in place (float, AVX-512, two threads and one).
inline constexpr int direct_max_columns = 16;
/// @copydoc direct_max_columns
inline constexpr std::size_t direct_max_bytes = std::size_t(1) << 20;

/// Runs tile(src, dst) over the tiles of TP packets of rows (tile_rows<R, TP>) of `rows` rows on up to `threads`
/// threads, for In and Out each R or std::complex<R> (a tile then sees a complex column as 2·tile_rows interleaved
/// reals: ld counts reals). For tiles taller than gemm_tile_packets, and where direct_max_columns or
/// direct_max_bytes allow, straight from and into the tensor (in place, each tile's inputs are first copied to L1: a
/// tile of the dense product writes its first outputs before it has read its inputs for the last ones), the last
/// partial tile through a panel. Otherwise through panels: each thread copies a panel of rows of
/// every input column into local memory (long contiguous reads where a tile reads p columns whose stride is a large
/// power of two, 4 MiB for 1024×1024 slices: p pages and p prefetch streams per tile), runs the tiles there and
/// copies the outputs back. The copies also make in == out safe and pad the last partial tile with zeros.
/// When `tile_reads_out` (a tile accumulating into its outputs), the panels are loaded with the outputs' values too.
template <class R, int TP = gemm_tile_packets, class In, class Out, class Tile>
void for_each_tile(const In* in, int p, Out* out, int q, std::size_t rows, std::size_t threads, Tile tile,
                   bool tile_reads_out = false) {
  static_assert(std::is_same_v<In, R> || std::is_same_v<In, std::complex<R>>);
  static_assert(std::is_same_v<Out, R> || std::is_same_v<Out, std::complex<R>>);
  constexpr std::size_t V = tile_rows<R, TP>;
  constexpr std::size_t panel_size = panel_elements<R, int(V)>;
  constexpr std::ptrdiff_t in_parts = sizeof(In) / sizeof(R), out_parts = sizeof(Out) / sizeof(R);
  const std::size_t width_max = std::size_t(std::max(p * in_parts, q * out_parts));  // reals per row
  if (rows == 0 || width_max == 0) return;  // an empty tensor (m·n = 0 or p = 0): nothing to read or write
  const std::size_t panel = std::max(V, panel_size / width_max / V * V);
  const auto tile_at = [&](const In* src, std::ptrdiff_t src_ld, Out* dst, std::ptrdiff_t dst_ld) {
    tile(columns<const R>{reinterpret_cast<const R*>(src), src_ld * in_parts},
         columns<R>{reinterpret_cast<R*>(dst), dst_ld * out_parts});
  };
  // Rows r ≤ i < r + n through local copies.
  const auto through_panel = [&](std::size_t r, std::size_t n) {
    alignas(64) R in_reals[panel_size], out_reals[panel_size];
    In* in_panel = reinterpret_cast<In*>(in_reals);
    Out* out_panel = reinterpret_cast<Out*>(out_reals);
    const auto ld = std::ptrdiff_t(panel);
    const std::size_t padded = (n + V - 1) / V * V;
    for (int t = 0; t < p; ++t) {
      std::copy_n(in + r + std::size_t(t) * rows, n, in_panel + t * ld);
      std::fill(in_panel + t * ld + n, in_panel + t * ld + padded, In(0));
    }
    if (tile_reads_out)
      for (int k = 0; k < q; ++k) {
        std::copy_n(out + r + std::size_t(k) * rows, n, out_panel + k * ld);
        std::fill(out_panel + k * ld + n, out_panel + k * ld + padded, Out(0));
      }
    for (std::size_t j = 0; j < padded; j += V) tile_at(in_panel + j, ld, out_panel + j, ld);
    for (int k = 0; k < q; ++k) std::copy_n(out_panel + k * ld, n, out + r + std::size_t(k) * rows);
  };
  const bool in_place = static_cast<const void*>(in) == static_cast<const void*>(out);
  assert(!(in_place && tile_reads_out));
  const bool tall_tiles = TP > gemm_tile_packets;  // the DCT's: direct at every p (direct_max_columns)
  const bool short_tubes = std::max(p, q) <= direct_max_columns;
  const bool small =
      !in_place && rows * std::size_t(std::max(p * sizeof(In), q * sizeof(Out))) <= direct_max_bytes;
  if (tall_tiles || short_tubes || small) {
    const std::size_t whole = rows / V;
    const auto ld = std::ptrdiff_t(rows);
    parallel_ranges(whole, threads, 1, [&](std::size_t begin, std::size_t end) {
      alignas(64) R input_reals[tube_kernel_max_tubes * V * (sizeof(In) / sizeof(R))];
      In* inputs = reinterpret_cast<In*>(input_reals);
      for (std::size_t j = begin * V; j < end * V; j += V) {
        if (in_place) {  // the tile's inputs are read into L1 before any output is written
          for (int t = 0; t < p; ++t) std::copy_n(in + j + std::size_t(t) * rows, V, inputs + std::size_t(t) * V);
          tile_at(inputs, std::ptrdiff_t(V), out + j, ld);
        } else {
          tile_at(in + j, ld, out + j, ld);
        }
      }
    });
    if (whole * V < rows) through_panel(whole * V, rows - whole * V);
    return;
  }
  const std::size_t panels = (rows + panel - 1) / panel;
  parallel_ranges(panels, threads, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) through_panel(i * panel, std::min(panel, rows - i * panel));
  });
}

}  // namespace tube_kernel

/// @brief OUT = start + IN·M for the (rows × p) IN and (rows × q) OUT column-major with leading dimension rows and
/// M a p×q column-major factor with leading dimension p, p ≤ tube_kernel_max_tubes: the tall, narrow GEMMs of the
/// nn layers' 16- to 64-wide slices (Y = X·W + 1·bᵀ, dX += dY·Wᵀ). `start` adds a bias row or OUT's own values.
/// Wider outputs run in panels of tube_kernel_max_tubes columns (a tile's panel holds that many). IN and OUT may be
/// the same memory only with p = q and a zero start.
template <class R>
void small_gemm(const R* in, std::size_t rows, int p, const R* m, int q, R* out, tube_kernel::start_values<R> start,
                std::size_t threads) {
  using namespace tube_kernel;
  constexpr int panel = int(tube_kernel_max_tubes);
  for (int c = 0; c < q; c += panel) {
    const int n = std::min(panel, q - c);
    const R* mc = m + std::ptrdiff_t(c) * p;
    const start_values<R> sc{start.bias ? start.bias + c : nullptr, start.from_output};
    tube_kernel::for_each_tile<R>(
        in, p, out + std::size_t(c) * rows, n, rows, threads,
        [&](columns<const R> src, columns<R> dst) { gemm_tile<R>(src, p, mc, n, dst, sc); }, sc.from_output);
  }
}

/// @brief OUT = IN · Mt for the (rows × p) IN and (rows × q) OUT column-major, Mt p×q (the tensor's tube
/// unfolding, with rows = m·n, or 2·m·n for complex data under a real factor), p, q ≤ tube_kernel_max_tubes. IN and
/// OUT may be the same memory (with q = p): each panel's inputs are copied before its outputs are written.
template <class R>
void tube_multiply(const R* in, const tprod::detail::dense_matrix<R>& Mt, R* out, std::size_t rows,
                   std::size_t threads) {
  small_gemm<R>(in, rows, int(Mt.rows()), Mt.data(), int(Mt.cols()), out, {}, threads);
}

/// @brief The orthonormal DCT-II along tubes of length p ≤ tube_kernel_max_tubes (forward, Y = X·Φᵀ) or its
/// inverse (X = Y·Φ), on the (rows × p) column-major unfolding; in == out is allowed.
template <class R>
void tube_dct(const R* in, R* out, std::size_t rows, std::size_t p, bool forward, std::size_t threads) {
  using namespace tube_kernel;
  using plan_type = dct_plan<R>;
  const plan_type plan{int(p)};
  const R* f = plan.factors();
  const int n = int(p);
  for_each_tile<R, plan_type::TP>(in, n, out, n, rows, threads, [&](columns<const R> src, columns<R> dst) {
    alignas(64) R scratch[2 * tube_kernel_max_tubes * plan_type::V];
    if (forward)
      plan.forward(src, n, 1, f, scratch, dst);
    else
      plan.inverse(src, n, 1, f, scratch, dst);
  });
}

}  // namespace tprod::backend::cpu
