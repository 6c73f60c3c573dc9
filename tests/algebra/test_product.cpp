// SPDX-License-Identifier: Apache-2.0
// Tests of algebra/product.hpp and algebra/facewise.hpp: the L-product against its definition, its identities,
// the circulant form of the t-product, known values, transform-domain chains and error cases.
#include <algorithm>
#include <array>

#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;

// The three extents tiers: all fixed, fixed slice with dynamic p, all dynamic (A: 3×4×5, B: 4×2×5, C: 2×3×5).
using tiers = std::tuple<std::tuple<extents3<3, 4, 5>, extents3<4, 2, 5>, extents3<2, 3, 5>>,
                         std::tuple<extents3<3, 4, dynamic_extent>, extents3<4, 2, dynamic_extent>,
                                    extents3<2, 3, dynamic_extent>>,
                         std::tuple<dextents3, dextents3, dextents3>>;

template <class F> void for_each_tier(F&& f) {
  std::apply([&](auto... t) { (std::apply([&](auto ea, auto eb, auto ec) {
                                 f(decltype(ea)(3, 4, 5), decltype(eb)(4, 2, 5), decltype(ec)(2, 3, 5));
                               }, t), ...); }, tiers{});
}

TEST_CASE_TEMPLATE("L-product equals its definition L^-1(L(A) facewise L(B)) for every transform and tier", T,
                   TPROD_TEST_SCALARS) {
  for_each_transform(5, [](const auto& l) {
    for_each_tier([&](auto ea, auto eb, auto) {
      CAPTURE(l.name());
      const auto a = random_for<T>(l, ea, 1);
      const auto b = random_for<T>(l, eb, 2);
      const auto c = product(a, b, l);
      static_assert(std::is_same_v<typename std::decay_t<decltype(c)>::extents_type,
                                   detail::product_extents<decltype(ea), decltype(eb)>>);
      CHECK(c.extents() == extents3<3, 2, 5>());
      TPROD_CHECK_CLOSE(c, reference_product(a, b, l), T, 4 * 5);
    });
  });
}

TEST_CASE_TEMPLATE("L-product identities: associativity, A*I = I*A = A, chains in the transform domain", T,
                   TPROD_TEST_SCALARS) {
  for_each_transform(5, [](const auto& l) {
    {  // the extents tiers are swept by the definition test above; here the dynamic tier
      const dextents3 ea(3, 4, 5), eb(4, 2, 5), ec(2, 3, 5);
      CAPTURE(l.name());
      const auto a = random_for<T>(l, ea, 3), b = random_for<T>(l, eb, 4), c = random_for<T>(l, ec, 5);
      using Tp = value_type_of<decltype(a)>;
      const std::size_t n = 4 * 5 * 5;
      TPROD_CHECK_CLOSE(product(product(a, b, l), c, l), product(a, product(b, c, l), l), Tp, n);
      TPROD_CHECK_CLOSE(product(a, identity<T>(4, 5, l), l), a, Tp, n);
      TPROD_CHECK_CLOSE(product(identity<T>(3, 5, l), a, l), a, Tp, n);
      // One forward transform per operand, one inverse at the end: (A*B)*C + A*(B*C) stays transformed.
      const auto ah = transform(a, l), bh = transform(b, l), ch = transform(c, l);
      const auto chain = inverse_transform(ah * bh * ch + ah * (bh * ch) - Tp(2) * (ah * bh * ch));
      CHECK(max_diff(chain, tensor3<Tp>(3, 3, 5)) <= tol<Tp>(n) * max_abs(product(product(a, b, l), c, l)));
    }
  });
}

TEST_CASE_TEMPLATE("facewise product is the L-product under the identity transform", T, TPROD_TEST_SCALARS) {
  const auto a = random_tensor3<T>(3, 4, 6, 8), b = random_tensor3<T>(4, 5, 6, 9);
  const auto c = facewise(a, b);
  for (std::size_t k = 0; k < 6; ++k) {
    const Eigen::Matrix<T, -1, -1> expected = a.slice(k) * b.slice(k);
    CHECK((c.slice(k) - expected).norm() <= tol<T>(4) * expected.norm());
  }
  TPROD_CHECK_CLOSE(c, product(a, b, identity_transform{}), T, 4);
}

