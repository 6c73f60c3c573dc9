// SPDX-License-Identifier: Apache-2.0
#pragma once
// The decompositions of an ndtensor_in<T, S> against those of the same ndtensor: the ndtensor functions compute with
// Eigen directly, the ndtensor_in ones through the backend tasks of S (the CPU's in tests/decomp, cuBLAS and cuSOLVER
// in tests/cuda), so each is the other's independent check. Factors are unique up to the signs of their columns
// (given distinct singular values, which random tensors have), so they are compared column by column up to sign;
// everything else (ranks, errors, reconstructions, cores' norms) directly.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tprod/decomp/block_term.hpp"
#include "tprod/decomp/cp.hpp"
#include "tprod/decomp/mpo.hpp"
#include "tprod/decomp/multihead_tucker.hpp"
#include "tprod/decomp/tensor_train.hpp"
#include "tprod/decomp/tucker.hpp"

namespace tprod::test::in_space {

/// A random tensor of the given shape in space S.
template <class T, memory_space S>
ndtensor_in<T, S> xs_of(const nd_shape& shape, std::uint64_t seed = 1) {
  return copy<S>(random_ndtensor<T>(shape, seed));
}

/// A tolerance for n accumulated roundings of T.
template <class T>
double tolerance(double n) {
  return 100.0 * double(std::numeric_limits<T>::epsilon()) * n;
}

/// ‖x − y‖_F/(‖y‖_F + tiny), in double on the host.
template <class T>
double rel_diff(const ndtensor<T>& x, const ndtensor<T>& y) {
  double d = 0, n = 0;
  for (std::size_t e = 0; e < y.size(); ++e) {
    d += std::pow(double(x.data()[e]) - double(y.data()[e]), 2);
    n += std::pow(double(y.data()[e]), 2);
  }
  return std::sqrt(d) / (std::sqrt(n) + 1e-300);
}

/// max_j min(‖u_j − v_j‖, ‖u_j + v_j‖): zero when u and v have the same columns up to sign.
template <class T>
double column_sign_defect(const dense_matrix<T>& u, const dense_matrix<T>& v) {
  REQUIRE(u.rows() == v.rows());
  REQUIRE(u.cols() == v.cols());
  double worst = 0;
  for (Eigen::Index j = 0; j < u.cols(); ++j) {
    const auto a = u.col(j).template cast<double>(), b = v.col(j).template cast<double>();
    worst = std::max(worst, std::min((a - b).norm(), (a + b).norm()));
  }
  return worst;
}

/// The same decomposition by both routes agrees: ranks, modes, errors, reconstruction, factors up to sign.
template <class T, memory_space S>
void check_same_tucker(const tucker_result<T>& host, const tucker_result_in<T, S>& in, std::size_t size) {
  CHECK(in.ranks() == host.ranks());
  CHECK(in.modes == host.modes);
  CHECK(in.shape == host.shape);
  CHECK(in.sweeps == host.sweeps);
  CHECK(in.compression_ratio == doctest::Approx(host.compression_ratio));
  CHECK(std::abs(in.relative_error - host.relative_error) <= tolerance<T>(double(size)));
  // HOOI's fit comes from √(‖X‖² − ‖G‖²)/‖X‖: where G holds nearly all of X, the square root turns roundings of
  // ‖G‖² into √ε-sized differences
  REQUIRE(in.fit_history.size() == host.fit_history.size());
  for (std::size_t i = 0; i < host.fit_history.size(); ++i)
    CHECK(std::abs(in.fit_history[i] - host.fit_history[i]) <= std::sqrt(tolerance<T>(double(size))));
  CHECK(rel_diff(to_ndtensor(in.reconstruct()), host.reconstruct()) <= tolerance<T>(double(size)));
  CHECK(in.core.shape() == shape_of(host.core));
  CHECK(detail::frobenius(in.core) == doctest::Approx(detail::frobenius(host.core)).epsilon(tolerance<T>(double(size))));
  for (std::size_t k = 0; k < host.factors.size(); ++k) {
    CAPTURE(k);
    CHECK(column_sign_defect(detail::host_matrix(in.factors[k]), host.factors[k]) <= tolerance<T>(double(size)));
  }
}

/// HOSVD, ST-HOSVD and HOOI (three full sweeps) of tensors in space S equal those of the same host tensors, by ranks
/// and by tolerance, with either subspace method, over all modes and a subset, on shapes with modes of size 1.
template <class T, memory_space S>
void check_tucker() {
  struct shape_case {
    nd_shape shape;
    std::vector<std::size_t> ranks, modes;
  };
  const shape_case cases[] = {{{5, 4, 6}, {3, 2, 4}, {}},     {{6, 7, 5, 3}, {2, 3, 2, 2}, {}},
                              {{1, 7, 3}, {1, 2, 3}, {}},     {{9, 2}, {2, 1}, {}},
                              {{4}, {2}, {}},                 {{5, 4, 6}, {2, 3}, {2, 0}},
                              {{40, 3, 2}, {3, 2, 2}, {}}};  // a tall unfolding: the full basis from the SVD's U
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    const ndtensor<T> x = random_ndtensor<T>(c.shape, ++seed);
    const ndtensor_in<T, S> xs = copy<S>(x);
    CHECK(rel_diff(to_ndtensor(xs), x) == 0);
    for (const subspace_method method : {subspace_method::svd, subspace_method::gram}) {
      for (const bool by_tolerance : {false, true}) {
        CAPTURE(shape_string(c.shape));
        CAPTURE(method == subspace_method::gram);
        CAPTURE(by_tolerance);
        tucker_options o{.modes = c.modes, .max_sweeps = 3, .fit_tolerance = -1, .subspace = method};
        if (by_tolerance)
          o.tolerance = 0.4;  // far from a rank boundary on these tensors
        else
          o.ranks = c.ranks;
        check_same_tucker(hosvd(x, o), hosvd(xs, o), x.size());
        check_same_tucker(st_hosvd(x, o), st_hosvd(xs, o), x.size());
        check_same_tucker(hooi(x, o), hooi(xs, o), x.size());
      }
    }
  }
}

