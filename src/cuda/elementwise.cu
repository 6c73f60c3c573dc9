// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels and the deterministic reductions of the CUDA backend (backend/cuda/elementwise.hpp).
#include <curand.h>

#include <algorithm>
#include <vector>

#include "check.cuh"
#include "device_scalar.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using namespace detail;

template <class X> __global__ void fill_kernel(X* x, std::size_t n, X v) { TPROD_GRID_LOOP(i, n) x[i] = v; }
template <class U, class X> __global__ void convert_kernel(const U* x, X* y, std::size_t n) { TPROD_GRID_LOOP(i, n) y[i] = X(x[i]); }
template <class R> __global__ void real_part_kernel(const ::cuda::std::complex<R>* x, R* y, std::size_t n) {
  TPROD_GRID_LOOP(i, n) y[i] = x[i].real();
}
template <class X> __global__ void axpy_kernel(X a, const X* x, X* y, std::size_t n) { TPROD_GRID_LOOP(i, n) y[i] += a * x[i]; }
template <class X> __global__ void scale_kernel(X a, X* x, std::size_t n) { TPROD_GRID_LOOP(i, n) x[i] *= a; }
template <class X> __global__ void finite_kernel(const X* x, std::size_t n, int* bad) {
  TPROD_GRID_LOOP(i, n) if (!finite(x[i])) *bad = 1;
}
// A mode permutation's shape of y and, per mode k of y, x's stride along it (raw::permute_modes).
struct permutation {
  std::size_t extent[raw::max_permuted_modes];
  std::size_t step[raw::max_permuted_modes];
  std::size_t order;
};
template <class X> __global__ void permute_kernel(const X* x, X* y, permutation p, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e indexes y, first index fastest
    std::size_t rest = e, offset = 0;
    for (std::size_t k = 0; k < p.order; ++k) {
      offset += (rest % p.extent[k]) * p.step[k];
      rest /= p.extent[k];
    }
    y[e] = x[offset];
  }
}
template <class X> __global__ void adjoint_kernel(const X* a, X* at, std::size_t m, std::size_t n, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e indexes a: e = i + m·(j + n·k)
    const std::size_t i = e % m, j = (e / m) % n, k = e / (m * n);
    at[j + n * (i + m * k)] = conj_of(a[e]);
  }
}
template <class X> __global__ void identity_kernel(X* x, std::size_t m, std::size_t n, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {
    const std::size_t i = e % m, j = (e / m) % n;
    x[e] = X(i == j ? 1 : 0);
  }
}
template <class R> __global__ void to_symmetric_kernel(R* x, std::size_t n) { TPROD_GRID_LOOP(i, n) x[i] = 2 * x[i] - 1; }

// Partial sums of blocks: grid (chunks, count); block b of segment s sums its chunk of the segment in double and
// writes partials[s·chunks + b]. The host adds the partials in order, so the result does not depend on timing.
template <class X>
__global__ void squares_kernel(const X* x, std::size_t block, std::size_t chunk, double* partials) {
  const std::size_t s = blockIdx.y, b = blockIdx.x;
  const std::size_t begin = b * chunk, end = begin + chunk < block ? begin + chunk : block;
  double v = 0;
  for (std::size_t i = begin + threadIdx.x; i < end; i += reduce_threads) v += abs2(x[s * block + i]);
  block_sum(v, partials + s * gridDim.x + b, 0);
}
template <class X>
__global__ void dots_kernel(const X* x, const X* y, std::size_t block, std::size_t chunk,
                            ::cuda::std::complex<double>* partials) {
  const std::size_t s = blockIdx.y, b = blockIdx.x;
  const std::size_t begin = b * chunk, end = begin + chunk < block ? begin + chunk : block;
  ::cuda::std::complex<double> v = 0;
  for (std::size_t i = begin + threadIdx.x; i < end; i += reduce_threads) {
    const X a = conj_of(x[s * block + i]) * y[s * block + i];
    if constexpr (is_cplx<X>::value) v += ::cuda::std::complex<double>(a.real(), a.imag()); else v += double(a);
  }
  block_sum(v, partials + s * gridDim.x + b, 0);
}

