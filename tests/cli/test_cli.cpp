// SPDX-License-Identifier: Apache-2.0
// The tprod program, driven as a user drives it: every subcommand against an independent reference, every
// usage and data error with its exit status and one-line message, and atomic outputs.
#include <doctest/doctest.h>

#include <algorithm>

#include "cli_support.hpp"
#include "tprod/version.hpp"

using namespace tprod;
using namespace tprod::cli_test;
using io::npy_dtype;
using tprod::test::scratch_dir;

namespace {

double tol_for(npy_dtype d) { return io::is_double_dtype(d) ? 1e-11 : 2e-5; }

/// Z matrices for the transforms, with a real and a complex well-conditioned Z.
cmat real_z(std::size_t p) {
  std::srand(3);
  return (Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p)) * 0.3 +
          2 * Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p)))
      .cast<cd>();
}
cmat complex_z(std::size_t p) {
  std::srand(4);
  return real_z(p) + cd(0, 0.4) * Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p)).cast<cd>();
}
io::npy_array z_array(const cmat& z, bool complex) {
  const std::vector<std::size_t> shape{std::size_t(z.rows()), std::size_t(z.cols())};
  if (complex) return io::npy_array(shape, std::vector<cd>(z.data(), z.data() + z.size()));
  const Eigen::MatrixXd re = z.real();
  return io::npy_array(shape, std::vector<double>(re.data(), re.data() + re.size()));
}

/// The transforms the program accepts, each with its reference Z (matrix ones written to Zr.npy / Zc.npy).
struct transform_case {
  std::string spec;
  cmat z;
  bool complex_z = false;
};
std::vector<transform_case> transform_cases(const scratch_dir& dir, std::size_t p) {
  save(dir, "Zr.npy", z_array(real_z(p), false));
  save(dir, "Zc.npy", z_array(complex_z(p), true));
  return {{"dct", dct_matrix(p)},
          {"dft", dft_matrix(p)},
          {"identity", cmat::Identity(Eigen::Index(p), Eigen::Index(p))},
          {"matrix:Zr.npy", real_z(p)},
          {"matrix:Zc.npy", complex_z(p), true}};
}

}  // namespace

