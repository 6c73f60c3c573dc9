// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file elementwise.hpp
/// @brief The CPU backend's elementwise and reduction tasks (contract: backend/kernels/elementwise.hpp):
/// fill, copy and convert, y += α·x, x *= α, all-finite, ‖x‖_F, ⟨x, y⟩, per-slice squared norms and inner
/// products, slice-wise adjoints and identities. Eigen on the element arrays; the slice loops are cheap.
#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "tprod/backend/cpu/parallel.hpp"
#include "tprod/backend/cpu/system.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod::backend::cpu {

namespace detail {
template <class T>
auto vec(tensor3_view<T> x) {
  using V = Eigen::Matrix<std::remove_const_t<T>, Eigen::Dynamic, 1>;
  return Eigen::Map<std::conditional_t<std::is_const_v<T>, const V, V>>(x.data(), Eigen::Index(x.size()));
}
/// The elements as an Eigen array (for coefficient-wise expressions).
template <class T>
auto array(tensor3_view<T> x) {
  using A = Eigen::Array<std::remove_const_t<T>, Eigen::Dynamic, 1>;
  return Eigen::Map<std::conditional_t<std::is_const_v<T>, const A, A>>(x.data(), Eigen::Index(x.size()));
}
}  // namespace detail

/// @brief x(i, j, k) = value for every element.
template <class T>
void fill(const system&, tensor3_view<T> x, const T& value) {
  std::fill(x.data(), x.data() + x.size(), value);
}

/// @brief y = x, converting the scalar (real to complex, or the same type) on the way.
template <class U, class T>
void convert(const system&, tensor3_view<const U> x, tensor3_view<T> y) {
  std::copy(x.data(), x.data() + x.size(), y.data());
}

/// @brief y = x.
template <class T>
void copy(const system& sys, tensor3_view<const T> x, tensor3_view<T> y) {
  convert<T, T>(sys, x, y);
}

/// @brief y += α·x.
template <class T>
void axpy(const system&, const T& alpha, tensor3_view<const T> x, tensor3_view<T> y) {
  detail::vec(y) += alpha * detail::vec(x);
}

/// @brief x *= α.
template <class T>
void scale(const system&, const T& alpha, tensor3_view<T> x) {
  detail::vec(x) *= alpha;
}

/// @brief Whether no element is NaN or ±Inf.
template <class T>
bool all_finite(const system&, tensor3_view<const T> x) {
  return detail::vec(x).allFinite();
}

/// @brief ‖x‖_F = √(Σ|x|²) (Eigen's scaled norm).
template <class T>
real_t<T> frobenius_norm(const system&, tensor3_view<const T> x) {
  return detail::vec(x).norm();
}

/// @brief ⟨x, y⟩ = Σ conj(x)·y.
template <class T>
T dot(const system&, tensor3_view<const T> x, tensor3_view<const T> y) {
  return detail::vec(x).dot(detail::vec(y));
}

/// @brief ‖x(:, :, k)‖²_F for every slice k, in double.
template <class T>
std::vector<double> slice_squared_norms(const system&, tensor3_view<const T> x) {
  std::vector<double> out(x.size() == 0 ? 0 : x.p());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = double(x.slice(k).squaredNorm());
  return out;
}

/// @brief Σ_ij conj(x(i, j, k))·y(i, j, k) for every slice k.
template <class T>
std::vector<T> slice_dots(const system&, tensor3_view<const T> x, tensor3_view<const T> y) {
  std::vector<T> out(x.size() == 0 ? 0 : x.p());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = (x.slice(k).array().conjugate() * y.slice(k).array()).sum();
  return out;
}

/// @brief at(:, :, k) = a(:, :, k)ᴴ for every slice k (at is n×m×p).
template <class T>
void adjoint_slices(const system&, tensor3_view<const T> a, tensor3_view<T> at) {
  if (a.size() == 0) return;  // work follows the data: an empty tensor's p may be up to 2^63 − 1
  for (std::size_t k = 0; k < a.p(); ++k) at.slice(k) = a.slice(k).adjoint();
}

/// @brief x(:, :, k) = I for every slice k (x is m×n×p; ones where i = j).
template <class T>
void identity_slices(const system&, tensor3_view<T> x) {
  if (x.size() == 0) return;
  for (std::size_t k = 0; k < x.p(); ++k) x.slice(k).setIdentity();
}

/// @brief y = x with its modes reordered (y's mode k is x's mode perm[k]): an odometer over y, first index fastest,
/// stepping through x by the stride of the mode each index of y runs over.
template <class T>
void permute_modes(const system&, tensor3_view<const T> x, std::span<const std::size_t> shape,
                   std::span<const std::size_t> perm, tensor3_view<T> y) {
  const std::size_t order = shape.size();
  std::vector<std::size_t> sy(order), step(order), index(order, 0);
  for (std::size_t k = 0; k < order; ++k) {
    sy[k] = shape[perm[k]];
    step[k] = 1;
    for (std::size_t n = 0; n < perm[k]; ++n) step[k] *= shape[n];  // x's stride of mode perm[k]
  }
  const T* in = x.data();
  T* out = y.data();
  std::size_t offset = 0;
  for (std::size_t e = 0; e < y.size(); ++e) {
    out[e] = in[offset];
    for (std::size_t k = 0; k < order; ++k) {
      offset += step[k];
      if (++index[k] < sy[k]) break;
      offset -= step[k] * sy[k];
      index[k] = 0;
    }
  }
}

}  // namespace tprod::backend::cpu
