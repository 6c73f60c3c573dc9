// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file idx.hpp
/// @brief IDX files (the format of MNIST and Fashion-MNIST), gzip-compressed or not, and the Fashion-MNIST
/// splits as Debian's dataset-fashion-mnist package installs them.
///
/// An IDX file is the magic 0x00 0x00 `<type>` `<ndim>`, ndim big-endian 32-bit dimensions, then the elements in
/// C order. tprod reads the unsigned-byte type (0x08) that the MNIST family uses. zlib's gzread reads gzip and
/// plain files alike. Reading is strict: magic, type, dimension count, data size against the header (truncated
/// or trailing bytes), a corrupt gzip stream; each is an io_error starting with the file name. The data is read
/// in chunks, so a header that lies about its size cannot make the reader allocate more than the file holds.
///
/// Needs zlib: link tprod::io (docs/building.md).
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tprod/core/error.hpp"
#include "tprod/io/atomic_file.hpp"
#include "tprod/io/npy.hpp"

namespace tprod::io {

/// @brief An IDX array of unsigned bytes: its shape and its elements in C order (last index fastest).
struct idx_array {
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> data;
};

namespace detail {

[[noreturn]] inline void idx_fail(const std::filesystem::path& file, const std::string& problem) {
  throw io_error(file.string() + ": " + problem);
}

/// @brief A gzFile closed on scope exit.
struct gz_file {
  gzFile f = nullptr;
  std::filesystem::path path;
  explicit gz_file(const std::filesystem::path& p) : path(p) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec))
      idx_fail(p, std::filesystem::exists(p, ec) ? "not a regular file" : "no such file");
    f = gzopen(p.c_str(), "rb");
    if (!f) idx_fail(p, "cannot open for reading: " + errno_text(errno));
  }
  gz_file(const gz_file&) = delete;
  gz_file& operator=(const gz_file&) = delete;
  ~gz_file() { gzclose(f); }

  /// @brief Reads up to n bytes; fewer only at the end of the data. @throws io_error for a corrupt stream.
  std::size_t read(void* dst, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const unsigned chunk = unsigned(std::min<std::size_t>(n - done, std::size_t(1) << 30));
      const int got = gzread(f, static_cast<char*>(dst) + done, chunk);
      if (got < 0) {
        int err = 0;
        const char* msg = gzerror(f, &err);
        idx_fail(path, std::string("cannot decompress: ") + (err == Z_ERRNO ? errno_text(errno) : msg));
      }
      if (got == 0) break;
      done += std::size_t(got);
    }
    return done;
  }
};

}  // namespace detail

/// @brief Reads an IDX file of unsigned bytes, gzip-compressed or not. @throws io_error starting with the file name.
inline idx_array read_idx(const std::filesystem::path& file) {
  detail::gz_file in(file);
  unsigned char magic[4];
  if (in.read(magic, 4) < 4) detail::idx_fail(file, "too short to be an IDX file");
  if (magic[0] != 0 || magic[1] != 0)
    detail::idx_fail(file, "not an IDX file (it does not start with two zero bytes)");
  if (magic[2] != 0x08)
    detail::idx_fail(file, "unsupported IDX element type 0x" + std::string(1, "0123456789abcdef"[magic[2] >> 4]) +
                               "0123456789abcdef"[magic[2] & 15] + " (tprod reads unsigned bytes, type 0x08)");
  if (magic[3] == 0 || magic[3] > 8)
    detail::idx_fail(file, "implausible IDX dimension count " + std::to_string(magic[3]));
  idx_array a;
  std::size_t count = 1;
  for (unsigned d = 0; d < magic[3]; ++d) {
    unsigned char be[4];
    if (in.read(be, 4) < 4) detail::idx_fail(file, "truncated: the file ends inside the dimensions");
    const std::size_t dim = std::size_t(be[0]) << 24 | std::size_t(be[1]) << 16 | std::size_t(be[2]) << 8 | be[3];
    if (dim != 0 && count > std::numeric_limits<std::size_t>::max() / dim)
      detail::idx_fail(file, "the element count of its dimensions overflows");
    count *= dim;
    a.shape.push_back(dim);
  }
  // Grow 64 KiB at a time (the vector's capacity doubling as it goes), so a header that claims more than the file
  // holds costs memory in proportion to the data that is there: a short file 64 KiB at most.
  constexpr std::size_t step = std::size_t(1) << 16;
  while (a.data.size() < count) {
    const std::size_t have = a.data.size(), want = std::min(step, count - have);
    a.data.resize(have + want);
    const std::size_t got = in.read(a.data.data() + have, want);
    if (got < want)
      detail::idx_fail(file, "truncated: shape " + numpy_shape(a.shape) + " needs " + std::to_string(count) +
                                 " data bytes but only " + std::to_string(have + got) + " follow the header");
  }
  unsigned char extra;
  if (in.read(&extra, 1) != 0)
    detail::idx_fail(file, "unexpected bytes after the " + std::to_string(count) + " data bytes of shape " +
                               numpy_shape(a.shape));
  return a;
}

