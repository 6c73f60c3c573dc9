// SPDX-License-Identifier: Apache-2.0
// The multi-tensor optimizer kernels of the CUDA backend (backend/cuda/optimizer.hpp), the mirror of
// backend/cpu/optimizer.hpp: the host's table of tensors goes to the device once, and one launch covers them all
// (grid row y = tensor y, a grid-stride loop over its elements in x). A weight's sensitivity Σ|w·g| is one Thrust
// reduction (CUB's, whose tree is fixed for a given size and device: the same sum from run to run).
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/inner_product.h>

#include <vector>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

using namespace detail;

// |a·b| in double: the terms of a weight's sensitivity.
template <class T>
struct abs_product {
  __host__ __device__ double operator()(T a, T b) const { return fabs(double(a) * double(b)); }
};

template <class T>
__global__ void adamw_kernel(const raw::adamw_pointers<T>* slots, kernels::adamw_coefficients<T> c) {
  const raw::adamw_pointers<T> s = slots[blockIdx.y];
  TPROD_GRID_LOOP(i, s.size) {
    const T g = s.grad[i];
    const T m = c.beta1 * s.m[i] + (T(1) - c.beta1) * g;
    const T v = c.beta2 * s.v[i] + (T(1) - c.beta2) * g * g;
    s.m[i] = m;
    s.v[i] = v;
    s.param[i] = c.decay * s.param[i] - c.step * m / (sqrt(v * c.inv_c2) + c.eps);
  }
}

// Block x of row y sums a strided share of tensor y's squares in double into partials[y·gridDim.x + x].
template <class T>
__global__ void squares_kernel(const T* const* tensors, const std::size_t* sizes, double* partials) {
  const T* x = tensors[blockIdx.y];
  const std::size_t n = sizes[blockIdx.y];
  double v = 0;
  for (std::size_t i = blockIdx.x * std::size_t(reduce_threads) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * reduce_threads)
    v += double(x[i]) * double(x[i]);
  block_sum(v, partials + blockIdx.y * gridDim.x + blockIdx.x, 0);
}

constexpr unsigned blocks_per_tensor = 64;

}  // namespace

namespace raw {

template <class T>
void adamw_update(const adamw_pointers<T>* slots, std::size_t count, const kernels::adamw_coefficients<T>& c,
                  cudaStream_t stream) {
  std::size_t largest = 0;
  for (std::size_t i = 0; i < count; ++i) largest = std::max(largest, slots[i].size);
  if (largest == 0) return;
  by_segment_groups(count, [&](std::size_t s0, std::size_t n) {
    const scratch<adamw_pointers<T>> table(n, stream);
    upload(table.ptr, slots + s0, n, stream);
    adamw_kernel<<<dim3(std::min(blocks_for(largest), 4096u), unsigned(n)), 256, 0, stream>>>(table.ptr, c);
    TPROD_CUDA_CHECK(cudaGetLastError());
  });
}

template <class T>
double squared_norm_total(const T* const* tensors, const std::size_t* sizes, std::size_t count, cudaStream_t stream) {
  double total = 0;
  by_segment_groups(count, [&](std::size_t s0, std::size_t n) {
    const scratch<const T*> pointers(n, stream);
    const scratch<std::size_t> lengths(n, stream);
    const scratch<double> partials(n * blocks_per_tensor, stream);
    upload(pointers.ptr, tensors + s0, n, stream);
    upload(lengths.ptr, sizes + s0, n, stream);
    squares_kernel<<<dim3(blocks_per_tensor, unsigned(n)), reduce_threads, 0, stream>>>(pointers.ptr, lengths.ptr,
                                                                                        partials.ptr);
    TPROD_CUDA_CHECK(cudaGetLastError());
    for (double v : fetch(partials.ptr, n * blocks_per_tensor, stream)) total += v;  // in order: deterministic
  });
  return total;
}

template <class T>
double weight_sensitivity(const T* w, const T* g, std::size_t n, cudaStream_t stream) {
  if (n == 0) return 0;
  return thrust::inner_product(thrust::cuda::par.on(stream), w, w + n, g, 0.0, thrust::plus<double>(),
                               abs_product<T>{});
}

#define TPROD_INSTANTIATE(T)                                                                                  \
  template double weight_sensitivity<T>(const T*, const T*, std::size_t, cudaStream_t);                      \
  template void adamw_update<T>(const adamw_pointers<T>*, std::size_t, const kernels::adamw_coefficients<T>&, \
                                cudaStream_t);                                                                \
  template double squared_norm_total<T>(const T* const*, const std::size_t*, std::size_t, cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