TEST_CASE("cli: --version, --help and COMMAND --help") {
  scratch_dir dir;
  const auto v = run(dir, {"--version"});
  CHECK(v.status == 0);
  CHECK(v.out == std::string("tprod ") + TPROD_VERSION_STRING + "\n");
  const auto h = run(dir, {"--help"});
  CHECK(h.status == 0);
  for (const char* c : {"product", "transform", "transpose", "inverse", "identity", "svd", "rank"}) {
    CAPTURE(c);
    CHECK(h.out.find(std::string("  ") + c + " ") != std::string::npos);
    const auto ch = run(dir, {c, "--help"});
    CHECK(ch.status == 0);
    CHECK(ch.out.rfind(std::string("Usage: tprod ") + c + " ", 0) == 0);
    CHECK(ch.err.empty());
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("cli: transform equals a direct O(p²) DFT sum, the DCT-II formula, and Z @ tube") {
  scratch_dir dir;
  const std::size_t p = 5;
  // A known small array: A[i, j, t] = (i + 1)·(t + 1)² − j·t, so every tube differs.
  io::npy_array a(npy_dtype::float64, {2, 3, p});
  auto& v = a.values<double>();
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t t = 0; t < p; ++t) v[i + 2 * (j + 3 * t)] = double((i + 1) * (t + 1) * (t + 1)) - double(j * t);
  save(dir, "A.npy", a);

  REQUIRE(run(dir, {"transform", "A.npy", "-o", "F.npy", "--transform", "dft"}).status == 0);
  const io::npy_array f = io::read_npy(dir / "F.npy");
  CHECK(f.dtype() == npy_dtype::complex128);
  CHECK(f.shape == std::vector<std::size_t>{2, 3, p});
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < p; ++k) {
        cd sum = 0;  // numpy.fft.fft: Σ_t A[i, j, t]·e^{−2πi·kt/p}
        for (std::size_t t = 0; t < p; ++t)
          sum += v[i + 2 * (j + 3 * t)] * std::polar(1.0, -2 * std::numbers::pi * double(k * t) / double(p));
        CHECK(std::abs(f.values<cd>()[i + 2 * (j + 3 * k)] - sum) <= 1e-12 * 100);
      }

  // float32 in: dct keeps float32, dft gives complex64.
  save(dir, "A32.npy", io::npy_array({2, 3, p}, std::vector<float>(v.begin(), v.end())));
  REQUIRE(run(dir, {"transform", "A32.npy", "-o", "D.npy"}).status == 0);
  const io::npy_array d = io::read_npy(dir / "D.npy");
  CHECK(d.dtype() == npy_dtype::float32);
  CHECK(rel_error(from_npy(d), along_tubes(dct_matrix(p), from_npy(a))) <= 1e-6);
  REQUIRE(run(dir, {"transform", "A32.npy", "-o", "F32.npy", "--transform", "dft"}).status == 0);
  CHECK(io::read_npy(dir / "F32.npy").dtype() == npy_dtype::complex64);
  CHECK(rel_error(load(dir / "F32.npy"), from_npy(f)) <= 1e-6);

  for (const auto& tc : transform_cases(dir, p)) {
    CAPTURE(tc.spec);
    for (npy_dtype dtype : {npy_dtype::float64, npy_dtype::complex64}) {
      save(dir, "R.npy", random_array(dtype, {3, 2, p}, 9));
      REQUIRE(run(dir, {"transform", "R.npy", "-o", "Rhat.npy", "--transform", tc.spec}).status == 0);
      const io::npy_array rhat = io::read_npy(dir / "Rhat.npy");
      const bool complex_out = io::is_complex_dtype(dtype) || tc.spec == "dft" || tc.complex_z;
      CHECK(rhat.dtype() == io::make_dtype(complex_out, io::is_double_dtype(dtype)));
      CHECK(rel_error(from_npy(rhat), along_tubes(tc.z, load(dir / "R.npy"))) <= tol_for(dtype));
      // --inverse undoes it (complex under dft, as numpy.fft.ifft).
      REQUIRE(run(dir, {"transform", "Rhat.npy", "-o", "Back.npy", "--transform", tc.spec, "--inverse"}).status == 0);
      const io::npy_array back = io::read_npy(dir / "Back.npy");
      CHECK(back.dtype() == rhat.dtype());
      CHECK(rel_error(from_npy(back), load(dir / "R.npy")) <= tol_for(dtype));
    }
  }
  // --inverse of a real array under dft is the complex numpy.fft.ifft.
  REQUIRE(run(dir, {"transform", "A.npy", "-o", "I.npy", "--transform", "dft", "--inverse"}).status == 0);
  CHECK(io::read_npy(dir / "I.npy").dtype() == npy_dtype::complex128);
  CHECK(rel_error(load(dir / "I.npy"), along_tubes(dft_matrix(p).inverse(), from_npy(a))) <= 1e-12);
}

