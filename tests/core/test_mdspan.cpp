// SPDX-License-Identifier: Apache-2.0
// tprod's tensors as mdspans and back (core/mdspan.hpp): std::mdspan where the standard library has it, the
// layout-compatible mdspan3 otherwise; both on the tensor's own memory, element (i, j, k) for element (i, j, k).
#include <doctest/doctest.h>

#include <type_traits>
#include <vector>

#include "tprod/algebra/norms.hpp"
#include "tprod/algebra/product.hpp"
#include "tprod/core/random.hpp"
#include "tprod/core/mdspan.hpp"
#include "tprod/transform/dct.hpp"

namespace {
template <class S>
auto at(const S& s, std::size_t i, std::size_t j, std::size_t k) {
#if TPROD_HAS_STD_MDSPAN
  return s[i, j, k];
#else
  return s(i, j, k);
#endif
}
}  // namespace

TEST_CASE("mdspan: a tensor3 as a layout_left mdspan and back, without copies") {
  auto a = tprod::random_tensor3<double>(3, 4, 2, 1);
  const auto s = tprod::to_mdspan(a);
  CHECK(s.data_handle() == a.data());
  CHECK(s.rank() == 3);
  CHECK(s.extent(0) == 3);
  CHECK(s.extent(1) == 4);
  CHECK(s.extent(2) == 2);
  CHECK(s.size() == a.size());
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t k = 0; k < 2; ++k) CHECK(at(s, i, j, k) == a(i, j, k));
  CHECK(s.stride(1) == 3);
  CHECK(s.stride(2) == 12);

  const auto v = tprod::view_of(s);
  CHECK(v.data() == a.data());
  CHECK(v.shape() == "3x4x2");
  const auto b = tprod::random_tensor3<double>(4, 5, 2, 2);
  CHECK(tprod::frobenius_norm(tprod::product(v, b, tprod::dct{}) - tprod::product(a, b, tprod::dct{})) == 0.0);

  // A user's own buffer, seen through an mdspan, becomes a tensor3_view on it.
  std::vector<float> buffer(2 * 3 * 4, 1.0f);
  const tprod::mdspan3<float> mine(buffer.data(), 2, 3, 4);
  auto w = tprod::view_of(mine);
  w(1, 2, 3) = 5.0f;
  CHECK(buffer[1 + 2 * (2 + 3 * 3)] == 5.0f);

  const auto& ca = a;
  const auto cs = tprod::to_mdspan(ca);  // const elements for a const tensor
  static_assert(std::is_const_v<std::remove_reference_t<decltype(*cs.data_handle())>>);
  const tprod::tensor3<double> empty(0, 3, 2);
  CHECK(tprod::to_mdspan(empty).size() == 0);
}
