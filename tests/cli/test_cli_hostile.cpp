// SPDX-License-Identifier: Apache-2.0
// The tprod program on hostile and extreme inputs: shapes whose sizes overflow or that no index can address,
// empty tensors with huge extents, pipes and devices as inputs or outputs, symbolic links as outputs.
// Each case once crashed, hung, or exited 0 with a file the program could not read back.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <limits>

#include "cli_support.hpp"

using namespace tprod;
using namespace tprod::cli_test;
using io::npy_dtype;
using tprod::test::scratch_dir;

namespace {
/// A header-only file: an empty float64 array of the given shape (128 bytes for the shapes below).
void save_empty(const scratch_dir& dir, const std::string& name, std::vector<std::size_t> shape) {
  save(dir, name, io::npy_array(npy_dtype::float64, std::move(shape)));
}
constexpr std::size_t two(unsigned e) { return std::size_t(1) << e; }
}  // namespace

TEST_CASE("cli: element and byte counts that overflow are refused, not wrapped around") {
  scratch_dir dir;
  // Segfaulted: 2^32 x 2^32 elements wrapped around to 0.
  check_error(run(dir, {"identity", "--size", "4294967296", "--tubes", "1", "--transform", "identity", "-o", "I.npy"}),
              1, "is too large");
  // Segfaulted: C would be 2^21 x 2^21 x 2^22 = 2^64 elements.
  save_empty(dir, "A.npy", {two(21), 0, two(22)});
  save_empty(dir, "B.npy", {0, two(21), two(22)});
  check_error(run(dir, {"product", "A.npy", "B.npy", "-o", "C.npy", "--transform", "identity"}), 1,
              "A.npy (2097152x0x4194304) and B.npy (0x2097152x4194304): their product of shape 2097152x2097152x4194304 is too large");
  // Exited 0 and wrote a (2^32, 2^32, 1) file with no data, which the reader refuses.
  save_empty(dir, "A1.npy", {two(32), 0, 1});
  save_empty(dir, "B1.npy", {0, two(32), 1});
  check_error(run(dir, {"product", "A1.npy", "B1.npy", "-o", "C.npy", "--transform", "identity"}), 1, "is too large");
  // 2^62 elements fit an index but not their 2^65 bytes: refused before any allocation.
  save_empty(dir, "A2.npy", {two(31), 0, 1});
  save_empty(dir, "B2.npy", {0, two(31), 1});
  const auto r = run(dir, {"product", "A2.npy", "B2.npy", "-o", "C.npy", "--transform", "identity"});
  CHECK(r.status == 1);
  CHECK(!std::filesystem::exists(dir / "C.npy"));
}

TEST_CASE("cli: empty tensors with extents no index can hold are refused; work follows the data, not the extents") {
  scratch_dir dir;
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  // transform and transpose looped 2^64 - 1 times over empty slices.
  save_empty(dir, "H.npy", {0, 1, huge});
  for (const char* cmd : {"transform", "transpose"})
    check_error(run(dir, {cmd, "H.npy", "-o", "out.npy", "--transform", "identity"}), 1,
                "H.npy: shape (0, 1, 18446744073709551615) is too large");
  // Accepted while (2^64-1, 2^64-1, 0) was refused.
  save_empty(dir, "W.npy", {0, huge, huge});
  check_error(run(dir, {"transpose", "W.npy", "-o", "out.npy", "--transform", "identity"}), 1, "W.npy: shape");
  CHECK(!std::filesystem::exists(dir / "out.npy"));
}

