// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared test support: scalar lists, tolerances, the transforms to sweep, and an independent reference
// implementation of the L-product (plain loops with a test-built Z), used as the oracle.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <tuple>

#include "tprod/tprod.hpp"

#define TPROD_TEST_SCALARS float, double, std::complex<float>, std::complex<double>

namespace tprod::test {

using cd = std::complex<double>;
using ref_matrix = Eigen::MatrixXcd;

/// Tolerance for an error that grows with n accumulated roundings of T.
template <class T> double tol(std::size_t n) { return 100.0 * double(epsilon_v<T>) * double(n); }

/// A well-conditioned random real p×p matrix (diagonally dominated).
inline Eigen::MatrixXd well_conditioned(std::size_t p, unsigned seed) {
  std::srand(seed);
  return Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p)) * 0.3 + Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p)) * 2.0;
}

/// Every transform tprod offers.
inline auto all_transforms(std::size_t p) {
  const Eigen::MatrixXd zr = well_conditioned(p, 7);
  const Eigen::MatrixXcd zc = zr.cast<cd>() + cd(0, 1) * well_conditioned(p, 11).cast<cd>() * 0.5;
  return std::make_tuple(dct{}, dft{}, identity_transform{}, matrix_transform<double>(zr), matrix_transform<cd>(zc));
}

/// Calls f(L) for every transform on the GEMM path, then for the DCT and the DFT on FFTW (when built with it),
/// each inside an execution_scope choosing that path.
template <class F> void for_each_transform(std::size_t p, F&& f) {
  const auto on = [&](transform_path path, const auto& l) {
    const execution_scope scope(execution{path});
    f(l);
  };
  std::apply([&](const auto&... l) { (on(transform_path::gemm, l), ...); }, all_transforms(p));
  if (TPROD_HAS_FFTW) {
    on(transform_path::fftw, dct{});
    on(transform_path::fftw, dft{});
  }
}

/// The transform's matrix Z built here from its definition, independently of the library.
inline ref_matrix reference_z(const dct&, std::size_t p) {
  ref_matrix z(p, p);
  for (std::size_t j = 0; j < p; ++j)
    for (std::size_t k = 0; k < p; ++k)
      z(j, k) = std::sqrt((j == 0 ? 1.0 : 2.0) / double(p)) * std::cos(std::numbers::pi * (2.0 * k + 1) * j / (2.0 * p));
  return z;
}
inline ref_matrix reference_z(const dft&, std::size_t p) {
  ref_matrix z(p, p);
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t j = 0; j < p; ++j) z(k, j) = std::polar(1.0, -2.0 * std::numbers::pi * double(j * k) / double(p));
  return z;
}
inline ref_matrix reference_z(const identity_transform&, std::size_t p) { return ref_matrix::Identity(p, p); }
template <class S, std::size_t P>
ref_matrix reference_z(const matrix_transform<S, P>& l, std::size_t) { return l.matrix().template cast<cd>(); }

/// Converts any tensor3 to complex double for comparisons.
template <class X> tensor3<cd> to_cd(const X& x) {
  const auto v = cview(x);
  tensor3<cd> out(v.m(), v.n(), v.p());
  for (std::size_t e = 0; e < v.size(); ++e) out.data()[e] = cd(v.data()[e]);
  return out;
}

/// x += a·b in complex double, written out: std::complex's operator* recovers NaN and Inf as C99 asks (a call
/// to __muldc3 per product), which in the -O0 test programs was half the time of every test using these loops.
inline void add_product(cd& x, const cd& a, const cd& b) {
  x = cd(x.real() + (a.real() * b.real() - a.imag() * b.imag()),
         x.imag() + (a.real() * b.imag() + a.imag() * b.real()));
}

/// Â(:, :, s) = Σ_t Z(s, t)·A(:, :, t) with plain loops.
inline tensor3<cd> reference_mode3(const tensor3<cd>& a, const ref_matrix& z) {
  tensor3<cd> out(a.m(), a.n(), std::size_t(z.rows()));
  const std::size_t slice = a.m() * a.n();
  for (std::size_t s = 0; s < out.p(); ++s)
    for (std::size_t t = 0; t < a.p(); ++t) {
      const cd zst = z(s, t);
      const cd* from = a.data() + t * slice;
      cd* to = out.data() + s * slice;
      for (std::size_t e = 0; e < slice; ++e) add_product(to[e], zst, from[e]);
    }
  return out;
}

/// C = L⁻¹(L(A) △ L(B)) by the definition, with plain loops in complex double.
template <class L, class X, class Y> tensor3<cd> reference_product(const X& a, const Y& b, const L& l) {
  const std::size_t p = cview(a).p();
  const ref_matrix z = reference_z(l, p);
  const auto ah = reference_mode3(to_cd(a), z), bh = reference_mode3(to_cd(b), z);
  const std::size_t m = ah.m(), inner = ah.n(), n = bh.n();
  tensor3<cd> ch(m, n, p);
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t q = 0; q < inner; ++q) {
        const cd bqj = bh.data()[q + inner * (j + n * k)];
        const cd* aq = ah.data() + m * (q + inner * k);  // column q of Â_k
        cd* cj = ch.data() + m * (j + n * k);             // column j of Ĉ_k
        for (std::size_t i = 0; i < m; ++i) add_product(cj[i], aq[i], bqj);
      }
  return reference_mode3(ch, z.inverse());
}

/// max |x − y| over all entries, in complex double.
template <class X, class Y> double max_diff(const X& x, const Y& y) {
  const auto a = to_cd(x), b = to_cd(y);
  REQUIRE(a.extents() == b.extents());
  return a.size() == 0 ? 0.0 : (a.elements() - b.elements()).cwiseAbs().maxCoeff();
}
template <class X> double max_abs(const X& x) {
  const auto a = to_cd(x);
  return a.size() == 0 ? 1.0 : std::max(1.0, a.elements().cwiseAbs().maxCoeff());
}

/// Checks x ≈ y within tol<T>(n) relative to the scale of y.
#define TPROD_CHECK_CLOSE(x, y, T, n)                                                              \
  do {                                                                                             \
    const double tprod_diff_ = ::tprod::test::max_diff(x, y);                                      \
    const double tprod_bound_ = ::tprod::test::tol<T>(n) * ::tprod::test::max_abs(y);             \
    CHECK_MESSAGE(tprod_diff_ <= tprod_bound_, "max |difference| ", tprod_diff_, " > ", tprod_bound_); \
  } while (false)

/// A random tensor with the original scalar of transform L (promoted to complex under a complex Z).
template <class T, class L, class E> auto random_for(const L&, const E& e, std::uint64_t seed) {
  return random_tensor3<typename L::template original_scalar<T>>(e, seed);
}

}  // namespace tprod::test
