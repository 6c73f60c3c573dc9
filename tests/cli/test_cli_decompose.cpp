// SPDX-License-Identifier: Apache-2.0
// tprod tucker, tprod tt and tprod compress-attention, driven as a user drives them: the written arrays are read back
// and contracted here, element by element from the definitions, and compared with the input and with the printed
// JSON summary.
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>

#include "cli_support.hpp"
#include "tprod/core/random.hpp"
#include "tprod/io/safetensors.hpp"

using namespace tprod;
using namespace tprod::cli_test;
using io::npy_dtype;
using tprod::test::scratch_dir;

namespace {

using shape_t = std::vector<std::size_t>;

/// The values of an array in double, Fortran order (index i_0 fastest).
std::vector<double> values(const io::npy_array& a) { return io::convert(a, npy_dtype::float64, "test").values<double>(); }

/// Fortran-order offset of a multi-index.
std::size_t offset(const shape_t& shape, const shape_t& index) {
  std::size_t off = 0;
  for (std::size_t n = shape.size(); n-- > 0;) off = off * shape[n] + index[n];
  return off;
}

/// I_1·…·I_N.
std::size_t entries(const shape_t& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::size_t(1), std::multiplies<>());
}

/// Calls f(index) for every multi-index of a shape.
void for_each_index(const shape_t& shape, const std::function<void(const shape_t&)>& f) {
  const std::size_t total = entries(shape);
  shape_t index(shape.size(), 0);
  for (std::size_t e = 0; e < total; ++e) {
    f(index);
    for (std::size_t n = 0; n < shape.size() && ++index[n] == shape[n]; ++n) index[n] = 0;
  }
}

/// X̂[i_1, …, i_N] = Σ_r G[r_1, …, r_N] Π_n U_n[i_n, r_n], from PREFIX_core.npy and PREFIX_factor{n}.npy.
std::vector<double> tucker_reconstruction(const scratch_dir& dir, const std::string& prefix, const shape_t& shape) {
  const io::npy_array g = io::read_npy(dir / (prefix + "_core.npy"));
  REQUIRE(g.ndim() == shape.size());
  std::vector<io::npy_array> u;
  for (std::size_t n = 0; n < shape.size(); ++n) {
    u.push_back(io::read_npy(dir / (prefix + "_factor" + std::to_string(n) + ".npy")));
    REQUIRE(u[n].shape == shape_t{shape[n], g.shape[n]});
  }
  const std::vector<double> gv = values(g);
  std::vector<std::vector<double>> uv;
  for (const auto& f : u) uv.push_back(values(f));
  std::vector<double> x(entries(shape));
  for_each_index(shape, [&](const shape_t& i) {
    double sum = 0;
    for_each_index(g.shape, [&](const shape_t& r) {
      double term = gv[offset(g.shape, r)];
      for (std::size_t n = 0; n < shape.size(); ++n) term *= uv[n][i[n] + shape[n] * r[n]];
      sum += term;
    });
    x[offset(shape, i)] = sum;
  });
  return x;
}

/// X̂[i_1, …, i_N] = core0[:, i_1, :] · core1[:, i_2, :] ⋯ from PREFIX_core{n}.npy.
std::vector<double> tt_reconstruction(const scratch_dir& dir, const std::string& prefix, const shape_t& shape,
                                      shape_t& ranks) {
  std::vector<io::npy_array> cores;
  ranks = {1};
  for (std::size_t n = 0; n < shape.size(); ++n) {
    cores.push_back(io::read_npy(dir / (prefix + "_core" + std::to_string(n) + ".npy")));
    REQUIRE(cores[n].ndim() == 3);
    REQUIRE(cores[n].shape[0] == ranks.back());
    REQUIRE(cores[n].shape[1] == shape[n]);
    ranks.push_back(cores[n].shape[2]);
  }
  REQUIRE(ranks.back() == 1);
  CHECK(!std::filesystem::exists(dir / (prefix + "_core" + std::to_string(shape.size()) + ".npy")));
  std::vector<double> x(entries(shape));
  for_each_index(shape, [&](const shape_t& i) {
    Eigen::RowVectorXd row = Eigen::RowVectorXd::Ones(1);
    for (std::size_t n = 0; n < shape.size(); ++n) {
      const auto& s = cores[n].shape;
      const std::vector<double> c = values(cores[n]);
      Eigen::MatrixXd slice = Eigen::MatrixXd::Zero(Eigen::Index(s[0]), Eigen::Index(s[2]));
      for (std::size_t a = 0; a < s[0]; ++a)
        for (std::size_t b = 0; b < s[2]; ++b) slice(Eigen::Index(a), Eigen::Index(b)) = c[a + s[0] * (i[n] + s[1] * b)];
      row = row * slice;
    }
    x[offset(shape, i)] = row(0);
  });
  return x;
}

