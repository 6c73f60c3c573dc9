// SPDX-License-Identifier: Apache-2.0
// Order-N basics: ndtensor helpers, unfold/fold, mode products, contractions, Kronecker and Khatri–Rao products.
#include <doctest/doctest.h>

#include "decomp_test_support.hpp"
#include "tprod/core/random.hpp"
#include "tprod/decomp/contraction.hpp"
#include "tprod/decomp/kron.hpp"
#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/unfold.hpp"

using namespace decomp_test;
using tprod::shape_error;

namespace {

// Kolda & Bader (2009), §2.4: X ∈ ℝ^{3×4×2} with X(:,:,1) = [1 4 7 10; 2 5 8 11; 3 6 9 12], X(:,:,2) = 13…24,
// i.e. the values 1…24 in column-major order.
template <class T>
ndtensor<T> kolda_bader_example() {
  ndtensor<T> x = ndtensor<T>::from_shape({3, 4, 2});
  for (std::size_t e = 0; e < 24; ++e) x.data()[e] = T(e + 1);
  return x;
}

const std::vector<nd_shape> shapes = {{5}, {4, 3}, {3, 4, 2}, {2, 3, 4, 5}, {3, 2, 1, 2, 4}, {17, 2, 3}, {20, 3, 2}};

}  // namespace

TEST_CASE_TEMPLATE("unfold: Kolda-Bader's worked example", T, float, double) {
  const ndtensor<T> x = kolda_bader_example<T>();
  dense_matrix<T> x1(3, 8), x2(4, 6), x3(2, 12);
  x1 << 1, 4, 7, 10, 13, 16, 19, 22, 2, 5, 8, 11, 14, 17, 20, 23, 3, 6, 9, 12, 15, 18, 21, 24;
  x2 << 1, 2, 3, 13, 14, 15, 4, 5, 6, 16, 17, 18, 7, 8, 9, 19, 20, 21, 10, 11, 12, 22, 23, 24;
  for (int j = 0; j < 12; ++j) {
    x3(0, j) = T(j + 1);
    x3(1, j) = T(j + 13);
  }
  CHECK(tprod::unfold(x, 0) == x1);
  CHECK(tprod::unfold(x, 1) == x2);
  CHECK(tprod::unfold(x, 2) == x3);
}

TEST_CASE_TEMPLATE("unfold and fold agree with the index formula on orders 1 to 5", T, float, double) {
  std::uint64_t seed = 1;
  for (const auto& s : shapes) {
    const ndtensor<T> x = tprod::random_ndtensor<T>(s, seed++);
    for (std::size_t n = 0; n < s.size(); ++n) {
      CAPTURE(n);
      const dense_matrix<T> m = tprod::unfold(x, n);
      CHECK(m == reference_unfold(x, n));
      const ndtensor<T> back = tprod::fold(m, n, s);
      CHECK(std::equal(back.data(), back.data() + back.size(), x.data()));
    }
  }
}

