// SPDX-License-Identifier: Apache-2.0
// Block-term decomposition (ALS), CP-ALS as its rank-one case, and multi-linear attention.
#include <doctest/doctest.h>

#include "decomp_test_support.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"
#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/multilinear_attention.hpp"

using namespace decomp_test;
using tprod::shape_error;

namespace {

// Σ_p G_p ×_1 A_p ×_2 B_p ×_3 C_p with random cores and factors, built with the loop reference.
template <class T>
ndtensor<T> random_block_terms(const nd_shape& shape, std::size_t terms, const nd_shape& ranks, std::uint64_t seed) {
  ndtensor<T> x = tprod::zeros<T>(shape);
  for (std::size_t p = 0; p < terms; ++p) {
    ndtensor<T> term = tprod::random_ndtensor<T>(ranks, seed + 100 * p);
    for (std::size_t n = 0; n < shape.size(); ++n)
      term = reference_mode_product(term, tprod::random_matrix<T>(shape[n], ranks[n], seed + 100 * p + n + 1), n);
    for (std::size_t e = 0; e < x.size(); ++e) x.data()[e] += term.data()[e];
  }
  return x;
}

template <class T>
void check_monotone(const std::vector<double>& fits) {
  for (std::size_t k = 1; k < fits.size(); ++k) {
    CAPTURE(k);
    CHECK(fits[k] >= fits[k - 1] - tol<T>(1000));
  }
}

}  // namespace

TEST_CASE_TEMPLATE("block-term ALS recovers an exact sum of two rank-(2,2,2) terms", T, float, double) {
  const ndtensor<T> x = random_block_terms<T>({6, 7, 5}, 2, {2, 2, 2}, 1);
  const auto r = tprod::block_term_als(x, 2, {2, 2, 2}, {.max_sweeps = 300, .fit_tolerance = 0, .restarts = 3});
  CHECK(r.fit_history.size() == r.sweeps + 1);
  CHECK(r.relative_error <= (std::is_same_v<T, float> ? 1e-3 : 1e-6));
  CHECK(rel_diff(r.reconstruct(), x) == doctest::Approx(r.relative_error).epsilon(1e-3));
  check_monotone<T>(r.fit_history);
  REQUIRE(r.cores.size() == 2);
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(tprod::shape_of(r.cores[p]) == nd_shape{2, 2, 2});
    for (const auto& u : r.factors[p]) CHECK(orthonormality_defect(u) <= tol<T>(20));
  }
  // the terms add up to the reconstruction
  ndtensor<T> sum = r.term(0);
  for (std::size_t e = 0; e < sum.size(); ++e) sum.data()[e] += r.term(1).data()[e];
  CHECK(rel_diff(sum, r.reconstruct()) <= tol<T>(10));
  CHECK(r.parameter_count() == 2 * (8 + 12 + 14 + 10));
  CHECK(r.compression_ratio == doctest::Approx(210.0 / 88));
}

TEST_CASE_TEMPLATE("block-term ALS on a generic tensor: the fit never decreases; sweeps and tolerance stop it", T,
                   float, double) {
  const ndtensor<T> x = tprod::random_ndtensor<T>({5, 6, 4}, 11);
  const auto r = tprod::block_term_als(x, 3, {2, 2, 2}, {.max_sweeps = 40, .fit_tolerance = 0, .seed = 5});
  CHECK(r.sweeps <= 40);
  check_monotone<T>(r.fit_history);
  CHECK(r.relative_error > 0.05);  // 3 small terms cannot hold a random 5×6×4 tensor
  const auto s = tprod::block_term_als(x, 3, {2, 2, 2}, {.max_sweeps = 1000, .fit_tolerance = 1e-3, .seed = 5});
  CHECK(s.sweeps < 1000);
  // without line search and from a random start the fit is monotone too; restarts keep the best run
  const tprod::block_term_options plain{.max_sweeps = 30, .fit_tolerance = 0, .seed = 5,
                                        .init = tprod::block_term_init::random, .line_search = false};
  const auto u = tprod::block_term_als(x, 3, {2, 2, 2}, plain);
  check_monotone<T>(u.fit_history);
  auto three = plain;
  three.restarts = 3;
  CHECK(tprod::block_term_als(x, 3, {2, 2, 2}, three).relative_error <= u.relative_error);
  auto none = plain;
  none.restarts = 0;  // no run at all is not a request for one: refused, not silently 1
  CHECK_THROWS_WITH_AS(tprod::block_term_als(x, 3, {2, 2, 2}, none), doctest::Contains("restarts must be at least 1"),
                       tprod::shape_error);
  // an order-4 tensor works the same way
  const ndtensor<T> y = random_block_terms<T>({4, 5, 3, 4}, 2, {2, 2, 1, 2}, 13);
  const auto q = tprod::block_term_als(y, 2, {2, 2, 1, 2}, {.max_sweeps = 300, .fit_tolerance = 0, .restarts = 3});
  check_monotone<T>(q.fit_history);
  CHECK(q.relative_error <= (std::is_same_v<T, float> ? 1e-2 : 1e-5));
}

