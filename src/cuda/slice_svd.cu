// SPDX-License-Identifier: Apache-2.0
// The SVDs of the frontal slices of an m×n×q tensor through cuSOLVER (backend/cuda/slice_factorization.hpp):
// slices of at most 32×32 in one batched Jacobi call (gesvdjBatched), larger ones one Jacobi SVD each (gesvdj).
// Jacobi rather than the QR-based gesvd: on an H100, 256 slices of 64×64 floats took 0.63 s through
// cusolverDnXgesvd (docs/performance.md).
#include <cusolverDn.h>

#include <complex>
#include <vector>

#include "check.cuh"
#include "device_scalar.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using detail::scratch;

using raw::real_of_t;

// cuSOLVER's batched Jacobi SVD under one name for the four scalars (its complex types share std::complex's layout).
#define TPROD_JACOBI(T, X, CT)                                                                                    \
  cusolverStatus_t jacobi_buffer(cusolverDnHandle_t h, int m, int n, const T* a, const real_of_t<T>* s,          \
                                 const T* u, const T* v, int* lwork, gesvdjInfo_t params, int batch) {           \
    return cusolverDn##X##gesvdjBatched_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, m, n,                            \
                                                   reinterpret_cast<const CT*>(a), m, s,                         \
                                                   reinterpret_cast<const CT*>(u), m,                            \
                                                   reinterpret_cast<const CT*>(v), n, lwork, params, batch);     \
  }                                                                                                              \
  cusolverStatus_t jacobi(cusolverDnHandle_t h, int m, int n, T* a, real_of_t<T>* s, T* u, T* v, T* work,        \
                          int lwork, int* info, gesvdjInfo_t params, int batch) {                                \
    return cusolverDn##X##gesvdjBatched(h, CUSOLVER_EIG_MODE_VECTOR, m, n, reinterpret_cast<CT*>(a), m, s,       \
                                        reinterpret_cast<CT*>(u), m, reinterpret_cast<CT*>(v), n,                \
                                        reinterpret_cast<CT*>(work), lwork, info, params, batch);                \
  }                                                                                                              \
  cusolverStatus_t jacobi_one_buffer(cusolverDnHandle_t h, int econ, int m, int n, const T* a,                   \
                                     const real_of_t<T>* s, const T* u, int ldu, const T* v, int ldv, int* lwork,\
                                     gesvdjInfo_t params) {                                                      \
    return cusolverDn##X##gesvdj_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, econ, m, n,                             \
                                            reinterpret_cast<const CT*>(a), m, s,                                \
                                            reinterpret_cast<const CT*>(u), ldu,                                 \
                                            reinterpret_cast<const CT*>(v), ldv, lwork, params);                 \
  }                                                                                                              \
  cusolverStatus_t jacobi_one(cusolverDnHandle_t h, int econ, int m, int n, T* a, real_of_t<T>* s, T* u,        \
                              int ldu, T* v, int ldv, T* work, int lwork, int* info, gesvdjInfo_t params) {      \
    return cusolverDn##X##gesvdj(h, CUSOLVER_EIG_MODE_VECTOR, econ, m, n, reinterpret_cast<CT*>(a), m, s,        \
                                 reinterpret_cast<CT*>(u), ldu, reinterpret_cast<CT*>(v), ldv,                   \
                                 reinterpret_cast<CT*>(work), lwork, info, params);                              \
  }
TPROD_JACOBI(float, S, float)
TPROD_JACOBI(double, D, double)
TPROD_JACOBI(std::complex<float>, C, cuComplex)
TPROD_JACOBI(std::complex<double>, Z, cuDoubleComplex)
#undef TPROD_JACOBI

// cuSOLVER's Jacobi settings (defaults: tolerance ε, at most 100 sweeps), destroyed with the scope.
struct jacobi_info {
  gesvdjInfo_t params = nullptr;
  jacobi_info() { TPROD_CUDA_CHECK(cusolverDnCreateGesvdjInfo(&params)); }
  ~jacobi_info() { cusolverDnDestroyGesvdjInfo(params); }
  jacobi_info(const jacobi_info&) = delete;
  jacobi_info& operator=(const jacobi_info&) = delete;
};

// Keeps the first `cols` columns of q column-major rows×c matrices stored one after another: the leading
// rows·cols elements of each.
template <class T>
void leading_columns(const T* x, std::size_t rows, std::size_t c, T* y, std::size_t cols, std::size_t q,
                     cudaStream_t stream) {
  raw::copy_blocks(y, rows * cols * sizeof(T), x, rows * c * sizeof(T), rows * cols * sizeof(T), q, stream);
}

