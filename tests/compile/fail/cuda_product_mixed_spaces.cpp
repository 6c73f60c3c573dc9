// expect: the operands live in different memory spaces .host and device.; copy one explicitly with tprod::to_device
// SPDX-License-Identifier: Apache-2.0
// A host tensor times a device tensor: refused at compile time with one sentence saying how to copy.
#include "tprod/cuda.hpp"

void mixed() {
  const tprod::tensor3<float> a(2, 3, 4);
  const tprod::device_tensor3<float> b(3, 2, 4);
  (void)tprod::product(a, b, tprod::dct{});
}
