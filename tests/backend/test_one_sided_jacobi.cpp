// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's batched one-sided Jacobi SVD (src/cuda/one_sided_jacobi.cuh) run on the host: the same code,
// with a team of one worker of one lane instead of a thread block, so that its arithmetic (the rounds' pairs, the
// complex rotation, the stopping rule, the sort, the scaling and the completion of zero singular values) is checked
// on every machine. σ against Eigen's SVD through the CPU backend; U and V through the identities that define them
// (A = U Σ Vᴴ, UᴴU = VᴴV = I), since their columns are unique only up to phases. What the host cannot show, the
// block's warps sharing the work, is tested on a GPU (tests/cuda/test_device_factorizations.cpp).
#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "../../src/cuda/one_sided_jacobi.cuh"
#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;
namespace jacobi = tprod::backend::cuda::jacobi;

namespace {

/// One worker of one lane: every loop of the algorithm runs serially, every barrier is a no-op.
struct serial_team {
  int thread = 0, threads = 1, worker = 0, workers = 1, lane = 0, lanes = 1;
  void sync() const {}
  bool any(bool flag) const { return flag; }
  template <class R> R lane_sum(R v) const { return v; }
  template <class R> R max_all(R v) const { return v; }
};

template <class T> struct jacobi_result {
  std::vector<T> u, v;
  std::vector<real_t<T>> sigma;
  int info = -1;
};

/// The economy SVD of the m×n column-major matrix a by the device's algorithm, on the host.
template <class T> jacobi_result<T> jacobi_svd_of(const T* a, int m, int n) {
  const int rows = std::max(m, n), cols = std::min(m, n);
  const auto rs = static_cast<std::size_t>(rows), cs = static_cast<std::size_t>(cols);
  std::vector<T> x(rs * cs + cs * cs), w(rs), coefficient(cs);
  std::vector<real_t<T>> sigma_of(cs), slot(1);
  std::vector<int> position(cs);
  const jacobi::slice_work<T> work{x.data(),        x.data() + rows * cols, sigma_of.data(), position.data(),
                                   w.data(),        coefficient.data(),     slot.data()};
  jacobi_result<T> r;
  r.u.assign(std::size_t(m * cols), T(-7));  // not zero: every entry must be written
  r.v.assign(std::size_t(n * cols), T(-7));
  r.sigma.assign(std::size_t(cols), real_t<T>(-7));
  serial_team team;
  r.info = jacobi::svd_slice(a, m, n, r.u.data(), r.v.data(), r.sigma.data(), work, team);
  return r;
}

using matrix_cd = detail::dense_matrix<cd>;

template <class T> matrix_cd as_cd(const T* x, int rows, int cols) {
  return Eigen::Map<const detail::dense_matrix<T>>(x, rows, cols).template cast<cd>();
}

/// Checks the factorization of a (m×n) against Eigen's σ and the identities; tolerances relative to ‖A‖₂.
template <class T> void check_svd(const tensor3<T>& a) {
  const int m = int(a.m()), n = int(a.n()), r = std::min(m, n);
  const auto got = jacobi_svd_of(a.data(), m, n);
  REQUIRE(got.info == 0);
  const auto sigma = backend::cpu::singular_values_slices(backend::cpu::system{execution{}}, a.dynamic_view(), {});
  REQUIRE(sigma.size() == std::size_t(r));
  const double top = std::max(double(sigma[0]), 1e-300);
  const double eps_n = tol<T>(std::size_t(std::max(m, n)));  // 100·ε·max(m, n)
  for (int i = 0; i < r; ++i) {
    CHECK(double(got.sigma[std::size_t(i)]) >= 0);
    if (i > 0) CHECK(got.sigma[std::size_t(i)] <= got.sigma[std::size_t(i - 1)]);
    CHECK(std::abs(double(got.sigma[std::size_t(i)]) - double(sigma[std::size_t(i)])) <= eps_n * top);
  }
  const matrix_cd u = as_cd(got.u.data(), m, r), v = as_cd(got.v.data(), n, r), x = as_cd(a.data(), m, n);
  Eigen::VectorXd s(r);
  for (int i = 0; i < r; ++i) s(i) = double(got.sigma[std::size_t(i)]);
  const matrix_cd back = u * s.cast<cd>().asDiagonal() * v.adjoint();
  CHECK((back - x).stableNorm() <= eps_n * top * r);  // stableNorm: the scaled cases square to inf or 0
  CHECK((u.adjoint() * u - matrix_cd::Identity(r, r)).norm() <= eps_n * r);
  CHECK((v.adjoint() * v - matrix_cd::Identity(r, r)).norm() <= eps_n * r);
}

}  // namespace

