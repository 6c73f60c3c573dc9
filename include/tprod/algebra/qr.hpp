// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file qr.hpp
/// @brief The L-QR A = Q *_L R: one Householder QR per transform-domain slice, Â_k = Q̂_k R̂_k, mapped back by
/// L⁻¹. Q is L-orthogonal (economy: its r = min(m, n) columns are L-orthonormal, Qᵀ *_L Q = I), R is
/// f-upper-triangular (every R̂_k is upper triangular; R itself need not be, since L⁻¹ mixes the slices).
///
/// The per-slice factorizations are the backend's qr_slices task, computed where the tensor lives: Eigen's
/// HouseholderQR on the host, cuSOLVER's geqrf and orgqr on the device; no sign normalization is applied. For a real
/// tensor under the DFT the self-conjugate slices are factorized as real matrices, so Q and R come back real.
#include <algorithm>
#include <vector>

#include "tprod/algebra/detail/slice_factorization.hpp"
#include "tprod/algebra/factor_mode.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/slice_factorization.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief The factors of an L-QR in the transform domain (`*_hat`) and in the original domain:
/// Q m×r×p and R r×n×p (economy, r = min(m, n)) or Q m×m×p and R m×n×p (full), in memory space S.
template <scalar T, transform_policy L, memory_space S = host_space>
struct qr_result {
  transformed<T, L, dextents3, S> q_hat, r_hat;  ///< Q̂_k, R̂_k for every stored slice k
  tensor3<T, dextents3, S> q, r;                 ///< Q = L⁻¹(Q̂), R = L⁻¹(R̂)
};

namespace detail {
/// @brief The transform-domain factors Q̂ and R̂ of every stored slice held here (q and r left empty).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
qr_result<T, L, S> transform_domain_qr(const transformed<T, L, E, S>& ahat, factor_mode mode) {
  const std::size_t m = ahat.m(), n = ahat.n(), p = ahat.p();
  check_nonempty("qr", m, n, p);
  const std::size_t r = mode == factor_mode::full ? m : std::min(m, n);
  qr_result<T, L, S> out{transformed<T, L, dextents3, S>(dextents3(m, r, p), ahat.transform(), ahat.window(),
                                                         uninitialized),
                         transformed<T, L, dextents3, S>(dextents3(r, n, p), ahat.transform(), ahat.window(),
                                                         uninitialized),
                         {}, {}};
  ahat.window().agree_on_slices([&] {
    check_finite("qr", ahat);
    qr_slices(system_of<S>(), ahat.data().dynamic_view(), self_conjugate_slices(ahat),
              out.q_hat.data().dynamic_view(), out.r_hat.data().dynamic_view());
  });
  return out;
}
}  // namespace detail

/// @brief The L-QR of a tensor given in the transform domain: Â_k = Q̂_k R̂_k for every stored slice.
/// @throws shape_error for a tensor with an empty dimension; numerical_error for NaN or Inf.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
qr_result<T, L, S> qr(const transformed<T, L, E, S>& ahat, factor_mode mode = factor_mode::economy) {
  qr_result<T, L, S> out = detail::transform_domain_qr(ahat, mode);
  out.q = inverse_transform(out.q_hat);
  out.r = inverse_transform(out.r_hat);
  return out;
}

/// @brief The L-QR A = Q *_L R: Â = L(A), p slice QRs, factors mapped back by L⁻¹.
/// @tparam L a transform_policy (dct, dft, matrix_transform, identity_transform).
/// @throws shape_error for a tensor with an empty dimension or a transform of the wrong size.
template <any_tensor3 A, transform_policy L>
auto qr(const A& a, const L& policy, factor_mode mode = factor_mode::economy) {
  return qr(transform(a, policy), mode);
}

}  // namespace tprod