TEST_CASE_TEMPLATE("products on the tube kernel: partial tiles, a forward and an in-place inverse, and the identity",
                   T, float, double) {
  // Odd extents give partial tiles; the forward transforms run out of place in the tensors' own memory, the inverse
  // in place (in Ĉ's memory at p ≤ 16, through panels at p = 24; both paths alone: tests/backend). Under the
  // identity the product is the facewise product, which must equal the steps through copies.
  const std::array<std::array<std::size_t, 4>, 3> shapes{{{33, 17, 35, 16}, {70, 9, 66, 24}, {5, 3, 2, 7}}};
  const Eigen::MatrixXd z16 = well_conditioned(16, 3), z24 = well_conditioned(24, 5), z7 = well_conditioned(7, 4);
  const execution_scope gemm(execution{transform_path::gemm});
  for (const auto& [m, k, n, p] : shapes) {
    CAPTURE(m);
    CAPTURE(p);
    const auto a = random_tensor3<T>(m, k, p, m + p), b = random_tensor3<T>(k, n, p, n + p);
    const auto check = [&](const auto& l) {
      CAPTURE(l.name());
      TPROD_CHECK_CLOSE(product(a, b, l), reference_product(a, b, l), T, 4 * k * p);
    };
    check(dct{});
    check(matrix_transform<double>(p == 16 ? z16 : p == 24 ? z24 : z7));
    check(identity_transform{});
    const identity_transform id;
    CHECK(max_diff(product(a, b, id), inverse_transform(transform(a, id) * transform(b, id))) == 0.0);
  }
  // A Z of the wrong size is refused.
  const auto a = random_tensor3<T>(4, 4, 5, 1);
  CHECK_THROWS_WITH_AS(product(a, a, matrix_transform<double>(z7)),
                       doctest::Contains("Z is 7x7 but the tubes have length p = 5"), shape_error);
}

TEST_CASE_TEMPLATE("DFT product of real tensors equals bcirc(A)·unfold(B) and is real", T, float, double) {
  const std::size_t m = 3, l = 4, n = 2, p = 6;
  const auto a = random_tensor3<T>(m, l, p, 10), b = random_tensor3<T>(l, n, p, 11);
  for (auto path : {transform_path::gemm, transform_path::fftw}) {
    if (path == transform_path::fftw && !TPROD_HAS_FFTW) continue;
    const tensor3<T> c = product(execution{path}, a, b, dft{});  // real in, real out (a compile-time fact)
    // bcirc(A) is the block circulant with block (r, s) = A(:, :, (r − s) mod p); unfold(B) stacks B's slices.
    Eigen::Matrix<T, -1, -1> bcirc(m * p, l * p), unfold_b(l * p, n);
    for (std::size_t r = 0; r < p; ++r)
      for (std::size_t s = 0; s < p; ++s) bcirc.block(r * m, s * l, m, l) = a.slice((r + p - s) % p);
    for (std::size_t s = 0; s < p; ++s) unfold_b.block(s * l, 0, l, n) = b.slice(s);
    const Eigen::Matrix<T, -1, -1> expected = bcirc * unfold_b;
    for (std::size_t k = 0; k < p; ++k)
      CHECK((c.slice(k) - expected.block(k * m, 0, m, n)).norm() <= tol<T>(l * p) * expected.norm());
  }
}

// Known values (issue's worked example; DFT values verifiable by hand, DCT first slice from scipy).
template <class T> std::pair<tensor3<T>, tensor3<T>> known_operands() {
  using M = typename tensor3<T>::matrix_type;
  auto a = tensor3<T>::from_slices({(M(2, 2) << 1, 2, 3, 4).finished(), (M(2, 2) << 0, 1, 1, 0).finished(),
                                    (M(2, 2) << 2, 0, 0, -1).finished()});
  auto b = tensor3<T>::from_slices({(M(2, 3) << 1, 0, 2, 0, 1, 1).finished(), (M(2, 3) << 1, 1, 0, 2, 0, 1).finished(),
                                    (M(2, 3) << 0, 1, 1, 1, 0, 0).finished()});
  return {a, b};
}

