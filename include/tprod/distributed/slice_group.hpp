// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file slice_group.hpp
/// @brief The ranks of a communicator as the holders of a transform-domain tensor's slices: tprod::slice_group over
/// MPI, which is all the one-process algebra needs to run on each rank's block of slices (docs/design.md, "One
/// algebra over slabs").
#include <memory>
#include <string>
#include <vector>

#include "tprod/distributed/communicator.hpp"
#include "tprod/distributed/partition.hpp"
#include "tprod/transform/slice_window.hpp"

namespace tprod::distributed {

/// @brief Rank r of `comm` holds the stored slices slices.begin(r) … end(r) − 1. Each step is one MPI collective.
class rank_slice_group final : public slice_group {
 public:
  rank_slice_group(communicator comm, block_partition slices) : comm_(comm), slices_(std::move(slices)) {}

  const communicator& comm() const { return comm_; }
  const block_partition& slices() const { return slices_; }
  /// @brief This rank's window of the slices, held by this group.
  static slice_window window(const std::shared_ptr<const rank_slice_group>& group) {
    const int r = group->comm_.rank();
    return {group->slices_.begin(r), group->slices_.size(r), group->slices_.count(), group};
  }

  double sum(double local) const override { return sum_over_ranks(comm_, local); }
  std::complex<double> sum(std::complex<double> local) const override { return sum_over_ranks(comm_, local); }
  double max(double local) const override {
    double largest = 0;
    TPROD_MPI_CHECK(MPI_Allreduce(&local, &largest, 1, MPI_DOUBLE, MPI_MAX, comm_.get()));
    return largest;
  }
  std::vector<double> gather_columns(const std::vector<double>& local, std::size_t rows) const override {
    std::vector<double> all(rows * slices_.count());
    std::vector<int> counts(std::size_t(comm_.size())), offsets(std::size_t(comm_.size()));
    collectively(comm_, [&] {
      for (int q = 0; q < comm_.size(); ++q) {
        counts[std::size_t(q)] = mpi_int(rows * slices_.size(q), "the values one rank's slices hold");
        offsets[std::size_t(q)] = mpi_int(rows * slices_.begin(q), "the values of the slices before a rank's");
      }
    });
    TPROD_MPI_CHECK(MPI_Allgatherv(local.data(), counts[std::size_t(comm_.rank())], MPI_DOUBLE, all.data(),
                                   counts.data(), offsets.data(), MPI_DOUBLE, comm_.get()));
    return all;
  }
  void agree(const std::function<void()>& local) const override { collectively(comm_, local); }
  bool same(const slice_group& other) const override {
    const auto* o = dynamic_cast<const rank_slice_group*>(&other);
    return o && o->slices_ == slices_ && o->comm_ == comm_;
  }

 private:
  communicator comm_;
  block_partition slices_;
};

}  // namespace tprod::distributed
