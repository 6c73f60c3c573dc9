// SPDX-License-Identifier: Apache-2.0
// Tensor-Train: TT-SVD (ranks and the ε guarantee), rounding, addition, inner product; MPO and QTT.
#include <doctest/doctest.h>

#include "decomp_test_support.hpp"
#include "tprod/decomp/mpo.hpp"
#include "tprod/decomp/tensor_train.hpp"

using namespace decomp_test;
using tprod::shape_error;
using tprod::tensor_train;

namespace {

template <class T>
tensor_train<T> random_tt(const nd_shape& shape, const std::vector<std::size_t>& ranks, std::uint64_t seed) {
  tensor_train<T> tt;
  for (std::size_t n = 0; n < shape.size(); ++n)
    tt.cores.push_back(tprod::random_ndtensor<T>({ranks[n], shape[n], ranks[n + 1]}, seed + n));
  return tt;
}

// A(i) = G_1(:, i_1, :)⋯G_N(:, i_N, :), summed over all rank indices by an explicit odometer.
template <class T>
ndtensor<T> reference_tt_full(const tensor_train<T>& tt) {
  const nd_shape shape = tt.shape();
  ndtensor<T> a = tprod::zeros<T>(shape);
  for_each_index(shape, [&](const std::vector<std::size_t>& i) {
    std::vector<double> row(1, 1.0);  // the 1×R_n row vector of the partial product
    for (std::size_t n = 0; n < shape.size(); ++n) {
      const auto& c = tt.cores[n];
      std::vector<double> next(c.shape()[2], 0.0);
      for (std::size_t p = 0; p < c.shape()[0]; ++p)
        for (std::size_t q = 0; q < c.shape()[2]; ++q) next[q] += row[p] * double(at(c, {p, i[n], q}));
      row = next;
    }
    at(a, i) = T(row[0]);
  });
  return a;
}

template <class T>
double dot(const ndtensor<T>& a, const ndtensor<T>& b) {
  double s = 0;
  for (std::size_t e = 0; e < a.size(); ++e) s += double(a.data()[e]) * double(b.data()[e]);
  return s;
}

// Structured tensors: sin(Σ i_n/4) has TT ranks 2; 1/(1 + Σ i_n) has fast-decaying singular values.
template <class T>
ndtensor<T> structured(const nd_shape& shape, bool sine) {
  ndtensor<T> a = tprod::zeros<T>(shape);
  for_each_index(shape, [&](const std::vector<std::size_t>& i) {
    double s = 0;
    for (auto v : i) s += double(v);
    at(a, i) = T(sine ? std::sin(s / 4) : 1 / (1 + s));
  });
  return a;
}

}  // namespace

TEST_CASE_TEMPLATE("tensor_train::full contracts the cores in order", T, float, double) {
  const auto tt = random_tt<T>({3, 4, 2, 3}, {1, 2, 3, 2, 1}, 1);
  CHECK(tt.ranks() == std::vector<std::size_t>{1, 2, 3, 2, 1});
  CHECK(tt.shape() == nd_shape{3, 4, 2, 3});
  CHECK(tt.parameter_count() == 6 + 24 + 12 + 6);
  CHECK(rel_diff(tt.full(), reference_tt_full(tt)) <= tol<T>(20));
}

TEST_CASE_TEMPLATE("TT-SVD recovers a random TT of shape (3,3,3) with ranks (1,2,3,1)", T, float, double) {
  const auto tt = random_tt<T>({3, 3, 3}, {1, 2, 3, 1}, 11);
  const ndtensor<T> a = reference_tt_full(tt);
  const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-10;
  const auto r = tprod::tt_svd(a, {.tolerance = eps});
  CHECK(r.ranks() == std::vector<std::size_t>{1, 2, 3, 1});
  CHECK(rel_diff(r.full(), a) <= (std::is_same_v<T, float> ? 1e-5 : 1e-9));
  // cores but the last are left-orthonormal
  for (std::size_t n = 0; n + 1 < r.order(); ++n) {
    const auto& c = r.cores[n];
    CHECK(orthonormality_defect(dense_matrix<T>(tprod::detail::as_matrix(c, c.shape()[0] * c.shape()[1], c.shape()[2]))) <=
          tol<T>(10));
  }
}

