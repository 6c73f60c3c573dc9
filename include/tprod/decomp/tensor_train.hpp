// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tensor_train.hpp
/// @brief Tensor-Train (TT) format (Oseledets 2011): TT-SVD with maximal ranks or a guaranteed accuracy,
///        TT rounding, addition, scaling, inner product and norm.
///
/// Conventions: A(i_1, …, i_N) = G_1(:, i_1, :)·G_2(:, i_2, :)⋯G_N(:, i_N, :), core G_n ∈ ℝ^{R_{n−1}×I_n×R_n}
/// stored column-major (r_{n−1} fastest), R_0 = R_N = 1. ranks() returns (R_0, …, R_N). TT-SVD and rounding
/// leave every core but the last left-orthonormal (G_n as an (R_{n−1}I_n)×R_n matrix has orthonormal columns),
/// so the norm of the tensor is the norm of the last core.
///
/// TT-SVD also takes an ndtensor_in<T, S> (a device_ndtensor: cuSOLVER's SVDs and cuBLAS), and its cores stay in S:
/// one algorithm, whose carry is an Eigen matrix on the host and an r×rest×1 tensor3 in S otherwise.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tprod/decomp/detail/linalg.hpp"
#include "tprod/decomp/ndtensor.hpp"
#include "tprod/decomp/ndtensor_in.hpp"

namespace tprod {

/// @brief Truncation of TT-SVD and TT rounding.
struct tt_options {
  /// Cap on every bond rank R_1 … R_{N−1} (default: none).
  std::size_t max_rank = std::numeric_limits<std::size_t>::max();
  /// Relative accuracy ε ∈ [0, 1): each of the N − 1 truncations discards at most δ = ε‖A‖_F/√(N−1) in
  /// Frobenius norm, which guarantees ‖A − TT(A)‖_F ≤ ε‖A‖_F whenever `max_rank` does not cut deeper.
  /// 0 discards only directions of exactly zero energy (no approximation).
  double tolerance = 0.0;
};

namespace detail {

/// A = G_1 ⋯ G_N: m holds A's first n modes as a (I_1⋯I_n)×R_n matrix, one GEMM per core; column-major reshapes
/// keep i_1 fastest.
template <real_scalar T>
ndtensor<T> contract_cores(const std::vector<ndtensor<T>>& cores, const nd_shape& shape) {
  dense_matrix<T> m = as_matrix(cores[0], cores[0].shape()[1], cores[0].shape()[2]);
  for (std::size_t n = 1; n < cores.size(); ++n) {
    const std::size_t r0 = cores[n].shape()[0], i = cores[n].shape()[1], r1 = cores[n].shape()[2];
    dense_matrix<T> next = m * as_matrix(cores[n], r0, i * r1);
    m = Eigen::Map<dense_matrix<T>>(next.data(), next.rows() * Eigen::Index(i), Eigen::Index(r1));
  }
  return from_column_major<T>(shape, m.data(), std::size_t(m.size()));
}
/// The same in memory space S: the GEMMs as facewise products of single slices.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> contract_cores(const std::vector<ndtensor_in<T, S>>& cores, const nd_shape& shape) {
  using view = tensor3_view<const T, dextents3, S>;
  tensor3<T, dextents3, S> m = cores[0].elements();
  std::size_t rows = cores[0].shape()[1];
  for (std::size_t n = 1; n < cores.size(); ++n) {
    const std::size_t r0 = cores[n].shape()[0], i = cores[n].shape()[1], r1 = cores[n].shape()[2];
    tensor3<T, dextents3, S> next(rows, i * r1, 1, uninitialized);
    facewise(system_of<S>(), view(m.data(), rows, r0, 1), view(cores[n].elements().data(), r0, i * r1, 1),
             next.view());
    m = std::move(next);
    rows *= i;
  }
  return ndtensor_in<T, S>(shape, std::move(m));
}

}  // namespace detail

/// @brief A tensor in TT format, its cores ndtensors (or ndtensor_in<T, S>, held in S).
template <real_scalar T, class Tensor = ndtensor<T>>
struct tensor_train {
  std::vector<Tensor> cores;  ///< core n ∈ ℝ^{R_{n−1}×I_n×R_n}, R_0 = R_N = 1

