// SPDX-License-Identifier: Apache-2.0
// The polynomial graph filter through the CPU backend's tasks (the route of a device filter) against the Eigen one.
#include <doctest/doctest.h>

#include "graph_in_space.hpp"

TEST_CASE_TEMPLATE("a polynomial filter through the backend's tasks equals the host filter, forward and backward", T,
                   float, double) {
  tprod::test::in_space::check_polynomial_filter<T, tprod::host_space>();
}
