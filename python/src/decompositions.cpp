// SPDX-License-Identifier: Apache-2.0
// The decompositions of order-N tensors from Python: Tucker (HOSVD, ST-HOSVD, HOOI, and the shared-factor Tucker of
// a multi-head attention layer), Tensor-Train (TT-SVD), MPO (a matrix in TT-matrix format), the block-term
// decomposition and CP (ALS), on NumPy arrays of float32 or float64 of any number of dimensions. tprod's ndtensor
// is column-major (NumPy's Fortran order), so arrays are read as Fortran arrays and results come back in Fortran
// order. The package's tprod.hosvd, … wrap the dictionaries returned here in result objects.
#include "ndarrays.hpp"
#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/extern_templates.hpp"
#include "tprod/decomp/mpo.hpp"
#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"

namespace tprod::python {

namespace {

/// Calls f(X) with the array as an ndtensor of its own scalar (float or double).
template <class F>
py::object with_ndtensor(const py::array& x, F&& f) {
  return with_real_scalar(x, "X", "the decompositions", [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    return f(ndtensor_of<T>(x, "X"));
  });
}

template <real_scalar T>
py::dict tucker_dict(tucker_result<T>&& r) {
  py::dict d;
  d["factors"] = matrices_to_numpy(r.factors);
  d["core"] = nd_to_numpy(std::move(r.core));
  d["modes"] = r.modes;
  d["relative_error"] = r.relative_error;
  d["compression_ratio"] = r.compression_ratio;
  d["fit_history"] = r.fit_history;
  d["sweeps"] = r.sweeps;
  return d;
}

template <real_scalar T>
py::list cores_to_numpy(std::vector<ndtensor<T>>&& cores) {
  py::list out;
  for (auto& c : cores) out.append(nd_to_numpy(std::move(c)));
  return out;
}

/// The MPO of a list of 4-dimensional cores of scalar T (validated: a chain with R_0 = R_N = 1).
template <real_scalar T>
mpo<T> mpo_of(const std::vector<py::array>& cores) {
  mpo<T> w;
  for (std::size_t n = 0; n < cores.size(); ++n) {
    const std::string what = "MPO core " + std::to_string(n);
    expect_scalar<T>(cores[n], what.c_str(), "X");
    w.cores.push_back(ndtensor_of<T>(cores[n], what.c_str()));
  }
  w.validate("tprod.MPO");
  return w;
}

block_term_options block_term_options_of(std::size_t max_sweeps, double fit_tolerance, std::uint64_t seed,
                                         std::size_t restarts) {
  block_term_options opt;
  opt.max_sweeps = max_sweeps;
  opt.fit_tolerance = fit_tolerance;
  opt.seed = seed;
  opt.restarts = restarts;
  return opt;
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
          return tucker_dict<T>(without_gil([&] {
            return method == "hosvd" ? hosvd(xt, opt) : method == "st_hosvd" ? st_hosvd(xt, opt) : hooi(xt, opt);
          }));
        });
      },
      py::arg("X"), py::arg("method"), py::arg("ranks"), py::arg("tolerance"), py::arg("modes"),
      py::arg("max_sweeps"), py::arg("fit_tolerance"));
  m.def(
      "_multihead_tucker",
      [](const py::array& wq, const py::array& wk, const py::array& wv, const py::array& wo, std::size_t heads,
         std::vector<std::size_t> ranks, double tolerance, std::size_t max_sweeps, double fit_tolerance) {
        return with_real_scalar(wq, "W_q", "the decompositions", [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          for (const auto& [a, what] : {std::pair{&wk, "W_k"}, std::pair{&wv, "W_v"}, std::pair{&wo, "W_o"}})
            expect_scalar<T>(*a, what, "W_q");
          const attention_weights<T> w{matrix_of<T>(wq, "W_q"), matrix_of<T>(wk, "W_k"), matrix_of<T>(wv, "W_v"),
                                       matrix_of<T>(wo, "W_o")};
          tucker_options opt;
          opt.ranks = ranks;
          opt.tolerance = tolerance;
          opt.max_sweeps = max_sweeps;
          opt.fit_tolerance = fit_tolerance;
          multihead_tucker_result<T> r = without_gil([&] { return multihead_tucker(w, heads, opt); });
          py::dict d = tucker_dict<T>(std::move(r.tucker));
          d["weights"] = py::make_tuple(matrix_to_numpy(r.weights.query), matrix_to_numpy(r.weights.key),
                                        matrix_to_numpy(r.weights.value), matrix_to_numpy(r.weights.output));
          return d;
        });
      },
      py::arg("W_q"), py::arg("W_k"), py::arg("W_v"), py::arg("W_o"), py::arg("heads"), py::arg("ranks"),
      py::arg("tolerance"), py::arg("max_sweeps"), py::arg("fit_tolerance"));
  m.def(
      "_tt_svd",
      [](const py::array& x, std::size_t max_rank, double tolerance) {
        return with_ndtensor(x, [&](const auto& xt) -> py::object {
          return cores_to_numpy(without_gil([&] { return tt_svd(xt, tt_options{max_rank, tolerance}); }).cores);
        });
      },
      py::arg("X"), py::arg("max_rank"), py::arg("tolerance"));
  m.def(
      "_mpo_from_matrix",
      [](const py::array& w, nd_shape row_dims, nd_shape col_dims, std::size_t max_rank, double tolerance) {
        return with_real_scalar(w, "W", "the decompositions", [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          const dense_matrix<T> wm = matrix_of<T>(w, "W");
          return cores_to_numpy(
              without_gil([&] { return mpo_from_matrix<T>(wm, row_dims, col_dims, tt_options{max_rank, tolerance}); })
                  .cores);
        });
      },
      py::arg("W"), py::arg("row_dims"), py::arg("col_dims"), py::arg("max_rank"), py::arg("tolerance"));
  m.def(
      "_mpo_product",
      [](const py::array& x, const std::vector<py::array>& cores) {
        return with_real_scalar(x, "X", "the decompositions", [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          const mpo<T> w = mpo_of<T>(cores);
          const dense_matrix<T> xm = matrix_of<T>(x, "X");
          return matrix_to_numpy(without_gil([&] { return mpo_product<T>(xm, w); }));
        });
      },
      py::arg("X"), py::arg("cores"));
  m.def(
      "_block_term",
      [](const py::array& x, std::size_t terms, const std::vector<std::size_t>& ranks, std::size_t max_sweeps,
         double fit_tolerance, std::uint64_t seed, std::size_t restarts, const std::string& init, bool line_search) {
        if (init != "dominant_subspace" && init != "random")
          throw py::value_error("tprod: block_term init '" + init + "' is not one of dominant_subspace, random");
        return with_ndtensor(x, [&](const auto& xt) -> py::object {
          using T = typename std::remove_cvref_t<decltype(xt)>::value_type;
          block_term_options opt = block_term_options_of(max_sweeps, fit_tolerance, seed, restarts);
          opt.init = init == "random" ? block_term_init::random : block_term_init::dominant_subspace;
          opt.line_search = line_search;
          block_term_result<T> r = without_gil([&] { return block_term_als(xt, terms, ranks, opt); });
          py::list factors;
          for (const auto& f : r.factors) factors.append(matrices_to_numpy(f));
          py::dict d;
          d["cores"] = cores_to_numpy(std::move(r.cores));
          d["factors"] = factors;
          d["fit_history"] = r.fit_history;
          d["relative_error"] = r.relative_error;
          d["compression_ratio"] = r.compression_ratio;
          d["sweeps"] = r.sweeps;
          return d;
        });
      },
      py::arg("X"), py::arg("terms"), py::arg("ranks"), py::arg("max_sweeps"), py::arg("fit_tolerance"),
      py::arg("seed"), py::arg("restarts"), py::arg("init"), py::arg("line_search"));
  m.def(
      "_cp_als",
      [](const py::array& x, std::size_t rank, std::size_t max_sweeps, double fit_tolerance, std::uint64_t seed,
         std::size_t restarts) {
        return with_ndtensor(x, [&](const auto& xt) -> py::object {
          using T = typename std::remove_cvref_t<decltype(xt)>::value_type;
          const block_term_options opt = block_term_options_of(max_sweeps, fit_tolerance, seed, restarts);
          const cp_result<T> r = without_gil([&] { return cp_als(xt, rank, opt); });
          py::dict d;
          d["weights"] = py::array_t<T>(py::ssize_t(r.weights.size()), r.weights.data());
          d["factors"] = matrices_to_numpy(r.factors);
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
