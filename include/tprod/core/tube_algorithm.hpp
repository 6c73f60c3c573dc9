// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tube_algorithm.hpp
/// @brief The structure of a transform's Z that a backend can exploit instead of a GEMM with it. Declared in
/// core so that the backends (which apply transforms) and transform/ (which describes them) both stand on it.
namespace tprod {

/// @brief The fast algorithm Z is an instance of.
enum class tube_algorithm {
  none,      ///< a general matrix: GEMM only
  identity,  ///< Z = I: a copy
  dct2,      ///< the orthonormal DCT-II (FFTW's REDFT10 plus a scaling pass)
  dft        ///< the DFT (FFTW's r2c/c2r/c2c, cuFFT's R2C/C2R/C2C)
};

}  // namespace tprod
