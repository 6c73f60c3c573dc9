#pragma once
/// @file matrix_cache.hpp
/// @brief A process-wide, thread-safe cache of transform matrices keyed by (kind, p), so a p×p matrix is built once.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "tprod/transform/detail/tube_gemm.hpp"

namespace tprod::detail {

template <class S, class Build>
std::shared_ptr<const dense_matrix<S>> cached_matrix(const std::string& kind, std::size_t p, Build build) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::size_t>, std::shared_ptr<const dense_matrix<S>>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[{kind, p}];
  if (!slot) slot = std::make_shared<const dense_matrix<S>>(build());
  return slot;
}

}  // namespace tprod::detail
