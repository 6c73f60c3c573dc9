// SPDX-License-Identifier: Apache-2.0
// IDX files: gzip and plain round trips of files the test writes itself, every malformed-file error, and the
// real Fashion-MNIST files from Debian's dataset-fashion-mnist when that package is installed.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "tprod/io/idx.hpp"

using namespace tprod;
using namespace tprod::io;
using tprod::test::message_of;
using tprod::test::put_bytes;
using tprod::test::scratch_dir;

TEST_CASE("idx: a gzip-compressed and a plain file round-trip") {
  scratch_dir dir;
  std::vector<std::uint8_t> data(2 * 3 * 4);
  for (std::size_t e = 0; e < data.size(); ++e) data[e] = std::uint8_t(e * 10);
  for (const bool gz : {true, false}) {
    const auto file = dir / (gz ? "a.gz" : "a");
    write_idx(file, {2, 3, 4}, data, gz);
    const idx_array a = read_idx(file);
    CHECK(a.shape == std::vector<std::size_t>{2, 3, 4});
    CHECK(a.data == data);
  }
  // The gzip file really is gzip (magic 1f 8b), the plain one starts with the IDX magic.
  CHECK(tprod::test::file_bytes(dir / "a.gz").substr(0, 2) == "\x1f\x8b");
  CHECK(tprod::test::file_bytes(dir / "a").substr(0, 4) == std::string("\0\0\x08\x03", 4));
}

TEST_CASE("idx: an image split pairs images with labels and checks them") {
  scratch_dir dir;
  std::vector<std::uint8_t> images(3 * 2 * 2);
  for (std::size_t e = 0; e < images.size(); ++e) images[e] = std::uint8_t(e);
  write_idx(dir / "im.gz", {3, 2, 2}, images);
  write_idx(dir / "lb.gz", {3}, {0, 9, 4});
  const image_split s = read_image_split(dir / "im.gz", dir / "lb.gz");
  CHECK(s.count == 3);
  CHECK(s.rows == 2);
  CHECK(s.cols == 2);
  CHECK(s.labels == std::vector<std::uint8_t>{0, 9, 4});
  CHECK(s.image(2)[1] == 9);  // image 2, row 0, column 1

  write_idx(dir / "lb2.gz", {2}, {0, 1});
  CHECK(message_of<io_error>([&] { read_image_split(dir / "im.gz", dir / "lb2.gz"); }).find("has 2 labels but") !=
        std::string::npos);
  write_idx(dir / "lb3.gz", {3}, {0, 10, 1});
  CHECK(message_of<io_error>([&] { read_image_split(dir / "im.gz", dir / "lb3.gz"); }).find("label 10 of example 1") !=
        std::string::npos);
  CHECK(message_of<io_error>([&] { read_image_split(dir / "lb.gz", dir / "lb.gz"); }).find("(count, rows, cols)") !=
        std::string::npos);
}

TEST_CASE("idx: malformed files are refused with the file name and the problem") {
  scratch_dir dir;
  const std::string good = idx_bytes({2, 2}, {1, 2, 3, 4});
  auto reject = [&](const std::string& bytes, bool gz = true) {
    put_bytes(dir / "bad.gz", gz ? gzip_bytes(bytes) : bytes);
    const std::string msg = message_of<io_error>([&] { read_idx(dir / "bad.gz"); });
    CHECK(msg.find((dir / "bad.gz").string()) == 0);
    return msg;
  };
  CHECK(reject(good.substr(0, good.size() - 1)).find("truncated: shape (2, 2) needs 4 data bytes but only 3") !=
        std::string::npos);
  CHECK(reject(good + "x").find("unexpected bytes after") != std::string::npos);
  CHECK(reject(good.substr(0, 6)).find("ends inside the dimensions") != std::string::npos);
  CHECK(reject(std::string("\x01\x00\x08\x01", 4)).find("not an IDX file") != std::string::npos);
  CHECK(reject(std::string("\0\0\x0d\x01", 4)).find("unsupported IDX element type 0x0d") != std::string::npos);
  CHECK(reject(std::string("\0\0\x08\x00", 4)).find("dimension count 0") != std::string::npos);
  // A header claiming 2^32−1 × 2^32−1 × 2^32−1 bytes overflows; one claiming 4 GiB but holding 4 bytes is
  // truncated (and is read in bounded steps, not allocated up front).
  CHECK(reject(std::string("\0\0\x08\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 16)).find("overflows") !=
        std::string::npos);
  CHECK(reject(std::string("\0\0\x08\x01\xff\xff\xff\xff", 8) + "abcd").find("only 4 follow") != std::string::npos);
  // A gzip stream cut in the middle, and one whose checksum does not match its data.
  std::string gz = gzip_bytes(idx_bytes({64}, std::vector<std::uint8_t>(64, 7)));
  CHECK(reject(gz.substr(0, gz.size() - 10), false).find("truncated") != std::string::npos);
  gz[gz.size() - 8] = char(gz[gz.size() - 8] ^ 0xff);  // the CRC-32 in the gzip trailer
  CHECK(reject(gz, false).find("cannot decompress") != std::string::npos);
  CHECK(message_of<io_error>([&] { read_idx(dir / "none.gz"); }).find("none.gz: no such file") != std::string::npos);
  CHECK(message_of<io_error>([&] { read_fashion_mnist("train", dir / "nowhere"); }).find("dataset-fashion-mnist") !=
        std::string::npos);
  CHECK_THROWS_AS(read_fashion_mnist("validation", dir.path), tprod::argument_error);
}

TEST_CASE("idx: Fashion-MNIST from Debian's dataset-fashion-mnist (skipped when not installed)") {
  std::error_code ec;
  if (!std::filesystem::exists(fashion_mnist_debian_dir / "t10k-labels-idx1-ubyte.gz", ec)) {
    MESSAGE("dataset-fashion-mnist is not installed: skipped");
    return;
  }
  for (const auto& [split, count] : {std::pair<const char*, std::size_t>{"train", 60000}, {"test", 10000}}) {
    const image_split s = read_fashion_mnist(split);
    CHECK(s.count == count);
    CHECK(s.rows == 28);
    CHECK(s.cols == 28);
    CHECK(s.images.size() == count * 28 * 28);
    // Every class occurs, equally often (the data set is balanced).
    std::array<std::size_t, 10> per_class{};
    for (auto l : s.labels) ++per_class[l];
    for (auto c : per_class) CHECK(c == count / 10);
  }
}
