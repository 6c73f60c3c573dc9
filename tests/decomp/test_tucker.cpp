// SPDX-License-Identifier: Apache-2.0
// Tucker: HOSVD, ST-HOSVD, HOOI, partial Tucker, and the shared-factor multi-head decomposition.
#include <doctest/doctest.h>

#include <Eigen/SVD>

#include "decomp_test_support.hpp"
#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/decomp/tucker.hpp"

using namespace decomp_test;
using tprod::shape_error;
using tprod::tucker_options;

namespace {

// reshape(1:27, 3, 3, 3) in column-major (Fortran) order.
template <class T>
ndtensor<T> one_to_27() {
  ndtensor<T> x = ndtensor<T>::from_shape({3, 3, 3});
  for (std::size_t e = 0; e < 27; ++e) x.data()[e] = T(e + 1);
  return x;
}

// A tensor of multilinear rank r in every mode, plus noise of relative size `noise`.
template <class T>
ndtensor<T> low_rank_plus_noise(const nd_shape& s, std::size_t r, double noise, std::uint64_t seed) {
  ndtensor<T> x = tprod::random_ndtensor<T>(nd_shape(s.size(), r), seed);
  for (std::size_t n = 0; n < s.size(); ++n) x = reference_mode_product(x, tprod::random_matrix<T>(s[n], r, seed + n + 1), n);
  const ndtensor<T> e = tprod::random_ndtensor<T>(s, seed + 99);
  const double scale = noise * norm(x) / norm(e);
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] += T(scale) * e.data()[i];
  return x;
}

template <class T>
void check_factors_orthonormal(const tprod::tucker_result<T>& r) {
  for (const auto& u : r.factors) CHECK(orthonormality_defect(u) <= tol<T>(double(u.rows())));
}

}  // namespace

TEST_CASE_TEMPLATE("HOSVD of reshape(1:27, 3, 3, 3): multilinear rank (2,2,2) and the published values", T, float,
                   double) {
  const ndtensor<T> x = one_to_27<T>();
  // multilinear rank from independent SVDs of the unfoldings: σ_3 vanishes in every mode
  for (std::size_t n = 0; n < 3; ++n) {
    const Eigen::JacobiSVD<dense_matrix<double>> svd(reference_unfold(x, n).template cast<double>());
    CHECK(svd.singularValues()(2) <= 1e-5 * svd.singularValues()(0));
    CHECK(svd.singularValues()(1) >= 1e-2 * svd.singularValues()(0));
  }
  const auto r = tprod::hosvd(x, {.ranks = {2, 2, 2}});
  CHECK(r.ranks() == std::vector<std::size_t>{2, 2, 2});
  CHECK(r.relative_error <= tol<T>(27));
  CHECK(rel_diff(r.reconstruct(), x) <= tol<T>(27));
  CHECK(std::abs(double(r.core.data()[0])) == doctest::Approx(83.01598119750199).epsilon(tol<T>(10)));
  const double sign = r.factors[0](0, 0) < 0 ? -1 : 1;
  CHECK(sign * r.factors[0](0, 0) == doctest::Approx(0.54521).epsilon(1e-5));
  CHECK(sign * r.factors[0](1, 0) == doctest::Approx(0.57677).epsilon(1e-5));
  CHECK(sign * r.factors[0](2, 0) == doctest::Approx(0.60834).epsilon(1e-5));
  check_factors_orthonormal(r);
  // a tolerance finds the rank (float resolves singular values only down to about ε·σ_1)
  const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-10;
  CHECK(tprod::hosvd(x, {.tolerance = eps}).ranks() == std::vector<std::size_t>{2, 2, 2});
  CHECK(tprod::st_hosvd(x, {.tolerance = eps}).ranks() == std::vector<std::size_t>{2, 2, 2});
}

