// SPDX-License-Identifier: Apache-2.0
// The .npy reader and writer: NumPy's byte layout built by hand here (not by the writer under test), C and
// Fortran order, every dtype, order-N arrays, every malformed-file error, and atomic writes.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <complex>
#include <cstdint>
#include <future>
#include <limits>
#include <string>
#include <vector>

#include "index_code.hpp"
#include "scratch_dir.hpp"
#include "tprod/core/random.hpp"
#include "tprod/io.hpp"

using namespace tprod;
using namespace tprod::io;
using tprod::test::index_code;
using tprod::test::message_of;
using tprod::test::scratch_dir;

namespace {

/// A .npy file as numpy.save lays it out: magic, version, little-endian header length, the dict padded with
/// spaces and a newline so that the data starts at a multiple of 64, then the raw data.
std::string npy_bytes(std::string dict, const std::string& data, int major = 1) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  for (std::size_t b = 0; b < prefix - 8; ++b) out += char((dict.size() >> (8 * b)) & 0xff);
  return out + dict + data;
}

template <class T> std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
         ", }";
}

}  // namespace

TEST_CASE("npy: a C-ordered (2, 3, 4) float64 file is read as A(i, j, k) = arr[i, j, k]") {
  std::vector<double> c_order;
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k) c_order.push_back(index_code(i, j, k));
  const npy_array a = parse_npy(npy_bytes(dict("<f8", false, "(2, 3, 4)"), raw(c_order)));
  CHECK(a.dtype() == npy_dtype::float64);
  CHECK(a.shape == std::vector<std::size_t>{2, 3, 4});
  const auto t = to_tensor3<double>(a);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k) CHECK(t(i, j, k) == index_code(i, j, k));
}

TEST_CASE("npy: a Fortran-ordered file is read without reordering") {
  std::vector<float> f_order;
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < 2; ++i) f_order.push_back(float(index_code(i, j, k)));
  const auto t = to_tensor3<float>(parse_npy(npy_bytes(dict("<f4", true, "(2, 3, 4)"), raw(f_order))));
  CHECK(t.shape() == "2x3x4");
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k) CHECK(t(i, j, k) == float(index_code(i, j, k)));
}

TEST_CASE("npy: order-4 C-ordered arrays are permuted to Fortran order") {
  const std::size_t d[4] = {2, 3, 2, 3};
  std::vector<double> c_order;
  for (std::size_t a = 0; a < d[0]; ++a)
    for (std::size_t b = 0; b < d[1]; ++b)
      for (std::size_t c = 0; c < d[2]; ++c)
        for (std::size_t e = 0; e < d[3]; ++e) c_order.push_back(double(1000 * a + 100 * b + 10 * c + e));
  const npy_array arr = parse_npy(npy_bytes(dict("<f8", false, "(2, 3, 2, 3)"), raw(c_order)));
  CHECK(arr.ndim() == 4);
  const auto& v = arr.values<double>();
  for (std::size_t a = 0; a < d[0]; ++a)
    for (std::size_t b = 0; b < d[1]; ++b)
      for (std::size_t c = 0; c < d[2]; ++c)
        for (std::size_t e = 0; e < d[3]; ++e)
          CHECK(v[a + d[0] * (b + d[1] * (c + d[2] * e))] == double(1000 * a + 100 * b + 10 * c + e));
  // And back through the writer and reader unchanged.
  const npy_array again = parse_npy(serialize_npy(arr));
  CHECK(again.shape == arr.shape);
  CHECK(again.values<double>() == v);
}

