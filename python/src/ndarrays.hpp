// SPDX-License-Identifier: Apache-2.0
#pragma once
// NumPy arrays of any number of dimensions in and out of tprod's order-N tensors (ndtensor, column-major: NumPy's
// Fortran order), for the decompositions and the MPO layers, which compute in real arithmetic.
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "tprod/decomp/ndtensor.hpp"

namespace tprod::python {

/// A copy of `a` (of scalar T already, any memory order) as an ndtensor of its shape.
/// @throws ValueError for a 0-dimensional array.
template <real_scalar T>
ndtensor<T> ndtensor_of(const py::array& a, const char* what) {
  if (a.ndim() < 1)
    throw py::value_error(std::string("tprod: ") + what + " is a 0-dimensional array; give an array of 1 or more "
                          "dimensions");
  const auto f = py::array_t<T, py::array::f_style>::ensure(a);
  const nd_shape shape(f.shape(), f.shape() + f.ndim());
  return from_column_major<T>(shape, f.data(), std::size_t(f.size()));
}

/// The tensor as a Fortran-ordered NumPy array that owns it (moved, not copied).
template <real_scalar T>
py::array nd_to_numpy(ndtensor<T>&& x) {
  auto* owned = new ndtensor<T>(std::move(x));
  py::capsule owner(owned, [](void* p) { delete static_cast<ndtensor<T>*>(p); });
  std::vector<py::ssize_t> shape, strides;
  py::ssize_t stride = sizeof(T);
  for (const auto e : owned->shape()) {
    shape.push_back(py::ssize_t(e));
    strides.push_back(stride);
    stride *= py::ssize_t(e);
  }
  return py::array_t<T>(shape, strides, owned->data(), owner);
}

/// A list of Eigen matrices as a list of NumPy arrays.
template <class Matrix>
py::list matrices_to_numpy(const std::vector<Matrix>& ms) {
  py::list out;
  for (const auto& m : ms) out.append(matrix_to_numpy(m));
  return out;
}

}  // namespace tprod::python
