// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tucker.hpp
/// @brief Tucker decompositions X ≈ G ×_1 U_1 ×_2 U_2 ⋯ ×_N U_N: HOSVD, sequentially truncated HOSVD and HOOI,
///        by multilinear ranks or by a relative error tolerance, over all modes or a chosen subset (partial Tucker).
///
/// Conventions: factor U_n ∈ ℝ^{I_n×R_n} has orthonormal columns ordered by decreasing captured energy (the
/// leading left singular vectors of the relevant unfolding; signs are whatever the factorization returns);
/// the core G ∈ ℝ^{R_1×⋯×R_N} is X ×_n U_nᵀ, so ‖X − X̂‖²_F = ‖X‖²_F − ‖G‖²_F. In a partial Tucker the modes
/// left out keep their size in the core and have no factor (an implicit identity).
///
/// Every algorithm takes an ndtensor (Eigen on the host) or an ndtensor_in<T, S> (the backend of S: cuBLAS and
/// cuSOLVER for a device_ndtensor), and returns its result in the same memory space, factors included
/// (ndtensor_in.hpp says how each step maps to backend tasks). One algorithm serves both.
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "tprod/decomp/detail/linalg.hpp"
#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/ndtensor_in.hpp"

namespace tprod {

/// @brief How the factor matrices are computed from the unfoldings X_(n).
enum class subspace_method {
  svd,  ///< thin BDCSVD of X_(n): accurate to about ε·σ_1 (the default)
  gram  ///< eigen-decomposition of X_(n)·X_(n)ᵀ: several times faster on wide unfoldings, but singular values
        ///< below about √ε·σ_1 are lost in rounding, so tolerances below √ε are not resolved
};

/// @brief Options of hosvd, st_hosvd and hooi. Give either `ranks` or `tolerance`.
struct tucker_options {
  /// Multilinear ranks, one per decomposed mode (in the order of `modes`), each in 1…I_n. Empty: chosen by
  /// `tolerance`.
  std::vector<std::size_t> ranks{};
  /// Relative error target ε ∈ [0, 1) used when `ranks` is empty: the result satisfies ‖X − X̂‖_F ≤ ε‖X‖_F.
  /// Each of the K decomposed modes may discard energy ε²‖X‖²_F/K (the error bound of the (ST-)HOSVD);
  /// 0 discards only directions of exactly zero energy (no approximation).
  double tolerance = 0.0;
  /// Modes to decompose (partial Tucker), numbered from 0, distinct. Empty: every mode in order. ST-HOSVD
  /// truncates in this order.
  std::vector<std::size_t> modes{};
  /// HOOI: at most this many sweeps after the HOSVD initialization.
  std::size_t max_sweeps = 50;
  /// HOOI: stop when a sweep raises the fit by less than this.
  double fit_tolerance = 1e-10;
  /// How factor matrices are computed from unfoldings.
  subspace_method subspace = subspace_method::svd;
};

namespace detail {
/// The factor matrices of decompositions of a tensor type: Eigen matrices for ndtensor, I×R×1 tensor3s in the same
/// memory space for ndtensor_in.
template <real_scalar T>
dense_matrix<T> factor_matrix_like(const ndtensor<T>&);
template <real_scalar T, memory_space S>
matrix_in<T, S> factor_matrix_like(const ndtensor_in<T, S>&);
template <class Tensor>
using factor_matrix_t = decltype(factor_matrix_like(std::declval<const Tensor&>()));

template <real_scalar T>
std::size_t columns(const dense_matrix<T>& u) {
  return std::size_t(u.cols());
}
template <real_scalar T, memory_space S>
std::size_t columns(const matrix_in<T, S>& u) {
  return u.n();
}
}  // namespace detail

/// @brief A Tucker decomposition X̂ = G ×_{m_1} U_1 ⋯ ×_{m_K} U_K over the modes m_k, of a tensor of type Tensor
///        (ndtensor, or ndtensor_in<T, S> whose core and factors stay in S).
template <real_scalar T, class Tensor = ndtensor<T>>
struct tucker_result {
  using matrix_type = detail::factor_matrix_t<Tensor>;
  Tensor core;                        ///< G: R_k at decomposed modes, the original size elsewhere
  std::vector<matrix_type> factors;   ///< factors[k] ∈ ℝ^{I_{m_k}×R_k}, orthonormal columns
  std::vector<std::size_t> modes;     ///< the decomposed modes m_k (factors[k] belongs to modes[k])
  nd_shape shape;                     ///< the shape of X
  double relative_error = 0;          ///< ‖X − X̂‖_F/‖X‖_F, measured on the reconstruction (0 when X = 0)
  double compression_ratio = 0;       ///< entries of X / (entries of the core + entries of the factors)
  /// Fit 1 − ‖X − X̂‖_F/‖X‖_F: HOSVD and ST-HOSVD one entry; HOOI the initialization's, then one per sweep
  /// (from ‖G‖, so the last entry may differ from 1 − relative_error in the last digits).
  std::vector<double> fit_history;
  std::size_t sweeps = 0;  ///< HOOI sweeps done (0 for HOSVD and ST-HOSVD)

