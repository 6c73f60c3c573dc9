// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention.hpp
/// @brief The CPU backend's attention tasks (contract: backend/kernels/attention.hpp): one flat loop over the
/// p·h·B (slice, head, sequence) blocks on the threads, Eigen GEMMs on strided block maps. The spectral backward
/// pass fuses each block's steps, so that its dPᵀ (one per thread) stays in cache between the GEMM, the softmax
/// backward and the two GEMMs after.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/small_head_attention.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/backend/kernels/attention.hpp"

namespace tprod::backend::cpu {

using kernels::attention_blocks;
using kernels::attention_masking;
using kernels::head_layout;

namespace detail {
template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

/// Block (s, j, b) of Q, K, V or O as an Eigen map (rows × d_h, outer stride ld).
template <class E>
auto block_map(const head_layout<E>& h, std::size_t s, std::size_t j, std::size_t b, std::size_t rows, std::size_t dh) {
  using M = std::conditional_t<std::is_const_v<E>, const matrix<std::remove_const_t<E>>, matrix<E>>;
  return Eigen::Map<M, 0, Eigen::OuterStride<>>(h.block(s, j, b, rows, dh), Eigen::Index(rows), Eigen::Index(dh),
                                                Eigen::OuterStride<>(Eigen::Index(h.ld)));
}

/// Threads for loops over the blocks: the system's, unless the whole is too small to share.
inline std::size_t attention_threads(const system& sys, const attention_blocks& d) {
  return d.blocks() * d.tq * d.tk * d.dh < parallel_min_macs ? 1 : sys.threads();
}

/// The block index f = (s·h + j)·B + b split into its slice, head and sequence.
struct block_index {
  std::size_t s, j, b;
  block_index(const attention_blocks& d, std::size_t f)
      : s(f / (d.heads * d.batch)), j((f / d.batch) % d.heads), b(f % d.batch) {}
  /// This block of a tensor with `rows` rows per sequence, as the small-head kernels take it.
  template <class E>
  small_heads::column_block<E> of(const head_layout<E>& h, std::size_t rows, std::size_t dh) const {
    return {h.block(s, j, b, rows, dh), h.ld};
  }
};

/// Column kernels of the softmax, vectorised down a column with Eigen's packets. Columns are short (T_k = 50 in
/// TCP-ViT) and start unaligned, so Eigen's own reductions over them ran their maxima and sums as serial scalar
/// chains and sent up to half of each column through the scalar expf (together a fifth of a TCP-ViT training step);
/// here a column's last partial packet goes through a padded copy, so every element takes the packet path.
namespace softmax_columns {
template <class T>
using packet = typename Eigen::internal::packet_traits<T>::type;
template <class T>
inline constexpr std::size_t width = std::size_t(Eigen::internal::unpacket_traits<packet<T>>::size);

/// max_k c[k] over k < n (n ≥ 1).
template <class T>
T max_of(const T* c, std::size_t n) {
  using namespace Eigen::internal;
  constexpr std::size_t W = width<T>;
  T m = c[0];
  std::size_t k = 0;
  if (n >= W) {
    packet<T> mp = ploadu<packet<T>>(c);
    for (k = W; k + W <= n; k += W) mp = pmax(mp, ploadu<packet<T>>(c + k));
    m = predux_max(mp);
  }
  for (; k < n; ++k) m = std::max(m, c[k]);
  return m;
}

/// c[k] = exp(scale·(c[k] − shift)) for k < n, returning their sum. A last partial packet is computed as the
/// column's last whole packet (read before the loop overwrites it; the lanes it shares with the loop's last packet
/// are recomputed to the same values) and adds only its new lanes to the sum; a column shorter than a packet goes
/// through a copy padded with the shift.
template <class T>
T exp_shifted(T* c, std::size_t n, T shift, T scale) {
  using namespace Eigen::internal;
  using P = packet<T>;
  constexpr std::size_t W = width<T>;
  const P s = pset1<P>(shift), f = pset1<P>(scale);
  const auto exp_of = [&](const P& x) { return pexp(pmul(psub(x, s), f)); };
  if (n < W) {
    alignas(64) T padded[W];
    std::fill(padded, padded + W, shift);
    std::copy(c, c + n, padded);
    pstore(padded, exp_of(pload<P>(padded)));
    T total = 0;
    for (std::size_t k = 0; k < n; ++k) total += c[k] = padded[k];
    return total;
  }
  const P last = ploadu<P>(c + n - W);
  P sum = pset1<P>(T(0));
  std::size_t k = 0;
  for (; k + W <= n; k += W) {
    const P e = exp_of(ploadu<P>(c + k));
    pstoreu(c + k, e);
    sum = padd(sum, e);
  }
  if (k < n) {
    const P e = exp_of(last);
    pstoreu(c + n - W, e);
    const P new_lanes = pcmp_le(pset1<P>(T(W - (n - k))), plset<P>(T(0)));  // lanes W − (n − k) … W − 1
    sum = padd(sum, pand(e, new_lanes));
  }
  return predux(sum);
}

/// c[k] *= factor for k < n.
template <class T>
void scale_by(T* c, std::size_t n, T factor) {
  using namespace Eigen::internal;
  using P = packet<T>;
  constexpr std::size_t W = width<T>;
  const P f = pset1<P>(factor);
  std::size_t k = 0;
  for (; k + W <= n; k += W) pstoreu(c + k, pmul(ploadu<P>(c + k), f));
  for (; k < n; ++k) c[k] *= factor;
}

/// Σ_k a[k]·b[k] over k < n.
template <class T>
T dot(const T* a, const T* b, std::size_t n) {
  using namespace Eigen::internal;
  using P = packet<T>;
  constexpr std::size_t W = width<T>;
  P sum = pset1<P>(T(0));
  std::size_t k = 0;
  for (; k + W <= n; k += W) sum = pmadd(ploadu<P>(a + k), ploadu<P>(b + k), sum);
  T total = predux(sum);
  for (; k < n; ++k) total += a[k] * b[k];
  return total;
}

/// d[k] = scale·p[k]·(d[k] − c) for k < n.
template <class T>
void softmax_backward_column(const T* p, T* d, std::size_t n, T c, T scale) {
  using namespace Eigen::internal;
  using P = packet<T>;
  constexpr std::size_t W = width<T>;
  const P cp = pset1<P>(c), f = pset1<P>(scale);
  std::size_t k = 0;
  for (; k + W <= n; k += W)
    pstoreu(d + k, pmul(pmul(f, ploadu<P>(p + k)), psub(ploadu<P>(d + k), cp)));
  for (; k < n; ++k) d[k] = scale * p[k] * (d[k] - c);
}
}  // namespace softmax_columns

/// Column-wise masked softmax of the scores Sᵀ (in place), each column scaled after its maximum is subtracted:
/// column t keeps its first valid_keys entries, the rest are 0 (all of it when no key is valid).
template <class T>
void masked_softmax(Eigen::Map<matrix<T>> st, T scale, const attention_masking& mask, const attention_blocks& d,
                    std::size_t b) {
  namespace sc = softmax_columns;
  for (std::size_t t = 0; t < d.tq; ++t) {
    const std::size_t nv = mask.valid_keys(d, b, t);
    T* c = st.col(Eigen::Index(t)).data();
    std::fill(c + nv, c + d.tk, T(0));
    if (nv == 0) continue;
    sc::scale_by(c, nv, T(1) / sc::exp_shifted(c, nv, sc::max_of(c, nv), scale));
  }
}
}  // namespace detail

/// @brief dSᵀ = scale·P ⊙ (dPᵀ − 1·colsum(P ⊙ dPᵀ)), in place in dpt (masked entries have P = 0, so dS = 0 there).
template <class T>
void softmax_backward(const Eigen::Map<const detail::matrix<T>>& pt, Eigen::Map<detail::matrix<T>> dpt, T scale) {
  namespace sc = detail::softmax_columns;
  const auto n = std::size_t(pt.rows());
  for (Eigen::Index t = 0; t < pt.cols(); ++t) {
    const T* p = pt.col(t).data();
    T* d = dpt.col(t).data();
    sc::softmax_backward_column(p, d, n, sc::dot(p, d, n), scale);
  }
}

namespace detail {
/// attention_forward_blocks through Eigen's GEMMs, block by block (any head width and key count).
template <class T>
void attention_forward_gemms(const system& sys, const attention_blocks& d, head_layout<const T> q,
                             head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                             tensor3_view<T> probs, head_layout<T> out, bool weight) {
  const T scale = T(1) / std::sqrt(T(d.dh));
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    const detail::block_index i(d, f);
    auto st = probs.slice(f);
    st.noalias() =
        detail::block_map(k, i.s, i.j, i.b, d.tk, d.dh) * detail::block_map(q, i.s, i.j, i.b, d.tq, d.dh).transpose();
    detail::masked_softmax<T>(st, scale, mask, d, i.b);
    if (weight)
      detail::block_map(out, i.s, i.j, i.b, d.tq, d.dh).noalias() =
          st.transpose() * detail::block_map(v, i.s, i.j, i.b, d.tk, d.dh);
  });
}
}  // namespace detail

