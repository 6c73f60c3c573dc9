// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file spectral_attention.hpp
/// @brief Tensorized spectral attention (TSA; paper 002, Alg. 1), single- and multi-head, forward and backward.
///
/// For a batch of B sequences of L tokens, X ∈ ℝ^{(B·L)×I} (row b·L + l is token l of sequence b; a row read as a
/// column-major I_1×⋯×I_N tensor is the tensorized token 𝒳_l), one head computes, per sequence:
///   K = X·W_k,  V = X·W_v                      (MPO layers, core by core: mpo_linear.hpp)
///   S = K Kᵀ / d_k,  Θ = ε(S) with θ_ll = 0    (d_k defaults to J_k, the key width; ε = ReLU by default)
///   θ_{l₁,l₂} = 0 where l₁ or l₂ is padding     (`lengths`: the first lengths[b] tokens of sequence b are real)
///   Ψ = Ω ⊙ Θ                                   (Ω: the L×L time graph, e.g. bidirectional_time_adjacency)
///   Y = f(Ψ) ×₁ V                               (simplified f(Ψ) = I + Ψ, or f_α(Ψ) = Σ_{k<K} α_k Ψᵏ, α learnable)
/// A padded token neither sends nor receives attention; its output row is V's (times α_0), to be masked by the
/// pooling that follows.
///
/// Backward, per sequence, from G = ∂J/∂Y: the filter's gradients (polynomial_filter_backward) give ∂J/∂V,
/// ∂J/∂Ψ and ∂J/∂α; then ∂J/∂Θ = Ω ⊙ ∂J/∂Ψ, ∂J/∂S = ∂J/∂Θ ⊙ ε'(S) off the diagonal and the padding, and
/// ∂J/∂K = (∂J/∂S + ∂J/∂Sᵀ)·K / d_k; the MPO layers take ∂J/∂K and ∂J/∂V back to X and to their cores.
///
/// The sequences of a batch run in parallel, on the real tokens only (S and Ψ are n_b×n_b). The forms that take
/// `saved` and a tsa_workspace reuse their buffers from call to call, as the layer does: a pass then allocates no
/// L×L matrix, whose fresh pages cost more than the products on them (allocated afresh, they made a head at
/// L = 200 15× slower).
///
/// Multi-head TSA runs H heads on the same X, concatenates their outputs (head h in columns h·J … (h+1)·J − 1)
/// and combines them by a learnable projection, itself an MPO layer ((H·J)×J_o).
///
/// In a memory space S (tsa_params_in: the cores and α as ndtensor_in<T, S>; `copy<S>(params)` moves them), the same
/// functions take (B·L)×I×1 tensor3s and compute where the tensors live, through the backend's tasks: the MPO layers'
/// (mpo_linear.hpp), the graph's (backend/kernels/spectral_attention.hpp: S_b and Ψ_bᵀ of every sequence, and the
/// factor of K in ∂J/∂K) and the attention's weighting of values by blocks, which computes Ψ_b·Z_b for the filter's
/// Horner steps from Ψᵀ (and Ψᵀ_b·G_b from Ψ). Every sequence is computed at its full length L with Ψ's rows and
/// columns of the padding zero, which gives the padded rows α_0·V as above; ε is ReLU there.
#include <algorithm>
#include <array>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tprod/backend/kernels/attention.hpp"
#include "tprod/backend/kernels/spectral_attention.hpp"
#include "tprod/core/parallel.hpp"
#include "tprod/graph/attention_graph.hpp"
#include "tprod/graph/polynomial_filter.hpp"
#include "tprod/nn/detail/attention_kernels.hpp"
#include "tprod/nn/mpo_linear.hpp"

namespace tprod::nn {

/// @brief ε'(s) = [s > 0], the derivative of the default ReLU.
struct relu_derivative {
  template <class T>
  T operator()(T s) const {
    return s > T(0) ? T(1) : T(0);
  }
};

/// @brief ε of the attention graph and its derivative (for the backward pass). Default: ReLU, ε' = [s > 0].
///        A user's pair is called from several threads at once (sequences run in parallel): it must be thread-safe.
template <real_scalar T>
struct tsa_activation {
  std::function<T(T)> f = relu_activation{};
  std::function<T(T)> df = relu_derivative{};
  /// Both the default ReLU's: the passes then run vectorized loops instead of a call per entry of the L×L graph.
  bool is_relu() const { return f.template target<relu_activation>() && df.template target<relu_derivative>(); }
};

/// @brief One TSA head, its cores and α held as Tensor: ndtensor<T> on the host, ndtensor_in<T, S> in memory space
///        S (tsa_head_params_in).
template <real_scalar T, class Tensor = ndtensor<T>>
struct tsa_head_params {
  mpo_linear_params<T, Tensor> key;    ///< W_k ∈ ℝ^{I×J_k}
  mpo_linear_params<T, Tensor> value;  ///< W_v ∈ ℝ^{I×J}
  Tensor alpha;                        ///< (α_0, …, α_{K−1}); empty: the simplified filter I + Ψ
  double d_k = 0;                      ///< the scale of Θ; 0: J_k
  tsa_activation<T> epsilon;