  /// @brief N, the number of cores (the order of the tensor).
  std::size_t order() const { return cores.size(); }
  /// @brief (I_1, …, I_N).
  nd_shape shape() const {
    nd_shape s;
    for (const auto& c : cores) s.push_back(shape_of(c)[1]);
    return s;
  }
  /// @brief (R_0, R_1, …, R_N).
  std::vector<std::size_t> ranks() const {
    std::vector<std::size_t> r;
    for (const auto& c : cores) r.push_back(shape_of(c)[0]);
    r.push_back(cores.empty() ? 0 : shape_of(cores.back())[2]);
    return r;
  }
  /// @brief Entries stored, Σ_n R_{n−1}·I_n·R_n.
  std::size_t parameter_count() const {
    std::size_t n = 0;
    for (const auto& c : cores) n += c.size();
    return n;
  }

  /// @brief Throws shape_error unless the cores form a chain: order 3 each, R_0 = R_N = 1, R_n matching.
  void validate(const char* where = "tensor_train") const {
    TPROD_EXPECTS(!cores.empty(), std::string(where) + ": the tensor train has no cores");
    for (std::size_t n = 0; n < cores.size(); ++n) {
      const nd_shape s = shape_of(cores[n]);
      TPROD_EXPECTS(s.size() == 3 && s[0] > 0 && s[1] > 0 && s[2] > 0,
                    std::string(where) + ": core " + std::to_string(n) + " has shape " + shape_string(s) +
                        ", expected R_{n-1}xI_nxR_n with positive sizes");
      const std::size_t left = n == 0 ? 1 : shape_of(cores[n - 1])[2];
      TPROD_EXPECTS(s[0] == left, std::string(where) + ": core " + std::to_string(n) + " has shape " +
                                      shape_string(s) + " but the rank before it is " + std::to_string(left));
    }
    TPROD_EXPECTS(shape_of(cores.back())[2] == 1, std::string(where) + ": the last core has shape " +
                                                      shape_string(shape_of(cores.back())) + "; R_N must be 1");
  }

  /// @brief The full tensor A ∈ ℝ^{I_1×⋯×I_N}, contracted core by core (in the cores' memory space).
  Tensor full() const {
    validate("tensor_train::full");
    return detail::contract_cores<T>(cores, shape());
  }
};

/// @brief The TT format of an ndtensor_in<T, S>, its cores held in S.
template <real_scalar T, memory_space S>
using tensor_train_in = tensor_train<T, ndtensor_in<T, S>>;

