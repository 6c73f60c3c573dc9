// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared helpers of the nn tests: a finite-difference / adjoint gradient checker and naive (plain-loop)
// reference implementations of the standard layers and of the L-product, independent of the library's kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "tprod/nn/extern_templates.hpp"
#include "tprod/core/random.hpp"
#include "tprod/nn/attention.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"
#include "tprod/transform/matrix_transform.hpp"

namespace nn_test {

using tprod::tensor3;
using dmat = Eigen::MatrixXd;
using t3 = tensor3<double>;

inline double dot(const t3& a, const t3& b) {
  REQUIRE(a.size() == b.size());
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a.data()[i] * b.data()[i];
  return s;
}
inline double max_abs(const t3& a) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.data()[i]));
  return m;
}
template <class T>
double max_diff(const tensor3<T>& a, const tensor3<T>& b) {
  REQUIRE(a.m() == b.m());
  REQUIRE(a.n() == b.n());
  REQUIRE(a.p() == b.p());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a.data()[i]) - double(b.data()[i])));
  return m;
}
inline t3 to_double(const tensor3<float>& a) {
  t3 r(a.m(), a.n(), a.p());
  for (std::size_t i = 0; i < a.size(); ++i) r.data()[i] = a.data()[i];
  return r;
}
inline tensor3<float> to_float(const t3& a) {
  tensor3<float> r(a.m(), a.n(), a.p());
  for (std::size_t i = 0; i < a.size(); ++i) r.data()[i] = float(a.data()[i]);
  return r;
}

/// A differentiable map under test: variables (inputs and parameters), a forward pass giving the output and
/// a backward pass giving, for an output cotangent w, the gradients of ⟨w, F⟩ for every variable (in order).
struct diff_map {
  std::vector<t3*> vars;
  std::vector<std::string> names;
  std::function<t3()> forward;
  std::function<std::vector<t3>(const t3&)> backward;
};

/// Checks the backward pass against central finite differences of ⟨w, F⟩:
///  (1) per variable, the adjoint identity ⟨J v, w⟩ = ⟨v, Jᵀ w⟩ with J v from central differences along a random
///      direction v (all coordinates at once), and
///  (2) a few single coordinates of every variable.
/// Central differences with step h have error O(h²‖F'''‖) + O(ε/h); with h = 1e-5 in double the agreement is
/// ~1e-8 relative, so rel_tol = 1e-6 leaves two orders of margin.
inline void check_gradients(diff_map& f, std::uint64_t seed, double rel_tol = 1e-6, std::size_t coords = 3) {
  const t3 y0 = f.forward();
  const t3 w = tprod::random_tensor3<double>(y0.m(), y0.n(), y0.p(), seed);
  const auto grads = f.backward(w);
  REQUIRE(grads.size() == f.vars.size());
  const double h = 1e-5;
  auto objective = [&] { return dot(w, f.forward()); };
  std::mt19937_64 rng(seed + 7);
  for (std::size_t i = 0; i < f.vars.size(); ++i) {
    t3& x = *f.vars[i];
    CAPTURE(f.names[i]);
    REQUIRE(grads[i].size() == x.size());
    const t3 v = tprod::random_tensor3<double>(x.m(), x.n(), x.p(), seed + 100 + i);
    const t3 x0 = x;
    x = x0 + h * v;
    const double fp = objective();
    x = x0 - h * v;
    const double fm = objective();
    x = x0;
    const double jv_w = (fp - fm) / (2 * h), v_jtw = dot(v, grads[i]);
    CHECK(std::abs(jv_w - v_jtw) <= rel_tol * (std::abs(v_jtw) + std::sqrt(dot(grads[i], grads[i]) * dot(v, v)) + 1e-12));
    for (std::size_t c = 0; c < coords && x.size() > 0; ++c) {
      const std::size_t e = std::uniform_int_distribution<std::size_t>(0, x.size() - 1)(rng);
      const double keep = x.data()[e];
      x.data()[e] = keep + h;
      const double ep = objective();
      x.data()[e] = keep - h;
      const double em = objective();
      x.data()[e] = keep;
      const double fd = (ep - em) / (2 * h);
      CAPTURE(e);
      CHECK(std::abs(fd - grads[i].data()[e]) <= rel_tol * (std::abs(fd) + max_abs(grads[i]) + 1e-12));
    }
  }
}

