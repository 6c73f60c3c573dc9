// SPDX-License-Identifier: Apache-2.0
// Tensorized spectral attention in a memory space through the CPU backend's tasks (the route of a device layer)
// against the host's TSA (Eigen, each sequence on its real tokens).
#include <doctest/doctest.h>

#include "tsa_in_space.hpp"

// In double only: the same templates run in float in the device tests (tests/cuda/test_device_decomp.cpp).
TEST_CASE_TEMPLATE("TSA through the backend's tasks equals the host's: heads, filters, padding, every gradient", T,
                   double) {
  tprod::test::in_space::check_tsa<T, tprod::host_space>();
}