/// ‖approx − x‖_F / ‖x‖_F.
double rel_diff(const std::vector<double>& approx, const std::vector<double>& x) {
  REQUIRE(approx.size() == x.size());
  double d = 0, n = 0;
  for (std::size_t e = 0; e < x.size(); ++e) d += (approx[e] - x[e]) * (approx[e] - x[e]), n += x[e] * x[e];
  return std::sqrt(d / n);
}

/// The printed summary {"relative_error": e, "compression_ratio": c, "ranks": [...]}.
struct summary {
  double relative_error = -1, compression_ratio = -1;
  shape_t ranks;
};
summary parse_summary(const std::string& out) {
  CAPTURE(out);
  summary s;
  REQUIRE(out.rfind("{\"relative_error\": ", 0) == 0);
  REQUIRE(out.back() == '\n');
  REQUIRE(std::count(out.begin(), out.end(), '\n') == 1);
  const char* p = out.c_str() + out.find(':') + 1;
  char* end = nullptr;
  s.relative_error = std::strtod(p, &end);
  REQUIRE(std::string(end).rfind(", \"compression_ratio\": ", 0) == 0);
  s.compression_ratio = std::strtod(end + 23, &end);
  REQUIRE(std::string(end).rfind(", \"ranks\": [", 0) == 0);
  p = end + 12;
  while (*p != ']') {
    s.ranks.push_back(std::strtoul(p, &end, 10));
    REQUIRE(end != p);
    p = *end == ',' ? end + 2 : end;
  }
  CHECK(std::string(p) == "]}\n");
  return s;
}

/// A real array of the shape with Tucker ranks at most r in every mode: a random r×⋯×r core times random factors.
io::npy_array low_rank_array(npy_dtype dtype, const shape_t& shape, std::size_t r, unsigned seed) {
  std::srand(seed);
  const shape_t core_shape(shape.size(), r);
  std::vector<double> g(entries(core_shape));
  for (auto& v : g) v = 2.0 * std::rand() / RAND_MAX - 1;
  std::vector<Eigen::MatrixXd> u;
  for (const std::size_t i : shape) u.push_back(Eigen::MatrixXd::Random(Eigen::Index(i), Eigen::Index(r)));
  std::vector<double> x(entries(shape));
  for_each_index(shape, [&](const shape_t& i) {
    double sum = 0;
    for_each_index(core_shape, [&](const shape_t& k) {
      double term = g[offset(core_shape, k)];
      for (std::size_t n = 0; n < shape.size(); ++n) term *= u[n](Eigen::Index(i[n]), Eigen::Index(k[n]));
      sum += term;
    });
    x[offset(shape, i)] = sum;
  });
  if (dtype == npy_dtype::float32) return io::npy_array(shape, std::vector<float>(x.begin(), x.end()));
  return io::npy_array(shape, x);
}

/// How close an exact decomposition comes: float32 outputs carry their rounding.
double decomposition_tol(npy_dtype d) { return d == npy_dtype::float64 ? 1e-12 : 1e-6; }

/// The printed error agrees with the one measured here to 1e-6 relative, or both are below the precision's noise.
void check_same_error(double printed, double measured, npy_dtype d) {
  CHECK(std::abs(printed - measured) <= 1e-6 * measured + decomposition_tol(d));
}

}  // namespace

