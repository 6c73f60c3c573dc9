// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file svd.hpp
/// @brief The L-SVD A = U *_L S *_L Vᵀ (paper 000, Thm. 8): one matrix SVD per transform-domain slice,
/// Â_k = Û_k Ŝ_k V̂_kᴴ, mapped back by L⁻¹. U and V are L-orthogonal, S is f-diagonal; its diagonal tubes
/// S(i, i, :) are the singular tubes.
///
/// Truncations (ARCHITECTURE, pinned): `truncated_svd(A, L, k)` keeps the k largest singular values of every
/// slice (tubal rank k); `energy_truncated_svd(A, L, γ)` keeps the smallest multi-rank holding at least γ of
/// ‖Â‖²_F, counting each stored slice with its slice_weight (the DFT's half spectrum stands for p slices).
/// For Z a multiple of a unitary matrix, ‖A − A_k‖²_F = norm_scale(p) · Σ_k w_k Σ_{discarded i} σ_{ik}²
/// (norm_scale = 1 for dct and orthogonal Z, 1/p for the unnormalized DFT).
///
/// The per-slice SVDs are the backend's svd_slices task: Eigen's BDCSVD on the host, cuSOLVER on the device (the
/// result lives where the tensor does; σ and the multi-rank are always host values). For a real tensor under the
/// DFT, the self-conjugate slices (0 and p/2) are factorized as real matrices, so U, S and V come back real and
/// exact.
#include <Eigen/SVD>
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "tprod/algebra/detail/slice_factorization.hpp"
#include "tprod/algebra/factor_mode.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/slice_factorization.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

/// @brief The factors of an L-SVD, in the transform domain (`*_hat`) and in the original domain.
/// With r the number of singular tubes kept: U m×r×p, S r×r×p, V n×r×p (economy or truncated), or
/// U m×m×p, S m×n×p, V n×n×p (full, r = min(m, n)).
/// @tparam E the extents of the factored tensor: the factors keep its fixed m, n and p (U is
/// extents3<M, dynamic_extent, P>, V extents3<N, dynamic_extent, P>, S extents3<dynamic_extent, dynamic_extent, P>;
/// the column count r depends on the truncation), and reconstruct(r) is a tensor3<T, E>.
/// @tparam S where the factors live: that of the factored tensor (σ and `kept` are host values either way).
template <scalar T, transform_policy L, extents3_type E = dextents3, memory_space S = host_space>
struct svd_result {
  using real_type = real_t<T>;
  using extents_type = E;  ///< the factored tensor's extents
  using u_extents = extents3<E::static_extent(0), dynamic_extent, E::static_extent(2)>;  ///< U's: m×r×p
  using s_extents = extents3<dynamic_extent, dynamic_extent, E::static_extent(2)>;       ///< S's: r×r×p
  using v_extents = extents3<E::static_extent(1), dynamic_extent, E::static_extent(2)>;  ///< V's: n×r×p
  transformed<T, L, u_extents, S> u_hat;  ///< Û_k for every stored slice k
  transformed<T, L, s_extents, S> s_hat;  ///< Ŝ_k
  transformed<T, L, v_extents, S> v_hat;  ///< V̂_k
  tensor3<T, u_extents, S> u;             ///< U = L⁻¹(Û)
  tensor3<T, s_extents, S> s;             ///< S = L⁻¹(Ŝ)
  tensor3<T, v_extents, S> v;             ///< V = L⁻¹(V̂)
  /// @brief sigma(i, k) = Ŝ_k(i, i), the i-th largest singular value of stored slice k kept (0 where discarded).
  Eigen::Matrix<real_type, Eigen::Dynamic, Eigen::Dynamic> sigma;
  /// @brief How many singular values each of the p transform-domain slices keeps (the truncation's multi-rank).
  std::vector<std::size_t> kept;

  /// @brief The number of singular tubes r (columns of U and V).
  std::size_t tubes() const { return std::size_t(sigma.rows()); }
  /// @brief The singular tubes S(i, i, :) as the rows of an r×p matrix (host results; copy a device one first).
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> singular_tubes() const
    requires std::same_as<S, host_space>
  {
    Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> t(Eigen::Index(tubes()), Eigen::Index(s.p()));
    for (std::size_t i = 0; i < tubes(); ++i)
      for (std::size_t k = 0; k < s.p(); ++k) t(Eigen::Index(i), Eigen::Index(k)) = s(i, i, k);
    return t;
  }
};

