// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file safetensors.hpp
/// @brief Checkpoints in the Hugging Face safetensors format: named tensors with dotted parameter names
/// ("encoder.0.attn.wq") and string metadata, written atomically, read back strictly.
///
/// Layout of a file: an 8-byte little-endian header length N, N bytes of JSON
/// `{"name": {"dtype": "F32", "shape": [m, n, p], "data_offsets": [begin, end]}, ..., "__metadata__": {...}}`
/// (padded with spaces), then the data buffer, each tensor in C order (last index fastest), little-endian.
///
/// tensor3 convention: an m×n×p tensor is stored as the C-order array of shape [m, n, p] with
/// arr[i, j, k] = A(i, j, k), the same indices as tprod's .npy files (npy_tensor3.hpp), so a Python user reads
/// `t[i, j, k]` without reversing axes. tensor3's storage is the Fortran order of that array, so saving and
/// loading transpose once per tensor (see docs/design.md). Plain arrays of any shape are taken and returned
/// in C order, as the file holds them.
///
/// Reading is strict: the header length is checked against the file size before anything else, the JSON must be
/// well formed, without duplicate names, each entry exactly {dtype, shape, data_offsets}, offsets in range and
/// covering the data buffer exactly (sorted, contiguous, no overlap, no hole), dtype size × shape = byte span,
/// with every product checked for overflow. Every error is an io_error starting with the file name.
///
/// Conversion on read: a tensor of another dtype loads into float or double when every value of its dtype is a value
/// of the destination, so nothing is rounded: F16 and BF16 (half precision, as published checkpoints hold them),
/// BOOL and the integers up to 16 bits into float; also F32 and the 32-bit integers into double. Any other pair
/// (F64 into float, 64-bit integers, the F8 formats) is refused with an io_error naming both dtypes: convert such a
/// file explicitly. The writer stores float or double tensors as F16 or BF16 on request (add_as), rounding to
/// nearest even and refusing values beyond the format's range.
///
/// Needs nlohmann-json: link tprod::io (docs/building.md). Assumes a little-endian host, as npy.hpp does.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/io/atomic_file.hpp"
#include "tprod/io/npy.hpp"

#include <sys/mman.h>

namespace tprod::io {

/// @brief The safetensors dtype name of an element type: float → "F32", double → "F64",
/// std::int32_t → "I32", std::uint8_t → "U8", … (integers of 8 to 64 bits).
template <class T>
constexpr std::string_view safetensors_dtype() {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "safetensors: the element type must be float, double or a fixed-width integer");
  if constexpr (std::is_floating_point_v<T>) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "safetensors: only float (F32) and double (F64) are supported");
    return sizeof(T) == 4 ? "F32" : "F64";
  } else {
    constexpr std::string_view sig[] = {"I8", "I16", "I32", "I64"}, uns[] = {"U8", "U16", "U32", "U64"};
    constexpr int log = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    return std::is_signed_v<T> ? sig[log] : uns[log];
  }
}

