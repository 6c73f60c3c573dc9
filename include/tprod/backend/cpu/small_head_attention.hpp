// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file small_head_attention.hpp
/// @brief Attention blocks with narrow heads (d_h ∈ {1, 2, 4, 8}) and few keys (T_k up to four packets, 64 floats or
/// 32 doubles), forward and backward, fused per block in registers: the CPU's counterpart of FlashAttention's
/// tiling for the heads of the L-Transformers (TCP-ViT: 16 heads of width 4 over 50 tokens).
///
/// Through Eigen, each such block is six tiny GEMMs with an inner dimension of d_h or T, each packing its
/// operands. Here the block runs as passes over its query columns with d_h × (key packets) operands or
/// accumulators in registers (d_h · packets ≤ 16) and the query column's key packets beside them:
///   forward   s = K·q_t (d_h packet FMAs per key packet), p = masked softmax(scale·s) in the same packets,
///             P(:, t) = p stored, O(t, :) = pᵀ·V (d_h horizontal sums), in one pass;
///   backward  1. dp = V·dO(t, :)ᵀ, dS(:, t) = scale·p ⊙ (dp − pᵀdp) into a per-thread buffer;
///             2. dV += p·dO(t, :);  3. dK += dS(:, t)·Q(t, :);  4. dQ(t, :) = dS(:, t)ᵀ·K.
/// K and V are read through zero-padded copies (a block's last packet never reads another block's rows or past the
/// tensor) and results are stored for the first T_k keys only; keys beyond a query's valid count get probability 0,
/// as in masked_softmax.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "tprod/backend/kernels/attention_blocks.hpp"

