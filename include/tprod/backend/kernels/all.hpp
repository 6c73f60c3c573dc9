// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file all.hpp
/// @brief The whole kernel contract: every task, for a backend system Sys of memory space S and scalar T, the
/// transform tasks under every transform policy. Each backend checks itself against it with a static_assert per
/// scalar, so a task missing from one backend fails to compile there, not at a user's call.
#include <complex>

#include "tprod/backend/kernels/activation.hpp"
#include "tprod/backend/kernels/additive_attention.hpp"
#include "tprod/backend/kernels/attention.hpp"
#include "tprod/backend/kernels/dimension_wise_attention.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/embedding.hpp"
#include "tprod/backend/kernels/facewise.hpp"
#include "tprod/backend/kernels/layer_norm.hpp"
#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/backend/kernels/optimizer.hpp"
#include "tprod/backend/kernels/sequence.hpp"
#include "tprod/backend/kernels/slice_factorization.hpp"
#include "tprod/backend/kernels/slice_linear.hpp"
#include "tprod/backend/kernels/spectral_attention.hpp"
#include "tprod/backend/kernels/transform.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/dft.hpp"
#include "tprod/transform/identity_transform.hpp"
#include "tprod/transform/matrix_transform.hpp"

namespace tprod::backend::kernels {

/// @brief The transform tasks under every policy of transform/: the DFT (whose real tensors store a half
/// spectrum), the DCT, the identity, and a general Z, real and complex (a complex Z acts on complex tensors: the
/// algebra promotes real ones first).
template <class Sys, class T, class S>
concept transform_tasks_for_every_policy =
    transform_tasks<Sys, dft, T, S> && transform_tasks<Sys, dct, T, S> && transform_tasks<Sys, identity_transform, T, S> &&
    transform_tasks<Sys, matrix_transform<double>, T, S> &&
    transform_tasks<Sys, matrix_transform<std::complex<double>>, complex_t<T>, S>;

template <class Sys, class T, class S>
concept backend_for = elementwise_tasks<Sys, T, S> && facewise_task<Sys, T, S> && mode_product_task<Sys, T, S> &&
                      slice_factorization_tasks<Sys, T, S> && transform_tasks_for_every_policy<Sys, T, S>;

/// @brief The nn layers' tasks, for the real scalars they train in (float, double).
template <class Sys, class T, class S>
concept nn_backend_for = slice_linear_tasks<Sys, T, S> && activation_tasks<Sys, T, S> &&
                         layer_norm_tasks<Sys, T, S> && optimizer_tasks<Sys, T, S> && embedding_tasks<Sys, T, S> &&
                         attention_tasks<Sys, T, S> && dimension_wise_attention_tasks<Sys, T, S> &&
                         additive_attention_tasks<Sys, T, S> && spectral_attention_tasks<Sys, T, S> &&
                         sequence_tasks<Sys, T, S>;

}  // namespace tprod::backend::kernels
