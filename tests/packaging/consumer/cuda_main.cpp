// SPDX-License-Identifier: Apache-2.0
// A user's program on tprod's GPU backend: includes tprod/cuda.hpp, compiled by the host compiler, linked with
// tprod::cuda. Without a GPU it says so and exits with 77 (skipped); with one it checks a device L-product
// against the CPU's.
#include <tprod/cuda.hpp>

#include <cstdio>

int main() {
  if (tprod::cuda::device_count() == 0) {
    std::printf("cuda_consumer: built and linked against tprod::cuda; no CUDA device here\n");
    return 77;
  }
  const auto a = tprod::random_tensor3<double>(5, 4, 6, 1), b = tprod::random_tensor3<double>(4, 3, 6, 2);
  const auto host = tprod::product(a, b, tprod::dct{});
  const auto device = tprod::to_host(tprod::product(tprod::to_device(a), tprod::to_device(b), tprod::dct{}));
  const double error = tprod::frobenius_norm(device - host) / tprod::frobenius_norm(host);
  std::printf("cuda_consumer: device L-product relative difference to the CPU's %.1e\n", error);
  return error < 1e-12 ? 0 : 1;
}
