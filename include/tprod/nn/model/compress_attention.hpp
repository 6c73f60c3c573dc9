// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file compress_attention.hpp
/// @brief TensorLLM on trained weights (Gu et al. 2025, §3–4): the shared-factor multi-head Tucker
/// (decomp/multihead_tucker.hpp) applied to W^Q, W^K, W^V, W^O of chosen layers of a standard Transformer, the
/// denoised weights put back; and LASER's rank-k reduction (Sharma et al. 2024) of chosen matrices of the same
/// layers, the per-matrix baseline the paper compares with. Both report, per layer, the compression ratio of the
/// layer's four matrices and the relative change ‖Ŵ − W‖_F/‖W‖_F of each.
///
/// LASER on the FFN (`laser_ffn`) makes paper 004's hybrids (Remark 3): Tucker or LASER on the attention, LASER on
/// the FFN. Three levels, one implementation: one layer's attention_weights (`compress_attention(w, heads, options)`,
/// `laser_attention(w, k, matrices)`), a standard encoder stack (`compress_attention(stack, layers, options)`),
/// and — through attention_weights_of on the stored tensors — a checkpoint file (`tprod compress-attention`).
/// Only a standard layer (p = 1, identity transform) has these matrices (attention_weights.hpp). A stack on the
/// device is compressed the same way: its layers' d×d matrices come to the host, where the Tucker of the heads and
/// the truncated SVDs run (small next to evaluating the model), and go back.
#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "tprod/decomp/low_rank.hpp"
#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/nn/attention_weights.hpp"
#include "tprod/nn/model/encoder_stack.hpp"

