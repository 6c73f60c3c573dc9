// SPDX-License-Identifier: Apache-2.0
// The token-embedding and loss kernels of the CUDA backend (backend/cuda/embedding.hpp), the mirror of
// backend/cpu/embedding.hpp. The index lists arrive in host memory and go to the device once per call. The scatter
// is deterministic without atomics: CUB groups the rows by token on the device (a stable radix sort of the
// (token, row) pairs, so each token's rows stay in increasing order; a run-length encoding and a scan give each
// token's segment), and each (token, feature) pair adds its rows to the table's value in that order, the CPU's
// order, so both give the same bits. Nothing of the grouping waits for the stream. The loss takes one thread per
// row (row b's logits lie B apart, so a warp's rows read together) and sums the rows' losses on the host, in order.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/execution_policy.h>
#include <thrust/sequence.h>
#include <vector>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

using namespace detail;

template <class T>
__global__ void gather_kernel(const T* table, std::size_t d, const std::size_t* tokens, std::size_t n, T* out,
                              std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e = r + n·c
    const std::size_t r = e % n, c = e / n;
    out[e] = c < d ? table[tokens[r] * d + c] : T(0);
  }
}

// Segment s of the rows grouped by token: token tokens[s], rows rows[begins[s] … begins[s] + counts[s]), for the
// *segments tokens present (the grid covers n segments, the most there can be, so that the count stays on the
// device).
template <class T>
__global__ void scatter_kernel(const std::size_t* tokens, const std::size_t* begins, const std::size_t* counts,
                               const std::size_t* segments, const std::size_t* rows, std::size_t n, const T* d_out,
                               std::size_t d, T* d_table) {
  const std::size_t present = *segments;
  TPROD_GRID_LOOP(e, present * d) {  // e = c + d·s
    const std::size_t c = e % d, s = e / d;
    T* dst = d_table + tokens[s] * d + c;
    T sum = *dst;
    for (std::size_t i = begins[s], end = begins[s] + counts[s]; i < end; ++i) sum += d_out[rows[i] + n * c];
    *dst = sum;
  }
}

// CUB's two-phase calls: the first with no storage asks how many bytes the second needs.
template <class Call>
void with_temporary_storage(Call call, cudaStream_t stream) {
  std::size_t bytes = 0;
  TPROD_CUDA_CHECK(call(nullptr, bytes));
  const scratch<unsigned char> storage(std::max<std::size_t>(bytes, 1), stream);
  TPROD_CUDA_CHECK(call(storage.ptr, bytes));
}

template <class T>
__global__ void cross_entropy_kernel(const T* z, std::size_t batch, std::size_t classes, const std::size_t* labels,
                                     std::size_t ignored, T inv_counted, T* dz, double* row_loss,
                                     std::size_t* predicted) {
  TPROD_GRID_LOOP(b, batch) {
    T mx = z[b];
    std::size_t arg = 0;
    for (std::size_t j = 1; j < classes; ++j)
      if (z[b + batch * j] > mx) {  // the first maximum, as Eigen's maxCoeff
        mx = z[b + batch * j];
        arg = j;
      }
    predicted[b] = arg;
    const std::size_t y = labels[b];
    if (y == ignored) {
      for (std::size_t j = 0; j < classes; ++j) dz[b + batch * j] = T(0);
      row_loss[b] = 0;
      continue;
    }
    T sum = 0;
    for (std::size_t j = 0; j < classes; ++j) sum += exp(z[b + batch * j] - mx);
    row_loss[b] = double(log(sum) + mx - z[b + batch * y]);
    for (std::size_t j = 0; j < classes; ++j) dz[b + batch * j] = exp(z[b + batch * j] - mx) / sum * inv_counted;
    dz[b + batch * y] -= inv_counted;
  }
}

}  // namespace