  double scale() const { return d_k > 0 ? d_k : double(key.out_width()); }
  bool simplified() const { return alpha.size() == 0; }
  std::size_t parameter_count() const { return key.parameter_count() + value.parameter_count() + alpha.size(); }
  /// @brief Visits key cores, value cores and α (when learnable) as f(name, Tensor&).
  template <class F>
  void for_each(F&& f, const std::string& prefix = "") {
    key.for_each(f, prefix + "key.");
    value.for_each(f, prefix + "value.");
    if (!simplified()) f(prefix + "alpha", alpha);
  }
};

/// @brief Multi-head TSA: H heads and the MPO projection combining them.
template <real_scalar T, class Tensor = ndtensor<T>>
struct tsa_params {
  std::vector<tsa_head_params<T, Tensor>> heads;
  mpo_linear_params<T, Tensor> projection;  ///< ((Σ_h J_h)×J_o)

  std::size_t parameter_count() const {
    std::size_t n = projection.parameter_count();
    for (const auto& h : heads) n += h.parameter_count();
    return n;
  }
  template <class F>
  void for_each(F&& f, const std::string& prefix = "") {
    for (std::size_t h = 0; h < heads.size(); ++h) heads[h].for_each(f, prefix + "head_" + std::to_string(h) + ".");
    projection.for_each(f, prefix + "projection.");
  }
};

template <real_scalar T>
tsa_head_params<T> zeros_like(const tsa_head_params<T>& p) {
  return {zeros_like(p.key), zeros_like(p.value), zeros<T>(shape_of(p.alpha)), p.d_k, p.epsilon};
}
template <real_scalar T>
tsa_params<T> zeros_like(const tsa_params<T>& p) {
  tsa_params<T> z{{}, zeros_like(p.projection)};
  for (const auto& h : p.heads) z.heads.push_back(zeros_like(h));
  return z;
}

/// @brief A head with random MPO key and value weights (make_mpo_linear_params) of bond rank `rank` over the
///        factorizations I = Π row_dims, J = Π col_dims, and a filter of order K = filter_order (0: the simplified
///        filter I + Ψ; K ≥ 1: α initialized to (1, 1, 0, …, 0), which starts as I + Ψ for K ≥ 2).
/// @throws shape_error as make_mpo_linear_params.
template <real_scalar T>
tsa_head_params<T> make_tsa_head_params(const nd_shape& row_dims, const nd_shape& col_dims, std::size_t rank,
                                        std::size_t filter_order, std::uint64_t seed) {
  tsa_head_params<T> p{make_mpo_linear_params<T>(row_dims, col_dims, rank, seed),
                       make_mpo_linear_params<T>(row_dims, col_dims, rank, seed + 1000), zeros<T>({filter_order}), 0,
                       {}};
  for (std::size_t k = 0; k < std::min<std::size_t>(filter_order, 2); ++k) p.alpha.data()[k] = T(1);
  return p;
}

/// @brief H heads as above and an MPO projection with row factorization (J_1, …, J_N, H), column factorization
///        (J_1, …, J_N, 1) and bond rank `rank`: the output has the width J of one head.
/// @throws shape_error as make_mpo_linear_params, or when heads is 0.
template <real_scalar T>
tsa_params<T> make_tsa_params(const nd_shape& row_dims, const nd_shape& col_dims, std::size_t rank, std::size_t heads,
                              std::size_t filter_order, std::uint64_t seed) {
  TPROD_EXPECTS(heads > 0, "nn::make_tsa_params: at least one head is needed");
  tsa_params<T> p;
  for (std::size_t h = 0; h < heads; ++h)
    p.heads.push_back(make_tsa_head_params<T>(row_dims, col_dims, rank, filter_order, seed + 2000 * h));
  nd_shape pr = col_dims, pc = col_dims;
  pr.push_back(heads);
  pc.push_back(1);
  p.projection = make_mpo_linear_params<T>(pr, pc, rank, seed + 2000 * heads);
  return p;
}

/// @brief The quantized multi-head TSA of paper 002: I = J = 2^N, I_n = J_n = 2, MPO ranks 2 (16(N − 1) entries
///        per key or value weight).
/// @throws shape_error unless I is a power of two of at least 4.
template <real_scalar T>
tsa_params<T> make_qtt_tsa_params(std::size_t width, std::size_t heads, std::size_t filter_order, std::uint64_t seed) {
  const nd_shape dims = quantized_dims(width);
  return make_tsa_params<T>(dims, dims, 2, heads, filter_order, seed);
}

/// @brief What tsa_head_backward needs. Its buffers are reused when the same object is passed to the next forward
///        pass (the layer does): once sized, a training step allocates no L×L matrix.
template <real_scalar T>
struct tsa_head_saved {
  mpo_linear_saved<T> key_saved, value_saved;
  dense_matrix<T> k, v;                           ///< (B·L)×J_k, (B·L)×J
  std::vector<dense_matrix<T>> scores, psi;        ///< per sequence b: S and Ψ among its n_b real tokens, n_b×n_b
  std::vector<polynomial_filter_saved<T>> filter;  ///< per sequence: the Horner iterates (n_b rows)
  dense_matrix<T> omega;
  std::vector<std::size_t> lengths;  ///< one per sequence (L where no padding)
  std::size_t bytes() const {
    std::size_t b = key_saved.bytes() + value_saved.bytes() + std::size_t(k.size() + v.size() + omega.size()) * sizeof(T);
    for (std::size_t s = 0; s < scores.size(); ++s) {
      b += std::size_t(scores[s].size() + psi[s].size()) * sizeof(T);
      for (const auto& z : filter[s].z) b += std::size_t(z.size()) * sizeof(T);
    }
    return b;
  }
};

template <real_scalar T>
struct tsa_head_grads {
  dense_matrix<T> d_input;
  tsa_head_params<T> d_params;
};

template <real_scalar T>
struct tsa_saved {
  std::vector<tsa_head_saved<T>> heads;
  mpo_linear_saved<T> projection;
  std::size_t bytes() const {
    std::size_t b = projection.bytes();
    for (const auto& h : heads) b += h.bytes();
    return b;
  }
};

template <real_scalar T>
struct tsa_grads {
  dense_matrix<T> d_input;
  tsa_params<T> d_params;
};

/// @brief Scratch of the TSA passes, reused from call to call: the heads' outputs side by side, ∂J/∂K and ∂J/∂V of
///        the batch, each sequence's ∂J/∂α (summed in sequence order afterwards, so that the result does not
///        depend on the thread count), and per thread the filter's gradients and iterates.
template <real_scalar T>
struct tsa_workspace {
  struct per_thread {
    polynomial_filter_grads<T> filter;
    std::array<dense_matrix<T>, 2> work;
  };
  dense_matrix<T> heads_out, dk, dv, d_alpha;  ///< (B·L)×Σ_h J_h, (B·L)×J_k, (B·L)×J, K×B
  std::vector<per_thread> threads;
  mpo_linear_grads<T> key_grads, value_grads, projection_grads;
  mpo_linear_workspace<T> mpo;
  tsa_head_grads<T> head_grads;
};

namespace detail {

/// The filter coefficients: α, or (1, 1) for the simplified I + Ψ.
template <class T>
std::vector<T> tsa_alpha(const tsa_head_params<T>& p) {
  if (p.simplified()) return {T(1), T(1)};
  return std::vector<T>(p.alpha.data(), p.alpha.data() + p.alpha.size());
}

/// Σ_h J_h, the width of the heads side by side, after checking that there are heads and that the projection takes
/// that width (`who` names the caller in the shape_error).
template <class Params>
std::size_t tsa_heads_width(const Params& prm, const char* who) {
  TPROD_EXPECTS(!prm.heads.empty(), std::string(who) + ": the layer has no heads");
  std::size_t width = 0;
  for (const auto& h : prm.heads) width += h.value.out_width();
  TPROD_EXPECTS(width == prm.projection.in_width(),
                std::string(who) + ": the heads output " + std::to_string(width) +
                    " features but the projection takes " + std::to_string(prm.projection.in_width()));
  return width;
}

/// Checks an input of rows×cols against the weights' input width and an L×L time graph (its shape as `omega_shape`)
/// and the lengths; returns the per-sequence lengths (L where none are given).
inline std::vector<std::size_t> tsa_lengths_of(std::size_t in_width, std::size_t rows, std::size_t cols,
                                               std::size_t steps, const std::string& omega_shape,
                                               const std::vector<std::size_t>& lengths, const char* who) {
  TPROD_EXPECTS(cols == in_width, std::string(who) + ": input " + std::to_string(rows) + "x" + std::to_string(cols) +
                                      " does not match the key and value weights of input width " +
                                      std::to_string(in_width));
  TPROD_EXPECTS(steps > 0 && rows % steps == 0,
                std::string(who) + ": " + std::to_string(rows) + " input rows are not whole sequences of the " +
                    std::to_string(steps) + " time steps of the " + omega_shape + " time graph");
  const std::size_t batch = rows / steps;
  if (lengths.empty()) return std::vector<std::size_t>(batch, steps);
  TPROD_EXPECTS(lengths.size() == batch, std::string(who) + ": " + std::to_string(lengths.size()) +
                                             " sequence lengths for a batch of " + std::to_string(batch));
  for (std::size_t b = 0; b < batch; ++b)
    TPROD_EXPECTS(lengths[b] >= 1 && lengths[b] <= steps, std::string(who) + ": length " + std::to_string(lengths[b]) +
                                                              " of sequence " + std::to_string(b) + " is outside 1.." +
                                                              std::to_string(steps));
  return lengths;
}

/// tsa_lengths_of for an input of rows×cols and a time graph Ω as a matrix.
template <class T>
std::vector<std::size_t> tsa_lengths(std::size_t in_width, Eigen::Index rows, Eigen::Index cols,
                                     const dense_matrix<T>& omega, const std::vector<std::size_t>& lengths,
                                     const char* who) {
  tprod::detail::expect_square(omega, who, "time graph");
  return tsa_lengths_of(in_width, std::size_t(rows), std::size_t(cols), std::size_t(omega.rows()),
                        tprod::shape_string(omega), lengths, who);
}

/// Threads for a pass over B sequences of L steps and width J: one below the backend's threshold of work.
inline std::size_t tsa_threads(std::size_t batch, std::size_t steps, std::size_t width) {
  return batch * steps * steps * width < tprod::detail::parallel_min_macs
             ? 1
             : default_execution().thread_count();
}

/// Ψ = Ω ⊙ ε(S) with a zero diagonal, on the n real tokens (S and Ψ are n×n).
template <class T>
void tsa_adjacency(const dense_matrix<T>& scores, const dense_matrix<T>& omega, const tsa_activation<T>& eps,
                   dense_matrix<T>& psi) {
  const Eigen::Index n = scores.rows();
  psi.resize(n, n);
  if (eps.is_relu())
    psi = omega.topLeftCorner(n, n).cwiseProduct(scores.cwiseMax(T(0)));
  else
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) psi(i, j) = omega(i, j) * eps.f(scores(i, j));
  psi.diagonal().setZero();
}

/// Turns ∂J/∂Ψ (n×n, in d) into the factor of K in ∂J/∂K = (∂J/∂S + ∂J/∂Sᵀ)·K / d_k, in place:
/// ∂J/∂S = (Ω ⊙ ∂J/∂Ψ) ⊙ ε'(S) off the diagonal (θ_ll = 0 does not depend on S), then symmetrized and scaled.
template <class T>
void tsa_score_gradient(const dense_matrix<T>& scores, const dense_matrix<T>& omega, const tsa_activation<T>& eps,
                        T inv_dk, dense_matrix<T>& d) {
  const Eigen::Index n = scores.rows();
  if (eps.is_relu())
    d = (scores.array() > T(0)).select(omega.topLeftCorner(n, n).array() * d.array(), T(0)).matrix();
  else
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i) d(i, j) *= omega(i, j) * eps.df(scores(i, j));
  for (Eigen::Index j = 0; j < n; ++j) {
    d(j, j) = T(0);
    for (Eigen::Index i = 0; i < j; ++i) d(i, j) = d(j, i) = (d(i, j) + d(j, i)) * inv_dk;
  }
}

}  // namespace detail

