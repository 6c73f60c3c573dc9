// SPDX-License-Identifier: Apache-2.0
// The token-embedding and loss kernels of the CUDA backend (backend/cuda/embedding.hpp), the mirror of
// backend/cpu/embedding.hpp. The index lists arrive in host memory and go to the device once per call. The scatter
// is deterministic without atomics: the host groups the rows by token (stable, so in increasing order) and each
// (token, feature) pair sums its rows in that order. The loss takes one thread per row (row b's logits lie B apart,
// so a warp's rows read together) and sums the rows' losses on the host, in order.
#include <algorithm>
#include <cmath>
#include <numeric>
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

// segments[3s .. 3s+2] = {token, begin, end} into `rows`, the row indices grouped by token.
template <class T>
__global__ void scatter_kernel(const std::size_t* segments, const std::size_t* rows, std::size_t n, const T* d_out,
                               std::size_t d, T* d_table, std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e = c + d·s
    const std::size_t c = e % d, s = e / d;
    const std::size_t token = segments[3 * s], begin = segments[3 * s + 1], end = segments[3 * s + 2];
    T sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += d_out[rows[i] + n * c];
    d_table[token * d + c] += sum;
  }
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
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), std::size_t(0));
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) { return tokens[a] < tokens[b]; });
  std::vector<std::size_t> segments;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && tokens[rows[j]] == tokens[rows[i]]) ++j;
    segments.insert(segments.end(), {tokens[rows[i]], i, j});
    i = j;
  }
  const std::size_t count = segments.size() / 3, total = count * d;
  const scratch<std::size_t> device_rows(n, stream), device_segments(segments.size(), stream);
  upload(device_rows.ptr, rows.data(), n, stream);
  upload(device_segments.ptr, segments.data(), segments.size(), stream);
  scatter_kernel<<<blocks_for(total), 256, 0, stream>>>(device_segments.ptr, device_rows.ptr, n, d_out, d, d_table,
                                                        total);
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
