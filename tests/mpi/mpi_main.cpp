// SPDX-License-Identifier: Apache-2.0
// The distributed tests' main: MPI_Init, then doctest on every rank (rank 0 prints the summary, the others only
// their failures), and one exit status for all: a test that failed on any rank fails every rank's run, so mpirun
// reports it whatever rank it was.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include "tprod/core/execution.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tprod::set_num_threads(1);  // one thread per rank: the tests run up to 4 ranks on 2 cores
  doctest::Context context(argc, argv);
  if (rank != 0) context.setOption("minimal", true);
  const int failed = context.run() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