/// Z of a transform for length-p tubes, in double (for the naive references).
inline dmat z_of(const tprod::dct&, std::size_t p) { return tprod::dct::matrix(p); }
inline dmat z_of(const tprod::identity_transform&, std::size_t p) { return dmat::Identity(Eigen::Index(p), Eigen::Index(p)); }
inline dmat z_of(const tprod::matrix_transform<double>& l, std::size_t) { return l.matrix(); }

/// A well-conditioned, non-orthogonal random transform (exercises the explicit-adjoint path).
inline tprod::matrix_transform<double> random_transform(std::size_t p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  dmat z = dmat::Identity(Eigen::Index(p), Eigen::Index(p)) * 1.5;
  for (Eigen::Index i = 0; i < z.rows(); ++i)
    for (Eigen::Index j = 0; j < z.cols(); ++j) z(i, j) += u(rng);
  return tprod::matrix_transform<double>(z);
}

/// A ×₃ M by plain loops: out(i, j, k) = Σ_l M(k, l)·A(i, j, l).
inline t3 mode3(const t3& a, const dmat& m) {
  t3 out(a.m(), a.n(), std::size_t(m.rows()));
  for (std::size_t i = 0; i < a.m(); ++i)
    for (std::size_t j = 0; j < a.n(); ++j)
      for (std::size_t k = 0; k < out.p(); ++k) {
        double s = 0;
        for (std::size_t l = 0; l < a.p(); ++l) s += m(Eigen::Index(k), Eigen::Index(l)) * a(i, j, l);
        out(i, j, k) = s;
      }
  return out;
}

/// Slice k of a tensor as a plain matrix.
inline dmat slice(const t3& a, std::size_t k) {
  dmat s(Eigen::Index(a.m()), Eigen::Index(a.n()));
  for (std::size_t i = 0; i < a.m(); ++i)
    for (std::size_t j = 0; j < a.n(); ++j) s(Eigen::Index(i), Eigen::Index(j)) = a(i, j, k);
  return s;
}
inline void set_slice(t3& a, std::size_t k, const dmat& s) {
  for (std::size_t i = 0; i < a.m(); ++i)
    for (std::size_t j = 0; j < a.n(); ++j) a(i, j, k) = s(Eigen::Index(i), Eigen::Index(j));
}

/// Plain triple-loop matrix product.
inline dmat matmul(const dmat& a, const dmat& b) {
  dmat c = dmat::Zero(a.rows(), b.cols());
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < b.cols(); ++j)
      for (Eigen::Index l = 0; l < a.cols(); ++l) c(i, j) += a(i, l) * b(l, j);
  return c;
}

/// A *_L B = (Â_k B̂_k) ×₃ Z⁻¹, all by plain loops; `transpose_a`/`transpose_b` use the L-transpose (slice-wise
/// transpose in the transform domain, real Z).
inline t3 l_product(const t3& a, const t3& b, const dmat& z, bool transpose_a = false, bool transpose_b = false) {
  const t3 ah = mode3(a, z), bh = mode3(b, z);
  const std::size_t p = a.p();
  dmat first = slice(ah, 0);
  if (transpose_a) first.transposeInPlace();
  dmat second = slice(bh, 0);
  if (transpose_b) second.transposeInPlace();
  t3 ch(std::size_t(first.rows()), std::size_t(second.cols()), p);
  for (std::size_t k = 0; k < p; ++k) {
    dmat x = slice(ah, k), y = slice(bh, k);
    if (transpose_a) x.transposeInPlace();
    if (transpose_b) y.transposeInPlace();
    set_slice(ch, k, matmul(x, y));
  }
  return mode3(ch, z.inverse());
}

/// Row-wise bias add of a 1×q bias matrix.
inline dmat add_bias(dmat x, const dmat& b) {
  if (b.rows() == 0) return x;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) x(i, j) += b(0, j);
  return x;
}

