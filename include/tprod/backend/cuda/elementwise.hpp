// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file elementwise.hpp
/// @brief The CUDA backend's elementwise and reduction tasks (contract: backend/kernels/elementwise.hpp), the
/// mirror of backend/cpu/elementwise.hpp, over the kernels of src/cuda/elementwise.cu.
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/core/config.hpp"
#include "tprod/backend/cuda/system.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cuda {

template <class T>
using dview = tensor3_view<T, dextents3, device_space>;

template <class T>
void fill(const system& sys, dview<T> x, const T& value) {
  raw::fill(x.data(), x.size(), value, sys.stream());
}
template <class U, class T>
void convert(const system& sys, dview<const U> x, dview<T> y) {
  raw::convert(x.data(), y.data(), x.size(), sys.stream());
}
template <class T>
void copy(const system& sys, dview<const T> x, dview<T> y) {
  raw::copy_bytes(y.data(), x.data(), x.size() * sizeof(T), raw::direction::device_to_device, sys.stream());
}
template <class T>
void axpy(const system& sys, const T& alpha, dview<const T> x, dview<T> y) {
  raw::axpy(alpha, x.data(), y.data(), x.size(), sys.stream());
}
template <class T>
void scale(const system& sys, const T& alpha, dview<T> x) {
  raw::scale(alpha, x.data(), x.size(), sys.stream());
}
template <class T>
bool all_finite(const system& sys, dview<const T> x) {
  return raw::all_finite(x.data(), x.size(), sys.stream());
}
/// @brief ‖x‖_F, accumulated in double.
template <class T>
real_t<T> frobenius_norm(const system& sys, dview<const T> x) {
  double sum = 0;
  raw::block_squared_norms(x.data(), x.size(), x.size() == 0 ? 0 : 1, &sum, sys.stream());
  return real_t<T>(std::sqrt(sum));
}
template <class T>
T dot(const system& sys, dview<const T> x, dview<const T> y) {
  T sum{};
  raw::block_dots(x.data(), y.data(), x.size(), x.size() == 0 ? 0 : 1, &sum, sys.stream());
  return sum;
}
template <class T>
std::vector<double> slice_squared_norms(const system& sys, dview<const T> x) {
  std::vector<double> out(x.size() == 0 ? 0 : x.p());
  raw::block_squared_norms(x.data(), x.m() * x.n(), out.size(), out.data(), sys.stream());
  return out;
}
template <class T>
std::vector<T> slice_dots(const system& sys, dview<const T> x, dview<const T> y) {
  std::vector<T> out(x.size() == 0 ? 0 : x.p());
  raw::block_dots(x.data(), y.data(), x.m() * x.n(), out.size(), out.data(), sys.stream());
  return out;
}
template <class T>
void adjoint_slices(const system& sys, dview<const T> a, dview<T> at) {
  raw::adjoint_slices(a.data(), at.data(), a.m(), a.n(), a.size() == 0 ? 0 : a.p(), sys.stream());
}
template <class T>
void identity_slices(const system& sys, dview<T> x) {
  raw::identity_slices(x.data(), x.m(), x.n(), x.size() == 0 ? 0 : x.p(), sys.stream());
}
template <class T>
void permute_modes(const system& sys, dview<const T> x, std::span<const std::size_t> shape,
                   std::span<const std::size_t> perm, dview<T> y) {
  TPROD_EXPECTS(shape.size() <= raw::max_permuted_modes,
                "permute_modes: the device permutes tensors of at most " + std::to_string(raw::max_permuted_modes) +
                    " modes, not " + std::to_string(shape.size()));
  raw::permute_modes(x.data(), shape.data(), perm.data(), shape.size(), y.data(), y.size(), sys.stream());
}

}  // namespace tprod::backend::cuda