/// Mode products and their chains in space S equal those of the host tensor; bad input is refused alike.
template <class T, memory_space S>
void check_mode_products() {
  const ndtensor<T> x = random_ndtensor<T>({4, 3, 5}, 5);
  const ndtensor_in<T, S> xs = copy<S>(x);
  std::vector<dense_matrix<T>> factors;
  std::vector<matrix_in<T, S>> factors_in;
  for (std::size_t n = 0; n < 3; ++n) {
    const dense_matrix<T> u = random_matrix<T>(n + 2, x.shape()[n], 20 + n);
    CHECK(rel_diff(to_ndtensor(mode_product(xs, u, n)), mode_product(x, u, n)) <= tolerance<T>(10));
  }
  const std::vector<std::size_t> modes{2, 0, 1};  // the chain reorders them
  for (const std::size_t n : modes) {
    factors.push_back(random_matrix<T>(x.shape()[n], n + 1, 30 + n));
    factors_in.push_back(detail::matrix_in_space<S>(factors.back()));
  }
  CHECK(rel_diff(to_ndtensor(multi_mode_product(xs, factors_in, modes, factor_use::transposed)),
                 multi_mode_product(x, factors, modes, factor_use::transposed)) <= tolerance<T>(30));
  CHECK_THROWS_AS(mode_product(xs, random_matrix<T>(2, 5, 1), 0), shape_error);
  CHECK_THROWS_AS(mode_product(xs, random_matrix<T>(2, 4, 1), 3), shape_error);
  CHECK_THROWS_AS(multi_mode_product(xs, factors_in, {0, 0, 1}), shape_error);
  const auto five_for_six = [] { return ndtensor_in<T, S>({2, 3}, tensor3<T, dextents3, S>(5, 1, 1)); };
  CHECK_THROWS_AS(five_for_six(), shape_error);
}

