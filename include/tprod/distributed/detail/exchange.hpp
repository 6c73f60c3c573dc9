// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file exchange.hpp
/// @brief The one communication pattern of the distributed tensors: every rank sends a strided block of its local
/// array to every rank (MPI_Alltoallw), each block described by an MPI datatype, so that MPI packs and unpacks in
/// place and tprod copies nothing of its own. Scatter and gather are the same exchange with one side's blocks empty.
#include <cstddef>
#include <type_traits>
#include <vector>

#include "tprod/distributed/communicator.hpp"

namespace tprod::distributed::detail {

/// @brief `columns` runs of `rows` consecutive elements, `stride` elements apart, the first at element `offset`:
/// a block of tubes of one slice range, in either domain's layout. Empty when rows or columns is 0.
struct strided_block {
  std::size_t rows = 0, columns = 0, stride = 0, offset = 0;
  bool empty() const { return rows == 0 || columns == 0; }
};

/// @brief A piece of a message: one block of one array.
template <class T>
struct piece {
  T* data;
  strided_block block;
};
/// @brief What one side of an exchange holds for every rank: messages[q] lists, in order, the pieces that go to (or
/// come from) rank q. A message and its counterpart hold the same number of elements, in the same order.
template <class T>
using messages = std::vector<std::vector<piece<T>>>;

/// @brief An MPI datatype for the pieces of one message, each at its absolute address (passed with MPI_BOTTOM):
/// one message carries them all, however many arrays and blocks. Byte offsets in MPI_Alltoallw's displacements are
/// ints, too small past 2 GiB, so the addresses are built into the type. Freed on destruction.
class block_type {
 public:
  template <class U>
  static block_type of(const std::vector<piece<U>>& pieces) {
    using T = std::remove_const_t<U>;
    std::vector<block_type> columns;  // owned, so an MPI error part-way frees what was made
    std::vector<MPI_Datatype> handles;
    std::vector<MPI_Aint> addresses;
    for (const auto& [base, b] : pieces) {
      if (b.empty()) continue;
      TPROD_MPI_CHECK(MPI_Type_create_hvector(mpi_int(b.columns, "columns of a block"),
                                              mpi_int(b.rows, "rows of a block"), MPI_Aint(b.stride * sizeof(T)),
                                              mpi_type<T>(), &columns.emplace_back().type_));
      handles.push_back(columns.back().type_);
      MPI_Aint address = 0;
      TPROD_MPI_CHECK(MPI_Get_address(base + b.offset, &address));
      addresses.push_back(address);
    }
    block_type t;
    if (columns.empty()) return t;
    const std::vector<int> ones(columns.size(), 1);
    TPROD_MPI_CHECK(
        MPI_Type_create_struct(int(handles.size()), ones.data(), addresses.data(), handles.data(), &t.type_));
    TPROD_MPI_CHECK(MPI_Type_commit(&t.type_));
    return t;  // the columns are freed here: the struct type keeps what it needs of them
  }
  block_type() = default;
  block_type(block_type&& o) noexcept : type_(o.type_) { o.type_ = MPI_DATATYPE_NULL; }
  block_type& operator=(block_type&&) = delete;
  ~block_type() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  /// @brief The type to pass with count 1, or MPI_BYTE with count 0 when every block is empty.
  MPI_Datatype get() const { return type_ == MPI_DATATYPE_NULL ? MPI_BYTE : type_; }
  int count() const { return type_ == MPI_DATATYPE_NULL ? 0 : 1; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// @brief Collective: rank r's message sends[q] goes to rank q, where it lands as that rank's recvs[r]. Every
/// message travels in one MPI_Alltoallw, one message per pair of ranks however many arrays and blocks it carries (a
/// product's operands are exchanged together).
template <class T>
void exchange(const communicator& comm, const messages<const T>& sends, const messages<T>& recvs) {
  const std::size_t ranks = std::size_t(comm.size());
  std::vector<block_type> send_types, recv_types;
  std::vector<MPI_Datatype> stypes(ranks), rtypes(ranks);
  std::vector<int> scounts(ranks), rcounts(ranks), zeros(ranks, 0);
  send_types.reserve(ranks);
  recv_types.reserve(ranks);
  for (std::size_t q = 0; q < ranks; ++q) {
    send_types.push_back(block_type::of(sends[q]));
    recv_types.push_back(block_type::of(recvs[q]));
    stypes[q] = send_types.back().get();
    rtypes[q] = recv_types.back().get();
    scounts[q] = send_types.back().count();
    rcounts[q] = recv_types.back().count();
  }
  TPROD_MPI_CHECK(MPI_Alltoallw(MPI_BOTTOM, scounts.data(), zeros.data(), stypes.data(), MPI_BOTTOM, rcounts.data(),
                                zeros.data(), rtypes.data(), comm.get()));
}

/// @brief Collective: the exchange of one array's blocks, one per rank (rank r's block sends[q] of `send` lands as
/// block recvs[r] of `recv` on rank q).
template <class T>
void exchange(const communicator& comm, const T* send, const std::vector<strided_block>& sends, T* recv,
              const std::vector<strided_block>& recvs) {
  messages<const T> s(sends.size());
  messages<T> r(recvs.size());
  for (std::size_t q = 0; q < sends.size(); ++q) s[q].push_back({send, sends[q]});
  for (std::size_t q = 0; q < recvs.size(); ++q) r[q].push_back({recv, recvs[q]});
  exchange(comm, s, r);
}

}  // namespace tprod::distributed::detail
