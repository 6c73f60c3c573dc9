// SPDX-License-Identifier: Apache-2.0
// Tensorized spectral attention (TSA, one head, simplified filter I + Ψ) against the nn area's dot-product
// attention (one head, p = 1, identity transform), forward + backward, float, one sequence of L = 200 tokens of
// width I ∈ {64, 256, 1024}; TSA's key and value weights are QTT (I_n = J_n = 2, ranks 2) or rank-8 MPOs over
// factors of 4. And the MPO linear layer against the dense GEMMs it replaces (Y = XW, dX = dY·Wᵀ, dW = Xᵀ·dY)
// over the bond rank, I = J = 1024 = 4⁵, 200 rows.
//
// Counter params: trainable parameters (dot-product attention: W_QKV, W_O and their biases; TSA: the key and value
// cores; MPO layer: the cores; dense: W).
#include <benchmark/benchmark.h>

#include "tprod/graph/time_graph.hpp"
#include "tprod/nn/extern_templates.hpp"  // measured as users get them: compiled in tprod::instances
#include "tprod/nn/attention.hpp"
#include "tprod/nn/param_count.hpp"
#include "tprod/nn/spectral_attention.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace nn = tprod::nn;
using tprod::dense_matrix;

namespace {

constexpr std::size_t tokens = 200;

void dot_product_attention(benchmark::State& state, std::size_t width, std::size_t length) {
  const tprod::identity_transform id;
  auto prm = nn::make_attention_params<float>(width, 1, 1, id, 1);
  const auto x = tprod::random_tensor3<float>(length, width, 1, 2);
  const auto dy = tprod::random_tensor3<float>(length, width, 1, 3);
  tprod::tensor3<float> y;
  nn::attention_saved<float> saved;
  for (auto _ : state) {
    nn::attention_forward(prm, x, 1, {}, y, saved);
    const auto g = nn::attention_backward(prm, saved, dy);
    benchmark::DoNotOptimize(g.d_input.data());
  }
  state.counters["params"] = double(nn::count_parameters<float>(prm));
}

void tsa_head(benchmark::State& state, const tprod::nd_shape& dims, std::size_t rank, std::size_t length) {
  const auto prm = nn::make_tsa_head_params<float>(dims, dims, rank, 0, 1);
  const std::size_t width = prm.key.in_width();
  const dense_matrix<float> x = tprod::random_matrix<float>(length, width, 2);
  const dense_matrix<float> dy = tprod::random_matrix<float>(length, width, 3);
  const dense_matrix<float> omega = tprod::bidirectional_time_adjacency<float>(length, 0.9);
  // buffers reused from pass to pass, as the layer (and the dot-product case above) does
  dense_matrix<float> y;
  nn::tsa_head_saved<float> saved;
  nn::tsa_head_grads<float> g;
  nn::tsa_workspace<float> ws;
  for (auto _ : state) {
    nn::tsa_head_forward<float>(prm, x, omega, {}, y, saved);
    nn::tsa_head_backward<float>(prm, saved, dy, g, ws);
    benchmark::DoNotOptimize(g.d_input.data());
  }
  state.counters["params"] = double(prm.parameter_count());
}

tprod::nd_shape fours(std::size_t width) {
  tprod::nd_shape d;
  for (std::size_t w = width; w > 1; w /= 4) d.push_back(4);
  return d;
}

void tsa_qtt(benchmark::State& s, std::size_t width, std::size_t length) {
  tsa_head(s, tprod::quantized_dims(width), 2, length);
}
void tsa_mpo8(benchmark::State& s, std::size_t width, std::size_t length) { tsa_head(s, fours(width), 8, length); }

void mpo_layer(benchmark::State& state, std::size_t width, std::size_t rank, std::size_t rows) {
  const auto prm = nn::make_mpo_linear_params<float>(fours(width), fours(width), rank, 1);
  const dense_matrix<float> x = tprod::random_matrix<float>(rows, width, 2);
  const dense_matrix<float> dy = tprod::random_matrix<float>(rows, width, 3);
  dense_matrix<float> y;
  nn::mpo_linear_saved<float> saved;
  nn::mpo_linear_grads<float> g;
  nn::mpo_linear_workspace<float> ws;
  for (auto _ : state) {
    nn::mpo_linear_forward<float>(prm, x, y, saved);
    nn::mpo_linear_backward<float>(prm, saved, dy, g, ws);
    benchmark::DoNotOptimize(g.d_input.data());
  }
  state.counters["params"] = double(prm.parameter_count());
}

void dense_layer(benchmark::State& state, std::size_t width, std::size_t rows) {
  const dense_matrix<float> w = tprod::random_matrix<float>(width, width, 1);
  const dense_matrix<float> x = tprod::random_matrix<float>(rows, width, 2);
  const dense_matrix<float> dy = tprod::random_matrix<float>(rows, width, 3);
  dense_matrix<float> y(x.rows(), w.cols()), dx(x.rows(), x.cols()), dw(w.rows(), w.cols());
  for (auto _ : state) {
    y.noalias() = x * w;
    dx.noalias() = dy * w.transpose();
    dw.noalias() = x.transpose() * dy;
    benchmark::DoNotOptimize(dw.data());
  }
  state.counters["params"] = double(w.size());
}

}  // namespace

