// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transform.hpp
/// @brief The CPU execution of a transform policy along the tubes: Â = A ×₃ Z and A = Â ×₃ Z⁻¹, either as
/// products with the policy's cached matrices (the tube kernel for p ≤ 64, with a split DCT and a split DFT; Eigen's
/// GEMM above)
/// or, for the DFT and the DCT-II, with FFTW; on the execution's threads (blocks of rows of the (m·n)×p tensor).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "tprod/backend/cpu/fftw.hpp"
#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/cpu/tube_dft.hpp"
#include "tprod/backend/cpu/tube_gemm.hpp"
#include "tprod/core/config.hpp"
#include "tprod/core/detail/buffer.hpp"
#include "tprod/core/error.hpp"
#include "tprod/core/execution.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/core/tube_algorithm.hpp"

namespace tprod::backend::cpu {

/// @brief The longest tubes that `transform_path::automatic` transforms with the cached matrix, and for which
/// `transform_path::tuned` measures FFTW against it on the machine it runs on: above it the p×p factor takes
/// megabytes and its O(p) work per element loses to FFTW's O(log p), and both take FFTW (when built with it).
/// Below it the winner depends on the machine and on the tensor, not on p alone: FFTW's strided
/// batch is 3–5× slower when the tube stride m·n is a multiple of a large power of two (cache-set conflicts; a
/// 64×64 tensor), and was 3× faster than Eigen's GEMM for the DFT at p = 4 (docs/design.md; the tube kernel now
/// takes real tubes of p ≤ 64 and measured faster than both at p = 4 on 64×64 and 40×100 tensors). Constant switch
/// points measured on one machine were wrong by 2–3× on another.
inline constexpr std::size_t measure_max_tubes = 1024;

/// @brief The row count of the probe that stands for a transform of `tubes` tubes of length p: the tensor itself up
/// to 2²⁰ elements; beyond, the largest odd multiple of the power of two dividing `tubes` (up to 2¹²) that fits,
/// so that the probe's tube stride has the same power-of-two alignment as the tensor's.
inline std::size_t probe_tubes(std::size_t tubes, std::size_t p) {
  const std::size_t budget = std::max<std::size_t>(64, (std::size_t(1) << 20) / std::max<std::size_t>(1, p));
  if (tubes <= budget) return tubes;
  std::size_t align = 1;
  while (tubes % (2 * align) == 0 && align < (std::size_t(1) << 12)) align *= 2;
  if (align >= budget) return align;
  std::size_t odd = budget / align;
  if (odd % 2 == 0) --odd;
  return odd * align;
}

namespace detail {
template <class T, class L>
bool measured_fftw_wins(const L& l, std::size_t p, std::size_t tubes, std::size_t threads);
}  // namespace detail

/// @brief Whether L's transform of T-tensors with `tubes` tubes of length p runs on FFTW under `ex`: never for the
/// GEMM path or a transform without a fast algorithm; always for transform_path::fftw; above measure_max_tubes for
/// `automatic` and `tuned`; below it never for `automatic` (a fixed rule, so the same call gives the same bits on
/// every run), and for `tuned` by the measured choice for this (p, probe_tubes(tubes, p), threads) on this machine.
/// @throws shape_error for transform_path::fftw when tprod was built without FFTW, or for a transform with no FFT
/// (a general or learned Z; the identity transform, which transforms nothing, takes any path).
template <class T, class L>
bool use_fftw(const L& l, std::size_t p, std::size_t tubes, const execution& ex) {
  if (ex.path == transform_path::gemm) return false;
  if constexpr (L::algorithm != tube_algorithm::dct2 && L::algorithm != tube_algorithm::dft &&
                L::algorithm != tube_algorithm::identity)
    TPROD_EXPECTS(ex.path != transform_path::fftw,
                  "transform_path::fftw was requested for the " + std::string(L::name()) +
                      " transform, which has no FFT: use transform_path::gemm or automatic");
  if (!TPROD_HAS_FFTW) {
    TPROD_EXPECTS(ex.path != transform_path::fftw,
                  "transform_path::fftw was requested but tprod was built without FFTW (TPROD_USE_FFTW=OFF)");
    return false;
  }
  if constexpr (L::algorithm != tube_algorithm::dct2 && L::algorithm != tube_algorithm::dft) {
    return false;  // no FFT for a general Z
  } else {
    if (ex.path == transform_path::fftw) return true;
    if (p < 2 || tubes == 0) return false;
    if (p > measure_max_tubes) return true;
    if (ex.path == transform_path::automatic) return false;
    return detail::measured_fftw_wins<T>(l, p, probe_tubes(tubes, p), ex.thread_count());
  }
}

namespace detail {

#if TPROD_HAS_FFTW
// One FFTW batch per thread over its block of rows [r, r + n) of the (rows × p) tensor, then `finish(r, n)`
// (a scaling pass over the same rows, while they are in cache).
template <class R, class In, class Out, class Finish>
void fftw_blocks(fftw::kind k, std::size_t p, std::size_t rows, const In* in, Out* out, std::size_t threads,
                 Finish finish) {
  const std::size_t units = std::max<std::size_t>(1, threads);
  const std::size_t step = (rows + units - 1) / units;
  parallel_for(units, threads, [&](std::size_t u) {
    const std::size_t r = u * step, n = std::min(rows, r + step) - std::min(rows, r);
    if (n == 0) return;
    fftw::execute<R>(k, p, n, rows, reinterpret_cast<const R*>(in + r), reinterpret_cast<R*>(out + r));
    finish(Eigen::Index(r), Eigen::Index(n));
  });
}

// FFTW's REDFT10 is the unnormalized DCT-II, Y_k = 2·Σ_j x_j cos(π(2j+1)k/(2p)), and REDFT01 its inverse
// pattern x_j = Y_0 + 2·Σ_{k≥1} Y_k cos(…); one scaling pass over the output makes both orthonormal.
// Complex tensors are transformed as real ones with twice the rows (Φ is real).
template <class T>
void fftw_dct(tensor3_view<const T> in, tensor3_view<T> out, bool forward, std::size_t threads) {
  using R = real_t<T>;
  const std::size_t p = in.p(), rows = in.m() * in.n() * (is_complex_v<T> ? 2 : 1);
  const R* src = reinterpret_cast<const R*>(in.data());
  R* dst = reinterpret_cast<R*>(out.data());
  const auto ld = Eigen::Index(rows), cols = Eigen::Index(p);
  const R s_rest = R(1 / std::sqrt(2.0 * double(p)));
  fftw_blocks<R>(forward ? fftw::kind::dct2 : fftw::kind::dct3, p, rows, src, dst, threads,
                 [&](Eigen::Index r, Eigen::Index n) {
                   auto o = rows_map(dst, r, n, cols, ld);
                   if (forward) {  // c_0 = Y_0/(2√p), c_k = Y_k/√(2p)
                     o.col(0) *= R(1 / (2 * std::sqrt(double(p))));
                     o.rightCols(cols - 1) *= s_rest;
                   } else {  // x_j = REDFT01(c)_j/√(2p) + c_0·(1/√p − 1/√(2p))
                     const auto c0 = rows_map(src, r, n, 1, ld);
                     const R s0 = R(1 / std::sqrt(double(p))) - s_rest;
                     for (Eigen::Index j = 0; j < cols; ++j) o.col(j) = o.col(j) * s_rest + c0.col(0) * s0;
                   }
                 });
}

// r2c/c2r for real tensors (FFTW's half spectrum is exactly the stored slices), c2c for complex ones; FFTW's
// inverse is unnormalized, hence the 1/p pass.
template <class T, class In, class Out>
void fftw_dft(const In* in, Out* out, std::size_t p, std::size_t tubes, bool forward, std::size_t threads) {
  using R = real_t<T>;
  using fftw::kind;
  const kind k = is_complex_v<T> ? (forward ? kind::c2c_forward : kind::c2c_backward) : (forward ? kind::r2c : kind::c2r);
  fftw_blocks<R>(k, p, tubes, in, out, threads, [&](Eigen::Index r, Eigen::Index n) {
    if (!forward) rows_map(out, r, n, Eigen::Index(p), Eigen::Index(tubes)) *= R(1) / R(p);
  });
}
#endif

/// @brief Shortest even tube length at which the DCT's GEMM path uses the even/odd split below (it serves tubes
/// longer than tube_kernel_max_tubes; shorter ones take the tube kernel's own recursive split).
inline constexpr std::size_t dct_split_min_tubes = 8;

/// @brief The orthonormal DCT-II (forward) or its inverse as two half-size GEMMs, from Φ's symmetry
/// Φ(j, p−1−k) = (−1)ʲ·Φ(j, k) (p even, h = p/2):
///   forward  Y(:, 2i) = Σ_{t<h} (X(:, t) + X(:, p−1−t))·Φ(2i, t),  Y(:, 2i+1) = Σ_{t<h} (X(:, t) − X(:, p−1−t))·Φ(2i+1, t);
///   inverse  E = Σ_i Y(:, 2i)·Φ(2i, t),  O = Σ_i Y(:, 2i+1)·Φ(2i+1, t),  X(:, t) = E + O,  X(:, p−1−t) = E − O.
/// Half the multiply-adds of the p×p GEMM, for one butterfly pass over each block of rows (in cache). In place
/// (in == out) is allowed: each block is read whole into u and v before any of it is written.
/// `phi_t` is Φᵀ; R is the real type (complex tensors are real ones with twice the rows, Φ being real).
template <class R>
void dct_even_odd(const R* in, R* out, std::size_t rows, std::size_t p, const dense_matrix<R>& phi_t, bool forward,
                  std::size_t threads) {
  const auto h = Eigen::Index(p / 2), ld = Eigen::Index(rows);
  dense_matrix<R> even(h, h), odd(h, h);  // forward: even(t, i) = Φ(2i, t), odd(t, i) = Φ(2i+1, t)
  for (Eigen::Index i = 0; i < h; ++i) {
    even.col(i) = phi_t.col(2 * i).head(h);
    odd.col(i) = phi_t.col(2 * i + 1).head(h);
  }
  const std::size_t block = std::max<std::size_t>(64, tube_gemm_block_elements / std::max<std::size_t>(1, p));
  using strided = Eigen::Map<dense_matrix<R>, 0, Eigen::OuterStride<>>;
  using const_strided = Eigen::Map<const dense_matrix<R>, 0, Eigen::OuterStride<>>;
  parallel_ranges(rows, threads, block, [&](std::size_t begin, std::size_t end) {
    // u and v in tprod's recycled memory: two matrices allocated and freed per call made glibc shrink and regrow
    // its heap on every call (a 4000×16 float DCT took 50× longer; see detail::buffer).
    const auto cap = Eigen::Index(std::min(block, end - begin));
    tprod::detail::buffer<R> scratch(std::size_t(2 * cap * h));
    Eigen::Map<dense_matrix<R>> u(scratch.data(), cap, h), v(scratch.data() + cap * h, cap, h);
    for (std::size_t r0 = begin; r0 < end; r0 += block) {
      const auto r = Eigen::Index(r0), n = Eigen::Index(std::min(block, end - r0));
      auto uu = u.topRows(n), vv = v.topRows(n);
      if (forward) {
        const auto x = rows_map(in, r, n, Eigen::Index(p), ld);
        for (Eigen::Index t = 0; t < h; ++t) {
          uu.col(t) = x.col(t) + x.col(2 * h - 1 - t);
          vv.col(t) = x.col(t) - x.col(2 * h - 1 - t);
        }
        strided(out + r, n, h, Eigen::OuterStride<>(2 * ld)).noalias() = uu * even;
        strided(out + r + ld, n, h, Eigen::OuterStride<>(2 * ld)).noalias() = vv * odd;
      } else {
        uu.noalias() = const_strided(in + r, n, h, Eigen::OuterStride<>(2 * ld)) * even.transpose();
        vv.noalias() = const_strided(in + r + ld, n, h, Eigen::OuterStride<>(2 * ld)) * odd.transpose();
        auto x = rows_map(out, r, n, Eigen::Index(p), ld);
        for (Eigen::Index t = 0; t < h; ++t) {
          x.col(t) = uu.col(t) + vv.col(t);
          x.col(2 * h - 1 - t) = uu.col(t) - vv.col(t);
        }
      }
    }
  });
}

/// @brief The shortest complex tubes the tube kernel's DFT takes (tube_complex_dft): at p = 4 its passes over the
/// real and imaginary parts cost more than Eigen's complex GEMM saves (64×64×4 complex floats 7.7 µs against 5.7,
/// 256×256×4 78–86 against 58–62), from p = 5 it is faster (p = 8: 12.4 against 15.9 µs, 119–128 against 152–153).
inline constexpr std::size_t complex_dft_kernel_min_tubes = 5;

/// @brief Whether the DCT of length-p tubes takes the even/odd split on the GEMM path.
inline bool use_dct_split(std::size_t p) { return p % 2 == 0 && p >= dct_split_min_tubes; }

/// @brief One direction of the transform: out = in ×₃ Z (forward) or in ×₃ Z⁻¹, with T the original scalar and
/// p the original tube count; the fastest applicable kernel on the execution's threads.
template <class T, class L, class In, class Out>
void apply_transform(const L& l, tensor3_view<const In> in, tensor3_view<Out> out, bool forward, const execution& ex) {
  const std::size_t p = forward ? in.p() : out.p(), tubes = in.m() * in.n();
  const std::size_t threads = threads_for(std::max(in.size(), out.size()), ex);
  if constexpr (L::algorithm == tube_algorithm::identity) {
    if (static_cast<const void*>(in.data()) == static_cast<const void*>(out.data())) return;  // in place
    parallel_ranges(in.size(), threads, parallel_min_elements,
                    [&](std::size_t b, std::size_t e) { std::copy(in.data() + b, in.data() + e, out.data() + b); });
    return;
  }
  if (p == 0 || tubes == 0) {  // an empty tensor: nothing to transform (the factors of p = 0 would divide by p)
    use_fftw<T>(l, p, tubes, ex);  // still refuses transform_path::fftw where there is none
    return;
  }
#if TPROD_HAS_FFTW
  if (use_fftw<T>(l, p, tubes, ex)) {
    if constexpr (L::algorithm == tube_algorithm::dct2) return fftw_dct<T>(in, out, forward, threads);
    if constexpr (L::algorithm == tube_algorithm::dft)
      return fftw_dft<T>(in.data(), out.data(), p, tubes, forward, threads);
  }
#else
  use_fftw<T>(l, p, tubes, ex);  // refuses transform_path::fftw
#endif
  if constexpr (L::algorithm == tube_algorithm::dct2) {
    using R = real_t<T>;
    const std::size_t rows = in.m() * in.n() * (is_complex_v<T> ? 2 : 1);
    if constexpr (tube_kernel::supported<R>)
      if (p >= 2 && p <= tube_kernel_max_tubes)
        return tube_dct<R>(reinterpret_cast<const R*>(in.data()), reinterpret_cast<R*>(out.data()), rows, p, forward,
                           threads);
    if (use_dct_split(p)) {
      return dct_even_odd<R>(reinterpret_cast<const R*>(in.data()), reinterpret_cast<R*>(out.data()), rows, p,
                             *l.template forward_factor<T>(p), forward, threads);
    }
  }
  if constexpr (L::algorithm == tube_algorithm::dft && tube_kernel::supported<real_t<T>>) {
    if constexpr (is_complex_v<T>) {
      if (p >= complex_dft_kernel_min_tubes && p <= tube_kernel_max_tubes)
        return tube_complex_dft<real_t<T>>(in.data(), out.data(), tubes, p, forward, threads);
    } else if (p <= tube_kernel_max_tubes) {
      if constexpr (std::is_same_v<In, T>)
        return tube_real_dft<T>(in.data(), out.data(), tubes, p, threads);
      else
        return tube_real_idft<T>(in.data(), out.data(), tubes, p, threads);
    }
  }
  apply_along_tubes(in, forward ? *l.template forward_factor<T>(p) : *l.template inverse_factor<T>(p), out, threads);
}
}  // namespace detail

/// @brief out = in ×₃ Z (the forward L-transform), in original scalar T, out L's domain scalar; `out` has
/// L.stored_slices<T>(p) slices. `in` and `out` may be the same memory on the GEMM and identity paths
/// (in_place_execution in transformed.hpp), never on FFTW's.
template <scalar T, class L>
void forward(const L& l, tensor3_view<const T> in, tensor3_view<typename L::template domain_scalar<T>> out,
             const execution& ex) {
  detail::apply_transform<T>(l, in, out, true, ex);
}

/// @brief out = in ×₃ Z⁻¹ (the inverse L-transform), from L's stored domain slices back to p original slices.
template <scalar T, class L>
void inverse(const L& l, tensor3_view<const typename L::template domain_scalar<T>> in, tensor3_view<T> out,
             const execution& ex) {
  detail::apply_transform<T>(l, in, out, false, ex);
}

namespace detail {
/// The measured choice: FFTW and the GEMM each transform a probe of `tubes` tubes of length p (probe_tubes), and
/// the faster minimum wins. The first run of each warms up (FFTW's plan, the GEMM factor, the threads); then the two
/// alternate, so that both see the same machine (a busy neighbour, a descheduled virtual core can slow a few
/// consecutive runs 10×), for at least 5 runs each and min(20 ms, 50× a pair of runs), at most 64 runs each.
/// Cached per (p, tubes, threads) for each scalar and transform type; the lock is held while measuring so that
/// concurrent first calls measure once. The probe is at most max(2²⁰, 2¹²·p) elements.
template <class T, class L>
bool measured_fftw_wins(const L& l, std::size_t p, std::size_t tubes, std::size_t threads) {
  static std::mutex mutex;
  static std::map<std::array<std::size_t, 3>, bool> choice;
  const std::lock_guard lock(mutex);
  const std::array<std::size_t, 3> key{p, tubes, threads};
  if (const auto it = choice.find(key); it != choice.end()) return it->second;
  using D = typename L::template domain_scalar<T>;
  using clock = std::chrono::steady_clock;
  std::vector<T> in(tubes * p, T(1));
  std::vector<D> out(tubes * l.template stored_slices<T>(p));
  const tensor3_view<const T> a(in.data(), tubes, 1, p);
  const tensor3_view<D> ahat(out.data(), tubes, 1, l.template stored_slices<T>(p));
  const execution fftw{transform_path::fftw, threads}, gemm{transform_path::gemm, threads};
  const auto seconds = [&](const execution& ex) {
    const auto t0 = clock::now();
    forward<T>(l, a, ahat, ex);
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  seconds(fftw);
  seconds(gemm);
  double best_fftw = std::numeric_limits<double>::infinity(), best_gemm = best_fftw;
  const auto start = clock::now();
  for (int run = 0; run < 64; ++run) {
    best_fftw = std::min(best_fftw, seconds(fftw));
    best_gemm = std::min(best_gemm, seconds(gemm));
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    if (run >= 4 && elapsed >= std::min(0.02, 50 * (best_fftw + best_gemm))) break;
  }
  const bool fftw_wins = best_fftw < best_gemm;
  choice.emplace(key, fftw_wins);
  return fftw_wins;
}
}  // namespace detail

/// @brief The path `ex` takes for L's transform of T-tensors with `tubes` (m·n) tubes of length p on this machine
/// (for `tuned`, measuring it on first use, see use_fftw): fftw or gemm (automatic for the identity transform).
template <scalar T, class L>
transform_path path_taken(const L& l, std::size_t p, std::size_t tubes, const execution& ex) {
  if constexpr (L::algorithm == tube_algorithm::identity) return transform_path::automatic;
  return use_fftw<T>(l, p, tubes, ex) ? transform_path::fftw : transform_path::gemm;
}

}  // namespace tprod::backend::cpu

namespace tprod::backend::cpu {

/// @brief The transform tasks of the kernel contract (backend/kernels/transform.hpp): out = in ×₃ Z and
/// out = in ×₃ Z⁻¹ with T the original scalar, D L's domain scalar, on the system's execution.
template <class T, class L, class D>
void forward(const system& sys, const L& l, tensor3_view<const T> in, tensor3_view<D> out) {
  static_assert(std::same_as<D, typename L::template domain_scalar<T>>);
  forward<T>(l, in, out, sys.ex);
}
template <class D, class L, class T>
void inverse(const system& sys, const L& l, tensor3_view<const D> in, tensor3_view<T> out) {
  static_assert(std::same_as<D, typename L::template domain_scalar<T>>);
  inverse<T>(l, in, out, sys.ex);
}

}  // namespace tprod::backend::cpu

namespace tprod::backend::cpu {

namespace detail {
/// The execution to transform L's T-tensors with p tubes in place with, or nothing when that is impossible: the
/// domain must keep T and all p slices, and the path be the GEMM (blockwise, through a small buffer) or the
/// identity; FFTW runs out of place. A tensor the caller gives up asks for the memory to be reused, so under
/// `tuned` the GEMM is taken in place up to measure_max_tubes even where FFTW measured faster: the peak memory
/// does not depend on a timing (above that, FFTW and a copy).
template <scalar T, class L>
std::optional<execution> in_place_execution(const L& policy, std::size_t p, std::size_t tubes, const execution& ex) {
  if constexpr (!std::same_as<typename L::template domain_scalar<T>, T> ||
                !std::same_as<typename L::template original_scalar<T>, T>) {
    return std::nullopt;
  } else {
    execution in_place = ex;
    if ((ex.path == transform_path::automatic || ex.path == transform_path::tuned) && p <= measure_max_tubes)
      in_place.path = transform_path::gemm;
    if (policy.template stored_slices<T>(p) != p || use_fftw<T>(policy, p, tubes, in_place)) return std::nullopt;
    return in_place;
  }
}
}  // namespace detail

/// @brief The in-place transform tasks: a ×₃ Z (forward) or a ×₃ Z⁻¹ over a's own memory where
/// detail::in_place_execution allows (real tensors under the DCT, the identity and real Z on the GEMM path;
/// complex ones under any L but FFTW); false, with a untouched, where it does not.
template <class T, class L>
bool transform_in_place(const system& sys, const L& l, tensor3_view<T> a, bool forward_direction) {
  const auto in_place = detail::in_place_execution<T>(l, a.p(), a.m() * a.n(), sys.ex);
  if (!in_place) return false;
  if constexpr (std::same_as<typename L::template domain_scalar<T>, T>) {
    if (forward_direction)
      forward<T>(l, tensor3_view<const T>(a), a, *in_place);
    else
      inverse<T>(l, tensor3_view<const T>(a), a, *in_place);
  }
  return true;
}

}  // namespace tprod::backend::cpu