namespace raw {

template <class T>
void embedding_gather(const T* table, std::size_t d, const std::size_t* tokens, std::size_t n, T* out,
                      std::size_t padded, cudaStream_t stream) {
  const std::size_t total = n * padded;
  if (total == 0) return;
  const scratch<std::size_t> device_tokens(n, stream);
  upload(device_tokens.ptr, tokens, n, stream);
  gather_kernel<<<blocks_for(total), 256, 0, stream>>>(table, d, device_tokens.ptr, n, out, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void embedding_scatter_add(const std::size_t* tokens, std::size_t n, const T* d_out, std::size_t d, T* d_table,
                           cudaStream_t stream) {
  if (n == 0 || d == 0) return;
  const int items = TPROD_CUDA_INT("cub::DeviceRadixSort::SortPairs", n);  // CUB's item counts here are int
  // the sort looks only at the bits a token of this list can have
  const int bits = std::max(1, int(std::bit_width(*std::max_element(tokens, tokens + n))));
  const scratch<std::size_t> keys(n, stream), sorted_keys(n, stream), rows(n, stream);
  const scratch<std::size_t> unique(n, stream), counts(n, stream), begins(n, stream), segments(1, stream);
  upload(keys.ptr, tokens, n, stream);
  // the scan below runs over all n counts; those past the last segment are set, not left as the pool's bytes
  TPROD_CUDA_CHECK(cudaMemsetAsync(counts.ptr, 0, n * sizeof(std::size_t), stream));
  const scratch<std::size_t> row_numbers(n, stream);
  thrust::sequence(thrust::cuda::par_nosync.on(stream), row_numbers.ptr, row_numbers.ptr + n);
  with_temporary_storage(
      [&](void* storage, std::size_t& bytes) {
        return cub::DeviceRadixSort::SortPairs(storage, bytes, keys.ptr, sorted_keys.ptr, row_numbers.ptr, rows.ptr,
                                               items, 0, bits, stream);
      },
      stream);
  with_temporary_storage(
      [&](void* storage, std::size_t& bytes) {
        return cub::DeviceRunLengthEncode::Encode(storage, bytes, sorted_keys.ptr, unique.ptr, counts.ptr,
                                                  segments.ptr, items, stream);
      },
      stream);
  with_temporary_storage(
      [&](void* storage, std::size_t& bytes) {
        return cub::DeviceScan::ExclusiveSum(storage, bytes, counts.ptr, begins.ptr, items, stream);
      },
      stream);
  scatter_kernel<<<blocks_for(n * d), 256, 0, stream>>>(unique.ptr, begins.ptr, counts.ptr, segments.ptr, rows.ptr,
                                                        n, d_out, d, d_table);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
double softmax_cross_entropy(const T* logits, std::size_t batch, std::size_t classes, const std::size_t* labels,
                             std::size_t counted, T* d_logits, std::size_t* predicted, cudaStream_t stream) {
  if (batch == 0 || classes == 0) return 0;
  const scratch<std::size_t> device_labels(batch, stream), device_predicted(batch, stream);
  const scratch<double> row_loss(batch, stream);
  upload(device_labels.ptr, labels, batch, stream);
  cross_entropy_kernel<<<blocks_for(batch), 256, 0, stream>>>(logits, batch, classes, device_labels.ptr,
                                                              kernels::ignored_label, T(1) / T(counted), d_logits,
                                                              row_loss.ptr, device_predicted.ptr);
  TPROD_CUDA_CHECK(cudaGetLastError());
  const auto arg = fetch(device_predicted.ptr, batch, stream);
  std::copy(arg.begin(), arg.end(), predicted);
  double total = 0;
  for (double v : fetch(row_loss.ptr, batch, stream)) total += v;  // in order: deterministic
  return total;
}

#define TPROD_INSTANTIATE(T)                                                                                        \
  template void embedding_gather<T>(const T*, std::size_t, const std::size_t*, std::size_t, T*, std::size_t,        \
                                    cudaStream_t);                                                                  \
  template void embedding_scatter_add<T>(const std::size_t*, std::size_t, const T*, std::size_t, T*, cudaStream_t); \
  template double softmax_cross_entropy<T>(const T*, std::size_t, std::size_t, const std::size_t*, std::size_t, T*, \
                                           std::size_t*, cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
