#pragma once
/// @file loss.hpp
/// @brief Softmax cross-entropy over class logits, with its gradient.
///
/// For logits Z ∈ ℝ^{B×C} (a B×C×1 tensor, e.g. a p = 1 linear head's output) and labels y_b:
///   J = −(1/B) Σ_b log softmax(Z_b)_{y_b},   ∂J/∂Z_b = (softmax(Z_b) − e_{y_b})/B.
/// The log-sum-exp is shifted by each row's maximum, so large logits do not overflow.
#include <vector>

#include "tprod/nn/detail/common.hpp"

namespace tprod::nn {

template <std::floating_point T>
struct cross_entropy_result {
  T loss;
  tensor3<T> d_logits;                 ///< B×C×1
  std::vector<std::size_t> predicted;  ///< argmax of every row
};

/// @brief Mean softmax cross-entropy of B×C×1 logits against labels in [0, C).
/// @throws shape_error for a label count other than B, a label ≥ C, or logits with more than one slice.
template <std::floating_point T>
cross_entropy_result<T> softmax_cross_entropy(const tensor3<T>& logits, const std::vector<std::size_t>& labels) {
  TPROD_EXPECTS(logits.p() == 1 && logits.n() > 0 && logits.m() == labels.size() && !labels.empty(),
                "nn::softmax_cross_entropy: logits " + logits.shape() + " for " + std::to_string(labels.size()) +
                    " labels (need B x C x 1 with B = the label count)");
  const std::size_t batch = logits.m(), classes = logits.n();
  cross_entropy_result<T> r{T(0), tensor3<T>(batch, classes, 1), std::vector<std::size_t>(batch)};
  const auto z = logits.slice(0);
  auto g = r.d_logits.slice(0);
  double total = 0;
  for (std::size_t b = 0; b < batch; ++b) {
    TPROD_EXPECTS(labels[b] < classes, "nn::softmax_cross_entropy: label " + std::to_string(labels[b]) + " of row " +
                                           std::to_string(b) + " is not below the class count " +
                                           std::to_string(classes));
    Eigen::Index arg = 0;
    const T mx = z.row(Eigen::Index(b)).maxCoeff(&arg);
    r.predicted[b] = std::size_t(arg);
    const auto e = (z.row(Eigen::Index(b)).array() - mx).exp();
    const T sum = e.sum();
    total += double(std::log(sum) + mx - z(Eigen::Index(b), Eigen::Index(labels[b])));
    g.row(Eigen::Index(b)) = e / (sum * T(batch));
    g(Eigen::Index(b), Eigen::Index(labels[b])) -= T(1) / T(batch);
  }
  r.loss = T(total / double(batch));
  return r;
}

}  // namespace tprod::nn
