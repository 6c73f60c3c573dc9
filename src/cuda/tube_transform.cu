// SPDX-License-Identifier: Apache-2.0
// The tube transform's own kernel (backend/cuda/transform.hpp): out = in · F for the (rows×p) tube unfolding and a
// small p×q factor (p, q ≤ 16), out(i, k) = Σ_j in(i, j)·F(j, k). It reads every input once and writes every
// output once, so it runs near copy bandwidth where cuBLAS's GEMM, tuned for large inner dimensions, does not
// (bench_cuda: transform/dct against transform_gemm and memcpy_limit, docs/performance.md). Every scalar mix runs in the one kernel:
// real data with a complex factor (the DFT of real tubes) promotes on the fly, and complex products stored into
// real tubes keep their real parts, so no temporary buffers either.
#include <complex>
#include <cstdint>

#include "check.cuh"
#include "device_scalar.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using namespace detail;

constexpr unsigned tube_threads = 256;
// Beyond 16 inputs or outputs per tube, cuBLAS's GEMM wins: at p = 64 it took 315 µs for 1024²×64 floats where
// this kernel (with tiles of 64 outputs) took 476 µs, at p = 16 81 µs against 65 µs (H100, docs/performance.md).
constexpr std::size_t max_tube = 16;

template <class Out, class Acc> __device__ Out store(Acc v) {
  if constexpr (is_cplx<Acc>::value && !is_cplx<Out>::value) return v.real(); else return Out(v);
}

__host__ __device__ constexpr int round_up(int x, int to) { return (x + to - 1) / to * to; }
// Inputs loaded before they are used (loads in flight per thread): as many as the outputs, up to 8 (16 measured
// no faster); 4 when each load is a vector of V tubes' elements (registers).
template <int Tile, int V> constexpr int unroll_for = V > 1 ? 4 : Tile < 8 ? Tile : 8;

// 16 bytes of factor entries, read from shared memory in one instruction.
template <class F> struct alignas(16) pack { F v[16 / sizeof(F)]; };
// The elements of V neighbouring tubes at one position: one 16-byte load or store.
template <class T, int V> struct alignas(sizeof(T) * V) lanes { T v[V]; };

// One thread per V neighbouring tubes i, …, i+V−1 (their elements at tube position j are contiguous, so one vector
// load reads them): `Tile` outputs of each at a time in registers. The factor F (p×q) sits in shared memory row by
// row (fs[j·qq + k]), padded with zeros to whole blocks of rows and of `Tile` columns so the inner loops need no
// bounds; each row's Tile entries are read in 16-byte packs, at the same address by every thread of a warp.
// Requires rows % V == 0 and in, out aligned to V elements.
template <int Tile, int V, class In, class F, class Out>
__global__ void tube_factor_kernel(const In* __restrict__ in, const F* __restrict__ f, Out* __restrict__ out,
                                   std::size_t rows, int p, int q) {
  constexpr int unroll = unroll_for<Tile, V>, per_pack = int(16 / sizeof(F));
  static_assert(Tile % per_pack == 0);
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  F* fs = reinterpret_cast<F*>(shared_bytes);
  const int pp = round_up(p, unroll), qq = round_up(q, Tile);
  for (int e = threadIdx.x; e < pp * qq; e += blockDim.x) {
    const int j = e / qq, k = e % qq;
    fs[e] = j < p && k < q ? f[j + k * p] : F(0);  // f is column-major
  }
  __syncthreads();
  using Acc = decltype(In{} * F{});
  using in_lanes = lanes<In, V>;
  using out_lanes = lanes<Out, V>;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < rows / V;
       g += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t i = g * V;
    for (int k0 = 0; k0 < q; k0 += Tile) {
      Acc acc[Tile][V];
#pragma unroll
      for (int t = 0; t < Tile; ++t)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[t][v] = Acc(0);
      for (int j0 = 0; j0 < p; j0 += unroll) {
        in_lanes x[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u)
          x[u] = j0 + u < p ? *reinterpret_cast<const in_lanes*>(in + i + std::size_t(j0 + u) * rows) : in_lanes{};
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
          const auto* row = reinterpret_cast<const pack<F>*>(fs + (j0 + u) * qq + k0);
#pragma unroll
          for (int b = 0; b < Tile / per_pack; ++b) {
            const pack<F> w = row[b];
#pragma unroll
            for (int e = 0; e < per_pack; ++e)
#pragma unroll
              for (int v = 0; v < V; ++v) acc[b * per_pack + e][v] += x[u].v[v] * w.v[e];
          }
        }
      }
#pragma unroll
      for (int t = 0; t < Tile; ++t) {
        if (k0 + t >= q) continue;
        out_lanes o;
#pragma unroll
        for (int v = 0; v < V; ++v) o.v[v] = store<Out>(acc[t][v]);
        *reinterpret_cast<out_lanes*>(out + i + std::size_t(k0 + t) * rows) = o;
      }
    }
  }
}

