// SPDX-License-Identifier: Apache-2.0
// Devices, stream-ordered memory, copies (small uploads staged through pinned memory), the cached transform
// factors and the cuBLAS handles.
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "check.cuh"
#include "tprod/backend/cuda/detail/raw.hpp"

namespace tprod::backend::cuda::detail {

namespace {
/// The source file as a path in tprod's repository ("src/cuda/runtime.cu"), not on the machine that built it.
std::string repository_path(const std::string& file) {
  for (const char* root : {"/src/cuda/", "/include/tprod/"})
    if (const auto at = file.rfind(root); at != std::string::npos) return file.substr(at + 1);
  return file;
}
}  // namespace

void fail(const char* call, const std::string& status, const char* file, int line) {
  throw tprod::cuda_error(std::string("tprod::cuda: ") + call + " failed: " + status + " (" + repository_path(file) +
                          ":" + std::to_string(line) + ")");
}
std::string status_text(cudaError_t s) {
  // Without a driver the runtime reports "CUDA driver version is insufficient", which reads as "update your
  // driver"; cudaDriverGetVersion gives 0 when there is no driver at all.
  int driver = 0;
  const bool no_driver = s == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
  if (no_driver || s == cudaErrorNoDevice)
    return std::string("no CUDA device or driver on this machine (") + cudaGetErrorName(s) + ")";
  return std::string(cudaGetErrorName(s)) + ", " + cudaGetErrorString(s);
}
std::string status_text(cublasStatus_t s) { return cublasGetStatusName(s) + std::string(", ") + cublasGetStatusString(s); }
std::string status_text(curandStatus_t s) { return "curandStatus_t " + std::to_string(int(s)); }
std::string status_text(cusolverStatus_t s) { return "cusolverStatus_t " + std::to_string(int(s)); }

namespace {
// This thread's library handle on the current device (created on first use, destroyed with the thread), bound to
// `stream`: cuBLAS's and cuSOLVER's handles are neither thread-safe nor per-device.
template <class Handle, auto create, auto destroy, auto set_stream>
Handle per_thread_handle(cudaStream_t stream) {
  struct handles {
    std::map<int, Handle> by_device;
    ~handles() {
      for (auto& [device, h] : by_device) destroy(h);
    }
  };
  thread_local handles hs;
  int device = 0;
  TPROD_CUDA_CHECK(cudaGetDevice(&device));
  auto& h = hs.by_device[device];
  if (!h) TPROD_CUDA_CHECK(create(&h));
  TPROD_CUDA_CHECK(set_stream(h, stream));
  return h;
}
}  // namespace

namespace {
// The staging ring of upload_bytes: 1 MiB of pinned memory per host thread, handed out in order. Each copy from it
// records an event; a part of the ring is reused only once the copies that read it have completed, which for the
// small tables and index lists staged here is long before the ring comes round. Regions are handed out in ring
// order and a copy's region is retired only with those before it, so the regions in flight, oldest first, run
// round the ring from the oldest; a new region [begin, end) meets the oldest ones first, and waiting for the front
// while it overlaps frees exactly what the copy would overwrite (tests/cuda: uploads queued behind a busy stream
// over several laps). Events belong to the device that was current when they were made, and cudaEventRecord
// refuses another device's stream, so the spare events are kept per device.
class staging_ring {
 public:
  static constexpr std::size_t capacity = std::size_t(1) << 20;
  static constexpr std::size_t largest = capacity / 8;  // larger copies go straight from pageable memory
  static constexpr std::size_t alignment = 256;

  ~staging_ring() {  // at thread exit; the runtime may be shutting down, so nothing is checked
    for (auto& p : in_flight_) cudaEventDestroy(p.done);
    for (auto& [device, events] : spare_)
      for (auto e : events) cudaEventDestroy(e);
    if (buffer_) cudaFreeHost(buffer_);
  }

