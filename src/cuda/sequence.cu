// SPDX-License-Identifier: Apache-2.0
// The kernels on batches of sequences of the CUDA backend (backend/cuda/sequence.hpp), the mirror of
// backend/cpu/sequence.hpp. A tensor of r rows and `columns` (feature, slice) pairs holds element (row, column) at
// row + r·column. Every kernel is a grid-stride loop over its outputs, and a sum over the batch or the rows runs in
// a fixed order inside one thread, so results repeat bit for bit. Dropout draws from cuRAND's Philox generator (a
// counter-based one: thread g jumps straight to the four draws of elements 4g…4g+3 of the stream (seed, pass)).
#include <curand_kernel.h>

#include <algorithm>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {

using namespace detail;

template <class T>
__global__ void copy_rows_kernel(const T* in, std::size_t in_rows, std::size_t from_stride, std::size_t from_offset,
                                 T* out, std::size_t out_rows, std::size_t to_stride, std::size_t to_offset,
                                 std::size_t count, std::size_t batch, bool accumulate, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e = t + count·(b + batch·column)
    const std::size_t t = e % count, rest = e / count, b = rest % batch, column = rest / batch;
    const T v = in[b * from_stride + from_offset + t + in_rows * column];
    T& o = out[b * to_stride + to_offset + t + out_rows * column];
    o = accumulate ? o + v : v;
  }
}

template <class T>
__global__ void sum_rows_kernel(const T* in, std::size_t in_rows, std::size_t from_stride, std::size_t from_offset,
                                std::size_t count, std::size_t batch, T* out, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e = t + count·column
    const std::size_t t = e % count, column = e / count;
    T sum = 0;
    for (std::size_t b = 0; b < batch; ++b) sum += in[b * from_stride + from_offset + t + in_rows * column];
    out[e] = sum;
  }
}

template <class T>
__global__ void mean_pool_kernel(const T* x, std::size_t length, std::size_t batch, const std::size_t* lengths, T* out,
                                 std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e = b + batch·column
    const std::size_t b = e % batch, column = e / batch, n = lengths ? lengths[b] : length;
    const T* seq = x + b * length + batch * length * column;
    T sum = 0;
    for (std::size_t t = 0; t < n; ++t) sum += seq[t];
    out[e] = sum / T(n);
  }
}

template <class T>
__global__ void mean_pool_backward_kernel(const T* d_out, std::size_t length, std::size_t batch,
                                          const std::size_t* lengths, T* d_in, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e = t + length·(b + batch·column), the row of d_in being b·length + t
    const std::size_t t = e % length, rest = e / length, b = rest % batch, column = rest / batch;
    const std::size_t n = lengths ? lengths[b] : length;
    d_in[e] = t < n ? d_out[b + batch * column] / T(n) : T(0);
  }
}

template <class T>
__global__ void dropout_kernel(unsigned long long seed, unsigned long long pass, unsigned threshold, T scale,
                               const T* x, T* mask, T* out, std::size_t n) {
  TPROD_GRID_LOOP(g, (n + 3) / 4) {
    curandStatePhilox4_32_10_t state;
    curand_init(seed, pass, 4 * g, &state);  // counter-based: the jump is O(1)
    const uint4 draw = curand4(&state);
    const unsigned d[4] = {draw.x, draw.y, draw.z, draw.w};
    for (std::size_t i = 0; i < 4 && 4 * g + i < n; ++i) {
      const std::size_t j = 4 * g + i;
      mask[j] = d[i] >= threshold ? scale : T(0);
      out[j] = x[j] * mask[j];
    }
  }
}

// The lengths on the device, or nullptr when every row is valid.
struct device_lengths {
  scratch<std::size_t> buffer;
  const std::size_t* ptr;
  device_lengths(const std::size_t* host, std::size_t batch, cudaStream_t stream)
      : buffer(host ? batch : 0, stream), ptr(host ? buffer.ptr : nullptr) {
    if (host) upload(buffer.ptr, host, batch, stream);
  }
};

}  // namespace

namespace raw {

template <class T>
void copy_sequence_rows(const T* in, std::size_t in_rows, std::size_t from_stride, std::size_t from_offset, T* out,
                        std::size_t out_rows, std::size_t to_stride, std::size_t to_offset, std::size_t count,
                        std::size_t batch, std::size_t columns, bool accumulate, cudaStream_t stream) {
  const std::size_t total = count * batch * columns;
  if (total == 0) return;
  copy_rows_kernel<<<blocks_for(total), 256, 0, stream>>>(in, in_rows, from_stride, from_offset, out, out_rows,
                                                          to_stride, to_offset, count, batch, accumulate, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void sum_sequence_rows(const T* in, std::size_t in_rows, std::size_t from_stride, std::size_t from_offset,
                       std::size_t count, std::size_t batch, std::size_t columns, T* out, cudaStream_t stream) {
  const std::size_t total = count * columns;
  if (total == 0) return;
  sum_rows_kernel<<<blocks_for(total), 256, 0, stream>>>(in, in_rows, from_stride, from_offset, count, batch, out,
                                                         total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void mean_pool(const T* x, std::size_t length, std::size_t batch, std::size_t columns, const std::size_t* lengths,
               T* out, cudaStream_t stream) {
  const std::size_t total = batch * columns;
  if (total == 0) return;
  const device_lengths valid(lengths, batch, stream);
  mean_pool_kernel<<<blocks_for(total), 256, 0, stream>>>(x, length, batch, valid.ptr, out, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void mean_pool_backward(const T* d_out, std::size_t length, std::size_t batch, std::size_t columns,
                        const std::size_t* lengths, T* d_in, cudaStream_t stream) {
  const std::size_t total = length * batch * columns;
  if (total == 0) return;
  const device_lengths valid(lengths, batch, stream);
  mean_pool_backward_kernel<<<blocks_for(total), 256, 0, stream>>>(d_out, length, batch, valid.ptr, d_in, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void dropout_forward(unsigned long long seed, unsigned long long pass, double rate, const T* x, T* mask, T* out,
                     std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  // Kept when a uniform 32-bit draw is at least r·2³², as on the host.
  const auto threshold = unsigned(std::min(rate * 4294967296.0, 4294967295.0));
  dropout_kernel<<<blocks_for((n + 3) / 4), 256, 0, stream>>>(seed, pass, threshold, T(1 / (1 - rate)), x, mask, out,
                                                              n);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

#define TPROD_INSTANTIATE(T)                                                                                         \
  template void copy_sequence_rows<T>(const T*, std::size_t, std::size_t, std::size_t, T*, std::size_t, std::size_t, \
                                      std::size_t, std::size_t, std::size_t, std::size_t, bool, cudaStream_t);       \
  template void sum_sequence_rows<T>(const T*, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t,      \
                                     std::size_t, T*, cudaStream_t);                                                 \
  template void mean_pool<T>(const T*, std::size_t, std::size_t, std::size_t, const std::size_t*, T*, cudaStream_t); \
  template void mean_pool_backward<T>(const T*, std::size_t, std::size_t, std::size_t, const std::size_t*, T*,       \
                                      cudaStream_t);                                                                 \
  template void dropout_forward<T>(unsigned long long, unsigned long long, double, const T*, T*, T*, std::size_t,    \
                                   cudaStream_t);
TPROD_INSTANTIATE(float)
TPROD_INSTANTIATE(double)
#undef TPROD_INSTANTIATE

}  // namespace raw
}  // namespace tprod::backend::cuda