TEST_CASE("npy: complex data, (m, n) as p = 1, 0-d, 1-d, empty arrays and format versions 2.0 and 3.0") {
  const std::vector<std::complex<float>> c = {{1, 2}, {3, -4}, {-5, 6}, {7, 8}, {9, 10}, {11, 12}};
  const auto t = to_tensor3<std::complex<float>>(parse_npy(npy_bytes(dict("<c8", true, "(2, 3)"), raw(c))));
  CHECK(t.shape() == "2x3x1");
  CHECK(t(1, 2, 0) == std::complex<float>(11, 12));
  CHECK(t(0, 1, 0) == std::complex<float>(-5, 6));

  const npy_array scalar0 = parse_npy(npy_bytes(dict("<f8", false, "()"), raw(std::vector<double>{2.5})));
  CHECK(scalar0.ndim() == 0);
  CHECK(scalar0.values<double>() == std::vector<double>{2.5});
  CHECK_THROWS_AS(to_tensor3<double>(scalar0), io_error);
  const npy_array one = parse_npy(npy_bytes(dict("<f8", false, "(3,)"), raw(std::vector<double>{1, 2, 3})));
  CHECK(one.values<double>() == std::vector<double>{1, 2, 3});
  CHECK(message_of<io_error>([&] { to_tensor3<double>(one, "v.npy"); }) ==
        "v.npy: expected an array of shape (m, n, p) or (m, n), got shape (3,)");

  const npy_array empty = parse_npy(npy_bytes(dict("<c16", false, "(0, 3, 2)"), ""));
  CHECK(empty.size() == 0);
  CHECK(to_tensor3<std::complex<double>>(empty).shape() == "0x3x2");

  for (int major : {2, 3}) {
    const npy_array v = parse_npy(npy_bytes(dict("<f8", true, "(1, 2)"), raw(std::vector<double>{4, 5}), major));
    CHECK(v.values<double>() == std::vector<double>{4, 5});
  }
}

TEST_CASE_TEMPLATE("npy: write then read a tensor through a file is exact", T, float, double, std::complex<float>,
                   std::complex<double>) {
  scratch_dir dir;
  const auto a = random_tensor3<T>(3, 4, 5, 42);
  write_npy(dir / "a.npy", a);
  const npy_array arr = read_npy(dir / "a.npy");
  CHECK(arr.dtype() == dtype_of<T>);
  CHECK(arr.shape == std::vector<std::size_t>{3, 4, 5});
  const auto b = read_tensor3<T>(dir / "a.npy");
  CHECK(b.shape() == a.shape());
  CHECK(b.elements() == a.elements());
  CHECK(to_tensor3<T>(to_npy(a)).elements() == a.elements());
  CHECK(dir.entries() == std::set<std::string>{"a.npy"});
}

TEST_CASE("npy: the writer lays the file out as numpy.save does, in Fortran order") {
  const npy_array a({2, 3, 4}, std::vector<std::complex<double>>(24, {1.5, -2}));
  const std::string bytes = serialize_npy(a);
  REQUIRE(bytes.size() > 10);
  CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_len = std::size_t(std::uint8_t(bytes[8])) | std::size_t(std::uint8_t(bytes[9])) << 8;
  CHECK((10 + header_len) % 64 == 0);
  const std::string header = bytes.substr(10, header_len);
  const std::string expected = "{'descr': '<c16', 'fortran_order': True, 'shape': (2, 3, 4), }";
  CHECK(header.substr(0, expected.size()) == expected);
  CHECK(header.back() == '\n');
  CHECK(header.find_first_not_of(' ', expected.size()) == header_len - 1);
  CHECK(bytes.size() == 10 + header_len + 24 * 16);
  CHECK(bytes.substr(10 + header_len) == raw(a.values<std::complex<double>>()));
  CHECK(npy_header_bytes(npy_dtype::float32, {5}).find("'shape': (5,), }") != std::string::npos);
}

