// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file ndtensor.hpp
/// @brief ndtensor<T>: the order-N tensor of the decompositions, and what every decomposition needs of it.
///
/// Storage (a choice of this area, consistent with tensor3's pinned storage): **column-major**, the first index
/// varies fastest, offset(i_1, …, i_N) = i_1 + I_1·(i_2 + I_2·(… + I_{N−1}·i_N)) — NumPy's Fortran order.
/// Why: (1) an order-3 ndtensor and a tensor3 share the same memory layout, so conversions are plain copies;
/// (2) Kolda–Bader unfoldings order their columns with earlier modes varying fastest, which makes the
/// mode-1 unfolding X_(1) and the transposed last unfolding X_(N)ᵀ free Eigen::Map views of the data;
/// (3) Tensor-Train and MPO cores R_{n−1}×I_n×R_n reshape into the matrices TT-SVD needs without copies.
/// Modes are numbered from 0 in code (mode n of the papers is `n − 1` here).
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>
// xtensor 0.26 moved its headers into folders (xtensor/containers/xarray.hpp); 0.24 and 0.25 have them flat.
#if __has_include(<xtensor/containers/xarray.hpp>)
#include <xtensor/containers/xarray.hpp>
#else
#include <xtensor/xarray.hpp>
#endif

#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/core/error.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod {

/// @brief float or double: the scalars the decompositions compute with.
template <class T>
concept real_scalar = std::same_as<T, float> || std::same_as<T, double>;

/// @brief An order-N tensor in column-major (first index fastest) storage.
///
/// Its memory is aligned as Eigen aligns its own matrices (Eigen::aligned_allocator). Why: the decompositions
/// map this memory as Eigen matrices, and Eigen's vectorized reductions (norms, dots) start with the elements
/// before the first aligned packet, so with xtensor's default allocator (16 bytes) their last bits depended on
/// where the heap put the tensor: the same call with the same seed could differ in the last digit.
template <real_scalar T>
using ndtensor = xt::xarray<T, xt::layout_type::column_major, Eigen::aligned_allocator<T>>;

/// @brief The shape of an ndtensor: (I_1, …, I_N).
using nd_shape = std::vector<std::size_t>;

/// @brief A dense column-major Eigen matrix (factor matrices, unfoldings): the one the whole library uses.
using detail::dense_matrix;

/// @brief A dense Eigen column vector.
template <real_scalar T>
using dense_vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

namespace detail {


inline std::size_t product(const nd_shape& shape, std::size_t first, std::size_t last) {
  std::size_t p = 1;
  for (std::size_t n = first; n < last; ++n) p *= shape[n];
  return p;
}

inline std::size_t product(const nd_shape& shape) { return product(shape, 0, shape.size()); }

/// Throws unless every mode has at least one element (an empty mode has no unfolding or SVD).
inline void expect_nonempty(const nd_shape& shape, const char* where) {
  TPROD_EXPECTS(!shape.empty(), std::string(where) + ": the tensor has no modes (order 0)");
  for (std::size_t n = 0; n < shape.size(); ++n)
    TPROD_EXPECTS(shape[n] > 0, std::string(where) + ": mode " + std::to_string(n) + " of shape " +
                                    shape_string(shape) + " is empty");
}

inline void expect_mode(std::size_t mode, const nd_shape& shape, const char* where) {
  TPROD_EXPECTS(mode < shape.size(), std::string(where) + ": mode " + std::to_string(mode) +
                                         " is out of range for a tensor of shape " + shape_string(shape) +
                                         " (modes are numbered from 0)");
}

/// All elements as one contiguous vector.
template <real_scalar T>
Eigen::Map<const dense_vector<T>> elements(const ndtensor<T>& x) {
  return {x.data(), Eigen::Index(x.size())};
}
template <real_scalar T>
Eigen::Map<dense_vector<T>> elements(ndtensor<T>& x) {
  return {x.data(), Eigen::Index(x.size())};
}

/// The data viewed as a rows×cols column-major matrix (rows·cols must equal the size).
template <real_scalar T>
Eigen::Map<const dense_matrix<T>> as_matrix(const ndtensor<T>& x, std::size_t rows, std::size_t cols) {
  TPROD_ASSERT(rows * cols == x.size());
  return {x.data(), Eigen::Index(rows), Eigen::Index(cols)};
}
template <real_scalar T>
Eigen::Map<dense_matrix<T>> as_matrix(ndtensor<T>& x, std::size_t rows, std::size_t cols) {
  TPROD_ASSERT(rows * cols == x.size());
  return {x.data(), Eigen::Index(rows), Eigen::Index(cols)};
}

/// ‖x‖_F accumulated in double (float data keeps full accuracy on large tensors).
template <real_scalar T>
double frobenius(const ndtensor<T>& x) {
  return std::sqrt(elements(x).template cast<double>().squaredNorm());
}

/// Throws numerical_error naming `where` unless every element of x is finite: NaN or Inf cannot mean anything
/// to a decomposition, and would come back as NaN factors and errors.
template <real_scalar T>
void expect_finite(const ndtensor<T>& x, const char* where) {
  if (!elements(x).allFinite())
    throw numerical_error(std::string(where) + ": the tensor holds NaN or Inf; decompositions need finite data");
}

/// Throws numerical_error naming `where` unless an Eigen factorization reports success.
template <class Factorization>
void expect_success(const Factorization& f, const char* where) {
  if (f.info() != Eigen::Success)
    throw numerical_error(std::string(where) + ": the SVD did not converge (non-finite or extreme values)");
}

/// ‖x − y‖_F/‖norm_x‖ accumulated in double; 0 when both are zero.
template <real_scalar T>
double relative_difference(const ndtensor<T>& x, const ndtensor<T>& y, double norm_x) {
  const double diff =
      std::sqrt((elements(x).template cast<double>() - elements(y).template cast<double>()).squaredNorm());
  return norm_x == 0 ? (diff == 0 ? 0.0 : std::numeric_limits<double>::infinity()) : diff / norm_x;
}

}  // namespace detail

