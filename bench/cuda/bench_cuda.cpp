// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's L-product (float, DCT) on one GPU beside honest limits, all in device time:
// - the sweep lproduct/dct/s{S}_p{P}: C = A *_L B for S×S×P tensors (S ∈ {256, 1024, 4096}, P ∈ {4, 16, 64}),
//   two forward transforms, one strided-batched GEMM, one inverse transform, as tprod::product(ex, a, b, dct{});
// - beside each, gemm_batched_limit/s{S}_p{P}: the strided-batched GEMM of the same shapes alone
//   (raw::gemm_strided_batched on preallocated tensors), the ceiling of the L-product's GEMM part;
// - transform/dct/s1024_p16: one forward transform into a preallocated transform-domain tensor, beside
//   memcpy_limit/s1024_p16: a device-to-device copy of the same bytes, the memory-bandwidth ceiling; beside them
//   transform_gemm (one cuBLAS GEMM, (N, N)) and, at P ∈ {32, 64}, transform_gemm_bt (its (N, T) form, the route
//   of factors too large for the tube kernel);
// - …/tf32 (S = 4096 only): the L-product and the GEMM limit with TF32 tensor cores (the only cases that use them).
// lsvd/dct/m64_n64_p256 comes with the device L-SVD (the CPU benchmark has it in bench/algebra/bench_svd.cpp);
// svd_slices_limit/… times its slice SVDs alone (past 32×32 tprod's batched one-sided Jacobi), beside
// svd_slices_cusolver/…, the same through cuSOLVER alone (one gesvdj per slice past 32×32).
// encoder_layer/{standard,lproduct_p4}/d768: one encoder layer's forward + backward (B = 8, T = 128, FP32), as
// bench_nn times it on the CPU; items_per_second counts tokens. PyTorch's peer: bench/peers/torch_encoder_gpu.py.
//
// Timing: every case runs on its own stream (cudaStreamCreate), which is also the thread's default device execution
// for the case (execution_scope), so that the temporaries tprod allocates are stream-ordered on that stream too.
// Each iteration is bracketed by two CUDA events on the stream and reported with SetIterationTime (UseManualTime):
// device time, including any gap in which the GPU waits for the host to enqueue the next kernel. One untimed
// warm-up call per case uploads the DCT factor and creates the cuBLAS handle first. main() keeps freed device
// memory in CUDA's pool across synchronizations (release threshold: unlimited), as PyTorch's caching allocator
// does, so that the timings measure the computation rather than the driver mapping fresh pages; the pool is
// trimmed after every case.
//
// Float throughout, FP32 GEMMs unless the name says tf32. GFLOP/s counts
//   L-product:        2·S³·P (the P slice GEMMs) + 2·3·S²·P² (three tube transforms, each an (S²×P)·(P×P) GEMM);
//   GEMM limit:       2·S³·P;
//   transform:        2·S²·P²;
// so ratios of lproduct and gemm_batched_limit GFLOP/s are close to fractions of the limit. bytes_per_second (and
// GB/s) count what is read plus what is written: 2·S²·P·4 bytes for the transform and the copy.
// Without a CUDA device the program prints one line and exits with code 77 (CTest: skipped); it exits with 1 when
// a case failed for another reason than a lack of device memory (a skipped case says why in its error_message).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tprod/cuda.hpp"
#include "tprod/nn/encoder.hpp"
#include "tprod/transform/identity_transform.hpp"

namespace {

/// Throws tprod::cuda_error for a failed CUDA runtime call of the benchmark's own (streams, events, the pool).
void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw tprod::cuda_error(std::string("bench_cuda: ") + call + " failed: " + cudaGetErrorName(status) + ", " +
                            cudaGetErrorString(status));
}

cudaMemPool_t default_pool() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  return pool;
}

