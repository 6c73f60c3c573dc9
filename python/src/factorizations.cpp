// SPDX-License-Identifier: Apache-2.0
// The L-SVD (full, economy, truncated by tubal rank or by energy), the ranks, the L-QR and the spectral and
// nuclear norms from Python. The package's tprod.svd wraps `_svd`'s dictionary in an SVD object.
#include <optional>

#include "arrays.hpp"
#include "tprod/algebra.hpp"

namespace tprod::python {

void bind_factorizations(py::module_& m) {
  m.def(
      "_svd",
      [](const py::array& a, const transform_object& l, bool full, std::optional<std::size_t> rank,
         std::optional<double> energy) {
        if (rank && energy)
          throw py::value_error("tprod.svd: give rank or energy, not both (rank keeps k singular tubes; energy "
                                "keeps the smallest multi-rank holding that fraction of ‖A‖²)");
        if (full && (rank || energy))
          throw py::value_error("tprod.svd: full=True gives every singular tube; a truncation (rank or energy) "
                                "starts from the economy SVD");
        return with_input(a, "A", l, [&](auto av, const auto& policy) -> py::object {
          return svd_dict(without_gil([&] {
            const auto hat = transform(av, policy);
            if (rank) return truncated_svd(hat, *rank);
            if (energy) return energy_truncated_svd(hat, *energy);
            return svd(hat, full ? factor_mode::full : factor_mode::economy);
          }), [](auto&& t) { return to_numpy(std::move(t)); });
        });
      },
      py::arg("A"), py::arg("L") = default_transform, py::arg("full") = false, py::arg("rank") = py::none(),
      py::arg("energy") = py::none());
  m.def(
      "_ranks",
      [](const py::array& a, const transform_object& l, double tol) {
        return with_input(a, "A", l, [&](auto av, const auto& policy) -> py::object {
          return rank_dict(without_gil([&] { return ranks(av, policy, tol); }));
        });
      },
      py::arg("A"), py::arg("L") = default_transform, py::arg("tol") = -1.0);
  m.def(
      "qr",
      [](const py::array& a, const transform_object& l, bool full) {
        return with_input(a, "A", l, [&](auto av, const auto& policy) -> py::object {
          auto r = without_gil([&] { return qr(av, policy, full ? factor_mode::full : factor_mode::economy); });
          return py::make_tuple(to_numpy(std::move(r.q)), to_numpy(std::move(r.r)));
        });
      },
      py::arg("A"), py::arg("L") = default_transform, py::arg("full") = false,
      "The L-QR A = Q *_L R: Q (m x r x p) with orthonormal slices in the transform domain, R upper triangular there; r = min(m, n), or m with full=True");
  m.def(
      "spectral_norm",
      [](const py::array& a, const transform_object& l) {
        return with_input(a, "A", l, [](auto av, const auto& policy) -> py::object {
          return py::float_(double(without_gil([&] { return spectral_norm(av, policy); })));
        });
      },
      py::arg("A"), py::arg("L") = default_transform,
      "The L-spectral norm: the largest singular value of all transform-domain slices");
  m.def(
      "nuclear_norm",
      [](const py::array& a, const transform_object& l) {
        return with_input(a, "A", l, [](auto av, const auto& policy) -> py::object {
          return py::float_(double(without_gil([&] { return nuclear_norm(av, policy); })));
        });
      },
      py::arg("A"), py::arg("L") = default_transform,
      "The L-nuclear norm c * sum_k w_k ||L(A)_k||_* (c = 1 for the DCT, 1/p for the DFT)");
}

}  // namespace tprod::python
