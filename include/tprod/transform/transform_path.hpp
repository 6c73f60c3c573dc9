#pragma once
/// @file transform_path.hpp
/// @brief How the DFT and DCT are computed: one GEMM with the cached p×p matrix, or FFTW.
///
/// With slice-contiguous storage a transform along the tubes is the single GEMM Â = A·Zᵀ with a p×p matrix,
/// which beats FFTW's strided batch for small p; FFTW can only win once its O(p log p) beats the GEMM's O(p²).
/// The thresholds are where that happened on our measurements (bench_algebra, docs/performance.md): FFTW's
/// strided DFT ties the GEMM from p = 64, and its strided DCT-II (REDFT10 plus a scaling pass) was slower than
/// the GEMM at every p we measured (up to 256).
#include <cstddef>
#include <stdexcept>

#include "tprod/core/config.hpp"

namespace tprod {

enum class transform_path {
  automatic,  ///< FFTW from the transform's measured threshold on (when built with FFTW), the GEMM below
  gemm,       ///< always the GEMM with the cached matrix
  fftw        ///< always FFTW (throws std::invalid_argument if tprod was built without it)
};

/// @brief Smallest tube length at which `automatic` picks FFTW for the DFT (measured; docs/performance.md).
inline constexpr std::size_t fftw_min_tubes_dft = 64;
/// @brief Smallest tube length at which `automatic` picks FFTW for the DCT (above the measured range: the
/// GEMM was faster up to p = 256).
inline constexpr std::size_t fftw_min_tubes_dct = 1024;

namespace detail {
inline bool use_fftw(transform_path path, std::size_t p, std::size_t fftw_min_tubes) {
  if (path == transform_path::gemm) return false;
  if (!TPROD_HAS_FFTW) {
    if (path == transform_path::fftw)
      throw std::invalid_argument("transform_path::fftw was requested but tprod was built without FFTW");
    return false;
  }
  return path == transform_path::fftw || p >= fftw_min_tubes;
}
}  // namespace detail

}  // namespace tprod