TEST_CASE_TEMPLATE("CP-ALS recovers a rank-3 tensor; weights sorted, unit-norm columns", T, float, double) {
  const std::vector<dense_matrix<T>> f = {tprod::random_matrix<T>(5, 3, 21), tprod::random_matrix<T>(4, 3, 22),
                                          tprod::random_matrix<T>(6, 3, 23)};
  const ndtensor<T> x = reference_cp<T>(f, {3.0, 2.0, 1.0});
  const auto r = tprod::cp_als(x, 3, {.max_sweeps = 500, .fit_tolerance = 0, .seed = 1});
  CHECK(r.relative_error <= (std::is_same_v<T, float> ? 1e-3 : 1e-6));
  check_monotone<T>(r.fit_history);
  for (Eigen::Index k = 0; k < 3; ++k) {
    CHECK(r.weights(k) >= 0);
    if (k > 0) CHECK(r.weights(k) <= r.weights(k - 1));
    for (const auto& a : r.factors) CHECK(double(a.col(k).norm()) == doctest::Approx(1).epsilon(tol<T>(10)));
  }
  // Kruskal reconstruction (Khatri–Rao path) against the explicit outer-product sum
  std::vector<double> w;
  for (Eigen::Index k = 0; k < 3; ++k) w.push_back(double(r.weights(k)));
  CHECK(rel_diff(r.reconstruct(), reference_cp<T>(r.factors, w)) <= tol<T>(20));
  CHECK(r.parameter_count() == 3 + 15 + 12 + 18);
}

TEST_CASE("CP-ALS and HOOI repeat bit for bit with the same seed, wherever the heap puts the tensor") {
  // Eigen's vectorized reductions peel the elements before the first aligned packet, so an ndtensor at a less
  // aligned address once gave different last bits. Copies made between allocations of assorted sizes land at
  // assorted addresses (under the old 16-byte allocator, at different offsets modulo the packet size).
  const std::vector<dense_matrix<double>> f = {tprod::random_matrix<double>(7, 2, 31),
                                               tprod::random_matrix<double>(5, 2, 32),
                                               tprod::random_matrix<double>(6, 2, 33)};
  const ndtensor<double> x = reference_cp<double>(f, {2.0, 1.0});
  const auto first = tprod::cp_als(x, 2, {.seed = 3});
  const auto first_tucker = tprod::hooi(x, {.ranks = {2, 2, 2}});
  std::vector<std::vector<double>> spacers;
  for (std::size_t k = 1; k <= 8; ++k) {
    spacers.emplace_back(k);  // shifts where the next allocation lands
    const ndtensor<double> copy = x;
    const auto again = tprod::cp_als(copy, 2, {.seed = 3});
    CHECK(again.weights == first.weights);
    for (std::size_t n = 0; n < 3; ++n) CHECK(again.factors[n] == first.factors[n]);
    CHECK(tprod::hooi(copy, {.ranks = {2, 2, 2}}).core == first_tucker.core);
  }
}

