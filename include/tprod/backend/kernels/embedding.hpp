// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file embedding.hpp
/// @brief The kernel contract's token-embedding and loss tasks, for real scalars. Token and label lists are host
/// memory (the batch's indices, which the caller has already checked). For a backend system `sys` of space S:
///   embedding_gather(sys, E, tokens, X)          X = Ten_p(E[tokens]): feature c of row r (X's element r + N·c)
///                                                is E(c, token_r, 0) for c < d, 0 for the padding c ≥ d
///                                                (E d×V×1, X N×d_s×p with d_s·p ≥ d, N = tokens.size())
///   embedding_scatter_add(sys, tokens, dX, dE)   dE(c, v, 0) += Σ_{r: token_r = v} dX's element r + N·c (c < d),
///                                                each column's rows added in increasing order (deterministic)
///   softmax_cross_entropy(sys, Z, labels, K, dZ, predicted)
///                                                for the B×C×1 logits Z: predicted[b] = argmax_j Z(b, j);
///                                                dZ(b, :) = (softmax(Z_b) − e_{y_b})/K, or 0 where y_b is
///                                                ignored_label; returns Σ_b −log softmax(Z_b)_{y_b} over the K
///                                                labelled rows, in double                         → double
#include <cstddef>
#include <span>

#include "tprod/backend/kernels/nn_kinds.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

template <class Sys, class T, class S>
concept embedding_tasks = requires(const Sys& sys, tensor3_view<const T, dextents3, S> c,
                                   tensor3_view<T, dextents3, S> x, std::span<const std::size_t> indices,
                                   std::span<std::size_t> predicted, std::size_t counted) {
  embedding_gather(sys, c, indices, x);
  embedding_scatter_add(sys, indices, c, x);
  { softmax_cross_entropy(sys, c, indices, counted, x, predicted) } -> std::same_as<double>;
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/embedding.hpp"
