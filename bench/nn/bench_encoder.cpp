// SPDX-License-Identifier: Apache-2.0
// One encoder layer, forward + backward, float, B = 8 sequences of T = 128 tokens: the standard layer
// (p = 1, identity transform) against the L-product layer with p = 4 (DCT), and the standard layer's GEMMs alone.
// Every case runs on all threads (tprod::num_threads(), Eigen's GEMMs likewise); the /t1 cases on one.
//
// Counters (bytes, reported in MB): params, grads, saved (activations kept for the backward pass) and
// workspace (scratch buffers of both passes); peak_MB is their sum, the memory a training step holds.
#include <benchmark/benchmark.h>

#include "bench_threads.hpp"

#include "tprod/nn/encoder.hpp"
#include "tprod/nn/extern_templates.hpp"  // measured as users get them: compiled in tprod::instances
#include "tprod/nn/param_count.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace nn = tprod::nn;

namespace {

constexpr std::size_t batch = 8, length = 128;

using bench::eigen_threads;
using bench::thread_count;

template <class L>
void run_encoder(benchmark::State& state, const nn::layer_config& cfg, const L& l, std::size_t b, std::size_t t,
                 std::size_t threads) {
  const thread_count tc(threads);
  auto prm = nn::make_encoder_params<float>(cfg, l, 1);
  nn::encoder_grads<float, L> grads{tprod::tensor3<float>(), nn::zeros_like(prm)};
  const auto x = tprod::random_tensor3<float>(b * t, cfg.width, cfg.slices, 2);
  const auto dy = tprod::random_tensor3<float>(b * t, cfg.width, cfg.slices, 3);
  tprod::tensor3<float> y;
  nn::encoder_saved<float> saved;
  nn::encoder_workspace<float> ws;
  // one untimed step sizes every buffer; the timed steps then allocate nothing
  nn::encoder_layer_forward(prm, x, b, {}, y, saved, ws);
  nn::encoder_layer_backward(prm, saved, dy, grads, ws);
  for (auto _ : state) {
    nn::encoder_layer_forward(prm, x, b, {}, y, saved, ws);
    nn::encoder_layer_backward(prm, saved, dy, grads, ws);
    benchmark::DoNotOptimize(grads.d_input.data());
  }
  const double mb = 1.0 / (1 << 20), params = double(nn::count_parameters<float>(prm) * sizeof(float));
  state.counters["params_MB"] = params * mb;
  state.counters["saved_MB"] = double(saved.bytes()) * mb;
  state.counters["workspace_MB"] = double(ws.bytes()) * mb;
  state.counters["peak_MB"] = (2 * params + double(saved.bytes() + ws.bytes() + y.size() * sizeof(float) +
                                                   grads.d_input.size() * sizeof(float))) * mb;
}

void standard(benchmark::State& s, std::size_t d, std::size_t h, std::size_t b, std::size_t t,
              std::size_t threads = 0) {
  run_encoder(s, nn::paper000_config(d, h, 4 * d, 1, nn::activation::gelu), tprod::identity_transform{}, b, t,
              threads);
}
void lproduct_p4(benchmark::State& s, std::size_t d, std::size_t h, std::size_t b, std::size_t t,
                 std::size_t threads = 0) {
  run_encoder(s, nn::paper000_config(d, h, 4 * d, 4, nn::activation::gelu), tprod::dct{}, b, t, threads);
}

/// A layer's GEMMs alone, on contiguous matrices of the same shapes: forward (QKV, scores, P·V, output
/// projection, FFN) and backward (two GEMMs per projection, four per attention block), for each of the p slices
/// (p = 1: the standard layer).
void gemm_only(benchmark::State& state, std::size_t d, std::size_t heads, std::size_t p, std::size_t threads = 0) {
  const thread_count tc(threads);
  const eigen_threads et;
  using M = Eigen::MatrixXf;
  const Eigen::Index r = Eigen::Index(batch * length), dd = Eigen::Index(d / p), f = 4 * dd,
                     t = Eigen::Index(length), dh = Eigen::Index(d / heads);
  const M x = M::Random(r, dd), wqkv = M::Random(dd, 3 * dd), wo = M::Random(dd, dd), w1 = M::Random(dd, f),
          w2 = M::Random(f, dd);
  M qkv(r, 3 * dd), hc(r, dd), y(r, dd), h(r, f), o(r, dd), s(t, t), ds(t, t), dqkv(r, 3 * dd), dh_(r, dd),
      dx(r, dd), dw(dd, 3 * dd), dwo(dd, dd), dw1(dd, f), dw2(f, dd), dhid(r, f);
  const M q = M::Random(t, dh), k = M::Random(t, dh), v = M::Random(t, dh), dout = M::Random(t, dh);
  M outb(t, dh), dq(t, dh), dk(t, dh), dv(t, dh);
  const std::size_t blocks = heads * batch;  // (slice, head, sequence) blocks: p·h·B = H·B
  for (auto _ : state) {
    for (std::size_t k_ = 0; k_ < p; ++k_) qkv.noalias() = x * wqkv;
    for (std::size_t i = 0; i < blocks; ++i) {
      s.noalias() = k * q.transpose();
      outb.noalias() = s.transpose() * v;
    }
    for (std::size_t k_ = 0; k_ < p; ++k_) {
      y.noalias() = hc * wo;
      h.noalias() = y * w1;
      o.noalias() = h * w2;
      // backward
      dw2.noalias() = h.transpose() * o;
      dhid.noalias() = o * w2.transpose();
      dw1.noalias() = y.transpose() * dhid;
      dx.noalias() = dhid * w1.transpose();
      dwo.noalias() = hc.transpose() * dx;
      dh_.noalias() = dx * wo.transpose();
    }
    for (std::size_t i = 0; i < blocks; ++i) {
      dv.noalias() = s * dout;
      ds.noalias() = v * dout.transpose();
      dq.noalias() = ds.transpose() * k;
      dk.noalias() = ds * q;
    }
    for (std::size_t k_ = 0; k_ < p; ++k_) {
      dw.noalias() = x.transpose() * dqkv;
      dx.noalias() = dqkv * wqkv.transpose();
    }
    benchmark::DoNotOptimize(dx.data());
  }
}

}  // namespace