  void upload(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
    if (!buffer_) TPROD_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&buffer_), capacity));
    const std::size_t need = (bytes + alignment - 1) / alignment * alignment;
    if (head_ + need > capacity) head_ = 0;
    const std::size_t begin = head_, end = head_ + need;
    // Regions are handed out in ring order, so those [begin, end) overlaps are the oldest still in flight.
    while (!in_flight_.empty() && overlaps(in_flight_.front(), begin, end)) retire_front(true);
    while (!in_flight_.empty() && cudaEventQuery(in_flight_.front().done) == cudaSuccess) retire_front(false);
    std::memcpy(buffer_ + begin, host, bytes);
    TPROD_CUDA_CHECK(cudaMemcpyAsync(device, buffer_ + begin, bytes, cudaMemcpyHostToDevice, stream));
    int current = 0;
    TPROD_CUDA_CHECK(cudaGetDevice(&current));
    auto& spare = spare_[current];
    cudaEvent_t done = nullptr;
    if (spare.empty()) {
      TPROD_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    } else {
      done = spare.back();
      spare.pop_back();
    }
    TPROD_CUDA_CHECK(cudaEventRecord(done, stream));
    in_flight_.push_back({begin, end, current, done});
    head_ = end;
  }

 private:
  struct region {
    std::size_t begin, end;
    int device;
    cudaEvent_t done;
  };
  static bool overlaps(const region& r, std::size_t begin, std::size_t end) { return r.begin < end && begin < r.end; }
  void retire_front(bool wait) {
    if (wait) TPROD_CUDA_CHECK(cudaEventSynchronize(in_flight_.front().done));
    spare_[in_flight_.front().device].push_back(in_flight_.front().done);
    in_flight_.pop_front();
  }

  char* buffer_ = nullptr;
  std::size_t head_ = 0;
  std::deque<region> in_flight_;
  std::map<int, std::vector<cudaEvent_t>> spare_;
};
}  // namespace

void upload_bytes(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  if (bytes > staging_ring::largest) {
    TPROD_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  thread_local staging_ring ring;
  ring.upload(device, host, bytes, stream);
}

cublasHandle_t blas(cudaStream_t stream) {
  return per_thread_handle<cublasHandle_t, cublasCreate, cublasDestroy, cublasSetStream>(stream);
}
cusolverDnHandle_t solver(cudaStream_t stream) {
  return per_thread_handle<cusolverDnHandle_t, cusolverDnCreate, cusolverDnDestroy, cusolverDnSetStream>(stream);
}

}  // namespace tprod::backend::cuda::detail

namespace tprod::backend::cuda::raw {

namespace {
// cudaGetDeviceCount's result, asked once: no device, or a driver too old for this CUDA, is not an error for the
// caller, just none (with the reason kept for the message).
struct device_census {
  int count = 0;
  std::string reason;
  device_census() {
    const cudaError_t s = cudaGetDeviceCount(&count);
    if (s != cudaSuccess) {
      (void)cudaGetLastError();
      count = 0;
      reason = detail::status_text(s);
    } else if (count == 0) {
      reason = "cudaGetDeviceCount found no device";
    }
  }
};
const device_census& census() {
  static const device_census c;
  return c;
}

// Freed device memory stays in the device's default pool for the next allocation (the release threshold is
// raised from 0, which would hand it back to the driver at every synchronization, to "never"), as PyTorch's
// caching allocator does; cudaMemPoolTrimTo(pool, 0) gives it back.
void keep_pool_memory() {
  static std::mutex mutex;
  static std::map<int, bool> done;
  int device = 0;
  TPROD_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  if (done[device]) return;
  cudaMemPool_t pool;
  TPROD_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = ~std::uint64_t(0);  // the attribute is a cuuint64_t
  TPROD_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  done[device] = true;
}
}  // namespace

int device_count() { return census().count; }
std::string no_device_reason() { return census().reason; }

void* allocate(std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return nullptr;
  if (device_count() > 0) keep_pool_memory();
  void* ptr = nullptr;
  const cudaError_t s = cudaMallocAsync(&ptr, bytes, stream);
  if (s != cudaSuccess) {
    (void)cudaGetLastError();
    const std::string why = device_count() == 0 ? "; keep the tensors on the host" : "";
    detail::fail("cudaMallocAsync", detail::status_text(s) + " asking for " + std::to_string(bytes) + " bytes" + why,
                 __FILE__, __LINE__);
  }
  return ptr;
}

void deallocate(void* ptr, cudaStream_t stream) noexcept {
  if (ptr) (void)cudaFreeAsync(ptr, stream);
}

void copy_bytes(void* dst, const void* src, std::size_t bytes, direction dir, cudaStream_t stream) {
  if (bytes == 0) return;
  const cudaMemcpyKind kind = dir == direction::host_to_device   ? cudaMemcpyHostToDevice
                              : dir == direction::device_to_host ? cudaMemcpyDeviceToHost
                                                                 : cudaMemcpyDeviceToDevice;
  TPROD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  // A pageable host source may be reused as soon as the call returns only once the copy has read it.
  if (dir == direction::host_to_device) TPROD_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_blocks(void* dst, std::size_t dst_stride, const void* src, std::size_t src_stride, std::size_t block_bytes,
                 std::size_t count, cudaStream_t stream) {
  if (block_bytes == 0 || count == 0) return;
  TPROD_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_stride, src, src_stride, block_bytes, count, cudaMemcpyDeviceToDevice,
                                     stream));
}

