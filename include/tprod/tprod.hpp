// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tprod.hpp
/// @brief The CPU umbrella: everything of tprod that runs on the host.
#include "tprod/version.hpp"
#include "tprod/core.hpp"
#include "tprod/transform.hpp"
#include "tprod/algebra.hpp"
