// The L-product (float, DCT) beside its limit: the p plain Eigen GEMMs of the same shapes on the same data.
// GFLOP/s counts 2·m·l·n·p per product for both, so their ratio is the fraction of the limit reached.
#include <benchmark/benchmark.h>

#include <string>

#include "tprod/tprod.hpp"

namespace {

void set_flops(benchmark::State& state, std::size_t m, std::size_t l, std::size_t n, std::size_t p) {
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(m * l * n * p) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

template <class L>
void lproduct(benchmark::State& state, const L& policy, std::size_t m, std::size_t l, std::size_t n, std::size_t p) {
  const auto a = tprod::random_tensor3<float>(m, l, p, 1), b = tprod::random_tensor3<float>(l, n, p, 2);
  for (auto _ : state) {
    auto c = tprod::product(a, b, policy);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, m, l, n, p);
}

void gemm_limit(benchmark::State& state, std::size_t m, std::size_t l, std::size_t n, std::size_t p) {
  const auto a = tprod::random_tensor3<float>(m, l, p, 1), b = tprod::random_tensor3<float>(l, n, p, 2);
  tprod::tensor3<float> c(m, n, p);
  for (auto _ : state) {
    for (std::size_t k = 0; k < p; ++k) c.slice(k).noalias() = a.slice(k) * b.slice(k);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, m, l, n, p);
}

const bool registered = [] {
  for (std::size_t s : {32, 256})
    for (std::size_t p : {8, 16}) {
      const std::string sh = "m" + std::to_string(s) + "_l" + std::to_string(s) + "_n" + std::to_string(s) + "_p" +
                             std::to_string(p);
      benchmark::RegisterBenchmark(("lproduct/dct/" + sh).c_str(),
                                   [=](benchmark::State& st) { lproduct(st, tprod::dct{}, s, s, s, p); });
      benchmark::RegisterBenchmark(("gemm_limit/" + sh).c_str(),
                                   [=](benchmark::State& st) { gemm_limit(st, s, s, s, p); });
      benchmark::RegisterBenchmark(("lproduct/dft/" + sh).c_str(),
                                   [=](benchmark::State& st) { lproduct(st, tprod::dft{}, s, s, s, p); });
    }
  return true;
}();

}  // namespace
