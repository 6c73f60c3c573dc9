// SPDX-License-Identifier: Apache-2.0
// Tests of core/tensor3.hpp, tensor3_view.hpp, extents.hpp and random.hpp: storage order, maps, conversions, errors.
#include "tprod_test.hpp"

using namespace tprod;

TEST_CASE_TEMPLATE("storage is offset(i,j,k) = i + m(j + nk) and slices, tubes, unfoldings are maps", T,
                   TPROD_TEST_SCALARS) {
  tensor3<T, extents3<2, 3, dynamic_extent>> a(2, 3, 4);
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < 2; ++i) a(i, j, k) = T(real_t<T>(i + 10 * j + 100 * k));
  for (std::size_t e = 0; e < a.size(); ++e) {
    const std::size_t i = e % 2, j = (e / 2) % 3, k = e / 6;
    CHECK(a.data()[e] == T(real_t<T>(i + 10 * j + 100 * k)));
  }
  CHECK(a.slice(2)(1, 2) == a(1, 2, 2));
  CHECK(a.slice(2).data() == a.data() + 12);  // no copy
  CHECK(a.tube(1, 2)(3) == a(1, 2, 3));
  CHECK(a.unfold_tubes()(1 + 2 * 2, 3) == a(1, 2, 3));
  a.slice(1).setZero();
  CHECK(a(0, 0, 1) == T(0));
  a.tube(0, 0).setConstant(T(7));
  CHECK(a(0, 0, 3) == T(7));
}

TEST_CASE("extents tiers, conversions and shape errors") {
  using fixed = extents3<2, 3, 4>;
  using slice_fixed = extents3<2, 3, dynamic_extent>;
  static_assert(fixed::rank_dynamic == 0 && slice_fixed::rank_dynamic == 1 && dextents3::rank_dynamic == 3);
  tensor3<double, fixed> f;  // fixed shape, allocated and zero
  CHECK(f.shape() == "2x3x4");
  CHECK(f.elements().norm() == 0);
  tensor3<double> d(f);                     // fixed → dynamic: always fine
  tensor3<double, slice_fixed> s(d);        // dynamic → fixed: checked at run time
  CHECK(s.p() == 4);
  CHECK_THROWS_WITH_AS((tensor3<double, extents3<3, 3, dynamic_extent>>(d)), doctest::Contains("2x3x4"), shape_error);
  CHECK_THROWS_WITH_AS((tensor3<double, fixed>(2, 3, 5)), doctest::Contains("2x3x5 contradicts the fixed shape 2x3x4"),
                       shape_error);
  CHECK_THROWS_WITH_AS(d + tensor3<double>(3, 2, 4), doctest::Contains("2x3x4 and 3x2x4"), shape_error);
  // Views convert to const views; tensors convert to views.
  tensor3_view<const double> v = d.view();
  CHECK(v.data() == d.data());
  const auto from_view = tensor3<double>(v);
  CHECK(from_view.data() != d.data());
  CHECK(from_view.shape() == "2x3x4");
}

TEST_CASE("shapes beyond what an index holds are refused; byte counts that overflow are not allocated") {
  constexpr std::size_t huge = std::numeric_limits<std::size_t>::max(), two32 = std::size_t(1) << 32;
  // Each of these wrapped around to a small element count, or kept an extent no loop should run to.
  for (const auto& shape : {std::array<std::size_t, 3>{0, 1, huge}, {0, huge, huge}, {huge, huge, 0},
                                {two32, two32, 1}, {std::size_t(1) << 21, std::size_t(1) << 21, std::size_t(1) << 22},
                                {0, two32, two32}, {two32, 0, two32}}) {
    const std::size_t m = shape[0], n = shape[1], p = shape[2];  // not bindings: CAPTURE's lambda needs variables
    CAPTURE(shape_string(m, n, p));
    CHECK_THROWS_WITH_AS(dextents3(m, n, p), doctest::Contains("is too large"), shape_error);
    CHECK(!shape_limit_problem(m, n, p).empty());
  }
  CHECK(dextents3(0, 1, max_index).p() == max_index);  // empty, and every extent indexable: allowed
  CHECK(shape_limit_problem(two32, 1, two32 / 2 - 1).empty());
  // 2^62 elements fit an index, but not 8 bytes each: refused before anything is allocated.
  CHECK_THROWS_AS(tensor3<double>(std::size_t(1) << 31, std::size_t(1) << 31, 1, uninitialized), std::bad_alloc);
}

TEST_CASE("from_slices stacks frontal slices and checks their sizes") {
  const auto t = tensor3<float>::from_slices({Eigen::MatrixXf::Ones(2, 2), Eigen::MatrixXf::Zero(2, 2)});
  CHECK(t.shape() == "2x2x2");
  CHECK(t(1, 1, 0) == 1.0f);
  CHECK(t(1, 1, 1) == 0.0f);
  CHECK_THROWS_WITH_AS(tensor3<float>::from_slices({Eigen::MatrixXf::Ones(2, 2), Eigen::MatrixXf::Ones(3, 2)}),
                       doctest::Contains("slice 1 is 3x2"), shape_error);
}

TEST_CASE_TEMPLATE("random tensors are seeded, reproducible and within [-1, 1]", T, TPROD_TEST_SCALARS) {
  const auto a = random_tensor3<T>(3, 3, 3, 42), b = random_tensor3<T>(3, 3, 3, 42), c = random_tensor3<T>(3, 3, 3, 43);
  CHECK((a - b).elements().norm() == 0);
  CHECK((a - c).elements().norm() > 0);
  for (std::size_t e = 0; e < a.size(); ++e) CHECK(std::abs(std::real(a.data()[e])) <= 1);
  CHECK(a.elements().cwiseAbs().maxCoeff() > 0.3);  // not all tiny
}

TEST_CASE("arithmetic on tensors is elementwise") {
  auto a = random_tensor3<double>(2, 2, 2, 1);
  const auto b = random_tensor3<double>(2, 2, 2, 2);
  const auto s = a + b, d = a - b, x = 2.0 * a, n = -a;
  for (std::size_t e = 0; e < a.size(); ++e) {
    CHECK(s.data()[e] == a.data()[e] + b.data()[e]);
    CHECK(d.data()[e] == a.data()[e] - b.data()[e]);
    CHECK(x.data()[e] == 2.0 * a.data()[e]);
    CHECK(n.data()[e] == -a.data()[e]);
  }
}

TEST_CASE("number_text: the shortest text that reads back to the same double") {
  CHECK(tprod::number_text(1.5) == "1.5");
  CHECK(tprod::number_text(0.1) == "0.1");
  CHECK(tprod::number_text(1e-5) == "1e-05");
  CHECK(tprod::number_text(3) == "3");
  CHECK(std::stod(tprod::number_text(0.1 + 0.2)) == 0.1 + 0.2);
}

// Run alone in a fresh process by the CTest test core_eigen_threads (tests/CMakeLists.txt): a kernel reached
// only through an explicit execution must still find Eigen's own threading turned off, also when the tensor is
// below the parallel thresholds (then the kernel never asks for the thread count).
TEST_CASE("execution: an explicit thread count also turns Eigen's own GEMM threading off") {
  const auto a = tprod::random_tensor3<float>(4, 5, 16, 1);
  CHECK(tprod::transform(tprod::execution{tprod::transform_path::gemm, 1}, a, tprod::dct{}).p() == 16);
  CHECK(Eigen::nbThreads() == 1);
  CHECK(tprod::execution{tprod::transform_path::gemm, 2}.thread_count() == 2);
}