/// @brief P_f = masked softmax(scale·K_f·Q_fᵀ), and O_f = P_fᵀ·V_f when `weight`.
template <class T>
void attention_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                              head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                              tensor3_view<T> probs, head_layout<T> out, bool weight) {
  if (!small_heads::applies<T>(d))
    return detail::attention_forward_gemms<T>(sys, d, q, k, v, mask, probs, out, weight);
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {  // fused in registers
    const detail::block_index i(d, f);
    small_heads::forward<T>(d, mask, i.b, i.of(q, d.tq, d.dh), i.of(k, d.tk, d.dh), i.of(v, d.tk, d.dh),
                            probs.slice(f).data(), i.of(out, d.tq, d.dh), weight);
  });
}

/// @brief O_f = P_fᵀ·V_f.
template <class T>
void attention_weighting(const system& sys, const attention_blocks& d, tensor3_view<const T> probs,
                         head_layout<const T> v, head_layout<T> out) {
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    const detail::block_index i(d, f);
    detail::block_map(out, i.s, i.j, i.b, d.tq, d.dh).noalias() =
        probs.slice(f).transpose() * detail::block_map(v, i.s, i.j, i.b, d.tk, d.dh);
  });
}

namespace detail {
/// One block's dV = P·dO and dP = V·dOᵀ (dP into dpt).
template <class T>
void block_values_backward(const attention_blocks& d, const block_index& i, const Eigen::Map<const matrix<T>>& pt,
                           head_layout<const T> v, head_layout<const T> d_out, head_layout<T> dv,
                           Eigen::Map<matrix<T>> dpt) {
  const auto dob = block_map(d_out, i.s, i.j, i.b, d.tq, d.dh);
  block_map(dv, i.s, i.j, i.b, d.tk, d.dh).noalias() = pt * dob;
  dpt.noalias() = block_map(v, i.s, i.j, i.b, d.tk, d.dh) * dob.transpose();
}
/// One block's dS = softmax backward (in dP's memory), dQ = dSᵀ·K, dK = dS·Q.
template <class T>
void block_scores_backward(const attention_blocks& d, const block_index& i, const Eigen::Map<const matrix<T>>& pt,
                           Eigen::Map<matrix<T>> ds, head_layout<const T> q, head_layout<const T> k, head_layout<T> dq,
                           head_layout<T> dk) {
  softmax_backward<T>(pt, ds, T(1) / std::sqrt(T(d.dh)));
  block_map(dq, i.s, i.j, i.b, d.tq, d.dh).noalias() = ds.transpose() * block_map(k, i.s, i.j, i.b, d.tk, d.dh);
  block_map(dk, i.s, i.j, i.b, d.tk, d.dh).noalias() = ds * block_map(q, i.s, i.j, i.b, d.tq, d.dh);
}
}  // namespace detail

