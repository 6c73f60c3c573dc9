// SPDX-License-Identifier: Apache-2.0
#pragma once
// The polynomial graph filter with Ψ and the signal in memory space S, and the graph functions of a signal in S
// (Fourier transforms, spectral convolution, the RGTN passes), against the host's Eigen products: the host_space
// instantiation runs the CPU backend's tasks (tests/graph), the device_space one cuBLAS (tests/cuda).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tprod/graph/polynomial_filter.hpp"
#include "tprod/graph/time_graph.hpp"

namespace tprod::test::in_space {

template <class T, memory_space S>
matrix_in<T, S> matrix_of(const dense_matrix<T>& a) {
  return tprod::detail::matrix_in_space<S>(a);
}

/// max |a − b| / (max |b| + 1) for a matrix in S against a host matrix.
template <class T, memory_space S>
double max_rel_error(const matrix_in<T, S>& a, const dense_matrix<T>& b) {
  const dense_matrix<T> h = tprod::detail::host_matrix(a);
  REQUIRE(h.rows() == b.rows());
  REQUIRE(h.cols() == b.cols());
  return double((h - b).cwiseAbs().maxCoeff()) / (double(b.cwiseAbs().maxCoeff()) + 1);
}

/// Forward values, iterates and all three gradients equal the host filter's, for K = 1, 2, 4 and one- and
/// several-column signals; bad shapes are refused.
template <class T, memory_space S>
void check_polynomial_filter() {
  const double tol = 1000.0 * double(std::numeric_limits<T>::epsilon());
  for (const std::size_t l : {std::size_t(1), std::size_t(6)}) {
    for (const std::size_t r : {std::size_t(1), std::size_t(3)}) {
      for (const std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(4)}) {
        CAPTURE(l);
        CAPTURE(r);
        CAPTURE(k);
        const dense_matrix<T> psi = random_matrix<T>(l, l, 3 + l) * T(0.5);
        const dense_matrix<T> x = random_matrix<T>(l, r, 5 + r), dy = random_matrix<T>(l, r, 7 + k);
        std::vector<T> alpha(k);
        for (std::size_t i = 0; i < k; ++i) alpha[i] = T(0.7) - T(0.3) * T(i);
        polynomial_filter_saved<T> saved;
        const dense_matrix<T> y = polynomial_filter_matrix<T>(psi, alpha, x, &saved);
        const auto g = polynomial_filter_backward<T>(psi, alpha, x, saved, dy);

        const auto psi_in = matrix_of<T, S>(psi), x_in = matrix_of<T, S>(x), dy_in = matrix_of<T, S>(dy);
        polynomial_filter_saved_in<T, S> saved_in;
        CHECK(max_rel_error(polynomial_filter_matrix<T>(psi_in, alpha, x_in, &saved_in), y) <= tol);
        REQUIRE(saved_in.z.size() == saved.z.size());
        for (std::size_t i = 0; i < saved.z.size(); ++i) CHECK(max_rel_error(saved_in.z[i], saved.z[i]) <= tol);
        const auto g_in = polynomial_filter_backward<T>(psi_in, alpha, x_in, saved_in, dy_in);
        CHECK(max_rel_error(g_in.d_psi, g.d_psi) <= tol);
        CHECK(max_rel_error(g_in.d_x, g.d_x) <= tol);
        REQUIRE(g_in.d_alpha.size() == k);
        for (std::size_t i = 0; i < k; ++i)
          CHECK(double(g_in.d_alpha[i]) == doctest::Approx(double(g.d_alpha(Eigen::Index(i)))).epsilon(tol));
      }
    }
  }
  const std::vector<T> alpha{T(1), T(0.5)};
  const auto psi_in = matrix_of<T, S>(random_matrix<T>(4, 4, 1));
  CHECK_THROWS_AS(polynomial_filter_matrix<T>(psi_in, alpha, matrix_of<T, S>(random_matrix<T>(3, 2, 1))), shape_error);
  CHECK_THROWS_AS(polynomial_filter_matrix<T>(matrix_of<T, S>(random_matrix<T>(4, 3, 1)), alpha,
                                              matrix_of<T, S>(random_matrix<T>(4, 2, 1))),
                  shape_error);
  CHECK_THROWS_AS(polynomial_filter_matrix<T>(psi_in, std::vector<T>{}, matrix_of<T, S>(random_matrix<T>(4, 2, 1))),
                  shape_error);
}

