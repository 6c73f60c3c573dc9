#pragma once
/// @file attention_kernels.hpp
/// @brief Scaled dot-product attention over all (slice, head, sequence) blocks of a batch at once: one flat
/// loop over p·h·B small GEMM blocks, never a loop over slices around whole-layer calls.
///
/// Layout. Q, K, V and the head outputs live inside (B·T)×w×p tensors: the block of slice k, head j and
/// sequence b is rows b·T…b·T+T−1, columns c0 + j·d_h … of slice k (a strided column-major map).
/// Scores are kept transposed, Sᵀ = K·Qᵀ (T_k×T_q), so that each query's softmax runs over one contiguous
/// column. The probabilities of block f = (k·h + j)·B + b are column-block f of a T_k×T_q×(p·h·B) tensor,
/// so that block f of every slice k lies in slice k of that tensor viewed as (T_k·T_q·h·B)×1×p — the shape on
/// which the t-Softmax variant applies L across slices in one call.
#include <algorithm>
#include <vector>

#include "tprod/backend/cpu/facewise.hpp"
#include "tprod/nn/detail/common.hpp"
#include "tprod/nn/mac_counter.hpp"

namespace tprod::nn {

/// @brief Which attention the transform-domain scores feed.
enum class attention_variant {
  /// Paper 000, Alg. 2 (L-MHA): slice k's probabilities softmax(Q̂_k K̂_kᵀ/√d_h) weight V̂_k directly.
  spectral,
  /// Paper 001, Def. 5.2–5.3 read literally: 𝒜 = t-Softmax(𝒮) is the original-domain tensor whose slice k is
  /// softmax(Ŝ_k), and t-Attention = 𝒜 *_L 𝒱, so slice k uses L(𝒜)_k = Σ_l Z_kl·softmax(Ŝ_l) to weight V̂_k.
  t_softmax,
  /// TensorCoder's dimension-wise attention (paper 003): a d_h×d_h softmax(Q̂ᵀK̂/√n) over the features of each
  /// head instead of a T×T one over the tokens (dimension_wise_kernels.hpp); self-attention, no causal mask.
  dimension_wise
};

/// @brief Masks of an attention call: causal (query t sees keys u ≤ t) and key padding (sequence b has
/// key_lengths[b] valid keys, the rest are padding). Both keep a prefix of the keys of every query.
struct attention_mask {
  bool causal = false;
  std::vector<std::size_t> key_lengths;  ///< empty: every key is valid; else one length per sequence
};

namespace detail {

struct attention_dims {
  std::size_t p, heads, batch, tq, tk, dh;
  std::size_t blocks() const { return p * heads * batch; }
  /// Multiply-adds of one T_k×T_q×d_h product over every block (two in the forward pass, four in the backward).
  std::uint64_t block_product_macs() const { return std::uint64_t(blocks()) * tq * tk * dh; }
  /// Threads for loops over the blocks: the default execution's, unless the whole is too small to share.
  std::size_t threads() const {
    const std::size_t work = blocks() * tq * tk * dh;
    return work < backend::cpu::parallel_min_macs ? 1 : default_execution().thread_count();
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
};

template <class E>
head_blocks<E> blocks_of(E* data, std::size_t rows, std::size_t cols, std::size_t col0) {
  return {data, Eigen::Index(rows), Eigen::Index(rows * cols), Eigen::Index(col0)};
}

/// Number of valid keys of query t in sequence b (a prefix of the keys).
inline std::size_t valid_keys(const attention_mask& mask, const attention_dims& d, std::size_t b, std::size_t t) {
  std::size_t n = d.tk;
  if (mask.causal) n = std::min(n, t + 1);
  if (!mask.key_lengths.empty()) n = std::min(n, mask.key_lengths[b]);
  return n;
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

/// Column-wise masked softmax of the scaled scores Sᵀ (in place): column t keeps its first valid_keys entries.
template <class T>
void masked_softmax(Eigen::Map<matrix<T>> st, T scale, const attention_mask& mask, const attention_dims& d,
                    std::size_t b) {
  for (std::size_t t = 0; t < d.tq; ++t) {
    const auto nv = Eigen::Index(valid_keys(mask, d, b, t));
    auto col = st.col(Eigen::Index(t));
    auto head = col.head(nv).array();
    const T mx = head.maxCoeff();
    head = ((head - mx) * scale).exp();
    head *= T(1) / head.sum();
    col.tail(Eigen::Index(d.tk) - nv).setZero();
  }
}

/// dSᵀ = scale·P ⊙ (dPᵀ − 1·colsum(P ⊙ dPᵀ)), in place in dp (masked entries have P = 0, so dS = 0 there).
template <class T>
void softmax_backward(const Eigen::Map<const matrix<T>>& pt, Eigen::Map<matrix<T>> dpt, T scale) {
  const Eigen::Array<T, 1, Eigen::Dynamic> c = (pt.array() * dpt.array()).colwise().sum();
  dpt.array() = scale * pt.array() * (dpt.array().rowwise() - c);
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
template <class E>
tensor3_view<E> slice_view(E* data, const attention_dims& d) {
  return tensor3_view<E>(data, d.tk * d.tq * d.heads * d.batch, 1, d.p);
}

/// Forward: probs (T_k×T_q×blocks) = masked softmax(scale·K·Qᵀ), out = Pᵀ·V per block; for the t_softmax
/// variant probs_hat = L(probs) across slices weights V instead.
template <class T>
void attention_scores_forward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                              head_blocks<const T> v, const attention_mask& mask, attention_variant variant,
                              const tube_maps<T>& tm, tensor3<T>& probs, tensor3<T>& probs_hat, head_blocks<T> out) {
  const T scale = T(1) / std::sqrt(T(d.dh));
  ensure_shape(probs, d.tk, d.tq, d.blocks());
  tally_macs(2 * d.block_product_macs());  // S = K·Qᵀ and O = Pᵀ·V
  const std::size_t hb = d.heads * d.batch, threads = d.threads();
  backend::cpu::parallel_for(d.blocks(), threads, [&](std::size_t f) {
    const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
    auto st = prob_block(probs, f);
    st.noalias() = k.at(s, j, b, d.tk, d.dh) * q.at(s, j, b, d.tq, d.dh).transpose();
    masked_softmax(st, scale, mask, d, b);
    if (variant == attention_variant::spectral)
      out.at(s, j, b, d.tq, d.dh).noalias() = st.transpose() * v.at(s, j, b, d.tk, d.dh);
  });
  if (variant == attention_variant::spectral) {
    probs_hat = tensor3<T>();
    return;
  }
  ensure_shape_like(probs_hat, probs);
  tm.forward(slice_view<const T>(probs.data(), d), slice_view<T>(probs_hat.data(), d));
  backend::cpu::parallel_for(d.blocks(), threads, [&](std::size_t f) {
    const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
    out.at(s, j, b, d.tq, d.dh).noalias() =
        prob_block(std::as_const(probs_hat), f).transpose() * v.at(s, j, b, d.tk, d.dh);
  });
}

/// Backward of attention_scores_forward: dQ, dK, dV (assigned) from dO. `dp` and `dp_hat` are workspace.
template <class T>
void attention_scores_backward(const attention_dims& d, head_blocks<const T> q, head_blocks<const T> k,
                               head_blocks<const T> v, attention_variant variant, const tube_maps<T>& tm,
                               const tensor3<T>& probs, const tensor3<T>& probs_hat, head_blocks<const T> d_out,
                               head_blocks<T> dq, head_blocks<T> dk, head_blocks<T> dv, tensor3<T>& dp,
                               tensor3<T>& dp_hat) {
  const T scale = T(1) / std::sqrt(T(d.dh));
  const std::size_t hb = d.heads * d.batch, threads = d.threads();
  tally_macs(4 * d.block_product_macs());  // dV, dP, dQ, dK
  auto grads_qk = [&](std::size_t f, Eigen::Map<matrix<T>> ds) {
    const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
    dq.at(s, j, b, d.tq, d.dh).noalias() = ds.transpose() * k.at(s, j, b, d.tk, d.dh);
    dk.at(s, j, b, d.tk, d.dh).noalias() = ds * q.at(s, j, b, d.tq, d.dh);
  };
  if (variant == attention_variant::spectral) {
    // One block at a time per thread: dPᵀ (slice `thread_slot` of dp) stays in cache between its GEMM, the
    // softmax backward and the two GEMMs after.
    ensure_shape(dp, d.tk, d.tq, std::max<std::size_t>(1, threads));
    backend::cpu::parallel_for(d.blocks(), threads, [&](std::size_t f) {
      auto dpt = dp.slice(backend::cpu::thread_slot(dp.p()));
      const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
      const auto pt = prob_block(probs, f);
      const auto dob = d_out.at(s, j, b, d.tq, d.dh);
      const auto vb = v.at(s, j, b, d.tk, d.dh);
      dv.at(s, j, b, d.tk, d.dh).noalias() = pt * dob;
      dpt.noalias() = vb * dob.transpose();
      softmax_backward<T>(pt, dpt, scale);
      grads_qk(f, dpt);
    });
    return;
  }
  // t_softmax: dP̂ for every block, then dP = dP̂ ×₃ Zᵀ across slices, then the softmax backward.
  ensure_shape_like(dp_hat, probs);
  ensure_shape_like(dp, probs);
  backend::cpu::parallel_for(d.blocks(), threads, [&](std::size_t f) {
    const std::size_t s = f / hb, j = (f / d.batch) % d.heads, b = f % d.batch;
    const auto dob = d_out.at(s, j, b, d.tq, d.dh);
    dv.at(s, j, b, d.tk, d.dh).noalias() = prob_block(probs_hat, f) * dob;
    prob_block(dp_hat, f).noalias() = v.at(s, j, b, d.tk, d.dh) * dob.transpose();
  });
  tm.adjoint(slice_view<const T>(dp_hat.data(), d), slice_view<T>(dp.data(), d));
  backend::cpu::parallel_for(d.blocks(), threads, [&](std::size_t f) {
    softmax_backward<T>(prob_block(probs, f), prob_block(dp, f), scale);
    grads_qk(f, prob_block(dp, f));
  });
}

}  // namespace detail
}  // namespace tprod::nn
