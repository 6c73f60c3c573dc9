// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file svd.hpp
/// @brief The L-SVD of distributed tensors and its truncations: every owned slice factored on its rank, the singular
/// values gathered so that every rank holds σ and makes the same truncation decisions, the factors left distributed
/// by slices.
///
/// Communication: one MPI_Allgatherv of σ (min(m, n) values per stored slice) and one agreement on errors; the
/// truncations add nothing (the energy truncation's multi-rank is decided from the gathered σ on every rank alike,
/// by the one-process rule). From the original domain, one all-to-all into the transform domain first.
#include <algorithm>
#include <string>
#include <vector>

#include "tprod/algebra/svd.hpp"
#include "tprod/distributed/transformed.hpp"

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

/// @brief Collective: the columns each rank holds of an r×(stored slices) matrix, by the slice partition, gathered
/// on every rank (MPI_Allgatherv).
template <class R>
Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic> gather_slice_columns(const communicator& comm,
                                                                      const block_partition& slices, std::size_t rows,
                                                                      const std::vector<R>& local) {
  Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic> all(Eigen::Index(rows), Eigen::Index(slices.count()));
  std::vector<int> counts(std::size_t(comm.size())), offsets(std::size_t(comm.size()));
  for (int q = 0; q < comm.size(); ++q) {
    counts[std::size_t(q)] = mpi_int(rows * slices.size(q), "singular values of one rank");
    offsets[std::size_t(q)] = mpi_int(rows * slices.begin(q), "singular values");
  }
  TPROD_MPI_CHECK(MPI_Allgatherv(local.data(), counts[std::size_t(comm.rank())], mpi_type<R>(), all.data(),
                                 counts.data(), offsets.data(), mpi_type<R>(), comm.get()));
  return all;
}

/// @brief Which of this rank's slices are self-conjugate (stored real-valued in spirit: a real tensor's DFT slices
/// 0 and p/2), factored as real matrices as on one process.
template <scalar T, transform_policy L>
std::vector<char> owned_self_conjugate_slices(const transformed<T, L>& ahat) {
  using D = typename L::template domain_scalar<T>;
  const std::size_t owned = ahat.local().p();
  std::vector<char> real(ahat.local().size() == 0 ? 0 : owned);
  for (std::size_t k = 0; k < real.size(); ++k)
    real[k] = !is_complex_v<T> && is_complex_v<D> && ahat.stored_slices() < ahat.p() &&
              ahat.slice_weight(ahat.first_slice() + k) == 1.0;
  return real;
}

/// @brief Runs `factor` on this rank's slices inside `collectively`, naming this rank's global slices in an error.
template <scalar T, transform_policy L, class F>
void factor_owned_slices(const transformed<T, L>& ahat, const char* what, F&& factor) {
  collectively(ahat.comm(), [&] {
    if (!all_finite(tprod::detail::system_of<host_space>(), ahat.local().dynamic_view()))
      throw numerical_error(std::string(what) + ": the " + ahat.shape() + " tensor holds NaN or Inf (in the " +
                            std::string(L::name()) + " transform domain); a factorization needs finite data");
    try {
      factor();
    } catch (const numerical_error& e) {
      throw numerical_error(std::string(e.what()) + " (counted from global slice " +
                            std::to_string(ahat.first_slice()) + ", the first this rank owns)");
    }
  });
}

/// @brief The distributed result from this rank's slice SVDs (u, v with r columns), the gathered σ, keeping `cols`
/// columns and kept[k] values of stored slice k (as tprod::detail::assemble_svd).
template <scalar T, transform_policy L>
svd_result<T, L> assemble(const transformed<T, L>& ahat, const transformed<T, L>& u, const transformed<T, L>& v,
                          const Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>& sigma_all, std::size_t cols,
                          const std::vector<std::size_t>& kept) {
  const auto& comm = ahat.comm();
  const std::size_t m = ahat.m(), n = ahat.n(), p = ahat.p(), first = ahat.first_slice();
  const auto sys = tprod::detail::system_of<host_space>();
  svd_result<T, L> r{transformed<T, L>(comm, m, cols, p, ahat.transform(), uninitialized),
                     transformed<T, L>(comm, cols, cols, p, ahat.transform()),
                     transformed<T, L>(comm, n, cols, p, ahat.transform(), uninitialized),
                     Eigen::Matrix<real_t<T>, Eigen::Dynamic, Eigen::Dynamic>::Zero(Eigen::Index(cols),
                                                                                    sigma_all.cols()),
                     tprod::detail::to_all_slices(kept, p)};
  leading_columns(sys, u.local().dynamic_view(), r.u_hat.local().dynamic_view());
  leading_columns(sys, v.local().dynamic_view(), r.v_hat.local().dynamic_view());
  for (Eigen::Index k = 0; k < sigma_all.cols(); ++k)
    for (std::size_t i = 0; i < kept[std::size_t(k)]; ++i) r.sigma(Eigen::Index(i), k) = sigma_all(Eigen::Index(i), k);
  for (std::size_t k = 0; k < r.s_hat.local().p(); ++k)
    for (std::size_t i = 0; i < kept[first + k]; ++i)
      r.s_hat.local().slice(k)(Eigen::Index(i), Eigen::Index(i)) = sigma_all(Eigen::Index(i), Eigen::Index(first + k));
  return r;
}

