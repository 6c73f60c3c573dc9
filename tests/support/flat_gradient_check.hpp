// SPDX-License-Identifier: Apache-2.0
#pragma once
// A gradient checker for maps whose variables are plain arrays of doubles (Eigen matrices, ndtensor cores),
// the counterpart of tests/nn/nn_test_util.hpp's checker for tensor3 variables.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace flat_grad {

using vec = Eigen::VectorXd;

/// A differentiable map: variables (views of the storage the forward pass reads), the forward pass (output
/// flattened) and the backward pass (for an output cotangent w, the gradient of ⟨w, F⟩ for every variable, flattened
/// in the variable's storage order).
struct diff_map {
  std::vector<std::span<double>> vars;
  std::vector<std::string> names;
  std::function<vec()> forward;
  std::function<std::vector<vec>(const vec&)> backward;
};

inline vec random_vec(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  vec v = vec::Zero(Eigen::Index(n));
  for (Eigen::Index e = 0; e < v.size(); ++e) v(e) = u(rng);
  return v;
}

/// Checks the backward pass against central differences of ⟨w, F⟩ (step h = 1e-5; the error O(h²) + O(ε/h) is
/// ~1e-8 relative, so rel_tol = 1e-6 leaves two orders of margin):
///  (1) per variable, the adjoint identity ⟨J v, w⟩ = ⟨v, Jᵀ w⟩ along a random direction v, and
///  (2) `coords` single coordinates of every variable.
inline void check_gradients(diff_map& f, std::uint64_t seed, double rel_tol = 1e-6, std::size_t coords = 3) {
  const vec y0 = f.forward();
  const vec w = random_vec(std::size_t(y0.size()), seed);
  const auto grads = f.backward(w);
  REQUIRE(grads.size() == f.vars.size());
  const double h = 1e-5;
  const auto objective = [&] { return w.dot(f.forward()); };
  std::mt19937_64 rng(seed + 7);
  for (std::size_t i = 0; i < f.vars.size(); ++i) {
    const std::span<double> x = f.vars[i];
    CAPTURE(f.names[i]);
    REQUIRE(std::size_t(grads[i].size()) == x.size());
    Eigen::Map<vec> xm(x.data(), Eigen::Index(x.size()));
    const vec v = random_vec(x.size(), seed + 100 + i), x0 = xm;
    xm = x0 + h * v;
    const double fp = objective();
    xm = x0 - h * v;
    const double fm = objective();
    xm = x0;
    const double jv_w = (fp - fm) / (2 * h), v_jtw = v.dot(grads[i]);
    CHECK(std::abs(jv_w - v_jtw) <= rel_tol * (std::abs(v_jtw) + grads[i].norm() * v.norm() + 1e-12));
    for (std::size_t c = 0; c < coords && !x.empty(); ++c) {
      const std::size_t e = std::uniform_int_distribution<std::size_t>(0, x.size() - 1)(rng);
      const double keep = x[e];
      x[e] = keep + h;
      const double ep = objective();
      x[e] = keep - h;
      const double em = objective();
      x[e] = keep;
      const double fd = (ep - em) / (2 * h);
      CAPTURE(e);
      CHECK(std::abs(fd - grads[i](Eigen::Index(e))) <= rel_tol * (std::abs(fd) + grads[i].cwiseAbs().maxCoeff() + 1e-12));
    }
  }
}

/// A variable's storage as a span.
template <class M>
std::span<double> span_of(M& m) {
  return {m.data(), std::size_t(m.size())};
}
/// A matrix (or any contiguous array) flattened into a vector.
template <class M>
vec flat(const M& m) {
  return Eigen::Map<const vec>(m.data(), Eigen::Index(m.size()));
}

}  // namespace flat_grad