/// Standard multi-head attention of one sequence, plain loops: queries from xq (T_q×d), keys/values from xk
/// (T_k×d), weights wqkv (d×3d: Q|K|V), bias bqkv (1×3d or 0×3d), wo (d×d), bo; masked keys get −∞.
inline dmat naive_mha(const dmat& xq, const dmat& xk, const dmat& wqkv, const dmat& bqkv, const dmat& wo,
                      const dmat& bo, std::size_t heads, bool causal, std::size_t key_len) {
  const Eigen::Index d = wo.rows(), dh = d / Eigen::Index(heads);
  auto cols = [&](const dmat& m, Eigen::Index c0) { return dmat(m.middleCols(c0, d)); };
  auto bcols = [&](Eigen::Index c0) { return bqkv.rows() == 0 ? dmat(0, d) : dmat(bqkv.middleCols(c0, d)); };
  const dmat q = add_bias(matmul(xq, cols(wqkv, 0)), bcols(0));
  const dmat k = add_bias(matmul(xk, cols(wqkv, d)), bcols(d));
  const dmat v = add_bias(matmul(xk, cols(wqkv, 2 * d)), bcols(2 * d));
  dmat h = dmat::Zero(xq.rows(), d);
  for (Eigen::Index j = 0; j < Eigen::Index(heads); ++j)
    for (Eigen::Index t = 0; t < xq.rows(); ++t) {
      std::vector<double> s(std::size_t(xk.rows()), -std::numeric_limits<double>::infinity());
      double mx = -std::numeric_limits<double>::infinity();
      for (Eigen::Index u = 0; u < xk.rows(); ++u) {
        if ((causal && u > t) || std::size_t(u) >= key_len) continue;
        double acc = 0;
        for (Eigen::Index c = 0; c < dh; ++c) acc += q(t, j * dh + c) * k(u, j * dh + c);
        s[std::size_t(u)] = acc / std::sqrt(double(dh));
        mx = std::max(mx, s[std::size_t(u)]);
      }
      double z = 0;
      for (auto& e : s) z += (e = std::exp(e - mx));
      for (Eigen::Index u = 0; u < xk.rows(); ++u)
        for (Eigen::Index c = 0; c < dh; ++c) h(t, j * dh + c) += s[std::size_t(u)] / z * v(u, j * dh + c);
    }
  return add_bias(matmul(h, wo), bo);
}

/// Rows b·T … b·T+T−1 of slice k.
inline dmat sequence(const t3& x, std::size_t k, std::size_t b, std::size_t len) {
  return slice(x, k).middleRows(Eigen::Index(b * len), Eigen::Index(len));
}

/// Standard FFN σ(XW₁ + b₁)W₂ + b₂ with ReLU or exact GELU, plain loops.
inline dmat naive_ffn(const dmat& x, const dmat& w1, const dmat& b1, const dmat& w2, const dmat& b2, bool gelu) {
  dmat h = add_bias(matmul(x, w1), b1);
  for (Eigen::Index i = 0; i < h.size(); ++i) {
    const double a = h.data()[i];
    h.data()[i] = gelu ? 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))) : std::max(a, 0.0);
  }
  return add_bias(matmul(h, w2), b2);
}

/// Row LayerNorm of a T×d matrix: γ(x−μ)/√(σ²+ε) + β (or /(σ+ε) when std_plus_eps).
inline dmat naive_layer_norm(const dmat& x, const dmat& gamma, const dmat& beta, double eps, bool std_plus_eps) {
  dmat y(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    double mu = 0, var = 0;
    for (Eigen::Index j = 0; j < x.cols(); ++j) mu += x(i, j);
    mu /= double(x.cols());
    for (Eigen::Index j = 0; j < x.cols(); ++j) var += (x(i, j) - mu) * (x(i, j) - mu);
    var /= double(x.cols());
    const double s = std_plus_eps ? std::sqrt(var) + eps : std::sqrt(var + eps);
    for (Eigen::Index j = 0; j < x.cols(); ++j) y(i, j) = gamma(0, j) * (x(i, j) - mu) / s + beta(0, j);
  }
  return y;
}

}  // namespace nn_test
