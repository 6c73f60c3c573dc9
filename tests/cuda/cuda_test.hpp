// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared support of the device tests: the CPU backend is the oracle. A device result is copied back and compared
// with the host result on the same inputs, relative to the host result's size, with a tolerance of 100·ε·n for n
// accumulated roundings (tprod_test.hpp's tol).
#include <doctest/doctest.h>

#include "tprod/cuda.hpp"
#include "tprod_test.hpp"

// The scalars of the device tests. All four (the real ones: float and double) by default, as the GPU bundle builds
// them. A build that cannot run them (CI has no GPU: the program reports every test skipped) may compile them in
// single precision only (CMake's TPROD_DEVICE_TEST_SCALARS=single): the templates are the same for both
// precisions, and compiling both doubled the device tests' build, the longest part of CI's.
#if TPROD_DEVICE_TESTS_SINGLE_PRECISION
#define TPROD_DEVICE_SCALARS float, std::complex<float>
#define TPROD_DEVICE_REAL_SCALARS float
#else
#define TPROD_DEVICE_SCALARS TPROD_TEST_SCALARS
#define TPROD_DEVICE_REAL_SCALARS float, double
#endif

namespace tprod::test {

/// ‖device − host‖_F ≤ tol<T>(n)·(‖host‖_F + 1), the device result copied to the host first.
template <class H, class D>
void check_close(const H& host, const D& device, std::size_t n) {
  const auto back = to_host(device);
  REQUIRE(back.extents() == host.extents());
  using T = value_type_of<H>;
  const double error = double(frobenius_norm(tensor3<T>(back.view()) - tensor3<T>(host.view())));
  const double scale = double(frobenius_norm(host)) + 1;
  CHECK(error <= tol<T>(n) * scale);
}

/// The same for transform-domain tensors: the stored slices.
template <scalar T, transform_policy L, extents3_type E>
void check_close(const transformed<T, L, E>& host, const transformed<T, L, E, device_space>& device, std::size_t n) {
  check_close(host.data(), device.data(), n);
}

/// The shapes every device function is tried on: non-square, single elements, tubes of p ∈ {1, 2, 3, 16, 17}.
inline constexpr std::size_t test_tubes[] = {1, 2, 3, 16, 17};

/// Calls f(L) for every transform tprod offers, at tube length p.
template <class F> void for_each_policy(std::size_t p, F&& f) {
  std::apply([&](const auto&... l) { (f(l), ...); }, all_transforms(p));
}

}  // namespace tprod::test
