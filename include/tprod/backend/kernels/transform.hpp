// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transform.hpp
/// @brief The kernel contract's tube-transform tasks. For a backend system `sys` of space S, a transform policy
/// L, original scalar T and L's domain scalar D = L::domain_scalar<T>:
///   forward(sys, l, in, out)                    out = in ×₃ Z       (in: m×n×p of T, out: m×n×q of D, q stored slices)
///   inverse(sys, l, in, out)                    out = in ×₃ Z⁻¹     (in: m×n×q of D, out: m×n×p of T)
///   transform_in_place(sys, l, a, forward?)     a ×₃ Z (or Z⁻¹) over a's memory when the backend can → bool (false:
///                                               a untouched, the caller transforms out of place)
/// How Z is applied (a GEMM with the cached factor, FFTW, cuFFT, the thread count, the stream) is the backend's
/// choice, steered by the execution the system carries.
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class L, class T, class S>
concept transform_tasks = requires(const Sys& sys, const L& l, tensor3_view<const T, dextents3, S> in,
                                   tensor3_view<typename L::template domain_scalar<T>, dextents3, S> out,
                                   tensor3_view<const typename L::template domain_scalar<T>, dextents3, S> in_hat,
                                   tensor3_view<T, dextents3, S> back) {
  forward(sys, l, in, out);
  inverse(sys, l, in_hat, back);
  { transform_in_place(sys, l, back, true) } -> std::same_as<bool>;
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/transform.hpp"
