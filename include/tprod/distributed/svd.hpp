// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file svd.hpp
/// @brief The L-SVD of distributed tensors and its truncations: the one-process L-SVD on each rank's slices, whose
/// window gathers the singular values so that every rank holds σ and makes the same truncation decisions (the
/// one-process rules); the factors stay distributed by slices.
///
/// Communication: one MPI_Allgatherv of σ (min(m, n) values per stored slice) and one agreement on errors; from the
/// original domain, one all-to-all into the transform domain first.
#include <algorithm>
#include <utility>
#include <vector>

#include "tprod/algebra/svd.hpp"
#include "tprod/algebra/svd_truncation.hpp"
#include "tprod/distributed/algebra.hpp"

namespace tprod::distributed {

/// @brief The factors of a distributed L-SVD: Û, Ŝ, V̂ spread by slices like Â (inverse_transform gives U, S and V
/// by tubes), σ and the kept multi-rank on every rank.
template <scalar T, transform_policy L>
struct svd_result {
  transformed<T, L> u_hat;  ///< Û_k for every stored slice k, m×r×p
  transformed<T, L> s_hat;  ///< Ŝ_k, r×r×p
  transformed<T, L> v_hat;  ///< V̂_k, n×r×p
  /// @brief sigma(i, k): the i-th largest singular value of stored slice k kept (0 where discarded), every rank.
  Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> sigma;
  /// @brief How many singular values each of the p transform-domain slices keeps.
  std::vector<std::size_t> kept;
  /// @brief The number of singular tubes r (columns of U and V).
  std::size_t tubes() const { return std::size_t(sigma.rows()); }
};

namespace detail {
/// @brief The distributed result of the one-process transform-domain L-SVD of this rank's slices.
template <scalar T, transform_policy L>
svd_result<T, L> held(tprod::svd_result<T, L> r) {
  return {transformed<T, L>(std::move(r.u_hat)), transformed<T, L>(std::move(r.s_hat)),
          transformed<T, L>(std::move(r.v_hat)), std::move(r.sigma), std::move(r.kept)};
}
/// @brief Collective: the one-process transform-domain L-SVD of this rank's slices, kept as `decide` says.
template <scalar T, transform_policy L, class Decide>
svd_result<T, L> held_svd(const transformed<T, L>& ahat, Decide&& decide) {
  return held(tprod::detail::transform_domain_svd(ahat.local(), factor_mode::economy, std::forward<Decide>(decide)));
}
/// @brief r's slice SVDs as the one-process truncations take them (this rank's Û and V̂, σ of every slice).
template <scalar T, transform_policy L>
tprod::detail::slice_svds_result<T, L, dextents3, host_space> slice_svds_of(const svd_result<T, L>& r) {
  return {r.u_hat.local(), r.v_hat.local(), r.sigma};
}
}  // namespace detail

/// @brief Collective: the L-SVD Â_k = Û_k Ŝ_k V̂_kᴴ (economy: r = min(m, n) singular tubes), each slice on its rank.
/// @throws shape_error (every rank alike) for an empty dimension; distributed_error on every rank for NaN or Inf or
/// an SVD that did not converge, naming the rank.
template <scalar T, transform_policy L>
svd_result<T, L> svd(const transformed<T, L>& ahat) {
  return detail::held_svd(ahat, tprod::detail::keep_rank(ahat.local(), std::min(ahat.m(), ahat.n())));
}

/// @brief Collective: the L-SVD truncated to tubal rank k (the k largest singular values of every slice).
/// @throws shape_error (every rank alike) unless 1 ≤ k ≤ min(m, n).
template <scalar T, transform_policy L>
svd_result<T, L> truncated_svd(const transformed<T, L>& ahat, std::size_t k) {
  tprod::detail::check_tubal_rank("distributed::truncated_svd", k, ahat.m(), ahat.n(), ahat.p());
  return detail::held_svd(ahat, tprod::detail::keep_rank(ahat.local(), k));
}

/// @brief Collective: the L-SVD truncated to the smallest multi-rank holding at least γ of ‖Â‖²_F over all p
/// slices, decided from the gathered σ on every rank (the one-process rule, tprod::energy_truncated_svd).
/// @throws shape_error (every rank alike) for γ outside [0, 1] or an empty tensor.
template <scalar T, transform_policy L>
svd_result<T, L> energy_truncated_svd(const transformed<T, L>& ahat, double gamma) {
  tprod::detail::check_energy_fraction("distributed::energy_truncated_svd", gamma);
  return detail::held_svd(ahat, tprod::detail::keep_energy(ahat.local(), gamma));
}

/// @brief Collective: svd, truncated_svd and energy_truncated_svd of L(A) for A distributed by tubes.
template <scalar T, transform_policy L>
auto svd(const tensor3<T>& a, const L& policy) {
  return svd(transform(a, policy));
}
template <scalar T, transform_policy L>
auto truncated_svd(const tensor3<T>& a, const L& policy, std::size_t k) {
  return truncated_svd(transform(a, policy), k);
}
template <scalar T, transform_policy L>
auto energy_truncated_svd(const tensor3<T>& a, const L& policy, double gamma) {
  return energy_truncated_svd(transform(a, policy), gamma);
}

/// @brief A distributed L-SVD truncated to tubal rank k, or to the smallest multi-rank holding at least γ of its
/// energy, without factoring again (tprod::truncate and truncate_energy on each rank's slices: no communication).
/// @throws shape_error (every rank alike) unless 1 ≤ k ≤ r.tubes(), or for γ outside [0, 1].
template <scalar T, transform_policy L>
svd_result<T, L> truncate(const svd_result<T, L>& r, std::size_t k) {
  return detail::held(tprod::detail::truncate_to_rank(detail::slice_svds_of(r), r.kept, k));
}
template <scalar T, transform_policy L>
svd_result<T, L> truncate_energy(const svd_result<T, L>& r, double gamma) {
  return detail::held(tprod::detail::truncate_to_energy(detail::slice_svds_of(r), r.kept, gamma));
}

/// @brief Collective: the tensor an L-SVD represents, U *_L S *_L Vᴴ = L⁻¹(Û_k Ŝ_k V̂_kᴴ), distributed by tubes
/// (local slice products, one all-to-all).
template <scalar T, transform_policy L>
tensor3<T> reconstruct(const svd_result<T, L>& r) {
  return inverse_transform(r.u_hat * r.s_hat * transpose(r.v_hat));
}

}  // namespace tprod::distributed
