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
/// The logits are column-major (row b's C values lie B apart), so every pass runs down the columns, B rows at a
/// time, in contiguous memory that Eigen vectorizes, exp included: walking row by row took 62 % of a GPT-2 training
/// step with 8000 classes (strided, scalar expf, every exp computed twice).
template <class T>
double softmax_cross_entropy(const system&, tensor3_view<const T> logits, std::span<const std::size_t> labels,
                             std::size_t counted, tensor3_view<T> d_logits, std::span<std::size_t> predicted) {
  const auto z = logits.slice(0);
  auto g = d_logits.slice(0);
  const Eigen::Index rows = z.rows(), classes = z.cols();
  using column = Eigen::Array<T, Eigen::Dynamic, 1>;
  column best = z.col(0).array();  // the row maxima, the shift that keeps exp from overflowing, and their columns
  std::fill(predicted.begin(), predicted.end(), std::size_t(0));
  for (Eigen::Index c = 1; c < classes; ++c)
    for (Eigen::Index b = 0; b < rows; ++b)
      if (z(b, c) > best(b)) {
        best(b) = z(b, c);
        predicted[std::size_t(b)] = std::size_t(c);
      }
  g.array() = (z.array().colwise() - best).exp();
  const column sums = g.array().rowwise().sum();
  column scale(rows);
  double total = 0;
  for (Eigen::Index b = 0; b < rows; ++b) {
    const std::size_t label = labels[std::size_t(b)];
    scale(b) = label == kernels::ignored_label ? T(0) : T(1) / (sums(b) * T(counted));
    if (label != kernels::ignored_label)
      total += double(std::log(sums(b)) + best(b) - z(b, Eigen::Index(label)));
  }
  g.array().colwise() *= scale;
  for (Eigen::Index b = 0; b < rows; ++b) {
    const std::size_t label = labels[std::size_t(b)];
    if (label == kernels::ignored_label)
      g.row(b).setZero();  // exactly zero, whatever the row's logits were
    else
      g(b, Eigen::Index(label)) -= T(1) / T(counted);
  }
  return total;
}

}  // namespace tprod::backend::cpu
