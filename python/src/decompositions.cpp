// SPDX-License-Identifier: Apache-2.0
// The decompositions of order-N tensors from Python: Tucker (HOSVD, ST-HOSVD, HOOI), Tensor-Train (TT-SVD) and
// CP (ALS), on NumPy arrays of float32 or float64 of any number of dimensions. tprod's ndtensor is column-major
// (NumPy's Fortran order), so arrays are read as Fortran arrays and results come back in Fortran order. The
// package's tprod.hosvd, … wrap the dictionaries returned here in result objects.
#include "arrays.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/extern_templates.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"

namespace tprod::python {

namespace {

/// Calls f(std::type_identity<T>{}) for a float32 or float64 array, or raises TypeError: the decompositions
/// compute in real arithmetic.
template <class F>
py::object with_real_scalar(const py::array& a, const char* what, F&& f) {
  switch (scalar_of(a, what)) {
    case scalar_kind::float32: return f(std::type_identity<float>{});
    case scalar_kind::float64: return f(std::type_identity<double>{});
    default: break;
  }
  throw py::type_error(std::string("tprod: ") + what + " is " + dtype_text(a.dtype()) +
                       "; the decompositions compute in float32 or float64");
}

template <real_scalar T>
ndtensor<T> ndtensor_of(const py::array& a, const char* what) {
  if (a.ndim() < 1)
    throw py::value_error(std::string("tprod: ") + what + " is a 0-dimensional array; decompose an array of 1 or "
                          "more dimensions");
  const auto f = py::array_t<T, py::array::f_style>::ensure(a);
  const nd_shape shape(f.shape(), f.shape() + f.ndim());
  return from_column_major<T>(shape, f.data(), std::size_t(f.size()));
}

/// Calls f(X) with the array as an ndtensor of its own scalar (float or double).
template <class F>
py::object with_ndtensor(const py::array& x, F&& f) {
  return with_real_scalar(x, "X", [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    return f(ndtensor_of<T>(x, "X"));
  });
}

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

template <real_scalar T>
py::list matrices(const std::vector<dense_matrix<T>>& ms) {
  py::list out;
  for (const auto& m : ms) out.append(matrix_to_numpy(m));
  return out;
}

}  // namespace

void bind_decompositions(py::module_& m) {
  m.def(
      "_tucker",
      [](const py::array& x, const std::string& method, std::vector<std::size_t> ranks, double tolerance,
         std::vector<std::size_t> modes, std::size_t max_sweeps, double fit_tolerance) {
        if (method != "hosvd" && method != "st_hosvd" && method != "hooi")
          throw py::value_error("tprod: unknown Tucker method '" + method + "' (hosvd, st_hosvd or hooi)");
        return with_ndtensor(x, [&](const auto& xt) -> py::object {
          using T = typename std::remove_cvref_t<decltype(xt)>::value_type;
          tucker_options opt;
          opt.ranks = ranks;
          opt.tolerance = tolerance;
          opt.modes = modes;
          opt.max_sweeps = max_sweeps;
          opt.fit_tolerance = fit_tolerance;
          tucker_result<T> r = without_gil([&] {
            return method == "hosvd" ? hosvd(xt, opt) : method == "st_hosvd" ? st_hosvd(xt, opt) : hooi(xt, opt);
          });
          py::dict d;
          d["factors"] = matrices(r.factors);
          d["core"] = nd_to_numpy(std::move(r.core));
          d["modes"] = r.modes;
          d["relative_error"] = r.relative_error;
          d["compression_ratio"] = r.compression_ratio;
          d["fit_history"] = r.fit_history;
          d["sweeps"] = r.sweeps;
          return d;
        });
      },
      py::arg("X"), py::arg("method"), py::arg("ranks"), py::arg("tolerance"), py::arg("modes"),
      py::arg("max_sweeps"), py::arg("fit_tolerance"));
  m.def(
      "_tt_svd",
      [](const py::array& x, std::size_t max_rank, double tolerance) {
        return with_ndtensor(x, [&](const auto& xt) -> py::object {
          using T = typename std::remove_cvref_t<decltype(xt)>::value_type;
          tensor_train<T> tt = without_gil([&] { return tt_svd(xt, tt_options{max_rank, tolerance}); });
          py::list cores;
          for (auto& c : tt.cores) cores.append(nd_to_numpy(std::move(c)));
          return cores;
        });
      },
      py::arg("X"), py::arg("max_rank"), py::arg("tolerance"));
  m.def(
      "_cp_als",
      [](const py::array& x, std::size_t rank, std::size_t max_sweeps, double fit_tolerance, std::uint64_t seed,
         std::size_t restarts) {
        return with_ndtensor(x, [&](const auto& xt) -> py::object {
          using T = typename std::remove_cvref_t<decltype(xt)>::value_type;
          block_term_options opt;
          opt.max_sweeps = max_sweeps;
          opt.fit_tolerance = fit_tolerance;
          opt.seed = seed;
          opt.restarts = restarts;
          const cp_result<T> r = without_gil([&] { return cp_als(xt, rank, opt); });
          py::dict d;
          d["weights"] = py::array_t<T>(py::ssize_t(r.weights.size()), r.weights.data());
          d["factors"] = matrices(r.factors);
          d["fit_history"] = r.fit_history;
          d["relative_error"] = r.relative_error;
          d["sweeps"] = r.sweeps;
          return d;
        });
      },
      py::arg("X"), py::arg("rank"), py::arg("max_sweeps"), py::arg("fit_tolerance"), py::arg("seed"),
      py::arg("restarts"));
}

}  // namespace tprod::python
