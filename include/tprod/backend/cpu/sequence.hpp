// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file sequence.hpp
/// @brief The CPU backend's tasks on batches of sequences (contract: backend/kernels/sequence.hpp): row blocks of
/// every slice as Eigen blocks, and dropout's mask from std::mt19937 seeded with (seed, pass).
#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <span>

#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/kernels/sequence.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

using kernels::sequence_rows;

/// @brief out's rows `to` of every sequence (+)= in's rows `from`.
template <class T>
void copy_sequence_rows(const system&, tensor3_view<const T> in, sequence_rows from, tensor3_view<T> out,
                        sequence_rows to, std::size_t batch, bool accumulate) {
  const auto rows = Eigen::Index(from.count);
  for (std::size_t k = 0; k < in.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b) {
      const auto src = in.slice(k).middleRows(Eigen::Index(b * from.stride + from.offset), rows);
      auto dst = out.slice(k).middleRows(Eigen::Index(b * to.stride + to.offset), rows);
      if (accumulate)
        dst += src;
      else
        dst = src;
    }
}

/// @brief out = Σ_b in's rows `from` of sequence b.
template <class T>
void sum_sequence_rows(const system&, tensor3_view<const T> in, sequence_rows from, std::size_t batch,
                       tensor3_view<T> out) {
  const auto rows = Eigen::Index(from.count);
  for (std::size_t k = 0; k < in.p(); ++k) {
    auto dst = out.slice(k);
    dst.setZero();
    for (std::size_t b = 0; b < batch; ++b)
      dst += in.slice(k).middleRows(Eigen::Index(b * from.stride + from.offset), rows);
  }
}

/// @brief out(b, :, k) = the mean of the first n_b rows of sequence b.
template <class T>
void mean_pool(const system&, tensor3_view<const T> x, std::span<const std::size_t> lengths, tensor3_view<T> out) {
  const std::size_t batch = out.m(), len = x.m() / batch;
  for (std::size_t k = 0; k < x.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t n = lengths.empty() ? len : lengths[b];
      out.slice(k).row(Eigen::Index(b)) =
          x.slice(k).middleRows(Eigen::Index(b * len), Eigen::Index(n)).colwise().sum() / T(n);
    }
}

/// @brief d_in's first n_b rows of sequence b = d_out(b)/n_b, the padding rows 0.
template <class T>
void mean_pool_backward(const system&, tensor3_view<const T> d_out, std::span<const std::size_t> lengths,
                        tensor3_view<T> d_in) {
  const std::size_t batch = d_out.m(), len = d_in.m() / batch;
  for (std::size_t k = 0; k < d_out.p(); ++k)
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t n = lengths.empty() ? len : lengths[b];
      auto seq = d_in.slice(k).middleRows(Eigen::Index(b * len), Eigen::Index(len));
      seq.topRows(Eigen::Index(n)).rowwise() = d_out.slice(k).row(Eigen::Index(b)) / T(n);
      seq.bottomRows(Eigen::Index(len - n)).setZero();
    }
}

/// @brief mask from std::mt19937 seeded with the four 32-bit halves of (seed, pass); out = x ⊙ mask.
template <class T>
void dropout_forward(const system&, std::uint64_t seed, std::uint64_t pass, double rate, tensor3_view<const T> x,
                     tensor3_view<T> mask, tensor3_view<T> out) {
  std::seed_seq seq{std::uint32_t(seed), std::uint32_t(seed >> 32), std::uint32_t(pass), std::uint32_t(pass >> 32)};
  std::mt19937 rng(seq);
  // Kept when a uniform 32-bit draw is at least r·2³² (one draw per element, no floating point).
  const auto threshold = std::uint32_t(std::min(rate * 4294967296.0, 4294967295.0));
  const T scale = T(1 / (1 - rate));
  for (std::size_t i = 0; i < mask.size(); ++i) {
    mask.data()[i] = rng() >= threshold ? scale : T(0);
    out.data()[i] = x.data()[i] * mask.data()[i];
  }
}

}  // namespace tprod::backend::cpu
