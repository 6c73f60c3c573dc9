// SPDX-License-Identifier: Apache-2.0
// Tensor-Train / MPO of a BERT-base feed-forward matrix W ∈ ℝ^{768×3072} with 4 cores,
// I = 4·4·6·8 and J = 4·8·8·12 (merged modes 16, 32, 48, 96).
//  - TT-SVD of W as an MPO (full ranks, and capped at rank 32), against a BDCSVD of W itself.
//  - Y = X·W for a batch X ∈ ℝ^{L×768}, core by core (mpo_product), against the dense Eigen GEMM, across bond
//    ranks R: the crossover where the MPO stops paying off.
#include <Eigen/SVD>
#include <algorithm>

#include "bench_decomp_common.hpp"

namespace {

using namespace bench_decomp;

const tprod::nd_shape row_dims = {4, 4, 6, 8}, col_dims = {4, 8, 8, 12};

const Eigen::MatrixXd& ffn_weight() {
  static const Eigen::MatrixXd w = tprod::random_matrix<double>(d_model, d_ff, 7);
  return w;
}

void BM_EigenSvd768x3072(benchmark::State& state) {
  for (auto _ : state) {
    Eigen::BDCSVD<Eigen::MatrixXd> svd(ffn_weight(), Eigen::ComputeThinU | Eigen::ComputeThinV);
    benchmark::DoNotOptimize(svd.singularValues().data());
  }
}
BENCHMARK(BM_EigenSvd768x3072)->Unit(benchmark::kMillisecond);

// range(0): bond-rank cap (0: none, i.e. full ranks 16, 512, 96 and an exact MPO)
void BM_TtSvdMpo768x3072(benchmark::State& state) {
  const tprod::tt_options o{.max_rank = state.range(0) == 0 ? std::numeric_limits<std::size_t>::max() : std::size_t(state.range(0))};
  for (auto _ : state) {
    const auto m = tprod::mpo_from_matrix<double>(ffn_weight(), row_dims, col_dims, o);
    state.counters["parameters"] = double(m.parameter_count());
    benchmark::DoNotOptimize(m.cores.data());
  }
}
BENCHMARK(BM_TtSvdMpo768x3072)->Arg(0)->Arg(32)->Unit(benchmark::kMillisecond);

// An MPO with every bond rank min(R, full rank), random cores (the timing does not depend on the values).
tprod::mpo<double> mpo_of_rank(const tprod::nd_shape& ri, const tprod::nd_shape& cj, std::size_t rank) {
  tprod::mpo<double> m;
  std::size_t left = 1, total = 1;
  for (std::size_t n = 0; n < ri.size(); ++n) total *= ri[n] * cj[n];
  std::size_t prefix = 1;
  for (std::size_t n = 0; n < ri.size(); ++n) {
    prefix *= ri[n] * cj[n];
    const std::size_t right = n + 1 == ri.size() ? 1 : std::min({rank, prefix, total / prefix});
    m.cores.push_back(tprod::random_ndtensor<double>({left, ri[n], cj[n], right}, 100 + n));
    left = right;
  }
  return m;
}

// Flops of mpo_product: Σ_n 2·L·(J_1⋯J_{n−1})·R_{n−1}I_n·J_nR_n·(I_{n+1}⋯I_N).
double mpo_flops(const tprod::mpo<double>& m, std::size_t l) {
  double flops = 0, rows = double(l), tail = double(m.rows());
  const auto ri = m.row_dims(), cj = m.col_dims();
  for (std::size_t n = 0; n < m.order(); ++n) {
    tail /= double(ri[n]);
    flops += 2 * rows * double(m.cores[n].shape()[0] * ri[n]) * double(cj[n] * m.cores[n].shape()[3]) * tail;
    rows *= double(cj[n]);
  }
  return flops;
}

// range(0): batch L
void BM_EigenGemm768x3072(benchmark::State& state) {
  const auto l = std::size_t(state.range(0));
  const Eigen::MatrixXd x = tprod::random_matrix<double>(l, d_model, 9);
  Eigen::MatrixXd y{Eigen::Index(l), Eigen::Index(d_ff)};
  for (auto _ : state) {
    y.noalias() = x * ffn_weight();
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(l) * d_model * d_ff * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EigenGemm768x3072)->ArgName("L")->Arg(1)->Arg(128)->Unit(benchmark::kMicrosecond);

// range(0): batch L, range(1): bond rank R
void BM_MpoProduct768x3072(benchmark::State& state) {
  const auto l = std::size_t(state.range(0));
  const auto m = mpo_of_rank(row_dims, col_dims, std::size_t(state.range(1)));
  const Eigen::MatrixXd x = tprod::random_matrix<double>(l, d_model, 9);
  for (auto _ : state) benchmark::DoNotOptimize(tprod::mpo_product(x, m).data());
  const double flops = mpo_flops(m, l);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["flops_vs_dense"] = flops / (2.0 * double(l) * d_model * d_ff);
  state.counters["parameters"] = double(m.parameter_count());
}
BENCHMARK(BM_MpoProduct768x3072)
    ->ArgNames({"L", "R"})
    ->ArgsProduct({{1, 128}, {2, 4, 8, 16, 32}})
    ->Unit(benchmark::kMicrosecond);

// Small cases for the CI smoke run.
void BM_MpoProduct_smoke(benchmark::State& state) {
  const auto m = mpo_of_rank({4, 4, 4}, {4, 4, 4}, 2);
  const Eigen::MatrixXd x = tprod::random_matrix<double>(8, 64, 1);
  for (auto _ : state) benchmark::DoNotOptimize(tprod::mpo_product(x, m).data());
}
BENCHMARK(BM_MpoProduct_smoke);

void BM_TtSvdMpo_smoke(benchmark::State& state) {
  const Eigen::MatrixXd w = tprod::random_matrix<double>(16, 16, 2);
  for (auto _ : state) benchmark::DoNotOptimize(tprod::mpo_from_matrix<double>(w, {4, 4}, {4, 4}).cores.data());
}
BENCHMARK(BM_TtSvdMpo_smoke);

}  // namespace
