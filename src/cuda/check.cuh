// The CUDA backend's error checks and library handles, shared by the src/cuda/*.cu files (not installed).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>

#include <string>
#include <type_traits>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/error.hpp"

namespace tprod::backend::cuda::detail {

[[noreturn]] void fail(const char* call, const std::string& status, const char* file, int line);
std::string status_text(cudaError_t s);
std::string status_text(cublasStatus_t s);
std::string status_text(curandStatus_t s);
std::string status_text(cusolverStatus_t s);

template <class Status>
bool ok(Status s) {
  if constexpr (std::is_same_v<Status, cudaError_t>) return s == cudaSuccess;
  else if constexpr (std::is_same_v<Status, cublasStatus_t>) return s == CUBLAS_STATUS_SUCCESS;
  else if constexpr (std::is_same_v<Status, cusolverStatus_t>) return s == CUSOLVER_STATUS_SUCCESS;
  else return s == CURAND_STATUS_SUCCESS;
}

/// @brief The cuBLAS handle of the calling thread and current device, bound to `stream`.
cublasHandle_t blas(cudaStream_t stream);

/// @brief The cuSOLVER dense handle of the calling thread and current device, bound to `stream`.
cusolverDnHandle_t solver(cudaStream_t stream);

/// @brief A stream-ordered device array of n P, freed on its stream when the scope ends (also on an exception).
template <class P>
struct scratch {
  P* ptr;
  cudaStream_t stream;
  scratch(std::size_t n, cudaStream_t s);
  ~scratch();
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
};

/// @brief Blocks and threads for a grid-stride loop over n elements.
inline unsigned blocks_for(std::size_t n, unsigned threads = 256) {
  const std::size_t b = (n + threads - 1) / threads;
  return unsigned(b < 65535 * 16 ? (b == 0 ? 1 : b) : 65535 * 16);
}

template <class P>
scratch<P>::scratch(std::size_t n, cudaStream_t s) : ptr(static_cast<P*>(raw::allocate(n * sizeof(P), s))), stream(s) {}
template <class P>
scratch<P>::~scratch() {
  raw::deallocate(ptr, stream);
}

}  // namespace tprod::backend::cuda::detail

/// Checks a CUDA, cuBLAS, cuSOLVER or cuRAND call: on failure throws tprod::cuda_error naming the call, its status, file and line.
#define TPROD_CUDA_CHECK(call)                                                                       \
  do {                                                                                               \
    const auto tprod_status_ = (call);                                                               \
    if (!::tprod::backend::cuda::detail::ok(tprod_status_))                                          \
      ::tprod::backend::cuda::detail::fail(#call, ::tprod::backend::cuda::detail::status_text(tprod_status_), \
                                           __FILE__, __LINE__);                                      \
  } while (0)
