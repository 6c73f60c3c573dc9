// SPDX-License-Identifier: Apache-2.0
// The GEMMs of the CUDA backend: the tube transforms' one GEMM, the facewise product's strided-batched GEMM, the
// nn's slice-linear maps (the general strided-batched form) and attention's block products (pointer-array batched,
// the tables written on the device),
// through cuBLAS's Ex interfaces (one code path for the four scalars, 64-bit sizes).
#include <complex>

#include "check.cuh"
#include "device_scalar.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

// The alpha/beta scalar type cuBLAS takes for each scalar.
template <class T> struct blas_type { using alpha = T; };
template <> struct blas_type<std::complex<float>> { using alpha = cuComplex; };
template <> struct blas_type<std::complex<double>> { using alpha = cuDoubleComplex; };

// Single precision may use TF32 tensor cores when asked; double precision always computes in double.
template <class T> cublasComputeType_t compute_type(bool tf32) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>)
    return tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  else
    return CUBLAS_COMPUTE_64F;
}
// The pointer tables of gemm_blocks: A's, B's and C's block f at out[f], out[count + f], out[2·count + f].
template <class T>
__global__ void block_pointer_kernel(raw::block_grid<const T> a, raw::block_grid<const T> b, raw::block_grid<T> c,
                                     std::size_t heads, std::size_t batch, std::size_t count, const void** out) {
  TPROD_GRID_LOOP(f, count) {
    const std::size_t s = f / (heads * batch), j = (f / batch) % heads, q = f % batch;
    out[f] = a.base + s * a.slice + j * a.head + q * a.sequence;
    out[count + f] = b.base + s * b.slice + j * b.head + q * b.sequence;
    out[2 * count + f] = c.base + s * c.slice + j * c.head + q * c.sequence;
  }
}
// C_f = 0 for the count m×n blocks (leading dimension ldc) of a block grid: the product with an empty inner
// dimension, written here rather than left to cuBLAS, which refuses the leading dimension 0 such a shape brings.
template <class X>
__global__ void zero_blocks_kernel(raw::block_grid<X> c, std::size_t ldc, std::size_t m, std::size_t n,
                                   std::size_t heads, std::size_t batch, std::size_t count) {
  TPROD_GRID_LOOP(e, m * n * count) {
    const std::size_t f = e / (m * n), i = e % m, j = (e / m) % n;
    const std::size_t s = f / (heads * batch), h = (f / batch) % heads, q = f % batch;
    c.base[s * c.slice + h * c.head + q * c.sequence + i + j * ldc] = X(0);
  }
}
template <class T>
void zero_blocks(raw::block_grid<T> c, std::size_t ldc, std::size_t m, std::size_t n, std::size_t heads,
                 std::size_t batch, std::size_t count, cudaStream_t stream) {
  const raw::block_grid<detail::dev_t<T>> x{detail::dev(c.base), c.slice, c.head, c.sequence};
  zero_blocks_kernel<<<detail::blocks_for(m * n * count), 256, 0, stream>>>(x, ldc, m, n, heads, batch, count);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
// cuBLAS asks every leading dimension to be at least 1 (and at least the rows), also where a matrix is empty.
inline int64_t leading(std::size_t ld) { return int64_t(std::max<std::size_t>(ld, 1)); }

template <class T> typename blas_type<T>::alpha one() {
  typename blas_type<T>::alpha a{};
  reinterpret_cast<T&>(a) = T(1);
  return a;
}
template <class T> typename blas_type<T>::alpha zero() {
  typename blas_type<T>::alpha a{};
  reinterpret_cast<T&>(a) = T(0);
  return a;
}

template <class T>
void gemm_op(cublasOperation_t op_b, std::size_t rows, std::size_t cols, std::size_t k, const T* a, std::size_t lda,
             const T* b, std::size_t ldb, T* c, std::size_t ldc, bool tf32, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  if (k == 0) return zero_blocks(raw::block_grid<T>{c, 0, 0, 0}, ldc, rows, cols, 1, 1, 1, stream);
  const auto alpha = one<T>(), beta = zero<T>();
  constexpr cudaDataType t = detail::data_type_of<T>();
  TPROD_CUDA_CHECK(cublasGemmEx_64(detail::blas(stream), CUBLAS_OP_N, op_b, int64_t(rows), int64_t(cols),
                                   int64_t(k), &alpha, a, t, leading(lda), b, t, leading(ldb), &beta, c, t,
                                   leading(ldc), compute_type<T>(tf32), CUBLAS_GEMM_DEFAULT));
}

}  // namespace