TEST_CASE("cli: pipes and devices are refused as inputs and outputs; a symbolic link's target is written") {
  scratch_dir dir;
  save(dir, "A.npy", random_array(npy_dtype::float64, {2, 2, 3}, 1));
  REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0600) == 0);
  // Blocked forever in open() waiting for a writer.
  check_error(run(dir, {"transpose", "fifo.npy", "-o", "T.npy"}), 1, "fifo.npy: not a regular file (a FIFO)");
  // Replaced the FIFO (or, as root, /dev/full) with a regular file through rename.
  check_error(run(dir, {"transpose", "A.npy", "-o", "fifo.npy"}), 1,
              "fifo.npy: cannot replace: not a regular file (a FIFO)");
  struct stat st {};
  REQUIRE(::lstat((dir / "fifo.npy").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A device node of our own (root only: never aim a test at /dev itself, which the defect replaced as root).
  if (::mknod((dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    check_error(run(dir, {"transpose", "A.npy", "-o", "null"}), 1, "null: cannot replace: not a regular file (a character device)");
    REQUIRE(::lstat((dir / "null").c_str(), &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
    std::filesystem::remove(dir / "null");
  }
  check_error(run(dir, {"transpose", "/dev/zero", "-o", "T.npy"}), 1, "/dev/zero: not a regular file");
  check_error(run(dir, {"product", "A.npy", "A.npy", "--transform", "matrix:/dev/zero", "-o", "T.npy"}), 1,
              "/dev/zero: not a regular file");

  // A symbolic link as -o: the file it points to is replaced, the link stays.
  std::filesystem::create_directory(dir / "sub");
  save(dir, "sub/old.npy", random_array(npy_dtype::float64, {1, 1, 1}, 2));
  std::filesystem::create_symlink("sub/old.npy", dir / "link.npy");
  REQUIRE(run(dir, {"transpose", "A.npy", "-o", "link.npy"}).status == 0);
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(dir / "link.npy")));
  CHECK(io::read_npy(dir / "sub/old.npy").shape == std::vector<std::size_t>{2, 2, 3});
  CHECK(dir.entries() == std::set<std::string>{"A.npy", "fifo.npy", "link.npy", "sub"});
  CHECK(std::filesystem::directory_iterator(dir / "sub")->path().filename() == "old.npy");
}

TEST_CASE("cli: NaN and singular data are refused naming the file; --max-condition raises the limit on Z") {
  scratch_dir dir;
  io::npy_array a = random_array(npy_dtype::float64, {3, 3, 4}, 1);
  a.values<double>()[5] = std::nan("");
  save(dir, "N.npy", a);
  // svd and rank returned uninitialized memory with exit 0.
  check_error(run(dir, {"svd", "N.npy", "--prefix", "P"}), 1, "N.npy: the 3x3x4 tensor holds NaN or Inf");
  check_error(run(dir, {"rank", "N.npy"}), 1, "N.npy: singular values: the 3x3x4 tensor holds NaN or Inf");
  check_error(run(dir, {"inverse", "N.npy", "-o", "I.npy"}), 1, "N.npy: the 3x3x4 tensor holds NaN or Inf");

  // Exactly singular slices were inverted into NaN and Inf (Eigen's rcond() is 1 for diag(1, 0)).
  io::npy_array d(npy_dtype::float64, {2, 2, 4});
  d.values<double>()[0] = 1;  // a delta along the tubes: every DFT slice is diag(1, 0)
  save(dir, "D.npy", d);
  check_error(run(dir, {"inverse", "D.npy", "-o", "I.npy", "--transform", "dft"}), 1,
              "D.npy: transform-domain slice 0 of the 2x2x4 tensor (dft) is singular");
  io::npy_array e(npy_dtype::float64, {3, 3});
  e.values<double>()[0] = e.values<double>()[4] = 1;  // diag(1, 1, 0), p = 1
  save(dir, "E.npy", e);
  check_error(run(dir, {"inverse", "E.npy", "-o", "I.npy"}), 1, "E.npy: transform-domain slice 0");
  CHECK(!std::filesystem::exists(dir / "I.npy"));

  // A Z of condition 1e4: refused by default (it was accepted up to 5.6e12 at p = 8), accepted on request.
  io::npy_array z(npy_dtype::float64, {4, 4});
  for (std::size_t i = 0; i < 4; ++i) z.values<double>()[i * 5] = i == 3 ? 1e-4 : 1.0;
  save(dir, "Z.npy", z);
  check_error(run(dir, {"transpose", "D.npy", "-o", "T.npy", "--transform", "matrix:Z.npy"}), 1,
              "Z.npy: Z (4x4) is numerically singular: condition number estimate 10000 exceeds 8192");
  CHECK(run(dir, {"transpose", "D.npy", "-o", "T.npy", "--transform", "matrix:Z.npy", "--max-condition", "1e5"}).status == 0);
  z.values<double>()[1] = std::nan("");
  save(dir, "Z.npy", z);
  check_error(run(dir, {"transpose", "D.npy", "-o", "T.npy", "--transform", "matrix:Z.npy"}), 1,
              "Z.npy: Z (4x4) holds NaN or Inf");
  check_error(run(dir, {"transpose", "D.npy", "-o", "T.npy", "--max-condition", "0.5"}), 2, "--max-condition must be");
}

TEST_CASE("cli: peak memory of product is about its inputs and output (in-place transforms)") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  MESSAGE("skipped: the sanitizers inflate resident memory");
#else
  scratch_dir dir;
  // 512 x 512 x 32 float64: 64 MiB per tensor; the DCT at p = 32 runs as GEMMs, in place. Before, the product
  // held A, B, their transforms, C's transform and C: about 6 tensors (6.3 GB at 4096 x 4096 x 8).
  REQUIRE(run(dir, {"identity", "--size", "512", "--tubes", "32", "-o", "I.npy"}).status == 0);
  const auto baseline = run(dir, {"--version"});
  const auto r = run(dir, {"product", "I.npy", "I.npy", "-o", "C.npy"});
  REQUIRE(r.status == 0);
  const double tensor_kib = 512.0 * 512 * 32 * 8 / 1024;
  const double used = double(r.max_rss_kib - baseline.max_rss_kib);
  MESSAGE("product peak above baseline: " << used / 1024 << " MiB for inputs + output of " << 3 * tensor_kib / 1024 << " MiB");
  CHECK(used <= 1.10 * 3 * tensor_kib);
  CHECK(rel_error(load(dir / "C.npy"), load(dir / "I.npy")) <= 1e-12);
#endif
}

TEST_CASE("cli: empty tensors (an extent 0 or 1 in m, n or p) give empty results under every transform, never a crash") {
  scratch_dir dir;
  for (const char* transform : {"dct", "dft", "identity"})
    for (const std::vector<std::size_t>& shape :
         {std::vector<std::size_t>{3, 2, 0}, {0, 2, 4}, {3, 0, 4}, {1, 1, 1}, {0, 0, 0}}) {
      CAPTURE(transform);
      CAPTURE(io::numpy_shape(shape));
      save_empty(dir, "A.npy", shape);
      save_empty(dir, "B.npy", {shape[1], 2, shape[2]});
      for (const std::vector<std::string>& args :
           {std::vector<std::string>{"transform", "A.npy", "-o", "T.npy"}, {"product", "A.npy", "B.npy", "-o", "C.npy"},
            {"transpose", "A.npy", "-o", "At.npy"}}) {
        CAPTURE(args[0]);
        auto with_transform = args;
        with_transform.insert(with_transform.end(), {"--transform", transform});
        const auto r = run(dir, with_transform);
        CAPTURE(r.err);
        // A shape with m·n·p = 0 holds no data: an empty result; {1, 1, 1} holds one zero.
        CHECK(r.status == 0);
        CHECK(r.status < 128);  // never a signal
      }
    }
}