/// TT-SVD of tensors in space S: the same ranks as on the host, the same full tensor (contracted in S), cores left-
/// orthonormal; exact at full ranks, within the tolerance's bound, capped by max_rank.
template <class T, memory_space S>
void check_tensor_train() {
  const nd_shape shapes[] = {{4, 5, 3, 2}, {6}, {1, 4, 1}, {3, 8}, {2, 3, 4, 3, 2}};
  std::uint64_t seed = 40;
  for (const auto& shape : shapes) {
    const ndtensor<T> x = random_ndtensor<T>(shape, ++seed);
    const ndtensor_in<T, S> xs = copy<S>(x);
    for (const tt_options o : {tt_options{}, tt_options{.tolerance = 0.3}, tt_options{.max_rank = 2}}) {
      CAPTURE(shape_string(shape));
      CAPTURE(o.tolerance);
      CAPTURE(o.max_rank);
      const tensor_train<T> host = tt_svd(x, o);
      const tensor_train_in<T, S> in = tt_svd(xs, o);
      CHECK(in.ranks() == host.ranks());
      CHECK(in.shape() == shape);
      CHECK(in.parameter_count() == host.parameter_count());
      const ndtensor<T> full = to_ndtensor(in.full());
      CHECK(rel_diff(full, host.full()) <= tolerance<T>(double(x.size())));
      if (o.max_rank > x.size()) CHECK(rel_diff(full, x) <= std::max(o.tolerance, tolerance<T>(double(x.size()))));
      for (std::size_t n = 0; n + 1 < in.order(); ++n) {  // left-orthonormal: G_nᵀG_n = I as (R_{n−1}I_n)×R_n
        const ndtensor<T> c = to_ndtensor(in.cores[n]);
        const auto g = detail::as_matrix(c, c.shape()[0] * c.shape()[1], c.shape()[2]);
        const dense_matrix<T> defect = g.transpose() * g - dense_matrix<T>::Identity(g.cols(), g.cols());
        CHECK(double(defect.norm()) <= tolerance<T>(double(g.size())));
      }
    }
  }
  CHECK_THROWS_AS(tt_svd(xs_of<T, S>({2, 3}), {.tolerance = 1.0}), shape_error);
  CHECK_THROWS_AS(tt_svd(xs_of<T, S>({2, 3}), {.max_rank = 0}), shape_error);
}

/// The cores of a host train (or MPO) copied to S.
template <memory_space S, class T>
tensor_train_in<T, S> train_in(const tensor_train<T>& a) {
  tensor_train_in<T, S> r;
  for (const auto& c : a.cores) r.cores.push_back(copy<S>(c));
  return r;
}

/// TT rounding and MPO rounding of cores in S equal the host's: ranks, the rounded tensor, the ε guarantee, the
/// left-orthonormal cores; bad options and NaN cores refused alike.
template <class T, memory_space S>
void check_tt_round() {
  std::uint64_t seed = 140;
  for (const nd_shape& shape : {nd_shape{4, 5, 3, 2}, nd_shape{3, 8}, nd_shape{6}, nd_shape{2, 3, 4, 3, 2}}) {
    // a train with redundant ranks: the sum of two TT-SVDs of random tensors
    const ndtensor<T> x = random_ndtensor<T>(shape, ++seed), y = random_ndtensor<T>(shape, ++seed);
    const tensor_train<T> b = tt_svd(x, {.max_rank = 3}) + tt_svd(y, {.max_rank = 2});
    const ndtensor<T> fb = b.full();
    for (const tt_options o : {tt_options{}, tt_options{.tolerance = 0.3}, tt_options{.max_rank = 2}}) {
      CAPTURE(shape_string(shape));
      CAPTURE(o.tolerance);
      CAPTURE(o.max_rank);
      const tensor_train<T> host = tt_round(b, o);
      const tensor_train_in<T, S> in = tt_round(train_in<S>(b), o);
      CHECK(in.ranks() == host.ranks());
      const ndtensor<T> full = to_ndtensor(in.full());
      CHECK(rel_diff(full, host.full()) <= tolerance<T>(double(fb.size())));
      if (o.max_rank > fb.size()) CHECK(rel_diff(full, fb) <= o.tolerance + tolerance<T>(double(fb.size())));
      for (std::size_t n = 0; n + 1 < in.order(); ++n) {  // left-orthonormal: G_nᵀG_n = I as (R_{n−1}I_n)×R_n
        const ndtensor<T> c = to_ndtensor(in.cores[n]);
        const auto g = detail::as_matrix(c, c.shape()[0] * c.shape()[1], c.shape()[2]);
        const dense_matrix<T> defect = g.transpose() * g - dense_matrix<T>::Identity(g.cols(), g.cols());
        CHECK(double(defect.norm()) <= tolerance<T>(double(g.size())));
      }
    }
  }
  // an MPO of random cores with ranks 3: rounding to rank 2 and to ε = 0.2 as on the host
  mpo<T> w;
  const std::size_t ranks[] = {1, 3, 3, 1};
  for (std::size_t n = 0; n < 3; ++n) w.cores.push_back(random_ndtensor<T>({ranks[n], 2, 3, ranks[n + 1]}, 150 + n));
  for (const tt_options o : {tt_options{.max_rank = 2}, tt_options{.tolerance = 0.2}}) {
    CAPTURE(o.tolerance);
    const mpo<T> host = mpo_round(w, o);
    const mpo_in<T, S> in = mpo_round(copy<S>(w), o);
    CHECK(in.ranks() == host.ranks());
    CHECK(in.row_dims() == host.row_dims());
    CHECK(in.col_dims() == host.col_dims());
    const dense_matrix<T> got = detail::in_space<host_space>(in.full()).slice(0), want = host.full();
    CHECK(double((got - want).norm()) <= tolerance<T>(double(want.size())) * (double(want.norm()) + 1));
  }
  const tensor_train_in<T, S> a = train_in<S>(tt_svd(random_ndtensor<T>({3, 4}, 7)));
  CHECK_THROWS_AS(tt_round(a, {.tolerance = 1.0}), shape_error);
  CHECK_THROWS_AS(tt_round(a, {.max_rank = 0}), shape_error);
  ndtensor<T> bad = random_ndtensor<T>({1, 3, 2}, 8);
  bad.data()[1] = std::numeric_limits<T>::quiet_NaN();
  tensor_train<T> with_nan;
  with_nan.cores = {bad, random_ndtensor<T>({2, 4, 1}, 9)};
  CHECK_THROWS_WITH_AS(tt_round(train_in<S>(with_nan)), doctest::Contains("tt_round"), numerical_error);
}

