// expect: A and B have different scalar types .say double and float., and tprod does not mix precisions silently
// SPDX-License-Identifier: Apache-2.0
// A double tensor times a float tensor: refused at compile time with one sentence saying how to convert.
#include "tprod/algebra/product.hpp"
#include "tprod/transform/dct.hpp"

void mixed() {
  const tprod::tensor3<double> a(2, 3, 4);
  const tprod::tensor3<float> b(3, 2, 4);
  (void)tprod::product(a, b, tprod::dct{});
}