/// @brief One TSA head (Alg. 1, with the general filter when α is learnable), Y ∈ ℝ^{(B·L)×J} into y and the state
///        of the backward pass into `s` (both reused from call to call). Sequences run in parallel.
/// @param prm the head's parameters.
/// @param x the (B·L)×I input, B sequences of L rows.
/// @param omega the L×L time graph Ω; X must hold whole sequences of L rows.
/// @param lengths empty, or the number of real (unpadded) tokens of each sequence.
/// @param y the (B·L)×J output (resized).
/// @param s the state of the backward pass (its buffers reused).
/// @throws shape_error for an X, Ω or lengths that do not fit the parameters.
template <real_scalar T>
void tsa_head_forward(const tsa_head_params<T>& prm, const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                      const dense_matrix<T>& omega, const std::vector<std::size_t>& lengths, dense_matrix<T>& y,
                      tsa_head_saved<T>& s) {
  TPROD_EXPECTS(prm.key.in_width() == prm.value.in_width(),
                "nn::tsa_head_forward: the key weight takes " + std::to_string(prm.key.in_width()) +
                    " features but the value weight " + std::to_string(prm.value.in_width()));
  s.lengths = detail::tsa_lengths(prm.key.in_width(), x.rows(), x.cols(), omega, lengths, "nn::tsa_head_forward");
  s.omega = omega;
  mpo_linear_forward<T>(prm.key, x, s.k, s.key_saved);
  mpo_linear_forward<T>(prm.value, x, s.v, s.value_saved);
  const auto steps = omega.rows();
  const std::size_t batch = s.lengths.size();
  const std::vector<T> alpha = detail::tsa_alpha(prm);
  s.scores.resize(batch);
  s.psi.resize(batch);
  s.filter.resize(batch);
  y.resize(s.v.rows(), s.v.cols());
  const std::size_t width = std::max(s.k.cols(), s.v.cols());
  tprod::detail::parallel_for(batch, detail::tsa_threads(batch, std::size_t(steps), width), [&](std::size_t b) {
    const auto rows = Eigen::Index(b) * steps, n = Eigen::Index(s.lengths[b]);
    attention_scores<T>(s.k.middleRows(rows, n), prm.scale(), s.scores[b]);
    detail::tsa_adjacency(s.scores[b], omega, prm.epsilon, s.psi[b]);
    polynomial_filter_matrix<T>(s.psi[b], alpha, s.v.middleRows(rows, n), y.middleRows(rows, n), s.filter[b]);
    // a padded token neither sends nor receives attention: Ψ's rows and columns of it are 0, so f(Ψ) keeps α_0 V
    y.middleRows(rows + n, steps - n) = alpha[0] * s.v.middleRows(rows + n, steps - n);
  });
}

