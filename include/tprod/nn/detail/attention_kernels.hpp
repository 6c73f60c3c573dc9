// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention_kernels.hpp
/// @brief Scaled dot-product attention over all (slice, head, sequence) blocks of a batch at once, in the tensors'
/// memory space: the backend's attention tasks (backend/kernels/attention.hpp) over p·h·B small GEMM blocks,
/// never a loop over slices around whole-layer calls.
///
/// Layout. Q, K, V and the head outputs live inside (B·T)×w×p tensors: the block of slice k, head j and
/// sequence b is rows b·T…b·T+T−1, columns c0 + j·d_h … of slice k (a strided column-major map).
/// Scores are kept transposed, Sᵀ = K·Qᵀ (T_k×T_q), so that each query's softmax runs over one contiguous
/// column. The probabilities of block f = (k·h + j)·B + b are column-block f of a T_k×T_q×(p·h·B) tensor,
/// so that block f of every slice k lies in slice k of that tensor viewed as (T_k·T_q·h·B)×1×p — the shape on
/// which the t-Softmax variant applies L across slices in one call.
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "tprod/backend/kernels/attention.hpp"
#include "tprod/nn/attention_kinds.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/mac_counter.hpp"
#include "tprod/core/parallel.hpp"

namespace tprod::nn {

namespace detail {

struct attention_dims : backend::kernels::attention_blocks {
  /// Multiply-adds of one T_k×T_q×d_h product over every block (two in the forward pass, four in the backward).
  std::uint64_t block_product_macs() const { return std::uint64_t(blocks()) * tq * tk * dh; }
  /// Threads for host loops over the blocks: the default execution's, unless the whole is too small to share.
  std::size_t threads() const {
    const std::size_t work = blocks() * tq * tk * dh;
    return work < tprod::detail::parallel_min_macs ? 1 : default_execution().thread_count();
  }
};

/// Where the (slice, head, sequence) blocks of one of Q, K, V, O live.
template <class E>
struct head_blocks {
  E* data;
  Eigen::Index ld;            // rows of a slice (B·T)
  Eigen::Index slice_stride;  // elements per slice
  Eigen::Index col0;          // first column of head 0
  using map_t = Eigen::Map<
      std::conditional_t<std::is_const_v<E>, const matrix<std::remove_const_t<E>>, matrix<std::remove_const_t<E>>>, 0,
      Eigen::OuterStride<>>;
  map_t at(std::size_t k, std::size_t j, std::size_t b, std::size_t rows, std::size_t dh) const {
    return map_t(data + Eigen::Index(k) * slice_stride + (col0 + Eigen::Index(j * dh)) * ld + Eigen::Index(b * rows),
                 Eigen::Index(rows), Eigen::Index(dh), Eigen::OuterStride<>(ld));
  }
  /// The same blocks as the backends' tasks take them (the data may be device memory: at() is host-only).
  backend::kernels::head_layout<E> layout() const {
    return {data, std::size_t(ld), std::size_t(slice_stride), std::size_t(col0)};
  }
};

template <class E>
head_blocks<E> blocks_of(E* data, std::size_t rows, std::size_t cols, std::size_t col0) {
  return {data, Eigen::Index(rows), Eigen::Index(rows * cols), Eigen::Index(col0)};
}

template <class T>
void check_mask(const attention_mask& mask, const attention_dims& d, const char* who) {
  if (mask.key_lengths.empty()) return;
  TPROD_EXPECTS(mask.key_lengths.size() == d.batch, std::string(who) + ": " + std::to_string(mask.key_lengths.size()) +
                                                        " key lengths for a batch of " + std::to_string(d.batch));
  for (std::size_t b = 0; b < d.batch; ++b)
    TPROD_EXPECTS(mask.key_lengths[b] >= 1 && mask.key_lengths[b] <= d.tk,
                  std::string(who) + ": key length " + std::to_string(mask.key_lengths[b]) + " of sequence " +
                      std::to_string(b) + " is outside 1.." + std::to_string(d.tk));
}

template <class T>
Eigen::Map<matrix<T>> prob_block(tensor3<T>& probs, std::size_t f) {
  return probs.slice(f);
}
template <class T>
Eigen::Map<const matrix<T>> prob_block(const tensor3<T>& probs, std::size_t f) {
  return probs.slice(f);
}

/// (T_k·T_q·h·B)×1×p view of a probability tensor: the layout on which L acts across slices.
template <class E, memory_space S = host_space>
tensor3_view<E, dextents3, S> slice_view(E* data, const attention_dims& d) {
  return {data, d.tk * d.tq * d.heads * d.batch, 1, d.p};
}

/// The mask as the backends' tasks take it (a view of mask's lengths: mask must outlive it).
inline backend::kernels::attention_masking masking_of(const attention_mask& mask) {
  return {mask.causal, std::span<const std::size_t>(mask.key_lengths)};
}

/// Forward: probs (T_k×T_q×blocks) = masked softmax(scale·K·Qᵀ), out = Pᵀ·V per block; for the t_softmax
/// variant probs_hat = L(probs) across slices weights V instead.
template <class T, class S>
void attention_scores_forward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                              head_blocks<const T> v, const attention_mask& mask, attention_variant variant,
                              const transform_passes<T, S>& tm, tensor3<T, dextents3, S>& probs,
                              tensor3<T, dextents3, S>& probs_hat, head_blocks<T> out) {
  ensure_shape(probs, d.tk, d.tq, d.blocks());
  tally_macs(2 * d.block_product_macs());  // S = K·Qᵀ and O = Pᵀ·V
  const auto sys = tprod::detail::system_of<S>();
  const bool spectral = variant == attention_variant::spectral;
  attention_forward_blocks(sys, d, q.layout(), k.layout(), v.layout(), masking_of(mask), probs.dynamic_view(),
                           out.layout(), spectral);
  if (spectral) {
    probs_hat = tensor3<T, dextents3, S>();
    return;
  }
  ensure_shape_like(probs_hat, probs);
  tm.forward(slice_view<const T, S>(probs.data(), d), slice_view<T, S>(probs_hat.data(), d));
  attention_weighting(sys, d, std::as_const(probs_hat).dynamic_view(), v.layout(), out.layout());
}

/// Backward of attention_scores_forward: dQ, dK, dV (assigned) from dO. `dp` and `dp_hat` are workspace.
template <class T, class S>
void attention_scores_backward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                               head_blocks<const T> v, attention_variant variant, const transform_passes<T, S>& tm,
                               const tensor3<T, dextents3, S>& probs, const tensor3<T, dextents3, S>& probs_hat,
                               head_blocks<const T> d_out, head_blocks<T> dq, head_blocks<T> dk, head_blocks<T> dv,
                               tensor3<T, dextents3, S>& dp, tensor3<T, dextents3, S>& dp_hat) {
  tally_macs(4 * d.block_product_macs());  // dV, dP, dQ, dK
  const auto sys = tprod::detail::system_of<S>();
  if (variant == attention_variant::spectral) {
    ensure_shape(dp, d.tk, d.tq, attention_scratch_blocks(sys, d));
    attention_backward_blocks(sys, d, q.layout(), k.layout(), v.layout(), probs.dynamic_view(), d_out.layout(),
                              dq.layout(), dk.layout(), dv.layout(), dp.dynamic_view());
    return;
  }
  // t_softmax: dP̂ for every block, then dP = dP̂ ×₃ Zᵀ across slices, then the softmax backward.
  ensure_shape_like(dp_hat, probs);
  ensure_shape_like(dp, probs);
  attention_backward_values(sys, d, probs_hat.dynamic_view(), v.layout(), d_out.layout(), dv.layout(),
                            dp_hat.dynamic_view());
  tm.adjoint(slice_view<const T, S>(dp_hat.data(), d), slice_view<T, S>(dp.data(), d));
  attention_backward_scores(sys, d, probs.dynamic_view(), dp.dynamic_view(), q.layout(), k.layout(), dq.layout(),
                            dk.layout());
}

}  // namespace detail
}  // namespace tprod::nn
