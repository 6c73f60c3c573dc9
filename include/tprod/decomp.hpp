// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file decomp.hpp
/// @brief Umbrella of the decompositions area: order-N tensors (ndtensor, column-major xtensor containers),
///        unfoldings, mode products, Kronecker/Khatri–Rao products, Tucker (HOSVD, ST-HOSVD, HOOI, shared-factor
///        multi-head Tucker), rank-k matrix approximation (LASER), Tensor-Train, MPO/QTT, block-term and CP
///        decompositions, multi-linear attention.
#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/contraction.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/kron.hpp"
#include "tprod/decomp/low_rank.hpp"
#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/mpo.hpp"
#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/decomp/multilinear_attention.hpp"
#include "tprod/decomp/ndtensor.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"
#include "tprod/decomp/unfold.hpp"
#include "tprod/decomp/xtensor_interop.hpp"

#include "tprod/decomp/extern_templates.hpp"  // declares nothing unless TPROD_EXTERN_TEMPLATES (tprod::instances)