TEST_CASE_TEMPLATE("TT-SVD at full ranks is exact; max_rank caps every bond", T, float, double) {
  const ndtensor<T> a = tprod::random_ndtensor<T>({4, 3, 5, 2}, 21);
  const auto full = tprod::tt_svd(a);
  CHECK(full.ranks() == std::vector<std::size_t>{1, 4, 10, 2, 1});  // min(Π left, Π right)
  CHECK(rel_diff(full.full(), a) <= tol<T>(120));
  const auto capped = tprod::tt_svd(a, {.max_rank = 3});
  for (const auto r : capped.ranks()) CHECK(r <= 3);
  CHECK(rel_diff(capped.full(), a) > 0.01);
}

TEST_CASE_TEMPLATE("TT-SVD guarantees ‖A − TT(A)‖ ≤ ε‖A‖ on random and structured tensors", T, float, double) {
  const std::vector<ndtensor<T>> inputs = {tprod::random_ndtensor<T>({4, 5, 3, 4}, 31),
                                           tprod::random_ndtensor<T>({3, 3, 3, 3, 3}, 32),
                                           structured<T>({6, 5, 6, 4}, false), structured<T>({5, 6, 4, 5}, true)};
  for (const auto& a : inputs) {
    std::size_t previous = std::numeric_limits<std::size_t>::max();
    for (const double eps : {0.01, 0.05, 0.2, 0.5}) {
      CAPTURE(eps);
      const auto tt = tprod::tt_svd(a, {.tolerance = eps});
      CHECK(rel_diff(tt.full(), a) <= eps + tol<T>(double(a.size())));
      CHECK(tt.parameter_count() <= previous);  // a looser tolerance never needs more
      previous = tt.parameter_count();
    }
  }
  // the sine tensor has TT ranks 2, the reciprocal one compresses well
  const auto sine = tprod::tt_svd(inputs[3], {.tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-10});
  CHECK(sine.ranks() == std::vector<std::size_t>{1, 2, 2, 2, 1});
  CHECK(tprod::tt_svd(inputs[2], {.tolerance = 1e-3}).parameter_count() < inputs[2].size() / 3);
}

TEST_CASE_TEMPLATE("TT addition, scaling and subtraction match the full tensors", T, float, double) {
  const auto a = random_tt<T>({3, 4, 2}, {1, 2, 2, 1}, 41), b = random_tt<T>({3, 4, 2}, {1, 3, 1, 1}, 42);
  const ndtensor<T> fa = reference_tt_full(a), fb = reference_tt_full(b);
  const auto sum = a + b;
  CHECK(sum.ranks() == std::vector<std::size_t>{1, 5, 3, 1});
  ndtensor<T> expect = fa;
  for (std::size_t e = 0; e < expect.size(); ++e) expect.data()[e] = fa.data()[e] + T(2.5) * fb.data()[e];
  CHECK(rel_diff((a + T(2.5) * b).full(), expect) <= tol<T>(30));
  for (std::size_t e = 0; e < expect.size(); ++e) expect.data()[e] = fa.data()[e] - fb.data()[e];
  CHECK(rel_diff((a - b).full(), expect) <= tol<T>(30));
  // order 1
  const auto v = random_tt<T>({5}, {1, 1}, 43);
  CHECK(rel_diff((v + v).full(), reference_tt_full(T(2) * v)) <= tol<T>(2));
}