void synchronize(cudaStream_t stream) { TPROD_CUDA_CHECK(cudaStreamSynchronize(stream)); }

const void* device_matrix(const void* host, std::size_t rows, std::size_t cols, std::size_t scalar_bytes,
                          bool transposed, std::shared_ptr<const void> owner) {
  const std::size_t bytes = rows * cols * scalar_bytes;
  struct entry {
    std::shared_ptr<const void> owner;
    void* device = nullptr;
  };
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, std::size_t, bool>, entry> cache;
  constexpr std::size_t max_entries = 256;
  int device = 0;
  TPROD_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard lock(mutex);
  const auto key = std::make_tuple(device, host, bytes, transposed);
  if (const auto it = cache.find(key); it != cache.end()) return it->second.device;
  if (cache.size() >= max_entries) {  // forget factors nobody else holds (matrix_transforms that are gone)
    std::map<const void*, long> held_here;  // an owner may hold two entries: its factor and its transpose
    for (const auto& [k, e] : cache) ++held_here[e.owner.get()];
    for (auto it = cache.begin(); it != cache.end();) {
      if (it->second.owner.use_count() == held_here[it->second.owner.get()]) {
        TPROD_CUDA_CHECK(cudaFree(it->second.device));
        it = cache.erase(it);
      } else {
        ++it;
      }
    }
  }
  void* d = nullptr;
  TPROD_CUDA_CHECK(cudaMalloc(&d, bytes));
  std::vector<unsigned char> t;
  if (transposed) {  // column-major rows×cols in, its transpose (cols×rows, column-major) uploaded
    t.resize(bytes);
    const auto* from = static_cast<const unsigned char*>(host);
    for (std::size_t j = 0; j < cols; ++j)
      for (std::size_t i = 0; i < rows; ++i)
        std::memcpy(&t[(j + i * cols) * scalar_bytes], from + (i + j * rows) * scalar_bytes, scalar_bytes);
  }
  // The factor is complete on the device before any stream may read it: cudaMemcpy from pageable memory may return
  // before its DMA has finished, and the legacy default stream it runs on orders nothing on a non-blocking user
  // stream, so the copy runs on a stream of its own that is waited for.
  cudaStream_t upload = nullptr;
  TPROD_CUDA_CHECK(cudaStreamCreateWithFlags(&upload, cudaStreamNonBlocking));
  const cudaError_t copied = cudaMemcpyAsync(d, transposed ? t.data() : host, bytes, cudaMemcpyHostToDevice, upload);
  const cudaError_t waited = cudaStreamSynchronize(upload);
  cudaStreamDestroy(upload);
  if (copied != cudaSuccess || waited != cudaSuccess) cudaFree(d);
  TPROD_CUDA_CHECK(copied);
  TPROD_CUDA_CHECK(waited);
  cache.emplace(key, entry{std::move(owner), d});
  return d;
}

}  // namespace tprod::backend::cuda::raw
