// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file mpo_linear.hpp
/// @brief A trainable linear layer whose weight is a Matrix Product Operator: Y = X·W for X ∈ ℝ^{r×I}, with
///        W ∈ ℝ^{I×J} held as cores 𝒢_n ∈ ℝ^{R_{n−1}×I_n×J_n×R_n} (I = Π I_n, J = Π J_n, R_0 = R_N = 1) and never
///        formed (paper 002, eqs. 2–4). Forward and backward run core by core.
///
/// The weight is a `tprod::mpo` (decomp/mpo.hpp: little-endian indices, i = i_1 + I_1·(i_2 + …), the same for j,
/// W(i, j) = 𝒢_1(:, i_1, j_1, :)⋯𝒢_N(:, i_N, j_N, :)), so a row of X read as a column-major I_1×⋯×I_N tensor is
/// the tensorized token 𝒳_l of the paper, and a row of Y is 𝒴_l.
///
/// Step n of the forward pass (as tprod::mpo_product) holds the running tensor as
/// S_n = ((l, j_1, …, j_{n−1}), (r_{n−1}, i_n), (i_{n+1}, …, i_N)) and computes, for every index t of the last
/// block, S_{n+1}(:, :, t) = S_n(:, :, t)·C_n with C_n the core as an (R_{n−1}I_n)×(J_nR_n) matrix. Its output is
/// already S_{n+1}'s layout, and S_N is Y. The backward pass reverses it with the states S_n:
///   ∂J/∂C_n = Σ_t S_n(:, :, t)ᵀ·G_{n+1}(:, :, t),   G_n(:, :, t) = G_{n+1}(:, :, t)·C_nᵀ,   G_N = ∂J/∂Y,
/// so d𝒢_n has the core's shape and ∂J/∂X = G_0.
///
/// Rows of X are independent, so both passes run on blocks of rows (in parallel), each block through all N cores
/// while its states stay in cache; the backward pass recomputes a block's states rather than keeping them
/// (mpo_linear_saved says why).
///
/// Parameter count Σ_n R_{n−1}·I_n·J_n·R_n (the cores' entries; this layer has no bias). In the quantized format
/// (I_n = J_n = 2, R_n = 2, N ≥ 2) the first and last cores have 8 entries and the N − 2 middle ones 16, so
/// 16(N − 1) in all, against 4^N for the dense W.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/core/parallel.hpp"
#include "tprod/decomp/mpo.hpp"

namespace tprod::nn {

/// @brief The weight of an MPO linear layer (cores ndtensors, or ndtensor_in<T, S> for a layer in memory space S).
template <real_scalar T, class Tensor = ndtensor<T>>
struct mpo_linear_params {
  mpo<T, Tensor> weight;

  std::size_t in_width() const { return weight.rows(); }    ///< I
  std::size_t out_width() const { return weight.cols(); }   ///< J
  std::size_t parameter_count() const { return weight.parameter_count(); }

