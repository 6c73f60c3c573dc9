// SPDX-License-Identifier: Apache-2.0
// The MPO product and the MPO linear layer in a memory space through the CPU backend's tasks (the route of a device
// layer) against the host layer (Eigen, blocked by rows).
#include <doctest/doctest.h>

#include "mpo_in_space.hpp"

TEST_CASE_TEMPLATE("the MPO layer through the backend's tasks equals the host layer, forward and backward", T, float,
                   double) {
  tprod::test::in_space::check_mpo<T, tprod::host_space>();
}