namespace detail {

inline void expect_tolerance(double tolerance, const char* where) {
  TPROD_EXPECTS(tolerance >= 0 && tolerance < 1,
                std::string(where) + ": tolerance " + number_text(tolerance) + " is outside [0, 1)");
}

template <real_scalar T>
ndtensor<T> core_from(const dense_matrix<T>& m, std::size_t r0, std::size_t i, std::size_t r1) {
  return from_column_major<T>({r0, i, r1}, m.data(), std::size_t(m.size()));
}

/// Left-to-right SVD sweep shared by TT-SVD and rounding: `carry` is the remaining (R_{n−1}·I_n)×rest matrix;
/// it is split into a left-orthonormal core and the carry of the next step, truncated to energy δ² and max_rank.
template <real_scalar T, class Derived>
dense_matrix<T> split_off_core(const Eigen::MatrixBase<Derived>& carry, std::size_t r0, std::size_t i, double delta2,
                               std::size_t max_rank, ndtensor<T>& core) {
  const auto svd = tprod::detail::bdc_svd<Eigen::ComputeThinU | Eigen::ComputeThinV>(carry);
  expect_success(svd, "TT-SVD");
  const auto& sigma = svd.singularValues();
  std::vector<double> energies(std::size_t(sigma.size()));
  for (std::size_t k = 0; k < energies.size(); ++k) energies[k] = std::pow(double(sigma(Eigen::Index(k))), 2);
  const std::size_t r = truncation_rank(energies, delta2, max_rank);
  core = core_from<T>(svd.matrixU().leftCols(Eigen::Index(r)), r0, i, r);
  return sigma.head(Eigen::Index(r)).asDiagonal() * svd.matrixV().leftCols(Eigen::Index(r)).transpose();
}

/// TT-SVD's carry: the tensor as a 1×size matrix, an Eigen matrix on the host, a tensor3 in S otherwise (whose
/// matrix view each step chooses).
template <real_scalar T>
dense_matrix<T> carry_of(const ndtensor<T>& a) {
  return as_matrix(a, 1, a.size());
}
template <real_scalar T, memory_space S>
tensor3<T, dextents3, S> carry_of(const ndtensor_in<T, S>& a) {
  return a.elements();
}

/// One TT-SVD step on the carry read as a rows×(size/rows) matrix: core n split off, the next carry (R_n×rest)
/// returned.
template <real_scalar T>
dense_matrix<T> split_carry(const dense_matrix<T>& carry, std::size_t rows, std::size_t r0, std::size_t i,
                            double delta2, std::size_t max_rank, ndtensor<T>& core) {
  return split_off_core<T>(Eigen::Map<const dense_matrix<T>>(carry.data(), Eigen::Index(rows),
                                                              carry.size() / Eigen::Index(rows)),
                           r0, i, delta2, max_rank, core);
}
/// The same in memory space S: the SVD by svd_slices; U's and V's leading columns are prefixes of their memory, and
/// the next carry diag(σ_r)·V_rᵀ is V_r transposed, scaled by a mode-0 product.
template <real_scalar T, memory_space S>
tensor3<T, dextents3, S> split_carry(const tensor3<T, dextents3, S>& carry, std::size_t rows, std::size_t r0,
                                     std::size_t i, double delta2, std::size_t max_rank, ndtensor_in<T, S>& core) {
  using view = tensor3_view<const T, dextents3, S>;
  const auto sys = system_of<S>();
  const std::size_t cols = carry.size() / rows, k = std::min(rows, cols);
  tensor3<T, dextents3, S> u(rows, k, 1, uninitialized), v(cols, k, 1, uninitialized);
  const auto sigma = svd_slices(sys, view(carry.data(), rows, cols, 1), std::vector<char>{}, u.view(), v.view());
  std::vector<double> energies(k);
  for (std::size_t j = 0; j < k; ++j) energies[j] = double(sigma[j]) * double(sigma[j]);
  const std::size_t r = truncation_rank(energies, delta2, max_rank);
  core = ndtensor_in<T, S>({r0, i, r}, tensor3<T, dextents3, S>(view(u.data(), rows, r, 1)));
  tensor3<T, dextents3, S> vt(r, cols, 1, uninitialized);
  adjoint_slices(sys, view(v.data(), cols, r, 1), vt.view());
  dense_matrix<T> scale = dense_matrix<T>::Zero(Eigen::Index(r), Eigen::Index(r));
  for (std::size_t j = 0; j < r; ++j) scale(Eigen::Index(j), Eigen::Index(j)) = sigma[j];
  return tprod::mode_product(vt, scale, 0);
}

/// The last core, R_{N−1}×I_N×1, from the final carry.
template <real_scalar T>
ndtensor<T> last_core(const dense_matrix<T>& carry, std::size_t i) {
  return core_from<T>(carry, std::size_t(carry.rows()), i, 1);
}
template <real_scalar T, memory_space S>
ndtensor_in<T, S> last_core(const tensor3<T, dextents3, S>& carry, std::size_t i) {
  return ndtensor_in<T, S>({carry.size() / i, i, 1}, carry);
}

template <real_scalar T, class Tensor>
tensor_train<T, Tensor> tt_svd_of(const Tensor& a, const tt_options& options) {
  const nd_shape shape = shape_of(a);
  expect_nonempty(shape, "tt_svd");
  expect_finite(a, "tt_svd");
  expect_tolerance(options.tolerance, "tt_svd");
  TPROD_EXPECTS(options.max_rank >= 1, "tt_svd: max_rank must be at least 1");
  const std::size_t order = shape.size();
  const double norm = frobenius(a);
  const double delta2 = order > 1 ? std::pow(options.tolerance * norm, 2) / double(order - 1) : 0.0;
  tensor_train<T, Tensor> tt;
  tt.cores.resize(order);
  auto carry = carry_of(a);
  std::size_t r0 = 1;
  for (std::size_t n = 0; n + 1 < order; ++n) {
    carry = split_carry<T>(carry, r0 * shape[n], r0, shape[n], delta2, options.max_rank, tt.cores[n]);
    r0 = shape_of(tt.cores[n])[2];
  }
  tt.cores[order - 1] = last_core<T>(carry, shape[order - 1]);
  return tt;
}

/// Makes cores 1…N−1 right-orthonormal (G_n as an R_{n−1}×(I_nR_n) matrix has orthonormal rows) by QR from the
/// right, pushing the triangular factors left; ‖A‖_F is then ‖G_1‖_F.
template <real_scalar T>
void orthogonalize_right(std::vector<ndtensor<T>>& cores) {
  for (std::size_t n = cores.size() - 1; n > 0; --n) {
    const std::size_t r0 = cores[n].shape()[0], i = cores[n].shape()[1], r1 = cores[n].shape()[2];
    const Eigen::HouseholderQR<dense_matrix<T>> qr(as_matrix(cores[n], r0, i * r1).transpose());
    const std::size_t k = std::min(r0, i * r1);
    const dense_matrix<T> q = qr.householderQ() * dense_matrix<T>::Identity(Eigen::Index(i * r1), Eigen::Index(k));
    const dense_matrix<T> rt = qr.matrixQR().topRows(Eigen::Index(k)).template triangularView<Eigen::Upper>().toDenseMatrix().transpose();
    cores[n] = core_from<T>(q.transpose(), k, i, r1);
    const std::size_t p0 = cores[n - 1].shape()[0], pi = cores[n - 1].shape()[1];
    cores[n - 1] = core_from<T>(as_matrix(cores[n - 1], p0 * pi, r0) * rt, p0, pi, k);
  }
}
/// The same in memory space S: G_nᵀ = QR by qr_slices, the transposes by adjoint_slices, G_{n−1}·Rᵀ by facewise.
template <real_scalar T, memory_space S>
void orthogonalize_right(std::vector<ndtensor_in<T, S>>& cores) {
  using view = tensor3_view<const T, dextents3, S>;
  using matrix = tensor3<T, dextents3, S>;
  const auto sys = system_of<S>();
  for (std::size_t n = cores.size() - 1; n > 0; --n) {
    const nd_shape s = cores[n].shape();
    const std::size_t r0 = s[0], cols = s[1] * s[2], k = std::min(r0, cols);
    matrix gt(cols, r0, 1, uninitialized), q(cols, k, 1, uninitialized), r(k, r0, 1, uninitialized);
    matrix qt(k, cols, 1, uninitialized), rt(r0, k, 1, uninitialized);
    adjoint_slices(sys, view(cores[n].elements().data(), r0, cols, 1), gt.view());
    qr_slices(sys, view(gt.data(), cols, r0, 1), std::vector<char>{}, q.view(), r.view());
    adjoint_slices(sys, view(q.data(), cols, k, 1), qt.view());
    adjoint_slices(sys, view(r.data(), k, r0, 1), rt.view());
    cores[n] = ndtensor_in<T, S>({k, s[1], s[2]}, std::move(qt));
    const nd_shape p = cores[n - 1].shape();
    matrix left(p[0] * p[1], k, 1, uninitialized);
    facewise(sys, view(cores[n - 1].elements().data(), p[0] * p[1], r0, 1), view(rt.data(), r0, k, 1), left.view());
    cores[n - 1] = ndtensor_in<T, S>({p[0], p[1], k}, std::move(left));
  }
}

/// One step of the rounding's left-to-right sweep: core n (right-orthonormal cores after it) split into a
/// left-orthonormal core truncated to energy δ² and max_rank, and the carry diag(σ)·Vᵀ multiplied into core n + 1.
template <real_scalar T>
void round_step(std::vector<ndtensor<T>>& cores, std::size_t n, double delta2, std::size_t max_rank) {
  const std::size_t r0 = cores[n].shape()[0], i = cores[n].shape()[1], r1 = cores[n].shape()[2];
  const dense_matrix<T> carry = split_off_core<T>(as_matrix(cores[n], r0 * i, r1), r0, i, delta2, max_rank, cores[n]);
  const std::size_t ni = cores[n + 1].shape()[1], nr1 = cores[n + 1].shape()[2];
  cores[n + 1] = core_from<T>(carry * as_matrix(cores[n + 1], r1, ni * nr1), std::size_t(carry.rows()), ni, nr1);
}
/// The same in memory space S: the split by split_carry (svd_slices), the product by facewise.
template <real_scalar T, memory_space S>
void round_step(std::vector<ndtensor_in<T, S>>& cores, std::size_t n, double delta2, std::size_t max_rank) {
  using view = tensor3_view<const T, dextents3, S>;
  const std::size_t r0 = cores[n].shape()[0], i = cores[n].shape()[1];
  const tensor3<T, dextents3, S> core = cores[n].elements();  // split_carry replaces cores[n]
  const tensor3<T, dextents3, S> carry = split_carry<T>(core, r0 * i, r0, i, delta2, max_rank, cores[n]);
  const std::size_t r = shape_of(cores[n])[2], r1 = core.size() / (r0 * i);
  const nd_shape next = cores[n + 1].shape();
  tensor3<T, dextents3, S> merged(r, next[1] * next[2], 1, uninitialized);
  facewise(system_of<S>(), view(carry.data(), r, r1, 1), view(cores[n + 1].elements().data(), r1, next[1] * next[2], 1),
           merged.view());
  cores[n + 1] = ndtensor_in<T, S>({r, next[1], next[2]}, std::move(merged));
}

}  // namespace detail