/// Sums, differences, scaling, inner products and norms of trains in S equal the host's; the norm of a difference
/// that cancels stays small; mismatched shapes are refused alike.
template <class T, memory_space S>
void check_tt_arithmetic() {
  std::uint64_t seed = 160;
  for (const nd_shape& shape : {nd_shape{4, 5, 3, 2}, nd_shape{3, 8}, nd_shape{6}}) {
    CAPTURE(shape_string(shape));
    const tensor_train<T> a = tt_svd(random_ndtensor<T>(shape, ++seed), {.max_rank = 3});
    const tensor_train<T> b = tt_svd(random_ndtensor<T>(shape, ++seed), {.max_rank = 2});
    const tensor_train_in<T, S> as = train_in<S>(a), bs = train_in<S>(b);
    const double size = double(detail::product(shape));
    const auto same = [&](const tensor_train_in<T, S>& got, const tensor_train<T>& want) {
      CHECK(got.ranks() == want.ranks());
      CHECK(rel_diff(to_ndtensor(got.full()), want.full()) <= tolerance<T>(size));
    };
    same(as + bs, a + b);
    same(as - bs, a - b);
    same(T(-2.5) * as, T(-2.5) * a);
    const double inner = tt_inner(a, b), norm = tt_norm(a);
    CHECK(std::abs(tt_inner(as, bs) - inner) <= tolerance<T>(size) * tt_norm(a) * tt_norm(b));
    CHECK(std::abs(tt_norm(as) - norm) <= tolerance<T>(size) * norm);
    CHECK(tt_norm(as - as) <= tolerance<T>(size) * norm);
  }
  const tensor_train_in<T, S> x = train_in<S>(tt_svd(random_ndtensor<T>({3, 4}, 1)));
  const tensor_train_in<T, S> y = train_in<S>(tt_svd(random_ndtensor<T>({4, 3}, 2)));
  CHECK_THROWS_WITH_AS(x + y, doctest::Contains("tensor_train addition: shapes"), shape_error);
  CHECK_THROWS_WITH_AS(tt_inner(x, y), doctest::Contains("tt_inner: shapes"), shape_error);
}