TEST_CASE_TEMPLATE("HOSVD, ST-HOSVD and HOOI recover random tensors exactly at full ranks", T, float, double) {
  for (const nd_shape& s : {nd_shape{4, 3, 5}, nd_shape{3, 4, 2, 3}, nd_shape{2, 9, 3}}) {
    const ndtensor<T> x = tprod::random_ndtensor<T>(s, 21);
    const tucker_options full{.ranks = s};
    for (const auto& r : {tprod::hosvd(x, full), tprod::st_hosvd(x, full), tprod::hooi(x, full)}) {
      CHECK(r.relative_error <= tol<T>(double(x.size())));
      CHECK(rel_diff(r.reconstruct(), x) <= tol<T>(double(x.size())));
      CHECK(tprod::shape_of(r.core) == s);
      check_factors_orthonormal(r);
    }
    // the gram method too
    const auto g = tprod::hosvd(x, {.ranks = s, .subspace = tprod::subspace_method::gram});
    CHECK(g.relative_error <= tol<T>(double(x.size())));
  }
}

TEST_CASE_TEMPLATE("Tucker with a tolerance guarantees ‖X − X̂‖ ≤ ε‖X‖ on random and structured tensors", T, float,
                   double) {
  const std::vector<ndtensor<T>> inputs = {tprod::random_ndtensor<T>({6, 5, 7}, 31),
                                           low_rank_plus_noise<T>({8, 6, 7}, 3, 0.05, 32),
                                           low_rank_plus_noise<T>({5, 4, 6, 3}, 2, 0.01, 33)};
  for (const auto& x : inputs) {
    for (const double eps : {0.02, 0.1, 0.3, 0.6}) {
      CAPTURE(eps);
      const double slack = eps + tol<T>(double(x.size()));
      const auto h = tprod::hosvd(x, {.tolerance = eps});
      const auto s = tprod::st_hosvd(x, {.tolerance = eps});
      const auto o = tprod::hooi(x, {.tolerance = eps});
      CHECK(h.relative_error <= slack);
      CHECK(s.relative_error <= slack);
      CHECK(o.relative_error <= slack);
      CHECK(rel_diff(h.reconstruct(), x) <= slack);
      // for orthonormal factors ‖X − X̂‖² = ‖X‖² − ‖G‖²
      const double from_core = std::sqrt(std::max(0.0, 1 - std::pow(norm(s.core) / norm(x), 2)));
      CHECK(s.relative_error == doctest::Approx(from_core).epsilon(std::is_same_v<T, float> ? 1e-2 : 1e-6));
    }
  }
  // the structured tensors are found at their rank when the tolerance sits above the noise
  CHECK(tprod::hosvd(inputs[1], {.tolerance = 0.1}).ranks() == std::vector<std::size_t>{3, 3, 3});
}

TEST_CASE_TEMPLATE("HOOI: the fit never decreases and ends at least as good as HOSVD", T, float, double) {
  for (const std::uint64_t seed : {41, 42, 43}) {
    const ndtensor<T> x = tprod::random_ndtensor<T>({7, 6, 5, 4}, seed);
    const tucker_options o{.ranks = {3, 2, 3, 2}, .max_sweeps = 30, .fit_tolerance = 0};
    const auto h = tprod::hosvd(x, o);
    const auto r = tprod::hooi(x, o);
    REQUIRE(r.fit_history.size() == r.sweeps + 1);
    CHECK(r.sweeps >= 1);
    CHECK(r.sweeps <= 30);
    for (std::size_t k = 1; k < r.fit_history.size(); ++k) {
      CAPTURE(k);
      CHECK(r.fit_history[k] >= r.fit_history[k - 1] - tol<T>(10));
    }
    CHECK(r.fit_history.front() == doctest::Approx(1 - h.relative_error).epsilon(tol<T>(1000)));
    CHECK(r.relative_error <= h.relative_error + tol<T>(100));
    CHECK(1 - r.relative_error == doctest::Approx(r.fit_history.back()).epsilon(tol<T>(1000)));
    check_factors_orthonormal(r);
  }
  // stopping on the fit tolerance
  const auto x = tprod::random_ndtensor<T>({6, 6, 6}, 44);
  const auto r = tprod::hooi(x, {.ranks = {2, 2, 2}, .max_sweeps = 500, .fit_tolerance = 1e-4});
  CHECK(r.sweeps < 500);
  CHECK(r.fit_history.back() - r.fit_history[r.fit_history.size() - 2] < 1e-4);
}

