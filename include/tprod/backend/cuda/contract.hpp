// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file contract.hpp
/// @brief The CUDA backend checked against the kernel contract (backend/kernels/all.hpp) for the four scalars under
/// every transform policy, and against the nn tasks for the two real ones.
#include <complex>

#include "tprod/backend/cuda/activation.hpp"
#include "tprod/backend/cuda/additive_attention.hpp"
#include "tprod/backend/cuda/attention.hpp"
#include "tprod/backend/cuda/dimension_wise_attention.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/cuda/embedding.hpp"
#include "tprod/backend/cuda/facewise.hpp"
#include "tprod/backend/cuda/layer_norm.hpp"
#include "tprod/backend/cuda/mode_product.hpp"
#include "tprod/backend/cuda/optimizer.hpp"
#include "tprod/backend/cuda/sequence.hpp"
#include "tprod/backend/cuda/slice_factorization.hpp"
#include "tprod/backend/cuda/slice_linear.hpp"
#include "tprod/backend/cuda/spectral_attention.hpp"
#include "tprod/backend/cuda/transform.hpp"
#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/kernels/all.hpp"

static_assert(tprod::backend::kernels::backend_for<tprod::backend::cuda::system, float, tprod::device_space>);
static_assert(tprod::backend::kernels::backend_for<tprod::backend::cuda::system, double, tprod::device_space>);
static_assert(tprod::backend::kernels::backend_for<tprod::backend::cuda::system, std::complex<float>, tprod::device_space>);
static_assert(tprod::backend::kernels::backend_for<tprod::backend::cuda::system, std::complex<double>, tprod::device_space>);
static_assert(
    tprod::backend::kernels::nn_backend_for<tprod::backend::cuda::system, float, tprod::device_space>);
static_assert(
    tprod::backend::kernels::nn_backend_for<tprod::backend::cuda::system, double, tprod::device_space>);
