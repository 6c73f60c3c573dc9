// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file device_buffer.hpp
/// @brief The element storage of device tensors: a stream-ordered GPU allocation (cudaMallocAsync on the default
/// device execution's stream, freed on the same stream), so temporaries of a chain of operations on one stream
/// are recycled by CUDA's pool instead of synchronizing the device.
#include <cstddef>
#include <limits>
#include <new>
#include <utility>

#include "tprod/backend/cuda/system.hpp"
#include "tprod/core/tensor3.hpp"

namespace tprod::backend::cuda {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  /// @throws cuda_error when the device memory cannot be had (the message names the size), std::bad_array_new_length
  /// when n·sizeof(T) overflows.
  explicit device_buffer(std::size_t n) : device_buffer(n, tprod::cuda::default_execution().stream) {}
  /// @brief n elements allocated (and later freed) in the order of `stream`.
  device_buffer(std::size_t n, cudaStream_t stream)
      : size_(n), stream_(stream), data_(static_cast<T*>(raw::allocate(bytes_for(n), stream_))) {}
  device_buffer(const device_buffer& other) : device_buffer(other.size_) {
    raw::copy_bytes(data_, other.data_, size_ * sizeof(T), raw::direction::device_to_device, stream_);
  }
  device_buffer(device_buffer&& other) noexcept
      : size_(std::exchange(other.size_, 0)), stream_(other.stream_), data_(std::exchange(other.data_, nullptr)) {}
  device_buffer& operator=(device_buffer other) noexcept {
    swap(other);
    return *this;
  }
  ~device_buffer() { raw::deallocate(data_, stream_); }

  void swap(device_buffer& other) noexcept {
    std::swap(size_, other.size_);
    std::swap(stream_, other.stream_);
    std::swap(data_, other.data_);
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  static std::size_t bytes_for(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return n * sizeof(T);
  }

  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
  T* data_ = nullptr;
};

}  // namespace tprod::backend::cuda

namespace tprod::detail {
template <class T>
struct storage_for<T, device_space> {
  using type = backend::cuda::device_buffer<T>;
};
}  // namespace tprod::detail
