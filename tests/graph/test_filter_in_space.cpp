// SPDX-License-Identifier: Apache-2.0
// The polynomial graph filter and the graph functions of a signal through the CPU backend's tasks (the route of a
// device signal) against the Eigen ones.
#include <doctest/doctest.h>

#include "graph_in_space.hpp"

TEST_CASE_TEMPLATE("a polynomial filter through the backend's tasks equals the host filter, forward and backward", T,
                   float, double) {
  tprod::test::in_space::check_polynomial_filter<T, tprod::host_space>();
}

TEST_CASE_TEMPLATE("graph Fourier transforms, spectral convolution and the RGTN passes of a signal in a memory space "
                   "equal the host's operators", T, float, double) {
  tprod::test::in_space::check_graph_signals<T, tprod::host_space>();
}
