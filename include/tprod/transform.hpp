// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transform.hpp
/// @brief Umbrella of the transform area: the policy concept, dct, dft, matrix_transform, identity_transform,
/// and the transform-domain tensor type.
#include "tprod/transform/dct.hpp"
#include "tprod/transform/dft.hpp"
#include "tprod/transform/identity_transform.hpp"
#include "tprod/transform/matrix_transform.hpp"
#include "tprod/transform/transform_concepts.hpp"
#include "tprod/transform/transformed.hpp"