TEST_CASE_TEMPLATE("tt_inner and tt_norm match the full tensors", T, float, double) {
  const auto a = random_tt<T>({3, 4, 2, 3}, {1, 2, 3, 2, 1}, 51), b = random_tt<T>({3, 4, 2, 3}, {1, 3, 2, 2, 1}, 52);
  const ndtensor<T> fa = reference_tt_full(a), fb = reference_tt_full(b);
  CHECK(tprod::tt_inner(a, b) == doctest::Approx(dot(fa, fb)).epsilon(tol<T>(100)));
  CHECK(tprod::tt_norm(a) == doctest::Approx(norm(fa)).epsilon(tol<T>(100)));
  // the norm of a difference that nearly cancels stays accurate
  CHECK(tprod::tt_norm(a - a) <= tol<T>(100) * norm(fa));
}

TEST_CASE_TEMPLATE("TT rounding recompresses with ‖round(A) − A‖ ≤ ε‖A‖", T, float, double) {
  const auto a = random_tt<T>({4, 3, 5, 3}, {1, 2, 3, 2, 1}, 61);
  const auto doubled = a + a;  // ranks 4, 6, 4: redundant by a factor 2
  const auto r = tprod::tt_round(doubled, {.tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-10});
  CHECK(r.ranks() == a.ranks());
  CHECK(rel_diff(r.full(), reference_tt_full(T(2) * a)) <= (std::is_same_v<T, float> ? 1e-5 : 1e-9));
  const auto b = a + random_tt<T>({4, 3, 5, 3}, {1, 3, 3, 3, 1}, 62) + random_tt<T>({4, 3, 5, 3}, {1, 2, 4, 2, 1}, 63);
  const ndtensor<T> fb = reference_tt_full(b);
  for (const double eps : {0.05, 0.2, 0.5}) {
    const auto rb = tprod::tt_round(b, {.tolerance = eps});
    CHECK(rel_diff(rb.full(), fb) <= eps + tol<T>(200));
    CHECK(rb.parameter_count() <= b.parameter_count());
  }
  CHECK(tprod::tt_round(b, {.max_rank = 2}).ranks() == std::vector<std::size_t>{1, 2, 2, 2, 1});
}

TEST_CASE("tensor trains reject broken chains and mismatched shapes, naming the shapes") {
  auto a = random_tt<double>({3, 4, 2}, {1, 2, 2, 1}, 71);
  CHECK_THROWS_WITH_AS(tprod::tt_svd(tprod::random_ndtensor<double>({3, 3}, 1), {.tolerance = 1.5}),
                       doctest::Contains("tolerance"), shape_error);
  CHECK_THROWS_AS(tprod::tt_svd(tprod::random_ndtensor<double>({3, 3}, 1), {.max_rank = 0}), shape_error);
  const auto b = random_tt<double>({3, 5, 2}, {1, 2, 2, 1}, 72);
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("3x4x2 and 3x5x2"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::tt_inner(a, b), doctest::Contains("3x4x2 and 3x5x2"), shape_error);
  a.cores[1] = tprod::random_ndtensor<double>({3, 4, 2}, 73);
  CHECK_THROWS_WITH_AS(a.full(), doctest::Contains("core 1 has shape 3x4x2 but the rank before it is 2"), shape_error);
  a.cores[1] = tprod::random_ndtensor<double>({2, 4}, 74);
  CHECK_THROWS_WITH_AS(tprod::tt_norm(a), doctest::Contains("2x4"), shape_error);
  CHECK_THROWS_AS(tensor_train<double>{}.full(), shape_error);
}

