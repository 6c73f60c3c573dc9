// SPDX-License-Identifier: Apache-2.0
// The trainable MPO linear layer Y = X·W: forward and backward against the dense layer with W formed from the
// cores by loops, gradient checks of the input and every core, initialization, the QTT parameter count, errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "mpo_test_util.hpp"

using namespace mpo_test;
namespace nn = tprod::nn;

TEST_CASE_TEMPLATE("MPO layer equals the dense layer with W formed from its cores, forward and backward", T, float,
                   double) {
  const auto prm = nn::make_mpo_linear_params<T>({2, 3, 2}, {3, 2, 2}, std::vector<std::size_t>{3, 2}, 11);
  const dmat w = reference_full(prm.weight);
  const dense_matrix<T> x = tprod::random_matrix<T>(5, 12, 12);
  const auto [y, saved] = nn::mpo_linear_forward<T>(prm, x);
  const dmat xd = x.template cast<double>();
  const double scale = std::max(1.0, dmat(xd * w).cwiseAbs().maxCoeff());
  CHECK(max_abs_diff(y.template cast<double>(), xd * w) <= tol<T>(60) * scale);
  const dense_matrix<T> dy = tprod::random_matrix<T>(5, 12, 13);
  const auto g = nn::mpo_linear_backward<T>(prm, saved, dy);
  CHECK(max_abs_diff(g.d_input.template cast<double>(), dy.template cast<double>() * w.transpose()) <= tol<T>(60) * scale);
  REQUIRE(g.d_params.weight.cores.size() == 3);
  for (std::size_t n = 0; n < 3; ++n) CHECK(tprod::shape_of(g.d_params.weight.cores[n]) == tprod::shape_of(prm.weight.cores[n]));
  // dJ/dW = Xᵀ·dY, so ⟨dJ/dW, E⟩ for the W of a perturbed core equals the core gradient's inner product (checked
  // in double by the finite-difference test below); here: the order-1 MPO is a dense matrix and its gradient Xᵀ·dY.
  const auto dense = nn::mpo_linear_from_dense<T>(dense_matrix<T>(tprod::random_matrix<T>(12, 4, 14)), {12}, {4});
  const auto [y1, s1] = nn::mpo_linear_forward<T>(dense, x);
  const auto g1 = nn::mpo_linear_backward<T>(dense, s1, dense_matrix<T>(dy.leftCols(4)));
  CHECK(max_abs_diff(Eigen::Map<const dense_matrix<T>>(g1.d_params.weight.cores[0].data(), 12, 4).template cast<double>(),
                     xd.transpose() * dy.leftCols(4).template cast<double>()) <= tol<T>(60) * scale);
}

TEST_CASE_TEMPLATE("MPO layer from a dense matrix is exact at full ranks", T, float, double) {
  const dense_matrix<T> w = tprod::random_matrix<T>(24, 12, 21);
  const auto prm = nn::mpo_linear_from_dense<T>(w, {2, 3, 4}, {3, 2, 2});
  const dense_matrix<T> x = tprod::random_matrix<T>(7, 24, 22);
  const auto [y, saved] = nn::mpo_linear_forward<T>(prm, x);
  CHECK(max_abs_diff(y.template cast<double>(), x.template cast<double>() * w.template cast<double>()) <= tol<T>(24 * 12));
}

