// SPDX-License-Identifier: Apache-2.0
// What a program meets on a machine without a GPU: device_count() is 0, require_device() and any device
// allocation throw tprod::cuda_error with a sentence saying so, and nothing crashes. Skipped (77) where a GPU is
// present, since there these errors cannot happen.
#include <cstdio>
#include <string>

#include "tprod/cuda.hpp"

namespace {
int failures = 0, checks = 0;
void check(bool ok, const char* what) {
  ++checks;
  if (!ok) {
    std::printf("FAILED: %s\n", what);
    ++failures;
  }
}
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tprod::cuda_error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

int main() {
  if (tprod::cuda::device_count() != 0) {
    std::printf("no_device: a CUDA device is present; the no-GPU errors are not testable here\n");
    return 77;
  }
  const std::string required = error_of([] { tprod::cuda::require_device(); });
  check(required.find("no CUDA device") != std::string::npos, "require_device names the missing device");
  const std::string allocation = error_of([] { tprod::device_tensor3<float> d(4, 4, 4); });
  std::printf("a device allocation without a GPU: %s\n", allocation.c_str());
  check(allocation.find("cudaMallocAsync") != std::string::npos, "the allocation error names the call");
  check(allocation.find("no CUDA device") != std::string::npos, "the allocation error says there is no device");
  // Without a driver the runtime's own text ("CUDA driver version is insufficient") would read as "update your
  // driver": the message says what is missing instead.
  // (A driver that is really too old for this CUDA keeps the runtime's text, which then says what to do.)
  const bool old_driver = tprod::cuda::no_device_reason().find("insufficient") != std::string::npos;
  if (!old_driver)
    check(allocation.find("no CUDA device or driver on this machine") != std::string::npos &&
              required.find("no CUDA device or driver on this machine") != std::string::npos,
          "the errors say there is no device or driver");
  // The source file is named as in the repository, not by the building machine's absolute path.
  check(allocation.find("(src/cuda/runtime.cu:") != std::string::npos, "the source file as a repository path");
  const std::string copy = error_of([] { (void)tprod::to_device(tprod::random_tensor3<double>(2, 2, 2, 1)); });
  check(!copy.empty(), "to_device without a GPU is a cuda_error");
  tprod::device_tensor3<float> empty(0, 3, 2);  // no memory asked for: fine anywhere
  check(empty.size() == 0, "an empty device tensor needs no device");
  std::printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}
