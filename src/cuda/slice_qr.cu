// SPDX-License-Identifier: Apache-2.0
// The QR factorizations of the frontal slices of an m×n×q tensor through cuSOLVER
// (backend/cuda/slice_factorization.hpp): per slice, Householder QR (cusolverDnXgeqrf) on a copy, R̂_k the upper
// triangle of its top rows, Q̂_k formed from the reflectors (orgqr / ungqr).
#include <cusolverDn.h>

#include <complex>
#include <vector>

#include "check.cuh"
#include "device_scalar.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using namespace detail;

// Forming Q from the reflectors under one name for the four scalars (orgqr for real, ungqr for complex).
#define TPROD_FORM_Q(T, X, CT)                                                                                   \
  cusolverStatus_t form_q_buffer(cusolverDnHandle_t h, int m, int n, int k, const T* a, const T* tau, int* lw) { \
    return cusolverDn##X##_bufferSize(h, m, n, k, reinterpret_cast<const CT*>(a), m,                            \
                                      reinterpret_cast<const CT*>(tau), lw);                                    \
  }                                                                                                             \
  cusolverStatus_t form_q(cusolverDnHandle_t h, int m, int n, int k, T* a, const T* tau, T* work, int lwork,     \
                          int* info) {                                                                          \
    return cusolverDn##X(h, m, n, k, reinterpret_cast<CT*>(a), m, reinterpret_cast<const CT*>(tau),              \
                         reinterpret_cast<CT*>(work), lwork, info);                                             \
  }
TPROD_FORM_Q(float, Sorgqr, float)
TPROD_FORM_Q(double, Dorgqr, double)
TPROD_FORM_Q(std::complex<float>, Cungqr, cuComplex)
TPROD_FORM_Q(std::complex<double>, Zungqr, cuDoubleComplex)
#undef TPROD_FORM_Q

// r (c×n) = the upper triangle of the top c rows of the m×n matrix a, zeros below the diagonal.
template <class X>
__global__ void upper_triangle_kernel(const X* a, std::size_t m, X* r, std::size_t c, std::size_t n) {
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < c * n;
       e += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t i = e % c, j = e / c;
    r[e] = i <= j ? a[i + j * m] : X(0);
  }
}

}  // namespace

namespace raw {

template <class T>
void qr_slices(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t c, T* qs, T* rs, int* info,
               cudaStream_t stream) {
  if (m == 0 || n == 0 || q == 0) return;
  const std::size_t k = std::min(m, n);
  if (c != k && c != m) fail("qr_slices", "Q needs min(m, n) or m columns", __FILE__, __LINE__);
  // orgqr / ungqr take int extents (the int casts below are checked here; geqrf takes 64-bit ones)
  TPROD_CUDA_INT("cusolverDn<t>orgqr", m);
  TPROD_CUDA_INT("cusolverDn<t>orgqr", c);
  constexpr cudaDataType t = data_type_of<T>();
  scratch<T> x(m * n, stream), tau(k, stream);
  scratch<int> infos(2 * q, stream);
  const cusolverDnHandle_t h = solver(stream);
  cusolverDnParams_t params = nullptr;
  TPROD_CUDA_CHECK(cusolverDnCreateParams(&params));
  struct destroy {
    cusolverDnParams_t p;
    ~destroy() { cusolverDnDestroyParams(p); }
  } destroy_params{params};
  std::size_t device_bytes = 0, host_bytes = 0;
  TPROD_CUDA_CHECK(cusolverDnXgeqrf_bufferSize(h, params, int64_t(m), int64_t(n), t, x.ptr, int64_t(m), t, tau.ptr,
                                               t, &device_bytes, &host_bytes));
  int lwork = 0;
  TPROD_CUDA_CHECK(form_q_buffer(h, int(m), int(c), int(k), qs, tau.ptr, &lwork));
  scratch<unsigned char> device_work(device_bytes, stream);
  std::vector<unsigned char> host_work(host_bytes);
  scratch<T> q_work(std::size_t(lwork), stream);
  for (std::size_t s = 0; s < q; ++s) {
    copy_bytes(x.ptr, a + s * m * n, m * n * sizeof(T), direction::device_to_device, stream);
    TPROD_CUDA_CHECK(cusolverDnXgeqrf(h, params, int64_t(m), int64_t(n), t, x.ptr, int64_t(m), t, tau.ptr, t,
                                      device_work.ptr, device_bytes, host_work.empty() ? nullptr : host_work.data(),
                                      host_bytes, infos.ptr + 2 * s));
    upper_triangle_kernel<<<blocks_for(c * n), 256, 0, stream>>>(dev(x.ptr), m, dev(rs + s * c * n), c, n);
    TPROD_CUDA_CHECK(cudaGetLastError());
    // Q̂_s: the k reflectors in the leading columns of an m×c matrix, expanded in place.
    T* qk = qs + s * m * c;
    copy_bytes(qk, x.ptr, m * k * sizeof(T), direction::device_to_device, stream);
    TPROD_CUDA_CHECK(form_q(h, int(m), int(c), int(k), qk, tau.ptr, q_work.ptr, lwork, infos.ptr + 2 * s + 1));
  }
  std::vector<int> all(2 * q);
  copy_bytes(all.data(), infos.ptr, 2 * q * sizeof(int), direction::device_to_host, stream);
  synchronize(stream);
  for (std::size_t s = 0; s < q; ++s) info[s] = all[2 * s] != 0 ? all[2 * s] : all[2 * s + 1];
}

#define TPROD_INSTANTIATE(T) \
  template void qr_slices<T>(const T*, std::size_t, std::size_t, std::size_t, std::size_t, T*, T*, int*, cudaStream_t);
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