/// @brief dV_f = P_f·dO_f, dP_f = V_f·dO_fᵀ.
template <class T>
void attention_backward_values(const system& sys, const attention_blocks& d, tensor3_view<const T> probs,
                               head_layout<const T> v, head_layout<const T> d_out, head_layout<T> dv,
                               tensor3_view<T> dp) {
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    detail::block_values_backward<T>(d, detail::block_index(d, f), probs.slice(f), v, d_out, dv, dp.slice(f));
  });
}

/// @brief dS_f = softmax backward (in dP's memory), dQ_f = dS_fᵀ·K_f, dK_f = dS_f·Q_f.
template <class T>
void attention_backward_scores(const system& sys, const attention_blocks& d, tensor3_view<const T> probs,
                               tensor3_view<T> dp, head_layout<const T> q, head_layout<const T> k, head_layout<T> dq,
                               head_layout<T> dk) {
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {
    detail::block_scores_backward<T>(d, detail::block_index(d, f), probs.slice(f), dp.slice(f), q, k, dq, dk);
  });
}

namespace detail {
/// The slices of T_k×T_q scratch one thread of attention_backward_blocks uses: one, or what the small-head kernel's
/// dS takes (its columns padded to whole key packets), for either scalar.
inline std::size_t scratch_slices_per_thread(const attention_blocks& d) {
  const std::size_t slice = std::max<std::size_t>(1, d.tk * d.tq);
  const auto slices_for = [&](auto zero) {
    using T = decltype(zero);
    return small_heads::applies<T>(d) ? (small_heads::backward_scratch<T>(d) + slice - 1) / slice : 1;
  };
  return std::max(slices_for(0.0f), slices_for(0.0));
}
}  // namespace detail

