// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mpo.hpp
/// @brief Matrix Product Operators (TT-matrices): a matrix W ∈ ℝ^{I×J} with I = Π I_n, J = Π J_n stored as cores
///        G_n ∈ ℝ^{R_{n−1}×I_n×J_n×R_n}; built from a dense matrix by TT-SVD (exact at full ranks), applied to a
///        batch X ∈ ℝ^{L×I} core by core without forming W, and the quantized format QTT (I_n = J_n = 2).
///
/// Index convention (little-endian, as column-major storage and paper 002): row i = i_1 + I_1·(i_2 + I_2·(…)),
/// column j = j_1 + J_1·(j_2 + …), and W(i, j) = G_1(:, i_1, j_1, :)·G_2(:, i_2, j_2, :)⋯G_N(:, i_N, j_N, :).
/// Cores are column-major with r_{n−1} fastest, then i_n, j_n, r_n.
///
/// An mpo_in<T, S> holds its cores in memory space S (a device MPO: `copy<device_space>(w)`); mpo_product of a
/// batch in S runs there, one strided-batched GEMM per core (the multiply_mode task).
#include <bit>
#include <string>
#include <vector>

#include "tprod/decomp/tensor_train.hpp"

namespace tprod {

/// @brief A matrix in MPO (TT-matrix) format, its cores ndtensors (or ndtensor_in<T, S>, held in S).
template <real_scalar T, class Tensor = ndtensor<T>>
struct mpo {
  std::vector<Tensor> cores;  ///< core n ∈ ℝ^{R_{n−1}×I_n×J_n×R_n}, R_0 = R_N = 1

  std::size_t order() const { return cores.size(); }
  /// @brief (I_1, …, I_N).
  nd_shape row_dims() const { return dims(1); }
  /// @brief (J_1, …, J_N).
  nd_shape col_dims() const { return dims(2); }
  /// @brief I = Π I_n.
  std::size_t rows() const { return detail::product(row_dims()); }
  /// @brief J = Π J_n.
  std::size_t cols() const { return detail::product(col_dims()); }
  /// @brief (R_0, …, R_N).
  std::vector<std::size_t> ranks() const {
    std::vector<std::size_t> r;
    for (const auto& c : cores) r.push_back(shape_of(c)[0]);
    r.push_back(cores.empty() ? 0 : shape_of(cores.back())[3]);
    return r;
  }
  /// @brief Entries stored, Σ_n R_{n−1}·I_n·J_n·R_n.
  std::size_t parameter_count() const {
    std::size_t n = 0;
    for (const auto& c : cores) n += c.size();
    return n;
  }

  /// @brief Throws shape_error unless the cores are of order 4 and form a chain with R_0 = R_N = 1.
  void validate(const char* where = "mpo") const { as_tensor_train(where).validate(where); }

  /// @brief The same cores as a tensor train over the merged modes I_n·J_n (index i_n + I_n·j_n); no
  ///        arithmetic, so TT rounding, norms and inner products apply to MPOs through it.
  tensor_train<T, Tensor> as_tensor_train(const char* where = "mpo") const {
    TPROD_EXPECTS(!cores.empty(), std::string(where) + ": the MPO has no cores");
    tensor_train<T, Tensor> tt;
    for (std::size_t n = 0; n < cores.size(); ++n) {
      const nd_shape s = shape_of(cores[n]);
      TPROD_EXPECTS(s.size() == 4, std::string(where) + ": core " + std::to_string(n) + " has shape " +
                                       shape_string(s) + ", expected R_{n-1}xI_nxJ_nxR_n");
      tt.cores.push_back(reshaped(cores[n], {s[0], s[1] * s[2], s[3]}));
    }
    return tt;
  }

