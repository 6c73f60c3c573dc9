// SPDX-License-Identifier: Apache-2.0
// The SVDs of the frontal slices of an m×n×q tensor (backend/cuda/slice_factorization.hpp): slices of at most
// 32×32 in one batched Jacobi call of cuSOLVER (gesvdjBatched); economy SVDs of slices up to 256×256 by tprod's
// batched one-sided Jacobi, one thread block per slice (one_sided_jacobi.cuh); anything else (the full form of a
// slice larger than 32×32, or a slice beyond 256) one cuSOLVER Jacobi SVD each (gesvdj), which costs about 1 ms per
// 64×64 slice on an H200, whatever the batch. Jacobi rather than the QR-based gesvd: on an H100, 256 slices of 64×64
// floats took 0.63 s through cusolverDnXgesvd (docs/performance.md).
#include <cusolverDn.h>

#include <complex>
#include <vector>

#include "check.cuh"
#include "device_scalar.cuh"
#include "one_sided_jacobi.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using detail::dev;
using detail::dev_t;
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

// A thread block as one_sided_jacobi.cuh's team: a worker is a warp, whose lanes share each dot product.
template <class R>
struct block_team {
  int thread, threads, worker, workers, lane;
  static constexpr int lanes = 32;
  R* partial;  // one value per warp, in shared memory

  __device__ void sync() const { __syncthreads(); }
  __device__ bool any(bool flag) const { return __syncthreads_or(flag ? 1 : 0) != 0; }
  // A butterfly: lane i and lane i^o add the same two values at every step, so every lane ends with the same sum,
  // bit for bit (the decisions taken on it are the whole warp's).
  __device__ R lane_sum(R v) const {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
  }
  __device__ R max_all(R v) const {
    for (int o = 16; o > 0; o /= 2) {
      const R other = __shfl_xor_sync(0xffffffffu, v, o);
      v = other > v ? other : v;
    }
    if (lane == 0) partial[worker] = v;
    __syncthreads();
    R best = 0;
    for (int k = 0; k < workers; ++k) best = partial[k] > best ? partial[k] : best;
    __syncthreads();
    return best;
  }
};

constexpr int jacobi_warps = 16;

// The economy SVD of slice blockIdx.x: X and Q in dynamic shared memory when `in_shared`, else in the slice's part
// of `workspace` ((rows·cols + cols²) values per slice).
template <class D>
__global__ void __launch_bounds__(32 * jacobi_warps)
    one_sided_jacobi_kernel(const D* a, int m, int n, D* u, D* v, jacobi::real_of<D>* sigma, int* info,
                            D* workspace, int in_shared) {
  using R = jacobi::real_of<D>;
  constexpr int most = jacobi::max_extent;
  __shared__ R sigma_of[most];
  __shared__ int position[most];
  __shared__ double2 w_bytes[most * sizeof(D) / sizeof(double2) + 1];
  __shared__ double2 coefficient_bytes[most * sizeof(D) / sizeof(double2) + 1];
  __shared__ R slots[1 + jacobi_warps];
  extern __shared__ double2 dynamic_bytes[];  // 16-byte aligned
  const int rows = m > n ? m : n, cols = m > n ? n : m;
  const std::size_t k = blockIdx.x, per_slice = std::size_t(rows) * cols + std::size_t(cols) * cols;
  D* x = in_shared ? reinterpret_cast<D*>(dynamic_bytes) : workspace + k * per_slice;
  const jacobi::slice_work<D> w{x,        x + rows * cols, sigma_of, position, reinterpret_cast<D*>(w_bytes),
                                reinterpret_cast<D*>(coefficient_bytes), slots};
  block_team<R> team{int(threadIdx.x), int(blockDim.x), int(threadIdx.x / 32), int(blockDim.x / 32),
                     int(threadIdx.x % 32), slots + 1};
  const int status = jacobi::svd_slice(a + k * m * n, m, n, u + k * m * cols, v + k * n * cols, sigma + k * cols, w,
                                       team);
  if (threadIdx.x == 0) info[k] = status;
}