TEST_CASE("cli: tucker of reshape(1:27, 3, 3, 3) (Fortran order) is the known HOSVD") {
  scratch_dir dir;
  std::vector<double> x(27);
  std::iota(x.begin(), x.end(), 1.0);
  save(dir, "X.npy", io::npy_array(shape_t{3, 3, 3}, x));
  for (const char* method : {"hosvd", "sthosvd", "hooi"}) {
    CAPTURE(method);
    const auto r = run(dir, {"tucker", "X.npy", "--prefix", "T", "--tol", "1e-10", "--method", method});
    REQUIRE(r.status == 0);
    const summary s = parse_summary(r.out);
    CHECK(s.ranks == shape_t{2, 2, 2});
    CHECK(s.relative_error <= 1e-13);
    CHECK(s.compression_ratio == doctest::Approx(27.0 / (8 + 3 * 6)).epsilon(1e-15));
    CHECK(rel_diff(tucker_reconstruction(dir, "T", {3, 3, 3}), x) <= 1e-13);
    CHECK(std::abs(values(io::read_npy(dir / "T_core.npy"))[0]) == doctest::Approx(83.01598119750199).epsilon(1e-13));
    const std::vector<double> u0 = values(io::read_npy(dir / "T_factor0.npy"));
    const double sign = u0[0] > 0 ? 1 : -1;
    CHECK(sign * u0[0] == doctest::Approx(0.54521).epsilon(1e-4));
    CHECK(sign * u0[1] == doctest::Approx(0.57677).epsilon(1e-4));
    CHECK(sign * u0[2] == doctest::Approx(0.60834).epsilon(1e-4));
  }
  // The same array in C order (x[i, j, k] stored with k fastest) gives the same decomposition.
  std::vector<double> c_order;
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 3; ++k) c_order.push_back(x[i + 3 * j + 9 * k]);
  std::string bytes = io::serialize_npy(io::npy_array(shape_t{3, 3, 3}, c_order));
  bytes.replace(bytes.find("True"), 4, "False");
  bytes.erase(bytes.find(" \n"), 1);  // keep the header length
  tprod::test::put_bytes(dir / "C.npy", bytes);
  const auto r = run(dir, {"tucker", "C.npy", "--prefix", "C", "--ranks", "2,2,2", "--method", "hosvd"});
  REQUIRE(r.status == 0);
  CHECK(rel_diff(tucker_reconstruction(dir, "C", {3, 3, 3}), x) <= 1e-13);
}

TEST_CASE("cli: tucker by ranks and by tolerance, every method, orders 2 to 4, float32 and float64") {
  scratch_dir dir;
  for (const shape_t& shape : {shape_t{6, 5}, shape_t{4, 5, 6}, shape_t{3, 4, 2, 3}}) {
    for (const npy_dtype dtype : {npy_dtype::float32, npy_dtype::float64}) {
      for (const char* method : {"hosvd", "sthosvd", "hooi"}) {
        CAPTURE(shape.size());
        CAPTURE(io::dtype_name(dtype));
        CAPTURE(method);
        save(dir, "X.npy", low_rank_array(dtype, shape, 2, 7));
        const std::vector<double> x = values(io::read_npy(dir / "X.npy"));
        // Full ranks: exact (to the output's precision).
        const auto full = run(dir, {"tucker", "X.npy", "--prefix", "F", "--method", method, "--ranks",
                                    [&] {
                                      std::string s;
                                      for (auto i : shape) s += (s.empty() ? "" : ",") + std::to_string(i);
                                      return s;
                                    }()});
        REQUIRE(full.status == 0);
        const summary f = parse_summary(full.out);
        CHECK(f.ranks == shape);
        CHECK(io::read_npy(dir / "F_core.npy").dtype() == dtype);
        CHECK(io::read_npy(dir / "F_factor0.npy").dtype() == dtype);
        const double err_full = rel_diff(tucker_reconstruction(dir, "F", shape), x);
        CHECK(err_full <= decomposition_tol(dtype));
        check_same_error(f.relative_error, err_full, dtype);
        // Rank 1 everywhere: an approximation whose printed error is the measured one.
        const auto one = run(dir, {"tucker", "X.npy", "--prefix", "R", "--method", method, "--ranks",
                                   shape.size() == 2 ? "1,1" : shape.size() == 3 ? "1,1,1" : "1,1,1,1"});
        REQUIRE(one.status == 0);
        const summary o = parse_summary(one.out);
        CHECK(o.ranks == shape_t(shape.size(), 1));
        const double err_one = rel_diff(tucker_reconstruction(dir, "R", shape), x);
        CHECK(err_one > 1e-3);
        check_same_error(o.relative_error, err_one, dtype);
        CHECK(o.compression_ratio ==
              doctest::Approx(double(entries(shape)) / double(1 + std::accumulate(shape.begin(), shape.end(), 0u))));
        // A tolerance finds the multilinear rank (2, …, 2) of the data.
        const auto tol = run(dir, {"tucker", "X.npy", "--prefix", "E", "--method", method, "--tol", "1e-4"});
        REQUIRE(tol.status == 0);
        const summary e = parse_summary(tol.out);
        CHECK(e.ranks == shape_t(shape.size(), 2));
        CHECK(e.relative_error <= 1e-4);
        CHECK(rel_diff(tucker_reconstruction(dir, "E", shape), x) <= 1e-4);
        CHECK(!std::filesystem::exists(dir / ("E_factor" + std::to_string(shape.size()) + ".npy")));
      }
    }
  }
}