TEST_CASE("npy: malformed files are io_errors naming the file and the problem") {
  const std::string ok_dict = dict("<f8", false, "(2, 2)");
  const std::string four = raw(std::vector<double>{1, 2, 3, 4});
  std::string big_len = npy_bytes(ok_dict, four, 2);
  big_len[8] = big_len[9] = big_len[10] = big_len[11] = char(0xff);
  std::string long_len = npy_bytes(ok_dict, four);
  long_len.resize(40);
  long_len[8] = char(0xe8);  // 1000 bytes announced
  long_len[9] = char(0x03);
  std::string bad_version = npy_bytes(ok_dict, four);
  bad_version[6] = 4;
  std::string sixty_five = "(";
  for (int d = 0; d < 65; ++d) sixty_five += "1, ";
  sixty_five += ")";

  const struct {
    std::string bytes, problem;
  } cases[] = {
      {"", "too short to be a .npy file (0 bytes)"},
      {"\x93NUMPY\x01", "too short to be a .npy file (7 bytes)"},
      {std::string("\x93NUMPX\x01\x00\x04\x00{}\n\n", 14), "not a .npy file"},
      {bad_version, "unsupported .npy format version 4.0"},
      {big_len, "implausible header length 4294967295"},
      {long_len, "truncated: the header length is 1000 bytes but only 30 follow"},
      {npy_bytes(ok_dict, four.substr(0, 20)), "truncated data: shape (2, 2) of float64 needs 32 bytes but only 20"},
      {npy_bytes(ok_dict, four + "xyz"), "3 unexpected bytes after the data"},
      {npy_bytes(dict("<f8", false, "(1099511627776, 1099511627776, 1099511627776)"), ""), "element count overflows"},
      {npy_bytes(dict("<f8", false, "(4611686018427387904,)"), ""), "byte count overflows"},
      {npy_bytes(dict("<f8", false, "(99999999999999999999999,)"), ""), "overflows 64 bits"},
      {npy_bytes(dict("<i8", false, "(2, 2)"), four), "unsupported dtype '<i8'"},
      {npy_bytes(dict("|u1", false, "(2, 2)"), four), "'|u1' (tprod reads little-endian float32, float64, complex64, "
                                                      "complex128); convert with arr.astype(numpy.float64)"},
      {npy_bytes(dict(">f8", false, "(2, 2)"), four), "big-endian data (dtype '>f8') is not supported"},
      {npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", four), "structured arrays"},
      {npy_bytes("{'descr': '<f8', 'fortran_order': False, }", four), "the header has no 'shape' key"},
      {npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), 'x': 1}", four), "unexpected key 'x'"},
      {npy_bytes("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (4,)}", four), "appears twice"},
      {npy_bytes(dict("<f8", false, "(4)"), four), "a one-dimensional shape must be written '(n,)'"},
      {npy_bytes(dict("<f8", false, "(-4,)"), four), "expected a non-negative integer"},
      {npy_bytes(dict("<f8", false, sixty_five), four), "more than 64 dimensions"},
      {npy_bytes("{'descr': '<f8', 'fortran_order': 1, 'shape': (4,)}", four), "fortran_order must be True or False"},
      {npy_bytes(ok_dict + " junk", four), "unexpected text after the header dict"},
      {npy_bytes("[1, 2]", four), "expected '{'"},
      {npy_bytes("{'descr': '<f8", four), "unsupported character in a string"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.problem);
    const std::string msg = message_of<io_error>([&] { parse_npy(c.bytes, "bad.npy"); });
    CHECK(msg.rfind("bad.npy: ", 0) == 0);
    CHECK(msg.find(c.problem) != std::string::npos);
  }
}

TEST_CASE("npy: unreadable paths name the file") {
  scratch_dir dir;
  CHECK(message_of<io_error>([&] { read_npy(dir / "missing.npy"); }) ==
        (dir / "missing.npy").string() + ": cannot open for reading: No such file or directory");
  CHECK(message_of<io_error>([&] { read_npy(dir.path); }) == dir.path.string() + ": not a regular file (a directory)");
  tprod::test::put_bytes(dir / "short.npy", "\x93NUMPY");
  CHECK(message_of<io_error>([&] { read_tensor3<float>(dir / "short.npy"); }).find("short.npy: too short") !=
        std::string::npos);
}

