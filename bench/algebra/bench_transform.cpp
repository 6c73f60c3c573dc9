// SPDX-License-Identifier: Apache-2.0
// Transforms along the tubes, every policy and path (automatic beside the forced ones, on 64×64 and 40×100 slices),
// p ∈ {4, 16, 64, 256}, bytes/s of the input tensor; the DCT of a 256×256×16 float tensor beside the limit of copying
// it; the DFT of complex tensors on each path (transform/dft_complex/<path>/m{64,256}_n{64,256}_p{4,8,16,64});
// and the grid transform/{dct,dft,matrix}/m{64,256,1024}_n{64,256,1024}_p{4,8,16,64} (automatic path, all threads)
// beside copy_limit of the same bytes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <string>
#include <utility>

#include "bench_names.hpp"
#include "tprod/tprod.hpp"

namespace {

template <class T = float, class L>
void run_transform(benchmark::State& state, const L& policy, std::size_t m, std::size_t n, std::size_t p,
                   tprod::execution ex = {}) {
  const auto a = tprod::random_tensor3<T>(m, n, p, 1);
  tprod::transformed<typename L::template original_scalar<T>, L> out(a.extents(), policy, tprod::uninitialized);
  for (auto _ : state) {
    tprod::transform_into(ex, a, out);
    benchmark::DoNotOptimize(out.data().data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(a.size() * sizeof(T)));
}

/// memcpy of the tensor on as many threads as a transform of it uses (all of them from parallel_min_elements
/// elements, one below), each thread copying one contiguous share: the machine's copy, not a loop of ours.
template <class T = float>
void copy_limit(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p) {
  const auto a = tprod::random_tensor3<T>(m, n, p, 1);
  tprod::tensor3<T> out(m, n, p, tprod::uninitialized);
  const std::size_t size = a.size();
  const int threads = size < tprod::backend::cpu::parallel_min_elements ? 1 : int(tprod::num_threads());
  for (auto _ : state) {
#pragma omp parallel num_threads(threads)
    {
#if defined(_OPENMP)
      const auto t = std::size_t(omp_get_thread_num()), team = std::size_t(omp_get_num_threads());
#else
      const std::size_t t = 0, team = 1;
#endif
      const std::size_t begin = size * t / team, end = size * (t + 1) / team;
      std::memcpy(out.data() + begin, a.data() + begin, (end - begin) * sizeof(T));
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(a.size() * sizeof(T)));
}

/// The DCT as one (m·n)×p by p×p product with Φᵀ (the dense tube kernel for p ≤ 64), without the even/odd split
/// the DCT path takes: the split's baseline.
void dct_full_gemm(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p, std::size_t threads) {
  const auto a = tprod::random_tensor3<float>(m, n, p, 1);
  tprod::tensor3<float> out(m, n, p, tprod::uninitialized);
  const auto phi_t = tprod::dct{}.forward_factor<float>(p);
  const std::size_t team = threads != 0 ? threads : tprod::num_threads();
  for (auto _ : state) {
    tprod::backend::cpu::apply_along_tubes<float, float, float>(a.view(), *phi_t, out.view(), team);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(a.size() * sizeof(float)));
}

/// A general p×p Z: random entries in [−1, 1] plus p·I, strictly diagonally dominant, so invertible and well
/// conditioned whatever the random draw.
Eigen::MatrixXd dominant_z(std::size_t p) {
  return Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p)) +
         double(p) * Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p));
}

