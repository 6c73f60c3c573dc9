// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file npy.hpp
/// @brief A small, strict reader and an atomic writer for NumPy .npy files of any order.
///
/// Supported: little-endian float32 ('<f4'), float64 ('<f8'), complex64 ('<c8') and complex128 ('<c16'),
/// C or Fortran order, format versions 1.0, 2.0 and 3.0, any number of dimensions (up to 64).
/// `npy_array` holds the data in Fortran order (first index fastest), which for an (m, n, p) array is exactly
/// tensor3's storage, so the tensor3 conversions (npy_tensor3.hpp) are copies or none at all.
///
/// Every malformed file is an io_error whose message starts with the file name: wrong magic, unsupported
/// version, header length beyond the file or beyond 1 MiB, a header that is not the dict NumPy writes,
/// big-endian or other dtypes, shapes whose element or byte count overflows, truncated data, trailing bytes.
/// The header is checked against the file size before anything is allocated, so a lying header cannot make
/// the reader allocate more than the file holds.
///
/// Writes are atomic (atomic_file.hpp) and in Fortran order with a 64-byte aligned header, as numpy.save does.
/// POSIX only; assumes a little-endian host (checked at compile time).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/io/atomic_file.hpp"

namespace tprod::io {

static_assert(std::endian::native == std::endian::little,
              "tprod's .npy reader and writer assume a little-endian host; port the byte handling first");

/// @brief The element types tprod reads and writes, in the order of npy_array::storage's alternatives.
enum class npy_dtype { float32, float64, complex64, complex128 };

/// @brief "float32", "float64", "complex64" or "complex128" (NumPy's names).
constexpr std::string_view dtype_name(npy_dtype d) {
  constexpr std::string_view names[] = {"float32", "float64", "complex64", "complex128"};
  return names[int(d)];
}
/// @brief Bytes per element.
constexpr std::size_t dtype_size(npy_dtype d) {
  constexpr std::size_t sizes[] = {4, 8, 8, 16};
  return sizes[int(d)];
}
constexpr bool is_complex_dtype(npy_dtype d) { return d == npy_dtype::complex64 || d == npy_dtype::complex128; }
constexpr bool is_double_dtype(npy_dtype d) { return d == npy_dtype::float64 || d == npy_dtype::complex128; }
/// @brief The dtype with the given complexness and precision.
constexpr npy_dtype make_dtype(bool complex, bool double_precision) {
  return complex ? (double_precision ? npy_dtype::complex128 : npy_dtype::complex64)
                 : (double_precision ? npy_dtype::float64 : npy_dtype::float32);
}
/// @brief The smallest dtype holding both without loss (complex wins, then the wider precision).
constexpr npy_dtype promote(npy_dtype a, npy_dtype b) {
  return make_dtype(is_complex_dtype(a) || is_complex_dtype(b), is_double_dtype(a) || is_double_dtype(b));
}
/// @brief The dtype named "float32", "float64", "complex64" or "complex128", if it is one.
inline std::optional<npy_dtype> dtype_from_name(std::string_view name) {
  for (npy_dtype d : {npy_dtype::float32, npy_dtype::float64, npy_dtype::complex64, npy_dtype::complex128})
    if (dtype_name(d) == name) return d;
  return std::nullopt;
}

/// @brief The dtype of a scalar: float → float32, …, std::complex<double> → complex128.
template <scalar T>
inline constexpr npy_dtype dtype_of = make_dtype(is_complex_v<T>, std::same_as<real_t<T>, double>);

/// @brief "(3, 4, 5)", "(5,)" or "()": a shape as NumPy prints it, the way tprod::io writes the shapes of arrays in
/// files (.npy, safetensors, IDX); the rest of tprod writes "3x4x5" (shape_string).
inline std::string numpy_shape(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// @brief What a .npy header says: element type, storage order and shape.
struct npy_header {
  npy_dtype dtype = npy_dtype::float64;
  bool fortran_order = true;
  std::vector<std::size_t> shape;

  /// @brief The number of elements (1 for a 0-d array). Overflow was ruled out when the header was parsed.
  std::size_t size() const {
    std::size_t s = 1;
    for (auto d : shape) s *= d;
    return s;
  }
  std::size_t data_bytes() const { return size() * dtype_size(dtype); }
};

/// @brief An n-dimensional array of one of the four dtypes, data in Fortran order (first index fastest):
/// element (i₀, i₁, …) sits at i₀ + d₀·(i₁ + d₁·(i₂ + …)).
struct npy_array {
  using storage = std::variant<std::vector<float>, std::vector<double>, std::vector<std::complex<float>>,
                               std::vector<std::complex<double>>>;

  std::vector<std::size_t> shape;
  storage data;

  npy_array() = default;
  /// @brief A zero-filled array of the given dtype and shape.
  npy_array(npy_dtype dtype, std::vector<std::size_t> dims) : shape(std::move(dims)) {
    const std::size_t n = npy_header{dtype, true, shape}.size();
    switch (dtype) {
      case npy_dtype::float32: data = std::vector<float>(n); break;
      case npy_dtype::float64: data = std::vector<double>(n); break;
      case npy_dtype::complex64: data = std::vector<std::complex<float>>(n); break;
      case npy_dtype::complex128: data = std::vector<std::complex<double>>(n); break;
    }
  }
  /// @brief From Fortran-ordered values of a scalar type.
  template <scalar T>
  npy_array(std::vector<std::size_t> dims, std::vector<T> values) : shape(std::move(dims)), data(std::move(values)) {}

  npy_dtype dtype() const { return npy_dtype(data.index()); }
  std::size_t ndim() const { return shape.size(); }
  std::size_t size() const { return npy_header{dtype(), true, shape}.size(); }
  const void* bytes() const { return std::visit([](const auto& v) -> const void* { return v.data(); }, data); }
  void* bytes() { return std::visit([](auto& v) -> void* { return v.data(); }, data); }

  /// @brief The values as T. @throws std::bad_variant_access unless dtype() == dtype_of<T>.
  template <scalar T> std::vector<T>& values() { return std::get<std::vector<T>>(data); }
  template <scalar T> const std::vector<T>& values() const { return std::get<std::vector<T>>(data); }
};

namespace detail {

inline constexpr std::size_t npy_max_header_bytes = std::size_t(1) << 20;
inline constexpr std::size_t npy_max_ndim = 64;
inline constexpr char npy_magic[] = "\x93NUMPY";

[[noreturn]] inline void npy_fail(std::string_view name, const std::string& problem) {
  throw io_error(std::string(name) + ": " + problem);
}

/// @brief Parses the Python dict literal of a .npy header, e.g.
/// `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4, 5), }`, strictly: exactly these three keys,
/// a tuple shape (a one-element tuple needs its comma), only whitespace after the closing brace.
class npy_header_parser {
 public:
  npy_header_parser(std::string_view text, std::string_view name) : s_(text), name_(name) {}

  npy_header parse() {
    npy_header h;
    bool seen[3] = {false, false, false};
    ws();
    expect('{');
    ws();
    while (!at('}')) {
      const std::string key = string_literal();
      ws();
      expect(':');
      ws();
      int which = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (which < 0) fail("unexpected key '" + key + "' in the header");
      if (seen[which]) fail("key '" + key + "' appears twice in the header");
      seen[which] = true;
      if (which == 0) h.dtype = descr();
      if (which == 1) h.fortran_order = boolean();
      if (which == 2) h.shape = shape();
      ws();
      if (at(',')) {
        ++pos_;
        ws();
      } else if (!at('}')) {
        fail("expected ',' or '}' at header position " + std::to_string(pos_));
      }
    }
    ++pos_;
    ws();
    if (pos_ != s_.size()) fail("unexpected text after the header dict at position " + std::to_string(pos_));
    const char* keys[] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k)
      if (!seen[k]) fail(std::string("the header has no '") + keys[k] + "' key");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { npy_fail(name_, "malformed .npy header: " + problem); }
  bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (!at(c)) fail(std::string("expected '") + c + "' at header position " + std::to_string(pos_));
    ++pos_;
  }
  std::string string_literal() {
    if (!at('\'') && !at('"')) fail("expected a quoted string at header position " + std::to_string(pos_));
    const char quote = s_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' || static_cast<unsigned char>(s_[pos_]) < 0x20 || static_cast<unsigned char>(s_[pos_]) > 0x7e)
        fail("unsupported character in a string at header position " + std::to_string(pos_));
      if (pos_ - start > 64) fail("string too long at header position " + std::to_string(start));
      ++pos_;
    }
    if (pos_ == s_.size()) fail("unterminated string starting at header position " + std::to_string(start - 1));
    return std::string(s_.substr(start, pos_++ - start));
  }
  npy_dtype descr() {
    if (at('[')) npy_fail(name_, "unsupported dtype: structured arrays are not supported");
    const std::string d = string_literal();
    if (d == "<f4") return npy_dtype::float32;
    if (d == "<f8") return npy_dtype::float64;
    if (d == "<c8") return npy_dtype::complex64;
    if (d == "<c16") return npy_dtype::complex128;
    if (!d.empty() && d[0] == '>')
      npy_fail(name_, "big-endian data (dtype '" + d + "') is not supported; convert with arr.astype(arr.dtype.newbyteorder('<'))");
    // Integers, booleans and half or long-double floats: one astype away from a dtype tprod reads.
    const bool convertible = d.size() >= 2 && std::string_view("iubf").find(d[1]) != std::string_view::npos;
    npy_fail(name_, "unsupported dtype '" + d + "' (tprod reads little-endian float32, float64, complex64, complex128)" +
                        (convertible ? "; convert with arr.astype(numpy.float64)" : ""));
  }
  bool boolean() {
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("fortran_order must be True or False");
  }
  std::size_t integer() {
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
      fail("expected a non-negative integer in the shape at header position " + std::to_string(pos_));
    std::size_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const std::size_t digit = std::size_t(s_[pos_++] - '0');
      if (v > (std::numeric_limits<std::size_t>::max() - digit) / 10)
        npy_fail(name_, "a dimension in the shape overflows 64 bits");
      v = v * 10 + digit;
    }
    return v;
  }
  std::vector<std::size_t> shape() {
    expect('(');
    ws();
    std::vector<std::size_t> dims;
    bool trailing_comma = false;
    while (!at(')')) {
      if (dims.size() == npy_max_ndim) fail("more than " + std::to_string(npy_max_ndim) + " dimensions");
      dims.push_back(integer());
      ws();
      trailing_comma = at(',');
      if (trailing_comma) {
        ++pos_;
        ws();
      } else if (!at(')')) {
        fail("expected ',' or ')' in the shape at header position " + std::to_string(pos_));
      }
    }
    ++pos_;
    if (dims.size() == 1 && !trailing_comma) fail("a one-dimensional shape must be written '(n,)'");
    return dims;
  }