TEST_CASE("npy: writes are atomic: an existing file is replaced only on success, nothing is left behind") {
  scratch_dir dir;
  const auto a = random_tensor3<double>(2, 3, 4, 1);
  const auto b = random_tensor3<double>(2, 2, 2, 2);
  write_npy(dir / "out.npy", a);
  const std::string before = tprod::test::file_bytes(dir / "out.npy");
  write_npy(dir / "out.npy", b);  // success replaces
  CHECK(read_tensor3<double>(dir / "out.npy").elements() == b.elements());
  CHECK(dir.entries() == std::set<std::string>{"out.npy"});

  {  // an atomic_file destroyed without commit leaves the target as it was and no temporary file
    atomic_file f(dir / "out.npy");
    f.write("garbage", 7);
  }
  CHECK(read_tensor3<double>(dir / "out.npy").elements() == b.elements());
  CHECK(dir.entries() == std::set<std::string>{"out.npy"});

  std::filesystem::create_directory(dir / "adir");  // renaming over a directory fails after the data was written
  const std::string msg = message_of<io_error>([&] { write_npy(dir / "adir", a); });
  CHECK(msg.rfind((dir / "adir").string() + ": cannot replace", 0) == 0);
  CHECK(dir.entries() == std::set<std::string>{"adir", "out.npy"});
  CHECK(std::filesystem::is_empty(dir / "adir"));

  CHECK(message_of<io_error>([&] { write_npy(dir / "no" / "x.npy", a); })
            .find("x.npy: cannot create a temporary file in") != std::string::npos);
  (void)before;
}

TEST_CASE("npy: a FIFO or a device as input is refused at once, not waited on") {
  scratch_dir dir;
  const auto fifo = dir / "in.npy";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Before the fix open() waited for a writer forever: run the read aside and, if it hangs, release it by
  // opening the writing end ourselves, so that the failure is a failed check rather than a hung suite.
  auto reading = std::async(std::launch::async, [&] { return message_of<io_error>([&] { read_npy(fifo); }); });
  if (reading.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    FAIL_CHECK("reading a FIFO blocked");
    const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
  }
  CHECK(reading.get() == fifo.string() + ": not a regular file (a FIFO)");
  CHECK(message_of<io_error>([&] { read_tensor3<double>("/dev/zero"); }) ==
        "/dev/zero: not a regular file (a character device)");
}

TEST_CASE("npy: shapes no index can address are refused whatever the other extents") {
  // (0, 2^64-1, 2^64-1) has no elements, yet its extents cannot be indexed: refused like (2^64-1, 2^64-1, 0).
  const std::string huge = std::to_string(std::numeric_limits<std::size_t>::max());
  for (const std::string& shape : {"(0, " + huge + ", " + huge + ")", "(" + huge + ", " + huge + ", 0)",
                                  "(0, 1, " + huge + ")", std::string("(4294967296, 4294967296, 0)")}) {
    CAPTURE(shape);
    const std::string msg = message_of<io_error>([&] { to_tensor3<double>(parse_npy(npy_bytes(dict("<f8", true, shape), "")), "h.npy"); });
    CHECK(msg.find(": shape " + shape + " is too large") != std::string::npos);
  }
  CHECK(to_tensor3<double>(parse_npy(npy_bytes(dict("<f8", true, "(0, 1, 1048576)"), ""))).shape() == "0x1x1048576");
}