/// The shared-factor Tucker of an attention layer whose weights live in S equals the host's: the tensorization, the
/// decomposition and the rebuilt weights; the tensorization round-trips; bad head counts are refused alike.
template <class T, memory_space S>
void check_multihead_tucker() {
  const std::size_t d_model = 8, heads = 2, d_v = 3;
  const attention_weights<T> w{random_matrix<T>(d_model, heads * d_v, 1), random_matrix<T>(d_model, heads * d_v, 2),
                               random_matrix<T>(d_model, heads * d_v, 3), random_matrix<T>(heads * d_v, d_model, 4)};
  const attention_weights_in<T, S> ws = copy<S>(w);
  const ndtensor<T> all = tensorize_heads(w, heads);
  CHECK(rel_diff(to_ndtensor(tensorize_heads(ws, heads)), all) == 0);
  const attention_weights<T> back = to_attention_weights(detensorize_heads(copy<S>(all)));
  CHECK(back.query == w.query);
  CHECK(back.key == w.key);
  CHECK(back.value == w.value);
  CHECK(back.output == w.output);
  const tucker_options o{.ranks = {4, 2, 3}, .max_sweeps = 3, .fit_tolerance = -1};
  const auto host = multihead_tucker(w, heads, o);
  const auto in = multihead_tucker(ws, heads, o);
  check_same_tucker(host.tucker, in.tucker, all.size());
  const attention_weights<T> rebuilt = to_attention_weights(in.weights);
  const double t = tolerance<T>(double(all.size()));
  for (const auto& [a, b] : {std::pair{&rebuilt.query, &host.weights.query}, std::pair{&rebuilt.key, &host.weights.key},
                             std::pair{&rebuilt.value, &host.weights.value},
                             std::pair{&rebuilt.output, &host.weights.output}})
    CHECK(double((*a - *b).norm()) <= t * (double(b->norm()) + 1));
  CHECK_THROWS_WITH_AS(tensorize_heads(ws, 4), doctest::Contains("8x6"), shape_error);
  CHECK_THROWS_AS(multihead_tucker(ws, heads, {.ranks = {4, 2, 3}, .modes = {0, 1, 2}}), shape_error);
}

