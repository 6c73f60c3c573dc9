// SPDX-License-Identifier: Apache-2.0
// The L-product (float, DCT) beside honest limits:
// - gemm_peak/t1, gemm_peak/tN: the best sustained single SGEMM of this machine (1024³ float, Eigen, 1 thread
//   and every thread), the ceiling any GEMM-based kernel can reach;
// - gemm_limit/…: the p plain Eigen GEMMs of the same shapes on the same data (one thread, as a user would
//   write them; it inherits Eigen's size cliff at 192–320, which is why it is no ceiling);
// - the sweep lproduct/dct/s{S}_p{P} (S×S×P times S×S×P) on every thread and on one (/t1), and
//   facewise/s256_p16, the transform-domain product alone.
// GFLOP/s counts 2·m·l·n·p per product everywhere, so ratios of GFLOP/s are fractions of the limit.
#include <benchmark/benchmark.h>

#include "bench_threads.hpp"

#include <string>

#include "tprod/tprod.hpp"

namespace {

void set_flops(benchmark::State& state, std::size_t m, std::size_t l, std::size_t n, std::size_t p) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(m * l * n * p) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

using bench::eigen_threads;
using bench::thread_count;

template <class T, class L>
void lproduct_of(benchmark::State& state, const L& policy, std::size_t m, std::size_t l, std::size_t n,
                 std::size_t p, std::size_t threads = 0) {
  const thread_count tc(threads);
  const auto a = tprod::random_tensor3<T>(m, l, p, 1), b = tprod::random_tensor3<T>(l, n, p, 2);
  for (auto _ : state) {
    auto c = tprod::product(a, b, policy);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, m, l, n, p);
  state.counters["threads"] = double(tprod::num_threads());
}
template <class L>
void lproduct(benchmark::State& state, const L& policy, std::size_t m, std::size_t l, std::size_t n, std::size_t p,
              std::size_t threads = 0) {
  lproduct_of<float>(state, policy, m, l, n, p, threads);
}

void facewise(benchmark::State& state, std::size_t s, std::size_t p, std::size_t threads = 0) {
  const thread_count tc(threads);
  const auto ah = tprod::transform(tprod::random_tensor3<float>(s, s, p, 1), tprod::dct{});
  const auto bh = tprod::transform(tprod::random_tensor3<float>(s, s, p, 2), tprod::dct{});
  for (auto _ : state) {
    auto ch = ah * bh;
    benchmark::DoNotOptimize(ch.data().data());
    benchmark::ClobberMemory();
  }
  set_flops(state, s, s, s, p);
}

void gemm_limit(benchmark::State& state, std::size_t m, std::size_t l, std::size_t n, std::size_t p) {
  const thread_count tc(1);
  const auto a = tprod::random_tensor3<float>(m, l, p, 1), b = tprod::random_tensor3<float>(l, n, p, 2);
  tprod::tensor3<float> c(m, n, p);
  for (auto _ : state) {
    for (std::size_t k = 0; k < p; ++k) c.slice(k).noalias() = a.slice(k) * b.slice(k);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, m, l, n, p);
}

/// One 1024³ float GEMM by Eigen on `threads` threads (Eigen's own OpenMP threading, which tprod otherwise keeps
/// at 1): the machine's SGEMM peak.
void gemm_peak(benchmark::State& state, std::size_t threads) {
  const thread_count tc(threads);
  const eigen_threads et;
  const Eigen::Index s = 1024;
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(s, s), b = Eigen::MatrixXf::Random(s, s);
  Eigen::MatrixXf c(s, s);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, std::size_t(s), std::size_t(s), std::size_t(s), 1);
  state.counters["threads"] = double(Eigen::nbThreads());
}

std::string cube(std::size_t s, std::size_t p) {
  return std::string("m") + std::to_string(s) + "_l" + std::to_string(s) + "_n" + std::to_string(s) + "_p" + std::to_string(p);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("gemm_peak/t1", [](benchmark::State& st) { gemm_peak(st, 1); })->UseRealTime();
  benchmark::RegisterBenchmark("gemm_peak/tN", [](benchmark::State& st) { gemm_peak(st, 0); })->UseRealTime();
  for (std::size_t s : {32, 256})
    for (std::size_t p : {8, 16}) {
      const std::string sh = cube(s, p);
      benchmark::RegisterBenchmark(("lproduct/dct/" + sh).c_str(),
                                   [=](benchmark::State& st) { lproduct(st, tprod::dct{}, s, s, s, p); })
          ->UseRealTime();
      benchmark::RegisterBenchmark(("gemm_limit/" + sh).c_str(),
                                   [=](benchmark::State& st) { gemm_limit(st, s, s, s, p); })
          ->UseRealTime();
      benchmark::RegisterBenchmark(("lproduct/dft/" + sh).c_str(),
                                   [=](benchmark::State& st) { lproduct(st, tprod::dft{}, s, s, s, p); })
          ->UseRealTime();
    }
  // The smallest product: what a call costs beyond its arithmetic (the Python package's overhead is measured
  // against it, bench/peers/python_lproduct_cpu.py).
  benchmark::RegisterBenchmark("lproduct/dct/m4_l4_n4_p4", [](benchmark::State& st) {
    lproduct_of<double>(st, tprod::dct{}, 4, 4, 4, 4);
  })->UseRealTime();
  benchmark::RegisterBenchmark("lproduct/dct/m512_l512_n512_p8", [](benchmark::State& st) {
    lproduct(st, tprod::dct{}, 512, 512, 512, 8);
  })->UseRealTime();
  benchmark::RegisterBenchmark("facewise/s256_p16", [](benchmark::State& st) { facewise(st, 256, 16); })->UseRealTime();
  benchmark::RegisterBenchmark("facewise/s256_p16/t1", [](benchmark::State& st) { facewise(st, 256, 16, 1); })
      ->UseRealTime();
  // The sweep; three S×S×P float tensors plus the transform-domain copies, skipped above 1 GiB of operands.
  for (std::size_t p : {4, 8, 16, 64})
    for (std::size_t s : {64, 128, 192, 256, 384, 512, 1024}) {
      if (3 * s * s * p * sizeof(float) > (std::size_t(1) << 30)) continue;
      const std::string name = "lproduct/dct/s" + std::to_string(s) + "_p" + std::to_string(p);
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { lproduct(st, tprod::dct{}, s, s, s, p); })
          ->UseRealTime();
      benchmark::RegisterBenchmark((name + "/t1").c_str(),
                                   [=](benchmark::State& st) { lproduct(st, tprod::dct{}, s, s, s, p, 1); })
          ->UseRealTime();
    }
  return true;
}();

}  // namespace