namespace tprod::nn {

/// @brief ‖Ŵ − W‖_F/‖W‖_F of each of the four matrices (0 for an unchanged or an all-zero W).
struct attention_errors {
  double query = 0, key = 0, value = 0, output = 0;
};

/// @brief What compressing one layer did.
struct attention_compression {
  std::size_t layer = 0;  ///< the layer index (0 for a single layer's weights)
  /// N_original/N_compressed over the layer's four matrices: 4·d·h·d_v over the numbers the compressed form stores
  /// (Tucker: h cores + 3 factors; LASER: k(m + n) per reduced matrix, m·n per matrix left dense).
  double compression_ratio = 1;
  attention_errors relative_error;
  std::vector<std::size_t> ranks;  ///< Tucker (R1, R2, R3), or LASER's (k)
};

/// @brief Which of a layer's four matrices LASER reduces.
enum class attention_matrix { query, key, value, output };
inline constexpr attention_matrix all_attention_matrices[] = {attention_matrix::query, attention_matrix::key,
                                                              attention_matrix::value, attention_matrix::output};

namespace detail {

template <real_scalar T>
double relative_change(const dense_matrix<T>& before, const dense_matrix<T>& after) {
  // in double throughout: a float difference would round away the error's own low digits
  const Eigen::MatrixXd b = before.template cast<double>();
  const double norm = b.norm();
  return norm == 0 ? 0 : (after.template cast<double>() - b).norm() / norm;
}

template <real_scalar T>
dense_matrix<T>& matrix_of(tprod::attention_weights<T>& w, attention_matrix which) {
  switch (which) {
    case attention_matrix::query: return w.query;
    case attention_matrix::key: return w.key;
    case attention_matrix::value: return w.value;
    case attention_matrix::output: break;
  }
  return w.output;
}

/// @brief LASER's step on one of a layer's matrices: m replaced by its rank-k truncated SVD when `reduce`, else
/// kept; adds what m takes dense and what it then stores to the layer's tallies (for the compression ratio).
template <real_scalar T>
void laser_step(dense_matrix<T>& m, std::size_t rank, bool reduce, double& dense, double& stored) {
  dense += double(m.size());
  if (!reduce) {
    stored += double(m.size());
    return;
  }
  const auto r = low_rank_approximation(m, rank);
  stored += double(r.parameter_count());
  m = r.reconstruct();
}

/// @brief Checks that `layers` are distinct indices below `count`; empty means all of them.
inline std::vector<std::size_t> chosen_layers(std::span<const std::size_t> layers, std::size_t count,
                                              const char* who) {
  std::vector<std::size_t> chosen(layers.begin(), layers.end());
  if (chosen.empty())
    for (std::size_t i = 0; i < count; ++i) chosen.push_back(i);
  for (std::size_t j = 0; j < chosen.size(); ++j) {
    TPROD_EXPECTS(chosen[j] < count, std::string(who) + ": layer " + std::to_string(chosen[j]) +
                                         " does not exist (the stack has " + std::to_string(count) + " layers)");
    TPROD_EXPECTS(std::find(chosen.begin(), chosen.begin() + std::ptrdiff_t(j), chosen[j]) ==
                      chosen.begin() + std::ptrdiff_t(j),
                  std::string(who) + ": layer " + std::to_string(chosen[j]) + " is listed twice");
  }
  return chosen;
}

/// The m×n matrix of an m×n×1 tensor in any memory space, on the host.
template <class T, memory_space S>
dense_matrix<T> host_matrix_of(const tensor3<T, dextents3, S>& t) {
  if constexpr (std::same_as<S, host_space>)
    return t.slice(0);
  else
    return tprod::detail::in_space<host_space>(t).slice(0);
}
/// t(:, :, 0) = m for an m×n×1 tensor in any memory space (a device tensor through a host copy).
template <class T, memory_space S>
void write_matrix(tensor3<T, dextents3, S>& t, const dense_matrix<T>& m) {
  tensor3<T> h(std::size_t(m.rows()), std::size_t(m.cols()), 1, uninitialized);
  h.slice(0) = m;
  t = tprod::detail::in_space<S>(std::move(h));
}

/// @brief Runs `compress(weights&) → attention_compression` on the chosen layers of a standard stack, all layers
/// first, then writes every result back (so the stack is unchanged when one of them throws).
template <std::floating_point T, class L, class A, class F>
std::vector<attention_compression> compress_layers(encoder_stack<T, L, A>& stack, std::span<const std::size_t> layers,
                                                   const char* who, F&& compress) {
  const auto chosen = chosen_layers(layers, stack.size(), who);
  std::vector<tprod::attention_weights<T>> rebuilt;
  std::vector<attention_compression> results;
  for (std::size_t i : chosen) {
    rebuilt.push_back(attention_weights_of(stack[i].attn));
    results.push_back(compress(rebuilt.back(), stack[i].attn.heads));
    results.back().layer = i;
  }
  for (std::size_t j = 0; j < chosen.size(); ++j) set_attention_weights(stack[chosen[j]].attn, rebuilt[j]);
  return results;
}

}  // namespace detail

/// @brief The relative change of each matrix from `before` to `after` (the same shapes).
template <real_scalar T>
attention_errors relative_errors(const tprod::attention_weights<T>& before, const tprod::attention_weights<T>& after) {
  return {detail::relative_change(before.query, after.query), detail::relative_change(before.key, after.key),
          detail::relative_change(before.value, after.value), detail::relative_change(before.output, after.output)};
}

/// @brief Replaces one layer's W^Q, W^K, W^V, W^O by their shared-factor multi-head Tucker reconstruction
/// (multihead_tucker: ranks (R1, R2, R3) ≤ (d_model, d_v, 4), or a tolerance, in `options`).
/// @throws shape_error for inconsistent weights, a head count that does not divide them, or ranks out of range;
///         `w` is unchanged when it throws.
template <real_scalar T>
attention_compression compress_attention(tprod::attention_weights<T>& w, std::size_t heads,
                                         const tucker_options& options) {
  multihead_tucker_result<T> r = multihead_tucker(w, heads, options);
  attention_compression c{0, r.tucker.compression_ratio, relative_errors(w, r.weights), r.tucker.ranks()};
  w = std::move(r.weights);
  return c;
}

/// @brief LASER on one layer: replaces each chosen matrix by its rank-k truncated SVD (low_rank_approximation).
/// @throws shape_error unless 1 ≤ k ≤ min(m, n) of every chosen matrix; `w` is unchanged when it throws.
template <real_scalar T>
attention_compression laser_attention(tprod::attention_weights<T>& w, std::size_t rank,
                                      std::span<const attention_matrix> matrices = all_attention_matrices) {
  tprod::attention_weights<T> reduced = w;
  double dense = 0, stored = 0;
  for (attention_matrix which : all_attention_matrices)
    detail::laser_step(detail::matrix_of(reduced, which), rank,
                       std::find(matrices.begin(), matrices.end(), which) != matrices.end(), dense, stored);
  attention_compression c{0, dense / stored, relative_errors(w, reduced), {rank}};
  w = std::move(reduced);
  return c;
}

/// @brief Paper 004's ablation (Table IV): the multi-head tensorisation and shared-factor Tucker applied to one of
/// the four matrices alone. That matrix, W ∈ ℝ^{d_model×h·d_v} (W^O transposed), becomes the d_model×d_v×h tensor
/// of its heads, whose factors of modes 0 and 1 (ranks R1, R2) all heads share, each head keeping its own core; the
/// other three matrices are left as they are. The compression ratio counts all four matrices.
/// @throws shape_error when `heads` does not divide the matrix or a rank is outside 1..d_model, 1..d_v; `w` is
///         unchanged when it throws.
template <real_scalar T>
attention_compression compress_attention_matrix(tprod::attention_weights<T>& w, std::size_t heads,
                                                attention_matrix which, std::size_t r1, std::size_t r2) {
  const dense_matrix<T>& m = detail::matrix_of(w, which);
  const bool output = which == attention_matrix::output;
  const dense_matrix<T> a = output ? dense_matrix<T>(m.transpose()) : m;  // d_model × h·d_v, head i in columns i·d_v…
  const auto d_model = std::size_t(a.rows()), width = std::size_t(a.cols());
  TPROD_EXPECTS(heads > 0 && width > 0 && width % heads == 0, "nn::compress_attention_matrix: " +
                                                                  std::to_string(heads) + " heads do not split a " +
                                                                  shape_string(m) + " matrix");
  const std::size_t d_v = width / heads;
  // Column-major, the heads' d_model×d_v blocks side by side are already the d_model×d_v×h tensor's memory.
  ndtensor<T> x = ndtensor<T>::from_shape({d_model, d_v, heads});
  std::copy(a.data(), a.data() + a.size(), x.data());
  const tucker_result<T> t = hooi(x, tucker_options{.ranks = {r1, r2}, .modes = {0, 1}});
  const ndtensor<T> y = t.reconstruct();
  const Eigen::Map<const dense_matrix<T>> rebuilt(y.data(), Eigen::Index(d_model), Eigen::Index(width));
  tprod::attention_weights<T> changed = w;
  detail::matrix_of(changed, which) = output ? dense_matrix<T>(rebuilt.transpose()) : dense_matrix<T>(rebuilt);
  const double dense = 4.0 * double(a.size());
  const double stored = 3.0 * double(a.size()) + double(t.parameter_count());
  attention_compression c{0, dense / stored, relative_errors(w, changed), {r1, r2}};
  w = std::move(changed);
  return c;
}

/// @brief compress_attention on the given layers of a standard encoder stack (each with its own head count);
/// `layers` empty means every layer. Returns one result per layer, in the order given.
/// @throws shape_error for a layer index out of range or repeated, an L-product layer (p > 1), or bad ranks; the
///         stack is unchanged when it throws.
template <std::floating_point T, class L, class A>
std::vector<attention_compression> compress_attention(encoder_stack<T, L, A>& stack, std::span<const std::size_t> layers,
                                                      const tucker_options& options) {
  return detail::compress_layers(stack, layers, "nn::compress_attention",
                                 [&](tprod::attention_weights<T>& w, std::size_t heads) {
                                   return compress_attention(w, heads, options);
                                 });
}

/// @brief compress_attention_matrix on the given layers of a standard encoder stack (`layers` empty: every layer).
/// @throws shape_error as compress_attention_matrix, or for a layer out of range; the stack is unchanged when it
///         throws.
template <std::floating_point T, class L, class A>
std::vector<attention_compression> compress_attention_matrix(encoder_stack<T, L, A>& stack,
                                                             std::span<const std::size_t> layers,
                                                             attention_matrix which, std::size_t r1, std::size_t r2) {
  return detail::compress_layers(stack, layers, "nn::compress_attention_matrix",
                                 [&](tprod::attention_weights<T>& w, std::size_t heads) {
                                   return compress_attention_matrix(w, heads, which, r1, r2);
                                 });
}

/// @brief laser_attention on the given layers of a standard encoder stack (`layers` empty: every layer).
/// @throws shape_error as compress_attention, or for k outside 1..d; the stack is unchanged when it throws.
template <std::floating_point T, class L, class A>
std::vector<attention_compression> laser_attention(
    encoder_stack<T, L, A>& stack, std::span<const std::size_t> layers, std::size_t rank,
    std::span<const attention_matrix> matrices = all_attention_matrices) {
  return detail::compress_layers(stack, layers, "nn::laser_attention",
                                 [&](tprod::attention_weights<T>& w, std::size_t) {
                                   return laser_attention(w, rank, matrices);
                                 });
}

/// @brief Which of a layer's two FFN matrices LASER reduces: W₁ (d×d_ff, into the hidden layer) or W₂ (d_ff×d).
enum class ffn_matrix { input, output };
inline constexpr ffn_matrix both_ffn_matrices[] = {ffn_matrix::input, ffn_matrix::output};

/// @brief What LASER did to one layer's FFN.
struct ffn_compression {
  std::size_t layer = 0;
  double compression_ratio = 1;  ///< over the FFN's two matrices: 2·d·d_ff over k(m + n) per reduced one, m·n per other
  double input_error = 0, output_error = 0;  ///< ‖Ŵ − W‖_F/‖W‖_F of W₁ and of W₂ (0 when left as they are)
  std::size_t rank = 0;
};

/// @brief LASER on the FFN of the given layers of a standard encoder stack (`layers` empty: every layer): each
/// chosen matrix replaced by its rank-k truncated SVD. With compress_attention on the same layers this is paper
/// 004's hybrid (Remark 3, Table III, case 3: Tucker on the attention, LASER on the FFN).
/// @throws shape_error for an L-product layer (p > 1), a layer out of range or repeated, or k outside
///         1..min(d, d_ff); the stack is unchanged when it throws.
template <std::floating_point T, class L, class A>
std::vector<ffn_compression> laser_ffn(encoder_stack<T, L, A>& stack, std::span<const std::size_t> layers,
                                       std::size_t rank, std::span<const ffn_matrix> matrices = both_ffn_matrices) {
  const auto chosen = detail::chosen_layers(layers, stack.size(), "nn::laser_ffn");
  std::vector<std::array<dense_matrix<T>, 2>> rebuilt;
  std::vector<ffn_compression> results;
  for (std::size_t i : chosen) {
    auto& ffn = stack[i].ffn;
    TPROD_EXPECTS(ffn.slices() == 1, "nn::laser_ffn: layer " + std::to_string(i) + " is an L-product layer (p = " +
                                         std::to_string(ffn.slices()) + "); LASER reduces a standard layer's matrices");
    const std::array<dense_matrix<T>, 2> before = {detail::host_matrix_of(ffn.w1.data()),
                                                   detail::host_matrix_of(ffn.w2.data())};
    std::array<dense_matrix<T>, 2> w = before;
    double dense = 0, stored = 0;
    for (std::size_t j = 0; j < 2; ++j)
      detail::laser_step(w[j], rank,
                         std::find(matrices.begin(), matrices.end(), both_ffn_matrices[j]) != matrices.end(), dense,
                         stored);
    ffn_compression c{i, dense / stored, detail::relative_change(before[0], w[0]),
                      detail::relative_change(before[1], w[1]), rank};
    rebuilt.push_back(std::move(w));
    results.push_back(c);
  }
  for (std::size_t j = 0; j < chosen.size(); ++j) {
    detail::write_matrix(stack[chosen[j]].ffn.w1.data(), rebuilt[j][0]);
    detail::write_matrix(stack[chosen[j]].ffn.w2.data(), rebuilt[j][1]);
  }
  return results;
}

}  // namespace tprod::nn
