// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file npy.hpp
/// @brief Collective .npy reading and writing of distributed tensors: each rank reads or writes its own tubes at
/// their offsets in the one file, so no rank ever holds more than its part.
///
/// An (m, n, p) array in Fortran order (what tprod and numpy.save of a Fortran array write) stores slice k as m·n
/// contiguous elements, so a rank's tubes are p runs of its tube count, m·n elements apart: p reads or writes per
/// rank. A C-order array (numpy's default) stores each tube's p values together at ((i·n + j)·p): one read per tube.
/// The file must be visible to every rank at the same path (a shared file system on a cluster).
///
/// Writes are atomic as on one process: rank 0 creates a temporary file beside the target and writes the header,
/// every rank writes and flushes its runs, and rank 0 renames it over the target only when every rank succeeded;
/// otherwise the temporary file is removed and every rank throws. Reads need the file's dtype to be T's.
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "tprod/distributed/tensor3.hpp"
#include "tprod/io/npy_tensor3.hpp"

namespace tprod::distributed {

/// @brief Collective: the (m, n, p) or (m, n) .npy file as a tensor distributed by tubes.
/// @throws distributed_error on every rank when any rank cannot open or read the file (naming it, and the rank),
/// when the file's dtype is not T's, or when the ranks see files of different shapes.
template <scalar T>
tensor3<T> read_tensor3(const communicator& comm, const std::filesystem::path& file) {
  std::optional<io::npy_reader> reader;
  std::array<unsigned long long, 3> shape{}, low{}, high{};
  collectively(comm, [&] {
    reader.emplace(file);
    const dextents3 e = io::detail::tensor3_extents(reader->header().shape, file.string());
    if (reader->header().dtype != io::dtype_of<T>)
      throw io_error(file.string() + ": holds " + std::string(io::dtype_name(reader->header().dtype)) + ", not " +
                     std::string(io::dtype_name(io::dtype_of<T>)) + " (a distributed read does not convert)");
    shape = {e.m(), e.n(), e.p()};
  });
  TPROD_MPI_CHECK(MPI_Allreduce(shape.data(), low.data(), 3, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm.get()));
  TPROD_MPI_CHECK(MPI_Allreduce(shape.data(), high.data(), 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm.get()));
  if (low != high)
    throw distributed_error("distributed::read_tensor3: " + file.string() +
                            " has different shapes on different ranks (not one shared file?)");
  const std::size_t m = shape[0], n = shape[1], p = shape[2], mn = m * n;
  const block_partition tubes(mn, comm.size());
  const std::size_t first = tubes.begin(comm.rank()), count = tubes.size(comm.rank());
  tprod::tensor3<T> part(count, 1, p, uninitialized);
  collectively(comm, [&] {
    if (reader->header().fortran_order) {
      for (std::size_t k = 0; k < p; ++k) reader->read_elements(part.data() + count * k, k * mn + first, count);
      return;
    }
    std::vector<T> tube(p);
    for (std::size_t t = 0; t < count; ++t) {
      const std::size_t i = (first + t) % m, j = (first + t) / m;
      reader->read_elements(tube.data(), (i * n + j) * p, p);
      for (std::size_t k = 0; k < p; ++k) part(t, 0, k) = tube[k];
    }
  });
  return tensor3<T>::from_local(comm, m, n, p, std::move(part));
}

/// @brief Collective: writes A as one (m, n, p) Fortran-order .npy file of T's dtype, atomically (see above).
/// @throws distributed_error on every rank when any rank fails, naming the rank; the target is then untouched.
template <scalar T>
void write_tensor3(const tensor3<T>& a, const std::filesystem::path& file) {
  const auto& comm = a.comm();
  std::optional<io::atomic_file> out;  // rank 0's
  std::string temporary;
  std::size_t header_bytes = 0;
  collectively(comm, [&] {
    if (comm.rank() != 0) return;
    out.emplace(file);
    const std::string header = io::npy_header_bytes(io::dtype_of<T>, {a.m(), a.n(), a.p()});
    out->write(header.data(), header.size());
    out->finish();
    temporary = out->temporary().string();
    header_bytes = header.size();
  });
  int length = int(temporary.size());
  TPROD_MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, comm.get()));
  temporary.resize(std::size_t(length));
  TPROD_MPI_CHECK(MPI_Bcast(temporary.data(), length, MPI_CHAR, 0, comm.get()));
  unsigned long long offset = header_bytes;
  TPROD_MPI_CHECK(MPI_Bcast(&offset, 1, MPI_UNSIGNED_LONG_LONG, 0, comm.get()));
  const std::size_t mn = a.m() * a.n(), first = a.tubes().begin(comm.rank()), count = a.tubes().size(comm.rank());
  collectively(comm, [&] {
    const auto fail = [&](const char* what) {
      throw io_error(file.string() + ": " + what + " (temporary file " + temporary + "): " + std::strerror(errno));
    };
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("cannot open for writing");
    bool ok = true;
    for (std::size_t k = 0; k < a.p() && ok; ++k) {
      const char* p = reinterpret_cast<const char*>(a.local().data() + count * k);
      std::size_t left = count * sizeof(T), at = offset + (k * mn + first) * sizeof(T);
      while (left > 0) {
        const ssize_t put = ::pwrite(fd, p, left, off_t(at));
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) {
          ok = false;
          break;
        }
        p += put;
        at += std::size_t(put);
        left -= std::size_t(put);
      }
    }
    if (!ok) {
      const int err = errno;
      ::close(fd);
      errno = err;
      fail("cannot write");
    }
    if (::fsync(fd) != 0 && errno != EINVAL) fail("cannot flush to disk");
    if (::close(fd) != 0) fail("cannot close");
  });
  collectively(comm, [&] {
    if (comm.rank() == 0) out->commit();
  });
}

}  // namespace tprod::distributed
