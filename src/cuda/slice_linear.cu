// SPDX-License-Identifier: Apache-2.0
// The nn layers' slice-linear maps on the device (backend/cuda/slice_linear.hpp): the GEMMs are cuBLAS's
// (gemm.cu); this file holds the bias broadcast they start from.
#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda {
namespace {
using namespace detail;

template <class T>
__global__ void broadcast_rows_kernel(const T* b, std::size_t b_slice_stride, T* y, std::size_t rows, std::size_t cols,
                                      std::size_t total) {
  TPROD_GRID_LOOP(e, total) {  // e indexes y: e = i + rows·(j + cols·k)
    const std::size_t j = (e / rows) % cols, k = e / (rows * cols);
    y[e] = b[j + b_slice_stride * k];
  }
}

}  // namespace

namespace raw {

template <class T>
void broadcast_rows(const T* b, std::size_t b_slice_stride, T* y, std::size_t rows, std::size_t cols, std::size_t p,
                    cudaStream_t stream) {
  const std::size_t total = rows * cols * p;
  if (total == 0) return;
  broadcast_rows_kernel<<<blocks_for(total), 256, 0, stream>>>(b, b_slice_stride, y, rows, cols, total);
  TPROD_CUDA_CHECK(cudaGetLastError());
}

template void broadcast_rows<float>(const float*, std::size_t, float*, std::size_t, std::size_t, std::size_t,
                                    cudaStream_t);
template void broadcast_rows<double>(const double*, std::size_t, double*, std::size_t, std::size_t, std::size_t,
                                     cudaStream_t);

}  // namespace raw
}  // namespace tprod::backend::cuda
