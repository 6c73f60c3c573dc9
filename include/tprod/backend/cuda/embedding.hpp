// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file embedding.hpp
/// @brief The CUDA backend's token-embedding and loss tasks (contract: backend/kernels/embedding.hpp), the mirror of
/// backend/cpu/embedding.hpp, over the kernels of src/cuda/embedding.cu.
#include <span>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/kernels/embedding.hpp"

namespace tprod::backend::cuda {

template <class T>
void embedding_gather(const system& sys, dview<const T> table, std::span<const std::size_t> tokens, dview<T> out) {
  raw::embedding_gather(table.data(), table.m(), tokens.data(), tokens.size(), out.data(), out.n() * out.p(),
                        sys.stream());
}

template <class T>
void embedding_scatter_add(const system& sys, std::span<const std::size_t> tokens, dview<const T> d_out,
                           dview<T> d_table) {
  raw::embedding_scatter_add(tokens.data(), tokens.size(), d_out.data(), d_table.m(), d_table.data(), sys.stream());
}

template <class T>
double softmax_cross_entropy(const system& sys, dview<const T> logits, std::span<const std::size_t> labels,
                             std::size_t counted, dview<T> d_logits, std::span<std::size_t> predicted) {
  return raw::softmax_cross_entropy(logits.data(), logits.m(), logits.n(), labels.data(), counted, d_logits.data(),
                                    predicted.data(), sys.stream());
}

}  // namespace tprod::backend::cuda
