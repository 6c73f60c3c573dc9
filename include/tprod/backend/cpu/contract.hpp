// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file contract.hpp
/// @brief The CPU backend checked against the kernel contract (backend/kernels/all.hpp) for the four scalars under
/// every transform policy, and against the nn tasks for the two real ones.
#include <complex>

#include "tprod/backend/cpu/activation.hpp"
#include "tprod/backend/cpu/additive_attention.hpp"
#include "tprod/backend/cpu/attention.hpp"
#include "tprod/backend/cpu/dimension_wise_attention.hpp"
#include "tprod/backend/cpu/elementwise.hpp"
#include "tprod/backend/cpu/embedding.hpp"
#include "tprod/backend/cpu/facewise.hpp"
#include "tprod/backend/cpu/layer_norm.hpp"
#include "tprod/backend/cpu/mode_product.hpp"
#include "tprod/backend/cpu/optimizer.hpp"
#include "tprod/backend/cpu/sequence.hpp"
#include "tprod/backend/cpu/slice_factorization.hpp"
#include "tprod/backend/cpu/slice_linear.hpp"
#include "tprod/backend/cpu/spectral_attention.hpp"
#include "tprod/backend/cpu/transform.hpp"
#include "tprod/backend/kernels/all.hpp"

static_assert(tprod::backend::kernels::backend_for<tprod::backend::cpu::system, float, tprod::host_space>);
static_assert(tprod::backend::kernels::backend_for<tprod::backend::cpu::system, double, tprod::host_space>);
static_assert(tprod::backend::kernels::backend_for<tprod::backend::cpu::system, std::complex<float>, tprod::host_space>);
static_assert(tprod::backend::kernels::backend_for<tprod::backend::cpu::system, std::complex<double>, tprod::host_space>);
static_assert(
    tprod::backend::kernels::nn_backend_for<tprod::backend::cpu::system, float, tprod::host_space>);
static_assert(
    tprod::backend::kernels::nn_backend_for<tprod::backend::cpu::system, double, tprod::host_space>);