/// @brief One TSA head, returned with the state its backward pass needs.
/// @throws shape_error for an X, Ω or lengths that do not fit the parameters.
template <real_scalar T>
std::pair<dense_matrix<T>, tsa_head_saved<T>> tsa_head_forward(const tsa_head_params<T>& prm,
                                                               const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                                               const dense_matrix<T>& omega,
                                                               const std::vector<std::size_t>& lengths = {}) {
  std::pair<dense_matrix<T>, tsa_head_saved<T>> r;
  tsa_head_forward<T>(prm, x, omega, lengths, r.first, r.second);
  return r;
}

/// @brief Backward pass of tsa_head_forward into g: ∂J/∂X and the gradients of the key and value cores and of α.
///        Sequences run in parallel on the workspace's per-thread buffers.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T>
void tsa_head_backward(const tsa_head_params<T>& prm, const tsa_head_saved<T>& s,
                       const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out, tsa_head_grads<T>& g,
                       tsa_workspace<T>& ws) {
  TPROD_EXPECTS(d_out.rows() == s.v.rows() && d_out.cols() == s.v.cols(),
                "nn::tsa_head_backward: gradient " + tprod::shape_string(d_out) + " does not match the output " +
                    tprod::shape_string(s.v));
  const auto steps = s.omega.rows();
  const std::size_t batch = s.lengths.size();
  const std::vector<T> alpha = detail::tsa_alpha(prm);
  const T inv_dk = T(1 / prm.scale());
  ws.dk.resize(s.k.rows(), s.k.cols());
  ws.dv.resize(s.v.rows(), s.v.cols());
  ws.d_alpha.resize(Eigen::Index(alpha.size()), Eigen::Index(batch));
  const std::size_t threads = detail::tsa_threads(batch, std::size_t(steps), std::size_t(std::max(s.k.cols(), s.v.cols())));
  if (ws.threads.size() < threads) ws.threads.resize(threads);
  tprod::detail::parallel_for(batch, threads, [&](std::size_t b) {
    auto& t = ws.threads[tprod::detail::thread_slot(ws.threads.size())];
    const auto rows = Eigen::Index(b) * steps, n = Eigen::Index(s.lengths[b]), pad = steps - n;
    const auto dy = d_out.middleRows(rows, n);
    polynomial_filter_backward<T>(s.psi[b], alpha, s.v.middleRows(rows, n), s.filter[b], dy, t.filter, t.work);
    ws.dv.middleRows(rows, n) = t.filter.d_x;
    ws.d_alpha.col(Eigen::Index(b)) = t.filter.d_alpha;
    // the padded rows: Y = α_0 V there
    ws.dv.middleRows(rows + n, pad) = alpha[0] * d_out.middleRows(rows + n, pad);
    ws.d_alpha(0, Eigen::Index(b)) +=
        (d_out.middleRows(rows + n, pad).array() * s.v.middleRows(rows + n, pad).array()).sum();
    detail::tsa_score_gradient(s.scores[b], s.omega, prm.epsilon, inv_dk, t.filter.d_psi);
    ws.dk.middleRows(rows, n).noalias() = t.filter.d_psi * s.k.middleRows(rows, n);
    ws.dk.middleRows(rows + n, pad).setZero();
  });
  mpo_linear_backward<T>(prm.key, s.key_saved, ws.dk, ws.key_grads, ws.mpo);
  mpo_linear_backward<T>(prm.value, s.value_saved, ws.dv, ws.value_grads, ws.mpo);
  g.d_params.key = ws.key_grads.d_params;
  g.d_params.value = ws.value_grads.d_params;
  g.d_params.alpha = zeros<T>(shape_of(prm.alpha));
  g.d_params.d_k = prm.d_k;
  g.d_params.epsilon = prm.epsilon;
  if (!prm.simplified())  // column by column (see mpo_linear_backward): the same bits wherever the buffers lie
    for (Eigen::Index b = 0; b < ws.d_alpha.cols(); ++b) tprod::detail::elements(g.d_params.alpha) += ws.d_alpha.col(b);
  g.d_input = ws.key_grads.d_input + ws.value_grads.d_input;
}

