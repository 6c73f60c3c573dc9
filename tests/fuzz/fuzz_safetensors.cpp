// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the safetensors reader (checkpoints): any byte string is either read or refused with an
// io_error, never a crash, hang, leak or undefined behaviour (built with ASan and UBSan); every tensor it reads can
// be fetched, and the file it describes survives a write and a second read unchanged.
#include <cstdint>
#include <exception>
#include <string>

#include "tprod/io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const tprod::io::safetensors_reader r(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    tprod::io::safetensors_writer w;
    for (const auto& [key, value] : r.metadata()) w.set_metadata(key, value);
    for (const std::string& name : r.names()) {
      const auto& e = r.entry(name);
      if (e.dtype == "F32") (void)r.values<float>(name);
      if (e.dtype == "F64") (void)r.values<double>(name);
      try {
        w.add_bytes(name, e.dtype, e.shape, r.bytes(name));
      } catch (const std::exception&) {
        return 0;  // a name or dtype the writer refuses (its own documented errors): no round trip
      }
    }
    const tprod::io::safetensors_reader again(w.serialize(), "fuzz-again");
    if (again.names().size() != r.names().size() || again.metadata() != r.metadata()) __builtin_trap();
    for (const std::string& name : r.names()) {
      const auto &a = r.entry(name), &b = again.entry(name);
      if (a.dtype != b.dtype || a.shape != b.shape || r.bytes(name) != again.bytes(name)) __builtin_trap();
    }
  } catch (const tprod::io_error&) {
  }
  return 0;
}