TEST_CASE_TEMPLATE("partial Tucker decomposes only the chosen modes", T, float, double) {
  const ndtensor<T> x = low_rank_plus_noise<T>({6, 5, 7}, 2, 0.0, 51);
  const auto r = tprod::hooi(x, {.ranks = {2, 2}, .modes = {2, 0}});
  CHECK(r.modes == std::vector<std::size_t>{2, 0});
  CHECK(tprod::shape_of(r.core) == nd_shape{2, 5, 2});
  REQUIRE(r.factors.size() == 2);
  CHECK(r.factors[0].rows() == 7);
  CHECK(r.factors[1].rows() == 6);
  CHECK(r.relative_error <= tol<T>(double(x.size()), 500));
  CHECK(r.compression_ratio == doctest::Approx(210.0 / (20 + 14 + 12)));
  CHECK(r.parameter_count() == 46);
  // full ranks on a subset reconstruct exactly
  const auto s = tprod::st_hosvd(tprod::random_ndtensor<T>({4, 5, 3}, 52), {.ranks = {5}, .modes = {1}});
  CHECK(s.relative_error <= tol<T>(60));
}

TEST_CASE("Tucker rejects bad ranks, modes and tolerances, naming the shape") {
  const auto x = tprod::random_ndtensor<double>({3, 4, 5}, 1);
  CHECK_THROWS_WITH_AS(tprod::hosvd(x, {.ranks = {2, 2}}), doctest::Contains("2 ranks given for 3 decomposed modes of a tensor of shape 3x4x5"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::hooi(x, {.ranks = {2, 5, 2}}), doctest::Contains("rank 5 for mode 1 is outside 1…4 (tensor of shape 3x4x5)"), shape_error);
  CHECK_THROWS_AS(tprod::st_hosvd(x, {.ranks = {0, 1, 1}}), shape_error);
  CHECK_THROWS_WITH_AS(tprod::hosvd(x, {.modes = {0, 3}}), doctest::Contains("mode 3 is out of range for a tensor of shape 3x4x5"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::hosvd(x, {.modes = {1, 1}}), doctest::Contains("twice"), shape_error);
  CHECK_THROWS_AS(tprod::hosvd(x, {.tolerance = 1.0}), shape_error);
  CHECK_THROWS_AS(tprod::hosvd(x, {.tolerance = -0.1}), shape_error);
  CHECK_THROWS_WITH_AS(tprod::hosvd(x, {.ranks = {1, 1, 1}, .tolerance = 0.1}), doctest::Contains("either"), shape_error);
  CHECK_THROWS_AS(tprod::hosvd(ndtensor<double>::from_shape({3, 0, 2}), {}), shape_error);
}

TEST_CASE("a zero tensor decomposes with zero error") {
  const auto r = tprod::hooi(tprod::zeros<double>({3, 4, 2}), {.tolerance = 0.1});
  CHECK(r.relative_error == 0);
  CHECK(r.ranks() == std::vector<std::size_t>{1, 1, 1});
}

namespace {

template <class T>
tprod::attention_weights<T> random_attention(std::size_t d_model, std::size_t heads, std::uint64_t seed) {
  return {tprod::random_matrix<T>(d_model, d_model, seed), tprod::random_matrix<T>(d_model, d_model, seed + 1),
          tprod::random_matrix<T>(d_model, d_model, seed + 2), tprod::random_matrix<T>(d_model, d_model, seed + 3)};
  (void)heads;
}

}  // namespace

TEST_CASE_TEMPLATE("tensorize_heads builds W_all(:, :, j, i) per eq. 7-8 and detensorize_heads inverts it", T, float,
                   double) {
  const std::size_t d_model = 6, heads = 3, d_v = 2;
  const auto w = random_attention<T>(d_model, heads, 61);
  const ndtensor<T> all = tprod::tensorize_heads(w, heads);
  REQUIRE(tprod::shape_of(all) == nd_shape{d_model, d_v, 4, heads});
  for (std::size_t i = 0; i < heads; ++i)
    for (std::size_t a = 0; a < d_model; ++a)
      for (std::size_t b = 0; b < d_v; ++b) {
        const auto col = Eigen::Index(i * d_v + b), row = Eigen::Index(a);
        CHECK(at(all, {a, b, 0, i}) == w.query(row, col));
        CHECK(at(all, {a, b, 1, i}) == w.key(row, col));
        CHECK(at(all, {a, b, 2, i}) == w.value(row, col));
        CHECK(at(all, {a, b, 3, i}) == w.output(col, row));  // (W_i^O)ᵀ
      }
  const auto back = tprod::detensorize_heads(all);
  CHECK(back.query == w.query);
  CHECK(back.key == w.key);
  CHECK(back.value == w.value);
  CHECK(back.output == w.output);
}

TEST_CASE_TEMPLATE("multihead_tucker: shared factors at full ranks rebuild all four weight matrices", T, float,
                   double) {
  const std::size_t d_model = 8, heads = 4, d_v = 2;
  const auto w = random_attention<T>(d_model, heads, 71);
  const auto r = tprod::multihead_tucker(w, heads, {.ranks = {d_model, d_v, 4}});
  CHECK(tprod::shape_of(r.tucker.core) == nd_shape{d_model, d_v, 4, heads});
  CHECK(r.tucker.modes == std::vector<std::size_t>{0, 1, 2});
  const double t = tol<T>(double(d_model * d_model * 4));
  CHECK(rel_diff_matrix(r.weights.query, w.query) <= t);
  CHECK(rel_diff_matrix(r.weights.key, w.key) <= t);
  CHECK(rel_diff_matrix(r.weights.value, w.value) <= t);
  CHECK(rel_diff_matrix(r.weights.output, w.output) <= t);
  CHECK(r.tucker.relative_error <= t);
}

TEST_CASE_TEMPLATE("multihead_tucker: truncated ranks give the paper's compression ratio and a monotone fit", T, float,
                   double) {
  const std::size_t d_model = 12, heads = 3, d_v = 4, r1 = 5, r2 = 3, r3 = 2;
  const auto w = random_attention<T>(d_model, heads, 81);
  const auto r = tprod::multihead_tucker(w, heads, {.ranks = {r1, r2, r3}, .max_sweeps = 20});
  const double n_original = 4.0 * d_model * heads * d_v;
  const double n_compressed = double(r1 * r2 * r3 * heads + d_model * r1 + d_v * r2 + 4 * r3);
  CHECK(r.tucker.compression_ratio == doctest::Approx(n_original / n_compressed));
  CHECK(r.tucker.ranks() == std::vector<std::size_t>{r1, r2, r3});
  for (std::size_t k = 1; k < r.tucker.fit_history.size(); ++k)
    CHECK(r.tucker.fit_history[k] >= r.tucker.fit_history[k - 1] - tol<T>(10));
  // the rebuilt weights are the decomposition's reconstruction, split back per head
  const auto rebuilt = tprod::tensorize_heads(r.weights, heads);
  CHECK(rel_diff(rebuilt, r.tucker.reconstruct()) <= tol<T>(10));
  CHECK(rel_diff(rebuilt, tprod::tensorize_heads(w, heads)) == doctest::Approx(r.tucker.relative_error).epsilon(1e-3));
}

TEST_CASE("multihead_tucker rejects inconsistent weights and heads, naming the shapes") {
  auto w = random_attention<double>(6, 3, 91);
  CHECK_THROWS_WITH_AS(tprod::tensorize_heads(w, 4), doctest::Contains("4 heads do not split W^Q 6x6"), shape_error);
  CHECK_THROWS_AS(tprod::tensorize_heads(w, 0), shape_error);
  w.output = dense_matrix<double>(6, 5);
  CHECK_THROWS_WITH_AS(tprod::tensorize_heads(w, 3), doctest::Contains("W^O 6x5"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::detensorize_heads(tprod::random_ndtensor<double>({6, 2, 3, 3}, 1)),
                       doctest::Contains("6x2x3x3"), shape_error);
  const auto good = random_attention<double>(6, 3, 92);
  CHECK_THROWS_AS(tprod::multihead_tucker(good, 3, {.ranks = {2, 2}}), shape_error);
  CHECK_THROWS_AS(tprod::multihead_tucker(good, 3, {.ranks = {2, 2, 2}, .modes = {0, 1, 2}}), shape_error);
}