/// @brief TT-SVD (Oseledets 2011, Alg. 1): successive truncated SVDs of the unfoldings, left to right.
///        With a tolerance ε, each truncation discards at most δ = ε‖A‖_F/√(N−1), so ‖A − TT(A)‖_F ≤ ε‖A‖_F.
/// @throws shape_error on an empty tensor or a tolerance outside [0, 1); numerical_error on NaN or Inf.
template <real_scalar T>
tensor_train<T> tt_svd(const ndtensor<T>& a, const tt_options& options = {}) {
  return detail::tt_svd_of<T>(a, options);
}
/// @brief TT-SVD of a tensor in memory space S, computed there (the cores stay in S).
template <real_scalar T, memory_space S>
tensor_train_in<T, S> tt_svd(const ndtensor_in<T, S>& a, const tt_options& options = {}) {
  return detail::tt_svd_of<T>(a, options);
}

/// @brief TT rounding (Oseledets 2011, Alg. 2): right-to-left QR orthogonalization, then a left-to-right
///        truncated SVD sweep with δ = ε‖A‖_F/√(N−1), so ‖A − round(A)‖_F ≤ ε‖A‖_F (when max_rank does not bind).
///        Cores in memory space S (a tensor_train_in) are rounded there, the QRs, SVDs and products through S's
///        backend tasks, and stay there.
/// @throws shape_error on an invalid train or tolerance; numerical_error on NaN or Inf.
template <real_scalar T, class Tensor>
tensor_train<T, Tensor> tt_round(const tensor_train<T, Tensor>& a, const tt_options& options = {}) {
  a.validate("tt_round");
  for (const auto& core : a.cores) detail::expect_finite(core, "tt_round");
  detail::expect_tolerance(options.tolerance, "tt_round");
  TPROD_EXPECTS(options.max_rank >= 1, "tt_round: max_rank must be at least 1");
  tensor_train<T, Tensor> tt = a;
  detail::orthogonalize_right(tt.cores);
  const std::size_t order = tt.order();
  const double norm = detail::frobenius(tt.cores[0]);
  const double delta2 = order > 1 ? std::pow(options.tolerance * norm, 2) / double(order - 1) : 0.0;
  for (std::size_t n = 0; n + 1 < order; ++n) detail::round_step(tt.cores, n, delta2, options.max_rank);
  return tt;
}