TEST_CASE("cli: product, transpose, inverse and identity agree with the slice-wise definitions") {
  scratch_dir dir;
  for (std::size_t p : {4u, 3u}) {
    for (const auto& tc : transform_cases(dir, p)) {
      for (npy_dtype dtype : {npy_dtype::float32, npy_dtype::float64, npy_dtype::complex128}) {
        CAPTURE(tc.spec);
        CAPTURE(io::dtype_name(dtype));
        CAPTURE(p);
        const bool complex_out = io::is_complex_dtype(dtype) || tc.complex_z;
        const npy_dtype out_dtype = io::make_dtype(complex_out, io::is_double_dtype(dtype));
        const double tol = tol_for(dtype) * 10;
        save(dir, "A.npy", random_array(dtype, {3, 2, p}, 1));
        save(dir, "B.npy", random_array(dtype, {2, 4, p}, 2));
        save(dir, "S.npy", random_array(dtype, {3, 3, p}, 3));
        const auto a = load(dir / "A.npy"), b = load(dir / "B.npy"), s = load(dir / "S.npy");

        REQUIRE(run(dir, {"product", "A.npy", "B.npy", "-o", "C.npy", "--transform", tc.spec}).status == 0);
        CHECK(io::read_npy(dir / "C.npy").dtype() == out_dtype);
        CHECK(rel_error(load(dir / "C.npy"), product(tc.z, a, b)) <= tol);

        REQUIRE(run(dir, {"transpose", "A.npy", "-o", "AT.npy", "--transform", tc.spec}).status == 0);
        CHECK(io::read_npy(dir / "AT.npy").dtype() == out_dtype);
        CHECK(rel_error(load(dir / "AT.npy"), transpose(tc.z, a)) <= tol);

        REQUIRE(run(dir, {"inverse", "S.npy", "-o", "Sinv.npy", "--transform", tc.spec}).status == 0);
        CHECK(io::read_npy(dir / "Sinv.npy").dtype() == out_dtype);
        CHECK(rel_error(load(dir / "Sinv.npy"), inverse(tc.z, s)) <= tol * 100);  // random slices: cond ~ 10–100
      }
      const std::string ps = std::to_string(p);
      REQUIRE(run(dir, {"identity", "--size", "3", "--tubes", ps, "-o", "I.npy", "--transform", tc.spec}).status == 0);
      CHECK(io::read_npy(dir / "I.npy").dtype() == (tc.complex_z ? npy_dtype::complex128 : npy_dtype::float64));
      CHECK(rel_error(load(dir / "I.npy"), identity(tc.z, 3)) <= 1e-12);
      REQUIRE(run(dir, {"identity", "--size=2", "--tubes=" + ps, "--dtype", "float32", "-o", "I32.npy",
                        "--transform=" + tc.spec}).status == 0);
      CHECK(io::read_npy(dir / "I32.npy").dtype() == (tc.complex_z ? npy_dtype::complex64 : npy_dtype::float32));
      CHECK(rel_error(load(dir / "I32.npy"), identity(tc.z, 2)) <= 1e-6);
    }
  }
  // Mixed dtypes promote: float32 × float64 → float64, float64 × complex64 → complex128; (m, n) reads as p = 1.
  save(dir, "F.npy", random_array(npy_dtype::float32, {2, 2, 3}, 5));
  save(dir, "D.npy", random_array(npy_dtype::float64, {2, 2, 3}, 6));
  save(dir, "Z.npy", random_array(npy_dtype::complex64, {2, 2, 3}, 7));
  REQUIRE(run(dir, {"product", "F.npy", "D.npy", "-o", "FD.npy"}).status == 0);
  CHECK(io::read_npy(dir / "FD.npy").dtype() == npy_dtype::float64);
  REQUIRE(run(dir, {"product", "D.npy", "Z.npy", "-o", "DZ.npy"}).status == 0);
  CHECK(io::read_npy(dir / "DZ.npy").dtype() == npy_dtype::complex128);
  CHECK(rel_error(load(dir / "DZ.npy"), product(dct_matrix(3), load(dir / "D.npy"), load(dir / "Z.npy"))) <= 1e-6);
  save(dir, "M.npy", random_array(npy_dtype::float64, {2, 2}, 8));
  REQUIRE(run(dir, {"transpose", "M.npy", "-o", "MT.npy"}).status == 0);
  CHECK(io::read_npy(dir / "MT.npy").shape == std::vector<std::size_t>{2, 2, 1});
}

