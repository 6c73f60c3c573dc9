// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared helpers of the MPO-layer and TSA tests: the dense weight of an MPO from its defining product
// W(i, j) = G_1(:, i_1, j_1, :)⋯G_N(:, i_N, j_N, :) by plain loops, and gradient-check plumbing.
#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "flat_gradient_check.hpp"
#include "tprod/nn/mpo_linear.hpp"
#include "tprod/algebra/extern_templates.hpp"
#include "tprod/decomp/extern_templates.hpp"

namespace mpo_test {

using tprod::dense_matrix;
using tprod::nd_shape;
using tprod::ndtensor;
using dmat = Eigen::MatrixXd;

/// Tolerance for a result with `ops` accumulated roundings of T.
template <class T>
double tol(double ops) {
  return 50.0 * double(std::numeric_limits<T>::epsilon()) * ops;
}

/// W ∈ ℝ^{I×J} of an MPO, entry by entry, in double (little-endian digits of i and j).
template <class T>
dmat reference_full(const tprod::mpo<T>& m) {
  const nd_shape ri = m.row_dims(), cj = m.col_dims();
  std::size_t rows = 1, cols = 1;
  for (std::size_t n = 0; n < ri.size(); ++n) rows *= ri[n], cols *= cj[n];
  dmat w = dmat::Zero(Eigen::Index(rows), Eigen::Index(cols));
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      dmat acc = dmat::Ones(1, 1);
      std::size_t ii = i, jj = j;
      for (std::size_t n = 0; n < ri.size(); ++n) {
        const auto s = m.cores[n].shape();
        const std::size_t in = ii % ri[n], jn = jj % cj[n];
        ii /= ri[n];
        jj /= cj[n];
        dmat g = dmat::Zero(Eigen::Index(s[0]), Eigen::Index(s[3]));
        for (std::size_t a = 0; a < s[0]; ++a)
          for (std::size_t b = 0; b < s[3]; ++b)
            g(Eigen::Index(a), Eigen::Index(b)) = double(m.cores[n].data()[a + s[0] * (in + s[1] * (jn + s[2] * b))]);
        acc = dmat(acc * g);
      }
      w(Eigen::Index(i), Eigen::Index(j)) = acc(0, 0);
    }
  return w;
}

inline double max_abs_diff(const dmat& a, const dmat& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return a.size() == 0 ? 0.0 : (a - b).cwiseAbs().maxCoeff();
}

/// Adds every core of an MPO as a variable of the gradient check.
inline void add_cores(flat_grad::diff_map& f, tprod::mpo<double>& m, const std::string& prefix) {
  for (std::size_t n = 0; n < m.cores.size(); ++n) {
    f.vars.push_back({m.cores[n].data(), m.cores[n].size()});
    f.names.push_back(prefix + "core_" + std::to_string(n));
  }
}
/// Appends the flattened core gradients of an MPO.
inline void append_cores(std::vector<flat_grad::vec>& out, const tprod::mpo<double>& m) {
  for (const auto& c : m.cores) out.push_back(Eigen::Map<const flat_grad::vec>(c.data(), Eigen::Index(c.size())));
}

}  // namespace mpo_test