  std::string_view s_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

/// @brief Bytes from memory (parse_npy, the fuzzer).
struct npy_memory_source {
  const unsigned char* data;
  std::size_t size;
  std::size_t pos = 0;
  std::string_view name;
  std::size_t remaining() const { return size - pos; }
  void read(void* dst, std::size_t n) {  // callers check n <= remaining()
    if (n) std::memcpy(dst, data + pos, n);
    pos += n;
  }
};

/// @brief Bytes from an open regular file (read(2) in a loop).
struct npy_file_source {
  int fd = -1;
  std::size_t size = 0;
  std::size_t pos = 0;
  std::string name;
  std::size_t remaining() const { return size - pos; }
  void read(void* dst, std::size_t n) {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t got = ::read(fd, p, std::min<std::size_t>(n, std::size_t(1) << 30));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) npy_fail(name, "read error: " + errno_text(errno));
      if (got == 0) npy_fail(name, "the file shrank while it was being read");
      p += got;
      n -= std::size_t(got);
      pos += std::size_t(got);
    }
  }
};

/// @brief Reads and checks the magic string, version, header length and header dict, and checks the data size
/// against the bytes that follow. Leaves the source at the first data byte.
template <class Source>
npy_header read_npy_header(Source& src, std::string_view name) {
  const std::size_t total = src.remaining();
  if (total < 10) npy_fail(name, "too short to be a .npy file (" + std::to_string(total) + " bytes)");
  unsigned char pre[8];
  src.read(pre, 8);
  if (std::memcmp(pre, npy_magic, 6) != 0) npy_fail(name, "not a .npy file (the magic string \\x93NUMPY is missing)");
  const unsigned major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    npy_fail(name, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (src.remaining() < len_bytes) npy_fail(name, "truncated: the file ends inside the header length");
  unsigned char len[4] = {0, 0, 0, 0};
  src.read(len, len_bytes);
  const std::size_t header_len =
      std::size_t(len[0]) | std::size_t(len[1]) << 8 | std::size_t(len[2]) << 16 | std::size_t(len[3]) << 24;
  if (header_len > npy_max_header_bytes)
    npy_fail(name, "implausible header length " + std::to_string(header_len) + " (the limit is " +
                       std::to_string(npy_max_header_bytes) + " bytes)");
  if (header_len > src.remaining())
    npy_fail(name, "truncated: the header length is " + std::to_string(header_len) + " bytes but only " +
                       std::to_string(src.remaining()) + " follow");
  std::string text(header_len, '\0');
  src.read(text.data(), header_len);
  npy_header h = npy_header_parser(text, name).parse();

  std::size_t count = 1;
  for (auto d : h.shape) {
    if (d != 0 && count > std::numeric_limits<std::size_t>::max() / d)
      npy_fail(name, "shape " + numpy_shape(h.shape) + " is too large: its element count overflows");
    count *= d;
  }
  if (count > std::numeric_limits<std::size_t>::max() / dtype_size(h.dtype))
    npy_fail(name, "shape " + numpy_shape(h.shape) + " is too large: its byte count overflows");
  const std::size_t bytes = count * dtype_size(h.dtype);
  if (bytes > src.remaining())
    npy_fail(name, "truncated data: shape " + numpy_shape(h.shape) + " of " + std::string(dtype_name(h.dtype)) +
                       " needs " + std::to_string(bytes) + " bytes but only " + std::to_string(src.remaining()) +
                       " follow the header");
  if (bytes < src.remaining())
    npy_fail(name, std::to_string(src.remaining() - bytes) + " unexpected bytes after the data of shape " +
                       numpy_shape(h.shape));
  return h;
}

/// @brief dst (Fortran order) from src (C order, last index fastest) for the given shape.
template <class T>
void c_to_fortran(const T* src, T* dst, const std::vector<std::size_t>& shape) {
  const std::size_t nd = shape.size();
  std::size_t count = 1;
  for (auto d : shape) count *= d;
  if (count == 0) return;
  std::vector<std::size_t> stride(nd), index(nd, 0);  // Fortran strides of the destination
  for (std::size_t d = 0, s = 1; d < nd; s *= shape[d], ++d) stride[d] = s;
  std::size_t out = 0;
  for (std::size_t e = 0; e < count; ++e) {
    dst[out] = src[e];
    // Odometer over the source's C order: the last index runs fastest.
    for (std::size_t d = nd; d-- > 0;) {
      if (++index[d] < shape[d]) {
        out += stride[d];
        break;
      }
      index[d] = 0;
      out -= stride[d] * (shape[d] - 1);
    }
  }
}

/// @brief Reads the data that follows a checked header into dst (h.size() elements of T, Fortran order).
template <class T, class Source>
void read_npy_data(Source& src, const npy_header& h, T* dst) {
  if (h.fortran_order || h.shape.size() <= 1) return src.read(dst, h.data_bytes());
  std::vector<T> c_order(h.size());
  src.read(c_order.data(), h.data_bytes());
  c_to_fortran(c_order.data(), dst, h.shape);
}

template <class Source>
npy_array read_npy_array(Source& src, const npy_header& h) {
  npy_array a(h.dtype, h.shape);
  std::visit([&](auto& v) { read_npy_data(src, h, v.data()); }, a.data);
  return a;
}

}  // namespace detail

