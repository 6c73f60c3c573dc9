// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file communicator.hpp
/// @brief The MPI communicator distributed tensors live on, the MPI datatypes of tprod's scalars, and the one way a
/// distributed operation fails: every rank of the communicator throws the same tprod::distributed_error, naming the
/// rank that found the problem, so that no rank is left waiting in a collective that the others never reach.
#include <mpi.h>

#include <array>
#include <complex>
#include <cstddef>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

#include "tprod/core/scalar.hpp"

namespace tprod {

/// @brief A distributed operation failed. Every rank of the communicator throws it, with the same message: "rank r
/// of P: " and what rank r found (the lowest failing rank when several fail).
struct distributed_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace tprod

namespace tprod::distributed {

namespace detail {
/// @throws distributed_error naming the MPI call and MPI's message. (With MPI's default error handler,
/// MPI_ERRORS_ARE_FATAL, a failing call aborts every rank before it returns: no rank hangs either way.)
inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw distributed_error(std::string(call) + " failed: " + std::string(text, std::size_t(length)));
}
}  // namespace detail

#define TPROD_MPI_CHECK(call) ::tprod::distributed::detail::check_mpi((call), #call)

/// @brief The MPI datatype of a tprod scalar (std::complex has the layout of C's complex types).
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::same_as<T, float>) return MPI_FLOAT;
  else if constexpr (std::same_as<T, double>) return MPI_DOUBLE;
  else if constexpr (std::same_as<T, std::complex<float>>) return MPI_C_FLOAT_COMPLEX;
  else if constexpr (std::same_as<T, std::complex<double>>) return MPI_C_DOUBLE_COMPLEX;
  else static_assert(sizeof(T) == 0, "tprod::distributed::mpi_type: not a tprod scalar");
}

/// @brief A communicator the caller owns (MPI_COMM_WORLD by default) and keeps alive while tensors use it: the
/// ranks a distributed tensor is spread over. MPI must be initialized first (MPI_Init).
class communicator {
 public:
  /// @throws distributed_error when MPI is not initialized or already finalized.
  communicator(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {  // NOLINT: implicit from MPI_Comm, like Ginkgo's
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
      throw distributed_error("tprod::distributed::communicator: MPI is not initialized (call MPI_Init first) or "
                              "already finalized");
    TPROD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    TPROD_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }

  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// @brief Same group and context (MPI_IDENT): tensors on equal communicators can be combined.
  bool operator==(const communicator& other) const {
    int result = MPI_UNEQUAL;
    TPROD_MPI_CHECK(MPI_Comm_compare(comm_, other.comm_, &result));
    return result == MPI_IDENT;
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

/// @brief Collective: every rank says whether its part went well (`failure` empty) or what went wrong. If any rank
/// failed, every rank throws distributed_error with the lowest failing rank's message: "rank r of P: <message>".
inline void agree(const communicator& comm, std::string failure) {
  const int mine = failure.empty() ? comm.size() : comm.rank();
  int first = comm.size();
  TPROD_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.get()));
  if (first == comm.size()) return;
  int length = int(failure.size());
  TPROD_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, first, comm.get()));
  failure.resize(std::size_t(length));
  TPROD_MPI_CHECK(MPI_Bcast(failure.data(), length, MPI_CHAR, first, comm.get()));
  throw distributed_error("rank " + std::to_string(first) + " of " + std::to_string(comm.size()) + ": " + failure);
}

/// @brief Collective: runs `local` (work or checks on this rank's part only, no communication) and then agrees: if
/// `local` threw on any rank, every rank throws distributed_error with that rank's message (see agree).
template <class F>
void collectively(const communicator& comm, F&& local) {
  std::string failure;
  try {
    local();
  } catch (const std::exception& e) {
    failure = *e.what() ? e.what() : "an exception without a message";
  }
  agree(comm, std::move(failure));
}

/// @brief Collective: Σ over the ranks of each rank's `value` (MPI_SUM), on every rank.
template <class V>
V sum_over_ranks(const communicator& comm, V value) {
  V total{};
  TPROD_MPI_CHECK(MPI_Allreduce(&value, &total, 1, mpi_type<V>(), MPI_SUM, comm.get()));
  return total;
}

/// @brief Collective: the smallest and the largest value of each count over the ranks, in one MPI_Allreduce (of the
/// counts and of their complements, whose maximum is the complement of the minimum). Equal: every rank has the same.
template <std::size_t N>
struct count_range {
  std::array<unsigned long long, N> low, high;
  bool equal() const { return low == high; }
};
template <std::size_t N>
count_range<N> range_over_ranks(const communicator& comm, const std::array<unsigned long long, N>& counts) {
  std::array<unsigned long long, 2 * N> both;
  for (std::size_t i = 0; i < N; ++i) both[i] = counts[i], both[N + i] = ~counts[i];
  TPROD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, both.data(), int(2 * N), MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm.get()));
  count_range<N> r;
  for (std::size_t i = 0; i < N; ++i) r.high[i] = both[i], r.low[i] = ~both[N + i];
  return r;
}

/// @brief A count or a stride as MPI's int. @throws distributed_error (on this rank: call inside collectively)
/// when it does not fit, naming what it counts.
inline int mpi_int(std::size_t v, const char* what) {
  if (v > std::size_t(std::numeric_limits<int>::max()))
    throw distributed_error(std::string("tprod::distributed: ") + what + " (" + std::to_string(v) +
                            ") exceeds MPI's int counts");
  return int(v);
}

}  // namespace tprod::distributed
