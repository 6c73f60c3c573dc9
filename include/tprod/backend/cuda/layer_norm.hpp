// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file layer_norm.hpp
/// @brief The CUDA backend's LayerNorm tasks (contract: backend/kernels/layer_norm.hpp), the mirror of
/// backend/cpu/layer_norm.hpp, over the kernels of src/cuda/layer_norm.cu.
#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"

namespace tprod::backend::cuda {

using kernels::layer_norm_kind;

template <class T>
void layer_norm_forward(const system& sys, layer_norm_kind kind, T eps, dview<const T> x, dview<const T> gamma,
                        dview<const T> beta, dview<T> out, dview<T> normalized, dview<T> inv_scale, dview<T> coupling) {
  raw::layer_norm_forward(kind, eps, x.data(), gamma.data(), beta.data(), out.data(), normalized.data(),
                          inv_scale.data(), coupling.size() != 0 ? coupling.data() : nullptr, x.m(), x.n(), x.p(),
                          sys.stream());
}

template <class T>
void layer_norm_backward(const system& sys, dview<const T> gamma, dview<const T> normalized, dview<const T> inv_scale,
                         dview<const T> coupling, dview<const T> d_out, dview<T> d_in, dview<T> d_gamma,
                         dview<T> d_beta) {
  raw::layer_norm_backward(gamma.data(), normalized.data(), inv_scale.data(),
                           coupling.size() != 0 ? coupling.data() : nullptr, d_out.data(), d_in.data(), d_gamma.data(),
                           d_beta.data(), normalized.m(), normalized.n(), normalized.p(), sys.stream());
}

}  // namespace tprod::backend::cuda