/// @brief An open .npy file whose header has been read and checked against the file size.
/// Read the header first (dtype, shape), then the data, straight into the caller's memory when it suits.
class npy_reader {
 public:
  /// @throws io_error naming the file when it cannot be opened, is not a regular file, or is malformed.
  explicit npy_reader(const std::filesystem::path& file) : path_(file) {
    src_.name = file.string();
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; anything but a regular
    // file is refused below, before a byte is read, and a regular file ignores the flag (cleared anyway).
    src_.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (src_.fd < 0) detail::npy_fail(src_.name, "cannot open for reading: " + detail::errno_text(errno));
    try {
      struct stat st {};
      if (::fstat(src_.fd, &st) != 0) detail::npy_fail(src_.name, "cannot stat: " + detail::errno_text(errno));
      if (!S_ISREG(st.st_mode))
        detail::npy_fail(src_.name, std::string("not a regular file (") + detail::file_kind(st.st_mode) + ")");
      if (const int flags = ::fcntl(src_.fd, F_GETFL); flags >= 0) ::fcntl(src_.fd, F_SETFL, flags & ~O_NONBLOCK);
      src_.size = std::size_t(st.st_size);
      header_ = detail::read_npy_header(src_, src_.name);
      data_offset_ = src_.pos;
    } catch (...) {
      ::close(src_.fd);
      throw;
    }
  }
  npy_reader(const npy_reader&) = delete;
  npy_reader& operator=(const npy_reader&) = delete;
  ~npy_reader() { ::close(src_.fd); }

