// expect: left operand's fixed column count must equal the right operand's fixed row count
// SPDX-License-Identifier: Apache-2.0
// A (2×3×4) *_L B (5×2×4): A's 3 columns cannot meet B's 5 rows, and both are fixed.
#include "tprod/algebra/product.hpp"
#include "tprod/transform/dct.hpp"

void multiply_fixed_shapes() {
  const tprod::tensor3<double, tprod::extents3<2, 3, 4>> a;
  const tprod::tensor3<double, tprod::extents3<5, 2, 4>> b;
  const auto c = tprod::product(a, b, tprod::dct{});
  (void)c;
}
