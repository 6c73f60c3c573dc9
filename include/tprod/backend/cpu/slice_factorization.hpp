// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_factorization.hpp
/// @brief The CPU backend's slice factorization tasks (contract: backend/kernels/slice_factorization.hpp).
/// The slice-wise LU inverse, SVDs and QRs (Eigen's PartialPivLU, BDCSVD, which itself switches to Jacobi below 16
/// columns, and HouseholderQR).
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "tprod/core/detail/eigen_svd.hpp"
#include "tprod/core/error.hpp"
#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

/// @brief out(:, :, k) = a(:, :, k)⁻¹ by LU with partial pivoting, for every slice of the square-sliced a, and
/// each slice's reciprocal condition estimate measured against the largest slice's 1-norm (so a slice that is
/// zero up to rounding counts as singular): rcond_k = rcond(A_k)·‖A_k‖₁ / max_j ‖A_j‖₁, 0 where LU meets an
/// exactly zero pivot (Eigen's estimator returns 1 for diag(1, 0)). A slice whose rcond is not above
/// `min_rcond` is left unwritten. The slices run on the system's threads when worth it.
template <class T>
std::vector<real_t<T>> invert_slices(const system& sys, tensor3_view<const T> a, tensor3_view<T> out,
                                     real_t<T> min_rcond) {
  using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  const std::size_t p = a.size() == 0 ? 0 : a.p();
  const auto one_norm = [&](std::size_t k) { return a.slice(k).cwiseAbs().colwise().sum().maxCoeff(); };
  real_t<T> scale = 0;
  for (std::size_t k = 0; k < p; ++k) scale = std::max(scale, one_norm(k));
  std::vector<real_t<T>> rconds(p);
  const std::size_t work = a.m() * a.m() * a.m() * p;
  parallel_for(p, work < parallel_min_macs ? 1 : sys.threads(), [&](std::size_t k) {
    const Eigen::PartialPivLU<matrix> lu(a.slice(k));
    const bool zero_pivot = !(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > real_t<T>(0));
    rconds[k] = scale > 0 && !zero_pivot ? lu.rcond() * one_norm(k) / scale : real_t<T>(0);
    if (rconds[k] > min_rcond) out.slice(k) = lu.inverse();
  });
  return rconds;
}

/// @brief Calls factor(k, x) for every slice k of a, with x the slice itself or, where real_slices[k], its real part
/// as a real matrix (a self-conjugate DFT slice, whose factors must stay real); on the system's threads when the
/// slices' m·n·min(m, n) operations each are worth sharing. factor must only write slice k's outputs.
template <class T, class F>
void factor_slices(const system& sys, tensor3_view<const T> a, const std::vector<char>& real_slices, F&& factor) {
  const std::size_t q = a.size() == 0 ? 0 : a.p();
  const std::size_t work = a.m() * a.n() * std::min(a.m(), a.n()) * q;
  parallel_for(q, work < parallel_min_macs ? 1 : sys.threads(), [&](std::size_t k) {
    if constexpr (is_complex_v<T>) {
      if (k < real_slices.size() && real_slices[k]) {
        factor(k, Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>(a.slice(k).real()));
        return;
      }
    }
    factor(k, a.slice(k));
  });
}

/// @brief Writes slice k's singular values into column k of σ (r×q column-major) once its SVD has converged.
/// @throws numerical_error naming the slice (`what`: the caller's name) when it has not.
template <class R, class Svd>
void keep_singular_values(const char* what, const Svd& svd, std::size_t k, std::size_t r, std::vector<R>& sigma) {
  if (svd.info() != Eigen::Success)
    throw numerical_error(std::string(what) + ": the factorization of transform-domain slice " + std::to_string(k) +
                          " did not converge");
  for (std::size_t i = 0; i < r; ++i) sigma[i + k * r] = svd.singularValues()(Eigen::Index(i));
}