  const npy_header& header() const { return header_; }
  const std::filesystem::path& path() const { return path_; }

  /// @brief Reads all header().size() elements into dst in Fortran order (converting from C order if needed).
  /// @pre header().dtype == dtype_of<T>; call once.
  template <scalar T> void read_into(T* dst) {
    if (header_.dtype != dtype_of<T>)
      detail::npy_fail(src_.name, "holds " + std::string(dtype_name(header_.dtype)) + ", not " +
                                      std::string(dtype_name(dtype_of<T>)));
    detail::read_npy_data(src_, header_, dst);
  }
  /// @brief Reads the whole array.
  npy_array read() { return detail::read_npy_array(src_, header_); }

  /// @brief Reads `count` elements from element `first` on, in the file's storage order (header().fortran_order),
  /// wherever the file position is: for a reader of a part of the array (a distributed read).
  /// @throws io_error naming the file for another dtype, a range beyond the data, or a read error.
  template <scalar T> void read_elements(T* dst, std::size_t first, std::size_t count) {
    if (header_.dtype != dtype_of<T>)
      detail::npy_fail(src_.name, "holds " + std::string(dtype_name(header_.dtype)) + ", not " +
                                      std::string(dtype_name(dtype_of<T>)));
    if (first > header_.size() || count > header_.size() - first)
      detail::npy_fail(src_.name, "elements " + std::to_string(first) + ".." + std::to_string(first + count) +
                                      " are beyond its " + std::to_string(header_.size()));
    char* p = reinterpret_cast<char*>(dst);
    std::size_t left = count * sizeof(T), at = data_offset_ + first * sizeof(T);
    while (left > 0) {
      const ssize_t got = ::pread(src_.fd, p, std::min<std::size_t>(left, std::size_t(1) << 30), off_t(at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) detail::npy_fail(src_.name, "read error: " + detail::errno_text(errno));
      if (got == 0) detail::npy_fail(src_.name, "the file shrank while it was being read");
      p += got;
      at += std::size_t(got);
      left -= std::size_t(got);
    }
  }

 private:
  std::filesystem::path path_;
  detail::npy_file_source src_;
  npy_header header_;
  std::size_t data_offset_ = 0;  // bytes before the first data byte
};

/// @brief Reads a .npy file. @throws io_error whose message starts with the file name.
inline npy_array read_npy(const std::filesystem::path& file) { return npy_reader(file).read(); }

/// @brief Parses a whole .npy file held in memory; `name` starts every error message.
inline npy_array parse_npy(std::string_view bytes, std::string_view name = "<memory>") {
  detail::npy_memory_source src{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, name};
  const npy_header h = detail::read_npy_header(src, name);
  return detail::read_npy_array(src, h);
}

/// @brief The magic string, version, length and header dict (Fortran order), padded with spaces and a final
/// newline to a multiple of 64 bytes as numpy.save does. Version 1.0 unless the header needs 2.0's longer length.
inline std::string npy_header_bytes(npy_dtype dtype, const std::vector<std::size_t>& shape) {
  constexpr std::string_view descr[] = {"<f4", "<f8", "<c8", "<c16"};
  std::string dict = "{'descr': '" + std::string(descr[int(dtype)]) + "', 'fortran_order': True, 'shape': " +
                     numpy_shape(shape) + ", }";
  const bool v2 = dict.size() + 1 + 10 > 65535;
  const std::size_t prefix = v2 ? 12 : 10;
  const std::size_t len = (prefix + dict.size() + 1 + 63) / 64 * 64 - prefix;
  dict.resize(len - 1, ' ');
  dict += '\n';
  std::string out(detail::npy_magic, 6);
  out += char(v2 ? 2 : 1);
  out += char(0);
  for (std::size_t b = 0; b < (v2 ? 4u : 2u); ++b) out += char((len >> (8 * b)) & 0xff);
  return out + dict;
}

/// @brief Writes Fortran-ordered data of the given dtype and shape to an already opened atomic_file
/// (the caller commits it).
inline void write_npy(atomic_file& out, npy_dtype dtype, const std::vector<std::size_t>& shape, const void* data) {
  const std::string header = npy_header_bytes(dtype, shape);
  out.write(header.data(), header.size());
  out.write(data, npy_header{dtype, true, shape}.data_bytes());
}

/// @brief Writes Fortran-ordered data as a .npy file, atomically: the target is replaced only on success and
/// nothing is left behind on failure. @throws io_error naming the file.
inline void write_npy(const std::filesystem::path& file, npy_dtype dtype, const std::vector<std::size_t>& shape,
                      const void* data) {
  atomic_file out(file);
  write_npy(out, dtype, shape, data);
  out.commit();
}
/// @brief Writes an array as a .npy file, atomically.
inline void write_npy(const std::filesystem::path& file, const npy_array& a) {
  write_npy(file, a.dtype(), a.shape, a.bytes());
}

/// @brief The bytes of the .npy file write_npy would write (for tests and in-memory use).
inline std::string serialize_npy(const npy_array& a) {
  std::string out = npy_header_bytes(a.dtype(), a.shape);
  const auto* p = static_cast<const char*>(a.bytes());
  return out.append(p, p + npy_header{a.dtype(), true, a.shape}.data_bytes());
}

/// @brief The array converted to `to` without loss: real → complex and float32 → float64 are allowed,
/// anything that would drop an imaginary part or precision is refused.
/// @throws io_error starting with `name` for a lossy conversion.
inline npy_array convert(const npy_array& a, npy_dtype to, std::string_view name) {
  const npy_dtype from = a.dtype();
  if (from == to) return a;
  if (promote(from, to) != to)
    detail::npy_fail(name, "holds " + std::string(dtype_name(from)) + " data, which cannot be read as " +
                               std::string(dtype_name(to)) + " without loss");
  npy_array out(to, a.shape);
  std::visit(
      [](const auto& src, auto& dst) {
        using S = typename std::decay_t<decltype(src)>::value_type;
        using D = typename std::decay_t<decltype(dst)>::value_type;
        if constexpr (!is_complex_v<S> || is_complex_v<D>)  // the other pairs were refused above
          for (std::size_t e = 0; e < src.size(); ++e) dst[e] = D(src[e]);
      },
      a.data, out.data);
  return out;
}

}  // namespace tprod::io
