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