/// @brief Every rank's slice SVDs (thin, r = min(m, n) columns) and the gathered σ, then `decide(σ)` → (cols, kept).
template <scalar T, transform_policy L, class Decide>
svd_result<T, L> factor_and_assemble(const transformed<T, L>& ahat, const char* what, Decide&& decide) {
  tprod::detail::check_nonempty(what, ahat.m(), ahat.n(), ahat.p());
  const auto& comm = ahat.comm();
  const std::size_t m = ahat.m(), n = ahat.n(), p = ahat.p(), r = std::min(m, n);
  transformed<T, L> u(comm, m, r, p, ahat.transform(), uninitialized), v(comm, n, r, p, ahat.transform(), uninitialized);
  std::vector<real_t<T>> local_sigma;
  factor_owned_slices(ahat, what, [&] {
    local_sigma = svd_slices(tprod::detail::system_of<host_space>(), ahat.local().dynamic_view(),
                             owned_self_conjugate_slices(ahat), u.local().dynamic_view(), v.local().dynamic_view());
  });
  const auto sigma = gather_slice_columns(comm, ahat.slices(), r, local_sigma);
  const auto [cols, kept] = decide(sigma);
  return assemble(ahat, u, v, sigma, cols, kept);
}

}  // namespace detail

/// @brief Collective: the L-SVD Â_k = Û_k Ŝ_k V̂_kᴴ (economy: r = min(m, n) singular tubes), each slice on its rank.
/// @throws shape_error (every rank alike) for an empty dimension; distributed_error on every rank for NaN or Inf or
/// an SVD that did not converge, naming the rank.
template <scalar T, transform_policy L>
svd_result<T, L> svd(const transformed<T, L>& ahat) {
  const std::size_t r = std::min(ahat.m(), ahat.n());
  return detail::factor_and_assemble(ahat, "distributed::svd", [&](const auto&) {
    return std::pair{r, std::vector<std::size_t>(ahat.stored_slices(), r)};
  });
}

/// @brief Collective: the L-SVD truncated to tubal rank k (the k largest singular values of every slice).
/// @throws shape_error (every rank alike) unless 1 ≤ k ≤ min(m, n).
template <scalar T, transform_policy L>
svd_result<T, L> truncated_svd(const transformed<T, L>& ahat, std::size_t k) {
  TPROD_EXPECTS(k >= 1 && k <= std::min(ahat.m(), ahat.n()),
                "distributed::truncated_svd: the rank k = " + std::to_string(k) + " must lie in 1..min(m, n) = " +
                    std::to_string(std::min(ahat.m(), ahat.n())) + " for the tensor " + ahat.shape());
  return detail::factor_and_assemble(ahat, "distributed::truncated_svd", [&](const auto&) {
    return std::pair{k, std::vector<std::size_t>(ahat.stored_slices(), k)};
  });
}

/// @brief Collective: the L-SVD truncated to the smallest multi-rank holding at least γ of ‖Â‖²_F over all p
/// slices, decided from the gathered σ on every rank (the one-process rule, tprod::energy_truncated_svd).
/// @throws shape_error (every rank alike) for γ outside [0, 1] or an empty tensor.
template <scalar T, transform_policy L>
svd_result<T, L> energy_truncated_svd(const transformed<T, L>& ahat, double gamma) {
  TPROD_EXPECTS(gamma >= 0.0 && gamma <= 1.0,
                "distributed::energy_truncated_svd: the energy fraction must lie in [0, 1], got " + number_text(gamma));
  return detail::factor_and_assemble(ahat, "distributed::energy_truncated_svd", [&](const auto& sigma) {
    const auto ranks = tprod::detail::energy_ranks_of(
        sigma, std::vector<std::size_t>(ahat.stored_slices(), std::size_t(sigma.rows())), ahat, gamma);
    const std::size_t cols = std::max<std::size_t>(1, *std::max_element(ranks.begin(), ranks.end()));
    return std::pair{cols, ranks};  // per stored slice
  });
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

/// @brief Collective: the tensor an L-SVD represents, U *_L S *_L Vᴴ = L⁻¹(Û_k Ŝ_k V̂_kᴴ), distributed by tubes
/// (local slice products, one all-to-all).
template <scalar T, transform_policy L>
tensor3<T> reconstruct(const svd_result<T, L>& r) {
  transformed<T, L> ahat(r.u_hat.comm(), r.u_hat.m(), r.v_hat.m(), r.u_hat.p(), r.u_hat.transform(), uninitialized);
  for (std::size_t k = 0; k < ahat.local().p(); ++k)
    ahat.local().slice(k).noalias() =
        r.u_hat.local().slice(k) * r.s_hat.local().slice(k) * r.v_hat.local().slice(k).adjoint();
  return inverse_transform(ahat);
}

}  // namespace tprod::distributed