template <class T>
void batched_jacobi(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols, std::size_t vcols,
                    T* u, T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream) {
  const int batch = TPROD_CUDA_INT("cusolverDn<t>gesvdjBatched", q);
  scratch<T> work_a(m * n * q, stream), uu(m * m * q, stream), vv(n * n * q, stream);
  raw::copy_bytes(work_a.ptr, a, m * n * q * sizeof(T), raw::direction::device_to_device, stream);
  const cusolverDnHandle_t h = detail::solver(stream);
  const jacobi_info info_owner;
  const gesvdjInfo_t params = info_owner.params;
  TPROD_CUDA_CHECK(cusolverDnXgesvdjSetSortEig(params, 1));  // non-increasing singular values
  int lwork = 0;
  TPROD_CUDA_CHECK(jacobi_buffer(h, int(m), int(n), work_a.ptr, sigma, uu.ptr, vv.ptr, &lwork, params, batch));
  scratch<T> work(std::size_t(lwork), stream);
  TPROD_CUDA_CHECK(jacobi(h, int(m), int(n), work_a.ptr, sigma, uu.ptr, vv.ptr, work.ptr, lwork, info, params, batch));
  leading_columns(uu.ptr, m, m, u, ucols, q, stream);
  leading_columns(vv.ptr, n, n, v, vcols, q, stream);
}

// One Jacobi SVD per slice (gesvdj: any shape, V itself rather than Vᴴ), economy when neither factor needs more
// than min(m, n) columns, else full; either way u and v get exactly their ucols and vcols columns.
template <class T>
void slice_by_slice(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols, std::size_t vcols,
                    T* u, T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream) {
  const std::size_t r = std::min(m, n);
  const int econ = ucols > r || vcols > r ? 0 : 1;
  scratch<T> x(m * n, stream);
  const cusolverDnHandle_t h = detail::solver(stream);
  const jacobi_info info_owner;
  const gesvdjInfo_t params = info_owner.params;
  int lwork = 0;
  TPROD_CUDA_CHECK(jacobi_one_buffer(h, econ, int(m), int(n), x.ptr, sigma, u, int(m), v, int(n), &lwork, params));
  scratch<T> work(std::size_t(lwork), stream);
  for (std::size_t k = 0; k < q; ++k) {
    raw::copy_bytes(x.ptr, a + k * m * n, m * n * sizeof(T), raw::direction::device_to_device, stream);
    TPROD_CUDA_CHECK(jacobi_one(h, econ, int(m), int(n), x.ptr, sigma + k * r, u + k * m * ucols, int(m),
                                v + k * n * vcols, int(n), work.ptr, lwork, info + k, params));
  }
}

}  // namespace

namespace raw {

template <class T>
void svd_slices(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols, std::size_t vcols, T* u,
                T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream) {
  const std::size_t r = std::min(m, n);
  if (m == 0 || n == 0 || q == 0) return;
  if ((ucols != r && ucols != m) || (vcols != r && vcols != n))
    detail::fail("svd_slices", "U needs min(m, n) or m columns and V min(m, n) or n", __FILE__, __LINE__);
  // cuSOLVER's Jacobi SVDs take int extents (the int casts below are checked here)
  TPROD_CUDA_INT("cusolverDn<t>gesvdj", m);
  TPROD_CUDA_INT("cusolverDn<t>gesvdj", n);
  scratch<real_of_t<T>> s(r * q, stream);
  scratch<int> infos(q, stream);
  if (m <= 32 && n <= 32) batched_jacobi(a, m, n, q, ucols, vcols, u, v, s.ptr, infos.ptr, stream);
  else slice_by_slice(a, m, n, q, ucols, vcols, u, v, s.ptr, infos.ptr, stream);
  copy_bytes(sigma, s.ptr, r * q * sizeof(real_of_t<T>), direction::device_to_host, stream);
  copy_bytes(info, infos.ptr, q * sizeof(int), direction::device_to_host, stream);
  synchronize(stream);
}

#define TPROD_INSTANTIATE(T)                                                                                  \
  template void svd_slices<T>(const T*, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, T*, \
                              T*, real_of_t<T>*, int*, cudaStream_t);
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