/// Mode permutations of tensors in S equal the host's exactly; MPOs and QTTs of matrices in S (the permutation and
/// the TT-SVD there) have the host's ranks and factorizations, and their full matrices, contracted and permuted in S,
/// equal the host MPO's and, at full ranks, W; bad input is refused alike.
template <class T, memory_space S>
void check_mpo_conversions() {
  struct permutation_case {
    nd_shape shape;
    std::vector<std::size_t> perm;
  };
  const permutation_case cases[] = {{{4, 3, 2}, {2, 0, 1}}, {{5}, {0}}, {{2, 3, 1, 4, 2}, {4, 1, 3, 0, 2}},
                                    {{3, 4}, {1, 0}},       {{2, 3, 4}, {0, 1, 2}}, {{3, 0, 2}, {1, 2, 0}}};
  std::uint64_t seed = 80;
  for (const auto& c : cases) {
    CAPTURE(shape_string(c.shape));
    const ndtensor<T> x = random_ndtensor<T>(c.shape, ++seed);
    const ndtensor<T> y = to_ndtensor(permuted(copy<S>(x), c.perm));
    const ndtensor<T> host = permuted(x, c.perm);
    CHECK(shape_of(y) == shape_of(host));
    CHECK(std::equal(y.data(), y.data() + y.size(), host.data()));
    for (std::size_t e = 0; e < x.size() && c.shape.size() == 3; ++e) {  // the definition, entry by entry
      const std::size_t i0 = e % c.shape[0], i1 = (e / c.shape[0]) % c.shape[1], i2 = e / (c.shape[0] * c.shape[1]);
      const std::size_t i[3] = {i0, i1, i2};
      const nd_shape sy = shape_of(y);
      const std::size_t j0 = i[c.perm[0]], j1 = i[c.perm[1]], j2 = i[c.perm[2]];
      CHECK(y.data()[j0 + sy[0] * (j1 + sy[1] * j2)] == x.data()[e]);
    }
  }
  CHECK_THROWS_WITH_AS(permuted(xs_of<T, S>({2, 3}), {0, 0}), doctest::Contains("not a permutation"), shape_error);
  CHECK_THROWS_AS(permuted(xs_of<T, S>({2, 3}), {1}), shape_error);

  struct mpo_case {
    std::size_t rows, cols;
    nd_shape row_dims, col_dims;
  };
  const mpo_case mpos[] = {
      {12, 8, {3, 4}, {2, 4}}, {8, 27, {2, 2, 2}, {3, 3, 3}}, {6, 1, {6}, {1}}, {16, 16, {2, 2, 2, 2}, {2, 2, 2, 2}}};
  for (const auto& c : mpos) {
    CAPTURE(c.rows);
    CAPTURE(c.cols);
    const dense_matrix<T> w = random_matrix<T>(c.rows, c.cols, ++seed);
    for (const tt_options o : {tt_options{}, tt_options{.tolerance = 0.3}}) {
      const mpo<T> host = mpo_from_matrix<T>(w, c.row_dims, c.col_dims, o);
      const mpo_in<T, S> in = mpo_from_matrix(detail::matrix_in_space<S>(w), c.row_dims, c.col_dims, o);
      CHECK(in.ranks() == host.ranks());
      CHECK(in.row_dims() == c.row_dims);
      CHECK(in.col_dims() == c.col_dims);
      const tensor3<T> full = detail::in_space<host_space>(in.full());
      REQUIRE(full.extents() == dextents3(c.rows, c.cols, 1));
      const dense_matrix<T> from_in = full.slice(0), from_host = to_mpo(in).full();
      CHECK(double((from_in - from_host).norm()) <= tolerance<T>(double(w.size())) * double(from_host.norm()));
      CHECK(double((host.full() - from_host).norm()) <= tolerance<T>(double(w.size())) * double(w.norm()));
      if (o.tolerance == 0)
        CHECK(double((from_in - w).norm()) <= tolerance<T>(double(w.size())) * double(w.norm()));
      else
        CHECK(double((from_in - w).norm()) <= (o.tolerance + tolerance<T>(double(w.size()))) * double(w.norm()));
    }
  }
  // a QTT of exact rank 2: a sum of two Kronecker products of 2x2 matrices, recovered within rounding
  const auto kron = [](const dense_matrix<T>& x, const dense_matrix<T>& y) {
    dense_matrix<T> z(x.rows() * y.rows(), x.cols() * y.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) z.block(i * y.rows(), j * y.cols(), y.rows(), y.cols()) = x(i, j) * y;
    return z;
  };
  const dense_matrix<T> a = random_matrix<T>(2, 2, 91), b = random_matrix<T>(2, 2, 92);
  dense_matrix<T> k1 = a, k2 = b;
  for (int n = 0; n < 2; ++n) {
    k1 = kron(k1, a);
    k2 = kron(k2, b);
  }
  const dense_matrix<T> q = k1 + k2;
  const mpo_in<T, S> qtt = qtt_from_matrix(detail::matrix_in_space<S>(q));
  CHECK(qtt.row_dims() == nd_shape{2, 2, 2});
  CHECK(qtt.ranks() == qtt_from_matrix<T>(q).ranks());
  const dense_matrix<T> q_back = detail::in_space<host_space>(qtt.full()).slice(0);
  CHECK(double((q_back - q).norm()) <= tolerance<T>(64) * double(q.norm()));
  CHECK_THROWS_WITH_AS(mpo_from_matrix(detail::matrix_in_space<S>(dense_matrix<T>(random_matrix<T>(6, 4, 1))), {2, 3},
                                       {2, 3}),
                       doctest::Contains("does not factor"), shape_error);
  CHECK_THROWS_WITH_AS(qtt_from_matrix(detail::matrix_in_space<S>(dense_matrix<T>(random_matrix<T>(4, 8, 1)))),
                       doctest::Contains("square"), shape_error);
}