namespace detail {

/// @brief The slice SVDs of Â as computed: Û (m×c_u×p) and V̂ (n×c_v×p) with all their columns (r = min(m, n), or
/// m and n in full mode) for the slices held here, and σ (r×q, all q stored slices, from every holder) on the host.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
struct slice_svds_result {
  using R = svd_result<T, L, E, S>;
  transformed<T, L, typename R::u_extents, S> u_hat;
  transformed<T, L, typename R::v_extents, S> v_hat;
  Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> sigma;
};

/// @brief The SVD of every stored slice of Â (thin or full U and V), by the backend of Â's memory space.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
slice_svds_result<T, L, E, S> slice_svds(const transformed<T, L, E, S>& ahat, factor_mode mode) {
  using R = svd_result<T, L, E, S>;
  check_nonempty("svd", ahat.m(), ahat.n(), ahat.p());
  const std::size_t m = ahat.m(), n = ahat.n(), p = ahat.p(), r = std::min(m, n);
  const bool full = mode == factor_mode::full;
  slice_svds_result<T, L, E, S> f{
      transformed<T, L, typename R::u_extents, S>(typename R::u_extents(m, full ? m : r, p), ahat.transform(),
                                                  ahat.window(), uninitialized),
      transformed<T, L, typename R::v_extents, S>(typename R::v_extents(n, full ? n : r, p), ahat.transform(),
                                                  ahat.window(), uninitialized),
      {}};
  std::vector<real_t<T>> sigma;
  ahat.window().agree_on_slices([&] {
    check_finite("svd", ahat);
    sigma = svd_slices(system_of<S>(), ahat.data().dynamic_view(), self_conjugate_slices(ahat),
                       f.u_hat.data().dynamic_view(), f.v_hat.data().dynamic_view());
  });
  sigma = ahat.window().gather_columns(sigma, r);  // every holder decides truncations from all slices' values
  f.sigma = Eigen::Map<const Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>>(
      sigma.data(), Eigen::Index(r), Eigen::Index(ahat.window().total));
  return f;
}

/// @brief The first `cols` columns of every slice of x (x itself when it has no more).
template <class X>
X leading_columns_of(X x, std::size_t cols) {
  if (x.n() == cols) return x;
  using E = typename X::extents_type;
  X out(E(x.m(), cols, x.p()), x.transform(), x.window(), uninitialized);
  leading_columns(system_of<typename X::memory_space_type>(), std::as_const(x).data().dynamic_view(),
                  out.data().dynamic_view());
  return out;
}

/// @brief The transform-domain result for an m×n×p tensor (extents type E) from its slice SVDs f, keeping `cols`
/// columns of U and V (all of them in full mode) and `kept[k]` singular values of stored slice k (over all stored
/// slices); u, s and v are left empty (with_original_factors fills them).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> assemble_svd(slice_svds_result<T, L, E, S> f, factor_mode mode, std::size_t cols,
                                    const std::vector<std::size_t>& kept) {
  using R = svd_result<T, L, E, S>;
  const slice_window& w = f.u_hat.window();
  const std::size_t m = f.u_hat.m(), n = f.v_hat.m(), p = f.u_hat.p();
  const bool full = mode == factor_mode::full;
  const std::size_t vcols = full ? n : cols, srows = full ? m : cols;
  // Ŝ is small (r×r per slice): made on the host, then moved to S.
  transformed<T, L, typename R::s_extents> s_host(typename R::s_extents(srows, vcols, p), f.u_hat.transform(), w);
  Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic> sigma =
      Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>::Zero(Eigen::Index(cols), f.sigma.cols());
  for (Eigen::Index k = 0; k < f.sigma.cols(); ++k)
    for (std::size_t i = 0; i < kept[std::size_t(k)]; ++i) sigma(Eigen::Index(i), k) = f.sigma(Eigen::Index(i), k);
  for (std::size_t k = 0; k < w.count; ++k)
    for (std::size_t i = 0; i < kept[w.first + k]; ++i)
      s_host.slice(k)(Eigen::Index(i), Eigen::Index(i)) = sigma(Eigen::Index(i), Eigen::Index(w.first + k));
  auto s_hat = [&] {
    if constexpr (std::same_as<S, host_space>) return std::move(s_host);
    else return copy(s_host, S{});
  }();
  return R{leading_columns_of(std::move(f.u_hat), full ? m : cols),
           std::move(s_hat),
           leading_columns_of(std::move(f.v_hat), vcols),
           {}, {}, {}, std::move(sigma), to_all_slices(kept, p)};
}

/// @brief r with U = L⁻¹(Û), S = L⁻¹(Ŝ), V = L⁻¹(V̂) filled in.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> with_original_factors(svd_result<T, L, E, S> r) {
  r.u = inverse_transform(r.u_hat);
  r.s = inverse_transform(r.s_hat);
  r.v = inverse_transform(r.v_hat);
  return r;
}