TEST_CASE("npy: outputs are regular files: devices and FIFOs are refused, symbolic links are followed") {
  scratch_dir dir;
  const auto a = random_tensor3<double>(2, 3, 4, 1);
  // A FIFO (as /dev/full for root) was replaced by a regular file through rename.
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK(message_of<io_error>([&] { write_npy(dir / "fifo", a); }) ==
        (dir / "fifo").string() + ": cannot replace: not a regular file (a FIFO); tprod writes only regular files");
  struct stat st {};
  REQUIRE(::lstat((dir / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A device node of our own (root only: never aim a test at /dev itself, which the defect replaced).
  if (::mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    CHECK(message_of<io_error>([&] { write_npy(dir / "null", a); }).find("not a regular file (a character device)") !=
          std::string::npos);
    REQUIRE(::lstat((dir / "null").c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    std::filesystem::remove(dir / "null");
  }
  CHECK(dir.entries() == std::set<std::string>{"fifo"});

  // A link to a file: the file is replaced, the link stays a link (also a relative link and a chain of two).
  write_npy(dir / "real.npy", random_tensor3<double>(1, 1, 1, 2));
  std::filesystem::create_symlink("real.npy", dir / "link.npy");
  std::filesystem::create_symlink(dir / "link.npy", dir / "link2.npy");
  write_npy(dir / "link2.npy", a);
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(dir / "link.npy")));
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(dir / "link2.npy")));
  CHECK(read_tensor3<double>(dir / "real.npy").elements() == a.elements());
  // A dangling link: the file it names is created.
  std::filesystem::create_symlink("made.npy", dir / "dangling.npy");
  write_npy(dir / "dangling.npy", a);
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(dir / "dangling.npy")));
  CHECK(read_tensor3<double>(dir / "made.npy").elements() == a.elements());
  CHECK(dir.entries() == std::set<std::string>{"fifo", "real.npy", "link.npy", "link2.npy", "dangling.npy", "made.npy"});
}

TEST_CASE("npy: dtype conversions are lossless or refused") {
  const npy_array f({2}, std::vector<float>{1.5f, -2.25f});
  const npy_array z = convert(f, npy_dtype::complex128, "f.npy");
  CHECK(z.values<std::complex<double>>() == std::vector<std::complex<double>>{{1.5, 0}, {-2.25, 0}});
  CHECK(message_of<io_error>([&] { convert(z, npy_dtype::float64, "z.npy"); }) ==
        "z.npy: holds complex128 data, which cannot be read as float64 without loss");
  CHECK_THROWS_AS(convert(convert(f, npy_dtype::float64, "f"), npy_dtype::float32, "f"), io_error);
  CHECK(promote(npy_dtype::float64, npy_dtype::complex64) == npy_dtype::complex128);
  CHECK(promote(npy_dtype::float32, npy_dtype::float32) == npy_dtype::float32);
  CHECK(dtype_from_name("complex64") == npy_dtype::complex64);
  CHECK(!dtype_from_name("int8").has_value());

  scratch_dir dir;
  const auto a = random_tensor3<float>(2, 3, 2, 9);
  write_npy(dir / "a.npy", a);
  const auto d = read_tensor3<std::complex<double>>(dir / "a.npy");  // float32 file promoted on read
  for (std::size_t e = 0; e < a.size(); ++e) CHECK(d.data()[e] == std::complex<double>(a.data()[e]));
  write_npy(dir / "d.npy", random_tensor3<double>(2, 2, 2, 3));
  CHECK_THROWS_AS(read_tensor3<float>(dir / "d.npy"), io_error);
}

TEST_CASE("npy: read_elements reads a range of the data in the file's order, and refuses what is not there") {
  scratch_dir dir;
  const auto path = dir.path / "a.npy";
  const auto a = tprod::random_tensor3<double>(3, 4, 5, 9);
  tprod::io::write_npy(path, a);
  tprod::io::npy_reader reader(path);
  std::vector<double> part(7);
  reader.read_elements(part.data(), 20, 7);  // elements 20..26 in Fortran order: slice 1, from (8, …)
  for (std::size_t i = 0; i < part.size(); ++i) CHECK(part[i] == a.data()[20 + i]);
  reader.read_elements(part.data(), 0, 1);  // the position does not matter: any order of ranges
  CHECK(part[0] == a.data()[0]);
  CHECK_THROWS_WITH_AS(reader.read_elements(part.data(), 55, 7), doctest::Contains("beyond its 60"),
                       tprod::io_error);
  std::vector<float> wrong(1);
  CHECK_THROWS_WITH_AS(reader.read_elements(wrong.data(), 0, 1), doctest::Contains("not float32"), tprod::io_error);
}