/// A case's stream (the thread's default device execution while the case lives) and the two events around each
/// timed operation. Every device tensor of a case must be destroyed before it (they are freed on its stream).
class device_case {
 public:
  device_case() {
    check(cudaStreamCreate(&stream_), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~device_case() {
    // Everything the case enqueued (frees included) finishes before its stream goes; then the pool gives its
    // memory back, so that the next case (or a skipped, too large one) starts from an empty pool.
    (void)cudaStreamSynchronize(stream_);
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
    (void)cudaStreamDestroy(stream_);
    cudaMemPool_t pool = nullptr;
    int device = 0;
    if (cudaGetDevice(&device) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess)
      (void)cudaMemPoolTrimTo(pool, 0);
    (void)cudaGetLastError();
  }
  device_case(const device_case&) = delete;
  device_case& operator=(const device_case&) = delete;

  /// The execution of the case: its stream, FP32 GEMMs unless tf32.
  tprod::cuda::execution execution(bool tf32 = false) const { return tprod::cuda::execution{stream_, tf32}; }
  cudaStream_t stream() const { return stream_; }

  /// Device seconds of one call of op, between two events on the case's stream.
  template <class Op>
  double seconds(Op& op) {
    check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    op();
    check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  }

  /// One untimed warm-up call, then one timed call per benchmark iteration.
  template <class Op>
  void time(benchmark::State& state, Op op) {
    op();
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    for (auto _ : state) state.SetIterationTime(seconds(op));
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// Cases that failed for another reason than a lack of device memory (main's exit status).
int failed_cases = 0;

/// Runs body(device_case&) with the case's stream as the thread's default device execution. A failure skips the
/// case with its message: the largest shapes may not fit in device memory (not counted as a failure), anything
/// else is counted in failed_cases.
template <class Body>
void run_case(benchmark::State& state, Body body) {
  try {
    device_case dc;
    const tprod::cuda::execution_scope scope(dc.execution());
    body(dc);
  } catch (const tprod::cuda_error& e) {
    const std::string_view what = e.what();
    if (what.find("cudaErrorMemoryAllocation") == what.npos && what.find("ALLOC_FAILED") == what.npos) ++failed_cases;
    state.SkipWithError(e.what());
  } catch (const std::exception& e) {
    ++failed_cases;
    state.SkipWithError((std::string("bench_cuda: ") + e.what()).c_str());
  }
}

double gflop_lproduct(std::size_t s, std::size_t p) {
  const double sd = double(s), pd = double(p);
  return (2.0 * sd * sd * sd * pd + 2.0 * 3.0 * sd * sd * pd * pd) * 1e-9;
}
double gflop_gemm(std::size_t s, std::size_t p) {
  const double sd = double(s);
  return 2.0 * sd * sd * sd * double(p) * 1e-9;
}
double gflop_transform(std::size_t s, std::size_t p) {
  const double sd = double(s), pd = double(p);
  return 2.0 * sd * sd * pd * pd * 1e-9;
}

void set_gflops(benchmark::State& state, double gflop) {
  state.counters["GFLOP/s"] = benchmark::Counter(gflop, benchmark::Counter::kIsIterationInvariantRate);
}
/// bytes_per_second (Google Benchmark's own) and the same as GB/s.
void set_bytes(benchmark::State& state, double bytes) {
  state.SetBytesProcessed(std::int64_t(bytes) * std::int64_t(state.iterations()));
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
void set_items(benchmark::State& state, std::size_t items) {
  state.SetItemsProcessed(std::int64_t(items) * std::int64_t(state.iterations()));
}

/// C = A *_L B (DCT) for S×S×P float tensors.
void lproduct(benchmark::State& state, std::size_t s, std::size_t p, bool tf32) {
  run_case(state, [&](device_case& dc) {
    const tprod::cuda::execution ex = dc.execution(tf32);
    const auto a = tprod::cuda::random_tensor3<float>(s, s, p, 1, ex);
    const auto b = tprod::cuda::random_tensor3<float>(s, s, p, 2, ex);
    dc.time(state, [&] {
      auto c = tprod::product(ex, a, b, tprod::dct{});
      benchmark::DoNotOptimize(c.data());
    });
  });
  set_gflops(state, gflop_lproduct(s, p));
  set_items(state, s * s * p);  // entries of C
}

/// The L-product's GEMM part alone: C_k = A_k·B_k for the P slices, one strided-batched GEMM, preallocated.
void gemm_batched_limit(benchmark::State& state, std::size_t s, std::size_t p, bool tf32) {
  run_case(state, [&](device_case& dc) {
    const auto a = tprod::cuda::random_tensor3<float>(s, s, p, 1, dc.execution());
    const auto b = tprod::cuda::random_tensor3<float>(s, s, p, 2, dc.execution());
    tprod::device_tensor3<float> c(s, s, p, tprod::uninitialized);
    dc.time(state, [&] {
      tprod::backend::cuda::raw::gemm_strided_batched<float>(s, s, s, p, a.data(), b.data(), c.data(), tf32,
                                                             dc.stream());
    });
  });
  set_gflops(state, gflop_gemm(s, p));
  set_items(state, s * s * p);
}

/// Â = L(A) (DCT) into a preallocated transform-domain tensor.
void transform(benchmark::State& state, std::size_t s, std::size_t p) {
  run_case(state, [&](device_case& dc) {
    const tprod::cuda::execution ex = dc.execution();
    const auto a = tprod::cuda::random_tensor3<float>(s, s, p, 1, ex);
    tprod::transformed<float, tprod::dct, tprod::dextents3, tprod::device_space> out(tprod::dextents3(s, s, p),
                                                                                       tprod::dct{}, tprod::uninitialized);
    dc.time(state, [&] { tprod::transform_into(ex, a, out); });
  });
  set_gflops(state, gflop_transform(s, p));
  set_bytes(state, 2.0 * double(s * s * p * sizeof(float)));  // A read, Â written
  set_items(state, s * s * p);
}

/// The same shapes through one cuBLAS GEMM, (S²×P)·(P×P): as (N, N) (raw::gemm), the alternative the tube kernel
/// is measured against, or as (N, T) with the factor's transpose stored (raw::gemm_bt), the route the transform
/// takes for factors too large for the tube kernel.
void transform_gemm(benchmark::State& state, std::size_t s, std::size_t p, bool factor_transposed) {
  run_case(state, [&](device_case& dc) {
    const auto a = tprod::cuda::random_tensor3<float>(s, s, p, 1, dc.execution());
    const auto factor = tprod::cuda::random_tensor3<float>(p, p, 1, 2, dc.execution());
    tprod::device_tensor3<float> out(s, s, p, tprod::uninitialized);
    namespace raw = tprod::backend::cuda::raw;
    const auto gemm = factor_transposed ? raw::gemm_bt<float> : raw::gemm<float>;
    dc.time(state,
            [&] { gemm(s * s, p, p, a.data(), s * s, factor.data(), p, out.data(), s * s, false, dc.stream()); });
  });
  set_gflops(state, gflop_transform(s, p));
  set_bytes(state, 2.0 * double(s * s * p * sizeof(float)));
  set_items(state, s * s * p);
}

/// The L-SVD (DCT, economy) of an m×n×p float tensor: transform, p slice SVDs, factors mapped back.
void lsvd(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p) {
  run_case(state, [&](device_case& dc) {
    const tprod::cuda::execution ex = dc.execution();
    const auto a = tprod::cuda::random_tensor3<float>(m, n, p, 1, ex);
    dc.time(state, [&] {
      auto r = tprod::svd(a, tprod::dct{});
      benchmark::DoNotOptimize(r.u.data());
    });
  });
  set_items(state, m * n * p);
}

/// The L-SVD's slice SVDs alone, on a preallocated transform-domain tensor and factors: the route svd takes
/// (`cusolver`: cuSOLVER's alone, the baseline of tprod's batched one-sided Jacobi past 32×32).
void svd_slices_limit(benchmark::State& state, std::size_t m, std::size_t n, std::size_t p, bool cusolver) {
  run_case(state, [&](device_case& dc) {
    const auto a = tprod::cuda::random_tensor3<float>(m, n, p, 1, dc.execution());
    const std::size_t r = std::min(m, n);
    tprod::device_tensor3<float> u(m, r, p, tprod::uninitialized), v(n, r, p, tprod::uninitialized);
    std::vector<float> sigma(r * p);
    std::vector<int> info(p);
    dc.time(state, [&] {
      const auto route = cusolver ? tprod::backend::cuda::raw::svd_slices_cusolver<float>
                                  : tprod::backend::cuda::raw::svd_slices<float>;
      route(a.data(), m, n, p, r, r, u.data(), v.data(), sigma.data(), info.data(), dc.stream());
    });
  });
  set_items(state, m * n * p);
}

/// A device-to-device copy of an S×S×P float tensor's bytes: the bandwidth ceiling of the transform.
void memcpy_limit(benchmark::State& state, std::size_t s, std::size_t p) {
  const std::size_t bytes = s * s * p * sizeof(float);
  run_case(state, [&](device_case& dc) {
    const auto src = tprod::cuda::random_tensor3<float>(s, s, p, 1, dc.execution());
    tprod::device_tensor3<float> dst(s, s, p, tprod::uninitialized);
    dc.time(state, [&] {
      tprod::backend::cuda::raw::copy_bytes(dst.data(), src.data(), bytes,
                                            tprod::backend::cuda::raw::direction::device_to_device, dc.stream());
    });
  });
  set_bytes(state, 2.0 * double(bytes));  // read and written
  set_items(state, s * s * p);
}

/// "s<s>_p<p>" (starting from std::string, as bench::shape_name does, for GCC 12's false -Wrestrict).
/// One encoder layer, forward + backward, on the device: float, no TF32, B = 8 sequences of T = 128 tokens, d = 768,
/// 8 heads, FFN 3072, GELU, post-norm (paper000_config), the standard layer (p = 1, identity) or the L-product layer
/// with p = 4 (DCT); bench_nn's encoder_layer cases on the GPU. PyTorch's peer: bench/peers/torch_encoder_gpu.py.
template <class L>
void encoder_layer(benchmark::State& state, std::size_t p, const L& l) {
  namespace nn = tprod::nn;
  constexpr std::size_t batch = 8, length = 128, d = 768;
  const nn::layer_config cfg = nn::paper000_config(d, 8, 4 * d, p, nn::activation::gelu);
  run_case(state, [&](device_case& dc) {
    const auto prm = nn::copy(nn::make_encoder_params<float>(cfg, l, 1), tprod::device_space{});
    using A = std::remove_cvref_t<decltype(prm.attn)>;
    nn::encoder_grads<float, L, A> grads{{}, nn::zeros_like(prm)};
    const auto x = tprod::cuda::random_tensor3<float>(batch * length, cfg.width, p, 2, dc.execution());
    const auto dy = tprod::cuda::random_tensor3<float>(batch * length, cfg.width, p, 3, dc.execution());
    tprod::device_tensor3<float> y;
    nn::encoder_saved<float, nn::attention_cache_of<A>> saved;
    nn::encoder_workspace<float, nn::attention_workspace_of<A>> ws;
    dc.time(state, [&] {
      nn::encoder_layer_forward(prm, x, batch, {}, y, saved, ws);
      nn::encoder_layer_backward(prm, saved, dy, grads, ws);
    });
  });
  set_items(state, batch * length);  // tokens per second
}

std::string square_name(std::size_t s, std::size_t p) {
  return std::string("s") + std::to_string(s) + "_p" + std::to_string(p);
}

void add(const std::string& name, void (*fn)(benchmark::State&, std::size_t, std::size_t, bool), std::size_t s,
         std::size_t p, bool tf32) {
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { fn(st, s, p, tf32); })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

void register_cases() {
  for (std::size_t s : {256, 1024, 4096})
    for (std::size_t p : {4, 16, 64}) {
      const std::string sh = square_name(s, p);
      add(std::string("lproduct/dct/") + sh, lproduct, s, p, false);
      add(std::string("gemm_batched_limit/") + sh, gemm_batched_limit, s, p, false);
    }
  for (std::size_t p : {4, 16, 64}) {
    const std::string sh = square_name(4096, p);
    add(std::string("lproduct/dct/") + sh + "/tf32", lproduct, 4096, p, true);
    add(std::string("gemm_batched_limit/") + sh + "/tf32", gemm_batched_limit, 4096, p, true);
  }
  const auto add_us = [](const std::string& name, auto fn, auto... shape) {
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { fn(st, shape...); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  };
  for (std::size_t p : {4, 16, 64}) {
    const std::string sh = square_name(1024, p);
    add_us(std::string("transform/dct/") + sh, transform, 1024, p);
    add_us(std::string("transform_gemm/") + sh, transform_gemm, 1024, p, false);
    add_us(std::string("memcpy_limit/") + sh, memcpy_limit, 1024, p);
  }
  for (std::size_t s : {1024, 4096})
    for (std::size_t p : {32, 64}) {
      const std::string sh = square_name(s, p);
      if (s != 1024 || p != 64) add_us(std::string("transform_gemm/") + sh, transform_gemm, s, p, false);
      add_us(std::string("transform_gemm_bt/") + sh, transform_gemm, s, p, true);
    }
  add(std::string("encoder_layer/standard/d768"),
      [](benchmark::State& st, std::size_t, std::size_t, bool) { encoder_layer(st, 1, tprod::identity_transform{}); },
      0, 0, false);
  add(std::string("encoder_layer/lproduct_p4/d768"),
      [](benchmark::State& st, std::size_t, std::size_t, bool) { encoder_layer(st, 4, tprod::dct{}); }, 0, 0, false);
  for (const auto& [m, n, p] : {std::tuple<std::size_t, std::size_t, std::size_t>{64, 64, 256}, {32, 32, 256}}) {
    const std::string sh = std::string("m") + std::to_string(m) + "_n" + std::to_string(n) + "_p" + std::to_string(p);
    add_us(std::string("lsvd/dct/") + sh, lsvd, m, n, p);
    add_us(std::string("svd_slices_limit/") + sh, svd_slices_limit, m, n, p, false);
    add_us(std::string("svd_slices_cusolver/") + sh, svd_slices_limit, m, n, p, true);
  }
}

/// Freed device memory stays in the default pool across synchronizations (tprod allocates with cudaMallocAsync
/// from it), as a long-running program's or PyTorch's caching allocator keeps it.
void keep_pool_memory() {
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(default_pool(), cudaMemPoolAttrReleaseThreshold, &threshold),
        "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (tprod::cuda::device_count() == 0) {
    std::printf("bench_cuda: no CUDA device is available (no GPU or no driver); no benchmark runs\n");
    return 77;
  }
  try {
    keep_pool_memory();
  } catch (const tprod::cuda_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  register_cases();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (failed_cases > 0) {
    std::fprintf(stderr, "bench_cuda: %d case(s) failed (other than for lack of device memory)\n", failed_cases);
    return 1;
  }
  return 0;
}
