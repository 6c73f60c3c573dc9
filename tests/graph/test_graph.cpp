// SPDX-License-Identifier: Apache-2.0
// The graph area: adjacency matrices, Laplacians, the graph Fourier transform, spectral convolution, polynomial
// filters, the RGTN time graph and the attention graph. References are plain loops over the defining formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "flat_gradient_check.hpp"
#include "tprod/graph.hpp"

namespace {

using tprod::dense_matrix;
using tprod::dense_vector;
using tprod::nd_shape;
using tprod::ndtensor;

/// Tolerance for a result with `ops` accumulated roundings of T.
template <class T>
double tol(double ops) {
  return 50.0 * double(std::numeric_limits<T>::epsilon()) * ops;
}

/// max |a − b| in double.
template <class DA, class DB>
double max_diff(const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  if (a.size() == 0) return 0;
  return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}
/// The same for a tensor against its mode-1 unfolding.
template <class T, class DB>
double max_diff(const ndtensor<T>& a, const Eigen::MatrixBase<DB>& b) {
  REQUIRE(a.size() == std::size_t(b.size()));
  return max_diff(Eigen::Map<const dense_matrix<T>>(a.data(), b.rows(), b.cols()), b);
}

/// A random symmetric L×L matrix with entries in [−1, 1].
template <class T>
dense_matrix<T> random_symmetric(std::size_t l, std::uint64_t seed) {
  const dense_matrix<T> r = tprod::random_matrix<T>(l, l, seed);
  return T(0.5) * (r + r.transpose());
}

/// y = Σ_k α_k Ψᵏ x by explicit powers of Ψ, in double.
Eigen::MatrixXd power_sum(const Eigen::MatrixXd& psi, const std::vector<double>& alpha, const Eigen::MatrixXd& x) {
  Eigen::MatrixXd y = Eigen::MatrixXd::Zero(x.rows(), x.cols()), pk = x;
  for (double a : alpha) {
    y += a * pk;
    pk = psi * pk;
  }
  return y;
}

}  // namespace

TEST_CASE_TEMPLATE("adjacency matrices from edge lists, degrees and Laplacians", T, float, double) {
  const std::vector<tprod::graph_edge> edges{{0, 1}, {1, 2}, {2, 0}, {2, 3}};
  const std::vector<T> w{T(1), T(2), T(0.5), T(3)};
  const dense_matrix<T> a = tprod::adjacency_from_edges<T>(5, edges, w);
  // by hand: an undirected weighted triangle 0–1–2 with a pendant 3 and an isolated vertex 4
  dense_matrix<T> ref = dense_matrix<T>::Zero(5, 5);
  ref(0, 1) = ref(1, 0) = 1;
  ref(1, 2) = ref(2, 1) = 2;
  ref(2, 0) = ref(0, 2) = T(0.5);
  ref(2, 3) = ref(3, 2) = 3;
  CHECK(max_diff(a, ref) == 0.0);
  const dense_matrix<T> directed = tprod::adjacency_from_edges<T>(5, edges, w, tprod::edge_direction::directed);
  CHECK(directed(1, 2) == T(2));
  CHECK(directed(2, 1) == T(0));
  CHECK(tprod::adjacency_from_edges<T>(3, {{0, 1}, {0, 1}})(1, 0) == T(2));  // repeated edges add up

  const dense_vector<T> d = tprod::degrees(a);
  const std::vector<double> d_ref{1.5, 3, 5.5, 3, 0};
  for (std::size_t l = 0; l < 5; ++l) CHECK(double(d(Eigen::Index(l))) == doctest::Approx(d_ref[l]));
  const dense_matrix<T> lap = tprod::laplacian(a);
  const dense_matrix<T> nlap = tprod::normalized_laplacian(a);
  for (Eigen::Index i = 0; i < 5; ++i)
    for (Eigen::Index j = 0; j < 5; ++j) {
      const double aij = double(a(i, j)), di = d_ref[std::size_t(i)], dj = d_ref[std::size_t(j)];
      CHECK(double(lap(i, j)) == doctest::Approx((i == j ? di : 0.0) - aij));
      const double n_ref = (i == j ? 1.0 : 0.0) - (di > 0 && dj > 0 ? aij / std::sqrt(di * dj) : 0.0);
      CHECK(std::abs(double(nlap(i, j)) - n_ref) <= tol<T>(4));
    }
  CHECK(double(tprod::degree_matrix(a)(2, 2)) == doctest::Approx(5.5));
}