TEST_CASE("MPO layer gradients of the input and every core: finite differences and the adjoint identity") {
  for (const auto& [ri, cj, ranks] : {std::tuple<nd_shape, nd_shape, std::vector<std::size_t>>{{2, 3, 2}, {3, 2, 2}, {3, 2}},
                                      {{2, 2, 2, 2}, {2, 2, 2, 2}, {2, 2, 2}},
                                      {{6}, {5}, {}}}) {
    auto prm = nn::make_mpo_linear_params<double>(ri, cj, ranks, 31);
    dense_matrix<double> x = tprod::random_matrix<double>(4, prm.in_width(), 32);
    flat_grad::diff_map f;
    f.vars = {flat_grad::span_of(x)};
    f.names = {"x"};
    add_cores(f, prm.weight, "");
    f.forward = [&] { return flat_grad::flat(nn::mpo_linear_forward<double>(prm, x).first); };
    f.backward = [&](const flat_grad::vec& w) {
      const auto saved = nn::mpo_linear_forward<double>(prm, x).second;
      const auto g = nn::mpo_linear_backward<double>(
          prm, saved, Eigen::Map<const dense_matrix<double>>(w.data(), x.rows(), Eigen::Index(prm.out_width())));
      std::vector<flat_grad::vec> out{flat_grad::flat(g.d_input)};
      append_cores(out, g.d_params.weight);
      return out;
    };
    flat_grad::check_gradients(f, 33);
  }
}

TEST_CASE("QTT layer: 16(N - 1) parameters for ranks 2, as Σ R_{n-1}·I_n·J_n·R_n counts") {
  for (std::size_t n = 2; n <= 10; ++n) {
    const auto prm = nn::make_qtt_linear_params<float>(std::size_t(1) << n, std::size_t(1) << n, 41);
    CHECK(prm.parameter_count() == 16 * (n - 1));
    // by hand: first and last cores 1·2·2·2 = 8, the n − 2 middle ones 2·2·2·2 = 16
    CHECK(prm.parameter_count() == 8 + 8 + 16 * (n - 2));
    std::vector<std::size_t> ranks(n + 1, 2);
    ranks.front() = ranks.back() = 1;
    CHECK(prm.weight.ranks() == ranks);
  }
  CHECK(nn::make_qtt_linear_params<float>(2, 2, 1).parameter_count() == 4);  // N = 1: a dense 2×2 matrix
  CHECK(nn::make_qtt_linear_params<float>(64, 64, 1, 8).parameter_count() == 8 * 4 * 2 + 4 * (8 * 4 * 8));
}

TEST_CASE("MPO layer initialization matches the dense layer's variance 1/(3I)") {
  // W's entries over several seeds: the sample variance of 4·4096 entries is within a few percent of its mean
  // (the product of cores has heavier tails than a uniform, hence the 20% margin)
  for (const std::size_t rank : {1, 3, 8}) {
    double sum2 = 0, count = 0;
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      const auto prm = nn::make_mpo_linear_params<double>({4, 4, 4}, {4, 4, 4}, rank, 100 + 10 * seed);
      const dmat w = reference_full(prm.weight);
      sum2 += w.squaredNorm();
      count += double(w.size());
    }
    CAPTURE(rank);
    CHECK(sum2 / count == doctest::Approx(1.0 / (3.0 * 64)).epsilon(0.2));
  }
}