TEST_CASE("cli: tt recovers a TT of ranks (1, 2, 3, 1), honours --eps and --max-rank") {
  scratch_dir dir;
  // A random TT of shape (3, 3, 3) and ranks (1, 2, 3, 1), contracted here.
  std::srand(5);
  const Eigen::MatrixXd g0 = Eigen::MatrixXd::Random(3, 2);  // (i1, r1)
  std::vector<Eigen::MatrixXd> g1(3, Eigen::MatrixXd::Zero(2, 3));
  for (auto& m : g1) m = Eigen::MatrixXd::Random(2, 3);  // per i2: (r1, r2)
  const Eigen::MatrixXd g2 = Eigen::MatrixXd::Random(3, 3);  // (r2, i3)
  std::vector<double> x(27);
  for_each_index({3, 3, 3}, [&](const shape_t& i) {
    x[offset({3, 3, 3}, i)] = (g0.row(Eigen::Index(i[0])) * g1[i[1]] * g2.col(Eigen::Index(i[2])))(0);
  });
  save(dir, "X.npy", io::npy_array(shape_t{3, 3, 3}, x));
  auto r = run(dir, {"tt", "X.npy", "--prefix", "T", "--eps", "1e-12"});
  REQUIRE(r.status == 0);
  summary s = parse_summary(r.out);
  shape_t ranks;
  CHECK(rel_diff(tt_reconstruction(dir, "T", {3, 3, 3}, ranks), x) <= 1e-9);
  CHECK(ranks == shape_t{1, 2, 3, 1});
  CHECK(s.ranks == ranks);
  CHECK(s.relative_error <= 1e-12);
  CHECK(s.compression_ratio == doctest::Approx(27.0 / (6 + 18 + 9)));

  // --max-rank caps every rank; the printed error is the measured one.
  r = run(dir, {"tt", "X.npy", "--prefix", "M", "--max-rank", "1"});
  REQUIRE(r.status == 0);
  s = parse_summary(r.out);
  const double err = rel_diff(tt_reconstruction(dir, "M", {3, 3, 3}, ranks), x);
  CHECK(ranks == shape_t{1, 1, 1, 1});
  CHECK(s.ranks == ranks);
  CHECK(err > 1e-3);
  CHECK(s.relative_error == doctest::Approx(err).epsilon(1e-9));
  CHECK(s.compression_ratio == doctest::Approx(27.0 / 9));

  // The ε guarantee on random data of orders 1 to 4, float32 and float64.
  for (const shape_t& shape : {shape_t{7}, shape_t{6, 5}, shape_t{4, 5, 6}, shape_t{3, 4, 2, 3}}) {
    for (const npy_dtype dtype : {npy_dtype::float32, npy_dtype::float64}) {
      for (const double eps : {0.5, 0.1, 1e-3}) {
        CAPTURE(shape.size());
        CAPTURE(io::dtype_name(dtype));
        CAPTURE(eps);
        save(dir, "Y.npy", random_array(dtype, shape, 9));
        const std::vector<double> y = values(io::read_npy(dir / "Y.npy"));
        r = run(dir, {"tt", "Y.npy", "--prefix", "Y", "--eps", std::to_string(eps)});
        REQUIRE(r.status == 0);
        s = parse_summary(r.out);
        const double measured = rel_diff(tt_reconstruction(dir, "Y", shape, ranks), y);
        CHECK(measured <= eps + decomposition_tol(dtype));
        CHECK(s.ranks == ranks);
        check_same_error(s.relative_error, measured, dtype);
        CHECK(io::read_npy(dir / "Y_core0.npy").dtype() == dtype);
      }
    }
  }
}