TEST_CASE_TEMPLATE("CP-ALS is the rank-(1,1,1) block-term ALS, on orders 3 and 4", T, float, double) {
  const ndtensor<T> x = tprod::random_ndtensor<T>({4, 5, 3, 3}, 31);
  const tprod::block_term_options o{.max_sweeps = 25, .fit_tolerance = 0, .seed = 9};
  const auto cp = tprod::cp_als(x, 2, o);
  const auto btd = tprod::block_term_als(x, 2, {1, 1, 1, 1}, o);
  CHECK(rel_diff(cp.reconstruct(), btd.reconstruct()) <= tol<T>(100));
  REQUIRE(cp.fit_history.size() == btd.fit_history.size());
  for (std::size_t k = 0; k < cp.fit_history.size(); ++k) CHECK(cp.fit_history[k] == doctest::Approx(btd.fit_history[k]).epsilon(tol<T>(100)));
  // order 1: a vector is its own rank-one CP
  const ndtensor<T> v = tprod::random_ndtensor<T>({6}, 32);
  CHECK(tprod::cp_als(v, 1).relative_error <= tol<T>(10));
}

TEST_CASE("block-term and CP ALS reject bad ranks and term counts, naming the shape") {
  const auto x = tprod::random_ndtensor<double>({3, 4, 5}, 1);
  CHECK_THROWS_WITH_AS(tprod::block_term_als(x, 2, {2, 2}), doctest::Contains("2 ranks given for a tensor of shape 3x4x5"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::block_term_als(x, 2, {2, 5, 2}), doctest::Contains("rank 5 for mode 1 is outside 1…4 (tensor of shape 3x4x5)"), shape_error);
  CHECK_THROWS_AS(tprod::block_term_als(x, 0, {1, 1, 1}), shape_error);
  CHECK_THROWS_WITH_AS(tprod::cp_als(x, 0), doctest::Contains("3x4x5"), shape_error);
}

TEST_CASE("every decomposition refuses NaN and Inf instead of returning NaN factors") {
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    auto x = tprod::random_ndtensor<double>({3, 4, 5}, 1);
    x.data()[7] = bad;
    using tprod::numerical_error;
    CHECK_THROWS_WITH_AS(tprod::hosvd(x, {.ranks = {2, 2, 2}}), doctest::Contains("hosvd: the tensor holds NaN or Inf"), numerical_error);
    CHECK_THROWS_WITH_AS(tprod::st_hosvd(x, {.tolerance = 0.1}), doctest::Contains("st_hosvd: the tensor holds NaN"), numerical_error);
    CHECK_THROWS_WITH_AS(tprod::hooi(x, {.ranks = {2, 2, 2}}), doctest::Contains("hooi: the tensor holds NaN"), numerical_error);
    CHECK_THROWS_WITH_AS(tprod::tt_svd(x, {.tolerance = 0.1}), doctest::Contains("tt_svd: the tensor holds NaN"), numerical_error);
    CHECK_THROWS_WITH_AS(tprod::block_term_als(x, 2, {1, 2, 2}), doctest::Contains("block_term_als: the tensor holds NaN"), numerical_error);
    CHECK_THROWS_AS(tprod::cp_als(x, 2), numerical_error);
  }
}

namespace {

// T(a, b, c) = (1/P) Σ_p Σ_{i,j,k} G_p(i, j, k)·Q(a, i)·K(b, j)·V(c, k), written out.
template <class T>
ndtensor<T> reference_attention(const std::vector<ndtensor<T>>& g, const dense_matrix<T>& q, const dense_matrix<T>& k,
                                const dense_matrix<T>& v) {
  const nd_shape out = {std::size_t(q.rows()), std::size_t(k.rows()), std::size_t(v.rows())};
  ndtensor<T> t = tprod::zeros<T>(out);
  for_each_index(out, [&](const std::vector<std::size_t>& o) {
    double s = 0;
    for (const auto& gp : g)
      for_each_index(tprod::shape_of(gp), [&](const std::vector<std::size_t>& r) {
        s += double(at(gp, r)) * double(q(Eigen::Index(o[0]), Eigen::Index(r[0]))) *
             double(k(Eigen::Index(o[1]), Eigen::Index(r[1]))) * double(v(Eigen::Index(o[2]), Eigen::Index(r[2])));
      });
    at(t, o) = T(s / double(g.size()));
  });
  return t;
}

}  // namespace

