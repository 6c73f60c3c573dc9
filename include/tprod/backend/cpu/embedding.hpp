// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file embedding.hpp
/// @brief The CPU backend's token-embedding and loss tasks (contract: backend/kernels/embedding.hpp): plain loops
/// over the rows (the table's columns are contiguous, so a lookup reads one run of memory).
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <span>

#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/kernels/embedding.hpp"

namespace tprod::backend::cpu {

/// @brief X = Ten_p(E[tokens]), the padding features zero.
template <class T>
void embedding_gather(const system&, tensor3_view<const T> table, std::span<const std::size_t> tokens,
                      tensor3_view<T> out) {
  const std::size_t d = table.m(), n = tokens.size();
  T* o = out.data();  // feature c of row r sits at r + n·c (Ten_p keeps Mat_p's column-major layout)
  std::fill(o + n * d, o + out.size(), T(0));
  for (std::size_t r = 0; r < n; ++r) {
    const T* src = table.data() + tokens[r] * d;
    for (std::size_t c = 0; c < d; ++c) o[r + n * c] = src[c];
  }
}

/// @brief dE(:, v) += the rows of Mat_p(dX) whose token is v.
template <class T>
void embedding_scatter_add(const system&, std::span<const std::size_t> tokens, tensor3_view<const T> d_out,
                           tensor3_view<T> d_table) {
  const std::size_t d = d_table.m(), n = tokens.size();
  const T* gi = d_out.data();
  for (std::size_t r = 0; r < n; ++r) {
    T* dst = d_table.data() + tokens[r] * d;
    for (std::size_t c = 0; c < d; ++c) dst[c] += gi[r + n * c];
  }
}

/// @brief Softmax cross-entropy of B×C×1 logits: the gradient (÷ counted), the argmax, and Σ −log softmax.
template <class T>
double softmax_cross_entropy(const system&, tensor3_view<const T> logits, std::span<const std::size_t> labels,
                             std::size_t counted, tensor3_view<T> d_logits, std::span<std::size_t> predicted) {
  const auto z = logits.slice(0);
  auto g = d_logits.slice(0);
  double total = 0;
  for (std::size_t b = 0; b < labels.size(); ++b) {
    const auto row = Eigen::Index(b);
    Eigen::Index arg = 0;
    const T mx = z.row(row).maxCoeff(&arg);  // the shift that keeps exp from overflowing
    predicted[b] = std::size_t(arg);
    if (labels[b] == kernels::ignored_label) {
      g.row(row).setZero();
      continue;
    }
    const auto e = (z.row(row).array() - mx).exp();
    const T sum = e.sum();
    total += double(std::log(sum) + mx - z(row, Eigen::Index(labels[b])));
    g.row(row) = e / (sum * T(counted));
    g(row, Eigen::Index(labels[b])) -= T(1) / T(counted);
  }
  return total;
}

}  // namespace tprod::backend::cpu