TEST_CASE("cli: tucker and tt usage and data errors, atomic outputs") {
  scratch_dir dir;
  save(dir, "X.npy", random_array(npy_dtype::float64, {3, 4, 5}, 1));
  save(dir, "Z.npy", random_array(npy_dtype::complex64, {3, 4}, 2));
  save(dir, "S.npy", io::npy_array(npy_dtype::float64, shape_t{}));
  save(dir, "E.npy", io::npy_array(npy_dtype::float64, shape_t{3, 0, 2}));
  const auto before = dir.entries();

  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T"}), 2, "give exactly one of --ranks and --tol");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "1,1,1", "--tol", "0.1"}), 2,
              "give exactly one of --ranks and --tol");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "2,,3"}), 2,
              "--ranks must be positive integers separated by commas");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "2,0,3"}), 2, "--ranks must be positive integers");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "2,3,"}), 2, "--ranks must be positive integers");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--tol", "1"}), 2, "--tol must be a number in [0, ");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--tol", "0.1", "--method", "cp"}), 2, "unknown method 'cp'");
  check_error(run(dir, {"tucker", "X.npy", "--tol", "0.1"}), 2, "give the folder for the outputs, -o DIR, or --prefix");
  check_error(run(dir, {"tt", "X.npy", "--prefix", "T"}), 2, "give exactly one of --max-rank and --eps");
  check_error(run(dir, {"tt", "X.npy", "--prefix", "T", "--max-rank", "0"}), 2, "--max-rank must be a positive integer");
  check_error(run(dir, {"tt", "X.npy", "--prefix", "T", "--eps", "-0.1"}), 2, "--eps must be a number in [0, ");

  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "2,2"}), 1,
              "X.npy: 2 ranks given for 3 decomposed modes of a tensor of shape 3x4x5");
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "2,2,6", "--method", "hosvd"}), 1,
              "X.npy: rank 6 for mode 2 is outside 1");
  check_error(run(dir, {"tucker", "Z.npy", "--prefix", "T", "--tol", "0.1"}), 1,
              "Z.npy: holds complex64 data; the decompositions take real arrays");
  check_error(run(dir, {"tt", "Z.npy", "--prefix", "T", "--eps", "0.1"}), 1, "Z.npy: holds complex64 data");
  check_error(run(dir, {"tt", "S.npy", "--prefix", "T", "--eps", "0.1"}), 1, "S.npy: is a 0-dimensional array");
  check_error(run(dir, {"tt", "E.npy", "--prefix", "T", "--eps", "0.1"}), 1, "E.npy: mode 1 of shape");
  check_error(run(dir, {"tucker", "missing.npy", "--prefix", "T", "--tol", "0.1"}), 1, "missing.npy: cannot open");
  CHECK(dir.entries() == before);

  // NaN or Inf: refused, naming the file; before, tucker and tt printed "nan" into their JSON and exited 0.
  for (const double bad : {std::nan(""), HUGE_VAL}) {
    io::npy_array n = random_array(npy_dtype::float64, {3, 4, 5}, 3);
    n.values<double>()[5] = bad;
    save(dir, "N.npy", n);
    for (const std::string method : {"hosvd", "sthosvd", "hooi"})
      check_error(run(dir, {"tucker", "N.npy", "--prefix", "T", "--tol", "0.1", "--method", method}), 1,
                  "N.npy: the tensor holds NaN or Inf");
    check_error(run(dir, {"tt", "N.npy", "--prefix", "T", "--eps", "0.1"}), 1, "N.npy: the tensor holds NaN or Inf");
    std::filesystem::remove(dir / "N.npy");
  }
  CHECK(dir.entries() == before);

  // A last output that cannot be replaced: no output is, and no temporary file is left.
  tprod::test::put_bytes(dir / "T_core.npy", "old");
  std::filesystem::create_directory(dir / "T_factor2.npy");
  std::filesystem::create_directory(dir / "T_core2.npy");
  const auto with_blockers = dir.entries();
  check_error(run(dir, {"tucker", "X.npy", "--prefix", "T", "--ranks", "1,1,1"}), 1, "T_factor2.npy: cannot replace");
  check_error(run(dir, {"tt", "X.npy", "--prefix", "T", "--max-rank", "2"}), 1, "T_core2.npy: cannot replace");
  CHECK(dir.entries() == with_blockers);
  CHECK(tprod::test::file_bytes(dir / "T_core.npy") == "old");
}

