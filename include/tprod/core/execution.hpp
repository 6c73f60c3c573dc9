// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file execution.hpp
/// @brief tprod::execution, the host's execution settings (transform path and threads), set_num_threads and
/// execution_scope. They belong to the CPU backend and live in backend/cpu/execution.hpp; this header keeps the
/// name every caller includes.
#include "tprod/backend/cpu/execution.hpp"
