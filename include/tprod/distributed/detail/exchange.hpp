// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file exchange.hpp
/// @brief The one communication pattern of the distributed tensors: every rank sends a strided block of its local
/// array to every rank (MPI_Alltoallw), each block described by an MPI datatype, so that MPI packs and unpacks in
/// place and tprod copies nothing of its own. Scatter and gather are the same exchange with one side's blocks empty.
#include <cstddef>
#include <vector>

#include "tprod/distributed/communicator.hpp"

namespace tprod::distributed::detail {

/// @brief `columns` runs of `rows` consecutive elements, `stride` elements apart, the first at element `offset`:
/// a block of tubes of one slice range, in either domain's layout. Empty when rows or columns is 0.
struct strided_block {
  std::size_t rows = 0, columns = 0, stride = 0, offset = 0;
  bool empty() const { return rows == 0 || columns == 0; }
};

/// @brief An MPI datatype for one strided_block of T, with its offset built in (byte offsets in MPI_Alltoallw's
/// displacements are ints, too small past 2 GiB); freed on destruction.
class block_type {
 public:
  template <class T>
  static block_type of(const strided_block& b) {
    block_type t;
    if (b.empty()) return t;
    MPI_Datatype columns = MPI_DATATYPE_NULL;
    TPROD_MPI_CHECK(MPI_Type_create_hvector(mpi_int(b.columns, "columns of a block"),
                                            mpi_int(b.rows, "rows of a block"), MPI_Aint(b.stride * sizeof(T)),
                                            mpi_type<T>(), &columns));
    int one = 1;
    MPI_Aint offset = MPI_Aint(b.offset * sizeof(T));
    TPROD_MPI_CHECK(MPI_Type_create_struct(1, &one, &offset, &columns, &t.type_));
    MPI_Type_free(&columns);
    TPROD_MPI_CHECK(MPI_Type_commit(&t.type_));
    return t;
  }
  block_type() = default;
  block_type(block_type&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  block_type& operator=(block_type&&) = delete;
  ~block_type() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  /// @brief The type to pass with count 1, or MPI_BYTE with count 0 for an empty block.
  MPI_Datatype get() const { return type_ == MPI_DATATYPE_NULL ? MPI_BYTE : type_; }
  int count() const { return type_ == MPI_DATATYPE_NULL ? 0 : 1; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// @brief Collective: rank r's block sends[q] of `send` goes to rank q, where it lands as block recvs[r] of `recv`
/// (both lists have one block per rank; a block and its counterpart hold the same number of elements).
template <class T>
void exchange(const communicator& comm, const T* send, const std::vector<strided_block>& sends, T* recv,
              const std::vector<strided_block>& recvs) {
  const std::size_t ranks = std::size_t(comm.size());
  std::vector<block_type> send_types, recv_types;
  std::vector<MPI_Datatype> stypes(ranks), rtypes(ranks);
  std::vector<int> scounts(ranks), rcounts(ranks), zeros(ranks, 0);
  send_types.reserve(ranks);
  recv_types.reserve(ranks);
  for (std::size_t q = 0; q < ranks; ++q) {
    send_types.push_back(block_type::of<T>(sends[q]));
    recv_types.push_back(block_type::of<T>(recvs[q]));
    stypes[q] = send_types.back().get();
    rtypes[q] = recv_types.back().get();
    scounts[q] = send_types.back().count();
    rcounts[q] = recv_types.back().count();
  }
  TPROD_MPI_CHECK(MPI_Alltoallw(send, scounts.data(), zeros.data(), stypes.data(), recv, rcounts.data(), zeros.data(),
                                rtypes.data(), comm.get()));
}

}  // namespace tprod::distributed::detail
