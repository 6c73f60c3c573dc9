// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file matrix_cache.hpp
/// @brief A process-wide, thread-safe cache of transform matrices keyed by (kind, p), so a p×p matrix is built once.
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>

#include "tprod/core/detail/dense_matrix.hpp"

namespace tprod::detail {

/// `kind` must be a string literal (its storage outlives the cache; no string is built per call).
template <class S, class Build>
std::shared_ptr<const dense_matrix<S>> cached_matrix(std::string_view kind, std::size_t p, Build build) {
  static std::mutex mutex;
  static std::map<std::pair<std::string_view, std::size_t>, std::shared_ptr<const dense_matrix<S>>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[{kind, p}];
  if (!slot) slot = std::make_shared<const dense_matrix<S>>(build());
  return slot;
}

}  // namespace tprod::detail
