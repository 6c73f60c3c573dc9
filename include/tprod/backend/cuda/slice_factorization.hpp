// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_factorization.hpp
/// @brief The CUDA backend's slice factorization tasks (contract: backend/kernels/slice_factorization.hpp), the
/// mirror of backend/cpu/slice_factorization.hpp: the slice-wise inverse by batched LU (cuBLAS getrf/getri) and the
/// slice SVDs (src/cuda/slice_svd.cu: cuSOLVER's batched Jacobi up to 32×32; tprod's batched one-sided Jacobi, one
/// thread block per slice, for economy SVDs up to 256×256; one cuSOLVER gesvdj per slice beyond) and the slice QRs
/// (geqrf and orgqr/ungqr per slice: src/cuda/slice_qr.cu).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/core/error.hpp"

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"

namespace tprod::backend::cuda {

/// @brief out(:, :, k) = a(:, :, k)⁻¹ and each slice's reciprocal condition number against the largest slice's
/// 1-norm, 1/(‖A_k⁻¹‖₁·max_j ‖A_j‖₁) (exact, from the computed inverse; 0 at a zero pivot). Every slice is
/// written; the caller refuses the result when any rcond is not above min_rcond.
template <class T>
std::vector<real_t<T>> invert_slices(const system& sys, dview<const T> a, dview<T> out, real_t<T>) {
  const std::size_t p = a.size() == 0 ? 0 : a.p();
  std::vector<double> rconds(p);
  if (p != 0) raw::invert_slices(a.data(), out.data(), a.m(), p, rconds.data(), sys.stream());
  return std::vector<real_t<T>>(rconds.begin(), rconds.end());
}

namespace detail {
/// @brief Factors every slice of a into x and y with factor(a, first, count, x, y, info) (cuSOLVER's raw call
/// for `count` slices from `first`, column-major factors one after another), then factors the slices with
/// real_slices[k] again as their real parts, so that their factors come back real.
/// @throws numerical_error naming the first slice whose solver status is not 0 (`what`: the caller's name): for
/// cuSOLVER its info, for tprod's Jacobi SVD 101 when 100 sweeps did not converge.
template <class T, class Factor>
void factor_slices(const system& sys, const char* what, dview<const T> a, const std::vector<char>& real_slices,
                   dview<T> x, dview<T> y, Factor factor) {
  const std::size_t q = a.p(), slice = a.m() * a.n(), xs = x.m() * x.n(), ys = y.m() * y.n();
  std::vector<int> info(q);
  factor(a.data(), std::size_t(0), q, x.data(), y.data(), info.data());
  if constexpr (is_complex_v<T>) {
    using R = real_t<T>;
    for (std::size_t k = 0; k < q && k < real_slices.size(); ++k) {
      if (!real_slices[k]) continue;
      device_buffer<R> re(slice, sys.stream()), xr(xs, sys.stream()), yr(ys, sys.stream());
      raw::real_part(a.data() + k * slice, re.data(), slice, sys.stream());
      factor(std::as_const(re).data(), k, std::size_t(1), xr.data(), yr.data(), info.data() + k);
      raw::convert(std::as_const(xr).data(), x.data() + k * xs, xs, sys.stream());
      raw::convert(std::as_const(yr).data(), y.data() + k * ys, ys, sys.stream());
    }
  }
  for (std::size_t k = 0; k < q; ++k)
    if (info[k] != 0)
      throw numerical_error(std::string(what) + ": the factorization of transform-domain slice " + std::to_string(k) +
                            " did not succeed (solver status " + std::to_string(info[k]) + ")");
}
}  // namespace detail

/// @brief The SVD of every slice, a_k = u_k·diag(σ_k)·v_kᴴ (u m×c_u×q, v n×c_v×q, c_u ∈ {r, m}, c_v ∈ {r, n}).
/// Slices with real_slices[k] are factored again as their real parts, so their factors come back real.
/// @return σ, r×q column-major, non-increasing per slice.
/// @throws numerical_error naming a slice whose SVD did not converge.
template <class T>
std::vector<real_t<T>> svd_slices(const system& sys, dview<const T> a, const std::vector<char>& real_slices, dview<T> u,
                                  dview<T> v) {
  const std::size_t m = a.m(), n = a.n(), q = a.size() == 0 ? 0 : a.p(), r = std::min(m, n);
  std::vector<real_t<T>> sigma(r * q);
  if (q == 0 || r == 0) return sigma;
  detail::factor_slices(sys, "svd", a, real_slices, u, v,
                        [&](const auto* x, std::size_t first, std::size_t count, auto* uk, auto* vk, int* info) {
                          raw::svd_slices(x, m, n, count, u.n(), v.n(), uk, vk, sigma.data() + first * r, info,
                                          sys.stream());
                        });
  return sigma;
}

/// @brief The singular values of every slice. cuSOLVER's batched Jacobi has no values-only mode that the raw layer
/// exposes yet, so the singular vectors are formed in scratch memory and dropped.
/// @return σ, r×q column-major, non-increasing per slice.
template <class T>
std::vector<real_t<T>> singular_values_slices(const system& sys, dview<const T> a,
                                              const std::vector<char>& real_slices) {
  const std::size_t q = a.size() == 0 ? 0 : a.p(), r = std::min(a.m(), a.n());
  device_buffer<T> u(a.m() * r * q, sys.stream()), v(a.n() * r * q, sys.stream());
  return svd_slices(sys, a, real_slices, dview<T>(u.data(), a.m(), r, q), dview<T>(v.data(), a.n(), r, q));
}

/// @brief The Householder QR of every slice, a_k = q_k·r_k (q m×c×q, r c×n×q, c ∈ {min(m, n), m}); slices with
/// real_slices[k] are factored again as their real parts, so their factors come back real.
template <class T>
void qr_slices(const system& sys, dview<const T> a, const std::vector<char>& real_slices, dview<T> q, dview<T> r) {
  const std::size_t m = a.m(), n = a.n(), slices = a.size() == 0 ? 0 : a.p(), c = q.n();
  if (slices == 0 || m == 0 || n == 0) return;
  detail::factor_slices(sys, "qr", a, real_slices, q, r,
                        [&](const auto* x, std::size_t, std::size_t count, auto* qk, auto* rk, int* info) {
                          raw::qr_slices(x, m, n, count, c, qk, rk, info, sys.stream());
                        });
}

/// @brief y(:, j, k) = x(:, j, k) for the leading y.n() columns of every slice (one strided copy).
template <class T>
void leading_columns(const system& sys, dview<const T> x, dview<T> y) {
  if (y.size() == 0) return;
  raw::copy_blocks(y.data(), y.m() * y.n() * sizeof(T), x.data(), x.m() * x.n() * sizeof(T),
                   y.m() * y.n() * sizeof(T), y.p(), sys.stream());
}

}  // namespace tprod::backend::cuda
