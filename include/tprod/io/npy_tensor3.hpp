// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file npy_tensor3.hpp
/// @brief tensor3 ⇄ .npy: an (m, n, p) array with the tube index last, as NumPy users hold it, is
/// A(i, j, k) = arr[i, j, k]; an (m, n) array reads as p = 1.
///
/// tensor3's storage is the Fortran order of the (m, n, p) array, so a Fortran-ordered file of the right dtype
/// is read straight into the tensor and writing is a single write of the tensor's memory.
#include <filesystem>
#include <string>

#include "tprod/core/tensor3.hpp"
#include "tprod/io/npy.hpp"

namespace tprod::io {

namespace detail {
/// @brief The (m, n, p) of a 2- or 3-dimensional shape. @throws io_error starting with `name` otherwise.
/// Also refuses shapes no index can address (extents3's limits), whatever the other extents.
inline dextents3 tensor3_extents(const std::vector<std::size_t>& shape, std::string_view name) {
  if (shape.size() != 2 && shape.size() != 3)
    npy_fail(name, "expected an array of shape (m, n, p) or (m, n), got shape " + numpy_shape(shape));
  const std::size_t p = shape.size() == 3 ? shape[2] : 1;
  if (const std::string why = shape_limit_problem(shape[0], shape[1], p); !why.empty())
    npy_fail(name, "shape " + numpy_shape(shape) + " is too large: " + why);
  return {shape[0], shape[1], p};
}
}  // namespace detail

/// @brief The array as an m×n×p tensor of T, converting the dtype without loss (see convert()).
/// @throws io_error starting with `name` for another number of dimensions or a lossy conversion.
template <scalar T>
tensor3<T> to_tensor3(const npy_array& a, std::string_view name = "<array>") {
  const dextents3 e = detail::tensor3_extents(a.shape, name);
  const npy_array converted = convert(a, dtype_of<T>, name);
  const auto& v = converted.values<T>();
  tensor3<T> t(e);
  std::copy(v.begin(), v.end(), t.data());
  return t;
}

/// @brief Reads an (m, n, p) or (m, n) .npy file as a tensor of T (lossless dtype conversions only).
/// @throws io_error naming the file.
template <scalar T>
tensor3<T> read_tensor3(const std::filesystem::path& file) {
  npy_reader reader(file);
  const dextents3 e = detail::tensor3_extents(reader.header().shape, file.string());
  if (reader.header().dtype != dtype_of<T>) return to_tensor3<T>(reader.read(), file.string());
  tensor3<T> t(e, uninitialized);  // every element is read
  reader.read_into(t.data());
  return t;
}

/// @brief The (m, n, p) shape of a tensor.
template <host_tensor3 X>
std::vector<std::size_t> npy_shape(const X& x) {
  const auto v = cview(x);
  return {v.m(), v.n(), v.p()};
}

/// @brief A copy of the tensor as an (m, n, p) array.
template <host_tensor3 X>
npy_array to_npy(const X& x) {
  using T = value_type_of<X>;
  const auto v = cview(x);
  return npy_array(npy_shape(x), std::vector<T>(v.data(), v.data() + v.size()));
}

/// @brief Writes the tensor to an opened atomic_file as an (m, n, p) array of its own dtype.
template <host_tensor3 X>
void write_npy(atomic_file& out, const X& x) {
  write_npy(out, dtype_of<value_type_of<X>>, npy_shape(x), cview(x).data());
}

/// @brief Writes the tensor as an (m, n, p) .npy file of its own dtype, atomically. @throws io_error.
template <host_tensor3 X>
void write_npy(const std::filesystem::path& file, const X& x) {
  write_npy(file, dtype_of<value_type_of<X>>, npy_shape(x), cview(x).data());
}

}  // namespace tprod::io
