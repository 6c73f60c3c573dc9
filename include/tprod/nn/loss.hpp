// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file loss.hpp
/// @brief Softmax cross-entropy over class logits, with its gradient.
///
/// For logits Z ∈ ℝ^{B×C} (a B×C×1 tensor, e.g. a p = 1 linear head's output) and labels y_b:
///   J = −(1/B) Σ_b log softmax(Z_b)_{y_b},   ∂J/∂Z_b = (softmax(Z_b) − e_{y_b})/B.
/// The log-sum-exp is shifted by each row's maximum, so large logits do not overflow.
///
/// Rows labelled ignore_label (a language model's padded positions) take no part: with K the count of the other
/// rows, J = −(1/K) Σ_{b labelled} log softmax(Z_b)_{y_b}, and the ignored rows' gradient is zero.
#include <cstddef>
#include <span>
#include <vector>

#include "tprod/backend/kernels/embedding.hpp"
#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

/// @brief The label of a row that the loss skips (as PyTorch's ignore_index).
inline constexpr std::size_t ignore_label = backend::kernels::ignored_label;

template <std::floating_point T, memory_space S = host_space>
struct cross_entropy_result {
  T loss;
  tensor3<T, dextents3, S> d_logits;   ///< B×C×1, in the logits' memory space
  std::vector<std::size_t> predicted;  ///< argmax of every row
  std::size_t counted = 0;             ///< K, the rows whose label is not ignore_label
};

/// @brief Mean softmax cross-entropy of B×C×1 logits against labels in [0, C) or ignore_label, in the logits'
/// memory space (the loss and the predictions come back to the host).
/// @throws shape_error for a label count other than B, a label ≥ C (other than ignore_label), every label
///         ignored, or logits with more than one slice.
template <std::floating_point T, memory_space S>
cross_entropy_result<T, S> softmax_cross_entropy(const tensor3<T, dextents3, S>& logits,
                                                 const std::vector<std::size_t>& labels) {
  TPROD_EXPECTS(logits.p() == 1 && logits.n() > 0 && logits.m() == labels.size() && !labels.empty(),
                "nn::softmax_cross_entropy: logits " + logits.shape() + " for " + std::to_string(labels.size()) +
                    " labels (need B x C x 1 with B = the label count)");
  const std::size_t batch = logits.m(), classes = logits.n();
  cross_entropy_result<T, S> r{T(0), tensor3<T, dextents3, S>(batch, classes, 1, uninitialized),
                               std::vector<std::size_t>(batch)};
  for (std::size_t b = 0; b < batch; ++b) {
    TPROD_EXPECTS(labels[b] < classes || labels[b] == ignore_label,
                  "nn::softmax_cross_entropy: label " + std::to_string(labels[b]) + " of row " + std::to_string(b) +
                      " is not below the class count " + std::to_string(classes));
    r.counted += labels[b] != ignore_label;
  }
  TPROD_EXPECTS(r.counted > 0, "nn::softmax_cross_entropy: every one of the " + std::to_string(batch) +
                                   " labels is ignore_label, so there is no loss");
  const double total =
      softmax_cross_entropy(tprod::detail::system_of<S>(), logits.dynamic_view(), std::span<const std::size_t>(labels),
                            r.counted, r.d_logits.dynamic_view(), std::span<std::size_t>(r.predicted));
  r.loss = T(total / double(r.counted));
  return r;
}

}  // namespace tprod::nn
