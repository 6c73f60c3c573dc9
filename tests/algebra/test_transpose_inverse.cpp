// SPDX-License-Identifier: Apache-2.0
// Tests of algebra/transpose.hpp, algebra/inverse.hpp and algebra/identity.hpp.
#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;

TEST_CASE_TEMPLATE("L-transpose: (A*B)^T = B^T*A^T, involution, and the definition through the domain", T,
                   TPROD_TEST_SCALARS) {
  for_each_transform(6, [](const auto& l) {
    CAPTURE(l.name());
    const auto a = random_for<T>(l, dextents3(3, 4, 6), 1), b = random_for<T>(l, dextents3(4, 2, 6), 2);
    using Tp = value_type_of<decltype(a)>;
    const auto at = transpose(a, l);
    CHECK(at.shape() == "4x3x6");
    TPROD_CHECK_CLOSE(transpose(product(a, b, l), l), product(transpose(b, l), at, l), Tp, 60);
    TPROD_CHECK_CLOSE(transpose(at, l), a, Tp, 10);
    // Definition (pinned): L⁻¹ of the slice-wise conjugate transposes of Â, via the reference transform.
    const ref_matrix z = reference_z(l, 6);
    const auto ah = reference_mode3(to_cd(a), z);
    tensor3<cd> aht(4, 3, 6);
    for (std::size_t k = 0; k < 6; ++k) aht.slice(k) = ah.slice(k).adjoint();
    TPROD_CHECK_CLOSE(at, reference_mode3(aht, z.inverse()), Tp, 60);
  });
}

TEST_CASE_TEMPLATE("t-transpose under the DFT: transpose every slice and reverse slices 1..p-1", T, float, double) {
  const auto a = random_tensor3<T>(2, 3, 5, 4);
  const auto at = transpose(a, dft{});
  for (std::size_t k = 0; k < 5; ++k) {
    const Eigen::Matrix<T, -1, -1> expected = a.slice((5 - k) % 5).transpose();
    CHECK((at.slice(k) - expected).norm() <= tol<T>(10) * expected.norm());
  }
}

TEST_CASE_TEMPLATE("L-inverse: A*A^-1 = A^-1*A = I, and the identity's structure", T, TPROD_TEST_SCALARS) {
  for_each_transform(4, [](const auto& l) {
    CAPTURE(l.name());
    // Diagonally dominated slices in the transform domain keep every slice well conditioned.
    auto a = random_for<T>(l, extents3<3, 3, dynamic_extent>(3, 3, 4), 5);
    using Tp = value_type_of<decltype(a)>;
    a += identity<T>(3, 4, l) * Tp(4);
    const auto ai = inverse(a, l);
    static_assert(std::is_same_v<typename decltype(ai)::extents_type, extents3<3, 3, dynamic_extent>>);
    const auto id = identity<T>(3, 4, l);
    TPROD_CHECK_CLOSE(product(a, ai, l), id, Tp, 100);
    TPROD_CHECK_CLOSE(product(ai, a, l), id, Tp, 100);
    CHECK(is_orthogonal(id, l));
    CHECK(is_f_diagonal(id));
    CHECK(is_f_symmetric(id, l));
  });
}

TEST_CASE("the DFT identity is I in slice 0 and zero elsewhere; the DCT identity is not") {
  const auto id = identity<double>(3, 4, dft{});
  CHECK((id.slice(0) - Eigen::MatrixXd::Identity(3, 3)).norm() < 1e-14);
  for (std::size_t k = 1; k < 4; ++k) CHECK(id.slice(k).norm() < 1e-14);
  // DCT: tube (i, i) is Φᵀ·1; in particular slice 1 is not zero.
  const auto idc = identity<double>(2, 4, dct{});
  const Eigen::VectorXd e = reference_z(dct{}, 4).real().transpose() * Eigen::VectorXd::Ones(4);
  for (std::size_t k = 0; k < 4; ++k) CHECK(std::abs(idc(0, 0, k) - e(Eigen::Index(k))) < 1e-14);
  CHECK(idc.slice(1).norm() > 0.1);
}

