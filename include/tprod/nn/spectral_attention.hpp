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
/// Multi-head TSA runs H heads on the same X, concatenates their outputs (head h in columns h·J … (h+1)·J − 1)
/// and combines them by a learnable projection, itself an MPO layer ((H·J)×J_o).
#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tprod/graph/attention_graph.hpp"
#include "tprod/graph/polynomial_filter.hpp"
#include "tprod/nn/mpo_linear.hpp"

namespace tprod::nn {

/// @brief ε of the attention graph and its derivative (for the backward pass). Default: ReLU, ε' = [s > 0].
template <real_scalar T>
struct tsa_activation {
  std::function<T(T)> f = relu_activation{};
  std::function<T(T)> df = [](T s) { return s > T(0) ? T(1) : T(0); };
};

/// @brief One TSA head.
template <real_scalar T>
struct tsa_head_params {
  mpo_linear_params<T> key;    ///< W_k ∈ ℝ^{I×J_k}
  mpo_linear_params<T> value;  ///< W_v ∈ ℝ^{I×J}
  ndtensor<T> alpha;           ///< (α_0, …, α_{K−1}); empty: the simplified filter I + Ψ
  double d_k = 0;              ///< the scale of Θ; 0: J_k
  tsa_activation<T> epsilon;

  double scale() const { return d_k > 0 ? d_k : double(key.out_width()); }
  bool simplified() const { return alpha.size() == 0; }
  std::size_t parameter_count() const { return key.parameter_count() + value.parameter_count() + alpha.size(); }
  /// @brief Visits key cores, value cores and α (when learnable) as f(name, ndtensor<T>&).
  template <class F>
  void for_each(F&& f, const std::string& prefix = "") {
    key.for_each(f, prefix + "key.");
    value.for_each(f, prefix + "value.");
    if (!simplified()) f(prefix + "alpha", alpha);
  }
};

/// @brief Multi-head TSA: H heads and the MPO projection combining them.
template <real_scalar T>
struct tsa_params {
  std::vector<tsa_head_params<T>> heads;
  mpo_linear_params<T> projection;  ///< ((Σ_h J_h)×J_o)

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

/// @brief What tsa_head_backward needs.
template <real_scalar T>
struct tsa_head_saved {
  mpo_linear_saved<T> key_saved, value_saved;
  dense_matrix<T> k, v;                           ///< (B·L)×J_k, (B·L)×J
  std::vector<dense_matrix<T>> scores, psi;        ///< per sequence: S and Ψ, L×L
  std::vector<polynomial_filter_saved<T>> filter;  ///< per sequence: the Horner iterates
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

namespace detail {

/// The filter coefficients: α, or (1, 1) for the simplified I + Ψ.
template <class T>
std::vector<T> tsa_alpha(const tsa_head_params<T>& p) {
  if (p.simplified()) return {T(1), T(1)};
  return std::vector<T>(p.alpha.data(), p.alpha.data() + p.alpha.size());
}

/// Checks X, Ω and the lengths; returns the per-sequence lengths (L where none are given).
template <class T>
std::vector<std::size_t> tsa_lengths(std::size_t in_width, Eigen::Index rows, Eigen::Index cols,
                                     const dense_matrix<T>& omega, const std::vector<std::size_t>& lengths,
                                     const char* who) {
  tprod::detail::expect_square(omega, who, "time graph");
  const auto steps = std::size_t(omega.rows());
  TPROD_EXPECTS(std::size_t(cols) == in_width,
                std::string(who) + ": input " + std::to_string(rows) + "x" + std::to_string(cols) +
                    " does not match the key and value weights of input width " + std::to_string(in_width));
  TPROD_EXPECTS(steps > 0 && std::size_t(rows) % steps == 0,
                std::string(who) + ": " + std::to_string(rows) + " input rows are not whole sequences of the " +
                    std::to_string(steps) + " time steps of the " + tprod::detail::shape_text(omega) + " time graph");
  const std::size_t batch = std::size_t(rows) / steps;
  if (lengths.empty()) return std::vector<std::size_t>(batch, steps);
  TPROD_EXPECTS(lengths.size() == batch, std::string(who) + ": " + std::to_string(lengths.size()) +
                                             " sequence lengths for a batch of " + std::to_string(batch));
  for (std::size_t b = 0; b < batch; ++b)
    TPROD_EXPECTS(lengths[b] >= 1 && lengths[b] <= steps, std::string(who) + ": length " + std::to_string(lengths[b]) +
                                                              " of sequence " + std::to_string(b) + " is outside 1.." +
                                                              std::to_string(steps));
  return lengths;
}

}  // namespace detail

/// @brief One TSA head (Alg. 1, with the general filter when α is learnable): Y ∈ ℝ^{(B·L)×J}.
/// @param prm the head's parameters.
/// @param x the (B·L)×I input, B sequences of L rows.
/// @param omega the L×L time graph Ω; X must hold whole sequences of L rows.
/// @param lengths empty, or the number of real (unpadded) tokens of each sequence.
/// @throws shape_error for an X, Ω or lengths that do not fit the parameters.
template <real_scalar T>
std::pair<dense_matrix<T>, tsa_head_saved<T>> tsa_head_forward(const tsa_head_params<T>& prm,
                                                               const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                                               const dense_matrix<T>& omega,
                                                               const std::vector<std::size_t>& lengths = {}) {
  TPROD_EXPECTS(prm.key.in_width() == prm.value.in_width(),
                "nn::tsa_head_forward: the key weight takes " + std::to_string(prm.key.in_width()) +
                    " features but the value weight " + std::to_string(prm.value.in_width()));
  std::pair<dense_matrix<T>, tsa_head_saved<T>> r;
  tsa_head_saved<T>& s = r.second;
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
  r.first.resize(s.v.rows(), s.v.cols());
  for (std::size_t b = 0; b < batch; ++b) {
    const auto rows = Eigen::Index(b) * steps, n = Eigen::Index(s.lengths[b]);
    s.scores[b] = attention_scores<T>(s.k.middleRows(rows, steps), prm.scale());
    dense_matrix<T> theta = attention_coefficients_from_scores<T>(s.scores[b], prm.epsilon.f);
    theta.bottomRows(steps - n).setZero();  // padding neither receives …
    theta.rightCols(steps - n).setZero();   // … nor sends attention
    s.psi[b] = attention_adjacency(omega, theta);
    r.first.middleRows(rows, steps) = polynomial_filter_matrix<T>(s.psi[b], alpha, s.v.middleRows(rows, steps), &s.filter[b]);
  }
  return r;
}

/// @brief Backward pass of tsa_head_forward: ∂J/∂X and the gradients of the key and value cores and of α.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T>
tsa_head_grads<T> tsa_head_backward(const tsa_head_params<T>& prm, const tsa_head_saved<T>& s,
                                    const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out) {
  TPROD_EXPECTS(d_out.rows() == s.v.rows() && d_out.cols() == s.v.cols(),
                "nn::tsa_head_backward: gradient " + tprod::detail::shape_text(d_out) + " does not match the output " +
                    tprod::detail::shape_text(s.v));
  tsa_head_grads<T> g{dense_matrix<T>(), zeros_like(prm)};
  const auto steps = s.omega.rows();
  const std::vector<T> alpha = detail::tsa_alpha(prm);
  const T inv_dk = T(1 / prm.scale());
  dense_matrix<T> dk(s.k.rows(), s.k.cols()), dv(s.v.rows(), s.v.cols());
  for (std::size_t b = 0; b < s.lengths.size(); ++b) {
    const auto rows = Eigen::Index(b) * steps, n = Eigen::Index(s.lengths[b]);
    const auto fg = polynomial_filter_backward<T>(s.psi[b], alpha, s.v.middleRows(rows, steps), s.filter[b],
                                                  d_out.middleRows(rows, steps));
    dv.middleRows(rows, steps) = fg.d_x;
    if (!prm.simplified()) tprod::detail::elements(g.d_params.alpha) += fg.d_alpha;
    // ∂J/∂S = (Ω ⊙ ∂J/∂Ψ) ⊙ ε'(S) on the unpadded off-diagonal entries, 0 elsewhere
    dense_matrix<T> ds = dense_matrix<T>::Zero(steps, steps);
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = 0; i < n; ++i)
        if (i != j) ds(i, j) = s.omega(i, j) * fg.d_psi(i, j) * prm.epsilon.df(s.scores[b](i, j));
    dk.middleRows(rows, steps).noalias() = (ds + ds.transpose()) * s.k.middleRows(rows, steps) * inv_dk;
  }
  auto gk = mpo_linear_backward<T>(prm.key, s.key_saved, dk);
  auto gv = mpo_linear_backward<T>(prm.value, s.value_saved, dv);
  g.d_params.key = std::move(gk.d_params);
  g.d_params.value = std::move(gv.d_params);
  g.d_input = std::move(gk.d_input);
  g.d_input += gv.d_input;
  return g;
}

/// @brief Multi-head TSA: the H heads on X, concatenated, through the MPO projection.
/// @throws shape_error as tsa_head_forward, or when the projection does not take Σ_h J_h features.
template <real_scalar T>
std::pair<dense_matrix<T>, tsa_saved<T>> tsa_forward(const tsa_params<T>& prm,
                                                     const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& x,
                                                     const dense_matrix<T>& omega,
                                                     const std::vector<std::size_t>& lengths = {}) {
  TPROD_EXPECTS(!prm.heads.empty(), "nn::tsa_forward: the layer has no heads");
  std::size_t width = 0;
  for (const auto& h : prm.heads) width += h.value.out_width();
  TPROD_EXPECTS(width == prm.projection.in_width(),
                "nn::tsa_forward: the heads output " + std::to_string(width) + " features but the projection takes " +
                    std::to_string(prm.projection.in_width()));
  std::pair<dense_matrix<T>, tsa_saved<T>> r;
  dense_matrix<T> cat(x.rows(), Eigen::Index(width));
  Eigen::Index col = 0;
  for (const auto& h : prm.heads) {
    auto [y, saved] = tsa_head_forward<T>(h, x, omega, lengths);
    cat.middleCols(col, y.cols()) = y;
    col += y.cols();
    r.second.heads.push_back(std::move(saved));
  }
  mpo_linear_forward<T>(prm.projection, cat, r.first, r.second.projection);
  return r;
}

/// @brief Backward pass of tsa_forward.
/// @throws shape_error when d_out does not have the output's shape.
template <real_scalar T>
tsa_grads<T> tsa_backward(const tsa_params<T>& prm, const tsa_saved<T>& s,
                          const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& d_out) {
  tsa_grads<T> g{dense_matrix<T>(), zeros_like(prm)};
  auto gp = mpo_linear_backward<T>(prm.projection, s.projection, d_out);
  g.d_params.projection = std::move(gp.d_params);
  Eigen::Index col = 0;
  for (std::size_t h = 0; h < prm.heads.size(); ++h) {
    const auto w = Eigen::Index(prm.heads[h].value.out_width());
    auto gh = tsa_head_backward<T>(prm.heads[h], s.heads[h], gp.d_input.middleCols(col, w));
    col += w;
    g.d_params.heads[h] = std::move(gh.d_params);
    if (h == 0)
      g.d_input = std::move(gh.d_input);
    else
      g.d_input += gh.d_input;
  }
  return g;
}

}  // namespace tprod::nn
