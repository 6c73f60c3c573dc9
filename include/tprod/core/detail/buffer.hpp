// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file buffer.hpp
/// @brief The element storage of tensor3: an aligned heap buffer whose large blocks are recycled per thread.
///
/// Why: an L-product allocates transform-domain temporaries as large as its operands. glibc returns large
/// freed blocks to the OS, so every product in a loop page-faults its temporaries in afresh, which measured
/// 2–3× slower than the arithmetic itself on our VMs. Each thread therefore keeps a few recently freed blocks
/// (≥ 32 KiB, at most 8 blocks and 2 GiB) and reuses one whose size fits (within 2×) before asking malloc.
/// The cap was 512 MiB until a 1024×1024×64 float product (four 256 MiB temporaries) measured 90 GFLOP/s
/// instead of 218: the temporaries no longer fitted, so every product faulted 1 GiB of fresh pages in.
/// The floor was 256 KiB until a 32×32×16 float product (four 64 KiB temporaries) measured 2.1 ms instead of
/// 26 µs: together the temporaries crossed glibc's 128 KiB trim threshold, so every product shrank and
/// regrew the heap and faulted its pages in again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tprod::detail {

class block_cache {
 public:
  static constexpr std::size_t min_block = std::size_t(32) << 10;
  static constexpr std::size_t max_blocks = 8;
  static constexpr std::size_t max_bytes = std::size_t(2) << 30;
  static constexpr std::size_t alignment = 64;

  static void* allocate(std::size_t bytes, std::size_t& capacity) {
    if (bytes >= min_block) {
      auto& c = local();
      std::size_t best = c.blocks.size();
      for (std::size_t i = 0; i < c.blocks.size(); ++i) {
        const auto size = c.blocks[i].second;
        if (size >= bytes && size <= 2 * bytes && (best == c.blocks.size() || size < c.blocks[best].second)) best = i;
      }
      if (best != c.blocks.size()) {
        auto [ptr, size] = c.blocks[best];
        c.blocks.erase(c.blocks.begin() + std::ptrdiff_t(best));
        c.bytes -= size;
        capacity = size;
        return ptr;
      }
    }
    capacity = (bytes + alignment - 1) / alignment * alignment;
    if (capacity == 0) return nullptr;
    void* ptr = std::aligned_alloc(alignment, capacity);
    if (!ptr) throw std::bad_alloc();
    advise_huge_pages(ptr, capacity);
    return ptr;
  }

  static void release(void* ptr, std::size_t capacity) noexcept {
    if (!ptr) return;
    if (capacity >= min_block) {
      auto& c = local();
      if (c.bytes + capacity <= max_bytes) {
        if (c.blocks.size() == max_blocks) {  // evict the oldest
          std::free(c.blocks.front().first);
          c.bytes -= c.blocks.front().second;
          c.blocks.erase(c.blocks.begin());
        }
        c.blocks.emplace_back(ptr, capacity);
        c.bytes += capacity;
        return;
      }
    }
    std::free(ptr);
  }

 private:
  /// Asks Linux to back a fresh block of at least 4 MiB with transparent huge pages (where THP is in "madvise"
  /// mode, as on Debian): its first touch then faults 2 MiB at a time instead of 4 KiB. Faulting in a GPT-2-sized
  /// model's 500 MB of fresh pages measured 0.33 s in 4 KiB pages, more than reading it from the page cache.
  static void advise_huge_pages([[maybe_unused]] void* ptr, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::size_t huge = std::size_t(2) << 20;
    if (bytes < 2 * huge) return;
    const auto begin = (reinterpret_cast<std::uintptr_t>(ptr) + huge - 1) / huge * huge;
    const auto end = (reinterpret_cast<std::uintptr_t>(ptr) + bytes) / huge * huge;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // a hint: failure is fine
#endif
  }

  struct cache {
    std::vector<std::pair<void*, std::size_t>> blocks;
    std::size_t bytes = 0;
    cache() { blocks.reserve(max_blocks); }
    ~cache() {
      for (auto& b : blocks) std::free(b.first);
    }
  };
  static cache& local() {
    thread_local cache c;
    return c;
  }
};

/// @brief An owning, 64-byte aligned array of n trivially copyable T, uninitialized unless asked otherwise.
template <class T>
class buffer {
 public:
  buffer() = default;
  /// @throws std::bad_array_new_length when n·sizeof(T) (rounded up to the alignment) overflows, std::bad_alloc
  /// when the memory cannot be had.
  explicit buffer(std::size_t n) : size_(n), data_(static_cast<T*>(block_cache::allocate(bytes_for(n), capacity_))) {}
  buffer(const buffer& other) : buffer(other.size_) {
    if (size_) std::memcpy(data_, other.data_, size_ * sizeof(T));
  }
  buffer(buffer&& other) noexcept
      : size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)),
        data_(std::exchange(other.data_, nullptr)) {}
  buffer& operator=(buffer other) noexcept {
    swap(other);
    return *this;
  }
  ~buffer() { block_cache::release(data_, capacity_); }

  void swap(buffer& other) noexcept {
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(data_, other.data_);
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  static std::size_t bytes_for(std::size_t n) {
    if (n > (std::numeric_limits<std::size_t>::max() - block_cache::alignment) / sizeof(T))
      throw std::bad_array_new_length();
    return n * sizeof(T);
  }

  std::size_t size_ = 0;
  std::size_t capacity_ = 0;  // bytes actually held (a recycled block may be larger than asked)
  T* data_ = nullptr;
};

}  // namespace tprod::detail