namespace detail {

/// x *= s, for a core on the host or in a memory space.
template <real_scalar T>
void scale_core(ndtensor<T>& x, T s) {
  elements(x) *= s;
}
template <real_scalar T, memory_space S>
void scale_core(ndtensor_in<T, S>& x, T s) {
  tensor3<T, dextents3, S> e = x.elements();
  if (e.size() != 0) scale(system_of<S>(), s, e.view());
  x = ndtensor_in<T, S>(x.shape(), std::move(e));
}

/// Core n of A + B: zeros of shape r0×I×r1 with A's core at rank offsets (0, 0) and B's at (off0, off1).
template <real_scalar T>
ndtensor<T> sum_core(const ndtensor<T>& a, const ndtensor<T>& b, std::size_t r0, std::size_t r1, std::size_t off0,
                     std::size_t off1) {
  ndtensor<T> core = zeros<T>({r0, a.shape()[1], r1});
  const auto place = [&](const ndtensor<T>& src, std::size_t o0, std::size_t o1) {
    const nd_shape s = shape_of(src);
    for (std::size_t q = 0; q < s[2]; ++q)
      for (std::size_t i = 0; i < s[1]; ++i)
        for (std::size_t p = 0; p < s[0]; ++p)
          core.data()[(p + o0) + r0 * (i + s[1] * (q + o1))] += src.data()[p + s[0] * (i + s[1] * q)];
  };
  place(a, 0, 0);
  place(b, off0, off1);
  return core;
}
/// The same in memory space S: each core placed by two mode products with 0/1 embedding matrices (E₀ ×₁ G ×₃ E₁,
/// E picking rank offset o: E(o + k, k) = 1), the two added by an axpy; the ranks are small, so is the work.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> sum_core(const ndtensor_in<T, S>& a, const ndtensor_in<T, S>& b, std::size_t r0, std::size_t r1,
                           std::size_t off0, std::size_t off1) {
  const auto embedded = [&](const ndtensor_in<T, S>& src, std::size_t o0, std::size_t o1) {
    const nd_shape s = src.shape();
    dense_matrix<T> e0 = dense_matrix<T>::Zero(Eigen::Index(r0), Eigen::Index(s[0]));
    dense_matrix<T> e1 = dense_matrix<T>::Zero(Eigen::Index(r1), Eigen::Index(s[2]));
    for (std::size_t k = 0; k < s[0]; ++k) e0(Eigen::Index(o0 + k), Eigen::Index(k)) = T(1);
    for (std::size_t k = 0; k < s[2]; ++k) e1(Eigen::Index(o1 + k), Eigen::Index(k)) = T(1);
    const tensor3_view<const T, dextents3, S> g(src.elements().data(), s[0], s[1], s[2]);
    return tprod::mode_product(tprod::mode_product(g, e0, 0), e1, 2);
  };
  tensor3<T, dextents3, S> core = embedded(a, 0, 0);
  core += embedded(b, off0, off1);
  return ndtensor_in<T, S>({r0, a.shape()[1], r1}, std::move(core));
}

