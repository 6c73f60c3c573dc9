# Dependencies of the library target. All come from Debian packages (scripts/install-deps.sh);
# nothing is downloaded at configure or build time.
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(xtensor REQUIRED)

include(tprodFindFFTW)
option(TPROD_USE_FFTW "Use FFTW for the DFT/DCT transforms (GPL; a GEMM path exists for every transform)" ${TPROD_FFTW_FOUND})
if(TPROD_USE_FFTW AND NOT TPROD_FFTW_FOUND)
  message(FATAL_ERROR "TPROD_USE_FFTW is ON but FFTW3 (fftw3 and fftw3f) was not found: install libfftw3-dev or set -DTPROD_USE_FFTW=OFF")
endif()
message(STATUS "tprod: FFTW backend ${TPROD_USE_FFTW}")

# Threads: OpenMP, the mechanism Eigen's own GEMM threading uses (backend/cpu/parallel.hpp says why).
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
