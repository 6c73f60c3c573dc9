// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file multihead_tucker.hpp
/// @brief Tucker decomposition of a multi-head attention layer with factor matrices shared across heads
///        (TensorLLM, Gu et al. 2025, §III): W_all ∈ ℝ^{d_model×d_v×4×h}, W_all ≈ G_all ×_1 U⁽¹⁾ ×_2 U⁽²⁾ ×_3 U⁽³⁾.
///
/// Tensorization (eq. 7–8, modes from 0 here): W_all(:, :, 0, i) = W_i^Q, (:, :, 1, i) = W_i^K,
/// (:, :, 2, i) = W_i^V, (:, :, 3, i) = (W_i^O)ᵀ, where W_i^Q = W^Q(:, i·d_v … (i+1)·d_v − 1) (head i's columns,
/// heads in order) and W_i^O = W^O(i·d_v … (i+1)·d_v − 1, :) (head i's rows of the output projection).
/// Every head i keeps its own core G_i = G_all(:, :, :, i) ∈ ℝ^{R_1×R_2×R_3} (eq. 9, 12); the fourth factor is
/// the identity and is not stored (a partial Tucker over modes 0, 1, 2, fitted by HOOI as in the paper).
///
/// The same functions take attention_weights_in<T, S> (the four matrices as matrix_in<T, S>, on the device
/// `copy<device_space>(w)`): the tensorization is block copies (W^O transposed once), the HOOI runs in S.
#include <string>
#include <utility>

#include "tprod/decomp/tucker.hpp"

