// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file core.hpp
/// @brief Umbrella of the core area: extents, tensor3 and its views, errors, memory spaces, the host's execution and
/// parallel loop, random tensors.
#include "tprod/core/config.hpp"
#include "tprod/core/error.hpp"
#include "tprod/core/execution.hpp"
#include "tprod/core/extents.hpp"
#include "tprod/core/mdspan.hpp"
#include "tprod/core/memory_space.hpp"
#include "tprod/core/parallel.hpp"
#include "tprod/core/random.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/core/tensor3_view.hpp"
