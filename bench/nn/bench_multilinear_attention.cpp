// SPDX-License-Identifier: Apache-2.0
// Self-attention sublayers alone, forward + backward, float, p = 1 (identity transform), B = 4 sequences of N
// tokens at width d: standard multi-head attention (H = 8), TensorCoder's dimension-wise attention (H = 8) and the
// Tensorized Transformer's multi-linear attention (P = 8 superdiagonal block terms of rank R = 32, W_O with N² rows),
// for N ∈ {64, 128, 256} and d ∈ {256, 768}. Counters: params_MB (the sublayer's parameters) and the FLOP
// estimate of one forward pass (GFLOP): standard 8Nd² + 4N²d, dimension-wise 8Nd² + 4Nd²/H, multi-linear
// 6NdR + 2N²Rd + 2NRd per sequence.
#include <benchmark/benchmark.h>

#include "tprod/nn/multilinear_attention.hpp"
#include "tprod/nn/param_count.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace nn = tprod::nn;

namespace {

constexpr std::size_t batch = 4, heads = 8, rank = 32, terms = 8;
using L = tprod::identity_transform;

/// One training step of an attention sublayer A (the encoder's hooks), buffers reused across iterations.
template <class A>
void run(benchmark::State& state, A prm, std::size_t n, double forward_flops) {
  const std::size_t d = prm.width();
  auto grads = nn::zeros_like(prm);
  const auto tm = nn::detail::transform_passes_of<float>(L{});
  const auto x = tprod::random_tensor3<float>(batch * n, d, 1, 2), dy = tprod::random_tensor3<float>(batch * n, d, 1, 3);
  tprod::tensor3<float> y, dx;
  nn::attention_cache_of<A> cache;
  nn::attention_workspace_of<A> ws;
  const nn::attention_mask mask;
  for (auto _ : state) {
    attention_sublayer_forward(prm, tm, x, batch, mask, cache, y);
    attention_sublayer_backward(prm, tm, x, cache, dy, ws, dx, grads);
    benchmark::DoNotOptimize(dx.data());
  }
  state.counters["params_MB"] = double(nn::count_parameters<float>(prm) * sizeof(float)) / (1 << 20);
  state.counters["fwd_GFLOP"] = forward_flops * double(batch) * 1e-9;
}

void standard(benchmark::State& s, std::size_t d, std::size_t n) {
  const double nd = double(n) * double(d);
  run(s, nn::make_attention_params<float>(d, heads, 1, L{}, 1), n, 8 * nd * double(d) + 4 * nd * double(n));
}
void dimension_wise(benchmark::State& s, std::size_t d, std::size_t n) {
  const double nd = double(n) * double(d);
  run(s, nn::make_attention_params<float>(d, heads, 1, L{}, 1, true, nn::attention_variant::dimension_wise), n,
      8 * nd * double(d) + 4 * nd * double(d) / double(heads));
}
void multilinear(benchmark::State& s, std::size_t d, std::size_t n) {
  const double ndr = double(n) * double(d) * double(rank);
  run(s, nn::make_multilinear_attention_params<float>(d, n, rank, terms, 1, L{}, 1), n,
      6 * ndr + 2 * ndr * double(n) + 2 * ndr);
}

void cases(benchmark::internal::Benchmark* b) {
  for (long d : {256, 768})
    for (long n : {64, 128, 256}) b->Args({d, n});
}

void bm_standard(benchmark::State& s) { standard(s, std::size_t(s.range(0)), std::size_t(s.range(1))); }
void bm_dimension_wise(benchmark::State& s) { dimension_wise(s, std::size_t(s.range(0)), std::size_t(s.range(1))); }
void bm_multilinear(benchmark::State& s) { multilinear(s, std::size_t(s.range(0)), std::size_t(s.range(1))); }

}  // namespace

BENCHMARK(bm_standard)->Name("attention/standard")->ArgNames({"d", "N"})->Apply(cases)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK(bm_dimension_wise)->Name("attention/dimension_wise")->ArgNames({"d", "N"})->Apply(cases)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
BENCHMARK(bm_multilinear)->Name("attention/multilinear")->ArgNames({"d", "N"})->Apply(cases)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
// Tiny cases that keep the benchmark code running in CI's smoke test (filter "smoke").
BENCHMARK_CAPTURE(standard, smoke, 32, 8)->Name("attention/standard/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(dimension_wise, smoke, 32, 8)->Name("attention/dimension_wise/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(multilinear, smoke, 32, 8)->Name("attention/multilinear/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
