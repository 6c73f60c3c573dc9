// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file cuda.hpp
/// @brief tprod's CUDA backend: device tensors (`tprod::device_tensor3<T>`, `transformed<T, L, E, device_space>`)
/// and the algebra on them under the same function names as on the host: transform / inverse_transform,
/// facewise, product, transpose, identity, inverse, frobenius_norm, inner and the tensor arithmetic; explicit
/// copies between spaces (to_device, to_host, copy); `tprod::cuda::execution{stream, tf32}`;
/// `tprod::cuda::device_count()`; seeded device random tensors. Compiles with the host compiler; link
/// `tprod::cuda` (CMake option TPROD_ENABLE_CUDA). See docs/cuda.md.
#include "tprod/tprod.hpp"
#include "tprod/backend/cuda/activation.hpp"
#include "tprod/backend/cuda/additive_attention.hpp"
#include "tprod/backend/cuda/attention.hpp"
#include "tprod/backend/cuda/contract.hpp"
#include "tprod/backend/cuda/copy.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/backend/cuda/dimension_wise_attention.hpp"
#include "tprod/backend/cuda/elementwise.hpp"
#include "tprod/backend/cuda/embedding.hpp"
#include "tprod/backend/cuda/error.hpp"
#include "tprod/backend/cuda/facewise.hpp"
#include "tprod/backend/cuda/layer_norm.hpp"
#include "tprod/backend/cuda/mode_product.hpp"
#include "tprod/backend/cuda/optimizer.hpp"
#include "tprod/backend/cuda/random.hpp"
#include "tprod/backend/cuda/sequence.hpp"
#include "tprod/backend/cuda/slice_factorization.hpp"
#include "tprod/backend/cuda/slice_linear.hpp"
#include "tprod/backend/cuda/spectral_attention.hpp"
#include "tprod/backend/cuda/system.hpp"
#include "tprod/backend/cuda/transform.hpp"