// Chunks per segment: enough blocks to fill the device, each summing at least 4096 elements.
std::size_t chunks_for(std::size_t block, std::size_t count) {
  const std::size_t by_size = (block + 4095) / 4096;
  const std::size_t by_grid = std::max<std::size_t>(1, 65535 / std::max<std::size_t>(1, count));
  return std::max<std::size_t>(1, std::min(by_size, by_grid));
}


}  // namespace

namespace raw {

template <class T> void fill(T* x, std::size_t n, T value, cudaStream_t stream) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), 256, 0, stream>>>(dev(x), n, dev(value));
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class U, class T> void convert(const U* x, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  convert_kernel<<<blocks_for(n), 256, 0, stream>>>(dev(x), dev(y), n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T> void real_part(const std::complex<T>* x, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  real_part_kernel<<<blocks_for(n), 256, 0, stream>>>(dev(x), y, n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T> void axpy(T alpha, const T* x, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  axpy_kernel<<<blocks_for(n), 256, 0, stream>>>(dev(alpha), dev(x), dev(y), n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T> void scale(T alpha, T* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n), 256, 0, stream>>>(dev(alpha), dev(x), n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T> bool all_finite(const T* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return true;
  const scratch<int> bad(1, stream);
  TPROD_CUDA_CHECK(cudaMemsetAsync(bad.ptr, 0, sizeof(int), stream));
  finite_kernel<<<blocks_for(n), 256, 0, stream>>>(dev(x), n, bad.ptr);
  TPROD_CUDA_CHECK(cudaGetLastError());
  return fetch(bad.ptr, 1, stream)[0] == 0;
}
template <class T> void block_squared_norms(const T* x, std::size_t block, std::size_t count, double* out, cudaStream_t stream) {
  std::fill(out, out + count, 0.0);
  if (block == 0 || count == 0) return;
  const std::size_t chunks = chunks_for(block, count), chunk = (block + chunks - 1) / chunks;
  by_segment_groups(count, [&](std::size_t s0, std::size_t n) {
    const scratch<double> partials(n * chunks, stream);
    squares_kernel<<<dim3(unsigned(chunks), unsigned(n)), reduce_threads, 0, stream>>>(dev(x) + s0 * block, block, chunk,
                                                                                    partials.ptr);
    TPROD_CUDA_CHECK(cudaGetLastError());
    const auto host = fetch(partials.ptr, n * chunks, stream);
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t b = 0; b < chunks; ++b) out[s0 + s] += host[s * chunks + b];
  });
}
template <class T> void block_dots(const T* x, const T* y, std::size_t block, std::size_t count, T* out, cudaStream_t stream) {
  std::fill(out, out + count, T(0));
  if (block == 0 || count == 0) return;
  using acc = ::cuda::std::complex<double>;
  const std::size_t chunks = chunks_for(block, count), chunk = (block + chunks - 1) / chunks;
  by_segment_groups(count, [&](std::size_t s0, std::size_t n) {
    const scratch<acc> partials(n * chunks, stream);
    dots_kernel<<<dim3(unsigned(chunks), unsigned(n)), reduce_threads, 0, stream>>>(dev(x) + s0 * block, dev(y) + s0 * block,
                                                                                 block, chunk, partials.ptr);
    TPROD_CUDA_CHECK(cudaGetLastError());
    const auto host = fetch(partials.ptr, n * chunks, stream);
    for (std::size_t s = 0; s < n; ++s) {
      std::complex<double> sum = 0;
      for (std::size_t b = 0; b < chunks; ++b) sum += std::complex<double>(host[s * chunks + b].real(), host[s * chunks + b].imag());
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) out[s0 + s] = T(sum.real());
      else out[s0 + s] = T(sum);
    }
  });
}
template <class T> void adjoint_slices(const T* a, T* at, std::size_t m, std::size_t n, std::size_t p, cudaStream_t stream) {
  const std::size_t total = m * n * p;
  if (total == 0) return;
  adjoint_kernel<<<blocks_for(total), 256, 0, stream>>>(dev(a), dev(at), m, n, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T> void identity_slices(T* x, std::size_t m, std::size_t n, std::size_t p, cudaStream_t stream) {
  const std::size_t total = m * n * p;
  if (total == 0) return;
  identity_kernel<<<blocks_for(total), 256, 0, stream>>>(dev(x), m, n, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T>
void permute_modes(const T* x, const std::size_t* shape, const std::size_t* perm, std::size_t order, T* y,
                   std::size_t total, cudaStream_t stream) {
  if (total == 0) return;
  permutation p{};
  p.order = order;
  for (std::size_t k = 0; k < order; ++k) {
    p.extent[k] = shape[perm[k]];
    p.step[k] = 1;
    for (std::size_t n = 0; n < perm[k]; ++n) p.step[k] *= shape[n];
  }
  permute_kernel<<<blocks_for(total), 256, 0, stream>>>(dev(x), dev(y), p, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T> void random_uniform(T* x, std::size_t n, unsigned long long seed, cudaStream_t stream) {
  using R = std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>, float, double>;
  const std::size_t reals = n * (sizeof(T) / sizeof(R));
  if (reals == 0) return;
  curandGenerator_t gen;
  TPROD_CUDA_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  struct destroy { curandGenerator_t g; ~destroy() { curandDestroyGenerator(g); } } guard{gen};
  TPROD_CUDA_CHECK(curandSetPseudoRandomGeneratorSeed(gen, seed));
  TPROD_CUDA_CHECK(curandSetStream(gen, stream));
  R* r = reinterpret_cast<R*>(x);
  if constexpr (std::is_same_v<R, float>) TPROD_CUDA_CHECK(curandGenerateUniform(gen, r, reals));
  else TPROD_CUDA_CHECK(curandGenerateUniformDouble(gen, r, reals));
  to_symmetric_kernel<<<blocks_for(reals), 256, 0, stream>>>(r, reals);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

#define TPROD_INSTANTIATE(T)                                                                                    \
  template void fill<T>(T*, std::size_t, T, cudaStream_t);                                                      \
  template void convert<T, T>(const T*, T*, std::size_t, cudaStream_t);                                         \
  template void axpy<T>(T, const T*, T*, std::size_t, cudaStream_t);                                            \
  template void scale<T>(T, T*, std::size_t, cudaStream_t);                                                     \
  template bool all_finite<T>(const T*, std::size_t, cudaStream_t);                                             \
  template void block_squared_norms<T>(const T*, std::size_t, std::size_t, double*, cudaStream_t);              \
  template void block_dots<T>(const T*, const T*, std::size_t, std::size_t, T*, cudaStream_t);                  \
  template void adjoint_slices<T>(const T*, T*, std::size_t, std::size_t, std::size_t, cudaStream_t);           \
  template void identity_slices<T>(T*, std::size_t, std::size_t, std::size_t, cudaStream_t);                    \
  template void permute_modes<T>(const T*, const std::size_t*, const std::size_t*, std::size_t, T*, std::size_t,  \
                                 cudaStream_t);                                                                 \
  template void random_uniform<T>(T*, std::size_t, unsigned long long, cudaStream_t);
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE)
#undef TPROD_INSTANTIATE
template void convert<float, std::complex<float>>(const float*, std::complex<float>*, std::size_t, cudaStream_t);
template void convert<double, std::complex<double>>(const double*, std::complex<double>*, std::size_t, cudaStream_t);
template void real_part<float>(const std::complex<float>*, float*, std::size_t, cudaStream_t);
template void real_part<double>(const std::complex<double>*, double*, std::size_t, cudaStream_t);

}  // namespace raw
}  // namespace tprod::backend::cuda
