// SPDX-License-Identifier: Apache-2.0
// The slice-wise inverse of the CUDA backend: batched LU (cuBLAS getrfBatched) and the inverse from it
// (getriBatched), with the exact reciprocal condition numbers from the 1-norms of the slices and their inverses.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "check.cuh"
#include "device_scalar.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using namespace detail;

// ‖X_k‖₁ = max_j Σ_i |x_ij| of each m×m slice; one block per slice.
template <class X>
__global__ void one_norms_kernel(const X* x, std::size_t m, double* out) {
  const X* s = x + blockIdx.x * m * m;
  double best = 0;
  for (std::size_t j = threadIdx.x; j < m; j += blockDim.x) {
    double col = 0;
    for (std::size_t i = 0; i < m; ++i) col += sqrt(abs2(s[i + m * j]));
    best = col > best || isnan(col) ? col : best;
  }
  __shared__ double shared[256];
  shared[threadIdx.x] = best;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) {
      const double o = shared[threadIdx.x + h];
      if (o > shared[threadIdx.x] || isnan(o)) shared[threadIdx.x] = o;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = shared[0];
}

template <class T> struct getr;
#define TPROD_GETR(T, B, prefix)                                                                                     \
  template <> struct getr<T> {                                                                                   \
    static cublasStatus_t rf(cublasHandle_t h, int n, T* const a[], int* piv, int* info, int batch) {            \
      return cublas##prefix##getrfBatched(h, n, reinterpret_cast<B* const*>(a), n, piv, info, batch);            \
    }                                                                                                            \
    static cublasStatus_t ri(cublasHandle_t h, int n, const T* const a[], const int* piv, T* const c[], int* info, \
                             int batch) {                                                                        \
      return cublas##prefix##getriBatched(h, n, reinterpret_cast<const B* const*>(a), n, piv,                    \
                                          reinterpret_cast<B* const*>(c), n, info, batch);                       \
    }                                                                                                            \
  };
TPROD_GETR(float, float, S)
TPROD_GETR(double, double, D)
TPROD_GETR(std::complex<float>, cuComplex, C)
TPROD_GETR(std::complex<double>, cuDoubleComplex, Z)
#undef TPROD_GETR

}  // namespace

namespace raw {

template <class T>
void invert_slices(const T* a, T* out, std::size_t m, std::size_t p, double* rconds, cudaStream_t stream) {
  if (m > std::size_t(1) << 30 || p > std::size_t(1) << 30)
    detail::fail("cublas<t>getrfBatched", "the slices (" + std::to_string(m) + " × " + std::to_string(m) + ", " +
                                              std::to_string(p) + " of them) exceed cuBLAS's int sizes", __FILE__, __LINE__);
  const std::size_t slice = m * m;
  scratch<T> lu(slice * p, stream);
  scratch<T*> lu_ptrs(p, stream), out_ptrs(p, stream);
  scratch<int> pivots(m * p, stream), info(p, stream);
  scratch<double> norms(2 * p, stream);
  TPROD_CUDA_CHECK(cudaMemcpyAsync(lu.ptr, a, slice * p * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  std::vector<T*> host_lu(p), host_out(p);
  for (std::size_t k = 0; k < p; ++k) {
    host_lu[k] = lu.ptr + k * slice;
    host_out[k] = out + k * slice;
  }
  TPROD_CUDA_CHECK(cudaMemcpyAsync(lu_ptrs.ptr, host_lu.data(), p * sizeof(T*), cudaMemcpyHostToDevice, stream));
  TPROD_CUDA_CHECK(cudaMemcpyAsync(out_ptrs.ptr, host_out.data(), p * sizeof(T*), cudaMemcpyHostToDevice, stream));
  const cublasHandle_t h = detail::blas(stream);
  TPROD_CUDA_CHECK(getr<T>::rf(h, int(m), lu_ptrs.ptr, pivots.ptr, info.ptr, int(p)));
  std::vector<int> factor_info(p);
  TPROD_CUDA_CHECK(cudaMemcpyAsync(factor_info.data(), info.ptr, p * sizeof(int), cudaMemcpyDeviceToHost, stream));
  TPROD_CUDA_CHECK(getr<T>::ri(h, int(m), lu_ptrs.ptr, pivots.ptr, out_ptrs.ptr, info.ptr, int(p)));
  one_norms_kernel<<<unsigned(p), 256, 0, stream>>>(dev(a), m, norms.ptr);
  one_norms_kernel<<<unsigned(p), 256, 0, stream>>>(dev(static_cast<const T*>(out)), m, norms.ptr + p);
  TPROD_CUDA_CHECK(cudaGetLastError());
  std::vector<double> host_norms(2 * p);
  TPROD_CUDA_CHECK(cudaMemcpyAsync(host_norms.data(), norms.ptr, 2 * p * sizeof(double), cudaMemcpyDeviceToHost, stream));
  TPROD_CUDA_CHECK(cudaStreamSynchronize(stream));  // host_lu/host_out and the results must outlive the copies
  double scale = 0;
  for (std::size_t k = 0; k < p; ++k) scale = std::max(scale, host_norms[k]);
  for (std::size_t k = 0; k < p; ++k) {
    const double inverse_norm = host_norms[p + k];
    rconds[k] = factor_info[k] != 0 || scale == 0 || !std::isfinite(inverse_norm) ? 0.0 : 1.0 / (inverse_norm * scale);
  }
}

#define TPROD_INSTANTIATE(T) template void invert_slices<T>(const T*, T*, std::size_t, std::size_t, double*, cudaStream_t);
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
