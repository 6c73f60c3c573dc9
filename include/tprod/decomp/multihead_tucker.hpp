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
#include <string>

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

/// @brief W_all ∈ ℝ^{d_model×d_v×4×h} from W^Q, W^K, W^V, W^O and the head count h (eq. 7–8).
/// @throws shape_error when h does not divide the projection width or the four shapes disagree.
template <real_scalar T>
ndtensor<T> tensorize_heads(const attention_weights<T>& w, std::size_t heads) {
  const auto d_model = std::size_t(w.query.rows()), width = std::size_t(w.query.cols());
  const std::string shapes = "W^Q " + shape_string(w.query) + ", W^K " + shape_string(w.key) +
                             ", W^V " + shape_string(w.value) + ", W^O " + shape_string(w.output);
  TPROD_EXPECTS(heads > 0 && d_model > 0 && width > 0 && width % heads == 0,
                "tensorize_heads: " + std::to_string(heads) + " heads do not split " + shapes);
  TPROD_EXPECTS(w.key.rows() == w.query.rows() && w.key.cols() == w.query.cols() &&
                    w.value.rows() == w.query.rows() && w.value.cols() == w.query.cols() &&
                    w.output.rows() == w.query.cols() && w.output.cols() == w.query.rows(),
                "tensorize_heads: the projections must be d_model×h·d_v (W^Q, W^K, W^V) and h·d_v×d_model (W^O); "
                "got " + shapes);
  const std::size_t d_v = width / heads;
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

/// @brief Shared-factor Tucker denoising of one attention layer (eq. 7–14): tensorize, decompose W_all over modes
///        0, 1, 2 by HOOI (ranks (R_1, R_2, R_3) or a tolerance in `options`), and rebuild W^Q, W^K, W^V, W^O.
/// @pre options.modes is empty (the modes are fixed to 0, 1, 2); options.ranks, when given, has three entries.
/// @throws shape_error on inconsistent weights, a head count that does not divide them, or bad ranks.
template <real_scalar T>
multihead_tucker_result<T> multihead_tucker(const attention_weights<T>& w, std::size_t heads,
                                            tucker_options options) {
  TPROD_EXPECTS(options.modes.empty(), "multihead_tucker: the decomposed modes are fixed to (0, 1, 2); leave "
                                       "options.modes empty");
  options.modes = {0, 1, 2};
  const ndtensor<T> all = tensorize_heads(w, heads);
  multihead_tucker_result<T> r{hooi(all, options), {}};
  r.weights = detensorize_heads(r.tucker.reconstruct());
  return r;
}

}  // namespace tprod