TEST_CASE("adjacency and Laplacian errors name the problem") {
  CHECK_THROWS_WITH_AS(tprod::adjacency_from_edges<double>(3, {{0, 3}}),
                       doctest::Contains("edge 0 (0, 3) names a vertex outside 0..3-1"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::adjacency_from_edges<double>(3, {{0, 1}}, {1.0, 2.0}),
                       doctest::Contains("2 weights for 1 edges"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::laplacian(dense_matrix<double>(2, 3)), doctest::Contains("must be square, got 2x3"),
                       tprod::shape_error);
  dense_matrix<double> neg = dense_matrix<double>::Zero(2, 2);
  neg(0, 1) = neg(1, 0) = -1;
  CHECK_THROWS_WITH_AS(tprod::normalized_laplacian(neg), doctest::Contains("negative degree"), tprod::numerical_error);
}

TEST_CASE_TEMPLATE("graph Fourier basis: Ψ = ΦΛΦᵀ, transforms invert, spectral convolution", T, float, double) {
  const std::size_t l = 7;
  const dense_matrix<T> psi = random_symmetric<T>(l, 3);
  const auto b = tprod::graph_fourier(psi);
  const Eigen::MatrixXd phi = b.phi.template cast<double>();
  CHECK(max_diff(Eigen::MatrixXd(phi.transpose() * phi), Eigen::MatrixXd::Identity(7, 7)) <= tol<T>(l * 10));
  CHECK(max_diff(Eigen::MatrixXd(phi * b.lambda.template cast<double>().asDiagonal() * phi.transpose()),
                 psi.template cast<double>()) <= tol<T>(l * 10));
  for (Eigen::Index k = 1; k < Eigen::Index(l); ++k) CHECK(b.lambda(k - 1) <= b.lambda(k));

  const dense_matrix<T> x = tprod::random_matrix<T>(l, 3, 4);
  const dense_matrix<T> xh = tprod::graph_fourier_transform(b, x);
  CHECK(max_diff(xh, dense_matrix<T>(b.phi.transpose() * x)) <= tol<T>(l));
  CHECK(max_diff(tprod::inverse_graph_fourier_transform(b, xh), x) <= tol<T>(l * 10));

  // y = Φ diag(γ) Φᵀ x by loops, in double
  const dense_vector<T> gamma = tprod::random_matrix<T>(l, 1, 5);
  const ndtensor<T> xt = tprod::random_ndtensor<T>({l, 2, 3}, 6);
  const ndtensor<T> yt = tprod::spectral_convolution(b, gamma, xt);
  CHECK(tprod::shape_of(yt) == nd_shape{l, 2, 3});
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t i = 0; i < l; ++i) {
      double s = 0;
      for (std::size_t m = 0; m < l; ++m)
        for (std::size_t j = 0; j < l; ++j)
          s += phi(Eigen::Index(i), Eigen::Index(m)) * double(gamma(Eigen::Index(m))) *
               phi(Eigen::Index(j), Eigen::Index(m)) * double(xt.data()[j + l * r]);
      CHECK(std::abs(double(yt.data()[i + l * r]) - s) <= tol<T>(l * l));
    }
}

TEST_CASE("the graph Fourier transform refuses a non-symmetric or non-square matrix") {
  dense_matrix<double> a = random_symmetric<double>(4, 8);
  a(1, 3) += 0.25;
  CHECK_THROWS_WITH_AS(tprod::graph_fourier(a), doctest::Contains("not symmetric (|psi(3, 1) - psi(1, 3)| = 0.25"),
                       tprod::numerical_error);
  CHECK_THROWS_WITH_AS(tprod::graph_fourier(dense_matrix<double>(3, 4)),
                       doctest::Contains("graph_fourier: the matrix must be square, got 3x4"), tprod::shape_error);
  const auto b = tprod::graph_fourier(random_symmetric<double>(4, 9));
  CHECK_THROWS_WITH_AS(tprod::graph_fourier_transform(b, dense_vector<double>(5)),
                       doctest::Contains("a signal on 5 vertices for a graph of 4 vertices"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::spectral_convolution(b, dense_vector<double>(3), dense_vector<double>(4)),
                       doctest::Contains("3 multipliers for 4 graph frequencies"), tprod::shape_error);
}

TEST_CASE("the graph without vertices: an empty basis, empty transforms and an empty RGTN pass, no crash") {
  const dense_matrix<double> none(0, 0);
  const auto b = tprod::graph_fourier(none);
  CHECK(b.vertices() == 0);
  CHECK(b.phi.size() == 0);
  CHECK(tprod::graph_fourier_transform(b, dense_matrix<double>(0, 3)).rows() == 0);
  CHECK(tprod::spectral_convolution(b, dense_vector<double>(0), dense_matrix<double>(0, 3)).cols() == 3);
  CHECK(tprod::shifted_inverse_sqrt(none).size() == 0);
  CHECK(tprod::rgtn_forward(tprod::time_adjacency<double>(0, 0.5), dense_matrix<double>(0, 2)).cols() == 2);
  const dense_matrix<double> one = dense_matrix<double>::Constant(1, 1, 3.0);  // one vertex: its own mode
  const auto b1 = tprod::graph_fourier(one);
  CHECK(std::abs(b1.phi(0, 0)) == doctest::Approx(1.0));
  CHECK(b1.lambda(0) == doctest::Approx(3.0));
  CHECK(tprod::shifted_inverse_sqrt(tprod::time_adjacency<double>(1, 0.5))(0, 0) == doctest::Approx(1.0));
}

TEST_CASE_TEMPLATE("polynomial filter by Horner equals Φ f_α(Λ) Φᵀ on vectors, matrices and tensors", T, float, double) {
  const std::size_t l = 6;
  const dense_matrix<T> psi = T(0.5) * random_symmetric<T>(l, 11);
  const auto b = tprod::graph_fourier(psi);
  const Eigen::MatrixXd phi = b.phi.template cast<double>();
  for (std::size_t k = 1; k <= 5; ++k) {
    CAPTURE(k);
    std::vector<T> alpha(k);
    for (std::size_t i = 0; i < k; ++i) alpha[i] = T(0.3) * T(i + 1) * (i % 2 ? T(-1) : T(1));
    // f_α(λ) evaluated per eigenvalue by explicit powers
    Eigen::VectorXd f = Eigen::VectorXd::Zero(Eigen::Index(l));
    for (Eigen::Index m = 0; m < Eigen::Index(l); ++m) {
      for (std::size_t i = 0; i < k; ++i) f(m) += double(alpha[i]) * std::pow(double(b.lambda(m)), double(i));
    }
    const Eigen::MatrixXd filter = phi * f.asDiagonal() * phi.transpose();
    CHECK(max_diff(tprod::polynomial_multipliers<T>(b.lambda, alpha), f) <= tol<T>(5 * k));

    const dense_vector<T> xv = tprod::random_matrix<T>(l, 1, 20 + k);
    CHECK(max_diff(tprod::polynomial_filter(psi, alpha, xv), Eigen::VectorXd(filter * xv.template cast<double>())) <=
          tol<T>(10 * l * k));
    const dense_matrix<T> xm = tprod::random_matrix<T>(l, 4, 30 + k);
    CHECK(max_diff(tprod::polynomial_filter(psi, alpha, xm), Eigen::MatrixXd(filter * xm.template cast<double>())) <=
          tol<T>(10 * l * k));
    const ndtensor<T> xt = tprod::random_ndtensor<T>({l, 2, 2, 2}, 40 + k);
    const ndtensor<T> yt = tprod::polynomial_filter(psi, alpha, xt);
    CHECK(tprod::shape_of(yt) == nd_shape{l, 2, 2, 2});
    const Eigen::MatrixXd x1 = tprod::detail::as_matrix(xt, l, 8).template cast<double>();
    CHECK(max_diff(yt, Eigen::MatrixXd(filter * x1)) <= tol<T>(10 * l * k));
    tprod::tensor3<T> x3(l, 2, 3);
    for (std::size_t e = 0; e < x3.size(); ++e) x3.data()[e] = T(std::sin(double(e)));
    const tprod::tensor3<T> y3 = tprod::polynomial_filter(psi, alpha, x3);
    CHECK((y3.m() == l && y3.n() == 2 && y3.p() == 3));
    const Eigen::MatrixXd x31 = Eigen::Map<const dense_matrix<T>>(x3.data(), Eigen::Index(l), 6).template cast<double>();
    CHECK(max_diff(Eigen::Map<const dense_matrix<T>>(y3.data(), Eigen::Index(l), 6), Eigen::MatrixXd(filter * x31)) <=
          tol<T>(10 * l * k));
  }
  // Ψ need not be symmetric for the filter itself: compare with explicit powers
  const dense_matrix<T> g = T(0.4) * tprod::random_matrix<T>(l, l, 12);
  const std::vector<T> alpha{T(0.5), T(-1), T(0.25), T(2)};
  const dense_matrix<T> x = tprod::random_matrix<T>(l, 3, 13);
  CHECK(max_diff(tprod::polynomial_filter(g, alpha, x),
                 power_sum(g.template cast<double>(), {0.5, -1, 0.25, 2}, x.template cast<double>())) <= tol<T>(40 * l));
  CHECK_THROWS_WITH_AS(tprod::polynomial_filter(g, std::vector<T>{}, x), doctest::Contains("at least one coefficient"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::polynomial_filter(g, alpha, dense_matrix<T>(5, 2)),
                       doctest::Contains("a signal on 5 vertices for a 6x6 graph matrix"), tprod::shape_error);
}

TEST_CASE("polynomial filter gradients: finite differences and the adjoint identity") {
  const std::size_t l = 5;
  dense_matrix<double> psi = 0.5 * tprod::random_matrix<double>(l, l, 50);  // non-symmetric on purpose
  dense_matrix<double> x = tprod::random_matrix<double>(l, 3, 51);
  const auto check = [&](std::vector<double> alpha, std::uint64_t seed) {
    flat_grad::diff_map f;
    f.vars = {flat_grad::span_of(psi), flat_grad::span_of(alpha), flat_grad::span_of(x)};
    f.names = {"psi", "alpha", "x"};
    f.forward = [&] { return flat_grad::flat(tprod::polynomial_filter_matrix<double>(psi, alpha, x)); };
    f.backward = [&](const flat_grad::vec& w) {
      tprod::polynomial_filter_saved<double> saved;
      tprod::polynomial_filter_matrix<double>(psi, alpha, x, &saved);
      const Eigen::Map<const dense_matrix<double>> dy(w.data(), Eigen::Index(l), 3);
      const auto g = tprod::polynomial_filter_backward<double>(psi, alpha, x, saved, dy);
      return std::vector<flat_grad::vec>{flat_grad::flat(g.d_psi), g.d_alpha, flat_grad::flat(g.d_x)};
    };
    flat_grad::check_gradients(f, seed);
  };
  check({0.7, -0.4, 0.3, 0.2}, 52);
  check({1.5}, 53);  // K = 1: y = α₀x, no dependence on Ψ
}

TEST_CASE_TEMPLATE("RGTN time graph: weights c^(l2-l1), Ω, and the forward passes", T, float, double) {
  // by hand, L = 4, c = 1/2
  const double ref[4][4] = {{0, 0.5, 0.25, 0.125}, {0, 0, 0.5, 0.25}, {0, 0, 0, 0.5}, {0, 0, 0, 0}};
  const dense_matrix<T> a = tprod::time_adjacency<T>(4, 0.5);
  const dense_matrix<T> omega = tprod::bidirectional_time_adjacency<T>(4, 0.5);
  for (Eigen::Index i = 0; i < 4; ++i)
    for (Eigen::Index j = 0; j < 4; ++j) {
      CHECK(double(a(i, j)) == doctest::Approx(ref[i][j]));
      CHECK(double(omega(i, j)) == doctest::Approx(0.5 * (ref[i][j] + ref[j][i])));
    }

  const std::size_t l = 9;
  const ndtensor<T> x = tprod::random_ndtensor<T>({l, 2, 3}, 60);
  const Eigen::MatrixXd x1 = tprod::detail::as_matrix(x, l, 6).template cast<double>();
  const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(Eigen::Index(l), Eigen::Index(l));
  for (const int kind : {0, 1, 2}) {  // directed, bidirectional, directed transposed (causal)
    CAPTURE(kind);
    const bool directed = kind != 1;
    const dense_matrix<T> a8 = tprod::time_adjacency<T>(l, 0.8);
    const dense_matrix<T> g = kind == 0 ? a8 : kind == 1 ? tprod::bidirectional_time_adjacency<T>(l, 0.8)
                                                         : dense_matrix<T>(a8.transpose());
    const Eigen::MatrixXd gd = g.template cast<double>();
    // (I + A)^{-1/2}: its square times I + A is the identity; directed: upper triangular, diagonal 1
    const Eigen::MatrixXd r = tprod::shifted_inverse_sqrt(g).template cast<double>();
    CHECK(max_diff(Eigen::MatrixXd(r * r * (id + gd)), id) <= tol<T>(100 * l));
    if (directed) {
      if (kind == 0) CHECK(r.template triangularView<Eigen::StrictlyLower>().toDenseMatrix().isZero(0));
      if (kind == 2) CHECK(r.template triangularView<Eigen::StrictlyUpper>().toDenseMatrix().isZero(0));
      CHECK(max_diff(Eigen::VectorXd(r.diagonal()), Eigen::VectorXd::Ones(Eigen::Index(l))) <= tol<T>(1));
    } else {
      CHECK(max_diff(r, Eigen::MatrixXd(r.transpose())) <= tol<T>(10 * l));
      // positive definite: the principal root
      CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(r).eigenvalues().minCoeff() > 0);
    }
    const ndtensor<T> y = tprod::rgtn_forward(g, x);
    CHECK(max_diff(y, Eigen::MatrixXd(r * x1)) <= tol<T>(100 * l));
    const ndtensor<T> yf = tprod::fast_rgtn_forward(g, x);
    CHECK(max_diff(yf, Eigen::MatrixXd((id + gd) * x1)) <= tol<T>(4 * l));
  }
}

TEST_CASE_TEMPLATE("RGTN with an idempotent P: ten(I + A ⊗ P) contracted with X by its 4-index sum", T, float,
                   double) {
  const std::size_t l = 7, j = 5;
  const dense_matrix<T> a = tprod::time_adjacency<T>(l, 0.6), x = tprod::random_matrix<T>(l, j, 90);
  // An oblique projector P = B (CᵀB)⁻¹ Cᵀ of rank 2: idempotent, not symmetric.
  const Eigen::MatrixXd b = tprod::random_matrix<double>(j, 2, 91), c = tprod::random_matrix<double>(j, 2, 92);
  const dense_matrix<T> p = (b * (c.transpose() * b).inverse() * c.transpose()).template cast<T>();
  const dense_matrix<T> y = tprod::rgtn_forward(a, p, x);
  double worst = 0, scale = 1;
  for (std::size_t l1 = 0; l1 < l; ++l1)
    for (std::size_t j1 = 0; j1 < j; ++j1) {
      double sum = 0;  // Σ_{l2, j2} (I + A ⊗ P)(l1, j1, l2, j2)·X(l2, j2)
      for (std::size_t l2 = 0; l2 < l; ++l2)
        for (std::size_t j2 = 0; j2 < j; ++j2) {
          const double identity = l1 == l2 && j1 == j2 ? 1.0 : 0.0;
          sum += (identity + double(a(Eigen::Index(l1), Eigen::Index(l2))) * double(p(Eigen::Index(j1), Eigen::Index(j2)))) *
                 double(x(Eigen::Index(l2), Eigen::Index(j2)));
        }
      worst = std::max(worst, std::abs(double(y(Eigen::Index(l1), Eigen::Index(j1))) - sum));
      scale = std::max(scale, std::abs(sum));
    }
  CHECK(worst <= tol<T>(double(l * j)) * scale);
  // P = I is the fast form (I + A) ×₁ X.
  const dense_matrix<T> id = dense_matrix<T>::Identity(Eigen::Index(j), Eigen::Index(j));
  CHECK(max_diff(Eigen::MatrixXd(tprod::rgtn_forward(a, id, x).template cast<double>()),
                 Eigen::MatrixXd(tprod::fast_rgtn_forward(a, x).template cast<double>())) <= tol<T>(double(l)));
  CHECK_THROWS_WITH_AS(tprod::rgtn_forward(a, dense_matrix<T>(T(2) * id), x), doctest::Contains("not idempotent"),
                       tprod::numerical_error);
  CHECK_THROWS_WITH_AS(tprod::rgtn_forward(a, p, dense_matrix<T>(x.transpose())),
                       doctest::Contains("a 7x7 time graph and a 5x5 propagation for a 5x7 signal"), tprod::shape_error);
}

TEST_CASE("time graphs refuse bad damping constants and unsupported matrices") {
  CHECK_THROWS_WITH_AS(tprod::time_adjacency<double>(4, 1.0), doctest::Contains("c = 1 must lie in (0, 1)"),
                       tprod::shape_error);
  CHECK_THROWS_AS(tprod::bidirectional_time_adjacency<double>(4, 0.0), tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::shifted_inverse_sqrt(tprod::random_matrix<double>(3, 3, 70)),
                       doctest::Contains("neither symmetric nor triangular"), tprod::numerical_error);
  const dense_matrix<double> neg = -2 * dense_matrix<double>::Identity(3, 3);
  CHECK_THROWS_WITH_AS(tprod::shifted_inverse_sqrt(neg), doctest::Contains("no real inverse square root"),
                       tprod::numerical_error);
  CHECK_THROWS_WITH_AS(tprod::fast_rgtn_forward(tprod::time_adjacency<double>(4, 0.5), dense_vector<double>(3)),
                       doctest::Contains("a 4x4 time graph for a signal on 3 steps"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::mode1_product(dense_matrix<double>(2, 4), dense_matrix<double>(3, 2)),
                       doctest::Contains("a 2x4 matrix cannot multiply a signal on 3 vertices"), tprod::shape_error);
}

TEST_CASE_TEMPLATE("attention graph: Θ = ε(KKᵀ/d_k) with a zero diagonal, symmetric; Ψ = Ω ⊙ Θ", T, float, double) {
  const std::size_t l = 8, j = 6;
  const ndtensor<T> kt = tprod::random_ndtensor<T>({l, 2, 3}, 80);
  const dense_matrix<T> k = tprod::detail::as_matrix(kt, l, j);
  const double dk = 6;
  const dense_matrix<T> theta = tprod::attention_coefficients<T>(k, dk);
  CHECK(max_diff(tprod::attention_coefficients(kt, dk), theta) == 0.0);
  const auto softplus = [](T s) { return T(std::log1p(std::exp(double(s)))); };
  const dense_matrix<T> theta_sp = tprod::attention_coefficients<T>(k, dk, softplus);
  for (Eigen::Index a = 0; a < Eigen::Index(l); ++a)
    for (Eigen::Index b = 0; b < Eigen::Index(l); ++b) {
      double s = 0;
      for (Eigen::Index c = 0; c < Eigen::Index(j); ++c) s += double(k(a, c)) * double(k(b, c));
      s /= dk;
      CHECK(std::abs(double(theta(a, b)) - (a == b ? 0.0 : std::max(s, 0.0))) <= tol<T>(j));
      CHECK(std::abs(double(theta_sp(a, b)) - (a == b ? 0.0 : std::log1p(std::exp(s)))) <= tol<T>(4 * j));
      CHECK(theta(a, b) == theta(b, a));
      CHECK(theta(a, b) >= T(0));
    }
  CHECK(theta.diagonal().isZero(0));
  CHECK(theta.minCoeff() == T(0));  // ReLU cuts some couplings (sparsity)

  const dense_matrix<T> omega = tprod::bidirectional_time_adjacency<T>(l, 0.9);
  const dense_matrix<T> psi = tprod::attention_adjacency(omega, theta);
  CHECK(max_diff(psi, dense_matrix<T>(psi.transpose())) == 0.0);
  for (Eigen::Index a = 0; a < Eigen::Index(l); ++a)
    for (Eigen::Index b = 0; b < Eigen::Index(l); ++b) CHECK(psi(a, b) == omega(a, b) * theta(a, b));
  CHECK_NOTHROW(tprod::graph_fourier(psi));  // symmetric: it has a graph Fourier basis

  CHECK_THROWS_WITH_AS(tprod::attention_coefficients<T>(k, 0.0), doctest::Contains("attention_scores: the scale d_k = 0 must be positive"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(tprod::attention_adjacency(omega, dense_matrix<T>(theta.topRows(3))),
                       doctest::Contains("the time graph is 8x8 but the attention coefficients are 3x8"),
                       tprod::shape_error);
}