/// @brief The shape (I_1, …, I_N) of an ndtensor as a vector.
template <real_scalar T>
nd_shape shape_of(const ndtensor<T>& x) {
  return nd_shape(x.shape().begin(), x.shape().end());
}

/// @brief A zero-filled tensor of the given shape.
template <real_scalar T>
ndtensor<T> zeros(const nd_shape& shape) {
  ndtensor<T> x = ndtensor<T>::from_shape(shape);
  std::fill(x.data(), x.data() + x.size(), T(0));
  return x;
}

/// @brief A tensor of the given shape holding a copy of `data` (column-major order).
/// @throws shape_error when data's length differs from the product of the shape.
template <real_scalar T>
ndtensor<T> from_column_major(const nd_shape& shape, const T* data, std::size_t length) {
  TPROD_EXPECTS(detail::product(shape) == length, "from_column_major: " + std::to_string(length) +
                                                      " values do not fill shape " + shape_string(shape));
  ndtensor<T> x = ndtensor<T>::from_shape(shape);
  std::copy(data, data + length, x.data());
  return x;
}

/// @brief The same elements under another shape of equal size (column-major reinterpretation, one copy).
/// @throws shape_error when the sizes differ.
template <real_scalar T>
ndtensor<T> reshaped(const ndtensor<T>& x, const nd_shape& shape) {
  TPROD_EXPECTS(detail::product(shape) == x.size(), "reshaped: a tensor of shape " + shape_string(shape_of(x)) +
                                                        " cannot be viewed as shape " + shape_string(shape));
  return from_column_major<T>(shape, x.data(), x.size());
}

namespace detail {
/// The shape of x with permuted modes (mode k is mode perm[k] of `shape`).
/// @throws shape_error unless perm is a permutation of 0…N−1.
inline nd_shape permuted_shape(const nd_shape& shape, const std::vector<std::size_t>& perm) {
  const std::size_t order = shape.size();
  std::vector<bool> seen(order, false);
  TPROD_EXPECTS(perm.size() == order, "permuted: " + std::to_string(perm.size()) +
                                          " axes given for a tensor of shape " + shape_string(shape));
  nd_shape out;
  for (const std::size_t p : perm) {
    TPROD_EXPECTS(p < order && !seen[p], "permuted: the axes are not a permutation of 0…" +
                                             std::to_string(order - 1) + " (shape " + shape_string(shape) + ")");
    seen[p] = true;
    out.push_back(shape[p]);
  }
  return out;
}
}  // namespace detail

/// @brief The tensor with permuted modes: mode k of the result is mode perm[k] of x (like numpy.transpose), by the
///        CPU backend's permute_modes task.
/// @throws shape_error unless perm is a permutation of 0…N−1.
template <real_scalar T>
ndtensor<T> permuted(const ndtensor<T>& x, const std::vector<std::size_t>& perm) {
  const nd_shape sx = shape_of(x);
  ndtensor<T> y = ndtensor<T>::from_shape(detail::permuted_shape(sx, perm));
  permute_modes(detail::system_of<host_space>(), tensor3_view<const T>(x.data(), x.size(), 1, 1), sx, perm,
                tensor3_view<T>(y.data(), y.size(), 1, 1));
  return y;
}

/// @brief A tensor with i.i.d. entries uniform in [−1, 1] (seeded; for tests, benchmarks and examples).
template <real_scalar T>
ndtensor<T> random_ndtensor(const nd_shape& shape, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<T> uniform(T(-1), T(1));
  ndtensor<T> x = ndtensor<T>::from_shape(shape);
  for (std::size_t e = 0; e < x.size(); ++e) x.data()[e] = uniform(engine);
  return x;
}

/// @brief An m×n matrix with i.i.d. entries uniform in [−1, 1] (seeded).
template <real_scalar T>
dense_matrix<T> random_matrix(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  const ndtensor<T> x = random_ndtensor<T>({rows, cols}, seed);
  return detail::as_matrix(x, rows, cols);
}

/// @brief The order-3 ndtensor holding a copy of a tensor3 (same layout: offset i + m·(j + n·k)).
template <host_tensor3 X>
  requires real_scalar<value_type_of<X>>
ndtensor<value_type_of<X>> to_ndtensor(const X& a) {
  const auto v = cview(a);
  return from_column_major<value_type_of<X>>({v.m(), v.n(), v.p()}, v.data(), v.size());
}

/// @brief The tensor3 holding a copy of an order-3 ndtensor.
/// @throws shape_error when x is not of order 3.
template <real_scalar T>
tensor3<T> to_tensor3(const ndtensor<T>& x) {
  TPROD_EXPECTS(x.dimension() == 3, "to_tensor3: a tensor of shape " + shape_string(shape_of(x)) +
                                        " is not of order 3");
  tensor3<T> a(x.shape()[0], x.shape()[1], x.shape()[2]);
  std::copy(x.data(), x.data() + x.size(), a.data());
  return a;
}

}  // namespace tprod