TEST_CASE("cli: svd writes U, S, V with A = U * S * Vᵀ; --rank and --energy truncate") {
  scratch_dir dir;
  const std::size_t m = 5, n = 4, p = 4;
  for (const auto& tc : transform_cases(dir, p)) {
    for (npy_dtype dtype : {npy_dtype::float32, npy_dtype::float64, npy_dtype::complex64, npy_dtype::complex128}) {
      CAPTURE(tc.spec);
      CAPTURE(io::dtype_name(dtype));
      save(dir, "A.npy", random_array(dtype, {m, n, p}, 11));
      const auto a = load(dir / "A.npy");
      REQUIRE(run(dir, {"svd", "A.npy", "--prefix", "out", "--transform", tc.spec}).status == 0);
      const auto u = io::read_npy(dir / "out_U.npy"), s = io::read_npy(dir / "out_S.npy"),
                 v = io::read_npy(dir / "out_V.npy");
      CHECK(u.shape == std::vector<std::size_t>{m, n, p});
      CHECK(s.shape == std::vector<std::size_t>{n, n, p});
      CHECK(v.shape == std::vector<std::size_t>{n, n, p});
      // The factors have A's precision; they are complex for complex A or Z, real otherwise (dft included).
      CHECK(u.dtype() == io::make_dtype(tc.complex_z || io::is_complex_dtype(dtype), io::is_double_dtype(dtype)));
      CHECK(s.dtype() == u.dtype());
      CHECK(v.dtype() == u.dtype());
      const auto usv = product(tc.z, product(tc.z, from_npy(u), from_npy(s)), transpose(tc.z, from_npy(v)));
      CHECK(rel_error(usv, a) <= tol_for(dtype) * 10);
      // U is L-orthogonal: Uᵀ * U = I.
      CHECK(rel_error(product(tc.z, transpose(tc.z, from_npy(u)), from_npy(u)), identity(tc.z, n)) <=
            tol_for(dtype) * 10);

      REQUIRE(run(dir, {"svd", "A.npy", "--prefix", "k2", "--rank", "2", "--transform", tc.spec}).status == 0);
      CHECK(io::read_npy(dir / "k2_U.npy").shape == std::vector<std::size_t>{m, 2, p});
      CHECK(io::read_npy(dir / "k2_S.npy").shape == std::vector<std::size_t>{2, 2, p});
      CHECK(io::read_npy(dir / "k2_V.npy").shape == std::vector<std::size_t>{n, 2, p});
      REQUIRE(run(dir, {"svd", "A.npy", "--prefix", "e", "--energy", "1", "--transform", tc.spec}).status == 0);
      const auto e_usv = product(tc.z, product(tc.z, load(dir / "e_U.npy"), load(dir / "e_S.npy")),
                                 transpose(tc.z, load(dir / "e_V.npy")));
      CHECK(rel_error(e_usv, a) <= tol_for(dtype) * 10);
    }
  }
  // Energy under the DCT: the kept part holds ≥ 60% of ‖A‖²_F (the DCT is orthogonal).
  save(dir, "A.npy", random_array(npy_dtype::float64, {m, n, p}, 12));
  REQUIRE(run(dir, {"svd", "A.npy", "--prefix", "g", "--energy", "0.6"}).status == 0);
  const cmat z = dct_matrix(p);
  const auto a = load(dir / "A.npy");
  const auto ag = product(z, product(z, load(dir / "g_U.npy"), load(dir / "g_S.npy")), transpose(z, load(dir / "g_V.npy")));
  CHECK((a.tubes - ag.tubes).squaredNorm() <= 0.4 * a.tubes.squaredNorm());
  CHECK((a.tubes - ag.tubes).squaredNorm() > 0);
}

