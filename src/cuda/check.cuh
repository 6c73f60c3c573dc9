// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's error checks and library handles, shared by the src/cuda/*.cu files (not installed).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusolverDn.h>

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/error.hpp"

namespace tprod::backend::cuda::detail {

[[noreturn]] void fail(const char* call, const std::string& status, const char* file, int line);
std::string status_text(cudaError_t s);
std::string status_text(cublasStatus_t s);
std::string status_text(curandStatus_t s);
std::string status_text(cusolverStatus_t s);

/// @brief v as the int that a CUDA library's 32-bit interface takes; a cuda_error naming the call and the quantity
/// where it does not fit, instead of a cast that wraps to a wrong or negative size (TPROD_CUDA_INT).
inline int int_for(const char* call, const char* what, std::size_t v, const char* file, int line) {
  if (v > std::size_t(std::numeric_limits<int>::max()))
    fail(call, std::string(what) + " = " + std::to_string(v) + " exceeds the 32-bit int this interface takes", file,
         line);
  return int(v);
}
#define TPROD_CUDA_INT(call, v) ::tprod::backend::cuda::detail::int_for(call, #v, v, __FILE__, __LINE__)

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

// Grid-stride loop over n elements (launched with blocks_for(n) blocks).
#define TPROD_GRID_LOOP(i, n) \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); i += std::size_t(gridDim.x) * blockDim.x)

/// @brief Blocks and threads for a grid-stride loop over n elements.
inline unsigned blocks_for(std::size_t n, unsigned threads = 256) {
  const std::size_t b = (n + threads - 1) / threads;
  return unsigned(b < 65535 * 16 ? (b == 0 ? 1 : b) : 65535 * 16);
}

/// @brief Sums v over the block's reduce_threads threads into *out (thread 0 writes), in a fixed order.
constexpr unsigned reduce_threads = 256;
template <class Acc, class F>
__device__ void block_sum(Acc v, Acc* out, F) {
  __shared__ Acc shared[reduce_threads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = reduce_threads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = shared[0];
}

/// @brief Copies `bytes` of host memory to the device on `stream` without waiting for the stream: small copies go
/// through this thread's pinned staging ring (a copy from pageable memory may synchronize with the stream), larger
/// ones straight from pageable memory. The host memory may be freed when the call returns.
void upload_bytes(void* device, const void* host, std::size_t bytes, cudaStream_t stream);

/// @brief Copies n host values to the device on `stream` (upload_bytes). The host memory may be freed when the call
/// returns.
template <class P>
void upload(P* device, const P* host, std::size_t n, cudaStream_t stream);

/// @brief A host copy of n device values; waits for the stream.
template <class P>
std::vector<P> fetch(const P* device, std::size_t n, cudaStream_t stream);

/// @brief Calls launch(s0, n) over `count` segments in groups of at most 65535 (the grid's y limit).
template <class Launch>
void by_segment_groups(std::size_t count, Launch launch) {
  for (std::size_t s0 = 0; s0 < count; s0 += 65535) launch(s0, std::min<std::size_t>(65535, count - s0));
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

namespace tprod::backend::cuda::detail {
template <class P>
void upload(P* device, const P* host, std::size_t n, cudaStream_t stream) {
  upload_bytes(device, host, n * sizeof(P), stream);
}
template <class P>
std::vector<P> fetch(const P* device, std::size_t n, cudaStream_t stream) {
  std::vector<P> host(n);
  TPROD_CUDA_CHECK(cudaMemcpyAsync(host.data(), device, n * sizeof(P), cudaMemcpyDeviceToHost, stream));
  TPROD_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}
}  // namespace tprod::backend::cuda::detail
