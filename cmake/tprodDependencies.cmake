# SPDX-License-Identifier: Apache-2.0
# Dependencies of the library target. All come from Debian packages (scripts/install-deps.sh);
# nothing is downloaded at configure or build time.
# Eigen 3.4 or 5.x: Eigen 5's version file accepts only requests of major version 5, and Eigen 3.4.0's file predates
# CMake's version ranges, so the two are looked up in turn (cmake/tprodFindEigen.cmake, shared with the package).
include(tprodFindEigen)
if(NOT Eigen3_FOUND)
  message(FATAL_ERROR "${TPROD_EIGEN_MESSAGE}")
endif()
find_package(xtensor REQUIRED)

include(tprodFindFFTW)
# Off by default: FFTW is GPL, and a binary linking it is bound by the GPL (tprod itself is Apache-2.0). Every
# transform has a GEMM path that gives the same results and is the faster one for tubes up to 64 long.
option(TPROD_USE_FFTW "Use FFTW for the DFT/DCT transforms (GPL: a binary linking it is GPL; a GEMM path exists for every transform)" OFF)
if(TPROD_USE_FFTW AND NOT TPROD_FFTW_FOUND)
  message(FATAL_ERROR "TPROD_USE_FFTW is ON but FFTW3 (fftw3 and fftw3f) was not found: install libfftw3-dev or set -DTPROD_USE_FFTW=OFF")
endif()
message(STATUS "tprod: FFTW backend ${TPROD_USE_FFTW}")

# Threads: OpenMP, the mechanism Eigen's own GEMM threading uses (core/parallel.hpp says why).
find_package(OpenMP COMPONENTS CXX)
option(TPROD_USE_OPENMP "Run tprod's kernels on several threads (OpenMP); off: everything on the calling thread" ${OpenMP_CXX_FOUND})
if(TPROD_USE_OPENMP AND NOT OpenMP_CXX_FOUND)
  message(FATAL_ERROR "TPROD_USE_OPENMP is ON but the compiler has no OpenMP: install its OpenMP runtime or set -DTPROD_USE_OPENMP=OFF")
endif()
message(STATUS "tprod: OpenMP threads ${TPROD_USE_OPENMP}")

# Optional: the data and checkpoint readers (tprod::io: safetensors needs nlohmann-json, IDX needs zlib).
# Found quietly, so that a consumer of the core library needs neither.
find_package(nlohmann_json 3 QUIET)
find_package(ZLIB QUIET)
if(nlohmann_json_FOUND AND ZLIB_FOUND)
  set(TPROD_IO_FOUND TRUE)
else()
  set(TPROD_IO_FOUND FALSE)
endif()
message(STATUS "tprod: tprod::io (safetensors, IDX) ${TPROD_IO_FOUND}")
# Optional: the tokenizers (tprod::text: GPT-2's byte-level BPE needs ICU's Unicode properties, and tprod::io).
find_package(ICU QUIET COMPONENTS uc)
if(TPROD_IO_FOUND AND ICU_FOUND)
  set(TPROD_TEXT_FOUND TRUE)
else()
  set(TPROD_TEXT_FOUND FALSE)
endif()
message(STATUS "tprod: tprod::text (tokenizers) ${TPROD_TEXT_FOUND}")
