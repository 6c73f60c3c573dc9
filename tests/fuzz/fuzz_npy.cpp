// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the .npy reader: any byte string is either read or refused with an io_error, never a
// crash, hang, leak or undefined behaviour (built with ASan and UBSan); and whatever is read survives a write and
// a second read unchanged.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tprod/io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const tprod::io::npy_array a = tprod::io::parse_npy(bytes, "fuzz");
    const tprod::io::npy_array b = tprod::io::parse_npy(tprod::io::serialize_npy(a), "fuzz-again");
    const std::size_t n = a.size() * tprod::io::dtype_size(a.dtype());
    if (b.shape != a.shape || b.dtype() != a.dtype() || (n && std::memcmp(a.bytes(), b.bytes(), n) != 0))
      __builtin_trap();
  } catch (const tprod::io_error&) {
  }
  return 0;
}