namespace tprod {

/// @brief The four projection matrices of one multi-head attention layer.
template <real_scalar T>
struct attention_weights {
  dense_matrix<T> query;   ///< W^Q ∈ ℝ^{d_model × h·d_v}
  dense_matrix<T> key;     ///< W^K ∈ ℝ^{d_model × h·d_v}
  dense_matrix<T> value;   ///< W^V ∈ ℝ^{d_model × h·d_v}
  dense_matrix<T> output;  ///< W^O ∈ ℝ^{h·d_v × d_model}
};

/// @brief The result of multihead_tucker: the shared-factor decomposition and the rebuilt (denoised) weights.
template <real_scalar T>
struct multihead_tucker_result {
  /// core = G_all ∈ ℝ^{R_1×R_2×R_3×h}, factors = (U⁽¹⁾ ∈ ℝ^{d_model×R_1}, U⁽²⁾ ∈ ℝ^{d_v×R_2}, U⁽³⁾ ∈ ℝ^{4×R_3}),
  /// modes = (0, 1, 2). Its compression_ratio is the paper's CR = N_original/N_compressed
  /// = 4·d_model·h·d_v / (R_1R_2R_3h + d_model·R_1 + d_v·R_2 + 4·R_3).
  tucker_result<T> tucker;
  attention_weights<T> weights;  ///< W^Q, W^K, W^V, W^O rebuilt from the decomposition
};

namespace detail {
inline std::pair<std::size_t, std::size_t> rows_cols(const auto& m) {
  if constexpr (requires { m.p(); })
    return {m.m(), m.n()};
  else
    return {std::size_t(m.rows()), std::size_t(m.cols())};
}

/// d_v = h·d_v / h after checking the four shapes (d_model×h·d_v three times, h·d_v×d_model once) and the split.
/// @throws shape_error naming the four shapes.
inline std::size_t head_width(std::pair<std::size_t, std::size_t> q, std::pair<std::size_t, std::size_t> k,
                              std::pair<std::size_t, std::size_t> v, std::pair<std::size_t, std::size_t> o,
                              std::size_t heads) {
  const auto text = [](std::pair<std::size_t, std::size_t> s) { return shape_string(nd_shape{s.first, s.second}); };
  const std::string shapes = "W^Q " + text(q) + ", W^K " + text(k) + ", W^V " + text(v) + ", W^O " + text(o);
  TPROD_EXPECTS(heads > 0 && q.first > 0 && q.second > 0 && q.second % heads == 0,
                "tensorize_heads: " + std::to_string(heads) + " heads do not split " + shapes);
  TPROD_EXPECTS(k == q && v == q && o.first == q.second && o.second == q.first,
                "tensorize_heads: the projections must be d_model×h·d_v (W^Q, W^K, W^V) and h·d_v×d_model (W^O); "
                "got " + shapes);
  return q.second / heads;
}
}  // namespace detail

/// @brief W_all ∈ ℝ^{d_model×d_v×4×h} from W^Q, W^K, W^V, W^O and the head count h (eq. 7–8).
/// @throws shape_error when h does not divide the projection width or the four shapes disagree.
template <real_scalar T>
ndtensor<T> tensorize_heads(const attention_weights<T>& w, std::size_t heads) {
  const std::size_t d_v = detail::head_width(detail::rows_cols(w.query), detail::rows_cols(w.key),
                                             detail::rows_cols(w.value), detail::rows_cols(w.output), heads);
  const auto d_model = std::size_t(w.query.rows());
  ndtensor<T> all = ndtensor<T>::from_shape({d_model, d_v, 4, heads});
  // Slab (j, i) = W_all(:, :, j, i) is a contiguous d_model×d_v column-major block.
  const auto slab = [&](std::size_t j, std::size_t i) {
    return Eigen::Map<dense_matrix<T>>(all.data() + d_model * d_v * (j + 4 * i), Eigen::Index(d_model),
                                       Eigen::Index(d_v));
  };
  for (std::size_t i = 0; i < heads; ++i) {
    const auto cols = Eigen::Index(i * d_v);
    slab(0, i) = w.query.middleCols(cols, Eigen::Index(d_v));
    slab(1, i) = w.key.middleCols(cols, Eigen::Index(d_v));
    slab(2, i) = w.value.middleCols(cols, Eigen::Index(d_v));
    slab(3, i) = w.output.middleRows(cols, Eigen::Index(d_v)).transpose();
  }
  return all;
}

/// @brief The inverse of tensorize_heads: W^Q, W^K, W^V, W^O from W_all ∈ ℝ^{d_model×d_v×4×h}.
/// @throws shape_error unless W_all is of order 4 with a third mode of size 4.
template <real_scalar T>
attention_weights<T> detensorize_heads(const ndtensor<T>& all) {
  const nd_shape s = shape_of(all);
  TPROD_EXPECTS(s.size() == 4 && s[2] == 4, "detensorize_heads: W_all must be d_model×d_v×4×h, got " +
                                                shape_string(s));
  const std::size_t d_model = s[0], d_v = s[1], heads = s[3];
  attention_weights<T> w;
  w.query.resize(Eigen::Index(d_model), Eigen::Index(heads * d_v));
  w.key.resizeLike(w.query);
  w.value.resizeLike(w.query);
  w.output.resize(Eigen::Index(heads * d_v), Eigen::Index(d_model));
  for (std::size_t i = 0; i < heads; ++i) {
    const auto slab = [&](std::size_t j) {
      return Eigen::Map<const dense_matrix<T>>(all.data() + d_model * d_v * (j + 4 * i), Eigen::Index(d_model),
                                               Eigen::Index(d_v));
    };
    const auto cols = Eigen::Index(i * d_v);
    w.query.middleCols(cols, Eigen::Index(d_v)) = slab(0);
    w.key.middleCols(cols, Eigen::Index(d_v)) = slab(1);
    w.value.middleCols(cols, Eigen::Index(d_v)) = slab(2);
    w.output.middleRows(cols, Eigen::Index(d_v)) = slab(3).transpose();
  }
  return w;
}

namespace detail {
/// Tensorize, HOOI over modes 0, 1, 2, rebuild: the algorithm of multihead_tucker for weights of either kind.
template <class Result, class Weights>
Result multihead_tucker_of(const Weights& w, std::size_t heads, tucker_options options) {
  TPROD_EXPECTS(options.modes.empty(), "multihead_tucker: the decomposed modes are fixed to (0, 1, 2); leave "
                                       "options.modes empty");
  options.modes = {0, 1, 2};
  Result r{hooi(tensorize_heads(w, heads), options), {}};
  r.weights = detensorize_heads(r.tucker.reconstruct());
  return r;
}
}  // namespace detail

/// @brief Shared-factor Tucker denoising of one attention layer (eq. 7–14): tensorize, decompose W_all over modes
///        0, 1, 2 by HOOI (ranks (R_1, R_2, R_3) or a tolerance in `options`), and rebuild W^Q, W^K, W^V, W^O.
/// @pre options.modes is empty (the modes are fixed to 0, 1, 2); options.ranks, when given, has three entries.
/// @throws shape_error on inconsistent weights, a head count that does not divide them, or bad ranks.
template <real_scalar T>
multihead_tucker_result<T> multihead_tucker(const attention_weights<T>& w, std::size_t heads,
                                            tucker_options options) {
  return detail::multihead_tucker_of<multihead_tucker_result<T>>(w, heads, std::move(options));
}

/// @brief The four projection matrices of one attention layer in memory space S (m×n×1 tensor3s).
template <real_scalar T, memory_space S>
struct attention_weights_in {
  matrix_in<T, S> query, key, value, output;
};

/// @brief The weights copied to memory space S.
template <memory_space S, real_scalar T>
attention_weights_in<T, S> copy(const attention_weights<T>& w, S = {}) {
  return {detail::matrix_in_space<S>(w.query), detail::matrix_in_space<S>(w.key),
          detail::matrix_in_space<S>(w.value), detail::matrix_in_space<S>(w.output)};
}

/// @brief The weights copied to the host.
template <real_scalar T, memory_space S>
attention_weights<T> to_attention_weights(const attention_weights_in<T, S>& w) {
  return {detail::host_matrix(w.query), detail::host_matrix(w.key), detail::host_matrix(w.value),
          detail::host_matrix(w.output)};
}

/// @brief multihead_tucker's result for weights in memory space S, held there.
template <real_scalar T, memory_space S>
struct multihead_tucker_result_in {
  tucker_result_in<T, S> tucker;
  attention_weights_in<T, S> weights;
};

/// @brief W_all from weights in memory space S, in S: the blocks W_all(:, :, j, i) are contiguous in W^Q, W^K, W^V
///        and in W^Oᵀ (one transpose), so the tensorization is 4·h block copies.
/// @throws shape_error as tensorize_heads of host weights.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> tensorize_heads(const attention_weights_in<T, S>& w, std::size_t heads) {
  using view = tensor3_view<const T, dextents3, S>;
  const std::size_t d_v = detail::head_width(detail::rows_cols(w.query), detail::rows_cols(w.key),
                                             detail::rows_cols(w.value), detail::rows_cols(w.output), heads);
  const std::size_t d_model = w.query.m(), block = d_model * d_v;
  matrix_in<T, S> output_t(d_model, heads * d_v, 1, uninitialized);
  adjoint_slices(detail::system_of<S>(), cview(w.output), output_t.view());
  ndtensor_in<T, S> all(nd_shape{d_model, d_v, 4, heads});
  const matrix_in<T, S>* sources[4] = {&w.query, &w.key, &w.value, &output_t};
  for (std::size_t i = 0; i < heads; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      copy(detail::system_of<S>(), view(sources[j]->data() + block * i, block, 1, 1),
           tensor3_view<T, dextents3, S>(all.flat().data() + block * (j + 4 * i), block, 1, 1));
  return all;
}

/// @brief The inverse of tensorize_heads for W_all in memory space S.
/// @throws shape_error unless W_all is of order 4 with a third mode of size 4.
template <real_scalar T, memory_space S>
attention_weights_in<T, S> detensorize_heads(const ndtensor_in<T, S>& all) {
  using view = tensor3_view<const T, dextents3, S>;
  const nd_shape s = all.shape();
  TPROD_EXPECTS(s.size() == 4 && s[2] == 4, "detensorize_heads: W_all must be d_model×d_v×4×h, got " +
                                                shape_string(s));
  const std::size_t d_model = s[0], d_v = s[1], heads = s[3], block = d_model * d_v;
  attention_weights_in<T, S> w;
  matrix_in<T, S> output_t(d_model, heads * d_v, 1, uninitialized);
  matrix_in<T, S>* targets[4] = {&w.query, &w.key, &w.value, &output_t};
  for (std::size_t j = 0; j < 3; ++j) *targets[j] = matrix_in<T, S>(d_model, heads * d_v, 1, uninitialized);
  for (std::size_t i = 0; i < heads; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      copy(detail::system_of<S>(), view(all.flat().data() + block * (j + 4 * i), block, 1, 1),
           tensor3_view<T, dextents3, S>(targets[j]->data() + block * i, block, 1, 1));
  w.output = matrix_in<T, S>(heads * d_v, d_model, 1, uninitialized);
  adjoint_slices(detail::system_of<S>(), cview(output_t), w.output.view());
  return w;
}

/// @brief Shared-factor Tucker denoising of one attention layer whose weights live in memory space S, computed
///        there (the result stays in S).
template <real_scalar T, memory_space S>
multihead_tucker_result_in<T, S> multihead_tucker(const attention_weights_in<T, S>& w, std::size_t heads,
                                                  tucker_options options) {
  return detail::multihead_tucker_of<multihead_tucker_result_in<T, S>>(w, heads, std::move(options));
}

}  // namespace tprod