TEST_CASE("unfold and fold reject bad modes and shapes, naming them") {
  const auto x = tprod::random_ndtensor<double>({3, 4, 5}, 1);
  CHECK_THROWS_WITH_AS(tprod::unfold(x, 3), doctest::Contains("3x4x5"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::fold(dense_matrix<double>(4, 14), 1, {3, 4, 5}), doctest::Contains("4x14"),
                       shape_error);
  CHECK_THROWS_WITH_AS(tprod::fold(dense_matrix<double>(4, 15), 1, {3, 4, 0, 5}), doctest::Contains("empty"),
                       shape_error);
}

TEST_CASE_TEMPLATE("mode_product: Kolda-Bader's worked example", T, float, double) {
  dense_matrix<T> u(2, 3);
  u << 1, 3, 5, 2, 4, 6;
  const ndtensor<T> y = tprod::mode_product(kolda_bader_example<T>(), u, 0);
  CHECK(tprod::shape_of(y) == nd_shape{2, 4, 2});
  dense_matrix<T> s0(2, 4), s1(2, 4);
  s0 << 22, 49, 76, 103, 28, 64, 100, 136;
  s1 << 130, 157, 184, 211, 172, 208, 244, 280;
  CHECK(tprod::detail::as_matrix(y, 2, 8).leftCols(4) == s0);
  CHECK(tprod::detail::as_matrix(y, 2, 8).rightCols(4) == s1);
}

TEST_CASE_TEMPLATE("mode_product agrees with the defining sum in every mode and kernel path", T, float, double) {
  // {17,2,3} and {20,3,2} put ≥16 rows before a middle mode (the per-block GEMM path); the others the unfold path.
  std::uint64_t seed = 100;
  for (const auto& s : shapes) {
    const ndtensor<T> x = tprod::random_ndtensor<T>(s, seed++);
    for (std::size_t n = 0; n < s.size(); ++n) {
      for (const std::size_t j : {std::size_t(1), s[n] + 2}) {
        CAPTURE(n);
        const dense_matrix<T> u = tprod::random_matrix<T>(j, s[n], seed++);
        const ndtensor<T> ref = reference_mode_product(x, u, n);
        CHECK(rel_diff(tprod::mode_product(x, u, n), ref) <= tol<T>(double(s[n])));
      }
    }
  }
}

TEST_CASE_TEMPLATE("mode products compose: X ×n U ×n V = X ×n (VU), and distinct modes commute", T, float, double) {
  const ndtensor<T> x = tprod::random_ndtensor<T>({4, 5, 3, 2}, 7);
  const dense_matrix<T> u = tprod::random_matrix<T>(6, 5, 8), v = tprod::random_matrix<T>(3, 6, 9);
  const dense_matrix<T> a = tprod::random_matrix<T>(2, 4, 10);
  const dense_matrix<T> vu = v * u;
  CHECK(rel_diff(tprod::mode_product(tprod::mode_product(x, u, 1), v, 1), tprod::mode_product(x, vu, 1)) <=
        tol<T>(30));
  CHECK(rel_diff(tprod::mode_product(tprod::mode_product(x, a, 0), u, 1),
                 tprod::mode_product(tprod::mode_product(x, u, 1), a, 0)) <= tol<T>(30));
  // the mode-n unfolding identity Y_(n) = U·X_(n)
  CHECK(rel_diff_matrix(tprod::unfold(tprod::mode_product(x, u, 1), 1), dense_matrix<T>(u * tprod::unfold(x, 1))) <=
        tol<T>(10));
}

TEST_CASE_TEMPLATE("multi_mode_product equals the chain of single products, also transposed", T, float, double) {
  const ndtensor<T> x = tprod::random_ndtensor<T>({4, 5, 3, 6}, 11);
  const std::vector<dense_matrix<T>> f = {tprod::random_matrix<T>(2, 5, 12), tprod::random_matrix<T>(7, 4, 13),
                                          tprod::random_matrix<T>(3, 6, 14)};
  const std::vector<std::size_t> modes = {1, 0, 3};
  ndtensor<T> chain = x;
  for (std::size_t k = 0; k < 3; ++k) chain = reference_mode_product(chain, f[k], modes[k]);
  CHECK(rel_diff(tprod::multi_mode_product(x, f, modes), chain) <= tol<T>(100));
  std::vector<dense_matrix<T>> ft;
  for (const auto& m : f) ft.push_back(m.transpose());
  CHECK(rel_diff(tprod::multi_mode_product(x, ft, modes, tprod::factor_use::transposed), chain) <= tol<T>(100));
  CHECK(tprod::multi_mode_product(x, {}, {}) == x);
}

TEST_CASE_TEMPLATE("contract: the (m, n)-contraction equals its defining sum (paper 002 §2)", T, float, double) {
  std::uint64_t seed = 300;
  for (const auto& sa : shapes) {
    for (std::size_t n = 0; n < sa.size(); ++n) {
      // B of order 1 to 3 with its mode m of size I_n, at every position m.
      for (const nd_shape& rest : {nd_shape{}, nd_shape{3}, nd_shape{2, 3}}) {
        for (std::size_t m = 0; m <= rest.size(); ++m) {
          nd_shape sb = rest;
          sb.insert(sb.begin() + std::ptrdiff_t(m), sa[n]);
          if (sa.size() + sb.size() == 2) continue;  // two vectors: order 0, refused below
          CAPTURE(n);
          CAPTURE(m);
          const ndtensor<T> a = tprod::random_ndtensor<T>(sa, seed++), b = tprod::random_ndtensor<T>(sb, seed++);
          nd_shape sc;
          for (std::size_t k = 0; k < sa.size(); ++k)
            if (k != n) sc.push_back(sa[k]);
          for (std::size_t k = 0; k < sb.size(); ++k)
            if (k != m) sc.push_back(sb[k]);
          ndtensor<T> ref = ndtensor<T>::from_shape(sc);
          for_each_index(sc, [&](const std::vector<std::size_t>& ic) {
            std::vector<std::size_t> ia(ic.begin(), ic.begin() + std::ptrdiff_t(sa.size() - 1));
            std::vector<std::size_t> ib(ic.begin() + std::ptrdiff_t(sa.size() - 1), ic.end());
            ia.insert(ia.begin() + std::ptrdiff_t(n), 0);
            ib.insert(ib.begin() + std::ptrdiff_t(m), 0);
            double sum = 0;
            for (std::size_t i = 0; i < sa[n]; ++i) {
              ia[n] = ib[m] = i;
              sum += double(at(a, ia)) * double(at(b, ib));
            }
            at(ref, ic) = T(sum);
          });
          const ndtensor<T> c = tprod::contract(a, n, b, m);
          CHECK(tprod::shape_of(c) == sc);
          CHECK(rel_diff(c, ref) <= tol<T>(double(sa[n])));
        }
      }
    }
  }
}

TEST_CASE_TEMPLATE("contract with a vector: Kolda-Bader's X ×̄₂ v, and X ×ₙ vᵀ without its unit mode", T, float,
                   double) {
  dense_vector<T> v(4);
  v << 1, 2, 3, 4;
  const ndtensor<T> y = tprod::contract(kolda_bader_example<T>(), 1, v);  // mode 2 of the papers
  CHECK(tprod::shape_of(y) == nd_shape{3, 2});
  dense_matrix<T> expected(3, 2);
  expected << 70, 190, 80, 200, 90, 210;  // Kolda & Bader (2009), §2.5
  CHECK(tprod::detail::as_matrix(y, 3, 2) == expected);
  std::uint64_t seed = 400;
  for (const auto& s : shapes) {
    if (s.size() < 2) continue;
    const ndtensor<T> x = tprod::random_ndtensor<T>(s, seed++);
    for (std::size_t n = 0; n < s.size(); ++n) {
      CAPTURE(n);
      const dense_vector<T> w = tprod::random_matrix<T>(s[n], 1, seed++);
      const ndtensor<T> by_mode = tprod::mode_product(x, dense_matrix<T>(w.transpose()), n);
      const ndtensor<T> c = tprod::contract(x, n, w);
      CHECK(c.size() == by_mode.size());
      CHECK(rel_diff(tprod::reshaped(by_mode, tprod::shape_of(c)), c) <= tol<T>(double(s[n])));
    }
  }
}

TEST_CASE("contract refuses mismatched modes and order-0 results, naming them") {
  const auto a = tprod::random_ndtensor<double>({3, 4, 5}, 1), b = tprod::random_ndtensor<double>({5, 2}, 2);
  CHECK_THROWS_WITH_AS(tprod::contract(a, 1, b, 0), doctest::Contains("mode 1 of 3x4x5 has 4 indices"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::contract(a, 3, b, 0), doctest::Contains("out of range"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::contract(a, 0, dense_vector<double>::Ones(4)), doctest::Contains("has 3 indices"),
                       shape_error);
  const auto v = tprod::random_ndtensor<double>({4}, 3);
  CHECK_THROWS_WITH_AS(tprod::contract(v, 0, v, 0), doctest::Contains("dot product"), shape_error);
  CHECK(tprod::shape_of(tprod::contract(a, 2, b, 0)) == nd_shape{3, 4, 2});
}

TEST_CASE("mode products reject mismatched factors, naming both shapes") {
  const auto x = tprod::random_ndtensor<double>({3, 4, 5}, 1);
  CHECK_THROWS_WITH_AS(tprod::mode_product(x, dense_matrix<double>(2, 3), 1),
                       doctest::Contains("2x3 matrix cannot multiply mode 1 (size 4) of a tensor of shape 3x4x5"),
                       shape_error);
  CHECK_THROWS_WITH_AS(tprod::mode_product(x, dense_matrix<double>(2, 3), 5), doctest::Contains("out of range"),
                       shape_error);
  CHECK_THROWS_AS(tprod::multi_mode_product(x, {dense_matrix<double>(2, 3)}, {0, 1}), shape_error);
  CHECK_THROWS_WITH_AS(
      tprod::multi_mode_product(x, {dense_matrix<double>(2, 3), dense_matrix<double>(2, 3)}, {0, 0}),
      doctest::Contains("twice"), shape_error);
}

TEST_CASE_TEMPLATE("kron of matrices follows (A⊗B)(i·p+k, j·q+l) = A(i,j)·B(k,l)", T, float, double) {
  const dense_matrix<T> a = tprod::random_matrix<T>(3, 2, 1), b = tprod::random_matrix<T>(2, 4, 2);
  const dense_matrix<T> c = tprod::kron(a, b);
  REQUIRE(c.rows() == 6);
  REQUIRE(c.cols() == 8);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        for (int l = 0; l < 4; ++l) CHECK(c(i * 2 + k, j * 4 + l) == a(i, j) * b(k, l));
  // mixed-product identity (A⊗B)(C⊗D) = AC⊗BD
  const dense_matrix<T> cc = tprod::random_matrix<T>(2, 3, 3), d = tprod::random_matrix<T>(4, 2, 4);
  CHECK(rel_diff_matrix(dense_matrix<T>(c * tprod::kron(cc, d)), tprod::kron(dense_matrix<T>(a * cc), dense_matrix<T>(b * d))) <=
        tol<T>(10));
}

TEST_CASE_TEMPLATE("kron of tensors: C(i_n·J_n + j_n, …) = A(i)·B(j) in every mode", T, float, double) {
  const ndtensor<T> a = tprod::random_ndtensor<T>({2, 3, 2}, 5), b = tprod::random_ndtensor<T>({3, 1, 2}, 6);
  const ndtensor<T> c = tprod::kron(a, b);
  REQUIRE(tprod::shape_of(c) == nd_shape{6, 3, 4});
  for_each_index(tprod::shape_of(a), [&](const std::vector<std::size_t>& i) {
    for_each_index(tprod::shape_of(b), [&](const std::vector<std::size_t>& j) {
      CHECK(at(c, {i[0] * 3 + j[0], i[1] * 1 + j[1], i[2] * 2 + j[2]}) == at(a, i) * at(b, j));
    });
  });
  CHECK_THROWS_WITH_AS(tprod::kron(a, tprod::random_ndtensor<T>({3, 2}, 1)), doctest::Contains("2x3x2 and 3x2"),
                       shape_error);
}

TEST_CASE_TEMPLATE("khatri_rao: column r is a_r ⊗ b_r, and X_(0) = A·(C ⊙ B)ᵀ for a CP tensor", T, float, double) {
  const dense_matrix<T> a = tprod::random_matrix<T>(4, 3, 1), b = tprod::random_matrix<T>(5, 3, 2),
                        c = tprod::random_matrix<T>(2, 3, 3);
  const dense_matrix<T> kr = tprod::khatri_rao(b, c);
  for (int r = 0; r < 3; ++r) CHECK(kr.col(r) == tprod::kron(dense_matrix<T>(b.col(r)), dense_matrix<T>(c.col(r))));
  const ndtensor<T> x = reference_cp<T>({a, b, c}, {1.0, 1.0, 1.0});
  CHECK(rel_diff_matrix(tprod::unfold(x, 0), dense_matrix<T>(a * tprod::khatri_rao(c, b).transpose())) <= tol<T>(10));
  CHECK(rel_diff_matrix(tprod::unfold(x, 1), dense_matrix<T>(b * tprod::khatri_rao(std::vector<dense_matrix<T>>{c, a}).transpose())) <= tol<T>(10));
  // tensors: slices along the last mode are Kronecker products of the slices
  const ndtensor<T> ta = tprod::random_ndtensor<T>({2, 3, 2}, 4), tb = tprod::random_ndtensor<T>({3, 2, 2}, 5);
  const ndtensor<T> tc = tprod::khatri_rao(ta, tb);
  REQUIRE(tprod::shape_of(tc) == nd_shape{6, 6, 2});
  for_each_index(tprod::shape_of(ta), [&](const std::vector<std::size_t>& i) {
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t l = 0; l < 2; ++l)
        CHECK(at(tc, {i[0] * 3 + k, i[1] * 2 + l, i[2]}) == at(ta, i) * at(tb, {k, l, i[2]}));
  });
  CHECK_THROWS_WITH_AS(tprod::khatri_rao(a, dense_matrix<T>(2, 4)), doctest::Contains("4x3 and 2x4"), shape_error);
  CHECK_THROWS_AS(tprod::khatri_rao(std::vector<dense_matrix<T>>{}), shape_error);
}

TEST_CASE_TEMPLATE("permuted moves modes like numpy.transpose; reshaped keeps column-major order", T, float, double) {
  const ndtensor<T> x = tprod::random_ndtensor<T>({2, 3, 4, 5}, 9);
  const ndtensor<T> y = tprod::permuted(x, {2, 0, 3, 1});
  REQUIRE(tprod::shape_of(y) == nd_shape{4, 2, 5, 3});
  for_each_index(tprod::shape_of(x), [&](const std::vector<std::size_t>& i) {
    CHECK(at(y, {i[2], i[0], i[3], i[1]}) == at(x, i));
  });
  CHECK_THROWS_AS(tprod::permuted(x, {0, 1, 1, 2}), shape_error);
  const ndtensor<T> r = tprod::reshaped(x, {6, 20});
  CHECK(std::equal(r.data(), r.data() + r.size(), x.data()));
  CHECK_THROWS_WITH_AS(tprod::reshaped(x, {7, 20}), doctest::Contains("2x3x4x5"), shape_error);
}

TEST_CASE_TEMPLATE("ndtensor and tensor3 convert with A(i,j,k) preserved", T, float, double) {
  const tprod::tensor3<T> a = tprod::random_tensor3<T>(3, 4, 2, 5);
  const ndtensor<T> x = tprod::to_ndtensor(a);
  REQUIRE(tprod::shape_of(x) == nd_shape{3, 4, 2});
  for_each_index({3, 4, 2}, [&](const std::vector<std::size_t>& i) { CHECK(at(x, i) == a(i[0], i[1], i[2])); });
  const tprod::tensor3<T> back = tprod::to_tensor3(x);
  CHECK(std::equal(back.data(), back.data() + back.size(), a.data()));
  CHECK_THROWS_WITH_AS(tprod::to_tensor3(tprod::random_ndtensor<T>({2, 2}, 1)), doctest::Contains("2x2"), shape_error);
}