const bool registered = [] {
  using tprod::transform_path;
  // The target case: automatic path, beside the copy of the same tensor.
  benchmark::RegisterBenchmark("transform/dct/m256_n256_p16", [](benchmark::State& s) {
    run_transform(s, tprod::dct{}, 256, 256, 16);
  })->UseRealTime();
  benchmark::RegisterBenchmark("transform/dct/m256_n256_p16/t1", [](benchmark::State& s) {
    run_transform(s, tprod::dct{}, 256, 256, 16, tprod::execution{tprod::transform_path::automatic, 1});
  })->UseRealTime();
  benchmark::RegisterBenchmark("copy_limit/m256_n256_p16", [](benchmark::State& s) { copy_limit(s, 256, 256, 16); })
      ->UseRealTime();
  benchmark::RegisterBenchmark("transform/dct/full_gemm/m256_n256_p16", [](benchmark::State& s) {
    dct_full_gemm(s, 256, 256, 16, 0);
  })->UseRealTime();
  benchmark::RegisterBenchmark("transform/dct/full_gemm/m256_n256_p16/t1", [](benchmark::State& s) {
    dct_full_gemm(s, 256, 256, 16, 1);
  })->UseRealTime();
  benchmark::RegisterBenchmark("transform/dft/m256_n256_p16", [](benchmark::State& s) {
    run_transform(s, tprod::dft{}, 256, 256, 16);
  });
  // Every transform on both paths; 64×64 slices so that p = 256 stays a 4 MiB tensor, and 40×100 slices beside
  // them: FFTW's strided batches are much slower when the tube stride m·n is a multiple of a large power of two.
  // automatic beside both forced paths: the measured choice must not be more than 10% slower than the faster.
  const std::pair<const char*, transform_path> paths[] = {
      {"gemm", transform_path::gemm}, {"fftw", transform_path::fftw}, {"automatic", transform_path::automatic}};
  for (std::size_t p : {4, 16, 64, 256}) {
    const std::string sh = bench::shape_name(64, 64, p);
    for (const auto& shape_mn : {std::pair<std::size_t, std::size_t>{64, 64}, {40, 100}}) {
      for (const auto& named_path : paths) {
        // not bindings: the lambdas below capture them
        const std::size_t m = shape_mn.first, n = shape_mn.second;
        const char* name = named_path.first;
        const transform_path path = named_path.second;
        if (path == transform_path::fftw && !TPROD_HAS_FFTW) continue;
        const std::string at = std::string(name) + "/" + bench::shape_name(m, n, p);
        benchmark::RegisterBenchmark(("transform/dct/" + at).c_str(), [=](benchmark::State& s) {
          run_transform(s, tprod::dct{}, m, n, p, tprod::execution{path});
        })->UseRealTime();
        benchmark::RegisterBenchmark(("transform/dft/" + at).c_str(), [=](benchmark::State& s) {
          run_transform(s, tprod::dft{}, m, n, p, tprod::execution{path});
        })->UseRealTime();
      }
    }
    benchmark::RegisterBenchmark(("transform/matrix/gemm/" + sh).c_str(), [=](benchmark::State& s) {
      run_transform(s, tprod::matrix_transform<double>(dominant_z(p)), 64, 64, p);
    });
    benchmark::RegisterBenchmark(("transform/identity/" + sh).c_str(),
                                 [=](benchmark::State& s) { run_transform(s, tprod::identity_transform{}, 64, 64, p); });
    benchmark::RegisterBenchmark(("copy_limit/" + sh).c_str(), [=](benchmark::State& s) { copy_limit(s, 64, 64, p); });
  }
  // The DFT of complex float tensors on each path, beside a copy of the same bytes: the tube kernel from p = 5
  // (complex_dft_kernel_min_tubes), Eigen's complex GEMM below.
  for (std::size_t s : {64, 256})
    for (std::size_t p : {4, 8, 16, 64}) {
      const std::string sh = bench::shape_name(s, s, p);
      for (const auto& [name, path] : paths) {
        if (path == transform_path::fftw && !TPROD_HAS_FFTW) continue;
        benchmark::RegisterBenchmark(("transform/dft_complex/" + std::string(name) + "/" + sh).c_str(),
                                     [=, path = path](benchmark::State& st) {
                                       run_transform<std::complex<float>>(st, tprod::dft{}, s, s, p,
                                                                          tprod::execution{path});
                                     })
            ->UseRealTime();
      }
      benchmark::RegisterBenchmark(("copy_limit/complex/" + sh).c_str(), [=](benchmark::State& st) {
        copy_limit<std::complex<float>>(st, s, s, p);
      })->UseRealTime();
    }
  // The grid: each transform beside a copy of the same bytes, for the ratio and the bandwidth plot of
  // docs/performance.md. The cases registered above keep their names.
  for (std::size_t m : {64, 256, 1024})
    for (std::size_t n : {64, 256, 1024})
      for (std::size_t p : {4, 8, 16, 64}) {
        const std::string sh = bench::shape_name(m, n, p);
        const bool registered_above = m == 256 && n == 256 && p == 16;
        if (!registered_above) {
          benchmark::RegisterBenchmark(("transform/dct/" + sh).c_str(), [=](benchmark::State& s) {
            run_transform(s, tprod::dct{}, m, n, p);
          })->UseRealTime();
          benchmark::RegisterBenchmark(("transform/dft/" + sh).c_str(), [=](benchmark::State& s) {
            run_transform(s, tprod::dft{}, m, n, p);
          })->UseRealTime();
        }
        benchmark::RegisterBenchmark(("transform/matrix/" + sh).c_str(), [=](benchmark::State& s) {
          run_transform(s, tprod::matrix_transform<double>(dominant_z(p)), m, n, p);
        })->UseRealTime();
        if (!registered_above && !(m == 64 && n == 64 && p != 8))
          benchmark::RegisterBenchmark(("copy_limit/" + sh).c_str(), [=](benchmark::State& s) {
            copy_limit(s, m, n, p);
          })->UseRealTime();
      }
  return true;
}();

}  // namespace