namespace tprod::backend::cpu::small_heads {

using kernels::attention_blocks;
using kernels::attention_masking;

template <class T>
using packet = typename Eigen::internal::packet_traits<T>::type;
template <class T>
inline constexpr std::size_t width = std::size_t(Eigen::internal::unpacket_traits<packet<T>>::size);
inline constexpr std::size_t max_key_packets = 4;

/// @brief Whether the fused kernels take blocks of this shape (else the caller uses the GEMM path): heads 1, 2, 4
/// or 8 wide, and d_h times the key packets at most 16 (half the vector registers of AVX-512, all of AVX2's).
template <class T>
bool applies(const attention_blocks& d) {
  const bool narrow = d.dh == 1 || d.dh == 2 || d.dh == 4 || d.dh == 8;
  const std::size_t key_packets = (d.tk + width<T> - 1) / width<T>;
  return width<T> > 1 && narrow && d.tk >= 1 && d.tq >= 1 && key_packets <= max_key_packets &&
         d.dh * key_packets <= 16;
}

/// @brief One block of Q, K, V, O or a gradient: column c (of d_h) at data + c·ld, T_q or T_k rows.
template <class E>
struct column_block {
  E* data;
  std::size_t ld;
  E& operator()(std::size_t row, std::size_t c) const { return data[c * ld + row]; }
};

namespace detail {
using namespace Eigen::internal;

/// NKP packets of keys × DH columns of a T_k-row block, zero beyond T_k (a padded copy: the block's last packet
/// would otherwise read the next block's rows, or past the tensor).
template <class T, std::size_t DH, std::size_t NKP>
struct key_packets {
  packet<T> c[DH][NKP];
  key_packets(column_block<const T> x, std::size_t tk) {
    constexpr std::size_t W = width<T>;
    alignas(64) T padded[NKP * W];
    for (std::size_t col = 0; col < DH; ++col) {
      std::fill(padded + tk, padded + NKP * W, T(0));
      if (tk > 0) std::copy(&x(0, col), &x(0, col) + tk, padded);
      for (std::size_t kp = 0; kp < NKP; ++kp) c[col][kp] = pload<packet<T>>(padded + kp * W);
    }
  }
};

/// Lanes of key packet kp below n (keys kp·W + lane < n).
template <class T>
packet<T> lanes_below(std::size_t kp, std::size_t n) {
  using P = packet<T>;
  return pcmp_lt(plset<P>(T(kp * width<T>)), pset1<P>(T(n)));
}

/// Stores the first n keys of NKP packets at `to` (whole packets while they fit, the rest through a copy).
template <class T, std::size_t NKP>
void store_keys(T* to, const packet<T> (&x)[NKP], std::size_t n) {
  constexpr std::size_t W = width<T>;
  std::size_t kp = 0;
  for (; kp < NKP && (kp + 1) * W <= n; ++kp) pstoreu(to + kp * W, x[kp]);
  if (kp < NKP && kp * W < n) {
    alignas(64) T last[W];
    pstore(last, x[kp]);
    std::copy(last, last + (n - kp * W), to + kp * W);
  }
}

/// Loads the first n keys of a column into NKP packets, zero beyond n.
template <class T, std::size_t NKP>
void load_keys(packet<T> (&x)[NKP], const T* from, std::size_t n) {
  constexpr std::size_t W = width<T>;
  alignas(64) T padded[NKP * W];
  std::copy(from, from + n, padded);
  std::fill(padded + n, padded + NKP * W, T(0));
  for (std::size_t kp = 0; kp < NKP; ++kp) x[kp] = pload<packet<T>>(padded + kp * W);
}

/// Σ_k x_k·y_k over NKP packets of keys.
template <class T, std::size_t NKP>
T key_dot(const packet<T> (&x)[NKP], const packet<T> (&y)[NKP]) {
  packet<T> acc = pmul(x[0], y[0]);
  for (std::size_t kp = 1; kp < NKP; ++kp) acc = pmadd(x[kp], y[kp], acc);
  return predux(acc);
}

/// x = Σ_c m_c·a(c) over a block's d_h columns m_c (keys down the packets), a(c) a scalar.
template <class T, std::size_t DH, std::size_t NKP, class A>
void combine_columns(packet<T> (&x)[NKP], const packet<T> (&m)[DH][NKP], A&& a) {
  for (std::size_t kp = 0; kp < NKP; ++kp) x[kp] = pset1<packet<T>>(T(0));
  for (std::size_t c = 0; c < DH; ++c) {
    const packet<T> ac = pset1<packet<T>>(a(c));
    for (std::size_t kp = 0; kp < NKP; ++kp) x[kp] = pmadd(m[c][kp], ac, x[kp]);
  }
}

/// Column t of a block's T_k×T_q probabilities as NKP packets: straight from memory, where lanes past T_k hold the
/// next columns' (finite) values, or through a padded copy where the packets would reach past the block.
template <class T, std::size_t NKP>
void load_column(packet<T> (&x)[NKP], const T* probs, std::size_t t, const attention_blocks& d) {
  if (t * d.tk + NKP * width<T> > d.tq * d.tk) return load_keys<T, NKP>(x, probs + t * d.tk, d.tk);
  for (std::size_t kp = 0; kp < NKP; ++kp) x[kp] = ploadu<packet<T>>(probs + t * d.tk + kp * width<T>);
}

template <class T, std::size_t DH, std::size_t NKP>
void forward_block(const attention_blocks& d, const attention_masking& mask, std::size_t b, column_block<const T> q,
                   column_block<const T> keys, column_block<const T> values, T* probs, column_block<T> out,
                   bool weight) {
  using P = packet<T>;
  const T scale = T(1) / std::sqrt(T(d.dh));
  // K and V together spill a few registers at d_h·NKP = 16, which measured faster than a second pass over P.
  const key_packets<T, DH, NKP> k(keys, d.tk), v(values, weight ? d.tk : 0);
  for (std::size_t t = 0; t < d.tq; ++t) {
    const std::size_t nv = mask.valid_keys(d, b, t);
    P p[NKP];
    if (nv == 0) {
      for (auto& e : p) e = pset1<P>(T(0));
    } else {
      P s[NKP];  // s = K·q_t, keys down the packets
      combine_columns<T, DH, NKP>(s, k.c, [&](std::size_t c) { return q(t, c); });
      P valid[NKP], top = pset1<P>(-std::numeric_limits<T>::infinity());
      for (std::size_t kp = 0; kp < NKP; ++kp) {
        valid[kp] = lanes_below<T>(kp, nv);
        top = pmax(top, pselect(valid[kp], s[kp], pset1<P>(-std::numeric_limits<T>::infinity())));
      }
      const P shift = pset1<P>(predux_max(top)), f = pset1<P>(scale);
      P sum = pset1<P>(T(0));
      for (std::size_t kp = 0; kp < NKP; ++kp) {
        p[kp] = pand(pexp(pmul(psub(s[kp], shift), f)), valid[kp]);
        sum = padd(sum, p[kp]);
      }
      const P inverse = pset1<P>(T(1) / predux(sum));
      for (auto& e : p) e = pmul(e, inverse);
    }
    store_keys<T, NKP>(probs + t * d.tk, p, d.tk);
    if (!weight) continue;
    for (std::size_t c = 0; c < DH; ++c) out(t, c) = key_dot<T, NKP>(p, v.c[c]);  // O(t, c) = Σ_k p_k·V(k, c)
  }
}

/// out(:, c) = Σ_t x_t·a(t, c) for the block's T_k keys, x_t the NKP key packets `x_of(x, t)` loads for query t:
/// d_h·NKP accumulators in registers, stored once.
template <class T, std::size_t DH, std::size_t NKP, class X>
void keys_times(column_block<T> out, const attention_blocks& d, X&& x_of, column_block<const T> a) {
  packet<T> acc[DH][NKP];
  for (auto& row : acc)
    for (auto& e : row) e = pset1<packet<T>>(T(0));
  for (std::size_t t = 0; t < d.tq; ++t) {
    packet<T> x[NKP];
    x_of(x, t);
    for (std::size_t c = 0; c < DH; ++c) {
      const packet<T> ac = pset1<packet<T>>(a(t, c));
      for (std::size_t kp = 0; kp < NKP; ++kp) acc[c][kp] = pmadd(x[kp], ac, acc[c][kp]);
    }
  }
  for (std::size_t c = 0; c < DH; ++c) store_keys<T, NKP>(&out(0, c), acc[c], d.tk);
}

template <class T, std::size_t DH, std::size_t NKP>
void backward_block(const attention_blocks& d, column_block<const T> q, column_block<const T> keys,
                    column_block<const T> values, const T* probs, column_block<const T> d_out, column_block<T> dq,
                    column_block<T> dk, column_block<T> dv, T* ds) {
  using P = packet<T>;
  constexpr std::size_t W = width<T>;
  const P f = pset1<P>(T(1) / std::sqrt(T(d.dh)));
  const auto ds_column = [&](std::size_t t) { return ds + t * NKP * W; };
  // Four passes over the queries, each with one set of d_h·NKP operands or accumulators in registers (two sets
  // would not fit). Lanes past T_k of P's columns may hold the next columns' probabilities (finite), which the zero
  // lanes of V and K cancel and no store keeps.
  {  // dS(:, t) = scale·p ⊙ (dp − pᵀdp), dp = V·dO(t, :)ᵀ
    const key_packets<T, DH, NKP> v(values, d.tk);
    for (std::size_t t = 0; t < d.tq; ++t) {
      P p[NKP], dp[NKP];
      load_column<T, NKP>(p, probs, t, d);
      combine_columns<T, DH, NKP>(dp, v.c, [&](std::size_t c) { return d_out(t, c); });
      const P centre = pset1<P>(key_dot<T, NKP>(p, dp));
      for (std::size_t kp = 0; kp < NKP; ++kp)
        pstoreu(ds_column(t) + kp * W, pmul(pmul(f, p[kp]), psub(dp[kp], centre)));
    }
  }
  const auto ds_packets = [&](P (&x)[NKP], std::size_t t) {
    for (std::size_t kp = 0; kp < NKP; ++kp) x[kp] = ploadu<P>(ds_column(t) + kp * W);
  };
  // dV = P·dO and dK = dS·Q
  keys_times<T, DH, NKP>(dv, d, [&](P (&x)[NKP], std::size_t t) { load_column<T, NKP>(x, probs, t, d); }, d_out);
  keys_times<T, DH, NKP>(dk, d, ds_packets, q);
  // dQ = dSᵀ·K
  const key_packets<T, DH, NKP> k(keys, d.tk);
  for (std::size_t t = 0; t < d.tq; ++t) {
    P s[NKP];
    ds_packets(s, t);
    for (std::size_t c = 0; c < DH; ++c) dq(t, c) = key_dot<T, NKP>(s, k.c[c]);
  }
}

/// Calls f.template operator()<DH, NKP>() for the block shape d (applies<T>(d) holds).
template <class T, class F>
void dispatch(const attention_blocks& d, F&& f) {
  const std::size_t nkp = (d.tk + width<T> - 1) / width<T>;
  const auto by_keys = [&]<std::size_t DH>() {  // only the shapes applies() admits: DH·NKP ≤ 16
    switch (nkp) {
      case 1: return f.template operator()<DH, 1>();
      case 2: return f.template operator()<DH, 2>();
      case 3: if constexpr (DH <= 4) return f.template operator()<DH, 3>();
      [[fallthrough]];
      default: if constexpr (DH <= 4) return f.template operator()<DH, 4>();
    }
  };
  switch (d.dh) {
    case 1: return by_keys.template operator()<1>();
    case 2: return by_keys.template operator()<2>();
    case 4: return by_keys.template operator()<4>();
    default: return by_keys.template operator()<8>();
  }
}
}  // namespace detail

/// @brief The elements of per-thread scratch backward() needs: dS of one block, T_q columns of the padded keys.
template <class T>
std::size_t backward_scratch(const attention_blocks& d) {
  return d.tq * max_key_packets * width<T>;
}

/// @brief One block's forward step: P = masked softmax(scale·K·Qᵀ) stored T_k×T_q at `probs`, and O = Pᵀ·V when
/// `weight` (else `values` and `out` are not touched).
template <class T>
void forward(const attention_blocks& d, const attention_masking& mask, std::size_t b, column_block<const T> q,
             column_block<const T> k, column_block<const T> v, T* probs, column_block<T> out, bool weight) {
  detail::dispatch<T>(d, [&]<std::size_t DH, std::size_t NKP>() {
    detail::forward_block<T, DH, NKP>(d, mask, b, q, k, v, probs, out, weight);
  });
}

/// @brief One block's backward step from P: dV = P·dO, dS = scale·P ⊙ (dP − 1·colsum(P ⊙ dP)) with dP = V·dOᵀ,
/// dQ = dSᵀ·K, dK = dS·Q. `scratch`: backward_scratch(d) elements.
template <class T>
void backward(const attention_blocks& d, column_block<const T> q, column_block<const T> k, column_block<const T> v,
              const T* probs, column_block<const T> d_out, column_block<T> dq, column_block<T> dk,
              column_block<T> dv, T* scratch) {
  detail::dispatch<T>(d, [&]<std::size_t DH, std::size_t NKP>() {
    detail::backward_block<T, DH, NKP>(d, q, k, v, probs, d_out, dq, dk, dv, scratch);
  });
}

}  // namespace tprod::backend::cpu::small_heads