/// The graph functions of a signal in S — an L×6×1 matrix and the same entries as an L×2×3 ndtensor_in — equal the
/// operators applied on the host with Eigen, keep the signal's kind and trailing shape, and refuse bad shapes.
template <class T, memory_space S>
void check_graph_signals() {
  const double tol = 1000.0 * double(std::numeric_limits<T>::epsilon());
  for (const std::size_t l : {std::size_t(1), std::size_t(7)}) {
    CAPTURE(l);
    const dense_matrix<T> w = random_matrix<T>(l, l, 11 + l), psi = T(0.5) * (w + w.transpose());
    const graph_fourier_basis<T> b = graph_fourier(psi);
    const dense_vector<T> gamma = random_matrix<T>(l, 1, 13).col(0);
    const dense_matrix<T> a = time_adjacency<T>(l, 0.5), omega = bidirectional_time_adjacency<T>(l, 0.5);
    const dense_matrix<T> x = random_matrix<T>(l, 6, 21);
    const matrix_in<T, S> xm = matrix_of<T, S>(x);
    const ndtensor_in<T, S> xt = copy<S>(from_column_major<T>({l, 2, 3}, x.data(), std::size_t(x.size())));
    // both kinds against M·X, each back on the host as an L'×6 matrix
    const auto check_both = [&](const auto& f, const dense_matrix<T>& want, const char* what) {
      CAPTURE(what);
      const matrix_in<T, S> ym = f(xm);
      CHECK(ym.n() == 6);
      CHECK(max_rel_error(ym, want) <= tol);
      const ndtensor_in<T, S> yt = f(xt);
      CHECK(yt.shape() == nd_shape{std::size_t(want.rows()), 2, 3});
      const ndtensor<T> h = to_ndtensor(yt);
      CHECK(double((detail::as_matrix(h, std::size_t(want.rows()), 6) - want).cwiseAbs().maxCoeff()) <=
            tol * (double(want.cwiseAbs().maxCoeff()) + 1));
    };
    check_both([&](const auto& s) { return graph_fourier_transform(b, s); }, b.phi.transpose() * x, "fourier");
    check_both([&](const auto& s) { return inverse_graph_fourier_transform(b, s); }, b.phi * x, "inverse");
    check_both([&](const auto& s) { return spectral_convolution(b, gamma, s); },
               b.phi * gamma.asDiagonal() * b.phi.transpose() * x, "spectral convolution");
    check_both([&](const auto& s) { return rgtn_forward(a, s); }, shifted_inverse_sqrt(a) * x, "rgtn, directed");
    check_both([&](const auto& s) { return rgtn_forward(omega, s); }, shifted_inverse_sqrt(omega) * x,
               "rgtn, bidirectional");
    check_both([&](const auto& s) { return fast_rgtn_forward(a, s); }, dense_matrix<T>(x + a * x), "fast rgtn");
    const dense_matrix<T> m = random_matrix<T>(3, l, 23);
    check_both([&](const auto& s) { return mode1_product(m, s); }, m * x, "mode1_product, 3 x L");
    // P = QQᵀ, Q with two orthonormal columns: idempotent
    const Eigen::HouseholderQR<dense_matrix<T>> qr(random_matrix<T>(6, 2, 25));
    const dense_matrix<T> q = qr.householderQ() * dense_matrix<T>::Identity(6, 2), p = q * q.transpose();
    CHECK(max_rel_error(rgtn_forward(a, p, xm), dense_matrix<T>(x + a * x * p.transpose())) <= tol);
    CHECK_THROWS_WITH_AS(rgtn_forward(a, dense_matrix<T>(2 * p), xm), doctest::Contains("not idempotent"),
                         numerical_error);
    CHECK_THROWS_WITH_AS(rgtn_forward(a, p, matrix_in<T, S>(l, 3, 2)), doctest::Contains("p = 1"), shape_error);
    CHECK_THROWS_WITH_AS(graph_fourier_transform(b, matrix_of<T, S>(random_matrix<T>(l + 1, 2, 27))),
                         doctest::Contains("graph_fourier_transform"), shape_error);
    CHECK_THROWS_WITH_AS(fast_rgtn_forward(a, copy<S>(random_ndtensor<T>({l + 2, 2}, 29))),
                         doctest::Contains("fast_rgtn_forward"), shape_error);
    // a signal with no columns keeps its shape
    CHECK(spectral_convolution(b, gamma, matrix_in<T, S>(l, 0, 1)).shape() == matrix_in<T, S>(l, 0, 1).shape());
  }
}

}  // namespace tprod::test::in_space
