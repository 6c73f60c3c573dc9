// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the vocabulary file reader: any byte string written to a file is either read or refused
// with an io_error naming the line, never a crash, hang, leak or undefined behaviour; a vocabulary it reads
// survives a save and a second load unchanged, and encodes text to ids inside its range.
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "fuzz_scratch.hpp"
#include "tprod/io/vocabulary.hpp"


extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz_scratch files("fuzz-vocabulary");
  const auto& [input, again] = files;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  write_file(input, bytes);
  try {
    const auto v = tprod::io::vocabulary::load(input);
    v.save(again);
    const auto w = tprod::io::vocabulary::load(again);
    if (w.tokens() != v.tokens()) __builtin_trap();
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::size_t(v.id(v.tokens()[i])) != i) __builtin_trap();
    for (const auto id : v.encode(bytes, 64))
      if (std::size_t(id) >= v.size()) __builtin_trap();
  } catch (const tprod::io_error&) {
  }
  return 0;
}