TEST_CASE("inverse refuses non-square and singular slices, naming the slice") {
  CHECK_THROWS_WITH_AS(inverse(random_tensor3<double>(2, 3, 4, 1), dct{}), doctest::Contains("2x3x4"), shape_error);
  // Transform-domain slice 2 is zero: build it there and map back.
  auto ah = transform(random_tensor3<double>(3, 3, 4, 2), dct{});
  ah.slice(2).setZero();
  const auto a = inverse_transform(ah);
  CHECK_THROWS_WITH_AS(inverse(a, dct{}), doctest::Contains("slice 2"), numerical_error);
  // Rank-deficient but nonzero slice 0 of a DFT tensor: all tubes constant with a rank-1 matrix pattern.
  tensor3<double> r(2, 2, 3);
  for (std::size_t k = 0; k < 3; ++k) r.slice(k) << 1, 2, 2, 4;
  CHECK_THROWS_WITH_AS(inverse(r, dft{}), doctest::Contains("slice 0"), numerical_error);
}

TEST_CASE("inverse: exactly singular slices are refused, naming the first one") {
  // diag(1, 0) in every slice under the DFT: Eigen's rcond() is 1 for it, and NaN/Inf were written.
  tensor3<double> a(2, 2, 4);
  a(0, 0, 0) = 1;  // the DFT of a delta: every transform-domain slice is diag(1, 0)
  CHECK_THROWS_WITH_AS(inverse(a, dft{}), doctest::Contains("transform-domain slice 0 of the 2x2x4 tensor (dft) is singular"),
                       numerical_error);
  for (std::size_t k = 0; k < 4; ++k) a(0, 0, k) = 1;  // diag(1, 0) in every original slice
  CHECK_THROWS_WITH_AS(inverse(a, dft{}), doctest::Contains("slice 0 of the 2x2x4"), numerical_error);
  // p = 1: diag(1, 0) and diag(1, 1, 0).
  tensor3<double> b(2, 2, 1), c(3, 3, 1);
  b(0, 0, 0) = 1;
  c(0, 0, 0) = c(1, 1, 0) = 1;
  for (const auto& x : {b, c})
    CHECK_THROWS_WITH_AS(inverse(x, dct{}), doctest::Contains("slice 0 of the"), numerical_error);
  // A zero last horizontal slice makes every transform-domain slice singular: the message names slice 0.
  auto d = random_tensor3<double>(3, 3, 5, 4);
  for (std::size_t j = 0; j < 3; ++j)
    for (std::size_t k = 0; k < 5; ++k) d(2, j, k) = 0;
  CHECK_THROWS_WITH_AS(inverse(d, dct{}), doctest::Contains("transform-domain slice 0 of"), numerical_error);
  CHECK_THROWS_WITH_AS(inverse(d, dft{}), doctest::Contains("transform-domain slice 0 of"), numerical_error);
  d(0, 0, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(inverse(d, dct{}), doctest::Contains("holds NaN or Inf"), numerical_error);
}

TEST_CASE("empty tensors: work follows the data, and an empty inner dimension gives a zero product") {
  // (1, 0, p) x (0, 1, p) read past empty slices (segfault); C is zero.
  for_each_transform(6, [](const auto& l) {
    CAPTURE(l.name());
    const auto c = product(tensor3<double>(1, 0, 6), tensor3<double>(0, 1, 6), l);
    CHECK(c.shape() == "1x1x6");
    for (std::size_t k = 0; k < 6; ++k) CHECK(c(0, 0, k) == 0.0);
  });
  // p = 2^63 - 1 with no elements: nothing loops over the slices.
  const tensor3<double> e(0, 1, max_index);
  CHECK(transpose(e, identity_transform{}).shape() == tensor3<double>(1, 0, max_index).shape());
  CHECK(transform(e, identity_transform{}).data().size() == 0);
}
