// SPDX-License-Identifier: Apache-2.0
// Tests of algebra/norms.hpp, algebra/predicates.hpp and algebra/mode_product.hpp.
#include <Eigen/QR>

#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;

TEST_CASE_TEMPLATE("Frobenius norm and inner product, and their transform-domain forms", T, TPROD_TEST_SCALARS) {
  const auto a = random_tensor3<T>(3, 4, 7, 1), b = random_tensor3<T>(3, 4, 7, 2);
  double sum = 0;
  std::complex<double> dot = 0;
  for (std::size_t e = 0; e < a.size(); ++e) {
    sum += std::norm(std::complex<double>(a.data()[e]));
    dot += std::conj(std::complex<double>(a.data()[e])) * std::complex<double>(b.data()[e]);
  }
  CHECK(std::abs(frobenius_norm(a) - std::sqrt(sum)) <= tol<T>(84) * std::sqrt(sum));
  CHECK(std::abs(std::complex<double>(inner(a, b)) - dot) <= tol<T>(84) * std::abs(dot) + tol<T>(84));
  // Orthogonal transforms preserve the Frobenius norm; the unnormalized DFT scales it by √p (Parseval).
  for_each_transform(7, [&](const auto& l) {
    CAPTURE(l.name());
    const auto ah = transform(a, l), bh = transform(b, l);
    if (const auto scale = l.norm_scale(7)) {
      CHECK(std::abs(double(frobenius_norm(ah)) * std::sqrt(*scale) - std::sqrt(sum)) <= tol<T>(84) * std::sqrt(sum));
      CHECK(std::abs(std::complex<double>(inner(ah, bh)) * *scale - dot) <= tol<T>(84) * (std::abs(dot) + 1));
    }
  });
  CHECK(dct{}.norm_scale(7) == 1.0);
  CHECK(dft{}.norm_scale(7) == doctest::Approx(1.0 / 7));
  CHECK_FALSE(matrix_transform<double>(well_conditioned(7, 3)).norm_scale(7).has_value());
  CHECK_THROWS_AS(inner(a, random_tensor3<T>(4, 3, 7, 1)), shape_error);
}

TEST_CASE_TEMPLATE("predicates: f-positive-definite and f-positive-semidefinite (paper 001 Def. 3.4)", T,
                   TPROD_TEST_SCALARS) {
  for_each_transform(4, [](const auto& l) {
    CAPTURE(l.name());
    using Tp = typename std::decay_t<decltype(l)>::template original_scalar<T>;
    // Bᵀ *_L B with B 5×3×p: every slice B̂_kᴴB̂_k is a Gram matrix of full column rank, so positive definite.
    const auto b = random_tensor3<Tp>(5, 3, 4, 11);
    const auto gram = product(transpose(b, l), b, l);
    CHECK(is_f_positive_definite(gram, l));
    CHECK(is_f_positive_semidefinite(gram, l));
    CHECK(is_f_positive_definite(transform(gram, l)));
    // What it means under a multiple of a unitary Z: ⟨X, A *_L X⟩ > 0 for X ≠ 0.
    if (l.norm_scale(4))
      for (std::uint64_t seed = 20; seed < 23; ++seed) {
        const auto x = random_tensor3<Tp>(3, 2, 4, seed);
        CHECK(std::real(std::complex<double>(inner(x, product(gram, x, l)))) > 0);
      }
    // Cᵀ *_L C with C 2×3×p: slices of rank 2, semidefinite but singular.
    const auto c = random_tensor3<Tp>(2, 3, 4, 12);
    const auto singular = product(transpose(c, l), c, l);
    CHECK_FALSE(is_f_positive_definite(singular, l));
    CHECK(is_f_positive_semidefinite(singular, l));
    // −Bᵀ *_L B: symmetric, negative definite; a random A: not symmetric; a non-square tensor: neither.
    CHECK_FALSE(is_f_positive_semidefinite(-gram, l));
    CHECK_FALSE(is_f_positive_definite(-gram, l));
    CHECK_FALSE(is_f_positive_semidefinite(random_tensor3<Tp>(3, 3, 4, 13), l));
    CHECK_FALSE(is_f_positive_semidefinite(random_tensor3<Tp>(3, 4, 4, 14), l));
  });
}

