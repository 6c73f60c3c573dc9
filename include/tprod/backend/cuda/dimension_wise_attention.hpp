// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file dimension_wise_attention.hpp
/// @brief The CUDA backend's dimension-wise attention tasks (contract: backend/kernels/dimension_wise_attention.hpp),
/// the mirror of backend/cpu/dimension_wise_attention.hpp. The block's valid rows differ from sequence to sequence,
/// which a batched GEMM cannot express, so Q and K are first copied with their padded rows set to 0 (and, where the
/// scale belongs, times 1/√n): a product over all T rows of those copies is then the product over the n valid ones,
/// and the zero rows of K/√n make the padded rows of dQ = (K_n/√n)·G zero as well. Every product is one cuBLAS
/// batched GEMM over the blocks (attention.hpp's gemm_over_blocks), the softmax and its backward the token-wise
/// attention's column kernels with scale 1 (the scale is already in the copies):
///   Aᵀ = softmax((K_n/√n)ᵀ·Q_n),   O = V·Aᵀ,   dV = dO·A,   G = softmax′(Vᵀ·dO),   dQ = (K_n/√n)·G,
///   dK = (Q_n/√n)·Gᵀ
/// which is the contract's G/√n in every product.
#include "tprod/backend/cuda/attention.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/backend/kernels/dimension_wise_attention.hpp"

namespace tprod::backend::cuda {

namespace detail {
/// The d_h×d_h blocks of Aᵀ (or G), block f at data + f·d_h².
template <class E>
raw::block_grid<E> square_blocks(const attention_blocks& d, E* data) {
  const std::size_t block = d.dh * d.dh;
  return {data, d.heads * d.batch * block, d.batch * block, block};
}
/// The head columns of h with each sequence's rows past its valid count set to 0 (times 1/√n when scaled), as a
/// dense (B·T)×(h·d_h)×p tensor and its layout.
template <class T>
struct valid_rows_copy {
  device_buffer<T> data;
  head_layout<const T> layout;
  valid_rows_copy(const system& sys, const attention_blocks& d, const head_layout<const T>& h,
                  const attention_masking& mask, bool scaled)
      : data(d.batch * d.tk * d.heads * d.dh * d.p, sys.stream()),
        layout{data.data(), d.batch * d.tk, d.batch * d.tk * d.heads * d.dh, 0} {
    raw::valid_rows(h.data, h.ld, h.slice_stride, h.col0, data.data(), d.tk, d.batch, d.heads * d.dh, d.p,
                    mask.key_lengths.empty() ? nullptr : mask.key_lengths.data(), scaled, sys.stream());
  }
};
}  // namespace detail

/// @brief Aᵀ_f = column softmax(K_nᵀ·Q_n / √n), O_f = V_f·Aᵀ_f.
template <class T>
void dimension_wise_forward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                                   head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                                   dview<T> probs, head_layout<T> out) {
  const detail::valid_rows_copy<T> keys(sys, d, k, mask, true), queries(sys, d, q, mask, false);
  const auto at = detail::square_blocks(d, probs.data());
  detail::gemm_over_blocks<T>(sys, d, true, false, d.dh, d.dh, d.tk, detail::head_blocks(d, keys.layout, d.tk),
                              keys.layout.ld, detail::head_blocks(d, queries.layout, d.tq), queries.layout.ld, at,
                              d.dh);
  raw::attention_softmax(probs.data(), d.dh, d.dh, d.blocks(), d.batch, T(1), false, nullptr, sys.stream());
  detail::gemm_over_blocks<T>(sys, d, false, false, d.tq, d.dh, d.dh, detail::head_blocks(d, v, d.tk), v.ld,
                              detail::square_blocks(d, static_cast<const T*>(probs.data())), d.dh,
                              detail::head_blocks(d, out, d.tq), out.ld);
}

/// @brief dV_f = dO_f·A_f; G = softmax backward of V_fᵀ·dO_f; dQ_n = K_n·G, dK_n = Q_n·Gᵀ, padded rows zero.
template <class T>
void dimension_wise_backward_blocks(const system& sys, const attention_blocks& d, head_layout<const T> q,
                                    head_layout<const T> k, head_layout<const T> v, const attention_masking& mask,
                                    dview<const T> probs, head_layout<const T> d_out, head_layout<T> dq,
                                    head_layout<T> dk, head_layout<T> dv) {
  const auto at = detail::square_blocks(d, probs.data());
  const auto dob = detail::head_blocks(d, d_out, d.tq);
  detail::gemm_over_blocks<T>(sys, d, false, true, d.tk, d.dh, d.dh, dob, d_out.ld, at, d.dh,
                              detail::head_blocks(d, dv, d.tk), dv.ld);
  device_buffer<T> g(d.dh * d.dh * d.blocks(), sys.stream());
  detail::gemm_over_blocks<T>(sys, d, true, false, d.dh, d.dh, d.tq, detail::head_blocks(d, v, d.tk), v.ld, dob,
                              d_out.ld, detail::square_blocks(d, g.data()), d.dh);
  raw::attention_softmax_backward(probs.data(), g.data(), d.dh, d.dh, d.blocks(), T(1), sys.stream());
  const auto gb = detail::square_blocks(d, static_cast<const T*>(g.data()));
  const detail::valid_rows_copy<T> keys(sys, d, k, mask, true), queries(sys, d, q, mask, true);
  detail::gemm_over_blocks<T>(sys, d, false, false, d.tq, d.dh, d.dh, detail::head_blocks(d, keys.layout, d.tk),
                              keys.layout.ld, gb, d.dh, detail::head_blocks(d, dq, d.tq), dq.ld);
  detail::gemm_over_blocks<T>(sys, d, false, true, d.tk, d.dh, d.dh, detail::head_blocks(d, queries.layout, d.tq),
                              queries.layout.ld, gb, d.dh, detail::head_blocks(d, dk, d.tk), dk.ld);
}

}  // namespace tprod::backend::cuda