TEST_CASE("cli: svd prints the kept multi-rank, the relative error and the compression ratio as JSON") {
  scratch_dir dir;
  const std::size_t m = 6, n = 5, p = 3;
  save(dir, "A.npy", random_array(npy_dtype::float64, {m, n, p}, 21));
  const auto r = run(dir, {"svd", "A.npy", "--prefix", "k2", "--rank", "2", "--transform", "identity"});
  REQUIRE(r.status == 0);
  // Under the identity the factors are the slices' own SVDs: the error is the discarded singular values' share.
  const auto a = load(dir / "A.npy");
  const auto ak = product(cmat::Identity(Eigen::Index(p), Eigen::Index(p)), product(cmat::Identity(Eigen::Index(p), Eigen::Index(p)), load(dir / "k2_U.npy"), load(dir / "k2_S.npy")),
                          transpose(cmat::Identity(Eigen::Index(p), Eigen::Index(p)), load(dir / "k2_V.npy")));
  const double error = (a.tubes - ak.tubes).norm() / a.tubes.norm();
  const double ratio = double(m * n * p) / double(2 * p * (m + n + 1));
  const auto field = [&](const std::string& key) {
    const auto at = r.out.find("\"" + key + "\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(r.out.substr(at + key.size() + 4));
  };
  CHECK(field("relative_error") == doctest::Approx(error).epsilon(1e-12));
  CHECK(field("compression_ratio") == doctest::Approx(ratio).epsilon(1e-15));
  CHECK(r.out.find("\"tubal_rank\": 2, \"multi_rank\": [2, 2, 2]}\n") != std::string::npos);
  const auto full = run(dir, {"svd", "A.npy", "--prefix", "f"});
  CHECK(full.out.rfind("{\"relative_error\": ", 0) == 0);
  CHECK(full.out.find("\"multi_rank\": [5, 5, 5]") != std::string::npos);
}

TEST_CASE("cli: rank prints one JSON object") {
  scratch_dir dir;
  const std::size_t p = 4;
  save(dir, "X.npy", random_array(npy_dtype::float64, {15, 10, p}, 1));
  save(dir, "Y.npy", random_array(npy_dtype::float64, {10, 15, p}, 2));
  for (const auto& tc : transform_cases(dir, p)) {
    CAPTURE(tc.spec);
    REQUIRE(run(dir, {"product", "X.npy", "Y.npy", "-o", "XY.npy", "--transform", tc.spec}).status == 0);
    const auto r = run(dir, {"rank", "XY.npy", "--transform", tc.spec});
    CHECK(r.status == 0);
    CHECK(r.out == "{\"tubal_rank\": 10, \"average_rank\": 10, \"multi_rank\": [10, 10, 10, 10], \"transform\": \"" +
                       tc.spec + "\"}\n");
  }
  // Slice ranks 2, 1, 1 of a (3, 3, 3) tensor under the identity transform: average 4/3.
  io::npy_array d(npy_dtype::float32, {3, 3, 3});
  auto& v = d.values<float>();
  v[0] = 1, v[4] = 1, v[9] = 2, v[18] = 1e-4f;  // slice 0 = diag(1, 1, 0), slice 1: one entry, slice 2: 1e-4
  save(dir, "D.npy", d);
  CHECK(run(dir, {"rank", "D.npy", "--transform", "identity"}).out ==
        "{\"tubal_rank\": 2, \"average_rank\": 1.3333333333333333, \"multi_rank\": [2, 1, 1], \"transform\": \"identity\"}\n");
  CHECK(run(dir, {"rank", "D.npy", "--transform", "identity", "--tol", "0.001"}).out ==
        "{\"tubal_rank\": 2, \"average_rank\": 1, \"multi_rank\": [2, 1, 0], \"transform\": \"identity\"}\n");
  // The default tolerance 3·ε·σ_max takes ε of the data's precision: 1e-7 next to σ_max = 2 is noise in
  // float32 (tolerance 7e-7) but a singular value in float64 (tolerance 1.3e-15).
  v[18] = 1e-7f;
  save(dir, "D.npy", d);
  CHECK(run(dir, {"rank", "D.npy", "--transform", "identity"}).out ==
        "{\"tubal_rank\": 2, \"average_rank\": 1, \"multi_rank\": [2, 1, 0], \"transform\": \"identity\"}\n");
  save(dir, "D.npy", io::convert(d, npy_dtype::float64, "D"));
  CHECK(run(dir, {"rank", "D.npy", "--transform", "identity"}).out ==
        "{\"tubal_rank\": 2, \"average_rank\": 1.3333333333333333, \"multi_rank\": [2, 1, 1], \"transform\": \"identity\"}\n");
}

TEST_CASE("cli: usage errors exit with status 2 and one line naming the problem") {
  scratch_dir dir;
  save(dir, "A.npy", random_array(npy_dtype::float64, {2, 2, 2}, 1));
  check_error(run(dir, {}), 2, "missing COMMAND");
  check_error(run(dir, {"frobnicate"}), 2, "unknown command 'frobnicate'");
  check_error(run(dir, {"product", "A.npy", "A.npy", "-o", "C.npy", "--fast"}), 2, "unknown option '--fast'");
  check_error(run(dir, {"product", "A.npy", "A.npy"}), 2, "missing -o FILE");
  check_error(run(dir, {"product", "A.npy", "-o", "C.npy"}), 2, "expected the input file(s) A.npy B.npy, got 1");
  check_error(run(dir, {"transpose", "A.npy", "-o"}), 2, "option -o needs a value FILE");
  check_error(run(dir, {"transpose", "A.npy", "-o", "x", "-o", "y"}), 2, "option --output is given twice");
  check_error(run(dir, {"transpose", "A.npy", "-o", "x", "--transform", "fft"}), 2, "unknown transform 'fft'");
  check_error(run(dir, {"transform", "A.npy", "-o", "x", "--inverse=yes"}), 2, "--inverse takes no value");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "x", "--rank", "0"}), 2, "--rank must be a positive integer, got '0'");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "x", "--rank", "2x"}), 2, "--rank must be a positive integer");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "x", "--rank", "1", "--energy", "0.5"}), 2, "exclude each other");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "x", "--energy", "1.5"}), 2, "--energy must be a number in (0, 1]");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "x", "--energy", "0"}), 2, "--energy must be a number in (0, 1]");
  check_error(run(dir, {"rank", "A.npy", "--tol", "-1"}), 2, "--tol must be a number");
  check_error(run(dir, {"identity", "--size", "2", "-o", "I.npy"}), 2, "missing --tubes P");
  check_error(run(dir, {"identity", "--size", "2", "--tubes", "3", "-o", "I.npy", "--dtype", "int8"}), 2,
              "--dtype must be float32 or float64");
  // A usage error wins over a missing input file, and nothing is written.
  check_error(run(dir, {"svd", "missing.npy", "--prefix", "x", "--rank", "zero"}), 2, "--rank");
  CHECK(dir.entries() == std::set<std::string>{"A.npy"});
}

