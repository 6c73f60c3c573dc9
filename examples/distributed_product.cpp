// SPDX-License-Identifier: Apache-2.0
// distributed_product: the L-product of two tensors spread over the ranks of MPI_COMM_WORLD (docs/distributed.md).
//
//   mpirun -np 2 build/examples/distributed_product                  # 1024x1024x16 double, DCT, 5 repetitions
//   mpirun -np 4 build/examples/distributed_product --size 512 --tubes 32 --chain 10
//   build/examples/distributed_product --threads 2                   # one process: also times tprod::product
//
// Rank 0 draws A and B, scatters them by tubes, and every rank then runs C = A *_L B (forward transforms with their
// all-to-all, the facewise products on its own slices, the inverse with its all-to-all), then a chain of --chain
// products kept in the transform domain (Ĉ = Â·B̂·B̂·…, square B), which communicates only at its two ends. Rank 0
// prints the median times of each step, and checks C against the one-process tprod::product (exit status 1 when they
// differ by more than 1e-12 relative).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tprod/distributed.hpp"
#include "tprod/tprod.hpp"

namespace {

using namespace tprod;
namespace dist = tprod::distributed;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// @brief "--name value" as a positive integer, else `fallback`; exits with a message on a bad value.
std::size_t option(int argc, char** argv, const std::string& name, std::size_t fallback, int rank) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == "--" + name) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (end == argv[i + 1] || *end != '\0' || v <= 0) {
        if (rank == 0) std::fprintf(stderr, "distributed_product: --%s expects a positive integer\n", name.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      return std::size_t(v);
    }
  return fallback;
}

/// @brief Exits with a message on an argument that is not one of the "--name value" options the program reads (a
/// misspelled option would otherwise leave its default in place without a word).
void check_arguments(int argc, char** argv, int rank) {
  const std::vector<std::string> known{"--size", "--tubes", "--reps", "--chain", "--threads"};
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    const bool ok = std::find(known.begin(), known.end(), a) != known.end() && i + 1 < argc;
    if (!ok) {
      if (rank == 0)
        std::fprintf(stderr,
                     "distributed_product: unexpected argument '%s' (the options are --size, --tubes, --reps, "
                     "--chain and --threads, each with a positive integer)\n",
                     a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
}

int run(int argc, char** argv) {
  const dist::communicator comm;
  check_arguments(argc, argv, comm.rank());
  const auto number = [&](const std::string& name, std::size_t fallback) {
    return option(argc, argv, name, fallback, comm.rank());
  };
  const std::size_t s = number("size", 1024), p = number("tubes", 16), reps = number("reps", 5);
  const std::size_t chain = number("chain", 10);
  set_num_threads(number("threads", 1));
  const bool root = comm.rank() == 0;
  if (root)
    std::printf("distributed_product: %zux%zux%zu double under the DCT on %d ranks, %zu threads each\n", s, s, p,
                comm.size(), num_threads());

  const auto wa = root ? random_tensor3<double>(s, s, p, 1) : tensor3<double>();
  const auto wb = root ? random_tensor3<double>(s, s, p, 2) : tensor3<double>();
  const auto a = dist::scatter(comm, wa), b = dist::scatter(comm, wb);

  // C = A *_L B, its three steps timed apart: the transforms include their all-to-alls.
  std::vector<double> forward, facewise, inverse, whole;
  dist::tensor3<double> c(comm, s, s, p);
  for (std::size_t r = 0; r < reps; ++r) {
    MPI_Barrier(comm.get());
    auto t0 = clock_type::now();
    const auto ahat = dist::transform(a, dct{}), bhat = dist::transform(b, dct{});
    forward.push_back(seconds_since(t0));
    auto t1 = clock_type::now();
    const auto chat = ahat * bhat;
    facewise.push_back(seconds_since(t1));
    auto t2 = clock_type::now();
    c = dist::inverse_transform(chat);
    inverse.push_back(seconds_since(t2));
    whole.push_back(seconds_since(t0));
  }
  // A chain kept in the transform domain: two forward transforms and one inverse, whatever its length.
  MPI_Barrier(comm.get());
  auto t3 = clock_type::now();
  const auto bhat = dist::transform(b, dct{});
  auto chat = dist::transform(a, dct{}) * bhat;
  for (std::size_t k = 1; k < chain; ++k) chat = chat * bhat;
  const auto chained = dist::inverse_transform(chat);
  const double chain_seconds = seconds_since(t3);

  const auto whole_c = dist::gather(c);
  if (root) {
    std::printf("C = A *_L B, median of %zu: %.3f s (forward transforms with their all-to-all %.3f s, facewise "
                "%.3f s, inverse with its all-to-all %.3f s)\n",
                reps, median(whole), median(forward), median(facewise), median(inverse));
    std::printf("a chain of %zu products in the transform domain: %.3f s\n", chain, chain_seconds);
  }
  int status = 0;
  if (root) {
    const auto t4 = clock_type::now();
    const auto expected = product(wa, wb, dct{});
    const double one_process = seconds_since(t4);
    const double diff = (whole_c.elements() - expected.elements()).cwiseAbs().maxCoeff();
    const double scale = std::max(1.0, expected.elements().cwiseAbs().maxCoeff());
    std::printf("one process (tprod::product, %zu threads, while the other ranks wait): %.3f s; max |C - C_1| = "
                "%.3g (relative %.3g)\n",
                num_threads(), one_process, diff, diff / scale);
    if (!(diff <= 1e-12 * scale)) {
      std::fprintf(stderr, "distributed_product: the distributed product differs from the one-process one\n");
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm.get());
  (void)chained;
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distributed_product: error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
