// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file activation.hpp
/// @brief The CUDA backend's activation tasks (contract: backend/kernels/activation.hpp), the mirror of
/// backend/cpu/activation.hpp, over the kernels of src/cuda/activation.cu.
#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/elementwise.hpp"

namespace tprod::backend::cuda {

using kernels::activation;

template <class T>
void activation_forward(const system& sys, activation a, dview<const T> x, dview<T> y) {
  raw::activation_forward(a, x.data(), y.data(), x.size(), sys.stream());
}
template <class T>
void activation_backward(const system& sys, activation a, dview<const T> x, dview<const T> g, dview<T> dx) {
  raw::activation_backward(a, x.data(), g.data(), dx.data(), x.size(), sys.stream());
}
template <class T>
void activation_keep_derivative(const system& sys, activation a, dview<T> x_to_derivative, dview<T> y) {
  raw::activation_keep_derivative(a, x_to_derivative.data(), y.data(), y.size(), sys.stream());
}
template <class T>
void multiply_elementwise(const system& sys, dview<const T> f, dview<T> y) {
  raw::multiply_elementwise(f.data(), y.data(), y.size(), sys.stream());
}

}  // namespace tprod::backend::cuda
