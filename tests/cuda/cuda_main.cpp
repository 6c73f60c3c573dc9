// SPDX-License-Identifier: Apache-2.0
// The device tests' main: without a CUDA device every test is skipped as a whole (exit code 77, CTest's
// SKIP_RETURN_CODE), so a machine without a GPU never reports them as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "tprod/cuda.hpp"

int main(int argc, char** argv) {
  if (tprod::cuda::device_count() == 0) {
    std::printf("test_cuda: no CUDA device is available (%s); every device test is skipped\n",
                tprod::cuda::no_device_reason().c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
