// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the IDX reader (Fashion-MNIST's files, gzip-compressed or not): any byte string written to
// a file is either read or refused with an io_error, never a crash, hang, leak, undefined behaviour or an
// allocation beyond the data that is there (ASan's and libFuzzer's -rss_limit_mb); whatever is read has as many
// bytes as its shape says and survives a write and a second read unchanged.
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz_scratch.hpp"
#include "tprod/io/idx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz_scratch files("fuzz-idx");
  const auto& [input, again] = files;
  write_file(input, std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    const tprod::io::idx_array a = tprod::io::read_idx(input);
    std::size_t count = 1;
    for (std::size_t d : a.shape) count *= d;
    if (a.data.size() != count) __builtin_trap();
    write_file(again, tprod::io::gzip_bytes(tprod::io::idx_bytes(a.shape, a.data)));
    const tprod::io::idx_array b = tprod::io::read_idx(again);
    if (b.shape != a.shape || b.data != a.data) __builtin_trap();
  } catch (const tprod::io_error&) {
  }
  return 0;
}
