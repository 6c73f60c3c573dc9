// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention_blocks.hpp
/// @brief The shapes the attention tasks share (backend/kernels/attention.hpp has the tasks and the layout): the
/// block structure of a call, where a head's blocks lie, and the masks. Include-free, so a backend's kernels can
/// take them without the contract, which brings the host's implementation along.
#include <cstddef>
#include <span>

namespace tprod::backend::kernels {

/// @brief The block structure of one attention call: p slices, h heads, B sequences of T_q queries and T_k keys,
/// heads of width d_h.
struct attention_blocks {
  std::size_t p, heads, batch, tq, tk, dh;
  std::size_t blocks() const { return p * heads * batch; }
};

/// @brief Where the (slice, head, sequence) blocks of one of Q, K, V, O lie: in a tensor with `ld` rows (B·T) per
/// slice and `slice_stride` elements per slice, head j's columns starting at col0 + j·d_h.
template <class E>
struct head_layout {
  E* data;
  std::size_t ld, slice_stride, col0;
  /// The first element of block (s, j, b) of a tensor whose sequences have `rows` rows.
  E* block(std::size_t s, std::size_t j, std::size_t b, std::size_t rows, std::size_t dh) const {
    return data + s * slice_stride + (col0 + j * dh) * ld + b * rows;
  }
};

/// @brief The masks of an attention call: causal, and the valid key count of each sequence (empty: all T_k).
struct attention_masking {
  bool causal = false;
  std::span<const std::size_t> key_lengths;
  std::size_t valid_keys(const attention_blocks& d, std::size_t b, std::size_t t) const {
    std::size_t n = d.tk;
    if (causal && t + 1 < n) n = t + 1;
    if (!key_lengths.empty() && key_lengths[b] < n) n = key_lengths[b];
    return n;
  }
};

}  // namespace tprod::backend::kernels
