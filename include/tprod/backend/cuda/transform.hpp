// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transform.hpp
/// @brief The CUDA backend's transform tasks (contract: backend/kernels/transform.hpp), the mirror of
/// backend/cpu/transform.hpp: Â = A ×₃ Z as the product of the (m·n)×p tube unfolding with the transform's cached
/// p×q factor (uploaded once per factor, src/cuda/runtime.cu), A = Â ×₃ Z⁻¹ likewise.
///
/// Small factors (p, q ≤ 16) go through tprod's tube kernel, which reads each tube once and runs near copy
/// bandwidth for every scalar mix (src/cuda/tube_transform.cu); larger ones through one cuBLAS GEMM in its (N, T)
/// form with the factor's transpose uploaded (faster than (N, N) on these shapes: docs/design.md). The GEMM's
/// scalar mixes: a real factor on complex data is one real GEMM on the data seen as real with twice the rows
/// (column-major complex storage interleaves the parts); a complex factor on real data (the DFT of a real tensor)
/// promotes the input to complex first, and the half-spectrum inverse keeps the real part of a complex GEMM.
/// cuFFT (R2C/C2R/C2C) is not used: see docs/design.md.
#include <concepts>
#include <cstddef>
#include <memory>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/tube_algorithm.hpp"

namespace tprod::backend::cuda {

namespace detail {
/// out (rows×q, scalar Out) = in (rows×p, scalar In) · F (p×q, the host factor's scalar S), on the device.
template <class In, class S, class Out>
void apply_factor(const system& sys, const std::shared_ptr<const tprod::detail::dense_matrix<S>>& factor,
                  const In* in, Out* out, std::size_t rows) {
  const std::size_t p = std::size_t(factor->rows()), q = std::size_t(factor->cols());
  if (raw::tube_kernel_applies(p, q, sizeof(S))) {
    const auto* f = static_cast<const S*>(raw::device_matrix(factor->data(), p, q, sizeof(S), false, factor));
    raw::tube_transform(in, f, out, rows, p, q, sys.stream());
    return;
  }
  // Larger factors: one GEMM with the factor's transpose on the device, op(B) = T (cuBLAS's (N, T) kernels beat
  // its (N, N) ones on these tall-by-small shapes: bench_cuda's transform_gemm cases).
  const auto* ft = static_cast<const S*>(raw::device_matrix(factor->data(), p, q, sizeof(S), true, factor));
  const bool tf32 = sys.ex.tf32;
  if constexpr (std::same_as<In, S> && std::same_as<S, Out>) {
    raw::gemm_bt<S>(rows, q, p, in, rows, ft, q, out, rows, tf32, sys.stream());
  } else if constexpr (!is_complex_v<S> && std::same_as<In, std::complex<S>> && std::same_as<Out, In>) {
    // complex data, real factor: the data as a real (2·rows)×p matrix
    raw::gemm_bt<S>(2 * rows, q, p, reinterpret_cast<const S*>(in), 2 * rows, ft, q, reinterpret_cast<S*>(out),
                    2 * rows, tf32, sys.stream());
  } else if constexpr (is_complex_v<S> && std::same_as<In, real_t<S>> && std::same_as<Out, S>) {
    device_buffer<S> promoted(rows * p, sys.stream());  // real data, complex factor (the DFT of real tubes)
    raw::convert(in, promoted.data(), rows * p, sys.stream());
    raw::gemm_bt<S>(rows, q, p, promoted.data(), rows, ft, q, out, rows, tf32, sys.stream());
  } else if constexpr (is_complex_v<S> && std::same_as<In, S> && std::same_as<Out, real_t<S>>) {
    device_buffer<S> full(rows * q, sys.stream());  // back to real tubes: the real part of a complex product
    raw::gemm_bt<S>(rows, q, p, in, rows, ft, q, full.data(), rows, tf32, sys.stream());
    raw::real_part(full.data(), out, rows * q, sys.stream());
  } else {
    static_assert(tprod::detail::dependent_false<In, S, Out>, "tprod::cuda: unsupported scalar mix in a transform");
  }
}
}  // namespace detail

/// @brief out = in ×₃ Z (T the original scalar, D L's domain scalar; out has L's stored slices).
template <class T, class L, class D>
void forward(const system& sys, const L& l, dview<const T> in, dview<D> out) {
  static_assert(std::same_as<D, typename L::template domain_scalar<T>>);
  if (in.size() == 0 || out.size() == 0) return;
  if constexpr (L::algorithm == tube_algorithm::identity) {
    copy<T>(sys, in, out);
  } else {
    detail::apply_factor(sys, l.template forward_factor<T>(in.p()), in.data(), out.data(), in.m() * in.n());
  }
}

/// @brief out = in ×₃ Z⁻¹, from L's stored domain slices back to the p original slices.
template <class D, class L, class T>
void inverse(const system& sys, const L& l, dview<const D> in, dview<T> out) {
  static_assert(std::same_as<D, typename L::template domain_scalar<T>>);
  if (in.size() == 0 || out.size() == 0) return;
  if constexpr (L::algorithm == tube_algorithm::identity) {
    copy<T>(sys, in, out);
  } else {
    detail::apply_factor(sys, l.template inverse_factor<T>(out.p()), in.data(), out.data(), out.m() * out.n());
  }
}

/// @brief The in-place transform task: not offered on the device yet (the GEMM needs a separate output), so the
/// callers fall back to the out-of-place transform.
template <class T, class L>
bool transform_in_place(const system&, const L&, dview<T>, bool) {
  return false;
}

}  // namespace tprod::backend::cuda
