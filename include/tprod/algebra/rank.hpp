// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file rank.hpp
/// @brief Ranks under the L-product (paper 000, Def. 9–10): the multi-rank (r_0, …, r_{p−1}) with
/// r_k = rank(Â_k), the average rank (1/p)·Σ_k r_k and the tubal rank, the number of nonzero singular tubes.
///
/// A singular value counts as nonzero when it exceeds the tolerance. Singular tube i is nonzero exactly when
/// some slice has more than i nonzero singular values, so the tubal rank is max_k r_k: the same tolerance
/// decides all three ranks, and they stay consistent (tubal ≥ average).
#include <algorithm>
#include <limits>
#include <vector>

#include "tprod/algebra/detail/slice_singular_values.hpp"

namespace tprod {

/// @brief The three ranks of a tensor under an L-product, and the tolerance that decided them.
struct rank_info {
  std::size_t tubal_rank = 0;            ///< number of nonzero singular tubes = max_k r_k
  double average_rank = 0;               ///< (1/p)·Σ_k r_k
  std::vector<std::size_t> multi_rank;   ///< r_k for each of the p transform-domain slices
  double tolerance = 0;                  ///< singular values above this counted
};

/// @brief The default tolerance κ·max(m, n)·ε·σ_max, σ_max the largest singular value of all slices
/// (numpy.linalg.matrix_rank's rule, applied to the whole transform domain); ε is that of R unless given
/// (data measured in single precision but computed in double keeps single precision's ε). κ is how much the
/// transform amplifies rounding (transform_condition: 1 for orthogonal and unitary-scaled transforms, Z's
/// condition estimate for a matrix_transform): a product of rank-r tensors under a Z of condition 450 leaves
/// singular values of about κ·ε·σ_max where the exact ones are zero.
template <class R>
double default_rank_tolerance(const Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic>& sigma, std::size_t m,
                              std::size_t n, double epsilon = std::numeric_limits<R>::epsilon(),
                              double condition = 1.0) {
  return condition * double(std::max(m, n)) * epsilon * double(sigma.maxCoeff());
}

/// @brief How much the transform L amplifies relative rounding errors: its condition estimate for a
/// matrix_transform, 1 for the DCT, the DFT (a multiple of a unitary matrix) and the identity.
template <transform_policy L>
double transform_condition(const L& l) {
  if constexpr (requires { l.condition(); })
    return l.condition();
  else
    return 1.0;
}

namespace detail {
/// @brief The three ranks from σ (min(m, n) × stored slices, column k stored slice k's singular values) of an
/// m×n×p tensor under L: what `ranks` decides, shared with the distributed ranks (which gather σ first).
template <class R, transform_policy L>
rank_info ranks_from_singular_values(const Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic>& sigma, std::size_t m,
                                     std::size_t n, std::size_t p, const L& l, double tol, double epsilon) {
  rank_info info;
  info.tolerance = tol < 0 ? default_rank_tolerance(sigma, m, n, epsilon, transform_condition(l)) : tol;
  std::vector<std::size_t> stored(std::size_t(sigma.cols()));
  for (std::size_t k = 0; k < stored.size(); ++k)
    stored[k] = std::size_t((sigma.col(Eigen::Index(k)).array().template cast<double>() > info.tolerance).count());
  info.multi_rank = to_all_slices(stored, p);
  info.tubal_rank = *std::max_element(info.multi_rank.begin(), info.multi_rank.end());
  double sum = 0;
  for (auto r : info.multi_rank) sum += double(r);
  info.average_rank = sum / double(p);
  return info;
}
}  // namespace detail

/// @brief Multi-rank, average rank and tubal rank of a tensor given in the transform domain.
/// @param ahat Â = L(A), the tensor in the transform domain.
/// @param tol count singular values σ > tol; negative (default): default_rank_tolerance with ε = epsilon and
/// κ = transform_condition(L).
/// @param epsilon the ε of the default tolerance: that of T's precision unless given.
/// @throws shape_error for a tensor with an empty dimension.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
rank_info ranks(const transformed<T, L, E, S>& ahat, double tol = -1,
                double epsilon = std::numeric_limits<real_t<T>>::epsilon()) {
  return detail::ranks_from_singular_values(detail::slice_singular_values(ahat), ahat.m(), ahat.n(), ahat.p(),
                                            ahat.transform(), tol, epsilon);
}

/// @brief ranks(L(A), tol, epsilon), computed where A lives.
template <any_tensor3 A, transform_policy L>
rank_info ranks(const A& a, const L& policy, double tol = -1,
                double epsilon = std::numeric_limits<real_t<value_type_of<A>>>::epsilon()) {
  return ranks(transform(a, policy), tol, epsilon);
}

/// @brief The L-tubal rank: the number of singular tubes with a singular value above tol (paper 000, Def. 10).
template <any_tensor3 A, transform_policy L>
std::size_t tubal_rank(const A& a, const L& policy, double tol = -1) {
  return ranks(a, policy, tol).tubal_rank;
}
/// @brief The L-average rank (1/p)·Σ_k rank(Â_k) (paper 000, Def. 9).
template <any_tensor3 A, transform_policy L>
double average_rank(const A& a, const L& policy, double tol = -1) {
  return ranks(a, policy, tol).average_rank;
}
/// @brief The multi-rank (rank(Â_0), …, rank(Â_{p−1})).
template <any_tensor3 A, transform_policy L>
std::vector<std::size_t> multi_rank(const A& a, const L& policy, double tol = -1) {
  return ranks(a, policy, tol).multi_rank;
}

}  // namespace tprod
