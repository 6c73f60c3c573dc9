// SPDX-License-Identifier: Apache-2.0
#pragma once
// NumPy arrays in and out of tprod's tensors, the dtype and transform dispatch, and the GIL around computation.
//
// tprod stores an m×n×p tensor with offset i + m·(j + n·k), NumPy's Fortran order of an (m, n, p) array. A
// Fortran-ordered array of one of the four scalars is therefore viewed without a copy; any other layout (C
// order, strided slices) is copied once into Fortran order. Results are tprod tensors moved into a capsule that a
// NumPy array of Fortran order owns, so no result is copied either.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <complex>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "tprod/algebra/extern_templates.hpp"  // the kernels come compiled, from tprod::instances
#include "tprod/algebra/rank.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform.hpp"

namespace tprod::python {

namespace py = pybind11;

/// The transforms a Python caller can name: tprod.dct(), tprod.dft(), tprod.identity_transform() and
/// tprod.matrix_transform(Z) with a real or a complex Z.
using any_transform = std::variant<dct, dft, identity_transform, matrix_transform<double>,
                                   matrix_transform<std::complex<double>>>;

/// The Python object behind tprod.Transform.
struct transform_object {
  any_transform policy;
  std::string name() const {
    return std::visit([](const auto& l) { return std::string(l.name()); }, policy);
  }
};

/// The transform a binding uses when the caller names none: the DCT.
inline const transform_object default_transform{dct{}};

/// The four scalars, by NumPy dtype.
enum class scalar_kind { float32, float64, complex64, complex128 };

template <class T>
constexpr const char* dtype_name() {
  if constexpr (std::same_as<T, float>) return "float32";
  else if constexpr (std::same_as<T, double>) return "float64";
  else if constexpr (std::same_as<T, std::complex<float>>) return "complex64";
  else return "complex128";
}

template <class T>
constexpr scalar_kind scalar_of_type() {
  if constexpr (std::same_as<T, float>) return scalar_kind::float32;
  else if constexpr (std::same_as<T, double>) return scalar_kind::float64;
  else if constexpr (std::same_as<T, std::complex<float>>) return scalar_kind::complex64;
  else return scalar_kind::complex128;
}

/// The scalar of `a`, or a TypeError that names the argument and its dtype.
scalar_kind scalar_of(const py::array& a, const char* what);

/// "int64": a dtype's name as NumPy prints it.
inline std::string dtype_text(const py::dtype& d) { return py::cast<std::string>(d.attr("name")); }

/// "(4, 3)": a NumPy shape as Python prints it.
std::string shape_text(const py::array& a);

/// The scalar both operands share, or a TypeError naming both dtypes (tprod does not mix precisions).
scalar_kind common_scalar(const py::array& a, const char* a_name, const py::array& b, const char* b_name);

/// Calls f(std::type_identity<T>{}) with the scalar of `kind`.
template <class F>
decltype(auto) with_scalar(scalar_kind kind, F&& f) {
  switch (kind) {
    case scalar_kind::float32: return f(std::type_identity<float>{});
    case scalar_kind::float64: return f(std::type_identity<double>{});
    case scalar_kind::complex64: return f(std::type_identity<std::complex<float>>{});
    case scalar_kind::complex128: break;
  }
  return f(std::type_identity<std::complex<double>>{});
}

/// A 3-dimensional array of scalar T in Fortran order: `a` itself when it already is one, else a copy.
/// @throws ValueError unless `a` has 3 dimensions (the message names `what` and its shape).
template <class T>
py::array_t<T, py::array::f_style> fortran_array(const py::array& a, const char* what);

/// A read-only tprod view of a Fortran-ordered array (valid while the array lives).
template <class T>
tensor3_view<const T> input_view(const py::array_t<T, py::array::f_style>& a) {
  return tensor3_view<const T>(a.data(), std::size_t(a.shape(0)), std::size_t(a.shape(1)), std::size_t(a.shape(2)));
}

/// The tensor as a Fortran-ordered NumPy array that owns it (moved, not copied).
template <class T, class E>
py::array to_numpy(tensor3<T, E>&& t) {
  auto* owned = new tensor3<T>(std::move(t));
  py::capsule owner(owned, [](void* p) { delete static_cast<tensor3<T>*>(p); });
  const auto m = py::ssize_t(owned->m()), n = py::ssize_t(owned->n()), p = py::ssize_t(owned->p());
  const auto size = py::ssize_t(sizeof(T));
  return py::array_t<T>({m, n, p}, {size, size * m, size * m * n}, owned->data(), owner);
}

/// An Eigen matrix as a 2-dimensional NumPy array (a copy; these are small: singular values, ranks, Z).
template <class Derived>
py::array matrix_to_numpy(const Eigen::MatrixBase<Derived>& m) {
  using T = typename Derived::Scalar;
  py::array_t<T, py::array::f_style> out({py::ssize_t(m.rows()), py::ssize_t(m.cols())});
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>(out.mutable_data(), m.rows(), m.cols()) = m;
  return out;
}

/// An L-SVD's parts as tprod.SVD is built from them: U, S and V through `out` (to_numpy on the host, to_dlpack on
/// the device), σ (host) and the multi-rank.
template <class R, class Out>
py::dict svd_dict(R&& r, Out&& out) {
  py::dict d;
  d["U"] = out(std::move(r.u));
  d["S"] = out(std::move(r.s));
  d["V"] = out(std::move(r.v));
  d["sigma"] = matrix_to_numpy(r.sigma);
  d["kept"] = r.kept;
  return d;
}

/// The ranks as tprod.Ranks is built from them.
inline py::dict rank_dict(const rank_info& r) {
  py::dict d;
  d["tubal_rank"] = r.tubal_rank;
  d["average_rank"] = r.average_rank;
  d["multi_rank"] = r.multi_rank;
  d["tolerance"] = r.tolerance;
  return d;
}

/// A 2-dimensional array of scalar T as an Eigen matrix (a copy), or ValueError naming `what`.
template <class T>
Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> matrix_of(const py::array& a, const char* what);

/// Calls f(std::type_identity<T>{}) for a float32 or float64 array, or raises TypeError naming `what` and `who`
/// ("the decompositions", "the graph filters"): these compute in real arithmetic.
template <class F>
py::object with_real_scalar(const py::array& a, const char* what, const char* who, F&& f) {
  switch (scalar_of(a, what)) {
    case scalar_kind::float32: return f(std::type_identity<float>{});
    case scalar_kind::float64: return f(std::type_identity<double>{});
    default: break;
  }
  throw py::type_error(std::string("tprod: ") + what + " is " + dtype_text(a.dtype()) + "; " + who +
                       " compute in float32 or float64");
}

/// The same scalar as `like`'s, or TypeError naming both (tprod does not mix precisions).
template <class T>
void expect_scalar(const py::array& a, const char* what, const char* like) {
  if (scalar_of(a, what) != scalar_of_type<T>())
    throw py::type_error(std::string("tprod: ") + what + " is " + dtype_text(a.dtype()) + " but " + like + " is " +
                         dtype_name<T>() + "; tprod does not mix scalar types silently: convert one of them");
}

/// Runs f() with the GIL released: the computation needs no Python object, and other Python threads run meanwhile.
template <class F>
decltype(auto) without_gil(F&& f) {
  py::gil_scoped_release release;
  return f();
}

/// The bindings of each part, one translation unit each (they compile in parallel).
void bind_transforms(py::module_& m);
void bind_algebra(py::module_& m);
void bind_factorizations(py::module_& m);
void bind_decompositions(py::module_& m);
void bind_graph(py::module_& m);
void bind_nn(py::module_& m);
void bind_models(py::module_& m);      // with tprod::io (nlohmann-json) only: TPROD_PYTHON_MODELS
void bind_tokenizers(py::module_& m);  // with tprod::text (ICU) only: TPROD_PYTHON_TOKENIZERS
void bind_device(py::module_& m);      // with tprod::cuda only: TPROD_PYTHON_CUDA

}  // namespace tprod::python

