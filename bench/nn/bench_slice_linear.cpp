// SPDX-License-Identifier: Apache-2.0
// The nn layers' slice products at the compressed models' widths: Y = X·W + 1·bᵀ for one slice of B·T = 3,200 rows
// (TCP-ViT's batch of 64 sequences of 50) and inner × outer widths from 16 to 64, float, one thread:
//   slice_linear/k<in>_q<out>   tprod's slice_linear task (the tube kernel's small GEMM for in ≤ 64)
//   eigen_gemm/k<in>_q<out>     the same product as Eigen's GEMM, the bias written first (what the task did before)
//   libxsmm/k<in>_q<out>        the same product by LIBXSMM's JIT small-matrix kernel over blocks of 64 rows, the bias
//                               written first (built where Debian's libxsmm-dev is installed: the anchor of small GEMMs)
// Their ratios in one run are the small GEMM's gain over Eigen and its distance from LIBXSMM (docs/performance.md).
#include <benchmark/benchmark.h>

#if TPROD_BENCH_LIBXSMM
#include <libxsmm.h>
#endif

#include "bench_threads.hpp"
#include "tprod/core/random.hpp"
#include "tprod/nn/detail/slice_gemm.hpp"

namespace {

constexpr std::size_t rows = 3200;

void slice_linear(benchmark::State& state, std::size_t in, std::size_t out) {
  const bench::thread_count one(1);
  const auto x = tprod::random_tensor3<float>(rows, in, 1, 1), w = tprod::random_tensor3<float>(in, out, 1, 2);
  const auto b = tprod::random_tensor3<float>(1, out, 1, 3);
  tprod::tensor3<float> y;
  for (auto _ : state) {
    tprod::nn::detail::slice_linear_forward(x, w, b, 0, out, y);
    benchmark::DoNotOptimize(y.data());
  }
}

void eigen_gemm(benchmark::State& state, std::size_t in, std::size_t out) {
  const bench::thread_count one(1);
  using matrix = Eigen::MatrixXf;
  const matrix x = matrix::Random(Eigen::Index(rows), Eigen::Index(in)), w = matrix::Random(Eigen::Index(in), Eigen::Index(out));
  const Eigen::RowVectorXf b = Eigen::RowVectorXf::Random(Eigen::Index(out));
  matrix y = matrix::Zero(Eigen::Index(rows), Eigen::Index(out));
  for (auto _ : state) {
    y.rowwise() = b;
    y.noalias() += x * w;
    benchmark::DoNotOptimize(y.data());
  }
}

#if TPROD_BENCH_LIBXSMM
/// Y = 1·bᵀ + X·W with LIBXSMM's kernel for a block of `block` rows (lda = ldc = rows, β = 1), called down the rows.
void libxsmm(benchmark::State& state, std::size_t in, std::size_t out) {
  const bench::thread_count one(1);
  using matrix = Eigen::MatrixXf;
  const matrix x = matrix::Random(Eigen::Index(rows), Eigen::Index(in)), w = matrix::Random(Eigen::Index(in), Eigen::Index(out));
  const Eigen::RowVectorXf b = Eigen::RowVectorXf::Random(Eigen::Index(out));
  matrix y = matrix::Zero(Eigen::Index(rows), Eigen::Index(out));
  constexpr libxsmm_blasint block = 64;
  static_assert(rows % block == 0, "the rows are whole blocks");
  const libxsmm_blasint ld = rows, ldb = libxsmm_blasint(in);
  const float alpha = 1, beta = 1;
  const int flags = LIBXSMM_GEMM_FLAG_NONE, prefetch = LIBXSMM_PREFETCH_NONE;
  const libxsmm_smmfunction kernel = libxsmm_smmdispatch(block, libxsmm_blasint(out), libxsmm_blasint(in), &ld, &ldb,
                                                         &ld, &alpha, &beta, &flags, &prefetch);
  if (!kernel) return state.SkipWithError("LIBXSMM made no kernel for this shape");
  for (auto _ : state) {
    y.rowwise() = b;
    for (std::size_t i = 0; i < rows; i += block) kernel(x.data() + i, w.data(), y.data() + i);
    benchmark::DoNotOptimize(y.data());
  }
  const matrix expected = (x * w).rowwise() + b;
  if ((expected - y).cwiseAbs().maxCoeff() > 1e-4f * float(in)) state.SkipWithError("LIBXSMM's product differs");
}
#define TPROD_LIBXSMM_CASE(in, out) \
  BENCHMARK_CAPTURE(libxsmm, k##in##_q##out, in, out)->Name("libxsmm/k" #in "_q" #out)->UseRealTime();
#else
#define TPROD_LIBXSMM_CASE(in, out)
#endif

#define TPROD_SLICE_CASES(in, out)                                                                            \
  BENCHMARK_CAPTURE(slice_linear, k##in##_q##out, in, out)->Name("slice_linear/k" #in "_q" #out)->UseRealTime(); \
  BENCHMARK_CAPTURE(eigen_gemm, k##in##_q##out, in, out)->Name("eigen_gemm/k" #in "_q" #out)->UseRealTime();    \
  TPROD_LIBXSMM_CASE(in, out)
TPROD_SLICE_CASES(16, 16)
TPROD_SLICE_CASES(16, 48)
TPROD_SLICE_CASES(16, 64)
TPROD_SLICE_CASES(64, 16)
TPROD_SLICE_CASES(32, 32)
TPROD_SLICE_CASES(32, 96)
TPROD_SLICE_CASES(64, 64)

}  // namespace