/// One step of ⟨A, B⟩: W (R_a×R_b over the modes so far) → Σ_i A_n(:, i, :)ᵀ·W·B_n(:, i, :), in double on the host.
template <real_scalar T>
Eigen::MatrixXd inner_step(const Eigen::MatrixXd& w, const ndtensor<T>& a, const ndtensor<T>& b) {
  const nd_shape sa = shape_of(a), sb = shape_of(b);
  const Eigen::MatrixXd ca = as_matrix(a, sa[0], sa[1] * sa[2]).template cast<double>();
  Eigen::MatrixXd z = w.transpose() * ca;  // rb × (i·ra') as (rb·i) × ra'
  const Eigen::Map<Eigen::MatrixXd> zr(z.data(), Eigen::Index(sb[0] * sb[1]), Eigen::Index(sa[2]));
  return zr.transpose() * as_matrix(b, sb[0] * sb[1], sb[2]).template cast<double>();
}
/// The same in memory space S, holding V = Wᵀ (R_b×R_a) there in T: Z = V·A_n (R_b × I·R_a′, read as (R_b·I)×R_a′),
/// V′ = B_nᵀ·Z, by facewise products and one transpose of B_n.
template <real_scalar T, memory_space S>
tensor3<T, dextents3, S> inner_step(const tensor3<T, dextents3, S>& v, const ndtensor_in<T, S>& a,
                                    const ndtensor_in<T, S>& b) {
  using view = tensor3_view<const T, dextents3, S>;
  const auto sys = system_of<S>();
  const nd_shape sa = a.shape(), sb = b.shape();
  tensor3<T, dextents3, S> z(sb[0], sa[1] * sa[2], 1, uninitialized), bt(sb[2], sb[0] * sb[1], 1, uninitialized);
  facewise(sys, view(v.data(), sb[0], sa[0], 1), view(a.elements().data(), sa[0], sa[1] * sa[2], 1), z.view());
  adjoint_slices(sys, view(b.elements().data(), sb[0] * sb[1], sb[2], 1), bt.view());
  tensor3<T, dextents3, S> next(sb[2], sa[2], 1, uninitialized);
  facewise(sys, view(bt.data(), sb[2], sb[0] * sb[1], 1), view(z.data(), sb[0] * sb[1], sa[2], 1), next.view());
  return next;
}

