// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tensor3.hpp
/// @brief distributed::tensor3: an m×n×p tensor spread over the ranks of a communicator by tubes. With the tubes
/// numbered as in tprod's column-major layout, t = i + m·j (the rows of the (m·n)×p tube unfolding), rank r owns the
/// contiguous block of tubes tubes().begin(r) … end(r) − 1, whole: the transform along the tubes needs nothing from
/// another rank. Its local part is a tprod::tensor3 of (owned tubes)×1×p, tube t at row t − first_tube().
#include <cstddef>
#include <string>
#include <utility>

#include "tprod/core/tensor3.hpp"
#include "tprod/distributed/communicator.hpp"
#include "tprod/distributed/detail/exchange.hpp"
#include "tprod/distributed/partition.hpp"

namespace tprod::distributed {

template <scalar T>
class tensor3 {
 public:
  using value_type = T;
  using local_type = tprod::tensor3<T>;

  /// @brief The m×n×p zero tensor on `comm` (collective in the sense that every rank must make it).
  tensor3(communicator comm, std::size_t m, std::size_t n, std::size_t p)
      : tensor3(comm, m, n, p, local_type(block_partition(m * n, comm.size()).size(comm.rank()), 1, p)) {}

  /// @brief Collective: adopts each rank's part, the tubes tubes().begin(rank) … end(rank) − 1 of the m×n×p tensor as
  /// a (that many)×1×p tensor (what a rank computed or read itself).
  /// @throws distributed_error on every rank when any rank's part has the wrong shape, naming that rank.
  static tensor3 from_local(communicator comm, std::size_t m, std::size_t n, std::size_t p, local_type local) {
    const block_partition tubes(m * n, comm.size());
    collectively(comm, [&] {
      const std::size_t rows = tubes.size(comm.rank());
      TPROD_EXPECTS(local.m() == rows && local.n() == 1 && local.p() == p,
                    "distributed::tensor3::from_local: this rank owns " + std::to_string(rows) + " tubes of the " +
                        shape_string(m, n, p) + " tensor, so its part must be " + shape_string(rows, 1, p) +
                        ", not " + local.shape());
    });
    return tensor3(comm, m, n, p, std::move(local));
  }

  std::size_t m() const { return m_; }
  std::size_t n() const { return n_; }
  std::size_t p() const { return p_; }
  std::string shape() const { return shape_string(m_, n_, p_); }
  const communicator& comm() const { return comm_; }
  /// @brief Which rank owns which tubes.
  const block_partition& tubes() const { return tubes_; }
  std::size_t first_tube() const { return tubes_.begin(comm_.rank()); }
  /// @brief This rank's tubes as a (owned tubes)×1×p tensor.
  local_type& local() { return local_; }
  const local_type& local() const { return local_; }

 private:
  tensor3(communicator comm, std::size_t m, std::size_t n, std::size_t p, local_type local)
      : comm_(comm), m_(m), n_(n), p_(p), tubes_(m * n, comm.size()), local_(std::move(local)) {}

  communicator comm_;
  std::size_t m_, n_, p_;
  block_partition tubes_;
  local_type local_;
};

namespace detail {
/// @brief The blocks that carry each rank's tubes between the whole m×n×p tensor (on one rank) and the parts: in the
/// whole tensor, rank q's tubes are p runs of size(q) elements, m·n apart, from element begin(q); in the part, one run.
inline std::vector<strided_block> whole_tube_blocks(const block_partition& tubes, std::size_t p) {
  std::vector<strided_block> blocks;
  for (int q = 0; q < tubes.parts(); ++q) blocks.push_back({tubes.size(q), p, tubes.count(), tubes.begin(q)});
  return blocks;
}
inline strided_block part_block(const block_partition& tubes, int rank, std::size_t p) {
  return {tubes.size(rank) * p, 1, 0, 0};
}
}  // namespace detail

/// @brief Collective: spreads `whole`, read on `root` only (the other ranks may pass an empty tensor), over the
/// ranks of `comm` by tubes. No rank but the root ever holds more than its own part.
/// @throws distributed_error on every rank when root is not a rank of comm.
template <scalar T, extents3_type E>
tensor3<T> scatter(const communicator& comm, const tprod::tensor3<T, E>& whole, int root = 0) {
  if (root < 0 || root >= comm.size())
    throw distributed_error("distributed::scatter: root " + std::to_string(root) + " is not a rank of the " +
                            std::to_string(comm.size()) + "-rank communicator");
  std::size_t shape[3] = {whole.m(), whole.n(), whole.p()};
  TPROD_MPI_CHECK(MPI_Bcast(shape, 3, MPI_UINT64_T, root, comm.get()));
  tensor3<T> out(comm, shape[0], shape[1], shape[2]);
  const auto& tubes = out.tubes();
  const std::vector<detail::strided_block> none(std::size_t(comm.size()));
  std::vector<detail::strided_block> recvs = none;
  recvs[std::size_t(root)] = detail::part_block(tubes, comm.rank(), shape[2]);
  const bool is_root = comm.rank() == root;
  detail::exchange(comm, whole.data(), is_root ? detail::whole_tube_blocks(tubes, shape[2]) : none,
                   out.local().data(), recvs);
  return out;
}

/// @brief Collective: the whole tensor on `root` (an empty 0×0×0 tensor on the other ranks).
template <scalar T>
tprod::tensor3<T> gather(const tensor3<T>& a, int root = 0) {
  const auto& comm = a.comm();
  if (root < 0 || root >= comm.size())
    throw distributed_error("distributed::gather: root " + std::to_string(root) + " is not a rank of the " +
                            std::to_string(comm.size()) + "-rank communicator");
  const bool is_root = comm.rank() == root;
  tprod::tensor3<T> whole = is_root ? tprod::tensor3<T>(a.m(), a.n(), a.p(), uninitialized) : tprod::tensor3<T>();
  const std::vector<detail::strided_block> none(std::size_t(comm.size()));
  std::vector<detail::strided_block> sends = none;
  sends[std::size_t(root)] = detail::part_block(a.tubes(), comm.rank(), a.p());
  detail::exchange(comm, a.local().data(), sends, whole.data(),
                   is_root ? detail::whole_tube_blocks(a.tubes(), a.p()) : none);
  return whole;
}

}  // namespace tprod::distributed
