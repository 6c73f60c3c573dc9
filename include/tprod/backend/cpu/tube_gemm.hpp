// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tube_gemm.hpp
/// @brief out = in ×₃ M as GEMMs: with slice-contiguous storage a tensor is an (m·n)×p matrix, so a matrix
/// acting on every tube is OUT = IN · Mᵀ. Handles every real/complex mix without copying the tensor, in blocks
/// of rows that are the units of the threads.
#include <Eigen/Core>
#include <algorithm>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/tube_kernel.hpp"
#include "tprod/core/detail/buffer.hpp"
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::detail {

/// @brief The real (part = 0) or imaginary (part = 1) parts of a complex (rows × cols) column-major block with
/// leading dimension ld (in complex elements), as a strided real map (no copy).
template <class R, class C>
auto part_map(C* data, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld, int part) {
  using map_t = Eigen::Map<std::conditional_t<std::is_const_v<C>, const dense_matrix<R>, dense_matrix<R>>, 0,
                           Eigen::Stride<Eigen::Dynamic, 2>>;
  using ptr_t = std::conditional_t<std::is_const_v<C>, const R*, R*>;
  return map_t(reinterpret_cast<ptr_t>(data) + part, rows, cols, Eigen::Stride<Eigen::Dynamic, 2>(2 * ld, 2));
}

}  // namespace tprod::detail

namespace tprod::backend::cpu {

using tprod::detail::dense_matrix;

/// @brief Elements per block of rows of a tube GEMM: IN·Mt is computed block of rows by block so that the block
/// Eigen packs (rows × p) stays in L2 (about 256 KiB) instead of streaming the whole tensor through memory a
/// second time; the blocks are also the units the threads share. Measured on the DCT of 256×256×16 floats
/// (bench_algebra, docs/performance.md).
inline constexpr std::size_t tube_gemm_block_elements = std::size_t(1) << 16;

namespace detail {
/// Column-major map of rows [r, r + n) of a (rows × cols) block with leading dimension ld.
template <class S>
auto rows_map(S* data, Eigen::Index r, Eigen::Index n, Eigen::Index cols, Eigen::Index ld) {
  using M = std::conditional_t<std::is_const_v<S>, const dense_matrix<std::remove_const_t<S>>,
                               dense_matrix<std::remove_const_t<S>>>;
  return Eigen::Map<M, 0, Eigen::OuterStride<>>(data + r, n, cols, Eigen::OuterStride<>(ld));
}
}  // namespace detail

/// @brief OUT = IN · Mt, i.e. out(i, j, :) = Mtᵀ · in(i, j, :), for OUT (m·n)×q, IN (m·n)×p, Mt p×q, on up to
/// `threads` threads (blocks of rows).
///
/// When OUT is real and IN or Mt complex, OUT receives the real part of the product (used by the inverse DFT of
/// conjugate-symmetric half spectra, whose weights make the imaginary part vanish).
///
/// IN and OUT may be the same memory when they have the same scalar and p = q (an in-place transform): each
/// block of rows is then copied to a buffer of at most tube_gemm_block_elements first, so the extra memory is
/// that buffer per thread, not a second tensor.
///
/// A real Mt with p, q ≤ tube_kernel_max_tubes acting on data of its own real type (real tensors, or complex ones
/// as real tensors with twice the rows) runs on the tube kernel (tube_kernel.hpp) instead of Eigen's GEMM.
template <class TIn, class S, class TOut>
void apply_along_tubes(tensor3_view<const TIn> in, const dense_matrix<S>& Mt, tensor3_view<TOut> out,
                       std::size_t threads) {
  using R = real_t<TOut>;
  constexpr bool as_real = std::is_same_v<TIn, TOut> && is_complex_v<TIn> && !is_complex_v<S>;
  // A real matrix acts on real and imaginary parts alike: complex data is then a real (2·m·n)×p matrix.
  const auto rows = Eigen::Index(in.m() * in.n()) * (as_real ? 2 : 1);
  const auto p = Eigen::Index(in.p()), q = Eigen::Index(out.p());
  const std::size_t block = std::max<std::size_t>(64, tube_gemm_block_elements / std::max<std::size_t>(1, in.p()));
  // Complex matrices are split once into real and imaginary parts, outside the threads.
  dense_matrix<R> re, im;
  if constexpr (is_complex_v<S>) {
    re = Mt.real();
    im = Mt.imag();
  }
  const bool in_place = static_cast<const void*>(in.data()) == static_cast<const void*>(out.data());
  if (rows == 0) return;
  if constexpr ((std::is_same_v<TIn, TOut> && std::is_same_v<S, TIn>) || as_real) {
    if constexpr (tube_kernel::supported<S>) {
      if (std::size_t(p) <= tube_kernel_max_tubes && std::size_t(q) <= tube_kernel_max_tubes)
        return tube_multiply<S>(reinterpret_cast<const S*>(in.data()), Mt, reinterpret_cast<S*>(out.data()),
                                std::size_t(rows), threads);
    }
  }
  parallel_ranges(std::size_t(rows), threads, block, [&](std::size_t begin, std::size_t end) {
    // The block, when in place, is copied into tprod's recycled memory: a matrix allocated and freed per call
    // can make glibc shrink and regrow its heap on every call (see detail::buffer).
    using B = std::conditional_t<as_real, R, TIn>;
    tprod::detail::buffer<B> scratch(in_place ? std::min(block, end - begin) * std::size_t(p) : 0);
    for (std::size_t r0 = begin; r0 < end; r0 += block) {
      const auto r = Eigen::Index(r0), n = Eigen::Index(std::min(block, end - r0));
      const auto rows_times_mt = [&](const auto* src, auto* dst) {  // generic: compiled only where called
        if (in_place) {
          Eigen::Map<dense_matrix<B>> copy(scratch.data(), n, p);
          copy = detail::rows_map(src, r, n, p, rows);
          detail::rows_map(dst, r, n, q, rows).noalias() = copy * Mt;
        } else {
          detail::rows_map(dst, r, n, q, rows).noalias() = detail::rows_map(src, r, n, p, rows) * Mt;
        }
      };
      if constexpr (std::is_same_v<TIn, TOut> && std::is_same_v<S, TIn>) {
        rows_times_mt(in.data(), out.data());
      } else if constexpr (as_real) {
        rows_times_mt(reinterpret_cast<const R*>(in.data()), reinterpret_cast<R*>(out.data()));
      } else if constexpr (!is_complex_v<TIn> && is_complex_v<S> && is_complex_v<TOut>) {  // never in place
        // Real input, complex matrix: real and imaginary parts of the output are two real GEMMs.
        const auto x = detail::rows_map(in.data(), r, n, p, rows);
        tprod::detail::part_map<R>(out.data() + r, n, q, rows, 0).noalias() = x * re;
        tprod::detail::part_map<R>(out.data() + r, n, q, rows, 1).noalias() = x * im;
      } else if constexpr (is_complex_v<TIn> && is_complex_v<S> && !is_complex_v<TOut>) {
        // Real part of a complex product: Re(IN·Mt) = Re(IN)·Re(Mt) − Im(IN)·Im(Mt).
        auto o = detail::rows_map(out.data(), r, n, q, rows);
        o.noalias() = tprod::detail::part_map<R>(in.data() + r, n, p, rows, 0) * re;
        o.noalias() -= tprod::detail::part_map<R>(in.data() + r, n, p, rows, 1) * im;
      } else {
        static_assert(sizeof(TIn) == 0, "apply_along_tubes: unsupported combination of scalar types");
      }
    }
  });
}

}  // namespace tprod::backend::cpu