BENCHMARK_CAPTURE(standard, d768, 768, 8, batch, length)->Name("encoder_layer/standard/d768")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(lproduct_p4, d768, 768, 8, batch, length)->Name("encoder_layer/lproduct_p4/d768")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(standard, d768_t1, 768, 8, batch, length, 1)->Name("encoder_layer/standard/d768/t1")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(lproduct_p4, d768_t1, 768, 8, batch, length, 1)->Name("encoder_layer/lproduct_p4/d768/t1")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(gemm_only, d768_t1, 768, 8, 1, 1)->Name("encoder_layer/gemm_only/d768/t1")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(gemm_only, d768, 768, 8, 1)->Name("encoder_layer/gemm_only/d768")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(gemm_only, p4_d768, 768, 8, 4)->Name("encoder_layer/gemm_only_p4/d768")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3)->Repetitions(3);
BENCHMARK_CAPTURE(standard, d256, 256, 4, batch, length)->Name("encoder_layer/standard/d256")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10)->Repetitions(3);
BENCHMARK_CAPTURE(lproduct_p4, d256, 256, 4, batch, length)->Name("encoder_layer/lproduct_p4/d256")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10)->Repetitions(3);
// Tiny cases that keep the benchmark code running in CI's smoke test (filter "smoke").
BENCHMARK_CAPTURE(standard, smoke, 32, 4, 2, 8)->Name("encoder_layer/standard/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(lproduct_p4, smoke, 32, 4, 2, 8)->Name("encoder_layer/lproduct_p4/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
