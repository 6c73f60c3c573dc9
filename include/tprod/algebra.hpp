// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file algebra.hpp
/// @brief Umbrella of the algebra area: facewise and L-products, transpose, identity, inverse, norms,
/// structure predicates, mode-n products, and the slice factorizations (L-SVD and its truncations, L-QR, ranks,
/// spectral and nuclear norms), and the gradients with respect to a matrix transform's Z.
#include "tprod/algebra/facewise.hpp"
#include "tprod/algebra/identity.hpp"
#include "tprod/algebra/inverse.hpp"
#include "tprod/algebra/mode_product.hpp"
#include "tprod/algebra/norms.hpp"
#include "tprod/algebra/predicates.hpp"
#include "tprod/algebra/product.hpp"
#include "tprod/algebra/qr.hpp"
#include "tprod/algebra/rank.hpp"
#include "tprod/algebra/spectral_norms.hpp"
#include "tprod/algebra/svd.hpp"
#include "tprod/algebra/svd_truncation.hpp"
#include "tprod/algebra/transpose.hpp"
#include "tprod/algebra/z_gradient.hpp"

#include "tprod/backend/cpu/contract.hpp"  // the CPU backend checked against the kernel contract
#include "tprod/algebra/extern_templates.hpp"  // declares nothing unless TPROD_EXTERN_TEMPLATES (tprod::instances)