/// @brief The IDX bytes of an unsigned-byte array of the given shape (C order). @throws shape_error on a mismatch.
inline std::string idx_bytes(const std::vector<std::size_t>& shape, const std::vector<std::uint8_t>& data) {
  std::size_t count = 1;
  for (auto d : shape) count *= d;
  if (shape.empty() || shape.size() > 8 || count != data.size())
    throw shape_error("idx_bytes: shape " + numpy_shape(shape) + " does not fit " + std::to_string(data.size()) +
                      " elements (1 to 8 dimensions)");
  std::string out{char(0), char(0), char(0x08), char(shape.size())};
  for (auto d : shape) {
    if (d > 0xffffffffu) throw shape_error("idx_bytes: dimension " + std::to_string(d) + " exceeds 32 bits");
    for (int b = 3; b >= 0; --b) out += char((d >> (8 * b)) & 0xff);
  }
  return out.append(data.begin(), data.end());
}

/// @brief `bytes` gzip-compressed (the .gz format that gzread and the gzip program read).
inline std::string gzip_bytes(std::string_view bytes, std::string_view name = "<gzip>") {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw io_error(std::string(name) + ": cannot initialize zlib");
  std::string out(deflateBound(&z, uLong(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw io_error(std::string(name) + ": gzip compression failed");
  return out;
}

/// @brief Writes an unsigned-byte array as an IDX file, gzip-compressed when `gzip`, atomically.
/// @throws io_error naming the file; shape_error when the shape does not fit the data.
inline void write_idx(const std::filesystem::path& file, const std::vector<std::size_t>& shape,
                      const std::vector<std::uint8_t>& data, bool gzip = true) {
  std::string bytes = idx_bytes(shape, data);
  if (gzip) bytes = gzip_bytes(bytes, file.string());
  atomic_file out(file);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

/// @brief Where Debian's dataset-fashion-mnist package installs the four files.
inline const std::filesystem::path fashion_mnist_debian_dir = "/usr/share/datasets/fashion-mnist";

/// @brief Fashion-MNIST's ten class names, by label.
inline constexpr std::array<std::string_view, 10> fashion_mnist_classes = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};

/// @brief One split of an MNIST-style data set: count images of rows×cols bytes (0 = background … 255), each
/// row-major, one after the other, and one label per image.
struct image_split {
  std::size_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> images;  ///< image e's pixel (r, c) is images[(e·rows + r)·cols + c]
  std::vector<std::uint8_t> labels;

  /// @brief The pixels of image e.
  std::span<const std::uint8_t> image(std::size_t e) const { return {images.data() + e * rows * cols, rows * cols}; }
};

/// @brief Reads an images file (count×rows×cols) and its labels file (count), checking that they agree and that
/// every label is below `classes`. @throws io_error naming the offending file.
inline image_split read_image_split(const std::filesystem::path& images, const std::filesystem::path& labels,
                                    std::size_t classes = 10) {
  idx_array im = read_idx(images), lb = read_idx(labels);
  if (im.shape.size() != 3)
    detail::idx_fail(images, "expected images of shape (count, rows, cols), got " + numpy_shape(im.shape));
  if (lb.shape.size() != 1) detail::idx_fail(labels, "expected labels of shape (count,), got " + numpy_shape(lb.shape));
  if (lb.shape[0] != im.shape[0])
    detail::idx_fail(labels, "has " + std::to_string(lb.shape[0]) + " labels but " + images.string() + " has " +
                                 std::to_string(im.shape[0]) + " images");
  for (std::size_t e = 0; e < lb.data.size(); ++e)
    if (lb.data[e] >= classes)
      detail::idx_fail(labels, "label " + std::to_string(lb.data[e]) + " of example " + std::to_string(e) +
                                   " is not below the " + std::to_string(classes) + " classes");
  return {im.shape[0], im.shape[1], im.shape[2], std::move(im.data), std::move(lb.data)};
}

/// @brief Reads Fashion-MNIST's "train" (60000 images) or "test" (10000) split, 28×28, labels 0–9, from
/// `dir` holding the four files as published (train-images-idx3-ubyte.gz, …, t10k-labels-idx1-ubyte.gz).
/// @throws io_error naming the missing or malformed file; argument_error for another split name.
inline image_split read_fashion_mnist(std::string_view split, const std::filesystem::path& dir = fashion_mnist_debian_dir) {
  if (split != "train" && split != "test")
    throw argument_error("read_fashion_mnist: split must be \"train\" or \"test\", not \"" +
                                std::string(split) + "\"");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    detail::idx_fail(dir, "no such directory (Debian: apt-get install dataset-fashion-mnist)");
  const std::string stem = split == "train" ? "train" : "t10k";
  return read_image_split(dir / (stem + "-images-idx3-ubyte.gz"), dir / (stem + "-labels-idx1-ubyte.gz"), 10);
}

}  // namespace tprod::io