/// @brief Backward pass of tsa_head_forward, returned.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T>
tsa_head_grads<T> tsa_head_backward(const tsa_head_params<T>& prm, const tsa_head_saved<T>& s,
                                    const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out) {
  tsa_head_grads<T> g;
  tsa_workspace<T> ws;
  tsa_head_backward<T>(prm, s, d_out, g, ws);
  return g;
}

/// @brief Multi-head TSA: the H heads on X, concatenated, through the MPO projection, into y and `s` (reused).
/// @throws shape_error as tsa_head_forward, or when the projection does not take Σ_h J_h features.
template <real_scalar T>
void tsa_forward(const tsa_params<T>& prm, const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                 const dense_matrix<T>& omega, const std::vector<std::size_t>& lengths, dense_matrix<T>& y,
                 tsa_saved<T>& s, tsa_workspace<T>& ws) {
  const std::size_t width = detail::tsa_heads_width(prm, "nn::tsa_forward");
  s.heads.resize(prm.heads.size());
  ws.heads_out.resize(x.rows(), Eigen::Index(width));
  Eigen::Index col = 0;
  for (std::size_t h = 0; h < prm.heads.size(); ++h) {
    tsa_head_forward<T>(prm.heads[h], x, omega, lengths, y, s.heads[h]);
    ws.heads_out.middleCols(col, y.cols()) = y;
    col += y.cols();
  }
  mpo_linear_forward<T>(prm.projection, ws.heads_out, y, s.projection);
}

/// @brief Multi-head TSA, returned with the state its backward pass needs.
/// @throws shape_error as tsa_head_forward, or when the projection does not take Σ_h J_h features.
template <real_scalar T>
std::pair<dense_matrix<T>, tsa_saved<T>> tsa_forward(const tsa_params<T>& prm,
                                                     const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                                     const dense_matrix<T>& omega,
                                                     const std::vector<std::size_t>& lengths = {}) {
  std::pair<dense_matrix<T>, tsa_saved<T>> r;
  tsa_workspace<T> ws;
  tsa_forward<T>(prm, x, omega, lengths, r.first, r.second, ws);
  return r;
}