// tprod compress-attention: a checkpoint laid out as the examples write it, compressed; the output is read back and
// the four matrices' relative errors are recomputed here from the two files.
namespace {

constexpr std::size_t width = 8, heads = 2;

/// Two standard encoder layers of width 8 (W_QKV, W_O and a bias each), an embedding, and an integer tensor that
/// only a byte copy keeps; the metadata of an example's checkpoint.
void write_checkpoint(const std::filesystem::path& file, bool with_layers = true, const std::string& heads = "") {
  io::safetensors_writer w;
  const auto random = [](std::size_t m, std::size_t n, std::uint64_t seed) {
    return random_tensor3<float>(m, n, 1, seed);
  };
  if (with_layers)
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string layer = "encoder." + std::to_string(i) + ".attn.";
      w.add(layer + "w_qkv", random(width, 3 * width, 10 + i));
      w.add(layer + "w_o", random(width, width, 20 + i));
      w.add(layer + "b_qkv", random(1, 3 * width, 30 + i));
    }
  w.add("embed.table", random(30, width, 40));
  const std::vector<std::int32_t> counts{1, 2, 3};
  w.add("vocabulary.counts", {3}, std::span<const std::int32_t>(counts));
  w.set_metadata("format", "pt");
  w.set_metadata("transform", "identity");
  if (!heads.empty()) w.set_metadata("heads", heads);
  w.write(file);
}

/// W^Q, W^K, W^V, W^O of layer i of a checkpoint, in double: the d×d blocks of W_QKV and W_O.
std::vector<Eigen::MatrixXd> attention_matrices(const io::safetensors_reader& r, std::size_t i) {
  const std::string layer = "encoder." + std::to_string(i) + ".attn.";
  const Eigen::MatrixXd qkv = r.tensor<float>(layer + "w_qkv").slice(0).cast<double>();
  const auto d = Eigen::Index(width);
  const Eigen::MatrixXd o = r.tensor<float>(layer + "w_o").slice(0).cast<double>();
  return {qkv.leftCols(d), qkv.middleCols(d, d), qkv.rightCols(d), o};
}

}  // namespace

TEST_CASE("cli: compress-attention writes the denoised layers and prints their errors") {
  scratch_dir dir;
  write_checkpoint(dir / "w.safetensors");
  const auto r = run(dir, {"compress-attention", "w.safetensors", "-o", "out.safetensors", "--heads", "2", "--ranks",
                           "4,2,2", "--layers", "1"});
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  const auto printed = nlohmann::json::parse(r.out);
  CHECK(printed["layer"] == 1);
  CHECK(printed["ranks"] == nlohmann::json::array({4, 2, 2}));
  // CR = 4·d·h·d_v / (R1R2R3·h + d·R1 + d_v·R2 + 4·R3) = 256 / (32 + 32 + 8 + 8)
  CHECK(printed["compression_ratio"].get<double>() == doctest::Approx(3.2).epsilon(1e-15));

  const io::safetensors_reader in(dir / "w.safetensors"), out(dir / "out.safetensors");
  CHECK(out.metadata() == in.metadata());
  REQUIRE(out.names().size() == in.names().size());
  for (const auto& name : in.names()) {
    CAPTURE(name);
    CHECK(out.entry(name).dtype == in.entry(name).dtype);
    CHECK(out.entry(name).shape == in.entry(name).shape);
    const bool compressed = name == "encoder.1.attn.w_qkv" || name == "encoder.1.attn.w_o";
    CHECK((out.bytes(name) == in.bytes(name)) != compressed);
  }
  const auto before = attention_matrices(in, 1), after = attention_matrices(out, 1);
  const char* keys[] = {"q", "k", "v", "o"};
  for (std::size_t m = 0; m < 4; ++m) {
    CAPTURE(keys[m]);
    const double error = (after[m] - before[m]).norm() / before[m].norm();
    CHECK(error > 0.1);  // random weights do not compress
    // the same sums of float products in double, perhaps in another order
    CHECK(printed["relative_error"][keys[m]].get<double>() == doctest::Approx(error).epsilon(1e-12));
  }

  // Every layer at full ranks: the weights come back to float rounding; -o may be the input.
  const auto full = run(dir, {"compress-attention", "w.safetensors", "-o", "w.safetensors", "--heads", "2", "--ranks",
                              "8,4,4"});
  REQUIRE(full.status == 0);
  CHECK(std::count(full.out.begin(), full.out.end(), '\n') == 2);
  const io::safetensors_reader again(dir / "w.safetensors");
  for (std::size_t i = 0; i < 2; ++i) {
    const auto original = attention_matrices(in, i), rebuilt = attention_matrices(again, i);
    for (std::size_t m = 0; m < 4; ++m)  // one float rounding of each entry, after a double HOOI
      CHECK((rebuilt[m] - original[m]).norm() <= 4 * std::numeric_limits<float>::epsilon() * original[m].norm());
  }
  const auto tol =
      run(dir, {"compress-attention", "w.safetensors", "-o", "t.safetensors", "--heads", "2", "--tol", "0.5"});
  CHECK(tol.status == 0);
  CHECK(std::count(tol.out.begin(), tol.out.end(), '\n') == 2);
}