/// @brief The SVD of every slice, a_k = u_k·diag(σ_k)·v_kᴴ, into u (m×c_u×q) and v (n×c_v×q): thin factors when
/// both have r = min(m, n) columns, else full ones cut to c_u and c_v; real_slices as for factor_slices.
/// @return σ, r×q column-major, non-increasing per slice.
/// @throws numerical_error naming a slice whose SVD did not converge.
template <class T>
std::vector<real_t<T>> svd_slices(const system& sys, tensor3_view<const T> a, const std::vector<char>& real_slices,
                                  tensor3_view<T> u, tensor3_view<T> v) {
  const std::size_t m = a.m(), n = a.n(), q = a.size() == 0 ? 0 : a.p(), r = std::min(m, n);
  const bool full = u.n() > r || v.n() > r;
  std::vector<real_t<T>> sigma(r * q);
  const auto keep = [&](std::size_t k, const auto& svd) {
    keep_singular_values("svd", svd, k, r, sigma);
    u.slice(k) = svd.matrixU().leftCols(Eigen::Index(u.n())).template cast<T>();
    v.slice(k) = svd.matrixV().leftCols(Eigen::Index(v.n())).template cast<T>();
  };
  const auto factor = [&](std::size_t k, const auto& x) {
    if (full)
      keep(k, tprod::detail::bdc_svd<Eigen::ComputeFullU | Eigen::ComputeFullV>(x));
    else
      keep(k, tprod::detail::bdc_svd<Eigen::ComputeThinU | Eigen::ComputeThinV>(x));
  };
  factor_slices(sys, a, real_slices, factor);
  return sigma;
}

/// @brief The singular values of every slice, without the singular vectors (BDCSVD computing neither U nor V);
/// real_slices as for factor_slices.
/// @return σ, r×q column-major (r = min(m, n)), non-increasing per slice.
/// @throws numerical_error naming a slice whose SVD did not converge.
template <class T>
std::vector<real_t<T>> singular_values_slices(const system& sys, tensor3_view<const T> a,
                                              const std::vector<char>& real_slices) {
  const std::size_t q = a.size() == 0 ? 0 : a.p(), r = std::min(a.m(), a.n());
  std::vector<real_t<T>> sigma(r * q);
  factor_slices(sys, a, real_slices, [&](std::size_t k, const auto& x) {
    keep_singular_values("singular values", tprod::detail::bdc_svd<0>(x), k, r, sigma);
  });
  return sigma;
}

/// @brief The Householder QR of every slice, a_k = q_k·r_k, into q (m×c×q) and r (c×n×q), c = min(m, n) or m. Slices
/// with real_slices[k] are factored as their real parts. No sign normalization is applied.
template <class T>
void qr_slices(const system& sys, tensor3_view<const T> a, const std::vector<char>& real_slices, tensor3_view<T> q,
               tensor3_view<T> r) {
  const std::size_t m = a.m(), c = q.n();
  const auto factor = [&](std::size_t k, const auto& x) {
    using M = Eigen::Matrix<typename std::decay_t<decltype(x)>::Scalar, Eigen::Dynamic, Eigen::Dynamic>;
    const Eigen::HouseholderQR<M> f(x);
    // q_k = H_0 ⋯ H_{c−1} applied to the first c columns of the identity (no m×m Q for the economy form).
    q.slice(k) = (f.householderQ() * M::Identity(Eigen::Index(m), Eigen::Index(c))).template cast<T>();
    r.slice(k) = f.matrixQR().topRows(Eigen::Index(c)).template triangularView<Eigen::Upper>().toDenseMatrix()
                     .template cast<T>();
  };
  factor_slices(sys, a, real_slices, factor);
}

/// @brief y(:, j, k) = x(:, j, k) for the leading y.n() columns of every slice (a column-major slice's leading
/// columns are its first m·y.n() elements).
template <class T>
void leading_columns(const system&, tensor3_view<const T> x, tensor3_view<T> y) {
  if (y.size() == 0) return;
  const std::size_t from = x.m() * x.n(), to = y.m() * y.n();
  for (std::size_t k = 0; k < y.p(); ++k) std::copy_n(x.data() + k * from, to, y.data() + k * to);
}

}  // namespace tprod::backend::cpu
