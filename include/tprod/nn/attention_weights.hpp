// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file attention_weights.hpp
/// @brief A standard multi-head attention layer's projection matrices as tprod::attention_weights (the form
/// decomp/multihead_tucker.hpp decomposes), and back: take W^Q, W^K, W^V, W^O out of a trained layer, compress or
/// denoise them, put the result back.
///
/// Only the standard layer has such matrices: p = 1 under the identity transform (attention.hpp). There
///   w_qkv = [W^Q | W^K | W^V] ∈ ℝ^{d×3d×1}, head j of each block in columns j·d_h … (j+1)·d_h − 1,
///   w_o   = W^O ∈ ℝ^{d×d×1}, rows = the concatenated heads' features,
/// which is exactly the head layout of tensorize_heads (head j of W^Q is W^Q's j-th block of d_h columns, head j of
/// W^O its j-th block of d_h rows). An L-product layer (p > 1 or another transform) keeps its weights in the
/// transform domain, where the slices are not heads of one attention: it is refused at compile time (another
/// transform) or with a shape_error (identity with p > 1). The biases are not part of the conversion. A layer on the
/// device gives its matrices to the host (copies: they are d×d, small next to what the model computes) and takes
/// them back the same way.
#include <concepts>
#include <string>

#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace tprod::nn {

namespace detail {

template <class L>
constexpr bool is_identity_transform = std::same_as<L, identity_transform>;

template <class T, class L, class S>
void expect_standard_attention(const attention_params<T, L, S>& a, const char* who) {
  static_assert(is_identity_transform<L>,
                "nn attention weights: only a standard attention layer (identity transform, p = 1) has plain "
                "W^Q, W^K, W^V, W^O matrices; an L-product layer keeps its weights in the transform domain");
  TPROD_EXPECTS(a.slices() == 1 && a.w_qkv.m() == a.width() && a.w_qkv.n() == 3 * a.width() && a.w_qkv.p() == 1,
                std::string(who) + ": needs a standard attention layer (p = 1) with W_QKV of shape d x 3d x 1; got "
                                   "W_QKV " + a.w_qkv.shape() + " and W_O " + a.w_o.shape());
}

}  // namespace detail

/// @brief W^Q, W^K, W^V and W^O from a standard layer's stored tensors W_QKV (d×3d×1) and W_O (d×d×1), as a
/// checkpoint holds them ("encoder.<i>.attn.w_qkv", "encoder.<i>.attn.w_o").
/// @throws shape_error naming both shapes unless they are d×3d×1 and d×d×1 for one d ≥ 1.
template <std::floating_point T>
tprod::attention_weights<T> attention_weights_of(const tensor3<T>& w_qkv, const tensor3<T>& w_o) {
  const std::size_t d = w_o.m();
  TPROD_EXPECTS(d > 0 && w_o.n() == d && w_o.p() == 1 && w_qkv.m() == d && w_qkv.n() == 3 * d && w_qkv.p() == 1,
                "nn::attention_weights_of: a standard attention layer has W_QKV of shape d x 3d x 1 and W_O of shape "
                "d x d x 1; got W_QKV " + w_qkv.shape() + " and W_O " + w_o.shape());
  const auto e = Eigen::Index(d);
  const auto qkv = w_qkv.slice(0);
  return {qkv.leftCols(e), qkv.middleCols(e, e), qkv.rightCols(e), w_o.slice(0)};
}

/// @brief W^Q, W^K, W^V (d×d each) and W^O (d×d) of a standard attention layer, copied out to the host.
/// @throws shape_error unless the layer has p = 1.
template <std::floating_point T, class L, memory_space S>
tprod::attention_weights<T> attention_weights_of(const attention_params<T, L, S>& a) {
  detail::expect_standard_attention(a, "nn::attention_weights_of");
  if constexpr (std::same_as<S, host_space>)
    return attention_weights_of(a.w_qkv.data(), a.w_o.data());
  else
    return attention_weights_of(tprod::detail::in_space<host_space>(a.w_qkv.data()),
                                tprod::detail::in_space<host_space>(a.w_o.data()));
}

/// @brief Overwrites W_QKV (d×3d×1) and W_O (d×d×1) with `w`.
/// @throws shape_error unless the tensors have those shapes and all four matrices are d×d; nothing is changed
///         when it throws.
template <std::floating_point T>
void set_attention_weights(tensor3<T>& w_qkv, tensor3<T>& w_o, const tprod::attention_weights<T>& w) {
  (void)attention_weights_of(w_qkv, w_o);  // the shape check
  const auto d = Eigen::Index(w_o.m());
  const auto square = [d](const dense_matrix<T>& m) { return m.rows() == d && m.cols() == d; };
  TPROD_EXPECTS(square(w.query) && square(w.key) && square(w.value) && square(w.output),
                "nn::set_attention_weights: the layer has width d = " + std::to_string(d) +
                    " and needs four d x d matrices; got W^Q " + tprod::shape_string(w.query) + ", W^K " +
                    tprod::shape_string(w.key) + ", W^V " + tprod::shape_string(w.value) + ", W^O " +
                    tprod::shape_string(w.output));
  auto qkv = w_qkv.slice(0);
  qkv.leftCols(d) = w.query;
  qkv.middleCols(d, d) = w.key;
  qkv.rightCols(d) = w.value;
  w_o.slice(0) = w.output;
}

/// @brief Overwrites the layer's W^Q, W^K, W^V and W^O with `w` (biases and head count unchanged).
/// @throws shape_error unless the layer has p = 1 and all four matrices are d×d for the layer's width d; the
///         layer is unchanged when it throws.
template <std::floating_point T, class L, memory_space S>
void set_attention_weights(attention_params<T, L, S>& a, const tprod::attention_weights<T>& w) {
  detail::expect_standard_attention(a, "nn::set_attention_weights");
  if constexpr (std::same_as<S, host_space>) {
    set_attention_weights(a.w_qkv.data(), a.w_o.data(), w);
  } else {  // through host copies, written back when the new weights fit
    tensor3<T> w_qkv = tprod::detail::in_space<host_space>(a.w_qkv.data());
    tensor3<T> w_o = tprod::detail::in_space<host_space>(a.w_o.data());
    set_attention_weights(w_qkv, w_o, w);
    a.w_qkv.data() = tprod::detail::in_space<S>(std::move(w_qkv));
    a.w_o.data() = tprod::detail::in_space<S>(std::move(w_o));
  }
}

}  // namespace tprod::nn