namespace tprod::python {

/// Calls f(A, L) with the view of array `a` (named `what` in errors) in its own scalar and the transform's
/// policy; f returns the Python result.
template <class F>
py::object with_input(const py::array& a, const char* what, const transform_object& l, F&& f) {
  return with_scalar(scalar_of(a, what), [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    const auto fa = fortran_array<T>(a, what);
    return std::visit([&](const auto& policy) -> py::object { return f(input_view(fa), policy); }, l.policy);
  });
}

/// Calls f(A, B) with the views of two arrays of one scalar (a TypeError when their dtypes differ).
template <class F>
py::object with_inputs(const py::array& a, const char* a_name, const py::array& b, const char* b_name, F&& f) {
  return with_scalar(common_scalar(a, a_name, b, b_name), [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    const auto fa = fortran_array<T>(a, a_name);
    const auto fb = fortran_array<T>(b, b_name);
    return f(input_view(fa), input_view(fb));
  });
}

/// A transform-domain tensor as Python holds it (tprod.Transformed): the stored slices `data` of the domain
/// scalar, the tube length p of the original tensor, the transform and the original scalar.
struct domain_tensor {
  py::array data;
  std::size_t p;
  const transform_object& transform;
  scalar_kind original;
};

/// The scalar of the dtype a tprod.Transformed records for its original tensor.
inline scalar_kind original_scalar(const py::object& dtype) {
  return scalar_of(py::array(py::dtype::from_args(dtype), {0}, {}), "the original tensor");
}

/// Calls f(std::type_identity<T>{}, policy) for the original scalar T and the transform of a transform-domain
/// tensor, in host or device memory. @throws TypeError for a real T under a complex Z: its transform domain holds
/// the promoted complex tensor.
template <class F>
py::object with_domain_policy(scalar_kind original, const transform_object& l, F&& f) {
  return with_scalar(original, [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    return std::visit(
        [&](const auto& policy) -> py::object {
          using L = std::remove_cvref_t<decltype(policy)>;
          if constexpr (!std::same_as<T, typename L::template original_scalar<T>>) {
            throw py::type_error(std::string("tprod: a ") + dtype_name<T>() + " tensor under the " +
                                 std::string(L::name()) +
                                 " transform with a complex Z is promoted to complex; its transform domain holds the "
                                 "complex tensor");
          } else {
            return f(tag, policy);
          }
        },
        l.policy);
  });
}

/// The checks of the stored slices of a transform-domain tensor of T under policy L, given their scalar (`text`
/// its name) and their number: TypeError when they are not of L's domain scalar, ValueError when their number is
/// not what L stores for p tubes.
template <class T, class L>
void check_domain_scalar(const L&, scalar_kind slices, const std::string& text) {
  using D = typename L::template domain_scalar<T>;
  if (slices != scalar_of_type<D>())
    throw py::type_error(std::string("tprod: the transform-domain slices of a ") + dtype_name<T>() + " tensor under " +
                         std::string(L::name()) + " are " + dtype_name<D>() + ", not " + text);
}
template <class T, class L>
void check_stored_slices(const L& policy, std::size_t p, std::size_t count) {
  const std::size_t stored = policy.template stored_slices<T>(p);
  if (count != stored)
    throw py::value_error("tprod: " + std::string(L::name()) + " stores " + std::to_string(stored) +
                          " transform-domain slices for p = " + std::to_string(p) + ", but " + std::to_string(count) +
                          " were given");
}

/// Rebuilds the C++ transformed<T, L> of a domain_tensor (a copy of its slices) and calls f with it.
/// @throws TypeError when the slices' dtype is not the domain scalar of (original scalar, transform), ValueError
/// when their count is not what the transform stores for p tubes.
template <class F>
py::object with_transformed(const domain_tensor& x, F&& f) {
  return with_domain_policy(x.original, x.transform, [&](auto tag, const auto& policy) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    using L = std::remove_cvref_t<decltype(policy)>;
    using D = typename L::template domain_scalar<T>;
    check_domain_scalar<T>(policy, scalar_of(x.data, "the transform-domain slices"), dtype_text(x.data.dtype()));
    const auto slices = fortran_array<D>(x.data, "the transform-domain slices");
    check_stored_slices<T>(policy, x.p, std::size_t(slices.shape(2)));
    tensor3<D> copy(input_view(slices));
    transformed<T, L> hat(dextents3(copy.m(), copy.n(), x.p), policy, std::move(copy));
    return f(hat);
  });
}

}  // namespace tprod::python
