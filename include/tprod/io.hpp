// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file io.hpp
/// @brief Umbrella of the io area: NumPy .npy files (any order) and their tensor3 conversions, atomic writes.
#include "tprod/io/atomic_file.hpp"
#include "tprod/io/npy.hpp"
#include "tprod/io/npy_tensor3.hpp"
