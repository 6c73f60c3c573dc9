// SPDX-License-Identifier: Apache-2.0
// One training step of the examples' model pairs at the examples' default shapes, float, all threads: forward,
// softmax cross-entropy, backward, gradient clipping at norm 1 and an AdamW step — what nn::fit does per batch,
// without the batch assembly. The pairs are the compressed model and the model it replaces:
//   train_step/std_vit, train_step/tcp_vit   tcp_vit: 49 patches of 16 values, B = 64, 4 layers, 4 heads, r_ff = 4;
//                                            Std-ViT d = 64 (p = 1), TCP-ViT d_s = 16 per slice, p = 4 under the DCT
//   train_step/std/d128, train_step/t4/d128  ltransformer_text: T = 128 tokens, B = 32, d = 128, 4 heads,
//                                            d_ff = 512, 4 layers, 20,000 words; Std p = 1, T4 p = 4 under the DCT
// The ratio of a pair's medians in one run is the wall-time counterpart of the pair's multiply-add ratio
// (docs/performance.md, "Training steps"); scripts/profile-train-step.sh splits each case's time by phase.
#include <benchmark/benchmark.h>

#include <random>

#include "tprod/nn/extern_templates.hpp"  // measured as users get them: compiled in tprod::instances
#include "tprod/nn/model.hpp"
#include "tprod/nn/model/fit_distribution.hpp"
#include "tprod/transform/dct.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace nn = tprod::nn;

namespace {

/// Times steps of `model` on one fixed batch (its first step, which sizes every buffer, untimed).
template <class Model>
void time_steps(benchmark::State& state, Model& model, const tprod::tensor3<float>& input, const nn::batch& b,
                const std::vector<std::size_t>& labels) {
  auto params = nn::parameters<float>(model);
  nn::adamw<float> optimizer;
  const auto one_step = [&] {
    const auto r = nn::classification_step(model, input, b, labels);
    nn::clip_grad_norm(params.grads, 1.0);
    nn::step(optimizer, params, 1e-4);
    params.zero_grad();
    return r.loss;
  };
  one_step();
  for (auto _ : state) benchmark::DoNotOptimize(one_step());
  state.counters["parameters"] = double(params.count());
  state.counters["examples_per_s"] = benchmark::Counter(double(b.size), benchmark::Counter::kIsIterationInvariantRate);
}

std::vector<std::size_t> random_labels(std::size_t count, std::size_t classes) {
  std::mt19937_64 rng(3);
  std::vector<std::size_t> labels(count);
  for (auto& l : labels) l = std::uniform_int_distribution<std::size_t>(0, classes - 1)(rng);
  return labels;
}

/// tcp_vit's pair: p = 1 over 16 values per patch (Std-ViT) or p = 4 over 4 values per phase (TCP-ViT).
void vit(benchmark::State& state, bool tcp, std::size_t batch_size) {
  constexpr std::size_t patches = 49, channels = 4, positions = 4, slice_width = 16, heads = 4, r_ff = 4;
  nn::vit_config c;
  c.patches = patches;
  c.classes = 10;
  c.layers = 4;
  c.dropout = 0;
  c.patch_features = tcp ? positions : positions * channels;
  c.layer = tcp ? nn::paper001_config(slice_width, channels, heads, r_ff)
                : nn::paper001_config(slice_width * channels, 1, heads, r_ff);
  if (!tcp) c.layer.norm = nn::layer_norm_kind::original_domain;
  const auto input = tprod::random_tensor3<float>(batch_size * patches, c.patch_features, tcp ? channels : 1, 2);
  const nn::batch b(batch_size);
  const auto labels = random_labels(batch_size, c.classes);
  if (tcp) {
    auto model = nn::make_vit_classifier<float>(c, tprod::dct{});
    time_steps(state, model, input, b, labels);
  } else {
    auto model = nn::make_vit_classifier<float>(c, tprod::identity_transform{});
    time_steps(state, model, input, b, labels);
  }
}

/// ltransformer_text's pair: Std (p = 1) or T4 (p = 4 under the DCT), the same width, heads, d_ff and depth.
void text(benchmark::State& state, std::size_t slices, std::size_t width, std::size_t length, std::size_t batch_size) {
  nn::text_classifier_config c;
  c.vocabulary = 20000;
  c.width = width;
  c.heads = 4;
  c.hidden = 4 * width;
  c.layers = 4;
  c.slices = slices;
  std::mt19937_64 rng(2);
  std::vector<std::size_t> tokens(batch_size * length);
  for (auto& t : tokens) t = std::uniform_int_distribution<std::size_t>(2, c.vocabulary - 1)(rng);
  const nn::batch b(batch_size, tokens, std::vector<std::size_t>(batch_size, length));
  const auto labels = random_labels(batch_size, c.classes);
  if (slices == 1) {
    auto model = nn::make_text_classifier<float>(c, tprod::identity_transform{});
    time_steps(state, model, {}, b, labels);
  } else {
    auto model = nn::make_text_classifier<float>(c, tprod::dct{});
    time_steps(state, model, {}, b, labels);
  }
}

}  // namespace

BENCHMARK_CAPTURE(vit, std_vit, false, 64)->Name("train_step/std_vit")->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2)->Repetitions(3);
BENCHMARK_CAPTURE(vit, tcp_vit, true, 64)->Name("train_step/tcp_vit")->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2)->Repetitions(3);
BENCHMARK_CAPTURE(text, std_d128, 1, 128, 128, 32)->Name("train_step/std/d128")->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2)->Repetitions(3);
BENCHMARK_CAPTURE(text, t4_d128, 4, 128, 128, 32)->Name("train_step/t4/d128")->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2)->Repetitions(3);
// CI's smoke cases: the same code at toy sizes.
BENCHMARK_CAPTURE(vit, tcp_vit_smoke, true, 2)->Name("train_step/tcp_vit/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(text, t4_smoke, 4, 16, 8, 2)->Name("train_step/t4/smoke")->Unit(benchmark::kMillisecond)->UseRealTime();
