// Ranks (multi, average, tubal) and the spectral and nuclear norms. The norms are checked against the matrix
// of the operator X ↦ A *_L X (built column by column with the product) and its SVD: for Z a multiple of a
// unitary matrix that operator is unitarily similar to blockdiag(Â_0, …, Â_{p−1}).
#include <doctest/doctest.h>

#include <Eigen/SVD>
#include <numeric>

#include "factorization_support.hpp"
#include "tprod/algebra/rank.hpp"
#include "tprod/algebra/spectral_norms.hpp"

using namespace tprod;
using namespace tprod::factor_test;

TEST_CASE_TEMPLATE("ranks: a product of 15x10xp and 10x15xp random tensors has tubal rank 10", T, float, double) {
  for (std::size_t p : {4u, 5u}) {
    for_each(all_transforms(p), [&](const auto& l) {
      using S = scalar_under<T, std::decay_t<decltype(l)>>;
      CAPTURE(std::decay_t<decltype(l)>::name());
      const auto a = product(random_tensor3<S>(15, 10, p, 1), random_tensor3<S>(10, 15, p, 2), l);
      const rank_info r = ranks(a, l);
      CHECK(r.tubal_rank == 10);
      CHECK(r.multi_rank == std::vector<std::size_t>(p, 10));
      CHECK(r.average_rank == 10.0);
      CHECK(tubal_rank(a, l) == 10);
      CHECK(average_rank(a, l) == 10.0);
      CHECK(multi_rank(a, l) == r.multi_rank);
    });
  }
}

TEST_CASE("ranks: slices of chosen ranks give that multi-rank, its mean and its maximum") {
  // Build Â slice by slice with rank r_k (a random m×r_k times r_k×n product), then map back.
  auto build = [](auto ahat, const std::vector<std::size_t>& r) {
    using D = typename std::decay_t<decltype(ahat)>::value_type;
    using M = Eigen::Matrix<D, Eigen::Dynamic, Eigen::Dynamic>;
    for (std::size_t k = 0; k < ahat.stored_slices(); ++k) {
      std::srand(unsigned(k + 1));
      const auto rk = Eigen::Index(r[k]);
      M left = M::Random(Eigen::Index(ahat.m()), rk), right = M::Random(rk, Eigen::Index(ahat.n()));
      if (ahat.slice_weight(k) == 1.0 && ahat.stored_slices() < ahat.p()) {  // a self-conjugate DFT slice is real
        left = left.real().template cast<D>();
        right = right.real().template cast<D>();
      }
      ahat.slice(k) = left * right;
    }
    return inverse_transform(ahat);
  };
  const std::size_t m = 6, n = 5;
  {  // dct: all p slices are free
    const std::vector<std::size_t> r = {5, 0, 2, 3, 1};
    const auto a = build(transformed<double, dct>(dextents3(m, n, 5), dct{}), r);
    const rank_info info = ranks(a, dct{});
    CHECK(info.multi_rank == r);
    CHECK(info.tubal_rank == 5);
    CHECK(info.average_rank == doctest::Approx(11.0 / 5));
  }
  {  // dft of a real tensor: stored slices 0..3 of p = 6 give slices 4, 5 by conjugation
    const std::vector<std::size_t> r = {1, 4, 0, 2};
    const auto a = build(transformed<double, dft>(dextents3(m, n, 6), dft{}), r);
    static_assert(std::same_as<value_type_of<decltype(a)>, double>);
    const rank_info info = ranks(a, dft{});
    CHECK(info.multi_rank == std::vector<std::size_t>{1, 4, 0, 2, 0, 4});
    CHECK(info.tubal_rank == 4);
    CHECK(info.average_rank == doctest::Approx(11.0 / 6));
  }
}

TEST_CASE("ranks: the tolerance decides which singular values count") {
  // Under the identity transform the slices are the matrices themselves: diag(3, 1e-3, 1e-9) and diag(2, 0, 0).
  tensor3<double> a(3, 3, 2);
  a(0, 0, 0) = 3, a(1, 1, 0) = 1e-3, a(2, 2, 0) = 1e-9, a(0, 0, 1) = 2;
  CHECK(ranks(a, identity_transform{}).multi_rank == std::vector<std::size_t>{3, 1});  // default 3·ε·3 ≈ 2e-15
  CHECK(ranks(a, identity_transform{}, 1e-6).multi_rank == std::vector<std::size_t>{2, 1});
  CHECK(ranks(a, identity_transform{}, 1e-2).multi_rank == std::vector<std::size_t>{1, 1});
  CHECK(ranks(a, identity_transform{}, 5).tubal_rank == 0);
  CHECK(ranks(a, identity_transform{}).tolerance == doctest::Approx(3 * epsilon_v<double> * 3));
  const rank_info zero = ranks(tensor3<float>(4, 2, 3), dct{});
  CHECK(zero.tubal_rank == 0);
  CHECK(zero.average_rank == 0.0);
  CHECK(zero.multi_rank == std::vector<std::size_t>(3, 0));
  CHECK_THROWS_WITH_AS(ranks(tensor3<double>(0, 2, 3), dct{}), doctest::Contains("0x2x3"), shape_error);
}

TEST_CASE_TEMPLATE("spectral_norm and nuclear_norm: the 2-norm and c·(nuclear norm) of the operator X ↦ A *_L X", T,
                   double, std::complex<double>) {
  const std::size_t m = 4, n = 3;
  for (std::size_t p : {4u, 5u}) {
    for_each(unitary_transforms(p), [&](const auto& l) {
      CAPTURE(std::decay_t<decltype(l)>::name());
      const auto a = random_tensor3<T>(m, n, p, 61);
      // Column (j, k) of the operator's matrix is vec(A *_L E_jk), E_jk the n×1×p unit tensor.
      Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic> op(Eigen::Index(m * p), Eigen::Index(n * p));
      for (std::size_t k = 0; k < p; ++k)
        for (std::size_t j = 0; j < n; ++j) {
          tensor3<T> e(n, 1, p);
          e(j, 0, k) = T(1);
          const auto col = product(a, e, l);
          op.col(Eigen::Index(j + n * k)) = col.elements();
        }
      const auto sv = Eigen::JacobiSVD<decltype(op)>(op).singularValues();
      CHECK(spectral_norm(a, l) == doctest::Approx(sv(0)).epsilon(1e-12));
      CHECK(nuclear_norm(a, l) == doctest::Approx(*l.norm_scale(p) * sv.sum()).epsilon(1e-12));
    });
  }
}