TEST_CASE("MPO layers refuse shapes that do not fit, naming them") {
  const auto prm = nn::make_mpo_linear_params<double>({4, 4}, {2, 4}, 3, 1);
  CHECK_THROWS_WITH_AS(nn::mpo_linear_forward<double>(prm, dense_matrix<double>(3, 15)),
                       doctest::Contains("input 3x15 does not match the MPO weight of 16x8 (4x4 by 2x4)"),
                       tprod::shape_error);
  const auto saved = nn::mpo_linear_forward<double>(prm, dense_matrix<double>::Zero(3, 16)).second;
  CHECK_THROWS_WITH_AS(nn::mpo_linear_backward<double>(prm, saved, dense_matrix<double>(3, 7)),
                       doctest::Contains("gradient 3x7 does not match the output 3x8"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::make_qtt_linear_params<double>(100, 100, 1),
                       doctest::Contains("100 is not a power of two"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::make_qtt_linear_params<double>(64, 16, 1),
                       doctest::Contains("I = 64 = 2^6 and J = 16 = 2^4 need the same number of binary factors"),
                       tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::make_mpo_linear_params<double>({4, 4}, {2, 4}, std::vector<std::size_t>{2, 2}, 1),
                       doctest::Contains("and 2 bond ranks (need N, N and N - 1 entries)"), tprod::shape_error);
  CHECK_THROWS_WITH_AS(nn::mpo_linear_from_dense<double>(dense_matrix<double>(12, 10), {3, 4}, {2, 4}),
                       doctest::Contains("12x10 matrix does not factor as (3x4) x (2x4)"), tprod::shape_error);
}

TEST_CASE_TEMPLATE("MPO layer over many row blocks: the dense layer's output, row-by-row gradients, any thread count", T,
                   float, double) {
  // 301 rows of width 64 at ranks 2–3: several blocks of rows and a partial last one (mpo_block_rows)
  const auto prm = nn::make_mpo_linear_params<T>({2, 2, 2, 2, 2, 2}, {2, 2, 2, 2, 2, 2}, 3, 111);
  const std::size_t rows = 301;
  REQUIRE(nn::detail::mpo_block_rows(prm.weight, rows) < rows / 2);
  const dmat w = reference_full(prm.weight);
  const dense_matrix<T> x = tprod::random_matrix<T>(rows, 64, 112), dy = tprod::random_matrix<T>(rows, 64, 113);
  const dmat xd = x.template cast<double>(), dyd = dy.template cast<double>();
  const double scale = std::max(1.0, dmat(xd * w).cwiseAbs().maxCoeff());
  auto run = [&](std::size_t threads) {
    const tprod::execution_scope scope(tprod::execution{tprod::transform_path::automatic, threads});
    std::pair<dense_matrix<T>, nn::mpo_linear_grads<T>> r;
    nn::mpo_linear_saved<T> saved;
    nn::mpo_linear_forward<T>(prm, x, r.first, saved);
    r.second = nn::mpo_linear_backward<T>(prm, saved, dy);
    return r;
  };
  const auto [y, g] = run(1);
  CHECK(max_abs_diff(y.template cast<double>(), xd * w) <= tol<T>(200) * scale);
  CHECK(max_abs_diff(g.d_input.template cast<double>(), dyd * w.transpose()) <= tol<T>(200) * scale);
  // the core gradients are sums over rows: against the sum of one-row passes (one block each)
  std::vector<dmat> by_rows;
  for (const auto& c : prm.weight.cores) by_rows.push_back(dmat::Zero(Eigen::Index(c.size()), 1));
  for (std::size_t i = 0; i < rows; ++i) {
    const auto [yi, si] = nn::mpo_linear_forward<T>(prm, x.middleRows(Eigen::Index(i), 1));
    const auto gi = nn::mpo_linear_backward<T>(prm, si, dy.middleRows(Eigen::Index(i), 1));
    for (std::size_t n = 0; n < by_rows.size(); ++n)
      by_rows[n] += Eigen::Map<const dense_matrix<T>>(gi.d_params.weight.cores[n].data(), by_rows[n].rows(), 1)
                        .template cast<double>();
  }
  for (std::size_t n = 0; n < by_rows.size(); ++n) {
    CAPTURE(n);
    const auto core = Eigen::Map<const dense_matrix<T>>(g.d_params.weight.cores[n].data(), by_rows[n].rows(), 1);
    CHECK(max_abs_diff(core.template cast<double>(), by_rows[n]) <=
          tol<T>(double(rows) * 20) * std::max(1.0, by_rows[n].cwiseAbs().maxCoeff()));
  }
  // two threads: the same bits (blocks depend on the shapes alone and add their shares in block order)
  const auto [y2, g2] = run(2);
  CHECK(y2 == y);
  CHECK(g2.d_input == g.d_input);
  for (std::size_t n = 0; n < by_rows.size(); ++n)
    CHECK(Eigen::Map<const dense_matrix<T>>(g2.d_params.weight.cores[n].data(), by_rows[n].rows(), 1) ==
          Eigen::Map<const dense_matrix<T>>(g.d_params.weight.cores[n].data(), by_rows[n].rows(), 1));
}
