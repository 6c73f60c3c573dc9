// SPDX-License-Identifier: Apache-2.0
#pragma once
// Support for the tprod program's tests: running the built binary in a scratch directory, and an independent
// reference of the transforms and L-operations (the matrix Z built here from its definition, slices handled with
// plain Eigen in complex double), against which the program's outputs are compared.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "scratch_dir.hpp"
#include "tprod/io.hpp"

namespace tprod::cli_test {

using cd = std::complex<double>;
using cmat = Eigen::MatrixXcd;

struct run_result {
  int status = -1;
  std::string out, err;
  long max_rss_kib = 0;  ///< the program's peak resident memory
};

/// Runs `tprod args...` with the working directory `dir`, capturing stdout and stderr.
inline run_result run(const test::scratch_dir& dir, const std::vector<std::string>& args) {
  const auto out_file = dir / ".stdout", err_file = dir / ".stderr";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(dir.path.c_str()) != 0) ::_exit(126);
    ::alarm(300);  // a hung program (a blocking open, an endless loop) dies with SIGALRM instead of hanging the suite
    const int o = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(126);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(TPROD_CLI_PATH));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TPROD_CLI_PATH, argv.data());
    ::_exit(127);
  }
  int wstatus = 0;
  struct rusage usage {};
  REQUIRE(::wait4(pid, &wstatus, 0, &usage) == pid);
  run_result r;
  r.max_rss_kib = usage.ru_maxrss;
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  r.out = test::file_bytes(out_file);
  r.err = test::file_bytes(err_file);
  std::filesystem::remove(out_file);
  std::filesystem::remove(err_file);
  return r;
}

/// Checks a usage (2) or data (1) error: exit status, exactly one stderr line containing `text`, no stdout.
inline void check_error(const run_result& r, int status, const std::string& text) {
  CAPTURE(r.err);
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.back() == '\n');
  CHECK(r.err.find(text) != std::string::npos);
}

inline void save(const test::scratch_dir& dir, const std::string& name, const io::npy_array& a) {
  io::write_npy(dir / name, a);
}

/// An (m, n, p) array as a complex double m·n × p matrix whose column k is slice k (tube index last).
struct ref_tensor {
  std::size_t m = 0, n = 0, p = 0;
  cmat tubes;  // row i + m·j, column k
  cd operator()(std::size_t i, std::size_t j, std::size_t k) const {
    return tubes(Eigen::Index(i + m * j), Eigen::Index(k));
  }
  cmat slice(std::size_t k) const {
    return tubes.col(Eigen::Index(k)).reshaped(Eigen::Index(m), Eigen::Index(n));
  }
};

inline ref_tensor from_npy(const io::npy_array& a) {
  REQUIRE((a.ndim() == 3 || a.ndim() == 2));
  const io::npy_array c = io::convert(a, io::npy_dtype::complex128, "ref");
  ref_tensor t{a.shape[0], a.shape[1], a.ndim() == 3 ? a.shape[2] : 1, {}};
  t.tubes = Eigen::Map<const cmat>(c.values<cd>().data(), Eigen::Index(t.m * t.n), Eigen::Index(t.p));
  return t;
}
inline ref_tensor load(const std::filesystem::path& file) { return from_npy(io::read_npy(file)); }
inline ref_tensor from_slices(std::size_t m, std::size_t n, const std::vector<cmat>& slices) {
  ref_tensor t{m, n, slices.size(), cmat(Eigen::Index(m * n), Eigen::Index(slices.size()))};
  for (std::size_t k = 0; k < slices.size(); ++k) t.tubes.col(Eigen::Index(k)) = slices[k].reshaped();
  return t;
}

/// Z of the orthonormal DCT-II, from its formula.
inline cmat dct_matrix(std::size_t p) {
  cmat z = cmat::Zero(Eigen::Index(p), Eigen::Index(p));
  for (std::size_t j = 0; j < p; ++j)
    for (std::size_t k = 0; k < p; ++k)
      z(Eigen::Index(j), Eigen::Index(k)) = std::sqrt((j == 0 ? 1.0 : 2.0) / double(p)) *
                                            std::cos(std::numbers::pi * double((2 * k + 1) * j) / double(2 * p));
  return z;
}
/// Z of the unnormalized DFT: Z(k, t) = e^{−2πi·kt/p}.
inline cmat dft_matrix(std::size_t p) {
  cmat z = cmat::Zero(Eigen::Index(p), Eigen::Index(p));
  for (std::size_t k = 0; k < p; ++k)
    for (std::size_t t = 0; t < p; ++t)
      z(Eigen::Index(k), Eigen::Index(t)) = std::polar(1.0, -2.0 * std::numbers::pi * double((k * t) % p) / double(p));
  return z;
}

/// Â(i, j, :) = Z·A(i, j, :) (not named apply: std::apply would win by ADL for Eigen expressions of std::complex).
inline ref_tensor along_tubes(const cmat& z, const ref_tensor& a) { return {a.m, a.n, a.p, a.tubes * z.transpose()}; }

/// L⁻¹(f(L(A)_k) for each k) — the slice-wise definition of every L-operation.
template <class F>
ref_tensor slicewise(const cmat& z, const ref_tensor& a, std::size_t rows, std::size_t cols, F f) {
  const ref_tensor ahat = along_tubes(z, a);
  std::vector<cmat> out;
  for (std::size_t k = 0; k < a.p; ++k) out.push_back(f(ahat.slice(k), k));
  return along_tubes(z.inverse(), from_slices(rows, cols, out));
}
inline ref_tensor product(const cmat& z, const ref_tensor& a, const ref_tensor& b) {
  const ref_tensor bhat = along_tubes(z, b);
  return slicewise(z, a, a.m, b.n, [&](const cmat& s, std::size_t k) -> cmat { return s * bhat.slice(k); });
}
inline ref_tensor transpose(const cmat& z, const ref_tensor& a) {
  return slicewise(z, a, a.n, a.m, [](const cmat& s, std::size_t) -> cmat { return s.adjoint(); });
}
inline ref_tensor inverse(const cmat& z, const ref_tensor& a) {
  return slicewise(z, a, a.m, a.m, [](const cmat& s, std::size_t) -> cmat { return s.inverse(); });
}
inline ref_tensor identity(const cmat& z, std::size_t m) {
  ref_tensor zero{m, m, std::size_t(z.rows()), cmat::Zero(Eigen::Index(m * m), z.rows())};
  return slicewise(z, zero, m, m, [m](const cmat&, std::size_t) -> cmat { return cmat::Identity(Eigen::Index(m), Eigen::Index(m)); });
}

/// max |a − b| relative to max |b| (1 when b is zero).
inline double rel_error(const ref_tensor& a, const ref_tensor& b) {
  REQUIRE(a.m == b.m);
  REQUIRE(a.n == b.n);
  REQUIRE(a.p == b.p);
  return (a.tubes - b.tubes).cwiseAbs().maxCoeff() / std::max(1.0, b.tubes.cwiseAbs().maxCoeff());
}

/// A seeded random array of a dtype, written with the C++ writer.
inline io::npy_array random_array(io::npy_dtype dtype, std::vector<std::size_t> shape, unsigned seed) {
  io::npy_array a(dtype, shape);
  std::srand(seed);
  std::visit(
      [](auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        for (auto& x : v) {
          const double re = 2.0 * std::rand() / RAND_MAX - 1, im = 2.0 * std::rand() / RAND_MAX - 1;
          if constexpr (is_complex_v<T>) x = T(real_t<T>(re), real_t<T>(im)); else x = T(re);
        }
      },
      a.data);
  return a;
}

}  // namespace tprod::cli_test
