// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file sequence.hpp
/// @brief The kernel contract's tasks on batches of sequences, for real scalars: a (B·T)×n×p tensor holds B
/// sequences of T rows (row b·T + t). The positional encodings, the class token, pooling and dropout are made of
/// them. A `sequence_rows` names the rows [offset, offset + count) of every sequence, at row b·stride + offset
/// (stride 0: one block that every sequence shares, as a positional table or the class token). For a backend
/// system `sys` of space S, views `in` and `out` of equal n and p, and the host list `lengths` (empty: all T):
///   copy_sequence_rows(sys, in, from, out, to, B, accumulate)
///                                       out(b·to.stride + to.offset + t, :, :) (+)= in(b·from.stride + from.offset
///                                       + t, :, :) for b < B, t < from.count (= to.count); `accumulate` adds
///   sum_sequence_rows(sys, in, from, B, out)
///                                       out(t, :, :) = Σ_{b<B} in(b·from.stride + from.offset + t, :, :), summed
///                                       in increasing b (out has from.count rows)
///   mean_pool(sys, x, lengths, out)     out(b, :, k) = (1/n_b) Σ_{t<n_b} x(b·T + t, :, k), T = x.m()/out.m(),
///                                       n_b = lengths[b] (or T)
///   mean_pool_backward(sys, d_out, lengths, d_in)
///                                       d_in(b·T + t, :, k) = d_out(b, :, k)/n_b for t < n_b, else 0
///   dropout_forward(sys, seed, pass, rate, x, mask, out)
///                                       mask = 1/(1 − rate) where an unsigned 32-bit draw of the stream (seed,
///                                       pass) is at least rate·2³², else 0 (one draw per element), and
///                                       out = x ⊙ mask. The generator is the backend's: the host draws from
///                                       std::mt19937, the device from cuRAND's Philox, so the masks differ.
#include <cstddef>
#include <cstdint>
#include <span>

#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::kernels {

/// @brief Rows [offset, offset + count) of every sequence, sequence b starting at row b·stride.
struct sequence_rows {
  std::size_t stride = 0;
  std::size_t offset = 0;
  std::size_t count = 0;
};

template <class Sys, class T, class S>
concept sequence_tasks = requires(const Sys& sys, tensor3_view<const T, dextents3, S> c,
                                  tensor3_view<T, dextents3, S> x, sequence_rows rows, std::size_t batch,
                                  std::span<const std::size_t> lengths, std::uint64_t seed, double rate) {
  copy_sequence_rows(sys, c, rows, x, rows, batch, true);
  sum_sequence_rows(sys, c, rows, batch, x);
  mean_pool(sys, c, lengths, x);
  mean_pool_backward(sys, c, lengths, x);
  dropout_forward(sys, seed, seed, rate, c, x, x);
};

}  // namespace tprod::backend::kernels

// The host's implementation comes with the contract, since the default memory space always computes; the
// device's comes with tprod/cuda.hpp.
#include "tprod/backend/cpu/sequence.hpp"