/// ⟨A, B⟩ from the last step's 1×1 W.
inline double inner_value(const Eigen::MatrixXd& w) { return w(0, 0); }
template <real_scalar T, memory_space S>
double inner_value(const tensor3<T, dextents3, S>& v) {
  return double(in_space<host_space>(v).data()[0]);
}

/// The 1×1 W before the first core, where the cores live.
template <real_scalar T>
Eigen::MatrixXd inner_start(const std::vector<ndtensor<T>>&) {
  return Eigen::MatrixXd::Ones(1, 1);
}
template <real_scalar T, memory_space S>
tensor3<T, dextents3, S> inner_start(const std::vector<ndtensor_in<T, S>>&) {
  tensor3<T, dextents3, S> one(1, 1, 1, uninitialized);
  fill(system_of<S>(), one.view(), T(1));
  return one;
}

}  // namespace detail

/// @brief s·A: the first core scaled (where the cores live).
template <real_scalar T, class Tensor>
tensor_train<T, Tensor> operator*(T s, tensor_train<T, Tensor> a) {
  a.validate("tensor_train scaling");
  detail::scale_core(a.cores[0], s);
  return a;
}

/// @brief A + B in TT format, ranks adding up (R_n^A + R_n^B): the first cores side by side, the middle
///        ones block-diagonal, the last ones stacked; cores in a memory space are assembled there. Round the result
///        to recompress.
/// @throws shape_error when the shapes differ.
template <real_scalar T, class Tensor>
tensor_train<T, Tensor> operator+(const tensor_train<T, Tensor>& a, const tensor_train<T, Tensor>& b) {
  a.validate("tensor_train addition");
  b.validate("tensor_train addition");
  TPROD_EXPECTS(a.shape() == b.shape(), "tensor_train addition: shapes " + shape_string(a.shape()) + " and " +
                                            shape_string(b.shape()) + " differ");
  const std::size_t order = a.order();
  tensor_train<T, Tensor> c;
  for (std::size_t n = 0; n < order; ++n) {
    const nd_shape sa = shape_of(a.cores[n]), sb = shape_of(b.cores[n]);
    const bool first = n == 0, last = n + 1 == order;
    const std::size_t r0 = first ? 1 : sa[0] + sb[0], r1 = last ? 1 : sa[2] + sb[2];
    // b's block starts after a's in every rank that grows
    c.cores.push_back(detail::sum_core(a.cores[n], b.cores[n], r0, r1, first ? 0 : sa[0], last ? 0 : sa[2]));
  }
  return c;
}

/// @brief A − B = A + (−1)·B.
template <real_scalar T, class Tensor>
tensor_train<T, Tensor> operator-(const tensor_train<T, Tensor>& a, const tensor_train<T, Tensor>& b) {
  return a + T(-1) * b;
}

/// @brief ⟨A, B⟩ = Σ A(i)·B(i), contracted core by core in O(N·I·R³) without forming either tensor (on the host in
///        double; cores in a memory space contracted there in T).
/// @throws shape_error when the shapes differ.
template <real_scalar T, class Tensor>
double tt_inner(const tensor_train<T, Tensor>& a, const tensor_train<T, Tensor>& b) {
  a.validate("tt_inner");
  b.validate("tt_inner");
  TPROD_EXPECTS(a.shape() == b.shape(), "tt_inner: shapes " + shape_string(a.shape()) + " and " +
                                            shape_string(b.shape()) + " differ");
  auto w = detail::inner_start<T>(a.cores);
  for (std::size_t n = 0; n < a.order(); ++n) w = detail::inner_step<T>(w, a.cores[n], b.cores[n]);
  return detail::inner_value(w);
}

/// @brief ‖A‖_F, from the first core after right-orthogonalization (accurate even when ‖A‖ ≪ the cores' norms),
///        where the cores live.
template <real_scalar T, class Tensor>
double tt_norm(const tensor_train<T, Tensor>& a) {
  a.validate("tt_norm");
  std::vector<Tensor> cores = a.cores;
  detail::orthogonalize_right(cores);
  return detail::frobenius(cores[0]);
}

}  // namespace tprod