// The economy SVDs of q slices of at most jacobi::max_extent rows and columns, one block per slice; sigma and info
// on the device.
template <class T>
void one_sided_jacobi(const T* a, std::size_t m, std::size_t n, std::size_t q, T* u, T* v, real_of_t<T>* sigma,
                      int* info, cudaStream_t stream) {
  using D = dev_t<T>;
  const std::size_t rows = std::max(m, n), cols = std::min(m, n), per_slice = rows * cols + cols * cols;
  const std::size_t bytes = per_slice * sizeof(D);
  int device = 0, optin = 0;
  TPROD_CUDA_CHECK(cudaGetDevice(&device));
  TPROD_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attributes{};
  TPROD_CUDA_CHECK(cudaFuncGetAttributes(&attributes, one_sided_jacobi_kernel<D>));
  // Shared memory when X and Q fit beside the kernel's own arrays (64×64 complex double: 128 KiB), else global
  // memory, which L1 and L2 cache (a 256×256 float slice needs 512 KiB).
  const bool in_shared = attributes.sharedSizeBytes + bytes <= std::size_t(optin);
  scratch<D> workspace(in_shared ? 0 : per_slice * q, stream);
  if (in_shared)
    TPROD_CUDA_CHECK(cudaFuncSetAttribute(one_sided_jacobi_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(bytes)));
  const int padded = int(cols + (cols & 1));
  const unsigned threads = 32u * unsigned(std::min(jacobi_warps, padded / 2));
  const unsigned blocks = unsigned(TPROD_CUDA_INT("one_sided_jacobi_kernel", q));
  one_sided_jacobi_kernel<D><<<blocks, threads, in_shared ? bytes : 0, stream>>>(
      dev(a), int(m), int(n), dev(u), dev(v), sigma, info, workspace.ptr, in_shared ? 1 : 0);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

// The routes of svd_slices: which one a shape and form take.
enum class svd_route { batched_cusolver, one_sided_jacobi, per_slice_cusolver };
svd_route route_of(std::size_t m, std::size_t n, std::size_t ucols, std::size_t vcols, bool allow_own) {
  const std::size_t r = std::min(m, n);
  if (m <= 32 && n <= 32) return svd_route::batched_cusolver;
  if (allow_own && std::max(m, n) <= std::size_t(jacobi::max_extent) && ucols == r && vcols == r)
    return svd_route::one_sided_jacobi;
  return svd_route::per_slice_cusolver;
}

template <class T>
void svd_slices_by(bool allow_own, const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols,
                   std::size_t vcols, T* u, T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream) {
  const std::size_t r = std::min(m, n);
  if (m == 0 || n == 0 || q == 0) return;
  if ((ucols != r && ucols != m) || (vcols != r && vcols != n))
    detail::fail("svd_slices", "U needs min(m, n) or m columns and V min(m, n) or n", __FILE__, __LINE__);
  // cuSOLVER's Jacobi SVDs take int extents (the int casts below are checked here)
  TPROD_CUDA_INT("cusolverDn<t>gesvdj", m);
  TPROD_CUDA_INT("cusolverDn<t>gesvdj", n);
  scratch<real_of_t<T>> s(r * q, stream);
  scratch<int> infos(q, stream);
  switch (route_of(m, n, ucols, vcols, allow_own)) {
    case svd_route::batched_cusolver: batched_jacobi(a, m, n, q, ucols, vcols, u, v, s.ptr, infos.ptr, stream); break;
    case svd_route::one_sided_jacobi: one_sided_jacobi(a, m, n, q, u, v, s.ptr, infos.ptr, stream); break;
    case svd_route::per_slice_cusolver: slice_by_slice(a, m, n, q, ucols, vcols, u, v, s.ptr, infos.ptr, stream); break;
  }
  raw::copy_bytes(sigma, s.ptr, r * q * sizeof(real_of_t<T>), raw::direction::device_to_host, stream);
  raw::copy_bytes(info, infos.ptr, q * sizeof(int), raw::direction::device_to_host, stream);
  raw::synchronize(stream);
}

}  // namespace

namespace raw {

template <class T>
void svd_slices(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols, std::size_t vcols, T* u,
                T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream) {
  svd_slices_by(true, a, m, n, q, ucols, vcols, u, v, sigma, info, stream);
}

template <class T>
void svd_slices_cusolver(const T* a, std::size_t m, std::size_t n, std::size_t q, std::size_t ucols,
                         std::size_t vcols, T* u, T* v, real_of_t<T>* sigma, int* info, cudaStream_t stream) {
  svd_slices_by(false, a, m, n, q, ucols, vcols, u, v, sigma, info, stream);
}

#define TPROD_INSTANTIATE(T)                                                                                  \
  template void svd_slices<T>(const T*, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, T*, \
                              T*, real_of_t<T>*, int*, cudaStream_t);                                   \
  template void svd_slices_cusolver<T>(const T*, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, \
                                       T*, T*, real_of_t<T>*, int*, cudaStream_t);
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
