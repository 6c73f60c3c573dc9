// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file partition.hpp
/// @brief How items (the tubes of an m×n×p tensor, or the stored slices of its transform) are spread over the
/// ranks: each rank owns one contiguous block, in rank order.
#include <cstddef>
#include <string>
#include <vector>

#include "tprod/core/error.hpp"

namespace tprod::distributed {

/// @brief Contiguous blocks of `count` items over `parts` ranks: rank r owns the items [begin(r), end(r)), which
/// may be none (more ranks than items). Balanced: block sizes differ by at most one, the larger blocks first.
class block_partition {
 public:
  /// @throws argument_error when parts is not positive.
  block_partition(std::size_t count, int parts) : offsets_(std::size_t(parts > 0 ? parts : 0) + 1) {
    if (parts <= 0) throw argument_error("block_partition: parts must be positive, got " + std::to_string(parts));
    const std::size_t q = count / std::size_t(parts), r = count % std::size_t(parts);
    for (std::size_t k = 0; k < std::size_t(parts); ++k) offsets_[k + 1] = offsets_[k] + q + (k < r ? 1 : 0);
  }

  int parts() const { return int(offsets_.size()) - 1; }
  std::size_t count() const { return offsets_.back(); }
  std::size_t begin(int rank) const { return offsets_[std::size_t(rank)]; }
  std::size_t end(int rank) const { return offsets_[std::size_t(rank) + 1]; }
  std::size_t size(int rank) const { return end(rank) - begin(rank); }
  bool operator==(const block_partition&) const = default;

 private:
  std::vector<std::size_t> offsets_;  // parts + 1 entries: offsets_[r] = begin(r)
};

}  // namespace tprod::distributed