/// @brief Bytes per element of a safetensors dtype name, or 0 for a name this reader does not know.
inline std::size_t safetensors_dtype_size(std::string_view dtype) {
  static const std::map<std::string_view, std::size_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4},  {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

namespace detail {

/// Whether every value of safetensors dtype `from` is exactly a value of the floating-point T (a lossless read).
template <std::floating_point T>
bool safetensors_converts_exactly(std::string_view from) {
  if (from == safetensors_dtype<T>() || from == "F16" || from == "BF16" || from == "BOOL" || from == "U8" ||
      from == "I8" || from == "U16" || from == "I16")
    return true;
  return sizeof(T) == 8 && (from == "F32" || from == "U32" || from == "I32");
}

/// Reads element i of dtype `from` (little-endian bytes at `src`) as T; `from` is one of those above.
template <std::floating_point T>
T safetensors_element(std::string_view from, const char* src, std::size_t i) {
  const auto read = [&]<class U>(std::type_identity<U>) {
    U u;
    std::memcpy(&u, src + i * sizeof(U), sizeof(U));
    return u;
  };
  if (from == "F16") return T(float(std::bit_cast<Eigen::half>(read(std::type_identity<std::uint16_t>{}))));
  if (from == "BF16")
    return T(float(std::bit_cast<Eigen::bfloat16>(read(std::type_identity<std::uint16_t>{}))));
  if (from == "F32") return T(read(std::type_identity<float>{}));
  if (from == "F64") return T(read(std::type_identity<double>{}));
  if (from == "BOOL" || from == "U8") return T(read(std::type_identity<std::uint8_t>{}));
  if (from == "I8") return T(read(std::type_identity<std::int8_t>{}));
  if (from == "U16") return T(read(std::type_identity<std::uint16_t>{}));
  if (from == "I16") return T(read(std::type_identity<std::int16_t>{}));
  if (from == "U32") return T(read(std::type_identity<std::uint32_t>{}));
  return T(read(std::type_identity<std::int32_t>{}));
}

}  // namespace detail

/// @brief One tensor of a safetensors file: dtype name, shape (C order) and its byte range in the data buffer.
struct safetensors_entry {
  std::string dtype;
  std::vector<std::size_t> shape;
  std::size_t begin = 0;
  std::size_t end = 0;

  std::size_t size() const { return (end - begin) / safetensors_dtype_size(dtype); }
};

namespace detail {

/// @brief Fortran order → C order for the given shape: the Fortran order of a shape is the C order of the
/// reversed shape, so this is c_to_fortran on the reversed shape.
template <class T>
void fortran_to_c(const T* src, T* dst, std::vector<std::size_t> shape) {
  std::reverse(shape.begin(), shape.end());
  c_to_fortran(src, dst, shape);
}

/// @brief The element count of a shape, or nothing when it overflows.
inline std::optional<std::size_t> checked_count(const std::vector<std::size_t>& shape) {
  std::size_t count = 1;
  for (auto d : shape) {
    if (d != 0 && count > std::numeric_limits<std::size_t>::max() / d) return std::nullopt;
    count *= d;
  }
  return count;
}

/// @brief Parses the JSON header; `name` starts every error message. Rejects duplicate keys in any object
/// (nlohmann-json would keep the last one silently).
inline nlohmann::json parse_safetensors_json(std::string_view text, const std::string& name) {
  std::vector<std::vector<std::string>> keys;  // the keys seen so far in each open object
  std::string duplicate;
  const nlohmann::json::parser_callback_t check = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& v) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty()) {
      auto& seen = keys.back();
      const std::string key = v.get<std::string>();
      if (std::find(seen.begin(), seen.end(), key) != seen.end() && duplicate.empty()) duplicate = key;
      seen.push_back(key);
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end(), check);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number beyond double's range (out_of_range)
    npy_fail(name, std::string("the safetensors header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) npy_fail(name, "the safetensors header names '" + duplicate + "' twice");
  if (!j.is_object()) npy_fail(name, "the safetensors header is not a JSON object");
  return j;
}

/// @brief A non-negative JSON integer that fits std::size_t. @throws io_error naming the file and what it is.
inline std::size_t json_size(const nlohmann::json& v, const std::string& name, const std::string& what) {
  if (!v.is_number_unsigned()) npy_fail(name, what + " must be a non-negative integer, got " + v.dump());
  return v.get<std::size_t>();
}

}  // namespace detail

/// @brief An open safetensors file: the header parsed and validated, the data in memory.
/// Read one tensor by name, as a tensor3 or as a flat C-order array, or load one into an existing tensor.
class safetensors_reader {
 public:
  /// Files of at least this many bytes are memory-mapped instead of read: a checkpoint larger than memory opens, and
  /// each tensor's pages are read when it is. (A mapped file truncated by another program while it is read would
  /// fault; smaller files are read whole, so that they cannot.)
  static constexpr std::size_t map_threshold = std::size_t(64) << 20;

  /// @brief Opens and validates a file, read whole, or mapped when it has at least `map_from` bytes.
  /// @throws io_error starting with the file name.
  explicit safetensors_reader(const std::filesystem::path& file, std::size_t map_from = map_threshold)
      : name_(file.string()) {
    detail::npy_file_source src;
    src.name = name_;
    src.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (src.fd < 0) detail::npy_fail(name_, "cannot open for reading: " + detail::errno_text(errno));
    try {
      struct stat st {};
      if (::fstat(src.fd, &st) != 0) detail::npy_fail(name_, "cannot stat: " + detail::errno_text(errno));
      if (!S_ISREG(st.st_mode)) detail::npy_fail(name_, "not a regular file");
      src.size = std::size_t(st.st_size);
      if (src.size >= map_from && src.size > 0) {
        void* at = ::mmap(nullptr, src.size, PROT_READ, MAP_PRIVATE, src.fd, 0);
        if (at == MAP_FAILED) detail::npy_fail(name_, "cannot map into memory: " + detail::errno_text(errno));
        const std::size_t size = src.size;
        mapping_ = std::shared_ptr<const char>(static_cast<const char*>(at),
                                               [size](const char* p) { ::munmap(const_cast<char*>(p), size); });
        mapped_size_ = size;
      } else {
        bytes_.resize(src.size);
        src.read(bytes_.data(), src.size);
      }
    } catch (...) {
      ::close(src.fd);
      throw;
    }
    ::close(src.fd);
    parse();
  }
  /// @brief Validates a whole file held in memory; `name` starts every error message.
  safetensors_reader(std::string bytes, std::string name) : name_(std::move(name)), bytes_(std::move(bytes)) {
    parse();
  }

  const std::string& name() const { return name_; }
  /// @brief Whether the file is memory-mapped rather than read whole.
  bool mapped() const { return mapping_ != nullptr; }
  /// @brief The `__metadata__` strings (empty when the file has none).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// @brief The tensor names in the order of their data in the file.
  const std::vector<std::string>& names() const { return order_; }
  bool contains(std::string_view tensor) const { return entries_.find(std::string(tensor)) != entries_.end(); }

  /// @brief The entry of a tensor. @throws io_error naming the file, the tensor and the names the file has.
  const safetensors_entry& entry(std::string_view tensor) const {
    const auto it = entries_.find(std::string(tensor));
    if (it != entries_.end()) return it->second;
    std::string have;
    for (std::size_t i = 0; i < order_.size() && i < 20; ++i) have += (i ? ", " : "") + order_[i];
    if (order_.size() > 20) have += ", …";
    fail("has no tensor named '" + std::string(tensor) + "' (it has " +
         (order_.empty() ? std::string("none") : have) + ")");
  }

  /// @brief The raw bytes of a tensor (C order, little-endian).
  std::string_view bytes(std::string_view tensor) const {
    const auto& e = entry(tensor);
    return file_bytes().substr(data_start_ + e.begin, e.end - e.begin);
  }

  /// @brief A tensor's elements in C order, converted to a floating-point T where that is exact (see the file's
  /// comment). @throws io_error when its dtype is neither safetensors_dtype<T>() nor exactly convertible to T.
  template <class T>
  std::vector<T> values(std::string_view tensor) const {
    std::vector<T> out(entry(tensor).size());
    read_into<T>(tensor, std::span<T>(out));
    return out;
  }

  /// @brief A tensor of shape [m, n, p] as an m×n×p tensor3 (A(i, j, k) = arr[i, j, k]).
  /// @throws io_error for another dtype or another number of dimensions.
  template <scalar T>
    requires std::is_floating_point_v<T>
  tensor3<T> tensor(std::string_view tensor) const {
    const auto& s = entry(tensor).shape;
    if (s.size() != 3)
      fail("tensor '" + std::string(tensor) + "' has shape " + numpy_shape(s) + ", not the (m, n, p) of a tensor3");
    tensor3<T> t(s[0], s[1], s[2]);
    load_into(tensor, t);
    return t;
  }

  /// @brief Loads a tensor of shape [m, n, p] into an existing m×n×p tensor (or mutable view).
  /// @throws shape_error naming the tensor and both shapes; io_error naming both dtypes.
  template <class X>
    requires host_tensor3<X>
  void load_into(std::string_view tensor, X&& x) const {
    using T = value_type_of<X>;
    auto v = x.view();
    check_dtype<T>(tensor);
    const auto& e = entry(tensor);
    const std::vector<std::size_t> want{v.m(), v.n(), v.p()};
    if (e.shape != want)
      throw shape_error(name_ + ": tensor '" + std::string(tensor) + "' has shape " + numpy_shape(e.shape) +
                        " but the tensor to load it into is " + numpy_shape(want));
    // Through an aligned copy: a foreign file need not align its tensors.
    const std::vector<T> c_order = values<T>(tensor);
    detail::c_to_fortran(c_order.data(), v.data(), e.shape);
  }

  /// @brief Loads a tensor into C-order memory of the given shape (a parameter held as a plain array).
  /// @throws shape_error naming the tensor and both shapes; io_error naming both dtypes.
  template <class T>
  void load_into(std::string_view tensor, const std::vector<std::size_t>& shape, std::span<T> dst) const {
    expect<T>(tensor, shape);
    if (dst.size() != entry(tensor).size())
      throw shape_error(name_ + ": tensor '" + std::string(tensor) + "' of shape " + numpy_shape(shape) +
                        " was given a destination of " + std::to_string(dst.size()) + " elements");
    read_into<T>(tensor, dst);
  }

  /// @brief Checks, without reading its data, that a tensor would load into T memory of the given shape.
  /// @throws the errors of load_into: io_error for a missing tensor or a dtype that does not convert exactly to T,
  ///         shape_error naming both shapes.
  template <class T>
  void expect(std::string_view tensor, const std::vector<std::size_t>& shape) const {
    check_dtype<T>(tensor);
    const auto& e = entry(tensor);
    if (e.shape != shape)
      throw shape_error(name_ + ": tensor '" + std::string(tensor) + "' has shape " + numpy_shape(e.shape) +
                        " but the destination is " + numpy_shape(shape));
  }

 private:
  /// The elements of `tensor` into dst (of its size), copied or converted.
  template <class T>
  void read_into(std::string_view tensor, std::span<T> dst) const {
    check_dtype<T>(tensor);
    const auto& e = entry(tensor);
    const std::string_view b = bytes(tensor);
    if (e.dtype == safetensors_dtype<T>()) {
      if (!b.empty()) std::memcpy(dst.data(), b.data(), b.size());
    } else if constexpr (std::is_floating_point_v<T>) {
      for (std::size_t i = 0; i < dst.size(); ++i) dst[i] = detail::safetensors_element<T>(e.dtype, b.data(), i);
    }
  }

  [[noreturn]] void fail(const std::string& problem) const { detail::npy_fail(name_, problem); }

  template <class T>
  void check_dtype(std::string_view tensor) const {
    const auto& e = entry(tensor);
    if (e.dtype == safetensors_dtype<T>()) return;
    if constexpr (std::is_floating_point_v<T>) {
      if (detail::safetensors_converts_exactly<T>(e.dtype)) return;
      throw io_error(name_ + ": tensor '" + std::string(tensor) + "' holds " + e.dtype + " data, not the " +
                     std::string(safetensors_dtype<T>()) + " of the destination, and " + e.dtype +
                     " does not convert to it exactly (convert the file first)");
    }
    throw io_error(name_ + ": tensor '" + std::string(tensor) + "' holds " + e.dtype + " data, not the " +
                   std::string(safetensors_dtype<T>()) + " of the destination");
  }

  /// The whole file: mapped, or read.
  std::string_view file_bytes() const {
    return mapping_ ? std::string_view(mapping_.get(), mapped_size_) : std::string_view(bytes_);
  }

  void parse() {
    const std::string_view file = file_bytes();
    const std::size_t total = file.size();
    if (total < 8) fail("too short to be a safetensors file (" + std::to_string(total) + " bytes)");
    std::uint64_t n = 0;
    for (int b = 7; b >= 0; --b) n = n << 8 | static_cast<unsigned char>(file[std::size_t(b)]);
    if (n > total - 8)
      fail("the header length is " + std::to_string(n) + " bytes but only " + std::to_string(total - 8) +
           " follow (truncated, or not a safetensors file)");
    if (n < 2) fail("the header length is " + std::to_string(n) + " bytes, too short for a JSON object");
    data_start_ = 8 + std::size_t(n);
    const std::size_t data_bytes = total - data_start_;
    const nlohmann::json header = detail::parse_safetensors_json(file.substr(8, n), name_);

    std::vector<std::pair<std::size_t, std::string>> by_offset;
    for (const auto& [key, value] : header.items()) {
      if (key == "__metadata__") {
        if (!value.is_object()) fail("__metadata__ must be a JSON object of strings");
        for (const auto& [k, v] : value.items()) {
          if (!v.is_string()) fail("__metadata__ entry '" + k + "' is not a string: " + v.dump());
          metadata_[k] = v.get<std::string>();
        }
        continue;
      }
      const std::string what = "tensor '" + key + "'";
      if (!value.is_object()) fail(what + " is not a JSON object");
      for (const auto& [field, unused] : value.items())
        if (field != "dtype" && field != "shape" && field != "data_offsets")
          fail(what + " has an unexpected field '" + field + "'");
      if (!value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets"))
        fail(what + " needs the fields dtype, shape and data_offsets");
      safetensors_entry e;
      if (!value["dtype"].is_string()) fail(what + ": dtype must be a string");
      e.dtype = value["dtype"].get<std::string>();
      const std::size_t elem = safetensors_dtype_size(e.dtype);
      if (elem == 0) fail(what + " has the unknown dtype '" + e.dtype + "'");
      if (!value["shape"].is_array()) fail(what + ": shape must be an array of integers");
      for (const auto& d : value["shape"]) e.shape.push_back(detail::json_size(d, name_, what + ": a dimension"));
      const auto& off = value["data_offsets"];
      if (!off.is_array() || off.size() != 2) fail(what + ": data_offsets must be [begin, end]");
      e.begin = detail::json_size(off[0], name_, what + ": data_offsets[0]");
      e.end = detail::json_size(off[1], name_, what + ": data_offsets[1]");
      if (e.begin > e.end || e.end > data_bytes)
        fail(what + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
             "] out of range (the data buffer has " + std::to_string(data_bytes) + " bytes)");
      const auto count = detail::checked_count(e.shape);
      if (!count || *count > std::numeric_limits<std::size_t>::max() / elem)
        fail(what + ": shape " + numpy_shape(e.shape) + " is too large: its byte count overflows");
      if (*count * elem != e.end - e.begin)
        fail(what + ": shape " + numpy_shape(e.shape) + " of " + e.dtype + " needs " +
             std::to_string(*count * elem) + " bytes but data_offsets span " + std::to_string(e.end - e.begin));
      by_offset.emplace_back(e.begin, key);
      entries_.emplace(key, std::move(e));
    }
    // The tensors must tile the data buffer: sorted by offset, each starts where the previous ended.
    std::sort(by_offset.begin(), by_offset.end(), [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : entries_[a.second].end < entries_[b.second].end;
    });
    std::size_t at = 0;
    for (std::size_t i = 0; i < by_offset.size(); ++i) {
      const auto& e = entries_[by_offset[i].second];
      if (e.begin < at)
        fail("tensors '" + by_offset[i - 1].second + "' and '" + by_offset[i].second + "' overlap in the data buffer");
      if (e.begin > at)
        fail("bytes " + std::to_string(at) + " to " + std::to_string(e.begin) +
             " of the data buffer belong to no tensor (a hole before '" + by_offset[i].second + "')");
      at = e.end;
      order_.push_back(by_offset[i].second);
    }
    if (at != data_bytes)
      fail(std::to_string(data_bytes - at) + " bytes after the last tensor's data belong to no tensor");
  }

  std::string name_;
  std::string bytes_;                      ///< the file read whole, or empty when it is mapped
  std::shared_ptr<const char> mapping_;     ///< the mapped file (shared by copies of the reader)
  std::size_t mapped_size_ = 0;
  std::size_t data_start_ = 0;
  std::map<std::string, safetensors_entry> entries_;
  std::vector<std::string> order_;
  std::map<std::string, std::string> metadata_;
};

/// @brief A checkpoint split into shards, as large published models are: an index file
/// (`model.safetensors.index.json`: `{"metadata": {...}, "weight_map": {"tensor name": "shard file name", ...}}`)
/// beside the shards it names. Opens every shard (each mapped when large, see safetensors_reader) and checks that
/// each tensor of the weight map is in the shard the map names and that no shard holds a tensor the map does not
/// name; then reads tensors by name as a safetensors_reader does.
class safetensors_shards {
 public:
  /// @throws io_error naming the index (unreadable, not JSON, no weight_map, a shard path outside the index's folder)
  ///         or the shard and tensor that disagree with it.
  explicit safetensors_shards(const std::filesystem::path& index) : name_(index.string()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(index, ec)) detail::npy_fail(name_, "cannot open: not a regular file");
    std::ifstream in(index, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) detail::npy_fail(name_, "cannot read the index");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      detail::npy_fail(name_, std::string("the index is not valid JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      detail::npy_fail(name_, "the index has no \"weight_map\" object (tensor name -> shard file)");
    if (j.contains("metadata") && j["metadata"].is_object())
      for (const auto& [key, value] : j["metadata"].items())
        metadata_[key] = value.is_string() ? value.get<std::string>() : value.dump();
    std::map<std::string, std::size_t> shard_of_file;
    for (const auto& [tensor, file] : j["weight_map"].items()) {
      if (!file.is_string()) detail::npy_fail(name_, "the shard of '" + tensor + "' is not a file name");
      const std::string shard = file.get<std::string>();
      if (shard.empty() || shard.find('/') != std::string::npos || shard == "." || shard == "..")
        detail::npy_fail(name_, "the shard of '" + tensor + "' is '" + shard +
                                    "'; shards are file names in the index's folder");
      auto [it, fresh] = shard_of_file.try_emplace(shard, shards_.size());
      if (fresh) shards_.emplace_back(index.parent_path() / shard);
      const safetensors_reader& r = shards_[it->second];
      if (!r.contains(tensor))
        detail::npy_fail(name_, "the weight map puts '" + tensor + "' in " + shard + ", which has no such tensor");
      tensor_shard_[tensor] = it->second;
      names_.push_back(tensor);
    }
    for (const auto& r : shards_)
      for (const auto& t : r.names())
        if (tensor_shard_.find(t) == tensor_shard_.end())
          detail::npy_fail(name_, "shard " + r.name() + " holds '" + t + "', which the weight map does not name");
  }

  const std::string& name() const { return name_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  /// @brief The tensor names, in the index's order.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(std::string_view tensor) const { return tensor_shard_.count(std::string(tensor)) != 0; }
  std::size_t shard_count() const { return shards_.size(); }
  /// @brief The shard that holds a tensor. @throws io_error naming the index and the tensor.
  const safetensors_reader& shard(std::string_view tensor) const {
    const auto it = tensor_shard_.find(std::string(tensor));
    if (it == tensor_shard_.end()) detail::npy_fail(name_, "has no tensor named '" + std::string(tensor) + "'");
    return shards_[it->second];
  }
  const safetensors_entry& entry(std::string_view tensor) const { return shard(tensor).entry(tensor); }
  std::string_view bytes(std::string_view tensor) const { return shard(tensor).bytes(tensor); }
  template <class T>
  std::vector<T> values(std::string_view tensor) const {
    return shard(tensor).template values<T>(tensor);
  }
  template <class X>
    requires host_tensor3<X>
  void load_into(std::string_view tensor, X&& x) const {
    shard(tensor).load_into(tensor, std::forward<X>(x));
  }
  template <class T>
  void load_into(std::string_view tensor, const std::vector<std::size_t>& shape, std::span<T> dst) const {
    shard(tensor).load_into(tensor, shape, dst);
  }
  template <class T>
  void expect(std::string_view tensor, const std::vector<std::size_t>& shape) const {
    shard(tensor).template expect<T>(tensor, shape);
  }

 private:
  std::string name_;
  std::vector<safetensors_reader> shards_;
  std::map<std::string, std::size_t> tensor_shard_;
  std::vector<std::string> names_;
  std::map<std::string, std::string> metadata_;
};

/// @brief Collects named tensors and metadata, then writes them as one safetensors file, atomically.
/// The tensors are copied when added (a tensor3 transposed to C order), so the sources may change afterwards.
class safetensors_writer {
 public:
  /// @brief Adds an m×n×p tensor (or view) as the C-order array of shape [m, n, p].
  /// @throws argument_error for an empty or repeated name.
  template <class X>
    requires host_tensor3<X> && std::is_floating_point_v<value_type_of<X>>
  void add(std::string name, const X& x) {
    using T = value_type_of<X>;
    const auto v = cview(x);
    std::vector<std::size_t> shape{v.m(), v.n(), v.p()};
    std::string& data = insert<T>(std::move(name), shape, v.size());
    detail::fortran_to_c(v.data(), reinterpret_cast<T*>(data.data()), shape);
  }

  /// @brief Adds an m×n×p tensor as the array of shape [m, n, p] stored as `dtype`: its own (F32 or F64), F32 for a
  /// double tensor, or F16 or BF16, rounded to nearest (even) (the layouts published checkpoints come in).
  /// @throws argument_error for another dtype or a bad name; numerical_error naming the tensor for a value beyond
  ///         the format's range (F16's is ±65504) or NaN.
  template <class X>
    requires host_tensor3<X> && std::is_floating_point_v<value_type_of<X>>
  void add_as(std::string name, const X& x, std::string_view dtype) {
    using T = value_type_of<X>;
    if (dtype == safetensors_dtype<T>()) return add(std::move(name), x);
    const auto v = cview(x);
    std::vector<std::size_t> shape{v.m(), v.n(), v.p()};
    std::vector<T> c_order(v.size());
    detail::fortran_to_c(v.data(), c_order.data(), shape);
    add_as(std::move(name), std::move(shape), std::span<const T>(c_order), dtype);
  }

  /// @brief Adds a plain array of any shape from its C-order elements, stored as `dtype` (as the tensor3 add_as).
  template <std::floating_point T>
  void add_as(std::string name, std::vector<std::size_t> shape, std::span<const T> c_order, std::string_view dtype) {
    if (dtype == safetensors_dtype<T>()) return add(std::move(name), std::move(shape), c_order);
    const bool narrower = std::is_same_v<T, double> && dtype == "F32";
    if (dtype != "F16" && dtype != "BF16" && !narrower)
      throw argument_error("safetensors_writer::add_as: dtype '" + std::string(dtype) + "' for tensor '" + name +
                           "'; a " + std::string(safetensors_dtype<T>()) + " tensor is stored as " +
                           std::string(safetensors_dtype<T>()) + (std::is_same_v<T, double> ? ", F32" : "") +
                           ", F16 or BF16");
    const auto count = detail::checked_count(shape);
    if (!count || *count != c_order.size())
      throw shape_error("safetensors_writer: tensor '" + name + "' of shape " + numpy_shape(shape) + " was given " +
                        std::to_string(c_order.size()) + " elements");
    if (narrower) {
      std::vector<float> values(c_order.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = float(c_order[i]);
        if (!std::isfinite(values[i]))
          throw numerical_error("safetensors_writer: element " + std::to_string(i) + " of tensor '" + name +
                                "' is " + number_text(double(c_order[i])) + ", which F32 cannot hold");
      }
      return add(std::move(name), std::move(shape), std::span<const float>(values));
    }
    std::vector<std::uint16_t> bits(c_order.size());
    for (std::size_t i = 0; i < c_order.size(); ++i) {
      const float value = float(c_order[i]);
      const std::uint16_t b = dtype == "F16" ? std::bit_cast<std::uint16_t>(Eigen::half(value))
                                             : std::bit_cast<std::uint16_t>(Eigen::bfloat16(value));
      const float back = dtype == "F16" ? float(std::bit_cast<Eigen::half>(b))
                                        : float(std::bit_cast<Eigen::bfloat16>(b));
      if (!std::isfinite(back) || !std::isfinite(c_order[i]))
        throw numerical_error("safetensors_writer: element " + std::to_string(i) + " of tensor '" + name + "' is " +
                              number_text(double(c_order[i])) + ", which " + std::string(dtype) + " cannot hold");
      bits[i] = b;
    }
    std::string& data = insert(std::move(name), std::string(dtype), std::move(shape), bits.size() * 2);
    if (!bits.empty()) std::memcpy(data.data(), bits.data(), data.size());
  }

  /// @brief Adds a plain array of any shape from its C-order elements.
  /// @throws shape_error when the element count does not match the shape; argument_error for the name.
  template <class T>
  void add(std::string name, std::vector<std::size_t> shape, std::span<const T> c_order) {
    const auto count = detail::checked_count(shape);
    if (!count || *count != c_order.size())
      throw shape_error("safetensors_writer: tensor '" + name + "' of shape " + numpy_shape(shape) + " was given " +
                        std::to_string(c_order.size()) + " elements");
    std::string& data = insert<T>(std::move(name), std::move(shape), c_order.size());
    if (!c_order.empty()) std::memcpy(data.data(), c_order.data(), data.size());
  }

  /// @brief Adds a tensor as raw little-endian C-order bytes of a safetensors dtype, e.g. one copied unchanged
  /// from a safetensors_reader (`entry(name).dtype`, `.shape`, `bytes(name)`), whatever its dtype.
  /// @throws shape_error when the byte count does not match dtype and shape; std::invalid_argument for an
  ///         unknown dtype or a bad name.
  void add_bytes(std::string name, const std::string& dtype, std::vector<std::size_t> shape, std::string_view bytes) {
    const std::size_t element = safetensors_dtype_size(dtype);
    if (element == 0) throw std::invalid_argument("safetensors_writer: unknown dtype '" + dtype + "'");
    const auto count = detail::checked_count(shape);
    if (!count || *count > std::numeric_limits<std::size_t>::max() / element || *count * element != bytes.size())
      throw shape_error("safetensors_writer: tensor '" + name + "' of shape " + numpy_shape(shape) + " and dtype " +
                        dtype + " was given " + std::to_string(bytes.size()) + " bytes");
    insert(std::move(name), dtype, std::move(shape), bytes.size()).assign(bytes);
  }

  /// @brief Sets a `__metadata__` string (e.g. {"format", "pt"} for tools that expect it).
  void set_metadata(std::string key, std::string value) { metadata_[std::move(key)] = std::move(value); }

  /// @brief The bytes of the file: the header JSON padded with spaces to a multiple of 8, then the data,
  /// tensors ordered by element size (largest first) and then by name, so that each starts aligned to its size.
  std::string serialize() const {
    std::vector<const pending*> order;
    for (const auto& [name, t] : tensors_) order.push_back(&t);
    std::stable_sort(order.begin(), order.end(), [](const pending* a, const pending* b) {
      return safetensors_dtype_size(a->dtype) > safetensors_dtype_size(b->dtype);
    });
    nlohmann::json header = nlohmann::json::object();
    if (!metadata_.empty()) header["__metadata__"] = metadata_;
    std::size_t offset = 0;
    for (const pending* t : order) {
      header[t->name] = {{"dtype", t->dtype}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->data.size()}}};
      offset += t->data.size();
    }
    std::string text = header.dump();
    text.resize((text.size() + 7) / 8 * 8, ' ');
    std::string out(8, '\0');
    for (std::size_t b = 0; b < 8; ++b) out[b] = char((std::uint64_t(text.size()) >> (8 * b)) & 0xff);
    out += text;
    out.reserve(out.size() + offset);
    for (const pending* t : order) out += t->data;
    return out;
  }

  /// @brief Writes the file atomically: the target is replaced only on success. @throws io_error naming it.
  void write(const std::filesystem::path& file) const {
    const std::string bytes = serialize();
    atomic_file out(file);
    out.write(bytes.data(), bytes.size());
    out.commit();
  }

 private:
  struct pending {
    std::string name;
    std::string dtype;
    std::vector<std::size_t> shape;
    std::string data;
  };

  template <class T>
  std::string& insert(std::string name, std::vector<std::size_t> shape, std::size_t count) {
    return insert(std::move(name), std::string(safetensors_dtype<T>()), std::move(shape), count * sizeof(T));
  }
  std::string& insert(std::string name, std::string dtype, std::vector<std::size_t> shape, std::size_t bytes) {
    if (name.empty() || name == "__metadata__")
      throw argument_error("safetensors_writer: '" + name + "' cannot name a tensor");
    if (tensors_.count(name)) throw argument_error("safetensors_writer: tensor '" + name + "' added twice");
    auto& t = tensors_[name];
    t = pending{name, std::move(dtype), std::move(shape), std::string(bytes, '\0')};
    return t.data;
  }

  std::map<std::string, pending> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace tprod::io
