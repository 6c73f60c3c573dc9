// SPDX-License-Identifier: Apache-2.0
#pragma once
// The polynomial graph filter with Ψ and the signal in memory space S, against the host's (Eigen): the host_space
// instantiation runs the CPU backend's tasks (tests/graph), the device_space one cuBLAS (tests/cuda).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tprod/graph/polynomial_filter.hpp"

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

}  // namespace tprod::test::in_space
