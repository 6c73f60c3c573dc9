// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file block_term.hpp
/// @brief Block-term decomposition (De Lathauwer 2008) X ≈ Σ_{p=1}^{P} G_p ×_1 A_p ×_2 B_p ×_3 C_p in P rank-(L, M, N)
///        terms, fitted by alternating least squares (written for any order; third order is the usual case).
///
/// Conventions: every factor U_{p,n} ∈ ℝ^{I_n×R_n} has orthonormal columns (re-orthonormalized by QR after each
/// update, the triangular factor moving into the core), so the scale of term p lives in G_p. Each sweep solves,
/// mode by mode, the linear least-squares problem for all P factors of that mode at once, then for all cores at
/// once; both are exact minimizers (normal equations with a pseudo-inverse), so the fit never decreases.
///
/// X may live in any memory space (an ndtensor_in<T, S>, a device_ndtensor<T>): what touches X — its projections
/// X ×_{m} U_mᵀ onto the factors, its norm, the singular subspaces of the initialization and the fit's
/// reconstruction and difference — runs where X lives, through its mode products; the ALS's own state (the factors,
/// I_n×R_n, and the cores) and its small normal equations stay on the host, and so does the result.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tprod/decomp/detail/linalg.hpp"
#include "tprod/decomp/kron.hpp"
#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/ndtensor_in.hpp"

namespace tprod {

/// @brief How block_term_als (and cp_als) start.
enum class block_term_init {
  /// U_{p,n} = an orthonormal basis of S_n·Ω_{p,n}: random combinations (Ω seeded) of the leading
  /// min(P·R_n, I_n) left singular vectors S_n of X_(n), the subspace the P terms of mode n share when the fit is
  /// exact. Far fewer sweeps than a random start on tensors that do have block-term structure.
  dominant_subspace,
  random  ///< random orthonormal U_{p,n} (seeded)
};

/// @brief Options of block_term_als (and cp_als).
struct block_term_options {
  std::size_t max_sweeps = 500;  ///< at most this many ALS sweeps
  double fit_tolerance = 1e-12;  ///< stop when a sweep raises the fit by less than this
  std::uint64_t seed = 0;        ///< seed of the random parts of the initialization
  block_term_init init = block_term_init::dominant_subspace;
  /// Runs from this many initializations (seeds seed, seed + 1, …); the best fit is returned.
  std::size_t restarts = 1;
  /// After each sweep, try the extrapolated factors U_prev + k^{1/3}·(U_new − U_prev) (Bro's line search) and keep
  /// them when they fit better: it shortens the long plateaus ("swamps") ALS is known for.
  bool line_search = true;
};

/// @brief P block terms X̂ = Σ_p G_p ×_1 U_{p,0} ×_2 U_{p,1} ⋯ with the fit history of the ALS.
template <real_scalar T>
struct block_term_result {
  std::vector<ndtensor<T>> cores;                     ///< G_p ∈ ℝ^{R_1×⋯×R_N}, p = 0…P−1
  std::vector<std::vector<dense_matrix<T>>> factors;  ///< factors[p][n] = U_{p,n} ∈ ℝ^{I_n×R_n}, orthonormal columns
  nd_shape shape;                                     ///< the shape of X
  std::vector<double> fit_history;  ///< fit 1 − ‖X − X̂‖_F/‖X‖_F after the initialization and after every sweep
  double relative_error = 0;        ///< ‖X − X̂‖_F/‖X‖_F of the result
  double compression_ratio = 0;     ///< entries of X / parameter_count()
  std::size_t sweeps = 0;

