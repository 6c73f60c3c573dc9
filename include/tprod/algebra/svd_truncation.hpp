// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file svd_truncation.hpp
/// @brief Working with an L-SVD once it is computed: truncating it to a tubal rank or an energy fraction
/// without recomputing the slice SVDs (a rank sweep costs one SVD), rebuilding the approximation, and its storage.
///
///   truncate(r, k)          keeps the k largest singular values of every slice (k ≤ r.tubes());
///   truncate_energy(r, γ)   keeps the smallest multi-rank holding at least γ of the energy r holds,
///                           Σ_k w_k Σ_i σ_{ik}², with the weights of energy_truncated_svd;
///   reconstruct(r)          A_r = U *_L S *_L Vᴴ = L⁻¹(Û_k Ŝ_k V̂_kᴴ), computed slice by slice in the transform domain;
///   storage(r)              the numbers a truncated L-SVD stores, Σ_{j<p} r_j·(m + n + 1), with r_j the multi-rank
///                           over all p slices (so a DFT conjugate pair, one complex slice, counts twice), in units
///                           of the original scalar;
///   compression_ratio(r)    m·n·p / storage(r).
/// truncate(svd(A), k) equals truncated_svd(A, k) and truncate_energy(svd(A), γ) equals
/// energy_truncated_svd(A, γ) (tested).
#include <algorithm>
#include <limits>
#include <vector>

#include "tprod/algebra/facewise.hpp"
#include "tprod/algebra/svd.hpp"
#include "tprod/algebra/transpose.hpp"

namespace tprod {

namespace detail {
/// The slice SVDs that r holds: Û and V̂ with all their columns, σ with the first kept[k] values of slice k.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
slice_svds_result<T, L, E, S> slice_svds_of(const svd_result<T, L, E, S>& r) {
  return {r.u_hat, r.v_hat, r.sigma};
}

/// @brief The transform-domain truncations of the slice SVDs f (σ of every stored slice, from every holder), of
/// which kept[j] values of slice j are kept now (over all p slices): to tubal rank k, or to the smallest multi-rank
/// holding at least γ of their energy. u, s and v are left empty.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> truncate_to_rank(slice_svds_result<T, L, E, S> f, const std::vector<std::size_t>& kept,
                                        std::size_t k) {
  TPROD_EXPECTS(k >= 1 && k <= std::size_t(f.sigma.rows()),
                "truncate: the rank k = " + std::to_string(k) + " must lie in 1.." + std::to_string(f.sigma.rows()) +
                    " (the singular tubes of the L-SVD)");
  std::vector<std::size_t> now(std::size_t(f.sigma.cols()));  // every stored slice's
  for (std::size_t j = 0; j < now.size(); ++j) now[j] = std::min(k, kept[j]);
  return assemble_svd(std::move(f), factor_mode::economy, k, now);
}
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> truncate_to_energy(slice_svds_result<T, L, E, S> f, const std::vector<std::size_t>& kept,
                                          double gamma) {
  check_energy_fraction("truncate_energy", gamma);
  const std::vector<std::size_t> stored_kept(kept.begin(), kept.begin() + f.sigma.cols());
  const auto [cols, ranks] = energy_decision(f.sigma, stored_kept, f.u_hat, gamma);
  return assemble_svd(std::move(f), factor_mode::economy, cols, ranks);
}
}  // namespace detail

/// @brief The L-SVD r truncated to tubal rank k: every slice keeps min(k, its kept count) singular values.
/// @throws shape_error unless 1 ≤ k ≤ r.tubes().
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> truncate(const svd_result<T, L, E, S>& r, std::size_t k) {
  return detail::with_original_factors(detail::truncate_to_rank(detail::slice_svds_of(r), r.kept, k));
}

/// @brief The L-SVD r truncated to the smallest multi-rank holding at least γ of its energy.
/// @throws shape_error for γ outside [0, 1].
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> truncate_energy(const svd_result<T, L, E, S>& r, double gamma) {
  return detail::with_original_factors(detail::truncate_to_energy(detail::slice_svds_of(r), r.kept, gamma));
}

/// @brief The tensor the L-SVD r represents, U *_L S *_L Vᴴ = L⁻¹(Û_k Ŝ_k V̂_kᴴ) (the truncated approximation for a
/// truncated r), computed where r lives: Ŝ_k holds σ_k's kept values on its diagonal and zeros beyond.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
tensor3<T, E, S> reconstruct(const svd_result<T, L, E, S>& r) {
  return inverse_transform(r.u_hat * r.s_hat * transpose(r.v_hat));
}

/// @brief Σ_{j<p} r_j·(m + n + 1): the numbers a truncated L-SVD stores (U, V columns and σ per slice kept).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
std::size_t storage(const svd_result<T, L, E, S>& r) {
  std::size_t total = 0;
  for (const std::size_t rj : r.kept) total += rj * (r.u.m() + r.v.m() + 1);
  return total;
}

/// @brief m·n·p / storage(r) (infinite for an L-SVD that keeps nothing).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
double compression_ratio(const svd_result<T, L, E, S>& r) {
  const double entries = double(r.u.m()) * double(r.v.m()) * double(r.u.p());
  const std::size_t s = storage(r);
  return s == 0 ? std::numeric_limits<double>::infinity() : entries / double(s);
}

}  // namespace tprod