TEST_CASE("cli: data errors exit with status 1 and one line naming the file and the problem") {
  scratch_dir dir;
  save(dir, "A.npy", random_array(npy_dtype::float64, {3, 2, 4}, 1));
  save(dir, "B.npy", random_array(npy_dtype::float64, {3, 2, 4}, 2));
  save(dir, "V.npy", random_array(npy_dtype::float64, {4}, 3));
  io::npy_array singular(npy_dtype::float64, {2, 2, 3});  // all-zero slices
  save(dir, "Zero.npy", singular);
  save(dir, "Zsing.npy", io::npy_array(npy_dtype::float64, {4, 4}));
  save(dir, "Z3.npy", z_array(real_z(3), false));
  save(dir, "Z3d.npy", random_array(npy_dtype::float64, {4, 4, 1}, 4));
  tprod::test::put_bytes(dir / "bad.npy", "PK\x03\x04 this is a zip file, not .npy");
  std::string big = io::serialize_npy(random_array(npy_dtype::float64, {2, 2}, 5));
  big.replace(big.find("<f8"), 3, ">f8");
  tprod::test::put_bytes(dir / "big.npy", big);
  std::string cut = io::serialize_npy(random_array(npy_dtype::float64, {2, 2}, 6));
  tprod::test::put_bytes(dir / "cut.npy", cut.substr(0, cut.size() - 5));

  check_error(run(dir, {"transpose", "nope.npy", "-o", "x.npy"}), 1,
              "tprod transpose: nope.npy: cannot open for reading: No such file or directory");
  check_error(run(dir, {"transpose", "bad.npy", "-o", "x.npy"}), 1, "bad.npy: not a .npy file");
  check_error(run(dir, {"transpose", "big.npy", "-o", "x.npy"}), 1, "big.npy: big-endian data");
  check_error(run(dir, {"transpose", "cut.npy", "-o", "x.npy"}), 1, "cut.npy: truncated data");
  check_error(run(dir, {"transpose", "V.npy", "-o", "x.npy"}), 1, "V.npy: expected an array of shape (m, n, p)");
  check_error(run(dir, {"product", "A.npy", "B.npy", "-o", "x.npy"}), 1,
              "A.npy (3x2x4) and B.npy (3x2x4) cannot be multiplied");
  check_error(run(dir, {"inverse", "Zero.npy", "-o", "x.npy"}), 1, "Zero.npy: transform-domain slice 0");
  check_error(run(dir, {"inverse", "A.npy", "-o", "x.npy"}), 1, "A.npy: frontal slices must be square");
  check_error(run(dir, {"transpose", "A.npy", "-o", "x.npy", "--transform", "matrix:Zsing.npy"}), 1,
              "Zsing.npy: Z (4x4) is singular");
  check_error(run(dir, {"transpose", "A.npy", "-o", "x.npy", "--transform", "matrix:Z3.npy"}), 1,
              "Z3.npy: Z is 3x3 but A.npy has 4 tubes");
  check_error(run(dir, {"transpose", "A.npy", "-o", "x.npy", "--transform", "matrix:Z3d.npy"}), 1,
              "Z3d.npy: the transform matrix Z must be a square (p, p) array, got shape (4, 4, 1)");
  check_error(run(dir, {"transpose", "A.npy", "-o", "x.npy", "--transform", "matrix:nothere.npy"}), 1,
              "nothere.npy: cannot open");
  check_error(run(dir, {"identity", "--size", "2", "--tubes", "4", "-o", "x.npy", "--transform", "matrix:Z3.npy"}), 1,
              "Z3.npy: Z is 3x3 but --tubes is 4");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "x", "--rank", "3"}), 1, "A.npy: the rank k = 3");
  check_error(run(dir, {"transpose", "A.npy", "-o", "no/such/dir/x.npy"}), 1, "cannot create a temporary file");
  CHECK(!std::filesystem::exists(dir / "x.npy"));
}