TEST_CASE("cli: compress-attention refuses bad checkpoints and options, writing nothing") {
  scratch_dir dir;
  write_checkpoint(dir / "w.safetensors");
  write_checkpoint(dir / "plain.safetensors", false);
  write_checkpoint(dir / "two_heads.safetensors", true, "2");
  const auto before = dir.entries();
  const auto fails = [&](std::vector<std::string> options, int status, const std::string& message) {
    std::vector<std::string> args{"compress-attention"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"-o", "out.safetensors"});
    check_error(run(dir, args), status, message);
  };
  fails({"plain.safetensors", "--heads", "2", "--ranks", "4,2,2"}, 1, "plain.safetensors: has no attention layers");
  fails({"two_heads.safetensors", "--heads", "4", "--ranks", "4,2,2"}, 1,
        "two_heads.safetensors: its metadata says heads = 2, but --heads is 4");
  fails({"w.safetensors", "--heads", "2", "--ranks", "4,2,2", "--layers", "0,2"}, 1,
        "w.safetensors: --layers 2: there is no tensor 'encoder.2.attn.w_qkv' (the file's attention layers are 0, 1)");
  fails({"w.safetensors", "--heads", "3", "--ranks", "4,2,2"}, 1,
        "w.safetensors: encoder.0.attn: --heads 3 does not divide its width d = 8");
  fails({"w.safetensors", "--heads", "2", "--ranks", "9,2,2"}, 1, "--ranks R1 = 9 is outside 1..8");
  fails({"w.safetensors", "--heads", "2", "--ranks", "4,5,2"}, 1, "--ranks R2 = 5 is outside 1..4");
  fails({"w.safetensors", "--heads", "2", "--ranks", "4,2,5"}, 1, "--ranks R3 = 5 is outside 1..4");
  fails({"missing.safetensors", "--heads", "2", "--ranks", "4,2,2"}, 1, "missing.safetensors: cannot open");
  fails({"w.safetensors", "--heads", "2", "--ranks", "4,2"}, 2, "--ranks takes three ranks R1,R2,R3");
  fails({"w.safetensors", "--heads", "2"}, 2, "give exactly one of --ranks and --tol");
  fails({"w.safetensors", "--heads", "0", "--tol", "0.1"}, 2, "--heads must be a positive integer");
  fails({"w.safetensors", "--ranks", "4,2,2"}, 2, "missing --heads");
  fails({"w.safetensors", "--heads", "2", "--tol", "0.1", "--layers", "1,1"}, 2, "--layers names a layer twice");
  fails({"w.safetensors", "--heads", "2", "--tol", "0.1", "--layers", "-1"}, 2, "--layers must be non-negative");
  CHECK(dir.entries() == before);
}
