// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file config.hpp
/// @brief Compile-time switches and the two checking macros.
///
/// - `TPROD_HAS_FFTW` (0/1): FFTW available for the DFT/DCT transforms (set by CMake's TPROD_USE_FFTW).
/// - `TPROD_HAS_CUDA` (0/1): the CUDA backend is compiled (reserved; set by TPROD_ENABLE_CUDA).
/// - `TPROD_ASSERT(cond)`: an internal invariant, checked unless NDEBUG.
/// - `TPROD_EXPECTS(cond, message)`: a user precondition; throws tprod::shape_error(message) when false.
///   `message` is only evaluated on failure, so it may build a string.

#ifndef TPROD_HAS_FFTW
#define TPROD_HAS_FFTW 0
#endif
#ifndef TPROD_HAS_CUDA
#define TPROD_HAS_CUDA 0
#endif

#include <cassert>

#define TPROD_ASSERT(cond) assert(cond)
#define TPROD_EXPECTS(cond, message)                                   \
  do {                                                                 \
    if (!(cond)) throw ::tprod::shape_error(message);                  \
  } while (false)
