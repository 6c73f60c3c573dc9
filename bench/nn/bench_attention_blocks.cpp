// SPDX-License-Identifier: Apache-2.0
// The CPU's attention blocks at TCP-ViT's shape (p = 4 slices × 4 heads × B = 64 sequences of T = 49 tokens, heads
// d_h = 4 wide: 1,024 blocks, float), forward (scores, masked softmax, O = Pᵀ·V) and backward (dV, dP, the softmax
// backward, dQ, dK), through the fused small-head kernels (`fused`, what attention_forward_blocks and
// attention_backward_blocks run for such heads) and through Eigen's GEMMs block by block (`gemms`, the path for
// wide heads), on 1 and 2 threads:
//   attention_blocks/{forward,backward}/{fused,gemms}/tcp_vit/t{1,2}
//   attention_blocks/{forward,backward}/fused/smoke   a tiny shape, for CI
#include <benchmark/benchmark.h>

#include "tprod/backend/cpu/attention.hpp"
#include "tprod/core/random.hpp"
#include "bench_threads.hpp"

namespace {

namespace cpu = tprod::backend::cpu;

struct attention_case {
  cpu::attention_blocks d;
  tprod::tensor3<float> q, k, v, d_out, out, dq, dk, dv, probs, scratch;
  cpu::system sys;
  attention_case(std::size_t p, std::size_t heads, std::size_t batch, std::size_t t, std::size_t dh,
                 std::size_t threads)
      : d{p, heads, batch, t, t, dh},
        q(tprod::random_tensor3<float>(batch * t, heads * dh, p, 1)),
        k(tprod::random_tensor3<float>(batch * t, heads * dh, p, 2)),
        v(tprod::random_tensor3<float>(batch * t, heads * dh, p, 3)),
        d_out(tprod::random_tensor3<float>(batch * t, heads * dh, p, 4)),
        out(batch * t, heads * dh, p),
        dq(batch * t, heads * dh, p),
        dk(batch * t, heads * dh, p),
        dv(batch * t, heads * dh, p),
        probs(t, t, d.blocks()),
        sys{tprod::execution{tprod::transform_path::automatic, threads}} {
    scratch = tprod::tensor3<float>(t, t, cpu::attention_scratch_blocks(sys, d));
  }
  template <class E>
  static cpu::head_layout<E> layout(E* data, const tprod::tensor3<float>& x) {
    return {data, x.m(), x.m() * x.n(), 0};
  }
  cpu::head_layout<const float> in(const tprod::tensor3<float>& x) const { return layout(x.data(), x); }
  cpu::head_layout<float> of(tprod::tensor3<float>& x) { return layout(x.data(), x); }
};

/// TCP-ViT's shape, or a tiny one for CI's smoke run.
attention_case make_case(bool smoke, std::size_t threads) {
  return smoke ? attention_case(1, 2, 2, 5, 4, threads) : attention_case(4, 4, 64, 49, 4, threads);
}

void forward(benchmark::State& state, bool fused, std::size_t threads, bool smoke = false) {
  attention_case c = make_case(smoke, threads);
  const cpu::attention_masking none{};
  for (auto _ : state) {
    if (fused)
      cpu::attention_forward_blocks<float>(c.sys, c.d, c.in(c.q), c.in(c.k), c.in(c.v), none,
                                           c.probs.dynamic_view(), c.of(c.out), true);
    else
      cpu::detail::attention_forward_gemms<float>(c.sys, c.d, c.in(c.q), c.in(c.k), c.in(c.v), none,
                                                  c.probs.dynamic_view(), c.of(c.out), true);
    benchmark::DoNotOptimize(c.out.data());
  }
}

void backward(benchmark::State& state, bool fused, std::size_t threads, bool smoke = false) {
  attention_case c = make_case(smoke, threads);
  cpu::attention_forward_blocks<float>(c.sys, c.d, c.in(c.q), c.in(c.k), c.in(c.v), {}, c.probs.dynamic_view(),
                                       c.of(c.out), true);
  const auto probs = std::as_const(c.probs).dynamic_view();
  for (auto _ : state) {
    if (fused)
      cpu::attention_backward_blocks<float>(c.sys, c.d, c.in(c.q), c.in(c.k), c.in(c.v), probs, c.in(c.d_out),
                                            c.of(c.dq), c.of(c.dk), c.of(c.dv), c.scratch.dynamic_view());
    else
      cpu::detail::attention_backward_gemms<float>(c.sys, c.d, c.in(c.q), c.in(c.k), c.in(c.v), probs,
                                                   c.in(c.d_out), c.of(c.dq), c.of(c.dk), c.of(c.dv),
                                                   c.scratch.dynamic_view());
    benchmark::DoNotOptimize(c.dq.data());
  }
}

const int registered = [] {
  for (const char* pass : {"forward", "backward"})
    for (const bool fused : {true, false})
      for (const std::size_t threads : {std::size_t(1), std::size_t(2)}) {
        const std::string name = std::string("attention_blocks/") + pass + (fused ? "/fused" : "/gemms") +
                                 "/tcp_vit/t" + std::to_string(threads);
        const bool is_forward = std::string(pass) == "forward";
        benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) {
          is_forward ? forward(st, fused, threads) : backward(st, fused, threads);
        })->Unit(benchmark::kMillisecond)->UseRealTime();
      }
  benchmark::RegisterBenchmark("attention_blocks/forward/fused/smoke",
                               [](benchmark::State& st) { forward(st, true, 1, true); });
  benchmark::RegisterBenchmark("attention_blocks/backward/fused/smoke",
                               [](benchmark::State& st) { backward(st, true, 1, true); });
  return 0;
}();

}  // namespace
