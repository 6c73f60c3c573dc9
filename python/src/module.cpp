// SPDX-License-Identifier: Apache-2.0
// The extension module tprod._tprod: array conversion, the transforms, the library's errors as Python
// exceptions, threads and version. The algebra and the factorizations are bound in their own files.
#include <sstream>

#include "arrays.hpp"
#include "tprod/core/execution.hpp"
#include "tprod/core/error.hpp"
#include "tprod/version.hpp"

namespace tprod::python {

scalar_kind scalar_of(const py::array& a, const char* what) {
  // By kind and size rather than dtype identity, so that equal dtypes made elsewhere (a subclass, an explicit
  // little-endian '<f8') count too; big-endian data is refused.
  const py::dtype d = a.dtype();
  const char kind = d.kind();
  const auto bytes = d.itemsize();
  if (d.byteorder() != '>' && kind == 'f' && bytes == 4) return scalar_kind::float32;
  if (d.byteorder() != '>' && kind == 'f' && bytes == 8) return scalar_kind::float64;
  if (d.byteorder() != '>' && kind == 'c' && bytes == 8) return scalar_kind::complex64;
  if (d.byteorder() != '>' && kind == 'c' && bytes == 16) return scalar_kind::complex128;
  throw py::type_error(std::string("tprod: ") + what + " has dtype " + dtype_text(d) +
                       "; tprod computes in float32, float64, complex64 or complex128 (convert it first, e.g. "
                       "a.astype(numpy.float64))");
}

scalar_kind common_scalar(const py::array& a, const char* a_name, const py::array& b, const char* b_name) {
  const scalar_kind sa = scalar_of(a, a_name), sb = scalar_of(b, b_name);
  if (sa != sb)
    throw py::type_error(std::string("tprod: ") + a_name + " is " + dtype_text(a.dtype()) + " and " +
                         b_name + " is " + dtype_text(b.dtype()) +
                         "; tprod does not mix scalar types silently: convert one of them");
  return sa;
}

std::string shape_text(const py::array& a) {
  std::ostringstream s;
  s << '(';
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s << (i ? ", " : "") << a.shape(i);
  s << (a.ndim() == 1 ? ",)" : ")");
  return s.str();
}

template <class T>
py::array_t<T, py::array::f_style> fortran_array(const py::array& a, const char* what) {
  if (a.ndim() != 3)
    throw py::value_error(std::string("tprod: ") + what + " has shape " + shape_text(a) +
                          "; a third-order tensor is an array of 3 dimensions (m, n, p), p the tube length");
  return py::array_t<T, py::array::f_style>::ensure(a);
}
template py::array_t<float, py::array::f_style> fortran_array<float>(const py::array&, const char*);
template py::array_t<double, py::array::f_style> fortran_array<double>(const py::array&, const char*);
template py::array_t<std::complex<float>, py::array::f_style> fortran_array<std::complex<float>>(const py::array&,
                                                                                               const char*);
template py::array_t<std::complex<double>, py::array::f_style> fortran_array<std::complex<double>>(const py::array&,
                                                                                                 const char*);

template <class T>
Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> matrix_of(const py::array& a, const char* what) {
  if (a.ndim() != 2)
    throw py::value_error(std::string("tprod: ") + what + " has shape " + shape_text(a) + "; it must be a matrix");
  const auto f = py::array_t<T, py::array::f_style | py::array::forcecast>::ensure(a);
  return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>>(f.data(), f.shape(0), f.shape(1));
}
template Eigen::MatrixXd matrix_of<double>(const py::array&, const char*);
template Eigen::MatrixXcd matrix_of<std::complex<double>>(const py::array&, const char*);
template Eigen::MatrixXf matrix_of<float>(const py::array&, const char*);
template Eigen::MatrixXcf matrix_of<std::complex<float>>(const py::array&, const char*);

void bind_transforms(py::module_& m) {
  py::class_<transform_object>(m, "Transform",
                               "A transform along the tubes: create one with tprod.dct(), tprod.dft(), "
                               "tprod.identity_transform() or tprod.matrix_transform(Z).")
      .def_property_readonly("name", &transform_object::name, "'dct', 'dft', 'identity' or 'matrix'")
      .def_property_readonly(
          "matrix",
          [](const transform_object& t) -> py::object {
            if (const auto* z = std::get_if<matrix_transform<double>>(&t.policy)) return matrix_to_numpy(z->matrix());
            if (const auto* z = std::get_if<matrix_transform<std::complex<double>>>(&t.policy))
              return matrix_to_numpy(z->matrix());
            return py::none();
          },
          "Z of a matrix transform (a copy), None for the others")
      .def_property_readonly(
          "is_real", [](const transform_object& t) { return std::visit([](const auto& l) { return l.is_real(); }, t.policy); },
          "True when Z is real (dct, identity, a real matrix), so real tensors stay real in the transform domain "
          "(the dft's transform domain is complex even so)")
      .def("stored_slices",
           [](const transform_object& t, std::size_t p, bool real_tensor) {
             return std::visit(
                 [&](const auto& l) {
                   l.check_size(p);
                   return real_tensor ? l.template stored_slices<double>(p)
                                      : l.template stored_slices<std::complex<double>>(p);
                 },
                 t.policy);
           },
           py::arg("p"), py::arg("real") = true,
           "How many transform-domain slices a tensor of p tubes keeps (the dft keeps p // 2 + 1 of a real one)")
      .def("__repr__", [](const transform_object& t) {
        if (const auto* z = std::get_if<matrix_transform<double>>(&t.policy))
          return "tprod.matrix_transform(<" + std::to_string(z->matrix().rows()) + "x" +
                 std::to_string(z->matrix().cols()) + " real Z>)";
        if (const auto* z = std::get_if<matrix_transform<std::complex<double>>>(&t.policy))
          return "tprod.matrix_transform(<" + std::to_string(z->matrix().rows()) + "x" +
                 std::to_string(z->matrix().cols()) + " complex Z>)";
        const std::string n = t.name();
        return "tprod." + (n == "identity" ? std::string("identity_transform") : n) + "()";
      });

  m.def("dct", [] { return transform_object{dct{}}; },
        "The orthonormal DCT-II along the tubes (the cosine product), as scipy.fft.dct(..., norm='ortho')");
  m.def("dft", [] { return transform_object{dft{}}; },
        "The DFT along the tubes (the t-product); a real tensor keeps p // 2 + 1 complex slices");
  m.def("identity_transform", [] { return transform_object{identity_transform{}}; },
        "Z = I: the L-product is the facewise product");
  m.def(
      "matrix_transform",
      [](const py::array& z, double max_condition) {
        const bool complex_z = z.dtype().kind() == 'c';
        if (z.dtype().kind() != 'f' && z.dtype().kind() != 'c' && z.dtype().kind() != 'i' && z.dtype().kind() != 'u')
          throw py::type_error("tprod.matrix_transform: Z has dtype " + dtype_text(z.dtype()) +
                               "; it must be a real or complex matrix");
        if (z.ndim() != 2 || z.shape(0) != z.shape(1) || z.shape(0) == 0)
          throw py::value_error("tprod.matrix_transform: Z has shape " + shape_text(z) +
                                "; it must be a square p×p matrix with p ≥ 1");
        if (complex_z)
          return transform_object{matrix_transform<std::complex<double>>(matrix_of<std::complex<double>>(z, "Z"),
                                                                         max_condition)};
        return transform_object{matrix_transform<double>(matrix_of<double>(z, "Z"), max_condition)};
      },
      py::arg("Z"), py::arg("max_condition") = -1.0,
      "The transform A ×₃ Z for an invertible p×p matrix Z (real or complex, held in double precision). Z is "
      "refused when singular or when its condition estimate exceeds max_condition (default ε^(−1/4) ≈ 8192).");
}

}  // namespace tprod::python