  /// @brief X̂ = G ×_{m_1} U_1 ⋯ ×_{m_K} U_K.
  Tensor reconstruct() const { return multi_mode_product(core, factors, modes); }
  /// @brief The multilinear ranks R_k of the decomposed modes (in the order of `modes`).
  std::vector<std::size_t> ranks() const {
    std::vector<std::size_t> r;
    for (const auto& u : factors) r.push_back(detail::columns(u));
    return r;
  }
  /// @brief Entries stored: |G| + Σ_k |U_k|.
  std::size_t parameter_count() const {
    std::size_t n = core.size();
    for (const auto& u : factors) n += std::size_t(u.size());
    return n;
  }
};

/// @brief The Tucker decomposition of an ndtensor_in<T, S>, held in S.
template <real_scalar T, memory_space S>
using tucker_result_in = tucker_result<T, ndtensor_in<T, S>>;

namespace detail {

/// What a Tucker algorithm decomposes and how it picks ranks, after validating the options against X.
struct tucker_plan {
  std::vector<std::size_t> modes{};
  std::vector<std::size_t> ranks;  // empty: by energy threshold
  double threshold = 0;            // energy each mode may discard
  bool gram = false;
};

inline tucker_plan plan_tucker(const nd_shape& shape, const tucker_options& opt, double norm2, const char* where) {
  expect_nonempty(shape, where);
  tucker_plan plan;
  plan.gram = opt.subspace == subspace_method::gram;
  plan.modes = opt.modes;
  if (plan.modes.empty()) {
    plan.modes.resize(shape.size());
    std::iota(plan.modes.begin(), plan.modes.end(), std::size_t(0));
  }
  for (const std::size_t m : plan.modes) {
    expect_mode(m, shape, where);
    TPROD_EXPECTS(std::count(plan.modes.begin(), plan.modes.end(), m) == 1,
                  std::string(where) + ": mode " + std::to_string(m) + " is listed twice");
  }
  TPROD_EXPECTS(opt.tolerance >= 0 && opt.tolerance < 1, std::string(where) + ": tolerance " +
                                                             number_text(opt.tolerance) + " is outside [0, 1)");
  if (!opt.ranks.empty()) {
    TPROD_EXPECTS(opt.tolerance == 0, std::string(where) + ": give either ranks or a tolerance, not both");
    TPROD_EXPECTS(opt.ranks.size() == plan.modes.size(),
                  std::string(where) + ": " + std::to_string(opt.ranks.size()) + " ranks given for " +
                      std::to_string(plan.modes.size()) + " decomposed modes of a tensor of shape " +
                      shape_string(shape));
    for (std::size_t k = 0; k < opt.ranks.size(); ++k)
      TPROD_EXPECTS(opt.ranks[k] >= 1 && opt.ranks[k] <= shape[plan.modes[k]],
                    std::string(where) + ": rank " + std::to_string(opt.ranks[k]) + " for mode " +
                        std::to_string(plan.modes[k]) + " is outside 1…" + std::to_string(shape[plan.modes[k]]) +
                        " (tensor of shape " + shape_string(shape) + ")");
    plan.ranks = opt.ranks;
  }
  plan.threshold = opt.tolerance * opt.tolerance * norm2 / double(plan.modes.size());
  return plan;
}

/// The leading factor of mode modes[k] of y: the planned rank, or the fewest columns within the threshold.
template <class Tensor>
factor_matrix_t<Tensor> leading_factor(const Tensor& y, const tucker_plan& plan, std::size_t k) {
  const std::size_t mode = plan.modes[k];
  const auto s = mode_singular_subspace(y, mode, plan.gram);
  const std::size_t r =
      plan.ranks.empty() ? truncation_rank(s.energies, plan.threshold, shape_of(y)[mode]) : plan.ranks[k];
  return leading_columns_of(s.basis, r);
}

/// y ×_mode Uᵀ: the projection of one mode onto a factor's columns.
template <class Tensor>
Tensor project(const Tensor& y, const factor_matrix_t<Tensor>& u, std::size_t mode) {
  return multi_mode_product(y, std::vector<factor_matrix_t<Tensor>>{u}, {mode}, factor_use::transposed);
}

/// Fills the measured error, the compression ratio and (for one-pass methods) the fit.
template <class T, class Tensor>
void finish_tucker(tucker_result<T, Tensor>& r, const Tensor& x, double norm_x) {
  r.shape = shape_of(x);
  r.relative_error = relative_difference(x, r.reconstruct(), norm_x);
  r.compression_ratio = double(x.size()) / double(r.parameter_count());
  if (r.fit_history.empty()) r.fit_history.push_back(1 - r.relative_error);
}

template <real_scalar T, class Tensor>
tucker_result<T, Tensor> hosvd_of(const Tensor& x, const tucker_options& options) {
  expect_finite(x, "hosvd");
  const double norm_x = frobenius(x);
  const tucker_plan plan = plan_tucker(shape_of(x), options, norm_x * norm_x, "hosvd");
  tucker_result<T, Tensor> r;
  r.modes = plan.modes;
  for (std::size_t k = 0; k < plan.modes.size(); ++k) r.factors.push_back(leading_factor(x, plan, k));
  r.core = multi_mode_product(x, r.factors, r.modes, factor_use::transposed);
  finish_tucker(r, x, norm_x);
  return r;
}

template <real_scalar T, class Tensor>
tucker_result<T, Tensor> st_hosvd_of(const Tensor& x, const tucker_options& options) {
  expect_finite(x, "st_hosvd");
  const double norm_x = frobenius(x);
  const tucker_plan plan = plan_tucker(shape_of(x), options, norm_x * norm_x, "st_hosvd");
  tucker_result<T, Tensor> r;
  r.modes = plan.modes;
  r.core = x;
  for (std::size_t k = 0; k < plan.modes.size(); ++k) {
    r.factors.push_back(leading_factor(r.core, plan, k));
    r.core = project(r.core, r.factors.back(), plan.modes[k]);
  }
  finish_tucker(r, x, norm_x);
  return r;
}

template <real_scalar T, class Tensor>
tucker_result<T, Tensor> hooi_of(const Tensor& x, const tucker_options& options) {
  expect_finite(x, "hooi");
  tucker_result<T, Tensor> r = hosvd_of<T>(x, options);
  const double norm_x = frobenius(x), norm2 = norm_x * norm_x;
  tucker_plan plan = plan_tucker(shape_of(x), options, norm2, "hooi");
  plan.ranks = r.ranks();  // fixed from here on
  const auto fit_of = [&](const Tensor& core) {
    if (norm2 == 0) return 1.0;
    return 1 - std::sqrt(std::max(0.0, norm2 - frobenius(core) * frobenius(core))) / norm_x;
  };
  r.fit_history.assign(1, fit_of(r.core));
  const std::size_t k_count = plan.modes.size();
  for (r.sweeps = 0; r.sweeps < options.max_sweeps;) {
    Tensor projected;
    for (std::size_t k = 0; k < k_count; ++k) {
      std::vector<factor_matrix_t<Tensor>> others;
      std::vector<std::size_t> other_modes;
      for (std::size_t q = 0; q < k_count; ++q)
        if (q != k) {
          others.push_back(r.factors[q]);
          other_modes.push_back(plan.modes[q]);
        }
      projected = multi_mode_product(x, others, other_modes, factor_use::transposed);
      r.factors[k] = leading_factor(projected, plan, k);
    }
    r.core = project(projected, r.factors[k_count - 1], plan.modes[k_count - 1]);
    ++r.sweeps;
    r.fit_history.push_back(fit_of(r.core));
    if (r.fit_history.back() - r.fit_history[r.fit_history.size() - 2] < options.fit_tolerance) break;
  }
  r.fit_history.shrink_to_fit();
  finish_tucker(r, x, norm_x);
  return r;
}

}  // namespace detail

/// @brief Truncated higher-order SVD (De Lathauwer et al. 2000): U_n = leading left singular vectors of X_(n),
///        G = X ×_n U_nᵀ. Error bound ‖X − X̂‖²_F ≤ Σ_n (energy discarded in mode n).
/// @throws shape_error on bad ranks, modes or tolerance (the message names the shape); numerical_error on NaN
/// or Inf in X.
template <real_scalar T>
tucker_result<T> hosvd(const ndtensor<T>& x, const tucker_options& options = {}) {
  return detail::hosvd_of<T>(x, options);
}
/// @brief HOSVD of a tensor in memory space S, computed there (the result's core and factors stay in S).
template <real_scalar T, memory_space S>
tucker_result_in<T, S> hosvd(const ndtensor_in<T, S>& x, const tucker_options& options = {}) {
  return detail::hosvd_of<T>(x, options);
}

/// @brief Sequentially truncated HOSVD (Vannieuwenhoven et al. 2012): mode by mode (in the order of
///        `options.modes`), U_n from the partially projected tensor, which is projected at once. Cheaper than
///        HOSVD, and ‖X − X̂‖²_F equals the sum of the energies discarded at each step.
/// @throws shape_error on bad ranks, modes or tolerance; numerical_error on NaN or Inf.
template <real_scalar T>
tucker_result<T> st_hosvd(const ndtensor<T>& x, const tucker_options& options = {}) {
  return detail::st_hosvd_of<T>(x, options);
}
/// @brief ST-HOSVD of a tensor in memory space S, computed there.
template <real_scalar T, memory_space S>
tucker_result_in<T, S> st_hosvd(const ndtensor_in<T, S>& x, const tucker_options& options = {}) {
  return detail::st_hosvd_of<T>(x, options);
}

/// @brief Higher-order orthogonal iteration (De Lathauwer et al. 2000), initialized by hosvd with the same
///        options: each sweep sets U_n to the leading left singular vectors of (X ×_{m≠n} U_mᵀ)_(n). The fit
///        1 − ‖X − X̂‖_F/‖X‖_F never decreases; iteration stops after `max_sweeps` or when a sweep raises it
///        by less than `fit_tolerance`. With a tolerance, the ranks are those HOSVD picks, so the bound holds.
/// @throws shape_error on bad ranks, modes or tolerance; numerical_error on NaN or Inf.
template <real_scalar T>
tucker_result<T> hooi(const ndtensor<T>& x, const tucker_options& options = {}) {
  return detail::hooi_of<T>(x, options);
}
/// @brief HOOI of a tensor in memory space S, computed there.
template <real_scalar T, memory_space S>
tucker_result_in<T, S> hooi(const ndtensor_in<T, S>& x, const tucker_options& options = {}) {
  return detail::hooi_of<T>(x, options);
}

}  // namespace tprod
