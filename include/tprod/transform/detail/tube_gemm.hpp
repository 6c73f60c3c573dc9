#pragma once
/// @file tube_gemm.hpp
/// @brief out = in ×₃ M as one GEMM: with slice-contiguous storage a tensor is an (m·n)×p matrix, so a matrix
/// acting on every tube is OUT = IN · Mᵀ. Handles every real/complex mix without copying the tensor.
#include <Eigen/Core>
#include <algorithm>

#include "tprod/core/tensor3_view.hpp"

namespace tprod::detail {

template <class S> using dense_matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

/// @brief The real (part = 0) or imaginary (part = 1) parts of a complex (rows × cols) column-major block, as a
/// strided real map (no copy).
template <class R, class C>
auto part_map(C* data, Eigen::Index rows, Eigen::Index cols, int part) {
  using map_t = Eigen::Map<std::conditional_t<std::is_const_v<C>, const dense_matrix<R>, dense_matrix<R>>, 0,
                           Eigen::Stride<Eigen::Dynamic, 2>>;
  using ptr_t = std::conditional_t<std::is_const_v<C>, const R*, R*>;
  return map_t(reinterpret_cast<ptr_t>(data) + part, rows, cols, Eigen::Stride<Eigen::Dynamic, 2>(2 * rows, 2));
}

/// @brief Rows per block of a tube GEMM: IN·Mt is computed block of rows by block so that the block Eigen packs
/// (rows × p) stays in L2 (about 256 KiB) instead of streaming the whole tensor through memory a second time.
/// Measured on the DCT of 256×256×16 floats (bench_algebra, docs/performance.md).
inline constexpr Eigen::Index tube_gemm_block_elements = Eigen::Index(1) << 16;

/// @brief OUT = IN·Mt computed in blocks of rows (same result as one GEMM).
template <class Out, class In, class M>
void blocked_gemm(Out&& out, const In& in, const M& mt) {
  const Eigen::Index rows = in.rows();
  const Eigen::Index block = std::max<Eigen::Index>(64, tube_gemm_block_elements / std::max<Eigen::Index>(1, in.cols()));
  for (Eigen::Index r = 0; r < rows; r += block) {
    const Eigen::Index n = std::min(block, rows - r);
    out.middleRows(r, n).noalias() = in.middleRows(r, n) * mt;
  }
}

/// @brief OUT = IN · Mt, i.e. out(i, j, :) = Mtᵀ · in(i, j, :), for OUT (m·n)×q, IN (m·n)×p, Mt p×q.
///
/// When OUT is real and IN or Mt complex, OUT receives the real part of the product (used by the inverse DFT of
/// conjugate-symmetric half spectra, whose weights make the imaginary part vanish).
template <class TIn, class S, class TOut>
void apply_along_tubes(tensor3_view<const TIn> in, const dense_matrix<S>& Mt, tensor3_view<TOut> out) {
  using R = real_t<TOut>;
  const auto rows = Eigen::Index(in.m() * in.n());
  if constexpr (std::is_same_v<TIn, TOut> && std::is_same_v<S, TIn>) {
    blocked_gemm(out.unfold_tubes(), in.unfold_tubes(), Mt);
  } else if constexpr (std::is_same_v<TIn, TOut> && is_complex_v<TIn> && !is_complex_v<S>) {
    // A real matrix acts on real and imaginary parts alike: view the complex data as a real (2·m·n)×p matrix.
    Eigen::Map<const dense_matrix<R>> in_r(reinterpret_cast<const R*>(in.data()), 2 * rows, Eigen::Index(in.p()));
    Eigen::Map<dense_matrix<R>> out_r(reinterpret_cast<R*>(out.data()), 2 * rows, Eigen::Index(out.p()));
    blocked_gemm(out_r, in_r, Mt);
  } else if constexpr (!is_complex_v<TIn> && is_complex_v<S> && is_complex_v<TOut>) {
    // Real input, complex matrix: real and imaginary parts of the output are two real GEMMs.
    const dense_matrix<R> re = Mt.real(), im = Mt.imag();
    auto out_re = part_map<R>(out.data(), rows, Eigen::Index(out.p()), 0);
    auto out_im = part_map<R>(out.data(), rows, Eigen::Index(out.p()), 1);
    out_re.noalias() = in.unfold_tubes() * re;
    out_im.noalias() = in.unfold_tubes() * im;
  } else if constexpr (is_complex_v<TIn> && is_complex_v<S> && !is_complex_v<TOut>) {
    // Real part of a complex product: Re(IN·Mt) = Re(IN)·Re(Mt) − Im(IN)·Im(Mt).
    const dense_matrix<R> re = Mt.real(), im = Mt.imag();
    auto in_re = part_map<R>(in.data(), rows, Eigen::Index(in.p()), 0);
    auto in_im = part_map<R>(in.data(), rows, Eigen::Index(in.p()), 1);
    auto o = out.unfold_tubes();
    o.noalias() = in_re * re;
    o.noalias() -= in_im * im;
  } else {
    static_assert(sizeof(TIn) == 0, "apply_along_tubes: unsupported combination of scalar types");
  }
}

}  // namespace tprod::detail