  /// @brief Visits the cores as f(name, Tensor&), names "<prefix>core_<n>", in core order.
  template <class F>
  void for_each(F&& f, const std::string& prefix = "") {
    for (std::size_t n = 0; n < weight.cores.size(); ++n) {
      const std::string name = prefix + "core_" + std::to_string(n);
      f(name, weight.cores[n]);
    }
  }
};

/// @brief A zero weight with the cores' shapes of p (the gradient's container).
template <real_scalar T>
mpo_linear_params<T> zeros_like(const mpo_linear_params<T>& p) {
  mpo_linear_params<T> z;
  for (const auto& c : p.weight.cores) z.weight.cores.push_back(zeros<T>(shape_of(c)));
  return z;
}

/// @brief Random cores, i.i.d. uniform in [−a, a] with the same a for every core, chosen so that each entry of
///        W = 𝒢_1⋯𝒢_N has the variance 1/(3I) of the dense L-linear layer's U[−1/√I, 1/√I] weights: an entry of W
///        sums Π_{n=1}^{N−1} R_n products of N independent zero-mean entries, so Var w = (a²/3)^N·Π R_n.
/// @param row_dims (I_1, …, I_N), the factorization of the input size I = Π I_n.
/// @param col_dims (J_1, …, J_N), the factorization of the output size J = Π J_n.
/// @param bond_ranks (R_1, …, R_{N−1}).
/// @param seed the seed of the random cores.
/// @throws shape_error when the factorizations differ in length, a size or rank is zero, or bond_ranks does not
///         have N − 1 entries.
template <real_scalar T>
mpo_linear_params<T> make_mpo_linear_params(const nd_shape& row_dims, const nd_shape& col_dims,
                                            const std::vector<std::size_t>& bond_ranks, std::uint64_t seed) {
  const std::size_t order = row_dims.size();
  TPROD_EXPECTS(order > 0 && col_dims.size() == order && bond_ranks.size() + 1 == order,
                "nn::make_mpo_linear_params: row factorization " + tprod::shape_string(row_dims) +
                    ", column factorization " + tprod::shape_string(col_dims) + " and " +
                    std::to_string(bond_ranks.size()) + " bond ranks (need N, N and N - 1 entries)");
  std::vector<std::size_t> ranks{1};
  ranks.insert(ranks.end(), bond_ranks.begin(), bond_ranks.end());
  ranks.push_back(1);
  double paths = 1;
  for (std::size_t n = 0; n < order; ++n) {
    TPROD_EXPECTS(row_dims[n] > 0 && col_dims[n] > 0 && ranks[n + 1] > 0,
                  "nn::make_mpo_linear_params: sizes and ranks must be positive (core " + std::to_string(n) + ")");
    paths *= double(ranks[n + 1]);
  }
  const double variance = 1.0 / (3.0 * double(tprod::detail::product(row_dims)));
  const T a = T(std::sqrt(3.0 * std::pow(variance / paths, 1.0 / double(order))));
  mpo_linear_params<T> p;
  for (std::size_t n = 0; n < order; ++n) {
    ndtensor<T> core = random_ndtensor<T>({ranks[n], row_dims[n], col_dims[n], ranks[n + 1]}, seed + n);
    tprod::detail::elements(core) *= a;
    p.weight.cores.push_back(std::move(core));
  }
  return p;
}

/// @brief As above with every bond rank equal to `rank`.
template <real_scalar T>
mpo_linear_params<T> make_mpo_linear_params(const nd_shape& row_dims, const nd_shape& col_dims, std::size_t rank,
                                            std::uint64_t seed) {
  return make_mpo_linear_params<T>(row_dims, col_dims,
                                   std::vector<std::size_t>(row_dims.empty() ? 0 : row_dims.size() - 1, rank), seed);
}

/// @brief The parameters of an MPO linear layer in memory space S.
template <real_scalar T, memory_space S>
using mpo_linear_params_in = mpo_linear_params<T, ndtensor_in<T, S>>;

/// @brief The parameters with their cores copied to memory space S.
template <memory_space S, real_scalar T>
mpo_linear_params_in<T, S> copy(const mpo_linear_params<T>& p, S = {}) {
  return {copy<S>(p.weight)};
}

/// @brief The quantized layer (paper 002's "super-compression"): I = 2^N, J = 2^N, I_n = J_n = 2, bond ranks
///        `rank` (2 by default: 16(N − 1) parameters).
/// @throws shape_error unless I and J are powers of two of at least 2 with the same exponent N.
template <real_scalar T>
mpo_linear_params<T> make_qtt_linear_params(std::size_t in, std::size_t out, std::uint64_t seed,
                                            std::size_t rank = 2) {
  const nd_shape ri = quantized_dims(in), cj = quantized_dims(out);
  TPROD_EXPECTS(ri.size() == cj.size(), "nn::make_qtt_linear_params: I = " + std::to_string(in) + " = 2^" +
                                            std::to_string(ri.size()) + " and J = " + std::to_string(out) + " = 2^" +
                                            std::to_string(cj.size()) +
                                            " need the same number of binary factors");
  return make_mpo_linear_params<T>(ri, cj, rank, seed);
}

/// @brief The layer of a dense W ∈ ℝ^{I×J} by TT-SVD (tprod::mpo_from_matrix): exact at full ranks (the default
///        options), or truncated with a guaranteed ‖W − MPO‖_F ≤ ε‖W‖_F / capped ranks.
/// @throws shape_error when the factorizations do not multiply to W's shape.
template <real_scalar T>
mpo_linear_params<T> mpo_linear_from_dense(const dense_matrix<T>& w, const nd_shape& row_dims,
                                           const nd_shape& col_dims, const tt_options& options = {}) {
  return {mpo_from_matrix<T>(w, row_dims, col_dims, options)};
}

namespace detail {
using tprod::detail::mpo_step_dims;
using tprod::detail::mpo_steps;
template <class T>
Eigen::Map<const dense_matrix<T>> mpo_core_matrix(const ndtensor<T>& core) {
  const auto s = core.shape();
  return tprod::detail::as_matrix(core, s[0] * s[1], s[2] * s[3]);
}

/// One thread's buffers for a block of rows: the states S_0, …, S_{N−1} and two running tensors.
template <class T>
struct mpo_block_buffers {
  std::vector<dense_matrix<T>> states;
  dense_matrix<T> a, b;
};

/// The rows of X per block: as many as keep the block's states and running gradients within 256 KiB of a core's
/// cache (at least 16). A function of the shapes alone, so that sums over blocks do not depend on the thread count.
template <class T>
std::size_t mpo_block_rows(const mpo<T>& w, std::size_t rows) {
  std::size_t per_row = 0, widest = 0;
  for (const auto& d : mpo_steps(w, 1)) {
    per_row += d.rows * d.in * d.tail;
    widest = std::max({widest, d.rows * d.in * d.tail, d.rows * d.out * d.tail});
  }
  per_row += 2 * widest;
  const std::size_t budget = (std::size_t(256) << 10) / sizeof(T);
  return std::max<std::size_t>(1, std::min(rows, std::max<std::size_t>(16, budget / std::max<std::size_t>(1, per_row))));
}

/// dst (=, or += when `accumulate`) a·b. A coefficient loop when the product is narrow (a's columns, or dst's
/// entries, few): it streams the panels once, vectorized; Eigen's GEMM would first pack them and zero dst, which at
/// such widths costs more than the product (3× for the quantized layer's 4 columns).
template <class D, class A, class B>
void mpo_product(D&& dst, const A& a, const B& b, bool accumulate = false) {
  const bool narrow = a.cols() <= 16 || dst.size() <= 256;
  if (accumulate) {
    if (narrow)
      dst.noalias() += a.lazyProduct(b);
    else
      dst.noalias() += a * b;
  } else if (narrow) {
    dst.noalias() = a.lazyProduct(b);
  } else {
    dst.noalias() = a * b;
  }
}

/// The t-th rows×width panel of a step's buffer.
template <class T>
auto mpo_panel(T* data, std::size_t rows, std::size_t width, std::size_t t) {
  using matrix_type = std::conditional_t<std::is_const_v<T>, const dense_matrix<std::remove_const_t<T>>,
                                         dense_matrix<std::remove_const_t<T>>>;
  return Eigen::Map<matrix_type>(data + t * rows * width, Eigen::Index(rows), Eigen::Index(width));
}

/// Steps 0 … last − 1 on one block (S_0 in buf.states[0]): S_{n+1}(:, :, t) = S_n(:, :, t)·C_n. The states go to
/// buf.states; the output of step N − 1, when run, is Y of the block, in buf.a.
template <class T>
void mpo_block_forward(const mpo<T>& w, const std::vector<mpo_step_dims>& steps, std::size_t last,
                       mpo_block_buffers<T>& buf) {
  for (std::size_t n = 0; n < last; ++n) {
    const auto [rows, in, out, tail] = steps[n];
    dense_matrix<T>& next = n + 1 < steps.size() ? buf.states[n + 1] : buf.a;
    next.resize(Eigen::Index(rows * out), Eigen::Index(tail));
    const auto core = mpo_core_matrix(w.cores[n]);
    for (std::size_t t = 0; t < tail; ++t)
      mpo_product(mpo_panel(next.data(), rows, out, t), mpo_panel(std::as_const(buf.states[n]).data(), rows, in, t),
                  core);
  }
}

/// Runs f(block, first row, rows, buffers) over the row blocks of an r-row input, in parallel.
template <class T, class F>
void for_each_mpo_block(const mpo<T>& w, std::size_t rows, std::vector<mpo_block_buffers<T>>& buffers, F&& f) {
  const std::size_t block = mpo_block_rows(w, rows), blocks = (rows + block - 1) / block;
  std::size_t macs_per_row = 0;
  for (const auto& d : mpo_steps(w, 1)) macs_per_row += d.rows * d.in * d.out * d.tail;
  const std::size_t threads =
      rows * macs_per_row < tprod::detail::parallel_min_macs ? 1 : default_execution().thread_count();
  if (buffers.size() < threads) buffers.resize(threads);
  for (auto& b : buffers) b.states.resize(w.order());
  tprod::detail::parallel_for(blocks, threads, [&](std::size_t u) {
    auto& buf = buffers[tprod::detail::thread_slot(buffers.size())];
    const std::size_t first = u * block;
    f(u, first, std::min(block, rows - first), buf);
  });
}
}  // namespace detail

/// @brief What the backward pass needs: X. The states S_1, …, S_{N−1} are not kept but recomputed, block by block
///        of rows, in cache: at the quantized layer's sizes each state holds R·I numbers per row, so writing all N of
///        them out and reading them back moved about 12× the bytes of X and Y (the layer ran at memory speed), while
///        recomputing costs one more forward pass of few flops.
template <real_scalar T>
struct mpo_linear_saved {
  dense_matrix<T> input;       ///< X, r×I
  std::size_t batch_rows = 0;  ///< r
  std::vector<detail::mpo_block_buffers<T>> buffers;  ///< per thread, reused from call to call
  std::size_t bytes() const { return std::size_t(input.size()) * sizeof(T); }
};

/// @brief ∂J/∂X and ∂J/∂𝒢_n (same shapes as the cores).
template <real_scalar T>
struct mpo_linear_grads {
  dense_matrix<T> d_input;
  mpo_linear_params<T> d_params;
};

/// @brief Y = X·W core by core (paper 002, eq. 4), into `y` and `saved` (reused across calls). Blocks of rows run in
///        parallel, each through all N cores in cache.
/// @throws shape_error when X does not have I columns or the MPO is invalid.
template <real_scalar T>
void mpo_linear_forward(const mpo_linear_params<T>& prm, const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                        dense_matrix<T>& y, mpo_linear_saved<T>& saved) {
  const mpo<T>& w = prm.weight;
  w.validate("nn::mpo_linear_forward");
  TPROD_EXPECTS(std::size_t(x.cols()) == w.rows(),
                "nn::mpo_linear_forward: input " + tprod::shape_string(x) + " does not match the MPO weight of " +
                    std::to_string(w.rows()) + "x" + std::to_string(w.cols()) + " (" +
                    tprod::shape_string(w.row_dims()) + " by " + tprod::shape_string(w.col_dims()) + ")");
  saved.batch_rows = std::size_t(x.rows());
  saved.input = x;
  y.resize(x.rows(), Eigen::Index(w.cols()));
  detail::for_each_mpo_block(w, saved.batch_rows, saved.buffers,
                             [&](std::size_t, std::size_t first, std::size_t rows, detail::mpo_block_buffers<T>& buf) {
                               buf.states[0] = x.middleRows(Eigen::Index(first), Eigen::Index(rows));
                               detail::mpo_block_forward(w, detail::mpo_steps(w, rows), w.order(), buf);
                               // S_N = ((l, j_1, …, j_N)) is the block of Y, column-major
                               y.middleRows(Eigen::Index(first), Eigen::Index(rows)) =
                                   Eigen::Map<const dense_matrix<T>>(buf.a.data(), Eigen::Index(rows), y.cols());
                             });
}

/// @brief Y = X·W and the state its backward pass needs.
template <real_scalar T>
std::pair<dense_matrix<T>, mpo_linear_saved<T>> mpo_linear_forward(
    const mpo_linear_params<T>& prm, const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x) {
  std::pair<dense_matrix<T>, mpo_linear_saved<T>> r;
  mpo_linear_forward<T>(prm, x, r.first, r.second);
  return r;
}

/// @brief The per-thread buffers of mpo_linear_backward and each block's share of the cores' gradients, reused from
///        call to call.
template <real_scalar T>
struct mpo_linear_workspace {
  std::vector<detail::mpo_block_buffers<T>> buffers;
  dense_matrix<T> partial;  ///< (Σ_n R_{n−1}I_nJ_nR_n)×blocks
};

/// @brief Backward pass into g: per block of rows, the states again, then from G_N = ∂J/∂Y core by core
///        ∂J/∂C_n += Σ_t S_n(:, :, t)ᵀ G_{n+1}(:, :, t) and G_n(:, :, t) = G_{n+1}(:, :, t)·C_nᵀ; ∂J/∂X = G_0. The
///        blocks' shares of ∂J/∂C_n are added in block order, so the result does not depend on the thread count.
/// @throws shape_error when d_out is not r×J.
template <real_scalar T>
void mpo_linear_backward(const mpo_linear_params<T>& prm, const mpo_linear_saved<T>& saved,
                         const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out, mpo_linear_grads<T>& g,
                         mpo_linear_workspace<T>& ws) {
  const mpo<T>& w = prm.weight;
  TPROD_EXPECTS(std::size_t(d_out.rows()) == saved.batch_rows && std::size_t(d_out.cols()) == w.cols() &&
                    std::size_t(saved.input.cols()) == w.rows(),
                "nn::mpo_linear_backward: gradient " + tprod::shape_string(d_out) + " does not match the output " +
                    std::to_string(saved.batch_rows) + "x" + std::to_string(w.cols()));
  std::vector<std::size_t> offset{0};  // of core n's gradient in a column of ws.partial
  for (const auto& c : w.cores) offset.push_back(offset.back() + c.size());
  const std::size_t rows_all = saved.batch_rows, block = detail::mpo_block_rows(w, rows_all);
  ws.partial.resize(Eigen::Index(offset.back()), Eigen::Index((rows_all + block - 1) / block));
  g.d_input.resize(Eigen::Index(rows_all), Eigen::Index(w.rows()));
  detail::for_each_mpo_block(w, rows_all, ws.buffers, [&](std::size_t u, std::size_t first, std::size_t rows,
                                                          detail::mpo_block_buffers<T>& buf) {
    const auto steps = detail::mpo_steps(w, rows);
    buf.states[0] = saved.input.middleRows(Eigen::Index(first), Eigen::Index(rows));
    detail::mpo_block_forward(w, steps, w.order() - 1, buf);
    buf.a = d_out.middleRows(Eigen::Index(first), Eigen::Index(rows));  // G_N of the block
    for (std::size_t n = steps.size(); n-- > 0;) {
      const auto [r, in, out, tail] = steps[n];
      const auto core = detail::mpo_core_matrix(w.cores[n]);
      Eigen::Map<dense_matrix<T>> d_core(ws.partial.col(Eigen::Index(u)).data() + offset[n], Eigen::Index(in),
                                         Eigen::Index(out));
      d_core.setZero();
      buf.b.resize(Eigen::Index(r * in), Eigen::Index(tail));
      for (std::size_t t = 0; t < tail; ++t) {
        const auto gt = detail::mpo_panel(std::as_const(buf.a).data(), r, out, t);
        detail::mpo_product(d_core, detail::mpo_panel(std::as_const(buf.states[n]).data(), r, in, t).transpose(), gt,
                            true);
        detail::mpo_product(detail::mpo_panel(buf.b.data(), r, in, t), gt, core.transpose());
      }
      std::swap(buf.a, buf.b);
    }
    // G_0 = ∂J/∂X of the block, column-major rows×I
    g.d_input.middleRows(Eigen::Index(first), Eigen::Index(rows)) =
        Eigen::Map<const dense_matrix<T>>(buf.a.data(), Eigen::Index(rows), Eigen::Index(w.rows()));
  });
  g.d_params.weight.cores.resize(w.order());
  for (std::size_t n = 0; n < w.order(); ++n) {
    ndtensor<T>& d_core = g.d_params.weight.cores[n];
    if (shape_of(d_core) != w.cores[n].shape()) d_core = zeros<T>(w.cores[n].shape());
    // block by block: Eigen's rowwise().sum() adds in an order that depends on the destination's alignment
    auto d = tprod::detail::elements(d_core);
    d.setZero();
    for (Eigen::Index u = 0; u < ws.partial.cols(); ++u)
      d += ws.partial.col(u).segment(Eigen::Index(offset[n]), Eigen::Index(w.cores[n].size()));
  }
}

/// @brief Backward pass, returned.
/// @throws shape_error when d_out is not r×J.
template <real_scalar T>
mpo_linear_grads<T> mpo_linear_backward(const mpo_linear_params<T>& prm, const mpo_linear_saved<T>& saved,
                                        const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out) {
  mpo_linear_grads<T> g;
  mpo_linear_workspace<T> ws;
  mpo_linear_backward<T>(prm, saved, d_out, g, ws);
  return g;
}

/// @brief What the backward pass of a layer in memory space S needs: the states S_0 = X, S_1, …, S_{N−1} (device
///        memory is not the constraint the host's cache is, so they are kept rather than recomputed).
template <real_scalar T, memory_space S>
struct mpo_linear_saved_in {
  std::vector<tensor3<T, dextents3, S>> states;
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const auto& t : states) n += t.size() * sizeof(T);
    return n;
  }
};