TEST_CASE("one-sided Jacobi rounds: each sweep meets every pair of columns exactly once, in disjoint pairs") {
  for (int padded = 2; padded <= jacobi::max_extent + 2; padded += 2) {
    CAPTURE(padded);
    std::set<std::pair<int, int>> met;
    bool disjoint = true, ordered = true, new_pairs = true;
    for (int round = 0; round + 1 < padded; ++round) {
      std::vector<int> used(std::size_t(padded), 0);
      for (int k = 0; k < padded / 2; ++k) {
        int p = -1, q = -1;
        jacobi::pair_of(round, k, padded, p, q);
        ordered = ordered && 0 <= p && p < q && q < padded;
        if (!ordered) break;
        disjoint = disjoint && ++used[std::size_t(p)] == 1 && ++used[std::size_t(q)] == 1;
        new_pairs = met.insert({p, q}).second && new_pairs;
      }
    }
    CHECK(ordered);
    CHECK(disjoint);
    CHECK(new_pairs);
    CHECK(met.size() == std::size_t(padded * (padded - 1) / 2));
  }
}

TEST_CASE_TEMPLATE("one-sided Jacobi rotation: the two columns come out orthogonal, their lengths kept", T,
                   TPROD_TEST_SCALARS) {
  using R = real_t<T>;
  const auto a = random_tensor3<T>(9, 2, 1, 5);
  const T* xp = a.data();
  const T* xq = a.data() + 9;
  R alpha = 0, beta = 0;
  T gamma(0);
  for (int i = 0; i < 9; ++i) {
    alpha += jacobi::abs2(xp[i]);
    beta += jacobi::abs2(xq[i]);
    gamma += jacobi::conjugate(xp[i]) * xq[i];
  }
  const auto rot = jacobi::rotation_of(alpha, beta, jacobi::re(gamma), jacobi::im(gamma));
  const T s = jacobi::make<T>(rot.s_re, rot.s_im);
  CHECK(std::abs(double(rot.c * rot.c + jacobi::abs2(s)) - 1) <= tol<T>(1));
  R alpha2 = 0, beta2 = 0;
  cd dot = 0;
  for (int i = 0; i < 9; ++i) {
    const T p = xp[i] * rot.c - jacobi::conjugate(s) * xq[i], q = s * xp[i] + xq[i] * rot.c;
    alpha2 += jacobi::abs2(p);
    beta2 += jacobi::abs2(q);
    dot += cd(jacobi::conjugate(p)) * cd(q);
  }
  CHECK(std::abs(dot) <= tol<T>(9) * double(alpha + beta));
  CHECK(std::abs(double(alpha2 + beta2 - alpha - beta)) <= tol<T>(9) * double(alpha + beta));
}

TEST_CASE_TEMPLATE("one-sided Jacobi SVD on the host: σ equals Eigen's, A = U Σ Vᴴ, U and V orthonormal", T,
                   TPROD_TEST_SCALARS) {
  SUBCASE("tall, wide, square, odd and even column counts, one row or column") {
    for (const auto& [m, n] : {std::tuple{40, 33}, std::tuple{33, 40}, std::tuple{64, 64}, std::tuple{1, 1},
                               std::tuple{5, 1}, std::tuple{1, 5}, std::tuple{7, 6}, std::tuple{3, 7},
                               std::tuple{100, 37}}) {
      CAPTURE(shape_string(m, n, 1));
      check_svd(random_tensor3<T>(m, n, 1, 31 + m + n));
    }
  }
  SUBCASE("rank 5 of 37 columns: the zero σ's columns completed to an orthonormal U") {
    const auto b = random_tensor3<T>(70, 5, 1, 3), c = random_tensor3<T>(5, 37, 1, 4);
    tensor3<T> a(70, 37, 1);
    a.slice(0) = b.slice(0) * c.slice(0);
    check_svd(a);
    const auto got = jacobi_svd_of(a.data(), 70, 37);
    CHECK(double(got.sigma[5]) <= tol<T>(70) * double(got.sigma[0]));
  }
  SUBCASE("a zero matrix, and one with a zero column: σ = 0 and orthonormal factors") {
    check_svd(tensor3<T>(6, 4, 1));
    check_svd(tensor3<T>(4, 6, 1));
    auto a = random_tensor3<T>(8, 5, 1, 9);
    for (std::size_t i = 0; i < 8; ++i) a(i, 2, 0) = T(0);
    check_svd(a);
    const auto got = jacobi_svd_of(a.data(), 8, 5);
    CHECK(got.sigma[4] == real_t<T>(0));
  }
  SUBCASE("entries whose squares over- or underflow: scaled by a power of two first") {
    using R = real_t<T>;
    for (const R scale : {R(std::is_same_v<R, float> ? 1e30 : 1e300), R(std::is_same_v<R, float> ? 1e-30 : 1e-300)}) {
      CAPTURE(double(scale));
      auto a = random_tensor3<T>(12, 9, 1, 17);
      for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] *= scale;
      check_svd(a);
    }
  }
}
