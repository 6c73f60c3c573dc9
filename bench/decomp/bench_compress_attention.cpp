// SPDX-License-Identifier: Apache-2.0
// TensorLLM on a trained model's weights (nn::compress_attention): one BERT-base encoder layer (d = 768, 12 heads,
// d_ff = 3072, float, random weights) whose W^Q, W^K, W^V, W^O are taken out of the stack, decomposed with shared
// factors at ranks (256, 32, 4) (HOOI, 2 sweeps, Gram factors, as BM_MultiheadTucker in double) and put back, with
// the four relative errors. Baseline: LASER on the same layer (nn::laser_attention, rank 96, the same storage within
// 3 %: 4·96·1536 = 589 824 against 591 888 numbers).
#include "bench_decomp_common.hpp"
#include "tprod/nn/model/compress_attention.hpp"
#include "tprod/nn/extern_templates.hpp"

namespace {

using stack_type = tprod::nn::encoder_stack<float, tprod::identity_transform>;

stack_type bert_layer_stack(std::size_t width, std::size_t layer_heads) {
  const auto cfg = tprod::nn::paper000_config(width, layer_heads, 4 * width, 1);
  std::vector<tprod::nn::encoder_params<float, tprod::identity_transform>> layers;
  layers.push_back(tprod::nn::make_encoder_params<float>(cfg, tprod::identity_transform{}, 7));
  return stack_type(std::move(layers));
}

template <class Compress>
void run_on_layer(benchmark::State& state, std::size_t width, std::size_t layer_heads, Compress compress) {
  auto stack = bert_layer_stack(width, layer_heads);
  const auto original = tprod::nn::attention_weights_of(stack[0].attn);
  tprod::nn::attention_compression r;
  for (auto _ : state) {
    state.PauseTiming();
    tprod::nn::set_attention_weights(stack[0].attn, original);
    state.ResumeTiming();
    r = compress(stack).front();
  }
  state.counters["compression_ratio"] = r.compression_ratio;
  state.counters["rel_error_q"] = r.relative_error.query;
  state.counters["rel_error_o"] = r.relative_error.output;
}

const std::vector<std::size_t> first_layer{0};

void BM_CompressAttentionLayer(benchmark::State& state) {
  const tprod::tucker_options options{.ranks = {256, 32, 4}, .max_sweeps = 2, .fit_tolerance = -1,
                                      .subspace = tprod::subspace_method::gram};
  run_on_layer(state, bench_decomp::d_model, bench_decomp::heads,
               [&](stack_type& s) { return tprod::nn::compress_attention(s, first_layer, options); });
}
BENCHMARK(BM_CompressAttentionLayer)->Unit(benchmark::kMillisecond);

void BM_LaserAttentionLayer(benchmark::State& state) {
  run_on_layer(state, bench_decomp::d_model, bench_decomp::heads,
               [](stack_type& s) { return tprod::nn::laser_attention(s, first_layer, 96); });
}
BENCHMARK(BM_LaserAttentionLayer)->Unit(benchmark::kMillisecond);

// A small layer for the CI smoke run.
void BM_CompressAttentionLayer_smoke(benchmark::State& state) {
  run_on_layer(state, 32, 4, [](stack_type& s) {
    return tprod::nn::compress_attention(s, first_layer, {.ranks = {8, 4, 2}});
  });
}
BENCHMARK(BM_CompressAttentionLayer_smoke);

}  // namespace