/// @brief The smallest Σ_k w_k r_k (the multi-rank summed over all p slices) whose kept energy
/// Σ_k w_k Σ_{i<r_k} σ_{ik}² reaches γ·Σ_k w_k Σ_i σ_{ik}², over weights 1 and 2.
///
/// Given how many singular values each weight class keeps, the best choice is that class's largest σ², which are
/// prefixes of the (sorted) slices. So it is enough to try every count c₂ of the weight-2 class and find the
/// fewest weight-1 values c₁ that complete the energy (a binary search over prefix sums): exact, O(N log N).
template <class R>
std::vector<std::size_t> energy_ranks(const std::vector<Eigen::Matrix<R, Eigen::Dynamic, 1>>& sigma,
                                      const std::vector<double>& weight, double gamma) {
  struct item {
    double energy;  // σ²
    std::size_t slice;
  };
  std::vector<item> cls[2];
  for (std::size_t k = 0; k < sigma.size(); ++k) {
    TPROD_ASSERT(weight[k] == 1.0 || weight[k] == 2.0);
    for (Eigen::Index i = 0; i < sigma[k].size(); ++i)
      cls[weight[k] == 2.0].push_back({double(sigma[k](i)) * double(sigma[k](i)), k});
  }
  std::vector<double> prefix[2];
  for (int c = 0; c < 2; ++c) {
    // Stable: equal values keep slice order and, inside a slice, index order, so the chosen ones are prefixes.
    std::stable_sort(cls[c].begin(), cls[c].end(), [](const item& a, const item& b) { return a.energy > b.energy; });
    prefix[c].assign(1, 0.0);
    for (const item& it : cls[c]) prefix[c].push_back(prefix[c].back() + double(c + 1) * it.energy);
  }
  const double target = gamma * (prefix[0].back() + prefix[1].back());
  std::size_t best_cost = std::size_t(-1), best[2] = {0, 0};
  for (std::size_t c2 = 0; c2 < prefix[1].size(); ++c2) {
    const double rest = prefix[1][c2];
    const auto it = std::partition_point(prefix[0].begin(), prefix[0].end(),
                                         [&](double p1) { return p1 + rest < target; });
    if (it == prefix[0].end()) continue;
    const std::size_t c1 = std::size_t(it - prefix[0].begin()), cost = c1 + 2 * c2;
    if (cost < best_cost) best_cost = cost, best[0] = c1, best[1] = c2;
  }
  std::vector<std::size_t> ranks(sigma.size(), 0);
  for (int c = 0; c < 2; ++c)
    for (std::size_t e = 0; e < best[c]; ++e) ++ranks[cls[c][e].slice];
  return ranks;
}

/// @brief The multi-rank of energy_truncated_svd from σ (r×q, column k holding stored slice k's values, of which
/// the first kept[k] count, over all q stored slices) and the stored slices' weights.
template <class M, class X>
std::vector<std::size_t> energy_ranks_of(const M& sigma, const std::vector<std::size_t>& kept, const X& ahat,
                                         double gamma) {
  std::vector<Eigen::Matrix<typename M::Scalar, Eigen::Dynamic, 1>> values;
  std::vector<double> weight;
  for (Eigen::Index k = 0; k < sigma.cols(); ++k) {
    values.push_back(sigma.col(k).head(Eigen::Index(kept[std::size_t(k)])));
    weight.push_back(ahat.transform().template slice_weight<typename X::original_scalar>(std::size_t(k), ahat.p()));
  }
  return energy_ranks(values, weight, gamma);
}

/// @brief The energy truncation's decision from σ (kept[k] values of stored slice k count): the multi-rank per
/// stored slice and the columns U and V keep, max(1, its largest entry).
template <class M, class X>
std::pair<std::size_t, std::vector<std::size_t>> energy_decision(const M& sigma, const std::vector<std::size_t>& kept,
                                                                 const X& ahat, double gamma) {
  std::vector<std::size_t> ranks = energy_ranks_of(sigma, kept, ahat, gamma);
  const std::size_t cols = std::max<std::size_t>(1, *std::max_element(ranks.begin(), ranks.end()));
  return {cols, std::move(ranks)};
}

/// @brief The transform-domain L-SVD kept as `decide(σ)` says: σ of every stored slice → (columns, kept values per
/// stored slice). u, s and v stay empty: the distributed layer maps its factors back itself.
template <scalar T, transform_policy L, extents3_type E, memory_space S, class Decide>
svd_result<T, L, E, S> transform_domain_svd(const transformed<T, L, E, S>& ahat, factor_mode mode, Decide&& decide) {
  auto f = slice_svds(ahat, mode);
  const auto [cols, kept] = decide(f.sigma);
  return assemble_svd(std::move(f), mode, cols, kept);
}