PYBIND11_MODULE(_tprod, m) {
  namespace py = pybind11;
  using namespace tprod::python;
  m.doc() = "tprod's C++ kernels (use the package tprod, which wraps this module)";
  m.attr("__version__") = std::string(tprod::version_string);

  // The library's errors: shapes, arguments and numerical failures are ValueErrors, a missing file an OSError.
  static py::exception<tprod::shape_error> shape_error(m, "ShapeError", PyExc_ValueError);
  static py::exception<tprod::numerical_error> numerical_error(m, "NumericalError", PyExc_ValueError);
  shape_error.attr("__doc__") =
      "Shapes that do not fit (a ValueError): the message names both shapes, or the transform that cannot act on "
      "p tubes";
  numerical_error.attr("__doc__") =
      "A numerical failure (a ValueError): a singular slice, a singular or ill-conditioned Z, NaN or Inf in a "
      "factorization's input";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tprod::shape_error& e) {
      PyErr_SetString(shape_error.ptr(), e.what());
    } catch (const tprod::transform_mismatch_error& e) {
      PyErr_SetString(shape_error.ptr(), e.what());
    } catch (const tprod::numerical_error& e) {
      PyErr_SetString(numerical_error.ptr(), e.what());
    } catch (const tprod::argument_error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const tprod::io_error& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  m.def(
      "set_num_threads",
      [](std::size_t n) {
        if (n == 0) throw py::value_error("tprod.set_num_threads: n = 0; give at least one thread");
        tprod::set_num_threads(n);
      },
      py::arg("n"),
        "Sets the number of threads tprod's kernels use (n >= 1)");
  m.def("num_threads", [] { return tprod::num_threads(); }, "The number of threads tprod's kernels use");

  bind_transforms(m);
  bind_algebra(m);
  bind_factorizations(m);
  bind_decompositions(m);
  bind_graph(m);
  bind_nn(m);
#ifdef TPROD_PYTHON_MODELS
  bind_models(m);
#endif
#ifdef TPROD_PYTHON_TOKENIZERS
  bind_tokenizers(m);
#endif
#ifdef TPROD_PYTHON_CUDA
  bind_device(m);
#endif
}
