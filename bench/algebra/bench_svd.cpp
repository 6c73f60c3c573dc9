// The L-SVD and L-QR (float, DCT) beside their limits: p plain Eigen factorizations of the already transformed
// slices, computing the same factors (BDCSVD with thin U and V; HouseholderQR and its thin Q). The L-versions add
// the forward transform, the copies into the factor tensors and the inverse transforms of the factors.
#include <benchmark/benchmark.h>

#include <Eigen/QR>
#include <Eigen/SVD>
#include <string>

#include "tprod/algebra/qr.hpp"
#include "tprod/algebra/svd.hpp"
#include "tprod/core/random.hpp"
#include "tprod/transform.hpp"

namespace {

using matrix = Eigen::MatrixXf;

/// Runs a whole L-factorization (transform, slice factorizations, inverse transforms) of a random tensor.
template <class Factorize>
void lfactor(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p, Factorize factorize) {
  const auto a = tprod::random_tensor3<float>(m, n, p, 1);
  for (auto _ : state) {
    auto r = factorize(a);
    benchmark::DoNotOptimize(&r);
    benchmark::ClobberMemory();
  }
}

void svd_limit(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p) {
  const auto ahat = tprod::transform(tprod::random_tensor3<float>(m, n, p, 1), tprod::dct{});
  for (auto _ : state) {
    for (std::size_t k = 0; k < p; ++k) {
      const Eigen::BDCSVD<matrix> svd(ahat.slice(k), Eigen::ComputeThinU | Eigen::ComputeThinV);
      benchmark::DoNotOptimize(svd.matrixU().data());
    }
    benchmark::ClobberMemory();
  }
}

void qr_limit(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p) {
  const auto ahat = tprod::transform(tprod::random_tensor3<float>(m, n, p, 1), tprod::dct{});
  const auto r = Eigen::Index(std::min(m, n));
  for (auto _ : state) {
    for (std::size_t k = 0; k < p; ++k) {
      const Eigen::HouseholderQR<matrix> qr(ahat.slice(k));
      matrix q = qr.householderQ() * matrix::Identity(Eigen::Index(m), r);
      benchmark::DoNotOptimize(q.data());
      benchmark::DoNotOptimize(qr.matrixQR().data());
    }
    benchmark::ClobberMemory();
  }
}

const bool registered = [] {
  struct shape {
    std::size_t m, n, p;
  };
  // 256×256×16 and 64×64×64 are the reported cases; 16×16×8 is the CI smoke run.
  for (const shape s : {shape{256, 256, 16}, shape{64, 64, 64}, shape{16, 16, 8}}) {
    const std::string sh = "m" + std::to_string(s.m) + "_n" + std::to_string(s.n) + "_p" + std::to_string(s.p);
    benchmark::RegisterBenchmark(("lsvd/dct/" + sh).c_str(), [=](benchmark::State& st) {
      lfactor(st, s.m, s.n, s.p, [](const auto& a) { return tprod::svd(a, tprod::dct{}); });
    })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("svd_limit/" + sh).c_str(), [=](benchmark::State& st) { svd_limit(st, s.m, s.n, s.p); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("lqr/dct/" + sh).c_str(), [=](benchmark::State& st) {
      lfactor(st, s.m, s.n, s.p, [](const auto& a) { return tprod::qr(a, tprod::dct{}); });
    })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("qr_limit/" + sh).c_str(), [=](benchmark::State& st) { qr_limit(st, s.m, s.n, s.p); })
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
