// SPDX-License-Identifier: Apache-2.0
// Tucker of one BERT-base attention layer, W_all ∈ ℝ^{768×64×4×12} (TensorLLM's multi-head tensorisation), with
// shared factors over modes 0, 1, 2 at multilinear ranks (256, 32, 4) (compression ratio 3.99).
// Baseline: what LASER does to the same layer, one SVD per weight matrix (four 768×768 BDCSVDs).
#include <Eigen/SVD>

#include "bench_decomp_common.hpp"

namespace {

using namespace bench_decomp;

const tprod::ndtensor<double>& w_all() {
  static const tprod::ndtensor<double> w = tprod::tensorize_heads(bert_attention(1), heads);
  return w;
}

tprod::tucker_options layer_options(tprod::subspace_method method) {
  return {.ranks = {256, 32, 4}, .modes = {0, 1, 2}, .max_sweeps = 2, .fit_tolerance = -1, .subspace = method};
}

void BM_EigenSvdPerMatrix(benchmark::State& state) {
  const auto w = bert_attention(1);
  for (auto _ : state)
    for (const auto* m : {&w.query, &w.key, &w.value, &w.output}) {
      Eigen::BDCSVD<Eigen::MatrixXd> svd(*m, Eigen::ComputeThinU | Eigen::ComputeThinV);
      benchmark::DoNotOptimize(svd.singularValues().data());
    }
}
BENCHMARK(BM_EigenSvdPerMatrix)->Unit(benchmark::kMillisecond);

template <auto Algorithm>
void BM_TuckerWall(benchmark::State& state) {
  const auto method = state.range(0) == 0 ? tprod::subspace_method::svd : tprod::subspace_method::gram;
  state.SetLabel(method == tprod::subspace_method::svd ? "svd" : "gram");
  double error = 0;
  for (auto _ : state) {
    const auto r = Algorithm(w_all(), layer_options(method));
    error = r.relative_error;
    benchmark::DoNotOptimize(r.core.data());
  }
  state.counters["rel_error"] = error;
}
BENCHMARK(BM_TuckerWall<tprod::hosvd<double>>)->Name("BM_TuckerHosvdWall")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TuckerWall<tprod::st_hosvd<double>>)->Name("BM_TuckerStHosvdWall")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
// HOOI: HOSVD initialization plus exactly 2 sweeps
BENCHMARK(BM_TuckerWall<tprod::hooi<double>>)->Name("BM_TuckerHooi2Wall")->Arg(1)->Unit(benchmark::kMillisecond);

// The whole named procedure: tensorize, HOOI (2 sweeps, Gram factors), rebuild W^Q, W^K, W^V, W^O.
void BM_MultiheadTucker(benchmark::State& state) {
  const auto w = bert_attention(1);
  tprod::tucker_options o = layer_options(tprod::subspace_method::gram);
  o.modes.clear();
  for (auto _ : state) {
    const auto r = tprod::multihead_tucker(w, heads, o);
    state.counters["compression_ratio"] = r.tucker.compression_ratio;
    benchmark::DoNotOptimize(r.weights.query.data());
  }
}
BENCHMARK(BM_MultiheadTucker)->Unit(benchmark::kMillisecond);

// A small layer for the CI smoke run.
void BM_MultiheadTucker_smoke(benchmark::State& state) {
  const tprod::attention_weights<double> w{tprod::random_matrix<double>(32, 32, 1), tprod::random_matrix<double>(32, 32, 2),
                                           tprod::random_matrix<double>(32, 32, 3), tprod::random_matrix<double>(32, 32, 4)};
  for (auto _ : state) benchmark::DoNotOptimize(tprod::multihead_tucker(w, 4, {.ranks = {8, 4, 2}}).weights.query.data());
}
BENCHMARK(BM_MultiheadTucker_smoke);

}  // namespace