/// @brief ∂J/∂X and ∂J/∂𝒢_n of a layer in memory space S.
template <real_scalar T, memory_space S>
struct mpo_linear_grads_in {
  tensor3<T, dextents3, S> d_input;
  mpo_linear_params_in<T, S> d_params;
};

/// @brief Y = X·W core by core for a batch in memory space S (X and Y are L×I×1 and L×J×1 tensor3s), where it
///        lives: each step one multiply_mode of the running tensor by the core (mpo_product's route), the states kept.
/// @throws shape_error when X is not L×I×1 or the MPO is invalid.
template <real_scalar T, memory_space S>
void mpo_linear_forward(const mpo_linear_params_in<T, S>& prm, const tensor3<T, dextents3, S>& x,
                        tensor3<T, dextents3, S>& y, mpo_linear_saved_in<T, S>& saved) {
  y = tprod::detail::mpo_forward_in<T, S>(x, prm.weight, &saved.states, "nn::mpo_linear_forward");
}

/// @brief Backward pass of a layer in memory space S: from G_N = ∂J/∂Y core by core,
///        ∂J/∂C_n = Σ_t S_n(:, :, t)ᵀ G_{n+1}(:, :, t) (one cross_gram: transposes and one GEMM) and
///        G_n = G_{n+1} ×₂ C_n (one multiply_mode); ∂J/∂X = G_0.
/// @throws shape_error when d_out is not L×J×1 for the forward pass's L.
template <real_scalar T, memory_space S>
mpo_linear_grads_in<T, S> mpo_linear_backward(const mpo_linear_params_in<T, S>& prm,
                                              const mpo_linear_saved_in<T, S>& saved,
                                              const tensor3<T, dextents3, S>& d_out) {
  using view = tensor3_view<const T, dextents3, S>;
  const auto& w = prm.weight;
  TPROD_EXPECTS(saved.states.size() == w.order() && w.order() > 0,
                "nn::mpo_linear_backward: the saved state holds " + std::to_string(saved.states.size()) +
                    " steps for an MPO of " + std::to_string(w.order()) + " cores (run mpo_linear_forward first)");
  const std::size_t batch = saved.states[0].m();
  TPROD_EXPECTS(d_out.m() == batch && d_out.n() == w.cols() && d_out.p() == 1,
                "nn::mpo_linear_backward: gradient " + d_out.shape() + " does not match the output " +
                    shape_string(batch, w.cols(), 1));
  const auto steps = detail::mpo_steps(w, batch);
  mpo_linear_grads_in<T, S> g;
  g.d_params.weight.cores.resize(w.order());
  tensor3<T, dextents3, S> grad = d_out;  // G_{n+1}, read as rows×out×tail of step n
  for (std::size_t n = w.order(); n-- > 0;) {
    const auto [rows, in, out, tail] = steps[n];
    const view gv(grad.data(), rows, out, tail);
    g.d_params.weight.cores[n] = ndtensor_in<T, S>(
        shape_of(w.cores[n]), tprod::detail::cross_gram(view(saved.states[n].data(), rows, in, tail), gv));
    grad = tprod::mode_product(gv, tprod::detail::core_matrix_on_host(w.cores[n]), 1);
  }
  g.d_input = tensor3<T, dextents3, S>(view(grad.data(), batch, w.rows(), 1));
  return g;
}

}  // namespace tprod::nn