/// @brief The slices of T_k×T_q scratch attention_backward_blocks needs: one per thread, or a few for the
/// small-head kernels.
inline std::size_t attention_scratch_blocks(const system& sys, const attention_blocks& d) {
  return std::max<std::size_t>(1, detail::attention_threads(sys, d)) * detail::scratch_slices_per_thread(d);
}

namespace detail {
/// attention_backward_blocks through Eigen's GEMMs, each thread's dPᵀ (slice thread_slot of `scratch`) in cache
/// through the block's four steps.
template <class T>
void attention_backward_gemms(const system& sys, const attention_blocks& d, head_layout<const T> q,
                              head_layout<const T> k, head_layout<const T> v, tensor3_view<const T> probs,
                              head_layout<const T> d_out, head_layout<T> dq, head_layout<T> dk, head_layout<T> dv,
                              tensor3_view<T> scratch) {
  parallel_for(d.blocks(), attention_threads(sys, d), [&](std::size_t f) {
    const block_index i(d, f);
    const auto dpt = scratch.slice(thread_slot(scratch.p()));
    block_values_backward<T>(d, i, probs.slice(f), v, d_out, dv, dpt);
    block_scores_backward<T>(d, i, probs.slice(f), dpt, q, k, dq, dk);
  });
}
}  // namespace detail

/// @brief attention_backward_values then attention_backward_scores, fused per block: in registers for narrow heads
/// (small_head_attention.hpp), else through Eigen's GEMMs with each thread's dPᵀ in cache.
template <class T>
void attention_backward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                               head_layout<const T> k, head_layout<const T> v, tensor3_view<const T> probs,
                               head_layout<const T> d_out, head_layout<T> dq, head_layout<T> dk, head_layout<T> dv,
                               tensor3_view<T> scratch) {
  if (!small_heads::applies<T>(d))
    return detail::attention_backward_gemms<T>(sys, d, q, k, v, probs, d_out, dq, dk, dv, scratch);
  const std::size_t per_thread = detail::scratch_slices_per_thread(d);
  parallel_for(d.blocks(), detail::attention_threads(sys, d), [&](std::size_t f) {  // fused in registers
    const detail::block_index i(d, f);
    T* ds = scratch.slice(thread_slot(scratch.p() / per_thread) * per_thread).data();
    small_heads::backward<T>(d, i.of(q, d.tq, d.dh), i.of(k, d.tk, d.dh), i.of(v, d.tk, d.dh), probs.slice(f).data(),
                             i.of(d_out, d.tq, d.dh), i.of(dq, d.tq, d.dh), i.of(dk, d.tk, d.dh),
                             i.of(dv, d.tk, d.dh), ds);
  });
}

}  // namespace tprod::backend::cpu