  /// @brief Term p, G_p ×_1 U_{p,0} ⋯ ×_N U_{p,N−1}.
  ndtensor<T> term(std::size_t p) const {
    std::vector<std::size_t> modes(factors.at(p).size());
    for (std::size_t n = 0; n < modes.size(); ++n) modes[n] = n;
    return multi_mode_product(cores.at(p), factors[p], modes);
  }
  /// @brief X̂ = Σ_p term(p).
  ndtensor<T> reconstruct() const {
    ndtensor<T> sum = term(0);
    for (std::size_t p = 1; p < cores.size(); ++p) detail::elements(sum) += detail::elements(term(p));
    return sum;
  }
  /// @brief Entries stored: Σ_p (|G_p| + Σ_n |U_{p,n}|).
  std::size_t parameter_count() const {
    std::size_t n = 0;
    for (std::size_t p = 0; p < cores.size(); ++p) {
      n += cores[p].size();
      for (const auto& u : factors[p]) n += std::size_t(u.size());
    }
    return n;
  }
};

namespace detail {

/// X ×_{m ∈ modes} U_mᵀ with host factors, on the host: the projections of X the ALS makes (Eigen, for an ndtensor).
template <real_scalar T>
ndtensor<T> btd_project(const ndtensor<T>& x, const std::vector<dense_matrix<T>>& u,
                        const std::vector<std::size_t>& modes) {
  return multi_mode_product(x, u, modes, factor_use::transposed);
}
/// The same where X lives (the chain of mode products there), the small result copied to the host.
template <real_scalar T, memory_space S>
ndtensor<T> btd_project(const ndtensor_in<T, S>& x, const std::vector<dense_matrix<T>>& u,
                        const std::vector<std::size_t>& modes) {
  std::vector<matrix_in<T, S>> factors;
  for (const auto& f : u) factors.push_back(matrix_in_space<S>(f));
  return to_ndtensor(multi_mode_product(x, factors, modes, factor_use::transposed));
}

/// 1 − ‖X − X̂‖_F/‖X‖_F of the current terms, X̂ formed and compared where X lives.
template <real_scalar T>
double btd_fit(const ndtensor<T>& x, const block_term_result<T>& s, double norm_x) {
  return 1 - relative_difference(x, s.reconstruct(), norm_x);
}
template <real_scalar T, memory_space S>
double btd_fit(const ndtensor_in<T, S>& x, const block_term_result<T>& s, double norm_x) {
  std::vector<std::size_t> modes(s.shape.size());
  for (std::size_t n = 0; n < modes.size(); ++n) modes[n] = n;
  ndtensor_in<T, S> sum;
  for (std::size_t p = 0; p < s.cores.size(); ++p) {
    std::vector<matrix_in<T, S>> factors;
    for (const auto& f : s.factors[p]) factors.push_back(matrix_in_space<S>(f));
    ndtensor_in<T, S> term = multi_mode_product(tprod::copy<S>(s.cores[p]), factors, modes);
    if (p == 0)
      sum = std::move(term);
    else
      axpy(system_of<S>(), T(1), std::as_const(term).flat(), sum.flat());
  }
  return 1 - relative_difference(x, sum, norm_x);
}

/// The leading `cols` left singular vectors of X_(n), on the host (the dominant-subspace initialization).
template <real_scalar T>
dense_matrix<T> btd_dominant(const ndtensor<T>& x, std::size_t n, std::size_t cols) {
  return mode_singular_subspace(x, n, false).basis.leftCols(Eigen::Index(cols));
}
template <real_scalar T, memory_space S>
dense_matrix<T> btd_dominant(const ndtensor_in<T, S>& x, std::size_t n, std::size_t cols) {
  return host_matrix(mode_singular_subspace(x, n, false).basis).leftCols(Eigen::Index(cols));
}

/// U_{p,n} = Q·R with orthonormal Q; R moves into the core G_p so the term is unchanged.
template <real_scalar T>
void btd_orthonormalize_factor(block_term_result<T>& s, std::size_t p, std::size_t n) {
  const Eigen::HouseholderQR<dense_matrix<T>> qr(s.factors[p][n]);
  const auto rows = s.factors[p][n].rows(), r = s.factors[p][n].cols();
  s.factors[p][n] = qr.householderQ() * dense_matrix<T>::Identity(rows, r);
  const dense_matrix<T> tri = qr.matrixQR().topRows(r).template triangularView<Eigen::Upper>();
  s.cores[p] = mode_product(s.cores[p], tri, n);
}

template <real_scalar T>
void btd_orthonormalize(block_term_result<T>& s) {
  for (std::size_t p = 0; p < s.cores.size(); ++p)
    for (std::size_t n = 0; n < s.factors[p].size(); ++n) btd_orthonormalize_factor(s, p, n);
}

/// Solves for all P factors of one mode: X_(n) ≈ Σ_p U_p·(G_p)_(n)·(⊗_{m≠n} U_{p,m})ᵀ is linear in
/// [U_1 … U_P]; its normal equations have blocks Γ_pq = (G_p)_(n)·((G_q ×_{m≠n} U_{p,m}ᵀU_{q,m})_(n))ᵀ and
/// right-hand sides (X ×_{m≠n} U_{p,m}ᵀ)_(n)·(G_p)_(n)ᵀ.
template <real_scalar T, class Tensor>
void btd_update_mode(const Tensor& x, block_term_result<T>& s, std::size_t n) {
  const std::size_t terms = s.cores.size(), order = s.shape.size();
  const auto r = Eigen::Index(s.cores[0].shape()[n]);
  std::vector<std::size_t> others;
  for (std::size_t m = 0; m < order; ++m)
    if (m != n) others.push_back(m);
  const auto other_factors = [&](std::size_t p) {
    std::vector<dense_matrix<T>> u;
    for (const std::size_t m : others) u.push_back(s.factors[p][m]);
    return u;
  };
  dense_matrix<T> gram(r * Eigen::Index(terms), r * Eigen::Index(terms));
  dense_matrix<T> rhs(Eigen::Index(s.shape[n]), r * Eigen::Index(terms));
  for (std::size_t p = 0; p < terms; ++p) {
    const dense_matrix<T> gp = unfold(s.cores[p], n);
    rhs.middleCols(r * Eigen::Index(p), r) = unfold(btd_project(x, other_factors(p), others), n) * gp.transpose();
    for (std::size_t q = 0; q < terms; ++q) {
      std::vector<dense_matrix<T>> cross;
      for (const std::size_t m : others) cross.push_back(s.factors[p][m].transpose() * s.factors[q][m]);
      gram.block(r * Eigen::Index(p), r * Eigen::Index(q), r, r) =
          gp * unfold(multi_mode_product(s.cores[q], cross, others), n).transpose();
    }
  }
  const dense_matrix<T> all = solve_right_psd(rhs, gram);
  for (std::size_t p = 0; p < terms; ++p) {
    s.factors[p][n] = all.middleCols(r * Eigen::Index(p), r);
    btd_orthonormalize_factor(s, p, n);
  }
}

/// Solves for all P cores at once: vec(X) ≈ Σ_p (U_{p,N−1} ⊗ ⋯ ⊗ U_{p,0})·vec(G_p), normal-equation blocks
/// ⊗_m (U_{p,m}ᵀU_{q,m}) (descending m) and right-hand sides vec(X ×_m U_{p,m}ᵀ).
template <real_scalar T, class Tensor>
void btd_update_cores(const Tensor& x, block_term_result<T>& s) {
  const std::size_t terms = s.cores.size(), order = s.shape.size();
  const auto size = Eigen::Index(s.cores[0].size());
  std::vector<std::size_t> modes(order);
  for (std::size_t m = 0; m < order; ++m) modes[m] = m;
  dense_matrix<T> gram(size * Eigen::Index(terms), size * Eigen::Index(terms));
  dense_matrix<T> rhs(1, size * Eigen::Index(terms));
  for (std::size_t p = 0; p < terms; ++p) {
    rhs.middleCols(size * Eigen::Index(p), size) = elements(btd_project(x, s.factors[p], modes)).transpose();
    for (std::size_t q = 0; q < terms; ++q) {
      dense_matrix<T> block = dense_matrix<T>::Ones(1, 1);
      for (std::size_t m = 0; m < order; ++m) block = kron(dense_matrix<T>(s.factors[p][m].transpose() * s.factors[q][m]), block);
      gram.block(size * Eigen::Index(p), size * Eigen::Index(q), size, size) = block;
    }
  }
  const dense_matrix<T> g = solve_right_psd(rhs, gram);
  for (std::size_t p = 0; p < terms; ++p)
    std::copy(g.data() + size * Eigen::Index(p), g.data() + size * Eigen::Index(p + 1), s.cores[p].data());
}

/// One ALS run from one initialization (see block_term_als).
template <real_scalar T, class Tensor>
block_term_result<T> btd_run(const Tensor& x, std::size_t terms, const std::vector<std::size_t>& ranks,
                             const block_term_options& options, std::uint64_t seed,
                             const std::vector<dense_matrix<T>>& dominant) {
  const nd_shape shape = shape_of(x);
  block_term_result<T> r;
  r.shape = shape;
  for (std::size_t p = 0; p < terms; ++p) {
    r.cores.push_back(zeros<T>(ranks));
    r.factors.emplace_back();
    for (std::size_t n = 0; n < shape.size(); ++n) {
      const std::uint64_t s = seed * 1000003 + 7919 * p + n;
      r.factors[p].push_back(options.init == block_term_init::random
                                 ? random_matrix<T>(shape[n], ranks[n], s)
                                 : dense_matrix<T>(dominant[n] * random_matrix<T>(std::size_t(dominant[n].cols()), ranks[n], s)));
    }
  }
  btd_orthonormalize(r);
  const double norm_x = frobenius(x);
  const auto fit = [&](const block_term_result<T>& s) { return btd_fit(x, s, norm_x); };
  btd_update_cores(x, r);
  r.fit_history.push_back(fit(r));
  for (r.sweeps = 0; r.sweeps < options.max_sweeps;) {
    const block_term_result<T> previous = r;
    for (std::size_t n = 0; n < shape.size(); ++n) btd_update_mode(x, r, n);
    btd_update_cores(x, r);
    ++r.sweeps;
    double f = fit(r);
    if (options.line_search && r.sweeps >= 2) {
      const T step = T(std::cbrt(double(r.sweeps)));
      block_term_result<T> trial = r;
      for (std::size_t p = 0; p < terms; ++p)
        for (std::size_t n = 0; n < shape.size(); ++n)
          trial.factors[p][n] = previous.factors[p][n] + step * (r.factors[p][n] - previous.factors[p][n]);
      btd_orthonormalize(trial);
      btd_update_cores(x, trial);
      if (const double ft = fit(trial); ft > f) {
        r.cores = std::move(trial.cores);
        r.factors = std::move(trial.factors);
        f = ft;
      }
    }
    r.fit_history.push_back(f);
    if (f - r.fit_history[r.fit_history.size() - 2] < options.fit_tolerance) break;
  }
  r.relative_error = 1 - r.fit_history.back();
  r.compression_ratio = double(x.size()) / double(r.parameter_count());
  return r;
}

/// block_term_als of X in any memory space (see the public functions below).
template <real_scalar T, class Tensor>
block_term_result<T> block_term_als_of(const Tensor& x, std::size_t terms, const std::vector<std::size_t>& ranks,
                                       const block_term_options& options) {
  const nd_shape shape = shape_of(x);
  expect_nonempty(shape, "block_term_als");
  expect_finite(x, "block_term_als");
  TPROD_EXPECTS(terms >= 1, "block_term_als: at least one term is needed");
  TPROD_EXPECTS(ranks.size() == shape.size(), "block_term_als: " + std::to_string(ranks.size()) +
                                                  " ranks given for a tensor of shape " + shape_string(shape));
  for (std::size_t n = 0; n < shape.size(); ++n)
    TPROD_EXPECTS(ranks[n] >= 1 && ranks[n] <= shape[n],
                  "block_term_als: rank " + std::to_string(ranks[n]) + " for mode " + std::to_string(n) +
                      " is outside 1…" + std::to_string(shape[n]) + " (tensor of shape " + shape_string(shape) + ")");
  std::vector<dense_matrix<T>> dominant(shape.size());
  if (options.init == block_term_init::dominant_subspace)
    for (std::size_t n = 0; n < shape.size(); ++n)
      dominant[n] = btd_dominant(x, n, std::min(terms * ranks[n], shape[n]));
  TPROD_EXPECTS(options.restarts >= 1, "block_term_als: restarts must be at least 1 (one run), got 0");
  block_term_result<T> best;
  for (std::size_t k = 0; k < options.restarts; ++k) {
    block_term_result<T> r = btd_run<T>(x, terms, ranks, options, options.seed + k, dominant);
    if (k == 0 || r.relative_error < best.relative_error) best = std::move(r);
  }
  return best;
}

}  // namespace detail

/// @brief Fits P rank-(R_1, …, R_N) block terms to X by alternating least squares (P = terms; for a third-order X
///        and ranks (L, M, N) this is the rank-(L, M, N) BTD). Initial factors per options.init, initial cores
///        their least-squares fit. Stops after max_sweeps or when the fit rises by less than
///        fit_tolerance in a sweep. Like every ALS it converges to a local optimum, which may depend on the start:
///        `restarts` runs several and keeps the best.
/// @throws shape_error when terms is 0, ranks has not one entry per mode, or a rank is outside 1…I_n;
/// numerical_error on NaN or Inf in X.
template <real_scalar T>
block_term_result<T> block_term_als(const ndtensor<T>& x, std::size_t terms, const std::vector<std::size_t>& ranks,
                                    const block_term_options& options = {}) {
  return detail::block_term_als_of<T>(x, terms, ranks, options);
}

/// @brief The same for X in memory space S (a device_ndtensor: the projections of X, its norm, the initialization's
///        subspaces and the fit computed on the device); the result, small, on the host.
/// @throws as above.
template <real_scalar T, memory_space S>
block_term_result<T> block_term_als(const ndtensor_in<T, S>& x, std::size_t terms,
                                    const std::vector<std::size_t>& ranks, const block_term_options& options = {}) {
  return detail::block_term_als_of<T>(x, terms, ranks, options);
}

}  // namespace tprod