/// @brief Backward pass of tsa_forward into g.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T>
void tsa_backward(const tsa_params<T>& prm, const tsa_saved<T>& s,
                  const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out, tsa_grads<T>& g,
                  tsa_workspace<T>& ws) {
  mpo_linear_backward<T>(prm.projection, s.projection, d_out, ws.projection_grads, ws.mpo);
  const dense_matrix<T>& d_heads = ws.projection_grads.d_input;
  g.d_params.projection = ws.projection_grads.d_params;
  g.d_params.heads.resize(prm.heads.size());
  Eigen::Index col = 0;
  tsa_head_grads<T>& gh = ws.head_grads;
  for (std::size_t h = 0; h < prm.heads.size(); ++h) {
    const auto w = Eigen::Index(prm.heads[h].value.out_width());
    tsa_head_backward<T>(prm.heads[h], s.heads[h], d_heads.middleCols(col, w), gh, ws);
    col += w;
    g.d_params.heads[h] = gh.d_params;
    if (h == 0)
      g.d_input = gh.d_input;
    else
      g.d_input += gh.d_input;
  }
}

/// @brief Backward pass of tsa_forward, returned.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T>
tsa_grads<T> tsa_backward(const tsa_params<T>& prm, const tsa_saved<T>& s,
                          const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out) {
  tsa_grads<T> g;
  tsa_workspace<T> ws;
  tsa_backward<T>(prm, s, d_out, g, ws);
  return g;
}

// --- TSA in a memory space ----------------------------------------------------------------------------------------

/// @brief A TSA head and multi-head TSA in memory space S: the cores and α as ndtensor_in<T, S>.
template <real_scalar T, memory_space S>
using tsa_head_params_in = tsa_head_params<T, ndtensor_in<T, S>>;
template <real_scalar T, memory_space S>
using tsa_params_in = tsa_params<T, ndtensor_in<T, S>>;

/// @brief The parameters with their cores and α copied to memory space S (ε goes along: see tsa_head_forward).
template <memory_space S, real_scalar T>
tsa_head_params_in<T, S> copy(const tsa_head_params<T>& p, S = {}) {
  return {copy<S>(p.key), copy<S>(p.value), tprod::copy<S>(p.alpha), p.d_k, p.epsilon};
}
template <memory_space S, real_scalar T>
tsa_params_in<T, S> copy(const tsa_params<T>& p, S = {}) {
  tsa_params_in<T, S> r{{}, copy<S>(p.projection)};
  for (const auto& h : p.heads) r.heads.push_back(copy<S>(h));
  return r;
}

/// @brief What the backward pass of a head in memory space S needs.
template <real_scalar T, memory_space S>
struct tsa_head_saved_in {
  using tensor = tensor3<T, dextents3, S>;
  mpo_linear_saved_in<T, S> key_saved, value_saved;
  tensor k, v;             ///< (B·L)×J_k×1, (B·L)×J×1
  tensor scores, psi_t;    ///< L×L×B: S_b = K_b·K_bᵀ/d_k and Ψ_bᵀ
  std::vector<tensor> z;   ///< the Horner iterates: z[m] = z_{m+1}, (B·L)×J×1 each
  tensor omega;            ///< L×L×1
  std::vector<std::size_t> lengths;  ///< one per sequence (L where no padding)
  std::vector<T> alpha;              ///< the filter's coefficients (host)
};

template <real_scalar T, memory_space S>
struct tsa_head_grads_in {
  tensor3<T, dextents3, S> d_input;
  tsa_head_params_in<T, S> d_params;
};

template <real_scalar T, memory_space S>
struct tsa_saved_in {
  std::vector<tsa_head_saved_in<T, S>> heads;
  tensor3<T, dextents3, S> heads_out;  ///< (B·L)×Σ_h J_h×1, the projection's input
  mpo_linear_saved_in<T, S> projection;
};

template <real_scalar T, memory_space S>
struct tsa_grads_in {
  tensor3<T, dextents3, S> d_input;
  tsa_params_in<T, S> d_params;
};

namespace detail {

/// The coefficients of a head in S, on the host: α (a copy of its K entries), or (1, 1) for I + Ψ.
template <class T, memory_space S>
std::vector<T> tsa_alpha(const tsa_head_params_in<T, S>& p) {
  if (p.simplified()) return {T(1), T(1)};
  const ndtensor<T> a = to_ndtensor(p.alpha);
  return std::vector<T>(a.data(), a.data() + a.size());
}

/// The B sequences of L rows of a (B·L)×width×1 tensor as the attention tasks' blocks: p = 1, one head of `width`.
inline attention_dims tsa_blocks(std::size_t batch, std::size_t steps, std::size_t width) {
  return {{1, 1, batch, steps, steps, width}};
}
template <class T, memory_space S>
backend::kernels::head_layout<const T> tsa_layout(const tensor3<T, dextents3, S>& t) {
  return blocks_of<const T>(t.data(), t.m(), t.n(), 0).layout();
}
template <class T, memory_space S>
backend::kernels::head_layout<T> tsa_layout(tensor3<T, dextents3, S>& t) {
  return blocks_of<T>(t.data(), t.m(), t.n(), 0).layout();
}

}  // namespace detail

