// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel contract's mode-product task refuses what it cannot compute with the same shape_error on every
// backend, before touching memory: the host_space instantiation runs in tests/backend, the device_space one in
// tests/cuda.
#include <doctest/doctest.h>

#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod::test {

template <class T, memory_space S>
void check_mode_product_task_refusals() {
  const auto sys = tprod::detail::system_of<S>();
  const tensor3<T, dextents3, S> a(2, 3, 4);
  const tensor3_view<const T, dextents3, S> av = a.view();
  tensor3<T, dextents3, S> out(5, 3, 4);
  const tprod::detail::dense_matrix<T> u = tprod::detail::dense_matrix<T>::Zero(5, 2);
  // mode −1 and mode 3 (a mode counted from 1 would name 3 for the tubes)
  CHECK_THROWS_WITH_AS(multiply_mode(sys, -1, av, u, out.view()), doctest::Contains("mode -1 of the 2x3x4 tensor"),
                       shape_error);
  CHECK_THROWS_WITH_AS(multiply_mode(sys, 3, av, u, out.view()), doctest::Contains("mode 3 of the 2x3x4 tensor"),
                       shape_error);
  // U's columns against the mode's extent, and a result of the wrong shape (mode 1 would give 2x5x4)
  CHECK_THROWS_WITH_AS(multiply_mode(sys, 2, av, u, out.view()), doctest::Contains("mode 2 of the 2x3x4 tensor has extent 4"),
                       shape_error);
  tensor3<T, dextents3, S> wrong(5, 3, 4);
  const tprod::detail::dense_matrix<T> u1 = tprod::detail::dense_matrix<T>::Zero(5, 3);
  CHECK_THROWS_WITH_AS(multiply_mode(sys, 1, av, u1, wrong.view()), doctest::Contains("(2x5x4 expected)"), shape_error);
  // an empty result is still checked
  tensor3<T, dextents3, S> empty(0, 3, 4);
  CHECK_THROWS_AS(multiply_mode(sys, 7, av, u, empty.view()), shape_error);
  // the right arguments pass: mode 0 with U 5×2
  CHECK_NOTHROW(multiply_mode(sys, 0, av, u, out.view()));
}

}  // namespace tprod::test