namespace {

// W(i, j) = G_1(:, i_1, j_1, :)⋯G_N(:, i_N, j_N, :), i and j little-endian, by explicit loops.
template <class T>
dense_matrix<T> reference_mpo_full(const tprod::mpo<T>& m) {
  const nd_shape ri = m.row_dims(), cj = m.col_dims();
  dense_matrix<T> w(Eigen::Index(m.rows()), Eigen::Index(m.cols()));
  for_each_index(ri, [&](const std::vector<std::size_t>& i) {
    for_each_index(cj, [&](const std::vector<std::size_t>& j) {
      std::vector<double> row(1, 1.0);
      for (std::size_t n = 0; n < ri.size(); ++n) {
        const auto& c = m.cores[n];
        std::vector<double> next(c.shape()[3], 0.0);
        for (std::size_t p = 0; p < c.shape()[0]; ++p)
          for (std::size_t q = 0; q < c.shape()[3]; ++q) next[q] += row[p] * double(at(c, {p, i[n], j[n], q}));
        row = next;
      }
      w(Eigen::Index(offset(ri, i)), Eigen::Index(offset(cj, j))) = T(row[0]);
    });
  });
  return w;
}

template <class T>
tprod::mpo<T> random_mpo(const nd_shape& ri, const nd_shape& cj, const std::vector<std::size_t>& ranks,
                         std::uint64_t seed) {
  tprod::mpo<T> m;
  for (std::size_t n = 0; n < ri.size(); ++n)
    m.cores.push_back(tprod::random_ndtensor<T>({ranks[n], ri[n], cj[n], ranks[n + 1]}, seed + n));
  return m;
}

}  // namespace

TEST_CASE_TEMPLATE("mpo::full follows the little-endian index convention", T, float, double) {
  const auto m = random_mpo<T>({2, 3, 2}, {3, 2, 2}, {1, 2, 3, 1}, 81);
  CHECK(m.rows() == 12);
  CHECK(m.cols() == 12);
  CHECK(m.ranks() == std::vector<std::size_t>{1, 2, 3, 1});
  CHECK(rel_diff_matrix(m.full(), reference_mpo_full(m)) <= tol<T>(20));
}

TEST_CASE_TEMPLATE("an MPO of a dense matrix is exact at full ranks", T, float, double) {
  for (const auto& [ri, cj] : std::vector<std::pair<nd_shape, nd_shape>>{
           {{3, 4}, {4, 5}}, {{2, 3, 2}, {2, 2, 3}}, {{4, 2, 3, 2}, {3, 2, 2, 4}}}) {
    const dense_matrix<T> w = tprod::random_matrix<T>(tprod::detail::product(ri), tprod::detail::product(cj), 91);
    const auto m = tprod::mpo_from_matrix<T>(w, ri, cj);
    CHECK(m.row_dims() == ri);
    CHECK(m.col_dims() == cj);
    CHECK(rel_diff_matrix(reference_mpo_full(m), w) <= tol<T>(double(w.size())));
    CHECK(rel_diff_matrix(m.full(), w) <= tol<T>(double(w.size())));
  }
}

TEST_CASE_TEMPLATE("mpo_product: X·W core by core equals the dense product", T, float, double) {
  const nd_shape ri = {4, 2, 3}, cj = {2, 3, 4};
  const dense_matrix<T> w = tprod::random_matrix<T>(24, 24, 101);
  const auto exact = tprod::mpo_from_matrix<T>(w, ri, cj);
  const auto lossy = random_mpo<T>({3, 2, 2, 2}, {2, 5, 1, 3}, {1, 3, 2, 4, 1}, 102);
  for (const std::size_t l : {1, 7}) {
    CAPTURE(l);
    const dense_matrix<T> x = tprod::random_matrix<T>(l, 24, 103 + l);
    CHECK(rel_diff_matrix(tprod::mpo_product(x, exact), dense_matrix<T>(x * w)) <= tol<T>(24 * 24));
    const dense_matrix<T> y = tprod::random_matrix<T>(l, 24, 105 + l);
    const dense_matrix<T> dense = reference_mpo_full(lossy);
    CHECK(rel_diff_matrix(tprod::mpo_product(y, lossy), dense_matrix<T>(y * dense)) <= tol<T>(100));
  }
}

