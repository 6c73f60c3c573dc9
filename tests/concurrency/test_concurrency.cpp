// SPDX-License-Identifier: Apache-2.0
// Concurrency: products, transforms and inverses called from several std::threads at once, each starting with
// cold caches (tube lengths this process has not used: the first call builds the GEMM matrix or the FFTW plan,
// under the caches' locks), compared with the same calls made afterwards on one thread. Meant to run under the
// tsan and asan presets too (docs/building.md).
#include <map>
#include <thread>
#include <vector>

#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;

namespace {

/// One job's results: L(A)'s stored slices, A *_L B and A⁻¹ as plain arrays.
struct results {
  std::vector<std::complex<double>> ahat, c, ainv;
};

template <class V> std::vector<std::complex<double>> as_cd(const V& v) {
  return std::vector<std::complex<double>>(v.data(), v.data() + v.size());
}

/// Everything one job computes for tube length p under transform l on path `path`.
template <class T, class L>
results run_job(const L& l, std::size_t p, transform_path path, unsigned seed) {
  const execution ex{path};
  const auto a = random_tensor3<T>(6, 6, p, seed);
  const auto b = random_tensor3<T>(6, 5, p, seed + 1);
  results r;
  r.ahat = as_cd(transform(ex, a, l).data());
  r.c = as_cd(product(ex, a, b, l));
  // A + 6·I is comfortably invertible in every slice.
  auto shifted = a;
  shifted += T(6) * identity<T>(6, p, l);
  r.ainv = as_cd(inverse(shifted, l));
  return r;
}

double max_diff(const std::vector<std::complex<double>>& x, const std::vector<std::complex<double>>& y) {
  REQUIRE(x.size() == y.size());
  double d = 0;
  for (std::size_t e = 0; e < x.size(); ++e) d = std::max(d, std::abs(x[e] - y[e]));
  return d;
}

struct job {
  int transform;  // 0 dct, 1 dft, 2 real Z
  std::size_t p;
  transform_path path;
  bool single;  // float instead of double
};

/// The real Z of each tube length, made before the threads start: well_conditioned draws from std::rand, whose
/// global state the threads would otherwise interleave (each thread would get another Z than the reference).
std::map<std::size_t, matrix_transform<double>> real_z;

results dispatch(const job& j) {
  const unsigned seed = unsigned(j.p * 10 + std::size_t(j.transform));
  const auto go = [&](const auto& l) {
    return j.single ? run_job<float>(l, j.p, j.path, seed) : run_job<double>(l, j.p, j.path, seed);
  };
  if (j.transform == 0) return go(dct{});
  if (j.transform == 1) return go(dft{});
  return go(real_z.at(j.p));
}

}  // namespace

TEST_CASE("concurrency: products, transforms and inverses from several threads, caches cold, equal one thread's") {
  std::vector<job> jobs;
  // Tube lengths used nowhere else in this test program, so every matrix and plan is built during the race.
  for (std::size_t p : {7u, 11u, 13u, 66u, 70u}) {
    real_z.emplace(p, matrix_transform<double>(well_conditioned(p, unsigned(p))));
    for (int t : {0, 1, 2})
      for (bool single : {false, true}) {
        jobs.push_back({t, p, transform_path::gemm, single});
#if TPROD_HAS_FFTW
        if (t < 2) jobs.push_back({t, p, transform_path::fftw, single});
#endif
      }
  }
  const std::size_t thread_count = 4, rounds = 2;
  std::vector<std::vector<results>> concurrent(thread_count, std::vector<results>(jobs.size()));
  {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < thread_count; ++t)
      threads.emplace_back([&, t] {
        for (std::size_t round = 0; round < rounds; ++round)
          for (std::size_t i = 0; i < jobs.size(); ++i) {
            // Every thread runs every job, each in its own order (a rotation, reversed on odd threads).
            const std::size_t rotated = (i + 7 * t) % jobs.size();
            const std::size_t j = t % 2 ? jobs.size() - 1 - rotated : rotated;
            concurrent[t][j] = dispatch(jobs[j]);
          }
      });
    for (auto& th : threads) th.join();
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    CAPTURE(jobs[j].transform);
    CAPTURE(jobs[j].p);
    CAPTURE(int(jobs[j].path));
    CAPTURE(jobs[j].single);
    const results ref = dispatch(jobs[j]);
    const double tol = jobs[j].single ? 1e-4 : 1e-12;
    for (std::size_t t = 0; t < thread_count; ++t) {
      CHECK(max_diff(concurrent[t][j].ahat, ref.ahat) <= tol);
      CHECK(max_diff(concurrent[t][j].c, ref.c) <= tol);
      CHECK(max_diff(concurrent[t][j].ainv, ref.ainv) <= tol);
    }
  }
}
