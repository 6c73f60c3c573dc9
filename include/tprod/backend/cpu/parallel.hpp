// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file parallel.hpp
/// @brief The CPU backend's threading: the host's parallel loop (core/parallel.hpp), under the backend's names.
#include "tprod/core/parallel.hpp"

namespace tprod::backend::cpu {
using tprod::detail::in_parallel_region;
using tprod::detail::parallel_for;
using tprod::detail::parallel_min_elements;
using tprod::detail::parallel_min_macs;
using tprod::detail::parallel_ranges;
using tprod::detail::thread_index;
using tprod::detail::thread_slot;
using tprod::detail::threads_for;
}  // namespace tprod::backend::cpu