/// @brief One TSA head in memory space S: Y ∈ ℝ^{(B·L)×J} (a (B·L)×J×1 tensor3) into y and the state of the backward
///        pass into `s`, from a (B·L)×I×1 input and the L×L×1 time graph Ω, where they live.
/// @throws shape_error for an X, Ω or lengths that do not fit the parameters, or a custom ε (the passes in a memory
///         space compute ε = ReLU; a custom ε runs on the host's tsa_head_forward).
template <real_scalar T, memory_space S>
void tsa_head_forward(const tsa_head_params_in<T, S>& prm, const tensor3<T, dextents3, S>& x,
                      const tensor3<T, dextents3, S>& omega, const std::vector<std::size_t>& lengths,
                      tensor3<T, dextents3, S>& y, tsa_head_saved_in<T, S>& s) {
  using tensor = tensor3<T, dextents3, S>;
  TPROD_EXPECTS(prm.key.in_width() == prm.value.in_width(),
                "nn::tsa_head_forward: the key weight takes " + std::to_string(prm.key.in_width()) +
                    " features but the value weight " + std::to_string(prm.value.in_width()));
  TPROD_EXPECTS(prm.epsilon.is_relu(), "nn::tsa_head_forward: a head in a memory space computes the attention graph "
                                       "with ε = ReLU; a custom tsa_activation runs on the host (tsa_params<T>)");
  TPROD_EXPECTS(x.p() == 1 && omega.p() == 1 && omega.m() == omega.n(),
                "nn::tsa_head_forward: the input " + x.shape() + " and the time graph " + omega.shape() +
                    " must be (B·L)xIx1 and LxLx1");
  s.lengths = detail::tsa_lengths_of(prm.key.in_width(), x.m(), x.n(), omega.m(), omega.shape(), lengths,
                                     "nn::tsa_head_forward");
  s.omega = omega;
  mpo_linear_forward(prm.key, x, s.k, s.key_saved);
  mpo_linear_forward(prm.value, x, s.v, s.value_saved);
  const std::size_t steps = omega.m(), batch = s.lengths.size();
  const auto sys = tprod::detail::system_of<S>();
  const auto dk = detail::tsa_blocks(batch, steps, s.k.n()), dv = detail::tsa_blocks(batch, steps, s.v.n());
  detail::ensure_shape(s.scores, steps, steps, batch);
  detail::ensure_shape(s.psi_t, steps, steps, batch);
  spectral_graph_forward(sys, dk, detail::tsa_layout(std::as_const(s.k)), T(1 / prm.scale()), cview(omega),
                         backend::kernels::attention_masking{false, s.lengths}, s.scores.view(), s.psi_t.view());
  // Horner: z_{K−1} = α_{K−1}·V, z_m = Ψ·z_{m+1} + α_m·V per sequence, Y = z_0
  s.alpha = detail::tsa_alpha(prm);
  const std::size_t k = s.alpha.size();
  s.z.resize(k - 1);
  tensor current = s.v;
  scale(sys, s.alpha[k - 1], current.view());
  for (std::size_t m = k - 1; m-- > 0;) {
    tensor next(s.v.m(), s.v.n(), 1, uninitialized);
    attention_weighting(sys, dv, cview(s.psi_t), detail::tsa_layout(std::as_const(current)), detail::tsa_layout(next));
    axpy(sys, s.alpha[m], cview(s.v), next.view());
    s.z[m] = std::move(current);
    current = std::move(next);
  }
  y = std::move(current);
}

