// SPDX-License-Identifier: Apache-2.0
// Compile-time properties of extents3 and tensor3: shapes fixed at compile time are checked at compile time,
// only dynamic extents take storage, and the traits the algebra dispatches on say what they should.
// (That two different fixed extents refuse to convert at all is tested by tests/compile/, since it must not compile.)
#include <doctest/doctest.h>

#include <concepts>
#include <type_traits>

#include "tprod/algebra/product.hpp"
#include "tprod/core.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/version.hpp"

namespace {

using tprod::dextents3;
using tprod::dynamic_extent;
using tprod::extents3;
using tprod::tensor3;
using tprod::tensor3_view;
constexpr auto dyn = dynamic_extent;

// extents3: the static extents and how many are dynamic.
using fixed = extents3<2, 3, 4>;
using tubes_dynamic = extents3<8, 8, dyn>;
static_assert(fixed::static_extent(0) == 2 && fixed::static_extent(1) == 3 && fixed::static_extent(2) == 4);
static_assert(tubes_dynamic::static_extent(2) == dyn && tubes_dynamic::static_extent(1) == 8);
static_assert(fixed::rank_dynamic == 0 && fixed::is_static());
static_assert(tubes_dynamic::rank_dynamic == 1 && !tubes_dynamic::is_static());
static_assert(extents3<dyn, 3, dyn>::rank_dynamic == 2 && dextents3::rank_dynamic == 3);
static_assert(dextents3::static_extent(0) == dyn && dextents3::static_extent(2) == dyn);
static_assert(dynamic_extent == std::dynamic_extent);

// Only the dynamic extents are stored (like std::extents).
static_assert(sizeof(tubes_dynamic) == sizeof(std::size_t));
static_assert(sizeof(extents3<dyn, 3, dyn>) == 2 * sizeof(std::size_t));
static_assert(sizeof(dextents3) == 3 * sizeof(std::size_t));
static_assert(sizeof(fixed) < sizeof(tubes_dynamic));

// The extents are usable in constant expressions, fixed values coming from the type.
constexpr extents3<2, dyn, 4> mixed(2, 7, 4);
static_assert(mixed.m() == 2 && mixed.n() == 7 && mixed.p() == 4 && mixed.size() == 56);
static_assert(mixed.extent(1) == 7 && mixed.extent(2) == 4);
static_assert(fixed{}.size() == 24 && dextents3{}.size() == 0);
static_assert(mixed == extents3<2, 7, 4>{} && !(mixed == fixed{}));
static_assert(tprod::extents3_type<fixed> && !tprod::extents3_type<int> && !tprod::extents3_type<std::array<int, 3>>);

// common_extent / extents_compatible: the rule for combining two operands' compile-time extents.
static_assert(tprod::common_extent(4, dyn) == 4 && tprod::common_extent(dyn, 4) == 4);
static_assert(tprod::common_extent(5, 5) == 5 && tprod::common_extent(dyn, dyn) == dyn);
static_assert(tprod::extents_compatible(3, dyn) && tprod::extents_compatible(dyn, 3));
static_assert(tprod::extents_compatible(3, 3) && !tprod::extents_compatible(3, 4));

// tensor3 traits.
static_assert(std::same_as<tensor3<float>::extents_type, dextents3>);
static_assert(std::same_as<tensor3<double, fixed>::value_type, double>);
static_assert(std::same_as<tensor3<double, fixed>::extents_type, fixed>);
static_assert(std::same_as<tensor3<float>::memory_space_type, tprod::host_space>);
static_assert(std::same_as<tensor3<double, fixed>::const_view_type, tensor3_view<const double, fixed>>);
static_assert(tprod::host_tensor3<tensor3<float>> && tprod::host_tensor3<const tensor3<double, fixed>&>);
static_assert(tprod::host_tensor3<tensor3_view<const std::complex<float>>>);
static_assert(!tprod::host_tensor3<Eigen::MatrixXd> && !tprod::host_tensor3<double>);
static_assert(std::same_as<tprod::value_type_of<tensor3_view<const double, fixed>>, double>);
static_assert(std::same_as<tprod::extents_of<const tensor3<float, tubes_dynamic>&>, tubes_dynamic>);
static_assert(tprod::scalar<std::complex<double>> && !tprod::scalar<int> && !tprod::scalar<long double>);

// Conversions: fixed ↔ dynamic extents convert (checked at run time), the scalar never changes implicitly,
// and views only gain const.
static_assert(std::constructible_from<tensor3<float, fixed>, tensor3<float>>);
static_assert(std::constructible_from<tensor3<float>, tensor3<float, fixed>>);
static_assert(std::constructible_from<tensor3<float, tubes_dynamic>, tensor3<float, extents3<8, dyn, 3>>>);
static_assert(!std::constructible_from<tensor3<float>, tensor3<double>>);
static_assert(std::convertible_to<tensor3<float, fixed>&, tensor3_view<float, fixed>>);
static_assert(std::convertible_to<const tensor3<float, fixed>&, tensor3_view<const float, fixed>>);
static_assert(!std::convertible_to<const tensor3<float, fixed>&, tensor3_view<float, fixed>>);
static_assert(std::convertible_to<tensor3_view<float, fixed>, tensor3_view<const float>>);
static_assert(!std::convertible_to<tensor3_view<const float>, tensor3_view<float>>);

// The L-product of fixed shapes has the fixed shape m×n×p, taking p from whichever operand fixes it.
using product_type = decltype(tprod::product(std::declval<tensor3<double, extents3<2, 3, 4>>>(),
                                             std::declval<tensor3<double, extents3<3, 5, dyn>>>(), tprod::dct{}));
static_assert(std::same_as<product_type, tensor3<double, extents3<2, 5, 4>>>);

}  // namespace

TEST_CASE("static: a fixed extent contradicted at run time throws shape_error naming both shapes") {
  const tensor3<float> dynamic(3, 2, 2);
  CHECK_THROWS_WITH_AS((tensor3<float, extents3<2, 2, 2>>(dynamic)), doctest::Contains("3x2x2"), tprod::shape_error);
  CHECK_THROWS_WITH_AS((tensor3<float, extents3<2, 2, 2>>(dynamic)), doctest::Contains("2x2x2"), tprod::shape_error);
  CHECK_THROWS_AS((extents3<dyn, 2, 3>(4, 2, 2)), tprod::shape_error);
  // The same conversion with agreeing shapes keeps every element.
  auto source = tprod::random_tensor3<float>(2, 2, 2, 11);
  const tensor3<float, extents3<2, 2, 2>> converted(source);
  CHECK(converted.extents() == source.extents());
  CHECK((converted.elements() - source.elements()).norm() == 0.0f);
}

TEST_CASE("version: the numbers, the string and the macros agree") {
  const std::string expected = std::to_string(tprod::version.major) + "." + std::to_string(tprod::version.minor) +
                               "." + std::to_string(tprod::version.patch);
  CHECK(tprod::version_string == expected);
  CHECK(tprod::version_string == TPROD_VERSION_STRING);
  CHECK(tprod::version == tprod::version_number{TPROD_VERSION_MAJOR, TPROD_VERSION_MINOR, TPROD_VERSION_PATCH});
  static_assert(tprod::version > tprod::version_number{0, 0, 9});
  static_assert(tprod::version_number{0, 2, 0} > tprod::version_number{0, 1, 9});
}