  /// @brief The dense I×J matrix W (for checks and small sizes; mpo_product never forms it): a dense_matrix of host
  ///        cores, a matrix_in (an I×J×1 tensor3 in S) of cores in memory space S, contracted and permuted there.
  auto full() const {
    const tensor_train<T, Tensor> tt = as_tensor_train("mpo::full");
    const nd_shape ri = row_dims(), cj = col_dims();
    const std::size_t order = cores.size();
    nd_shape pairs;  // (I_1, J_1, I_2, J_2, …)
    std::vector<std::size_t> perm(2 * order);
    for (std::size_t n = 0; n < order; ++n) {
      pairs.push_back(ri[n]);
      pairs.push_back(cj[n]);
      perm[n] = 2 * n;              // all row indices first …
      perm[order + n] = 2 * n + 1;  // … then all column indices
    }
    const Tensor w = permuted(reshaped(tt.full(), pairs), perm);
    if constexpr (std::same_as<Tensor, ndtensor<T>>) {
      return dense_matrix<T>(detail::as_matrix(w, rows(), cols()));
    } else {
      using S = typename Tensor::memory_space_type;
      return tensor3<T, dextents3, S>(tensor3_view<const T, dextents3, S>(w.elements().data(), rows(), cols(), 1));
    }
  }