BENCHMARK_CAPTURE(dot_product_attention, i64, 64, tokens)->Name("tsa_vs_attention/dot_product/L200_I64")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tsa_qtt, i64, 64, tokens)->Name("tsa_vs_attention/tsa_qtt/L200_I64")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tsa_mpo8, i64, 64, tokens)->Name("tsa_vs_attention/tsa_mpo_rank8/L200_I64")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(dot_product_attention, i256, 256, tokens)->Name("tsa_vs_attention/dot_product/L200_I256")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tsa_qtt, i256, 256, tokens)->Name("tsa_vs_attention/tsa_qtt/L200_I256")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tsa_mpo8, i256, 256, tokens)->Name("tsa_vs_attention/tsa_mpo_rank8/L200_I256")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(dot_product_attention, i1024, 1024, tokens)->Name("tsa_vs_attention/dot_product/L200_I1024")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tsa_qtt, i1024, 1024, tokens)->Name("tsa_vs_attention/tsa_qtt/L200_I1024")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(tsa_mpo8, i1024, 1024, tokens)->Name("tsa_vs_attention/tsa_mpo_rank8/L200_I1024")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(dense_layer, i1024, 1024, tokens)->Name("mpo_layer/dense_gemm/I1024")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mpo_layer, r1, 1024, 1, tokens)->Name("mpo_layer/mpo/I1024_rank1")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mpo_layer, r2, 1024, 2, tokens)->Name("mpo_layer/mpo/I1024_rank2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mpo_layer, r4, 1024, 4, tokens)->Name("mpo_layer/mpo/I1024_rank4")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mpo_layer, r8, 1024, 8, tokens)->Name("mpo_layer/mpo/I1024_rank8")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mpo_layer, r16, 1024, 16, tokens)->Name("mpo_layer/mpo/I1024_rank16")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(mpo_layer, r32, 1024, 32, tokens)->Name("mpo_layer/mpo/I1024_rank32")->Unit(benchmark::kMillisecond);
// Tiny cases that keep the benchmark code running in CI's smoke test (filter "smoke").
BENCHMARK_CAPTURE(dot_product_attention, smoke, 16, 8)->Name("tsa_vs_attention/dot_product/smoke");
BENCHMARK_CAPTURE(tsa_qtt, smoke, 16, 8)->Name("tsa_vs_attention/tsa_qtt/smoke");
BENCHMARK_CAPTURE(tsa_mpo8, smoke, 16, 8)->Name("tsa_vs_attention/tsa_mpo_rank8/smoke");
BENCHMARK_CAPTURE(mpo_layer, smoke, 16, 2, 8)->Name("mpo_layer/mpo/smoke");
BENCHMARK_CAPTURE(dense_layer, smoke, 16, 8)->Name("mpo_layer/dense_gemm/smoke");
