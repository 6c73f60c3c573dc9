// SPDX-License-Identifier: Apache-2.0
// The L-SVD and L-QR (float, DCT) beside their limits: p plain Eigen factorizations of the already transformed
// slices, computing the same factors (BDCSVD with thin U and V; HouseholderQR and its thin Q). The L-versions add
// the forward transform, the copies into the factor tensors and the inverse transforms of the factors. Both run
// on every thread (the limits through a plain OpenMP loop over the slices); the /t1 cases on one.
#include <benchmark/benchmark.h>

#include "bench_names.hpp"
#include "bench_threads.hpp"

#include <Eigen/QR>
#include <Eigen/SVD>
#include <string>

#include "tprod/algebra/extern_templates.hpp"  // measured as users get them: compiled in tprod::instances
#include "tprod/algebra/qr.hpp"
#include "tprod/algebra/svd.hpp"
#include "tprod/core/random.hpp"
#include "tprod/transform.hpp"

namespace {

using matrix = Eigen::MatrixXf;

/// Runs a whole L-factorization (transform, slice factorizations, inverse transforms) of a random tensor.
using bench::thread_count;

template <class Factorize>
void lfactor(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p, std::size_t threads,
             Factorize factorize) {
  const thread_count tc(threads);
  const auto a = tprod::random_tensor3<float>(m, n, p, 1);
  for (auto _ : state) {
    auto r = factorize(a);
    benchmark::DoNotOptimize(&r);
    benchmark::ClobberMemory();
  }
}

void svd_limit(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p, std::size_t threads) {
  const thread_count tc(threads);
  const auto ahat = tprod::transform(tprod::random_tensor3<float>(m, n, p, 1), tprod::dct{});
  const int team = int(tprod::num_threads());
  for (auto _ : state) {
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
    for (long long k = 0; k < (long long)p; ++k) {
      const Eigen::BDCSVD<matrix> svd(ahat.slice(std::size_t(k)), Eigen::ComputeThinU | Eigen::ComputeThinV);
      benchmark::DoNotOptimize(svd.matrixU().data());
    }
    benchmark::ClobberMemory();
  }
}

void qr_limit(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p, std::size_t threads) {
  const thread_count tc(threads);
  const auto ahat = tprod::transform(tprod::random_tensor3<float>(m, n, p, 1), tprod::dct{});
  const auto r = Eigen::Index(std::min(m, n));
  const int team = int(tprod::num_threads());
  for (auto _ : state) {
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
    for (long long k = 0; k < (long long)p; ++k) {
      const Eigen::HouseholderQR<matrix> qr(ahat.slice(std::size_t(k)));
      matrix q = qr.householderQ() * matrix::Identity(Eigen::Index(m), r);
      benchmark::DoNotOptimize(q.data());
      benchmark::DoNotOptimize(qr.matrixQR().data());
    }
    benchmark::ClobberMemory();
  }
}

const bool registered = [] {
  struct shape {
    std::size_t m, n, p;
  };
  // 256×256×16 and 64×64×64 are the reported cases; 16×16×8 is the CI smoke run.
  for (const shape s : {shape{256, 256, 16}, shape{64, 64, 64}, shape{16, 16, 8}})
    for (const std::size_t threads : {0, 1}) {
      const std::string sh = bench::shape_name(s.m, s.n, s.p) + (threads == 1 ? "/t1" : "");
      benchmark::RegisterBenchmark(("lsvd/dct/" + sh).c_str(), [=](benchmark::State& st) {
        lfactor(st, s.m, s.n, s.p, threads, [](const auto& a) { return tprod::svd(a, tprod::dct{}); });
      })->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark(("svd_limit/" + sh).c_str(), [=](benchmark::State& st) {
        svd_limit(st, s.m, s.n, s.p, threads);
      })->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark(("lqr/dct/" + sh).c_str(), [=](benchmark::State& st) {
        lfactor(st, s.m, s.n, s.p, threads, [](const auto& a) { return tprod::qr(a, tprod::dct{}); });
      })->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark(("qr_limit/" + sh).c_str(), [=](benchmark::State& st) {
        qr_limit(st, s.m, s.n, s.p, threads);
      })->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  return true;
}();

}  // namespace
