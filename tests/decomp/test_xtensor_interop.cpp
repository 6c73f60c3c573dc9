// SPDX-License-Identifier: Apache-2.0
// A user's xtensor arrays in tprod (decomp/xtensor_interop.hpp): the decompositions of a row-major xt::xarray, an
// xt::xtensor and an unevaluated expression equal those of the same values in tprod's column-major ndtensor;
// view_of works on a column-major container's own memory; as_xtensor shows a tensor3's memory to xtensor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "decomp_test_support.hpp"
#include "tprod/algebra/norms.hpp"
#include "tprod/algebra/product.hpp"
#include "tprod/core/random.hpp"
#include "tprod/decomp/xtensor_interop.hpp"
#include "tprod/transform/dct.hpp"

#if __has_include(<xtensor/containers/xtensor.hpp>)
#include <xtensor/containers/xtensor.hpp>
#else
#include <xtensor/xtensor.hpp>
#endif

using namespace decomp_test;

namespace {

/// The same values, element by element (by index, whatever the two layouts).
template <class X>
ndtensor<double> values_of(const X& x) {
  ndtensor<double> y = ndtensor<double>::from_shape(std::vector<std::size_t>(x.shape().begin(), x.shape().end()));
  for (std::size_t i = 0; i < y.shape()[0]; ++i)
    for (std::size_t j = 0; j < y.shape()[1]; ++j)
      for (std::size_t k = 0; k < y.shape()[2]; ++k) y(i, j, k) = x(i, j, k);
  return y;
}

/// Equal to rounding: the copy's memory is aligned differently, which can change the order of Eigen's
/// vectorised sums, so the last bits may differ.
void check_same(const ndtensor<double>& a, const ndtensor<double>& b) {
  REQUIRE(a.shape() == b.shape());
  for (std::size_t e = 0; e < a.size(); ++e)
    CHECK(std::abs(a.data()[e] - b.data()[e]) <= 1e-12 * std::max(1.0, std::abs(b.data()[e])));
}

}  // namespace

TEST_CASE("xtensor: the decompositions take row-major arrays, fixed-rank xtensors and expressions") {
  const ndtensor<double> reference = tprod::random_ndtensor<double>({4, 5, 3}, 1);
  xt::xarray<double, xt::layout_type::row_major> row_major = xt::zeros<double>({4, 5, 3});
  xt::xtensor<double, 3> fixed_rank = xt::zeros<double>({4, 5, 3});
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 5; ++j)
      for (std::size_t k = 0; k < 3; ++k) row_major(i, j, k) = fixed_rank(i, j, k) = reference(i, j, k);
  const tprod::tucker_options ranks{.ranks = {2, 2, 2}};

  // Converted by index, not by memory: the same decomposition as tprod's own column-major tensor.
  check_same(tprod::hosvd(row_major, ranks).core, tprod::hosvd(reference, ranks).core);
  check_same(tprod::st_hosvd(fixed_rank, ranks).core, tprod::st_hosvd(reference, ranks).core);
  check_same(tprod::hooi(2.0 * row_major, ranks).core, tprod::hooi(ndtensor<double>(2.0 * reference), ranks).core);
  const auto tt = tprod::tt_svd(row_major, {.max_rank = 2});
  CHECK(tt.ranks() == tprod::tt_svd(reference, {.max_rank = 2}).ranks());
  check_same(values_of(tprod::to_ndtensor(row_major)), reference);
  CHECK(tprod::cp_als(fixed_rank, 2, {.max_sweeps = 5}).relative_error ==
        doctest::Approx(tprod::cp_als(reference, 2, {.max_sweeps = 5}).relative_error).epsilon(1e-9));
  CHECK_THROWS_AS(tprod::hosvd(xt::xarray<double>(xt::zeros<double>({0, 3})), ranks), tprod::shape_error);
}

TEST_CASE("xtensor: view_of a column-major container is on its memory; to_tensor3 copies any layout") {
  ndtensor<double> x = tprod::random_ndtensor<double>({3, 4, 5}, 2);
  const auto v = tprod::view_of(x);
  CHECK(v.data() == x.data());  // no copy
  CHECK(v.shape() == "3x4x5");
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 5; ++k) CHECK(v(i, j, k) == x(i, j, k));
  // The algebra runs on the user's memory, and writes through the view reach it.
  const auto b = tprod::random_tensor3<double>(4, 2, 5, 3);
  const auto c = tprod::product(v, b, tprod::dct{});
  CHECK(tprod::frobenius_norm(c - tprod::product(tprod::to_tensor3(x), b, tprod::dct{})) == 0.0);
  v(1, 2, 3) = 42.0;
  CHECK(x(1, 2, 3) == 42.0);

  xt::xtensor<float, 3, xt::layout_type::column_major> f = xt::ones<float>({2, 2, 2});
  CHECK(tprod::view_of(f).data() == f.data());
  ndtensor<double> matrix = tprod::random_ndtensor<double>({2, 2}, 4);
  CHECK_THROWS_WITH_AS(tprod::view_of(matrix), doctest::Contains("not of order 3"), tprod::shape_error);

  xt::xarray<double> row_major = xt::zeros<double>({3, 4, 5});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 5; ++k) row_major(i, j, k) = x(i, j, k);
  const auto copied = tprod::to_tensor3(row_major);
  CHECK(copied.shape() == "3x4x5");
  CHECK(copied(1, 2, 3) == 42.0);
  CHECK(copied(2, 3, 4) == x(2, 3, 4));
}

TEST_CASE("xtensor: as_xtensor shows a tensor3's memory to xtensor, shape (m, n, p), column-major") {
  auto a = tprod::random_tensor3<double>(3, 2, 4, 5);
  auto x = tprod::as_xtensor(a);
  CHECK(x.dimension() == 3);
  CHECK(x.shape()[0] == 3);
  CHECK(x.shape()[2] == 4);
  CHECK(x.data() == a.data());
  CHECK(x(2, 1, 3) == a(2, 1, 3));
  x(0, 1, 2) = -7.0;
  CHECK(a(0, 1, 2) == -7.0);
  CHECK(std::accumulate(x.begin(), x.end(), 0.0) == doctest::Approx(a.elements().sum()));
}