/// Block terms and CP of a tensor in S: from the same random start the ALS in S takes the host's steps (fit by fit,
/// factor by factor, over five sweeps); from the dominant subspaces (whose signs may differ) both fit a tensor of
/// exact block-term structure; bad input is refused alike.
template <class T, memory_space S>
void check_block_terms() {
  // X = G_1 ×_m A_m + G_2 ×_m B_m: two rank-(2, 2, 2) terms
  const nd_shape shape{6, 5, 4};
  ndtensor<T> x = zeros<T>(shape);
  for (std::uint64_t t = 0; t < 2; ++t) {
    std::vector<dense_matrix<T>> factors;
    for (std::size_t n = 0; n < 3; ++n) factors.push_back(random_matrix<T>(shape[n], 2, 100 + 10 * t + n));
    detail::elements(x) += detail::elements(multi_mode_product(random_ndtensor<T>({2, 2, 2}, 120 + t), factors, {0, 1, 2}));
  }
  const ndtensor_in<T, S> xs = copy<S>(x);
  const double tol = tolerance<T>(1000);
  const block_term_options steps{.max_sweeps = 5, .fit_tolerance = 0, .seed = 3, .init = block_term_init::random};
  const auto host = block_term_als(x, 2, {2, 2, 2}, steps);
  const auto in = block_term_als(xs, 2, {2, 2, 2}, steps);
  REQUIRE(in.fit_history.size() == host.fit_history.size());
  for (std::size_t k = 0; k < host.fit_history.size(); ++k) CHECK(std::abs(in.fit_history[k] - host.fit_history[k]) <= tol);
  for (std::size_t p = 0; p < 2; ++p) {
    CHECK(rel_diff(in.cores[p], host.cores[p]) <= tol);
    for (std::size_t n = 0; n < 3; ++n)
      CHECK(double((in.factors[p][n] - host.factors[p][n]).norm()) <= tol * double(host.factors[p][n].norm()));
  }
  // (the host's own test of exact recovery takes these settings: one start may stall in a swamp)
  const block_term_options converge{.max_sweeps = 300, .fit_tolerance = 0, .restarts = 3};
  for (const auto& r : {block_term_als(x, 2, {2, 2, 2}, converge), block_term_als(xs, 2, {2, 2, 2}, converge)})
    CHECK(r.relative_error <= std::sqrt(tolerance<T>(double(x.size()))));
  // CP of a rank-3 tensor, from the same random start
  ndtensor<T> c = zeros<T>(shape);
  for (std::uint64_t t = 0; t < 3; ++t) {
    std::vector<dense_matrix<T>> factors;
    for (std::size_t n = 0; n < 3; ++n) factors.push_back(random_matrix<T>(shape[n], 1, 130 + 10 * t + n));
    detail::elements(c) += detail::elements(multi_mode_product(random_ndtensor<T>({1, 1, 1}, 150 + t), factors, {0, 1, 2}));
  }
  const auto cp_host = cp_als(c, 3, steps);
  const auto cp_in = cp_als(copy<S>(c), 3, steps);
  CHECK(double((cp_in.weights - cp_host.weights).norm()) <= tol * double(cp_host.weights.norm()));
  for (std::size_t n = 0; n < 3; ++n)
    CHECK(double((cp_in.factors[n] - cp_host.factors[n]).norm()) <= tol * double(cp_host.factors[n].norm()));
  CHECK(std::abs(cp_in.relative_error - cp_host.relative_error) <= tol);
  // refusals
  CHECK_THROWS_WITH_AS(block_term_als(xs, 2, {2, 7, 2}), doctest::Contains("outside 1…5"), shape_error);
  CHECK_THROWS_AS(cp_als(xs, 0), shape_error);
  x.data()[5] = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_AS(block_term_als(copy<S>(x), 1, {1, 1, 1}), numerical_error);
}

/// Bad input to the decompositions of a tensor in S: the same errors as on the host.
template <class T, memory_space S>
void check_refusals() {
  ndtensor<T> x = random_ndtensor<T>({3, 4, 2}, 7);
  const ndtensor_in<T, S> xs = copy<S>(x);
  CHECK_THROWS_WITH_AS(hosvd(xs, {.ranks = {2, 5, 1}}), doctest::Contains("3x4x2"), shape_error);
  CHECK_THROWS_AS(hooi(xs, {.ranks = {2, 2}}), shape_error);
  CHECK_THROWS_AS(st_hosvd(xs, {.tolerance = 1.5}), shape_error);
  x.data()[3] = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_AS(hosvd(copy<S>(x)), numerical_error);
  const ndtensor_in<T, S> zero(nd_shape{3, 2, 2});
  const auto r = hosvd(zero, {.ranks = {1, 1, 1}});
  CHECK(r.relative_error == 0);
  CHECK(detail::frobenius(r.core) == 0);
}

}  // namespace tprod::test::in_space