namespace raw {

template <class T>
void gemm(std::size_t rows, std::size_t cols, std::size_t k, const T* a, std::size_t lda, const T* b, std::size_t ldb,
          T* c, std::size_t ldc, bool tf32, cudaStream_t stream) {
  gemm_op(CUBLAS_OP_N, rows, cols, k, a, lda, b, ldb, c, ldc, tf32, stream);
}

template <class T>
void gemm_bt(std::size_t rows, std::size_t cols, std::size_t k, const T* a, std::size_t lda, const T* bt,
             std::size_t ldbt, T* c, std::size_t ldc, bool tf32, cudaStream_t stream) {
  gemm_op(CUBLAS_OP_T, rows, cols, k, a, lda, bt, ldbt, c, ldc, tf32, stream);
}

template <class T>
void gemm_strided_batched(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, std::size_t batch,
                          const T* a, std::size_t lda, std::size_t stride_a, const T* b, std::size_t ldb,
                          std::size_t stride_b, T beta, T* c, std::size_t ldc, std::size_t stride_c, bool tf32,
                          cudaStream_t stream) {
  if (m == 0 || n == 0 || batch == 0) return;
  // k = 0 follows BLAS: C = β·C, which is 0 for β = 0.
  if (k == 0) {
    if (beta == T(0)) zero_blocks(raw::block_grid<T>{c, stride_c, 0, 0}, ldc, m, n, 1, 1, batch, stream);
    return;
  }
  const auto alpha = one<T>(), beta_blas = beta == T(0) ? zero<T>() : one<T>();
  constexpr cudaDataType t = detail::data_type_of<T>();
  TPROD_CUDA_CHECK(cublasGemmStridedBatchedEx_64(
      detail::blas(stream), trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, int64_t(m),
      int64_t(n), int64_t(k), &alpha, a, t, leading(lda), int64_t(stride_a), b, t, leading(ldb), int64_t(stride_b),
      &beta_blas, c, t, leading(ldc), int64_t(stride_c), int64_t(batch), compute_type<T>(tf32), CUBLAS_GEMM_DEFAULT));
}

template <class T>
void gemm_blocks(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, block_grid<const T> a,
                 std::size_t lda, block_grid<const T> b, std::size_t ldb, T beta, block_grid<T> c, std::size_t ldc,
                 std::size_t heads, std::size_t batch, std::size_t count, bool tf32, cudaStream_t stream) {
  if (m == 0 || n == 0 || count == 0) return;
  if (k == 0) {  // C = β·C
    if (beta == T(0)) zero_blocks(c, ldc, m, n, heads, batch, count, stream);
    return;
  }
  const auto alpha = one<T>(), beta_blas = beta == T(0) ? zero<T>() : one<T>();
  constexpr cudaDataType t = detail::data_type_of<T>();
  const detail::scratch<const void*> pointers(3 * count, stream);  // stream-ordered: no host synchronization
  block_pointer_kernel<<<detail::blocks_for(count), 256, 0, stream>>>(a, b, c, heads, batch, count, pointers.ptr);
  TPROD_CUDA_CHECK(cudaGetLastError());
  TPROD_CUDA_CHECK(cublasGemmBatchedEx_64(
      detail::blas(stream), trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, int64_t(m),
      int64_t(n), int64_t(k), &alpha, pointers.ptr, t, leading(lda), pointers.ptr + count, t, leading(ldb),
      &beta_blas, const_cast<void* const*>(pointers.ptr + 2 * count), t, leading(ldc), int64_t(count),
      compute_type<T>(tf32), CUBLAS_GEMM_DEFAULT));
}

template <class T>
void gemm_strided_batched(std::size_t m, std::size_t n, std::size_t l, std::size_t batch, const T* a,
                          std::size_t stride_a, const T* b, std::size_t stride_b, T* c, std::size_t stride_c, bool tf32,
                          cudaStream_t stream) {
  gemm_strided_batched(false, false, m, n, l, batch, a, m, stride_a, b, l, stride_b, T(0), c, m, stride_c, tf32,
                       stream);
}

template <class T>
void gemm_strided_batched(std::size_t m, std::size_t n, std::size_t l, std::size_t batch, const T* a, const T* b, T* c,
                          bool tf32, cudaStream_t stream) {
  gemm_strided_batched(m, n, l, batch, a, m * l, b, l * n, c, m * n, tf32, stream);
}

#define TPROD_INSTANTIATE(T)                                                                                        \
  template void gemm<T>(std::size_t, std::size_t, std::size_t, const T*, std::size_t, const T*, std::size_t, T*,    \
                        std::size_t, bool, cudaStream_t);                                                           \
  template void gemm_bt<T>(std::size_t, std::size_t, std::size_t, const T*, std::size_t, const T*, std::size_t, T*, \
                           std::size_t, bool, cudaStream_t);                                                        \
  template void gemm_strided_batched<T>(std::size_t, std::size_t, std::size_t, std::size_t, const T*, const T*, T*, \
                                        bool, cudaStream_t);                                                        \
  template void gemm_strided_batched<T>(std::size_t, std::size_t, std::size_t, std::size_t, const T*, std::size_t,  \
                                        const T*, std::size_t, T*, std::size_t, bool, cudaStream_t);          \
  template void gemm_strided_batched<T>(bool, bool, std::size_t, std::size_t, std::size_t, std::size_t, const T*,   \
                                        std::size_t, std::size_t, const T*, std::size_t, std::size_t, T, T*,        \
                                        std::size_t, std::size_t, bool, cudaStream_t);                      \
  template void gemm_blocks<T>(bool, bool, std::size_t, std::size_t, std::size_t, block_grid<const T>,             \
                               std::size_t, block_grid<const T>, std::size_t, T, block_grid<T>, std::size_t,         \
                               std::size_t, std::size_t, std::size_t, bool, cudaStream_t);
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
