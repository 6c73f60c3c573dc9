// SPDX-License-Identifier: Apache-2.0
// The activation kernels of the CUDA backend (backend/cuda/activation.hpp), the mirror of
// backend/cpu/activation.hpp: one grid-stride pass each, σ and σ' from CUDA's erf, exp and tanh.
#include <cmath>
#include <numbers>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

using kernels::activation;
using namespace detail;

template <class T>
struct value_and_slope {
  T value, slope;  // σ(x), σ'(x)
};

// ReLU'(x) = [x > 0];  GELU'(x) = Φ(x) + x·φ(x);  GELU_tanh'(x) = ½(1 + t) + ½x(1 − t²)·c(1 + 3k·x²);
// tanh'(x) = 1 − tanh²(x).
template <class T>
__device__ value_and_slope<T> evaluate(activation a, T x) {
  switch (a) {
    case activation::relu:
      return {x > T(0) ? x : T(0), x > T(0) ? T(1) : T(0)};
    case activation::gelu: {
      const T phi_cdf = T(0.5) * (T(1) + erf(x * T(1 / std::numbers::sqrt2)));
      const T inv_sqrt2pi = T(0.3989422804014327);  // 1/√(2π)
      return {x * phi_cdf, phi_cdf + x * inv_sqrt2pi * exp(T(-0.5) * x * x)};
    }
    case activation::tanh: {
      const T t = tanh(x);
      return {t, T(1) - t * t};
    }
    default: {                                             // gelu_tanh
      const T c = T(0.7978845608028654), k = T(0.044715);  // √(2/π)
      const T t = tanh(c * (x + k * x * x * x));
      return {T(0.5) * x * (T(1) + t),
              T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * c * (T(1) + T(3) * k * x * x)};
    }
  }
}

template <class T>
__global__ void forward_kernel(activation a, const T* x, T* y, std::size_t n) {
  TPROD_GRID_LOOP(i, n) y[i] = evaluate(a, x[i]).value;
}
template <class T>
__global__ void backward_kernel(activation a, const T* x, const T* g, T* dx, std::size_t n) {
  TPROD_GRID_LOOP(i, n) dx[i] = g[i] * evaluate(a, x[i]).slope;
}
template <class T>
__global__ void keep_derivative_kernel(activation a, T* x, T* y, std::size_t n) {
  TPROD_GRID_LOOP(i, n) {
    const auto v = evaluate(a, x[i]);
    y[i] = v.value;
    x[i] = v.slope;
  }
}
template <class T>
__global__ void multiply_kernel(const T* f, T* y, std::size_t n) {
  TPROD_GRID_LOOP(i, n) y[i] *= f[i];
}

}  // namespace

namespace raw {

template <class T>
void activation_forward(kernels::activation a, const T* x, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  forward_kernel<<<blocks_for(n), 256, 0, stream>>>(a, x, y, n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T>
void activation_backward(kernels::activation a, const T* x, const T* g, T* dx, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  backward_kernel<<<blocks_for(n), 256, 0, stream>>>(a, x, g, dx, n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T>
void activation_keep_derivative(kernels::activation a, T* x, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  keep_derivative_kernel<<<blocks_for(n), 256, 0, stream>>>(a, x, y, n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}
template <class T>
void multiply_elementwise(const T* f, T* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  multiply_kernel<<<blocks_for(n), 256, 0, stream>>>(f, y, n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

#define TPROD_INSTANTIATE(T)                                                                                    \
  template void activation_forward<T>(kernels::activation, const T*, T*, std::size_t, cudaStream_t);            \
  template void activation_backward<T>(kernels::activation, const T*, const T*, T*, std::size_t, cudaStream_t); \
  template void activation_keep_derivative<T>(kernels::activation, T*, T*, std::size_t, cudaStream_t);          \
  template void multiply_elementwise<T>(const T*, T*, std::size_t, cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
