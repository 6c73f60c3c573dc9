// SPDX-License-Identifier: Apache-2.0
// The graph filters from Python (paper 002): adjacency matrices from edge lists and time graphs, degrees and
// Laplacians, the graph Fourier basis with the graph Fourier transform and spectral convolution, polynomial
// filters f_α(Ψ) ×₁ x, the attention graph Θ = ε(K Kᵀ / d_k) and the RGTN forward passes. Every operation acts on
// the first mode of its signal, so a signal comes here as its mode-1 unfolding, an L×R matrix (the package reshapes
// arrays of any order in Fortran order, a view for Fortran-ordered arrays); graph matrices and signals are float32
// or float64, of one dtype per call. (Taking order-N tensors here instead compiled this file for 38 s.)
#include "arrays.hpp"
#include "tprod/graph/adjacency.hpp"
#include "tprod/graph/attention_graph.hpp"
#include "tprod/graph/fourier.hpp"
#include "tprod/graph/laplacian.hpp"
#include "tprod/graph/polynomial_filter.hpp"
#include "tprod/graph/time_graph.hpp"

namespace tprod::python {

namespace {

/// Calls f(Ψ, X) with the graph matrix and the signal's unfolding X of the signal's scalar; Ψ of another dtype is a
/// TypeError, a Ψ that is not 2-dimensional a ValueError.
template <class F>
py::object with_graph_signal(const py::array& psi, const char* psi_name, const py::array& x, F&& f) {
  return with_real_scalar(x, "the signal", "the graph filters", [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    expect_scalar<T>(psi, psi_name, "the signal");
    const dense_matrix<T> m = matrix_of<T>(psi, psi_name);
    const dense_matrix<T> signal = matrix_of<T>(x, "the signal");
    return matrix_to_numpy(without_gil([&] { return f(m, signal); }));
  });
}

/// Calls f(A) with a float32 or float64 matrix; returns its NumPy result.
template <class F>
py::object with_graph_matrix(const py::array& a, const char* what, F&& f) {
  return with_real_scalar(a, what, "the graph filters", [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    const dense_matrix<T> m = matrix_of<T>(a, what);
    return matrix_to_numpy(without_gil([&] { return f(m); }));
  });
}

template <class F>
py::object with_dtype(const std::string& dtype, F&& f) {
  if (dtype == "float32") return f(std::type_identity<float>{});
  if (dtype == "float64") return f(std::type_identity<double>{});
  throw py::type_error("tprod: the graph filters compute in float32 or float64, not " + dtype);
}

}  // namespace

void bind_graph(py::module_& m) {
  m.def(
      "_adjacency",
      [](std::size_t vertices, const std::vector<std::pair<std::size_t, std::size_t>>& edges,
         const std::vector<double>& weights, bool directed, const std::string& dtype) {
        return with_dtype(dtype, [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          std::vector<graph_edge> e;
          for (const auto& [from, to] : edges) e.push_back({from, to});
          const std::vector<T> w(weights.begin(), weights.end());
          return matrix_to_numpy(adjacency_from_edges<T>(
              vertices, e, w, directed ? edge_direction::directed : edge_direction::undirected));
        });
      },
      py::arg("vertices"), py::arg("edges"), py::arg("weights"), py::arg("directed"), py::arg("dtype"));
  m.def(
      "_time_adjacency",
      [](std::size_t steps, double c, bool bidirectional, const std::string& dtype) {
        return with_dtype(dtype, [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          return matrix_to_numpy(bidirectional ? bidirectional_time_adjacency<T>(steps, c)
                                               : time_adjacency<T>(steps, c));
        });
      },
      py::arg("steps"), py::arg("c"), py::arg("bidirectional"), py::arg("dtype"));
  m.def(
      "_degrees",
      [](const py::array& a) {
        return with_graph_matrix(a, "A", [](const auto& am) {
          return std::remove_cvref_t<decltype(am)>(degrees(am));
        });
      },
      py::arg("A"));
  m.def(
      "_laplacian",
      [](const py::array& a, bool normalized) {
        return with_graph_matrix(a, "A", [&](const auto& am) {
          return normalized ? normalized_laplacian(am) : laplacian(am);
        });
      },
      py::arg("A"), py::arg("normalized"));
  m.def(
      "_graph_fourier",
      [](const py::array& psi) {
        return with_real_scalar(psi, "Psi", "the graph filters", [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          const dense_matrix<T> pm = matrix_of<T>(psi, "Psi");
          const graph_fourier_basis<T> b = without_gil([&] { return graph_fourier(pm); });
          return py::make_tuple(matrix_to_numpy(b.phi), matrix_to_numpy(dense_matrix<T>(b.lambda)));
        });
      },
      py::arg("Psi"));
  m.def(
      "_spectral_convolution",
      [](const py::array& phi, const py::array& gamma, const py::array& x) {
        return with_real_scalar(x, "the signal", "the graph filters", [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          expect_scalar<T>(phi, "Phi", "the signal");
          expect_scalar<T>(gamma, "gamma", "the signal");
          dense_matrix<T> phim = matrix_of<T>(phi, "Phi");
          if (phim.rows() != phim.cols())
            throw py::value_error("tprod: Phi has shape " + shape_text(phi) + "; a graph Fourier basis is square");
          // only Φ enters the convolution; the eigenvalues are the multipliers' business
          const Eigen::Index vertices = phim.rows();
          const graph_fourier_basis<T> b{std::move(phim), dense_vector<T>::Zero(vertices)};
          if (gamma.ndim() != 1)
            throw py::value_error("tprod: gamma has shape " + shape_text(gamma) +
                                  "; give one multiplier per graph frequency (a vector)");
          const auto gf = py::array_t<T, py::array::f_style>::ensure(gamma);
          const dense_vector<T> g = Eigen::Map<const dense_vector<T>>(gf.data(), gf.size());
          const dense_matrix<T> signal = matrix_of<T>(x, "the signal");
          return matrix_to_numpy(without_gil([&] { return spectral_convolution(b, g, signal); }));
        });
      },
      py::arg("Phi"), py::arg("gamma"), py::arg("x"));
  m.def(
      "_polynomial_filter",
      [](const py::array& psi, const std::vector<double>& alpha, const py::array& x) {
        return with_graph_signal(psi, "Psi", x, [&](const auto& pm, const auto& signal) {
          using T = typename std::remove_cvref_t<decltype(pm)>::Scalar;
          const std::vector<T> a(alpha.begin(), alpha.end());
          return polynomial_filter<T>(pm, a, signal);
        });
      },
      py::arg("Psi"), py::arg("alpha"), py::arg("x"));
  m.def(
      "_rgtn_forward",
      [](const py::array& a, const py::array& x, bool fast) {
        return with_graph_signal(a, "A", x, [&](const auto& am, const auto& signal) {
          return fast ? fast_rgtn_forward(am, signal) : rgtn_forward(am, signal);
        });
      },
      py::arg("A"), py::arg("x"), py::arg("fast"));
  m.def(
      "_rgtn_forward_propagated",
      [](const py::array& a, const py::array& p, const py::array& x) {
        return with_real_scalar(x, "the signal", "the graph filters", [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          expect_scalar<T>(a, "A", "the signal");
          expect_scalar<T>(p, "P", "the signal");
          const dense_matrix<T> am = matrix_of<T>(a, "A"), pm = matrix_of<T>(p, "P"), xm = matrix_of<T>(x, "X");
          return matrix_to_numpy(without_gil([&] { return rgtn_forward<T>(am, pm, xm); }));
        });
      },
      py::arg("A"), py::arg("P"), py::arg("X"));
  m.def(
      "_attention_coefficients",
      [](const py::array& k, double d_k) {
        return with_graph_matrix(k, "K", [&](const auto& keys) {
          using T = typename std::remove_cvref_t<decltype(keys)>::Scalar;
          return attention_coefficients<T>(keys, d_k);
        });
      },
      py::arg("K"), py::arg("d_k"));
}

}  // namespace tprod::python