TEST_CASE("cli: outputs are atomic: untouched after a failure, nothing left behind") {
  scratch_dir dir;
  save(dir, "A.npy", random_array(npy_dtype::float64, {3, 2, 4}, 1));
  save(dir, "S.npy", io::npy_array(npy_dtype::float64, {2, 2, 4}));  // singular
  const std::string old = "previous content";
  for (const char* f : {"C.npy", "P_U.npy", "P_S.npy"}) tprod::test::put_bytes(dir / f, old);
  std::filesystem::create_directory(dir / "P_V.npy");  // the third svd output cannot be replaced
  const auto before = dir.entries();

  check_error(run(dir, {"product", "A.npy", "A.npy", "-o", "C.npy"}), 1, "cannot be multiplied");
  check_error(run(dir, {"inverse", "S.npy", "-o", "C.npy"}), 1, "singular");
  check_error(run(dir, {"svd", "A.npy", "--prefix", "P"}), 1, "P_V.npy: cannot replace: Is a directory");
  check_error(run(dir, {"transpose", "A.npy", "-o", "P_V.npy"}), 1, "P_V.npy: cannot replace");
  CHECK(dir.entries() == before);  // no temporary files
  for (const char* f : {"C.npy", "P_U.npy", "P_S.npy"}) CHECK(tprod::test::file_bytes(dir / f) == old);

  // Success replaces an existing file (and the input may be the output).
  REQUIRE(run(dir, {"transpose", "A.npy", "-o", "C.npy"}).status == 0);
  CHECK(io::read_npy(dir / "C.npy").shape == std::vector<std::size_t>{2, 3, 4});
  REQUIRE(run(dir, {"transpose", "A.npy", "-o", "A.npy"}).status == 0);
  CHECK(io::read_npy(dir / "A.npy").shape == std::vector<std::size_t>{2, 3, 4});
  CHECK(dir.entries() == before);
}