/// @brief The decisions of svd and truncated_svd (k values of every slice) and of energy_truncated_svd.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
auto keep_rank(const transformed<T, L, E, S>& ahat, std::size_t k) {
  return [k, q = ahat.window().total](const auto&) { return std::pair{k, std::vector<std::size_t>(q, k)}; };
}
template <scalar T, transform_policy L, extents3_type E, memory_space S>
auto keep_energy(const transformed<T, L, E, S>& ahat, double gamma) {
  return [&ahat, gamma](const auto& sigma) {
    return energy_decision(sigma, std::vector<std::size_t>(std::size_t(sigma.cols()), std::size_t(sigma.rows())),
                           ahat, gamma);
  };
}

/// @throws shape_error unless 1 ≤ k ≤ min(m, n) (`what`: the caller's name).
inline void check_tubal_rank(const char* what, std::size_t k, std::size_t m, std::size_t n, std::size_t p) {
  TPROD_EXPECTS(k >= 1 && k <= std::min(m, n), std::string(what) + ": the rank k = " + std::to_string(k) +
                                                   " must lie in 1..min(m, n) = " + std::to_string(std::min(m, n)) +
                                                   " for the tensor " + shape_string(m, n, p));
}
/// @throws shape_error for γ outside [0, 1].
inline void check_energy_fraction(const char* what, double gamma) {
  TPROD_EXPECTS(gamma >= 0.0 && gamma <= 1.0,
                std::string(what) + ": the energy fraction must lie in [0, 1], got " + number_text(gamma));
}

}  // namespace detail

/// @brief The L-SVD of a tensor given in the transform domain: Â_k = Û_k Ŝ_k V̂_kᴴ for every stored slice, computed
/// where Â lives.
/// @param ahat Â = L(A), the tensor in the transform domain.
/// @param mode economy (default; r = min(m, n) singular tubes) or full.
/// @throws shape_error for a tensor with an empty dimension; numerical_error for NaN or Inf (or an SVD that did
/// not converge).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> svd(const transformed<T, L, E, S>& ahat, factor_mode mode = factor_mode::economy) {
  return detail::with_original_factors(
      detail::transform_domain_svd(ahat, mode, detail::keep_rank(ahat, std::min(ahat.m(), ahat.n()))));
}

/// @brief The L-SVD A = U *_L S *_L Vᵀ (paper 000, Thm. 8): Â = L(A), p slice SVDs, factors mapped back by L⁻¹.
/// @tparam L a transform_policy (dct, dft, matrix_transform, identity_transform).
/// @throws shape_error for a tensor with an empty dimension or a transform of the wrong size.
template <any_tensor3 A, transform_policy L>
auto svd(const A& a, const L& policy, factor_mode mode = factor_mode::economy) {
  return svd(transform(a, policy), mode);
}

/// @brief The L-SVD truncated to tubal rank k: the k largest singular values of every slice,
/// U_k m×k×p, S_k k×k×p, V_k n×k×p, A_k = U_k *_L S_k *_L V_kᵀ (paper 000, §4.4).
/// @throws shape_error unless 1 ≤ k ≤ min(m, n).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> truncated_svd(const transformed<T, L, E, S>& ahat, std::size_t k) {
  detail::check_tubal_rank("truncated_svd", k, ahat.m(), ahat.n(), ahat.p());
  return detail::with_original_factors(
      detail::transform_domain_svd(ahat, factor_mode::economy, detail::keep_rank(ahat, k)));
}
/// @brief truncated_svd(L(A), k).
template <any_tensor3 A, transform_policy L>
auto truncated_svd(const A& a, const L& policy, std::size_t k) {
  return truncated_svd(transform(a, policy), k);
}

/// @brief The L-SVD truncated to the smallest multi-rank (r_0, …, r_{p−1}) whose kept energy
/// Σ_k Σ_{i<r_k} σ_{ik}² is at least γ·‖Â‖²_F, counted over all p transform-domain slices (a stored DFT slice
/// standing for a conjugate pair counts twice). U and V keep max(1, max_k r_k) columns; slice k of Ŝ keeps
/// its r_k largest singular values and zeros the rest. `kept` is the multi-rank.
/// @param ahat Â = L(A), the tensor in the transform domain.
/// @param gamma in [0, 1]; γ = 1 keeps every nonzero singular value, γ = 0 none.
/// @throws shape_error for γ outside [0, 1] or an empty tensor; numerical_error for NaN or Inf.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
svd_result<T, L, E, S> energy_truncated_svd(const transformed<T, L, E, S>& ahat, double gamma) {
  detail::check_energy_fraction("energy_truncated_svd", gamma);
  return detail::with_original_factors(
      detail::transform_domain_svd(ahat, factor_mode::economy, detail::keep_energy(ahat, gamma)));
}
/// @brief energy_truncated_svd(L(A), γ).
template <any_tensor3 A, transform_policy L>
auto energy_truncated_svd(const A& a, const L& policy, double gamma) {
  return energy_truncated_svd(transform(a, policy), gamma);
}

}  // namespace tprod