TEST_CASE_TEMPLATE("known values of the DFT and DCT products", T, TPROD_TEST_SCALARS) {
  using M = typename tensor3<T>::matrix_type;
  const auto [a, b] = known_operands<T>();
  const auto expected_dft = tensor3<T>::from_slices({(M(2, 3) << 4, 4, 4, 1, 5, 10).finished(),
                                                     (M(2, 3) << 5, 4, 5, 11, 3, 6).finished(),
                                                     (M(2, 3) << 6, 1, 6, 5, 3, 2).finished()});
  for (auto path : {transform_path::gemm, transform_path::fftw}) {
    if (path == transform_path::fftw && !TPROD_HAS_FFTW) continue;
    TPROD_CHECK_CLOSE(product(execution{path}, a, b, dft{}), expected_dft, T, 10);
    const auto c = product(execution{path}, a, b, dct{});
    const M first = (M(2, 3) << 1.621967, 2.588587, 3.852677, 1.884131, 2.960141, 6.292529).finished();
    CHECK((c.slice(0) - first).cwiseAbs().maxCoeff() <= 1e-6 + tol<T>(10) * 7);
  }
}

TEST_CASE("product shape errors name both shapes") {
  const auto a = random_tensor3<double>(2, 3, 4, 1), b = random_tensor3<double>(2, 3, 4, 2);
  CHECK_THROWS_WITH_AS(product(a, b, dct{}), doctest::Contains("2x3x4 and B is 2x3x4"), shape_error);
  CHECK_THROWS_WITH_AS(product(a, b, dct{}), doctest::Contains("A's columns (3) must equal B's rows (2)"), shape_error);
  const auto c = random_tensor3<double>(3, 2, 5, 3);
  CHECK_THROWS_WITH_AS(product(a, c, dft{}), doctest::Contains("B is 3x2x5"), shape_error);
  CHECK_THROWS_AS(facewise(a, b), shape_error);
  // Fixed-slice operands whose dynamic p disagree are caught at run time.
  const tensor3<double, extents3<2, 3, dynamic_extent>> f(2, 3, 4);
  const tensor3<double, extents3<3, 2, dynamic_extent>> g(3, 2, 6);
  CHECK_THROWS_AS(product(f, g, dct{}), shape_error);
}

TEST_CASE("operands in different matrix-transform domains are refused") {
  const auto a = random_tensor3<double>(2, 2, 3, 1);
  const matrix_transform<double> z1(well_conditioned(3, 1)), z2(well_conditioned(3, 2));
  CHECK_THROWS_WITH_AS(transform(a, z1) * transform(a, z2), doctest::Contains("different"), transform_mismatch_error);
  CHECK_NOTHROW(transform(a, z1) * transform(a, matrix_transform<double>(z1.matrix())));  // same Z, other object
  CHECK_THROWS_WITH_AS(transform(random_tensor3<double>(2, 2, 4, 1), z1),  // Z is 3×3, p = 4
                       doctest::Contains("Z is 3x3 but the tubes have length p = 4"), shape_error);
}

// Mixing domains or transforms does not compile: these pairs have no operator*.
template <class X, class Y> concept multipliable = requires(const X& x, const Y& y) { x * y; };
static_assert(multipliable<transformed<double, dct>, transformed<double, dct>>);
static_assert(!multipliable<transformed<double, dct>, transformed<double, dft>>);
static_assert(!multipliable<transformed<double, dct>, tensor3<double>>);
static_assert(!multipliable<tensor3<double>, tensor3<double>>);
static_assert(!multipliable<transformed<float, dct>, transformed<double, dct>>);