TEST_CASE_TEMPLATE("multi-linear attention: T = (1/P) Σ_p G_p ×1 Q ×2 K ×3 V with shared factors", T, float, double) {
  const std::vector<ndtensor<T>> g = {tprod::random_ndtensor<T>({3, 2, 4}, 41), tprod::random_ndtensor<T>({3, 2, 4}, 42),
                                      tprod::random_ndtensor<T>({3, 2, 4}, 43)};
  const dense_matrix<T> q = tprod::random_matrix<T>(5, 3, 44), k = tprod::random_matrix<T>(6, 2, 45),
                        v = tprod::random_matrix<T>(4, 4, 46);
  const ndtensor<T> t = tprod::multilinear_attention_tensor(g, q, k, v);
  CHECK(tprod::shape_of(t) == nd_shape{5, 6, 4});
  CHECK(rel_diff(t, reference_attention(g, q, k, v)) <= tol<T>(100));
  // SplitConcat: the frontal slices side by side
  const dense_matrix<T> sc = tprod::split_concat(t);
  REQUIRE(sc.rows() == 5);
  REQUIRE(sc.cols() == 24);
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t b = 0; b < 6; ++b)
      for (std::size_t a = 0; a < 5; ++a) CHECK(sc(Eigen::Index(a), Eigen::Index(c * 6 + b)) == at(t, {a, b, c}));
  const dense_matrix<T> wo = tprod::random_matrix<T>(24, 7, 47);
  CHECK(rel_diff_matrix(tprod::multilinear_attention(g, q, k, v, wo), dense_matrix<T>(sc * wo)) <= tol<T>(100));
}

TEST_CASE_TEMPLATE("a diagonal core gives the rank-R sum Σ_r g_r q_r ∘ k_r ∘ v_r", T, float, double) {
  dense_vector<T> diag(3);
  diag << T(0.5), T(-1.5), T(2);
  const ndtensor<T> core = tprod::diagonal_core(diag);
  for_each_index({3, 3, 3}, [&](const std::vector<std::size_t>& i) {
    CHECK(at(core, i) == (i[0] == i[1] && i[1] == i[2] ? diag(Eigen::Index(i[0])) : T(0)));
  });
  const dense_matrix<T> q = tprod::random_matrix<T>(4, 3, 51), k = tprod::random_matrix<T>(4, 3, 52),
                        v = tprod::random_matrix<T>(4, 3, 53);
  const ndtensor<T> t = tprod::multilinear_attention_tensor<T>({core}, q, k, v);
  CHECK(rel_diff(t, reference_cp<T>({q, k, v}, {0.5, -1.5, 2.0})) <= tol<T>(30));
}

TEST_CASE("multi-linear attention rejects mismatched cores and factors, naming the shapes") {
  const std::vector<ndtensor<double>> g = {tprod::random_ndtensor<double>({3, 2, 4}, 1)};
  const dense_matrix<double> q = tprod::random_matrix<double>(5, 3, 2), k = tprod::random_matrix<double>(6, 2, 3),
                             v = tprod::random_matrix<double>(4, 4, 4);
  CHECK_THROWS_WITH_AS(tprod::multilinear_attention_tensor(g, q, k, dense_matrix<double>(4, 3)),
                       doctest::Contains("V 4x3 do not fit cores of shape 3x2x4"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::multilinear_attention_tensor<double>({g[0], tprod::random_ndtensor<double>({3, 2, 3}, 5)}, q, k, v),
                       doctest::Contains("core 1 has shape 3x2x3 but core 0 has 3x2x4"), shape_error);
  CHECK_THROWS_AS(tprod::multilinear_attention_tensor<double>({}, q, k, v), shape_error);
  CHECK_THROWS_WITH_AS(tprod::multilinear_attention(g, q, k, v, dense_matrix<double>(23, 2)),
                       doctest::Contains("W_O is 23x2 but SplitConcat(T) is 5x24"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::split_concat(tprod::random_ndtensor<double>({2, 2}, 6)), doctest::Contains("2x2"), shape_error);
  CHECK_THROWS_AS(tprod::diagonal_core(dense_vector<double>(0)), shape_error);
}