TEST_CASE_TEMPLATE("an MPO with a tolerance guarantees ‖W − MPO‖ ≤ ε‖W‖; mpo_round recompresses", T, float, double) {
  const nd_shape ri = {4, 4, 3}, cj = {3, 4, 4};
  // a matrix with decaying structure: W(i, j) = 1/(1 + i + j)
  dense_matrix<T> w(48, 48);
  for (int i = 0; i < 48; ++i)
    for (int j = 0; j < 48; ++j) w(i, j) = T(1.0 / (1 + i + j));
  for (const double eps : {1e-3, 1e-2, 0.1}) {
    const auto m = tprod::mpo_from_matrix<T>(w, ri, cj, {.tolerance = eps});
    CHECK(rel_diff_matrix(m.full(), w) <= eps + tol<T>(2304));
    CHECK(m.parameter_count() < 48 * 48);
  }
  const auto full = tprod::mpo_from_matrix<T>(w, ri, cj);
  const auto rounded = tprod::mpo_round(full, {.tolerance = 0.01});
  CHECK(rel_diff_matrix(rounded.full(), w) <= 0.01 + tol<T>(2304));
  CHECK(rounded.parameter_count() < full.parameter_count());
}

TEST_CASE_TEMPLATE("QTT: I_n = J_n = 2 with ranks 2 holds a sum of two Kronecker products exactly", T, float, double) {
  // W = A_1⊗A_2⊗A_3⊗A_4 + B_1⊗B_2⊗B_3⊗B_4 with 2×2 factors has QTT ranks ≤ 2.
  dense_matrix<T> a = dense_matrix<T>::Ones(1, 1), b = a;
  for (std::uint64_t k = 0; k < 4; ++k) {
    a = tprod::kron(a, tprod::random_matrix<T>(2, 2, 111 + k));
    b = tprod::kron(b, tprod::random_matrix<T>(2, 2, 121 + k));
  }
  const dense_matrix<T> w = a + b;
  const auto q = tprod::qtt_from_matrix<T>(w);
  CHECK(q.row_dims() == nd_shape{2, 2, 2, 2});
  CHECK(q.ranks() == std::vector<std::size_t>{1, 2, 2, 2, 1});
  CHECK(q.parameter_count() == 16 * (4 - 1));  // paper 002: Σ R_{n−1}·4·R_n = 16(N − 1)
  CHECK(rel_diff_matrix(q.full(), w) <= tol<T>(256));
  const dense_matrix<T> x = tprod::random_matrix<T>(3, 16, 131);
  CHECK(rel_diff_matrix(tprod::mpo_product(x, q), dense_matrix<T>(x * w)) <= tol<T>(256));
  // a generic matrix is compressed to the same 16(N − 1) entries, with an error
  const auto g = tprod::qtt_from_matrix<T>(tprod::random_matrix<T>(32, 32, 132));
  CHECK(g.parameter_count() == 16 * (5 - 1));
  CHECK(tprod::quantized_dims(32) == nd_shape{2, 2, 2, 2, 2});
}

TEST_CASE("MPOs reject factorizations and batches that do not fit, naming the shapes") {
  const dense_matrix<double> w = tprod::random_matrix<double>(12, 10, 1);
  CHECK_THROWS_WITH_AS(tprod::mpo_from_matrix<double>(w, {3, 4}, {2, 4}), doctest::Contains("12x10 matrix does not factor as (3x4) x (2x4)"), shape_error);
  CHECK_THROWS_AS(tprod::mpo_from_matrix<double>(w, {3, 4}, {10}), shape_error);
  const auto m = tprod::mpo_from_matrix<double>(w, {3, 4}, {2, 5});
  CHECK_THROWS_WITH_AS(tprod::mpo_product(dense_matrix<double>(5, 10), m), doctest::Contains("5x10 batch cannot multiply an MPO of 12x10"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::qtt_from_matrix<double>(tprod::random_matrix<double>(8, 4, 2)), doctest::Contains("8x4"), shape_error);
  CHECK_THROWS_WITH_AS(tprod::quantized_dims(12), doctest::Contains("12 is not a power of two"), shape_error);
  tprod::mpo<double> broken = m;
  broken.cores[0] = tprod::random_ndtensor<double>({1, 3, 2}, 3);
  CHECK_THROWS_WITH_AS(broken.full(), doctest::Contains("core 0 has shape 1x3x2"), shape_error);
}