/// @brief Backward pass of a head in memory space S: ∂J/∂X and the gradients of the key and value cores and of α.
///        From G_0 = ∂J/∂Y: G_{m+1} = Ψᵀ·G_m, ∂J/∂α_m = ⟨G_m, V⟩, ∂J/∂V = Σ_m α_m G_m, ∂J/∂Ψ_b = Σ_m G_m,b·z_{m+1,b}ᵀ;
///        then ∂J/∂K_b = D_b·K_b (spectral_graph_backward) and the MPO layers' backward passes.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T, memory_space S>
tsa_head_grads_in<T, S> tsa_head_backward(const tsa_head_params_in<T, S>& prm, const tsa_head_saved_in<T, S>& s,
                                          const tensor3<T, dextents3, S>& d_out) {
  using tensor = tensor3<T, dextents3, S>;
  TPROD_EXPECTS(d_out.extents() == s.v.extents(), "nn::tsa_head_backward: gradient " + d_out.shape() +
                                                      " does not match the output " + s.v.shape());
  const std::size_t steps = s.omega.m(), batch = s.lengths.size(), k = s.alpha.size();
  const auto sys = tprod::detail::system_of<S>();
  const auto dk = detail::tsa_blocks(batch, steps, s.k.n()), dv = detail::tsa_blocks(batch, steps, s.v.n());
  tensor d_value = d_out;  // ∂J/∂V = α_0 G_0 + …
  scale(sys, s.alpha[0], d_value.view());
  tensor d_psi(steps, steps, batch), psi(steps, steps, batch, uninitialized), outer, unused;
  adjoint_slices(sys, cview(s.psi_t), psi.view());
  std::vector<T> d_alpha(k);
  tensor gm = d_out;  // G_m
  for (std::size_t m = 0; m < k; ++m) {
    d_alpha[m] = dot(sys, cview(gm), cview(s.v));
    if (m > 0) axpy(sys, s.alpha[m], cview(gm), d_value.view());
    if (m + 1 == k) break;
    // ∂J/∂Ψ_b += G_m,b·z_{m+1,b}ᵀ: the dP of the attention's value pass (its dV goes to `unused`)
    detail::ensure_shape(outer, steps, steps, batch);
    detail::ensure_shape_like(unused, gm);
    attention_backward_values(sys, dv, cview(s.psi_t), detail::tsa_layout(std::as_const(gm)),
                              detail::tsa_layout(s.z[m]), detail::tsa_layout(unused), outer.view());
    axpy(sys, T(1), cview(outer), d_psi.view());
    tensor next(gm.m(), gm.n(), 1, uninitialized);
    attention_weighting(sys, dv, cview(psi), detail::tsa_layout(std::as_const(gm)), detail::tsa_layout(next));
    gm = std::move(next);
  }
  tensor d_scores(steps, steps, batch, uninitialized), d_key(s.k.m(), s.k.n(), 1, uninitialized);
  spectral_graph_backward(sys, dk, cview(s.scores), cview(s.omega),
                          backend::kernels::attention_masking{false, s.lengths}, T(1 / prm.scale()), cview(d_psi),
                          d_scores.view());
  // D_b is symmetric: the weighting's D_bᵀ·K_b is D_b·K_b
  attention_weighting(sys, dk, cview(d_scores), detail::tsa_layout(s.k), detail::tsa_layout(d_key));
  auto gk = mpo_linear_backward(prm.key, s.key_saved, d_key);
  auto gv = mpo_linear_backward(prm.value, s.value_saved, d_value);
  tsa_head_grads_in<T, S> g;
  g.d_params.key = std::move(gk.d_params);
  g.d_params.value = std::move(gv.d_params);
  if (prm.simplified()) {
    g.d_params.alpha = ndtensor_in<T, S>(prm.alpha.shape());
  } else {
    ndtensor<T> a = zeros<T>(prm.alpha.shape());
    std::copy(d_alpha.begin(), d_alpha.end(), a.data());
    g.d_params.alpha = tprod::copy<S>(a);
  }
  g.d_params.d_k = prm.d_k;
  g.d_params.epsilon = prm.epsilon;
  g.d_input = std::move(gk.d_input);
  axpy(sys, T(1), cview(gv.d_input), g.d_input.view());
  return g;
}

/// @brief Multi-head TSA in memory space S: the heads on X, side by side, through the MPO projection.
/// @throws shape_error as tsa_head_forward, or when the projection does not take Σ_h J_h features.
template <real_scalar T, memory_space S>
void tsa_forward(const tsa_params_in<T, S>& prm, const tensor3<T, dextents3, S>& x,
                 const tensor3<T, dextents3, S>& omega, const std::vector<std::size_t>& lengths,
                 tensor3<T, dextents3, S>& y, tsa_saved_in<T, S>& s) {
  const std::size_t width = detail::tsa_heads_width(prm, "nn::tsa_forward");
  s.heads.resize(prm.heads.size());
  detail::ensure_shape(s.heads_out, x.m(), width, 1);
  std::size_t col = 0;
  for (std::size_t h = 0; h < prm.heads.size(); ++h) {
    tsa_head_forward(prm.heads[h], x, omega, lengths, y, s.heads[h]);
    // head h's columns are one contiguous run of the column-major (B·L)×Σ_h J_h output
    copy(tprod::detail::system_of<S>(), cview(y),
         tensor3_view<T, dextents3, S>(s.heads_out.data() + col * x.m(), x.m(), y.n(), 1));
    col += y.n();
  }
  mpo_linear_forward(prm.projection, s.heads_out, y, s.projection);
}

/// @brief Backward pass of multi-head TSA in memory space S.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T, memory_space S>
tsa_grads_in<T, S> tsa_backward(const tsa_params_in<T, S>& prm, const tsa_saved_in<T, S>& s,
                                const tensor3<T, dextents3, S>& d_out) {
  auto gp = mpo_linear_backward(prm.projection, s.projection, d_out);
  tsa_grads_in<T, S> g;
  g.d_params.projection = std::move(gp.d_params);
  const std::size_t rows = gp.d_input.m();
  std::size_t col = 0;
  for (std::size_t h = 0; h < prm.heads.size(); ++h) {
    const std::size_t w = prm.heads[h].value.out_width();
    const tensor3<T, dextents3, S> dy(tensor3_view<const T, dextents3, S>(gp.d_input.data() + col * rows, rows, w, 1));
    auto gh = tsa_head_backward(prm.heads[h], s.heads[h], dy);
    g.d_params.heads.push_back(std::move(gh.d_params));
    if (h == 0)
      g.d_input = std::move(gh.d_input);
    else
      axpy(tprod::detail::system_of<S>(), T(1), cview(gh.d_input), g.d_input.view());
    col += w;
  }
  return g;
}

}  // namespace tprod::nn
