// expect: cannot convert between shapes whose fixed extents differ
// SPDX-License-Identifier: Apache-2.0
// A 3×2×2 tensor cannot become a 2×2×2 one: both shapes are fixed, so this is refused at compile time.
#include "tprod/core/tensor3.hpp"

void convert_fixed_shapes() {
  const tprod::tensor3<float, tprod::extents3<3, 2, 2>> a;
  const tprod::tensor3<float, tprod::extents3<2, 2, 2>> b(a);
  (void)b;
}
