// SPDX-License-Identifier: Apache-2.0
// The algebra from Python: transforms in and out of the transform domain, the L-product and its relatives, norms,
// predicates and the mode product. Each binding converts its arrays (arrays.hpp), releases the GIL, calls the
// library, and hands the result back as a NumPy array that owns it.
#include "arrays.hpp"
#include "tprod/algebra.hpp"

namespace tprod::python {

namespace {

/// The slices of a transform-domain tensor, its p and its original scalar, as the tuple tprod.Transformed holds.
template <scalar T, class L>
py::tuple domain_tuple(transformed<T, L>&& hat) {
  const std::size_t p = hat.p();
  return py::make_tuple(to_numpy(std::move(hat.data())), p, dtype_name<T>());
}

domain_tensor domain_of(const py::array& data, std::size_t p, const transform_object& l, const py::object& original) {
  return {data, p, l, original_scalar(original)};
}

}  // namespace

void bind_algebra(py::module_& m) {
  m.def(
      "transform",
      [](const py::array& a, const transform_object& l) {
        return with_input(a, "A", l, [](auto av, const auto& policy) -> py::object {
          return domain_tuple(without_gil([&] { return transform(av, policy); }));
        });
      },
      py::arg("A"), py::arg("L") = default_transform);
  m.def(
      "inverse_transform",
      [](const py::array& data, std::size_t p, const transform_object& l, const py::object& original) {
        return with_transformed(domain_of(data, p, l, original), [](const auto& hat) -> py::object {
          return to_numpy(without_gil([&] { return inverse_transform(hat); }));
        });
      },
      py::arg("data"), py::arg("p"), py::arg("L"), py::arg("dtype"));
  m.def(
      "domain_transpose",
      [](const py::array& data, std::size_t p, const transform_object& l, const py::object& original) {
        return with_transformed(domain_of(data, p, l, original), [](const auto& hat) -> py::object {
          return domain_tuple(without_gil([&] { return transpose(hat); }));
        });
      },
      py::arg("data"), py::arg("p"), py::arg("L"), py::arg("dtype"));
  m.def(
      "domain_inverse",
      [](const py::array& data, std::size_t p, const transform_object& l, const py::object& original) {
        return with_transformed(domain_of(data, p, l, original), [](const auto& hat) -> py::object {
          return domain_tuple(without_gil([&] { return inverse(hat); }));
        });
      },
      py::arg("data"), py::arg("p"), py::arg("L"), py::arg("dtype"));
  m.def(
      "domain_frobenius_norm",
      [](const py::array& data, std::size_t p, const transform_object& l, const py::object& original) {
        return with_transformed(domain_of(data, p, l, original), [](const auto& hat) -> py::object {
          return py::float_(double(without_gil([&] { return frobenius_norm(hat); })));
        });
      },
      py::arg("data"), py::arg("p"), py::arg("L"), py::arg("dtype"));

  m.def(
      "product",
      [](const py::array& a, const py::array& b, const transform_object& l) {
        return with_inputs(a, "A", b, "B", [&](auto av, auto bv) -> py::object {
          return std::visit(
              [&](const auto& policy) -> py::object {
                return to_numpy(without_gil([&] { return product(av, bv, policy); }));
              },
              l.policy);
        });
      },
      py::arg("A"), py::arg("B"), py::arg("L") = default_transform,
      "C = A *_L B = L^-1(L(A) facewise-times L(B)) for A (m x l x p) and B (l x n x p); default L: the DCT");
  m.def(
      "facewise",
      [](const py::array& a, const py::array& b) {
        return with_inputs(a, "A", b, "B", [](auto av, auto bv) -> py::object {
          return to_numpy(without_gil([&] { return facewise(av, bv); }));
        });
      },
      py::arg("A"), py::arg("B"), "The facewise product: C[:, :, k] = A[:, :, k] @ B[:, :, k] for every slice k");
  m.def(
      "transpose",
      [](const py::array& a, const transform_object& l) {
        return with_input(a, "A", l, [](auto av, const auto& policy) -> py::object {
          return to_numpy(without_gil([&] { return transpose(av, policy); }));
        });
      },
      py::arg("A"), py::arg("L") = default_transform,
      "The L-transpose: L(A^T) holds the conjugate transposes of L(A)'s slices; n x m x p");
  m.def(
      "inverse",
      [](const py::array& a, const transform_object& l) {
        return with_input(a, "A", l, [](auto av, const auto& policy) -> py::object {
          return to_numpy(without_gil([&] { return inverse(av, policy); }));
        });
      },
      py::arg("A"), py::arg("L") = default_transform,
      "The L-inverse of a square A (every transform-domain slice inverted); NumericalError when one is singular");
  m.def(
      "identity",
      [](std::size_t n, std::size_t p, const transform_object& l, const py::object& dtype) {
        return with_scalar(scalar_of(py::array(py::dtype::from_args(dtype), {0}, {}), "dtype"), [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          return std::visit(
              [&](const auto& policy) -> py::object {
                using L = std::remove_cvref_t<decltype(policy)>;
                if constexpr (!std::same_as<T, typename L::template original_scalar<T>>) {
                  throw py::type_error(std::string("tprod.identity: under a complex Z the identity is complex; ask "
                                                   "for dtype complex64 or complex128, not ") +
                                       dtype_name<T>());
                } else {
                  return to_numpy(without_gil([&] { return identity<T>(n, p, policy); }));
                }
              },
              l.policy);
        });
      },
      py::arg("n"), py::arg("p"), py::arg("L") = default_transform, py::arg("dtype") = py::dtype::of<double>(),
      "The L-identity I (n x n x p, dtype float64 unless given): A *_L I = I *_L A = A");
  m.def(
      "frobenius_norm",
      [](const py::array& a) {
        return with_scalar(scalar_of(a, "A"), [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          const auto fa = fortran_array<T>(a, "A");
          return py::float_(double(without_gil([&] { return frobenius_norm(input_view(fa)); })));
        });
      },
      py::arg("A"), "||A||_F, the square root of the sum of |a_ijk|^2");
  m.def(
      "inner",
      [](const py::array& a, const py::array& b) {
        return with_inputs(a, "A", b, "B", [](auto av, auto bv) -> py::object {
          return py::cast(without_gil([&] { return inner(av, bv); }));
        });
      },
      py::arg("A"), py::arg("B"), "<A, B> = sum of conj(a_ijk) * b_ijk");
  m.def(
      "is_orthogonal",
      [](const py::array& a, const transform_object& l, double tol) {
        return with_input(a, "Q", l, [&](auto av, const auto& policy) -> py::object {
          return py::bool_(without_gil([&] { return is_orthogonal(av, policy, real_t<value_type_of<decltype(av)>>(tol)); }));
        });
      },
      py::arg("Q"), py::arg("L") = default_transform, py::arg("tol") = -1.0,
      "Q^T *_L Q = I within tol (tol < 0: a tolerance from epsilon and the sizes)");
  m.def(
      "is_f_diagonal",
      [](const py::array& a, double tol) {
        return with_scalar(scalar_of(a, "A"), [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          const auto fa = fortran_array<T>(a, "A");
          return py::bool_(without_gil([&] { return is_f_diagonal(input_view(fa), tol); }));
        });
      },
      py::arg("A"), py::arg("tol") = -1.0, "Every frontal slice of A is diagonal (within tol)");
  m.def(
      "is_f_symmetric",
      [](const py::array& a, const transform_object& l, double tol) {
        return with_input(a, "A", l, [&](auto av, const auto& policy) -> py::object {
          return py::bool_(without_gil([&] { return is_f_symmetric(av, policy, real_t<value_type_of<decltype(av)>>(tol)); }));
        });
      },
      py::arg("A"), py::arg("L") = default_transform, py::arg("tol") = -1.0,
      "A^T = A under L: every transform-domain slice Hermitian (within tol)");
  m.def(
      "is_f_positive_definite",
      [](const py::array& a, const transform_object& l, double tol) {
        return with_input(a, "A", l, [&](auto av, const auto& policy) -> py::object {
          return py::bool_(
              without_gil([&] { return is_f_positive_definite(av, policy, real_t<value_type_of<decltype(av)>>(tol)); }));
        });
      },
      py::arg("A"), py::arg("L") = default_transform, py::arg("tol") = -1.0,
      "Every transform-domain slice Hermitian positive definite (eigenvalues above tol)");
  m.def(
      "mode_product",
      [](const py::array& a, const py::array& u, std::size_t mode) {
        return with_scalar(scalar_of(a, "A"), [&](auto tag) -> py::object {
          using T = typename std::remove_cvref_t<decltype(tag)>::type;
          if (scalar_of(u, "U") != scalar_of_type<T>())
            throw py::type_error("tprod.mode_product: A is " + dtype_text(a.dtype()) + " and U is " +
                                 dtype_text(u.dtype()) + "; give them one dtype");
          const auto fa = fortran_array<T>(a, "A");
          const auto um = matrix_of<T>(u, "U");
          return to_numpy(without_gil([&] { return mode_product(input_view(fa), um, mode); }));
        });
      },
      py::arg("A"), py::arg("U"), py::arg("mode"),
      "A x_mode U for mode 0, 1 or 2: U (r x extent of that mode) multiplies every fiber of that mode");
}

}  // namespace tprod::python