 private:
  nd_shape dims(std::size_t axis) const {
    nd_shape d;
    for (const auto& c : cores) {
      const nd_shape s = shape_of(c);
      d.push_back(s.size() == 4 ? s[axis] : 0);
    }
    return d;
  }
};

/// @brief An MPO whose cores live in memory space S.
template <real_scalar T, memory_space S>
using mpo_in = mpo<T, ndtensor_in<T, S>>;

/// @brief The MPO with its cores copied to memory space S.
template <memory_space S, real_scalar T>
mpo_in<T, S> copy(const mpo<T>& w, S = {}) {
  mpo_in<T, S> out;
  for (const auto& c : w.cores) out.cores.push_back(copy<S>(c));
  return out;
}

/// @brief The MPO with its cores copied to the host.
template <real_scalar T, memory_space S>
mpo<T> to_mpo(const mpo_in<T, S>& w) {
  mpo<T> out;
  for (const auto& c : w.cores) out.cores.push_back(to_ndtensor(c));
  return out;
}

namespace detail {
/// The shape (I_1, …, I_N, J_1, …, J_N) that an I×J matrix's column-major elements are read as, after checking the
/// factorizations against the matrix's shape (`shape`, "IxJ").
inline nd_shape mpo_split_shape(std::size_t rows, std::size_t cols, const std::string& shape, const nd_shape& row_dims,
                                const nd_shape& col_dims, const char* where) {
  const std::size_t order = row_dims.size();
  TPROD_EXPECTS(order > 0 && col_dims.size() == order,
                std::string(where) + ": row factorization " + shape_string(row_dims) + " and column factorization " +
                    shape_string(col_dims) + " must have the same positive length");
  TPROD_EXPECTS(product(row_dims) == rows && product(col_dims) == cols,
                std::string(where) + ": a " + shape + " matrix does not factor as (" + shape_string(row_dims) +
                    ") x (" + shape_string(col_dims) + ")");
  nd_shape split = row_dims;
  split.insert(split.end(), col_dims.begin(), col_dims.end());
  return split;
}

/// mpo_from_matrix of W's elements held as the order-2N tensor (I_1, …, I_N, J_1, …, J_N) `split` (an ndtensor or
/// an ndtensor_in): permuted to (I_1, J_1, I_2, J_2, …), TT-SVD over the merged modes I_nJ_n, cores reshaped.
template <class T, class Tensor>
mpo<T, Tensor> mpo_of_split(const Tensor& split, const nd_shape& row_dims, const nd_shape& col_dims,
                            const tt_options& options) {
  const std::size_t order = row_dims.size();
  std::vector<std::size_t> perm;
  nd_shape merged;
  for (std::size_t n = 0; n < order; ++n) {
    perm.push_back(n);
    perm.push_back(order + n);
    merged.push_back(row_dims[n] * col_dims[n]);
  }
  const auto tt = tt_svd(reshaped(permuted(split, perm), merged), options);
  mpo<T, Tensor> m;
  for (std::size_t n = 0; n < order; ++n) {
    const nd_shape s = shape_of(tt.cores[n]);
    m.cores.push_back(reshaped(tt.cores[n], {s[0], row_dims[n], col_dims[n], s[2]}));
  }
  return m;
}
}  // namespace detail

/// @brief W as an MPO with the given factorizations I = Π row_dims, J = Π col_dims, by TT-SVD of W reshaped to
///        ℝ^{I_1×⋯×I_N×J_1×⋯×J_N} and permuted to (I_1J_1, …, I_NJ_N). At full ranks (tolerance 0, no max_rank) the
///        MPO equals W up to rounding — the exact over-parameterization of paper 003; a tolerance ε guarantees
///        ‖W − MPO‖_F ≤ ε‖W‖_F.
/// @throws shape_error when the factorizations do not multiply to W's shape or have different lengths.
template <real_scalar T>
mpo<T> mpo_from_matrix(const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& w, const nd_shape& row_dims,
                       const nd_shape& col_dims, const tt_options& options = {}) {
  const nd_shape split = detail::mpo_split_shape(std::size_t(w.rows()), std::size_t(w.cols()), shape_string(w),
                                                 row_dims, col_dims, "mpo_from_matrix");
  const dense_matrix<T> plain = w;
  return detail::mpo_of_split<T>(from_column_major<T>(split, plain.data(), std::size_t(plain.size())), row_dims,
                                 col_dims, options);
}

/// @brief The same for W in memory space S (an I×J×1 matrix_in): the permutation and the TT-SVD where W lives, the
///        cores there (mpo_in<T, S>).
/// @throws shape_error as above, or when W is not a matrix (p = 1).
template <real_scalar T, memory_space S>
mpo_in<T, S> mpo_from_matrix(const matrix_in<T, S>& w, const nd_shape& row_dims, const nd_shape& col_dims,
                             const tt_options& options = {}) {
  TPROD_EXPECTS(w.p() == 1, "mpo_from_matrix: " + w.shape() + " is not a matrix (I x J x 1)");
  const nd_shape split = detail::mpo_split_shape(w.m(), w.n(), std::to_string(w.m()) + "x" + std::to_string(w.n()),
                                                 row_dims, col_dims, "mpo_from_matrix");
  return detail::mpo_of_split<T>(ndtensor_in<T, S>(split, w), row_dims, col_dims, options);
}

/// @brief Y = X·W for a batch X ∈ ℝ^{L×I}, contracting one core at a time (paper 002, eq. 4), never forming W.
///
/// The running tensor is kept as ((l, j_1, …, j_{n−1}), (r_{n−1}, i_n), (i_{n+1}, …, i_N)) in column-major order,
/// so step n is one GEMM per index of the trailing block, (L·J_1⋯J_{n−1})×(R_{n−1}I_n) times the core seen as
/// (R_{n−1}I_n)×(J_nR_n), and its output is already in the layout step n + 1 reads: no transposes at all.
/// Cost Σ_n 2·L·(J_1⋯J_{n−1})·R_{n−1}I_n·J_nR_n·(I_{n+1}⋯I_N) flops, against 2·L·I·J for the dense product.
/// @throws shape_error when X does not have I columns or the MPO is invalid.
template <real_scalar T>
dense_matrix<T> mpo_product(const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x, const mpo<T>& w) {
  w.validate("mpo_product");
  const nd_shape ri = w.row_dims(), cj = w.col_dims();
  TPROD_EXPECTS(std::size_t(x.cols()) == w.rows(),
                "mpo_product: a " + shape_string(x) + " batch cannot multiply an MPO of " +
                    std::to_string(w.rows()) + "x" + std::to_string(w.cols()) + " (" + shape_string(ri) +
                    " by " + shape_string(cj) + ")");
  const auto l = std::size_t(x.rows());
  dense_matrix<T> state = x;  // (l, i_1, …, i_N) = ((l), (r_0 = 1, i_1), (i_2, …, i_N))
  std::size_t rows = l, tail = w.rows();
  for (std::size_t n = 0; n < w.order(); ++n) {
    const std::size_t r0 = w.cores[n].shape()[0], r1 = w.cores[n].shape()[3];
    const std::size_t in = r0 * ri[n], out = cj[n] * r1;
    tail /= ri[n];
    const auto core = detail::as_matrix(w.cores[n], in, out);
    dense_matrix<T> next(Eigen::Index(rows * out), Eigen::Index(tail));
    for (std::size_t t = 0; t < tail; ++t)
      Eigen::Map<dense_matrix<T>>(next.data() + t * rows * out, Eigen::Index(rows), Eigen::Index(out)).noalias() =
          Eigen::Map<const dense_matrix<T>>(state.data() + t * rows * in, Eigen::Index(rows), Eigen::Index(in)) * core;
    state = std::move(next);
    rows *= cj[n];
  }
  return Eigen::Map<const dense_matrix<T>>(state.data(), Eigen::Index(l), Eigen::Index(w.cols()));
}

namespace detail {

/// The sizes of step n of an MPO product of a batch of `batch_rows` rows: rows (L·J_1⋯J_{n−1}), in = R_{n−1}I_n,
/// out = J_nR_n, tail = I_{n+1}⋯I_N (the running tensor ((l, j_1, …), (r_{n−1}, i_n), (i_{n+1}, …)) of mpo_product).
struct mpo_step_dims {
  std::size_t rows, in, out, tail;
};
template <class T, class Tensor>
std::vector<mpo_step_dims> mpo_steps(const mpo<T, Tensor>& w, std::size_t batch_rows) {
  std::vector<mpo_step_dims> steps;
  std::size_t rows = batch_rows, tail = w.rows();
  for (const auto& c : w.cores) {
    const nd_shape s = shape_of(c);
    tail /= s[1];
    steps.push_back({rows, s[0] * s[1], s[2] * s[3], tail});
    rows *= s[2];
  }
  return steps;
}

/// Core n of an MPO in S as a host (R_{n−1}I_n)×(J_nR_n) matrix: it is small, and the product task takes its
/// factor on the host.
template <class T, memory_space S>
dense_matrix<T> core_matrix_on_host(const ndtensor_in<T, S>& core) {
  const ndtensor<T> h = to_ndtensor(core);
  return as_matrix(h, h.shape()[0] * h.shape()[1], h.shape()[2] * h.shape()[3]);
}

/// Y = X·W for a batch in S (an L×I×1 tensor3): step n multiplies mode 1 of the running tensor, viewed as
/// rows×in×tail, by C_nᵀ (one strided-batched GEMM). With `states`, S_0 … S_{N−1} are kept for a backward pass.
template <class T, memory_space S>
tensor3<T, dextents3, S> mpo_forward_in(const tensor3<T, dextents3, S>& x, const mpo_in<T, S>& w,
                                        std::vector<tensor3<T, dextents3, S>>* states, const char* where) {
  w.validate(where);
  TPROD_EXPECTS(x.n() == w.rows() && x.p() == 1,
                std::string(where) + ": a " + x.shape() + " batch cannot multiply an MPO of " +
                    std::to_string(w.rows()) + "x" + std::to_string(w.cols()) + " (need L x " +
                    std::to_string(w.rows()) + " x 1)");
  using view = tensor3_view<const T, dextents3, S>;
  if (states) states->clear();
  tensor3<T, dextents3, S> state = x;
  const auto steps = mpo_steps(w, x.m());
  for (std::size_t n = 0; n < steps.size(); ++n) {
    const auto [rows, in, out, tail] = steps[n];
    tensor3<T, dextents3, S> next =
        tprod::mode_product(view(state.data(), rows, in, tail), core_matrix_on_host(w.cores[n]).transpose(), 1);
    if (states) states->push_back(std::move(state));
    state = std::move(next);
  }
  return tensor3<T, dextents3, S>(view(state.data(), x.m(), w.cols(), 1));  // S_N is Y, L×J
}

}  // namespace detail

/// @brief Y = X·W for a batch X ∈ ℝ^{L×I} in memory space S (an L×I×1 tensor3), core by core where it lives: the
///        contraction of mpo_product, one multiply_mode (a strided-batched GEMM on the device) per core.
/// @throws shape_error when X is not L×I×1 or the MPO is invalid.
template <real_scalar T, memory_space S>
tensor3<T, dextents3, S> mpo_product(const tensor3<T, dextents3, S>& x, const mpo_in<T, S>& w) {
  return detail::mpo_forward_in<T, S>(x, w, nullptr, "mpo_product");
}

/// @brief MPO rounding: TT rounding of the cores over merged modes (ε guarantee as tt_round); cores in memory space
///        S (an mpo_in) are rounded there.
template <real_scalar T, class Tensor>
mpo<T, Tensor> mpo_round(const mpo<T, Tensor>& w, const tt_options& options = {}) {
  const tensor_train<T, Tensor> tt = tt_round(w.as_tensor_train("mpo_round"), options);
  const nd_shape ri = w.row_dims(), cj = w.col_dims();
  mpo<T, Tensor> m;
  for (std::size_t n = 0; n < tt.order(); ++n) {
    const nd_shape s = shape_of(tt.cores[n]);
    m.cores.push_back(reshaped(tt.cores[n], {s[0], ri[n], cj[n], s[2]}));
  }
  return m;
}

/// @brief (2, 2, …, 2): the quantized factorization of a size 2^N.
/// @throws shape_error unless size is a power of two of at least 2.
inline nd_shape quantized_dims(std::size_t size) {
  TPROD_EXPECTS(size >= 2 && std::has_single_bit(size),
                "quantized_dims: " + std::to_string(size) + " is not a power of two of at least 2");
  return nd_shape(std::size_t(std::countr_zero(size)), 2);
}

/// @brief The quantized TT (QTT) of a 2^N×2^N matrix: an MPO with I_n = J_n = 2 and bond ranks at most
///        `options.max_rank` (2 by default, paper 002's "super-compression" to Σ R_{n−1}·4·R_n = 16(N − 1)
///        entries for N ≥ 2). Exact when W's QTT ranks are within the cap (e.g. a sum of two Kronecker products of
///        2×2 matrices); otherwise the best the rank cap allows, sweep by sweep.
/// @throws shape_error unless W is square with a power-of-two size.
template <real_scalar T>
mpo<T> qtt_from_matrix(const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& w,
                       tt_options options = {.max_rank = 2, .tolerance = 0.0}) {
  TPROD_EXPECTS(w.rows() == w.cols(), "qtt_from_matrix: the QTT format needs a square matrix, got " +
                                          shape_string(w));
  const nd_shape dims = quantized_dims(std::size_t(w.rows()));
  return mpo_from_matrix<T>(w, dims, dims, options);
}

/// @brief The QTT of a 2^N×2^N matrix in memory space S (an I×I×1 matrix_in), its cores there.
/// @throws shape_error unless W is square with a power-of-two size.
template <real_scalar T, memory_space S>
mpo_in<T, S> qtt_from_matrix(const matrix_in<T, S>& w, tt_options options = {.max_rank = 2, .tolerance = 0.0}) {
  TPROD_EXPECTS(w.p() == 1 && w.m() == w.n(), "qtt_from_matrix: the QTT format needs a square matrix, got " +
                                                 w.shape());
  const nd_shape dims = quantized_dims(w.m());
  return mpo_from_matrix(w, dims, dims, options);
}

}  // namespace tprod