TEST_CASE("cli: several outputs go into a folder (-o DIR) or by --prefix; what is not a folder is refused") {
  scratch_dir dir;
  save(dir, "A.npy", random_array(npy_dtype::float64, {4, 3, 2}, 5));
  // -o DIR: the folder is made when missing, the files go inside, and standard error says where.
  const auto r = run(dir, {"svd", "A.npy", "-o", "out"});
  REQUIRE(r.status == 0);
  CHECK(r.err == "tprod svd: wrote out/U.npy, out/S.npy, out/V.npy\n");
  for (const char* f : {"U.npy", "S.npy", "V.npy"}) CHECK(io::read_npy(dir / "out" / f).shape.size() == 3);
  REQUIRE(run(dir, {"svd", "A.npy", "-o", "out", "--rank", "1"}).status == 0);  // an existing folder is written into
  CHECK(io::read_npy(dir / "out" / "S.npy").shape == std::vector<std::size_t>{1, 1, 2});
  const auto pr = run(dir, {"svd", "A.npy", "--prefix", "P"});
  REQUIRE(pr.status == 0);
  CHECK(pr.err == "tprod svd: wrote P_U.npy, P_S.npy, P_V.npy\n");

  // A special file or a plain file is not a folder: refused before any work, nothing written beside it.
  check_error(run(dir, {"svd", "A.npy", "-o", "/dev/null"}), 2, "-o /dev/null is a character device, not a folder");
  tprod::test::put_bytes(dir / "plain", "x");
  check_error(run(dir, {"svd", "A.npy", "-o", "plain"}), 2, "-o plain is a file, not a folder");
  CHECK(tprod::test::file_bytes(dir / "plain") == "x");
  // An output that is a folder inside DIR is not clobbered, and nothing of the set is written.
  std::filesystem::create_directories(dir / "d" / "S.npy");
  check_error(run(dir, {"svd", "A.npy", "-o", "d"}), 1, "S.npy: cannot replace");
  CHECK(!std::filesystem::exists(dir / "d" / "U.npy"));
  // A command that fails takes back the folder it made.
  check_error(run(dir, {"svd", "missing.npy", "-o", "new"}), 1, "missing.npy");
  CHECK(!std::filesystem::exists(dir / "new"));
  // Exactly one of the two.
  check_error(run(dir, {"svd", "A.npy"}), 2, "give the folder for the outputs, -o DIR, or --prefix PREFIX");
  check_error(run(dir, {"svd", "A.npy", "-o", "x", "--prefix", "y"}), 2, "one of the two");
}

TEST_CASE("cli: the same command on the same input gives the same bits in two processes, for every transform") {
  scratch_dir dir;
  // Sizes where a timed choice between FFTW and the matrix path was close (p = 8, 40×30 tubes).
  save(dir, "A.npy", random_array(npy_dtype::float64, {40, 30, 8}, 9));
  save(dir, "B.npy", random_array(npy_dtype::float32, {30, 20, 8}, 10));
  save(dir, "Af.npy", random_array(npy_dtype::float32, {40, 30, 8}, 11));
  for (const auto& tc : transform_cases(dir, 8)) {
    CAPTURE(tc.spec);
    const std::vector<std::vector<std::string>> commands = {
        {"transform", "A.npy", "-o", "T"}, {"product", "Af.npy", "B.npy", "-o", "C"}, {"svd", "A.npy", "-o", "S"}};
    for (const auto& command : commands) {
      CAPTURE(command[0]);
      std::vector<std::string> bytes[2];
      for (int run_index = 0; run_index < 2; ++run_index) {
        auto args = command;
        args.back() += std::to_string(run_index) + (command[0] == "svd" ? "" : ".npy");
        args.insert(args.end(), {"--transform", tc.spec});
        REQUIRE(run(dir, args).status == 0);
        const std::filesystem::path out = dir / args[args.size() - 3];
        if (command[0] == "svd")
          for (const char* f : {"U.npy", "S.npy", "V.npy"}) bytes[run_index].push_back(tprod::test::file_bytes(out / f));
        else
          bytes[run_index].push_back(tprod::test::file_bytes(out));
      }
      CHECK(bytes[0] == bytes[1]);
    }
  }
}

TEST_CASE("cli: --tune and --max-condition are refused where they would have no effect") {
  scratch_dir dir;
  save(dir, "A.npy", random_array(npy_dtype::float64, {3, 2, 4}, 1));
  check_error(run(dir, {"transform", "A.npy", "-o", "T.npy", "--transform", "identity", "--tune"}), 2,
              TPROD_HAS_FFTW ? "--tune applies to --transform dct and dft only" : "built without FFTW");
  const auto tuned = run(dir, {"transform", "A.npy", "-o", "T.npy", "--tune"});
  if (TPROD_HAS_FFTW)
    CHECK(tuned.status == 0);
  else
    check_error(tuned, 2, "built without FFTW");
  check_error(run(dir, {"transform", "A.npy", "-o", "T.npy", "--max-condition", "100"}), 2,
              "--max-condition applies to --transform matrix:Z.npy only");
}