TEST_CASE_TEMPLATE("predicates: L-orthogonal, f-diagonal, f-symmetric", T, TPROD_TEST_SCALARS) {
  for_each_transform(4, [](const auto& l) {
    CAPTURE(l.name());
    using Tp = typename std::decay_t<decltype(l)>::template original_scalar<T>;
    // An L-orthogonal tensor: orthonormalize every transform-domain slice (QR), map back.
    auto qh = transform(random_tensor3<Tp>(4, 4, 4, 5), l);
    for (std::size_t k = 0; k < qh.stored_slices(); ++k) {
      using Mat = Eigen::Matrix<typename std::decay_t<decltype(qh)>::value_type, -1, -1>;
      const Mat q = Eigen::HouseholderQR<Mat>(Mat(qh.slice(k))).householderQ();
      qh.slice(k) = q;
    }
    const auto q = inverse_transform(qh);
    CHECK(is_orthogonal(q, l));
    TPROD_CHECK_CLOSE(product(transpose(q, l), q, l), identity<T>(4, 4, l), Tp, 64);
    CHECK_FALSE(is_orthogonal(random_tensor3<Tp>(4, 4, 4, 6), l));
    // f-symmetric: A + Aᵀ is, a random A is not.
    const auto a = random_tensor3<Tp>(3, 3, 4, 7);
    CHECK(is_f_symmetric(a + transpose(a, l), l));
    CHECK_FALSE(is_f_symmetric(a, l));
  });
  tensor3<T> d(3, 3, 2);
  d(0, 0, 0) = T(1); d(1, 1, 1) = T(2);
  CHECK(is_f_diagonal(d));
  CHECK(is_f_diagonal(transform(d, dft{})));
  d(0, 1, 1) = T(0.5);
  CHECK_FALSE(is_f_diagonal(d));
}

TEST_CASE_TEMPLATE("mode-n products against Kolda-Bader definitions", T, TPROD_TEST_SCALARS) {
  const auto a = random_tensor3<T>(3, 4, 5, 1);
  const Eigen::Matrix<T, -1, -1> u1 = Eigen::Matrix<T, -1, -1>::Random(2, 3), u2 = Eigen::Matrix<T, -1, -1>::Random(6, 4),
                                 u3 = Eigen::Matrix<T, -1, -1>::Random(7, 5);
  const auto b1 = mode_product(a, u1, 0);  // the papers' ×₁, ×₂, ×₃ are modes 0, 1, 2
  const auto b2 = mode_product(a, u2, 1);
  const auto b3 = mode_product(a, u3, 2);
  CHECK(b1.shape() == "2x4x5");
  CHECK(b2.shape() == "3x6x5");
  CHECK(b3.shape() == "3x4x7");
  double err = 0;
  // Sum definitions: (A ×₁ U)(r, j, k) = Σ_i U(r, i)·A(i, j, k), and likewise for modes 2 and 3.
  auto check_mode = [&](const auto& b, auto&& expected) {
    for (std::size_t i = 0; i < b.m(); ++i)
      for (std::size_t j = 0; j < b.n(); ++j)
        for (std::size_t k = 0; k < b.p(); ++k) err = std::max(err, std::abs(std::complex<double>(b(i, j, k) - expected(i, j, k))));
  };
  check_mode(b1, [&](auto r, auto j, auto k) { T s{}; for (std::size_t i = 0; i < 3; ++i) s += u1(r, i) * a(i, j, k); return s; });
  check_mode(b2, [&](auto i, auto r, auto k) { T s{}; for (std::size_t j = 0; j < 4; ++j) s += u2(r, j) * a(i, j, k); return s; });
  check_mode(b3, [&](auto i, auto j, auto r) { T s{}; for (std::size_t k = 0; k < 5; ++k) s += u3(r, k) * a(i, j, k); return s; });
  CHECK(err <= tol<T>(5) * 5);
  // The DCT transform is the product with Φ along the tubes (×₃, mode 2).
  TPROD_CHECK_CLOSE(mode_product(a, reference_z(dct{}, 5), 2), transform(a, dct{}).data(), T, 10);
  CHECK_THROWS_WITH_AS(mode_product(a, u1, 1), doctest::Contains("mode 1 of the 3x4x5 tensor has extent 4"),
                       shape_error);
  CHECK_THROWS_WITH_AS(mode_product(a, u1, 3), doctest::Contains("has modes 0, 1 and 2"), shape_error);
}
