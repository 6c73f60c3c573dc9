// expect: (constraints not satisfied|no match for call|cannot be used|requires)
// SPDX-License-Identifier: Apache-2.0
// Element access and Eigen maps exist only on the host: a device pointer never reaches Eigen.
#include "tprod/cuda.hpp"

void access() {
  tprod::device_tensor3<float> d(2, 3, 4);
  (void)d(0, 0, 0);
}