template <int Tile, int V> std::size_t shared_bytes_for(std::size_t p, std::size_t q, std::size_t scalar_bytes) {
  return std::size_t(round_up(int(p), unroll_for<Tile, V>)) * std::size_t(round_up(int(q), Tile)) * scalar_bytes;
}

template <int Tile, int V, class In, class F, class Out>
void launch_lanes(const In* in, const F* f, Out* out, std::size_t rows, std::size_t p, std::size_t q,
                  cudaStream_t stream) {
  tube_factor_kernel<Tile, V><<<blocks_for(rows / V, tube_threads), tube_threads,
                                shared_bytes_for<Tile, V>(p, q, sizeof(F)), stream>>>(in, f, out, rows, int(p), int(q));
  TPROD_CUDA_CHECK(cudaGetLastError());
}

// 16-byte loads and stores (V neighbouring tubes per thread) where the tube count and the addresses allow, else one
// tube per thread.
template <int Tile, class In, class F, class Out>
void launch(const In* in, const F* f, Out* out, std::size_t rows, std::size_t p, std::size_t q, cudaStream_t stream) {
  constexpr int V = int(16 / (sizeof(In) > sizeof(Out) ? sizeof(In) : sizeof(Out)));
  const bool aligned = reinterpret_cast<std::uintptr_t>(in) % (V * sizeof(In)) == 0 &&
                       reinterpret_cast<std::uintptr_t>(out) % (V * sizeof(Out)) == 0;
  if (V > 1 && rows % V == 0 && aligned) launch_lanes<Tile, V>(in, f, out, rows, p, q, stream);
  else launch_lanes<Tile, 1>(in, f, out, rows, p, q, stream);
}

}  // namespace

namespace raw {

bool tube_kernel_applies(std::size_t p, std::size_t q, std::size_t factor_scalar_bytes) {
  (void)factor_scalar_bytes;  // a 16×16 factor of complex doubles takes 4 KiB of shared memory: always fits
  return p <= max_tube && q <= max_tube;
}

template <class In, class F, class Out>
void tube_transform(const In* in, const F* factor, Out* out, std::size_t rows, std::size_t p, std::size_t q,
                    cudaStream_t stream) {
  if (rows == 0 || p == 0 || q == 0) return;
  if (!tube_kernel_applies(p, q, sizeof(F)))
    fail("tube_transform", "a " + std::to_string(p) + "x" + std::to_string(q) + " factor is too large for the kernel",
         __FILE__, __LINE__);
  // The smaller tile that holds all q outputs: one pass over the input.
  if (q <= 4) launch<4>(dev(in), dev(factor), dev(out), rows, p, q, stream);
  else launch<16>(dev(in), dev(factor), dev(out), rows, p, q, stream);
}

#define TPROD_INSTANTIATE(In, F, Out)                                                                        \
  template void tube_transform<In, F, Out>(const In*, const F*, Out*, std::size_t, std::size_t, std::size_t, \
                                           cudaStream_t);
#define TPROD_INSTANTIATE_SAME(T) TPROD_INSTANTIATE(T, T, T)
TPROD_CUDA_FOR_EACH_SCALAR(TPROD_INSTANTIATE_SAME)
#define TPROD_INSTANTIATE_MIXED(R)                                        \
  TPROD_INSTANTIATE(std::complex<R>, R, std::complex<R>)                  \
  TPROD_INSTANTIATE(R, std::complex<R>, std::complex<R>)                  \
  TPROD_INSTANTIATE(std::complex<R>, std::complex<R>, R)
TPROD_INSTANTIATE_MIXED(float)
TPROD_INSTANTIATE_MIXED(double)
#undef TPROD_INSTANTIATE_MIXED
#undef TPROD_INSTANTIATE_SAME
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
