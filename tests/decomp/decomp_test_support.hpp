// SPDX-License-Identifier: Apache-2.0
#pragma once
// Test support for the decompositions: naive loop references (the oracles) and tolerances.
// The references index elements through explicit multi-index arithmetic, never through the library's kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tprod/decomp/extern_templates.hpp"  // compiled once, in tprod::instances

namespace decomp_test {

using tprod::dense_matrix;
using tprod::dense_vector;
using tprod::nd_shape;
using tprod::ndtensor;

/// Tolerance for a result with `ops` accumulated roundings: scale·ε·ops.
template <class T>
double tol(double ops, double scale = 50) {
  return scale * double(std::numeric_limits<T>::epsilon()) * ops;
}

/// Calls f(index) for every multi-index of the shape, first index fastest.
template <class F>
void for_each_index(const nd_shape& shape, F f) {
  std::size_t count = 1;
  for (auto s : shape) count *= s;
  std::vector<std::size_t> index(shape.size(), 0);
  for (std::size_t e = 0; e < count; ++e) {
    f(index);
    for (std::size_t n = 0; n < shape.size() && ++index[n] == shape[n]; ++n) index[n] = 0;
  }
}

/// Column-major offset of a multi-index, written out: i_1 + I_1·(i_2 + I_2·(…)).
inline std::size_t offset(const nd_shape& shape, const std::vector<std::size_t>& index) {
  std::size_t off = 0;
  for (std::size_t n = shape.size(); n-- > 0;) off = off * shape[n] + index[n];
  return off;
}

template <class T>
T& at(ndtensor<T>& x, const std::vector<std::size_t>& index) {
  return x.data()[offset(tprod::shape_of(x), index)];
}
template <class T>
T at(const ndtensor<T>& x, const std::vector<std::size_t>& index) {
  return x.data()[offset(tprod::shape_of(x), index)];
}

/// X_(n) by Kolda–Bader's formula: column Σ_{m≠n} i_m·Π_{k<m, k≠n} I_k.
template <class T>
dense_matrix<T> reference_unfold(const ndtensor<T>& x, std::size_t n) {
  const nd_shape s = tprod::shape_of(x);
  dense_matrix<T> m(Eigen::Index(s[n]), Eigen::Index(x.size() / s[n]));
  for_each_index(s, [&](const std::vector<std::size_t>& i) {
    std::size_t col = 0, stride = 1;
    for (std::size_t k = 0; k < s.size(); ++k) {
      if (k == n) continue;
      col += i[k] * stride;
      stride *= s[k];
    }
    m(Eigen::Index(i[n]), Eigen::Index(col)) = at(x, i);
  });
  return m;
}

/// Y = X ×_n U by the defining sum Y(…, j, …) = Σ_i U(j, i) X(…, i, …).
template <class T>
ndtensor<T> reference_mode_product(const ndtensor<T>& x, const dense_matrix<T>& u, std::size_t n) {
  nd_shape s = tprod::shape_of(x);
  s[n] = std::size_t(u.rows());
  ndtensor<T> y = tprod::zeros<T>(s);
  for_each_index(s, [&](const std::vector<std::size_t>& out) {
    std::vector<std::size_t> in = out;
    double sum = 0;
    for (std::size_t i = 0; i < x.shape()[n]; ++i) {
      in[n] = i;
      sum += double(u(Eigen::Index(out[n]), Eigen::Index(i))) * double(at(x, in));
    }
    at(y, out) = T(sum);
  });
  return y;
}

/// Σ_r λ_r a_r ∘ b_r ∘ ⋯ by explicit products over every element.
template <class T>
ndtensor<T> reference_cp(const std::vector<dense_matrix<T>>& factors, const std::vector<double>& weights) {
  nd_shape s;
  for (const auto& a : factors) s.push_back(std::size_t(a.rows()));
  ndtensor<T> x = tprod::zeros<T>(s);
  for_each_index(s, [&](const std::vector<std::size_t>& i) {
    double sum = 0;
    for (std::size_t r = 0; r < weights.size(); ++r) {
      double term = weights[r];
      for (std::size_t n = 0; n < s.size(); ++n) term *= double(factors[n](Eigen::Index(i[n]), Eigen::Index(r)));
      sum += term;
    }
    at(x, i) = T(sum);
  });
  return x;
}

template <class T>
double norm(const ndtensor<T>& x) {
  double s = 0;
  for (std::size_t e = 0; e < x.size(); ++e) s += double(x.data()[e]) * double(x.data()[e]);
  return std::sqrt(s);
}

/// ‖x − y‖_F/‖y‖_F (shapes must agree).
template <class T>
double rel_diff(const ndtensor<T>& x, const ndtensor<T>& y) {
  REQUIRE(tprod::shape_of(x) == tprod::shape_of(y));
  double d = 0;
  for (std::size_t e = 0; e < x.size(); ++e) d += std::pow(double(x.data()[e]) - double(y.data()[e]), 2);
  const double ny = norm(y);
  return ny == 0 ? std::sqrt(d) : std::sqrt(d) / ny;
}

template <class A, class B>
double rel_diff_matrix(const A& a, const B& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  const double nb = b.template cast<double>().norm();
  const double d = (a.template cast<double>() - b.template cast<double>()).norm();
  return nb == 0 ? d : d / nb;
}

/// max |UᵀU − I|: how far the columns are from orthonormal.
template <class T>
double orthonormality_defect(const dense_matrix<T>& u) {
  const dense_matrix<T> g = u.transpose() * u;
  return (g - dense_matrix<T>::Identity(g.rows(), g.cols())).cwiseAbs().maxCoeff();
}

}  // namespace decomp_test
