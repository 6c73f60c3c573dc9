// SPDX-License-Identifier: Apache-2.0
// bench_mpi: the distributed L-product and its parts at P ranks, each case timed as the slowest rank's time
// (manual time, MPI_MAX over the ranks), so every rank sees the same time and Google Benchmark makes the same
// iteration decisions on every rank (no rank waits in a collective another never enters).
//
// Cases, for an S×S×p double tensor under the DCT (S = 1024, p = 16 by default; p = 1 shows ranks beyond the
// stored slices):
//   mpi/product           A *_L B, distributed by tubes (A and B forward in one all-to-all to pencils: every rank an
//                         equal share of the slices' rows; facewise; one all-to-all back)
//   mpi/slab_product      the same through whole slices per rank (transform, Â·B̂, inverse_transform: 3 all-to-alls,
//                         ranks beyond the stored slices idle), to set pencils beside slabs
//   mpi/transform         L(A): local tube transforms + the all-to-all, tubes → slices
//   mpi/local_transform   the local tube transforms alone (tprod::transform of this rank's tubes)
//   mpi/alltoall          the all-to-all alone (the exchange of transform, on the same blocks)
//   mpi/alltoall_two      A's and B's blocks in one all-to-all (the product's forward exchange), against
//                         mpi/alltoall_twice, the same blocks in two all-to-alls
//   mpi/facewise          Â·B̂ on the owned slices (no communication)
// Counters: bytes each rank sends in the all-to-all and their rate.
//
//   mpirun -np 2 build/bench/mpi/bench_mpi --benchmark_filter=s1024
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <chrono>

#include "tprod/core/random.hpp"
#include "tprod/distributed.hpp"
#include "tprod/transform/dct.hpp"

namespace {

namespace dist = tprod::distributed;
using clock_type = std::chrono::steady_clock;

/// Runs f once per iteration and reports the slowest rank's seconds.
template <class F>
void timed(benchmark::State& state, const dist::communicator& comm, F&& f) {
  for (auto _ : state) {
    MPI_Barrier(comm.get());
    const auto t0 = clock_type::now();
    f();
    double mine = std::chrono::duration<double>(clock_type::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.get());
    state.SetIterationTime(slowest);
  }
}

struct operands {
  dist::communicator comm;
  dist::tensor3<double> a, b;
  operands(std::size_t s, std::size_t p)
      : comm(MPI_COMM_WORLD),
        a(dist::scatter(comm, comm.rank() == 0 ? tprod::random_tensor3<double>(s, s, p, 1) : tprod::tensor3<double>())),
        b(dist::scatter(comm, comm.rank() == 0 ? tprod::random_tensor3<double>(s, s, p, 2) : tprod::tensor3<double>())) {}
};

void product(benchmark::State& state, std::size_t s, std::size_t p) {
  const operands o(s, p);
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(dist::product(o.a, o.b, tprod::dct{}).local().data()); });
  state.counters["ranks"] = o.comm.size();
}

void slab_product(benchmark::State& state, std::size_t s, std::size_t p) {
  const operands o(s, p);
  timed(state, o.comm, [&] {
    const auto chat = dist::transform(o.a, tprod::dct{}) * dist::transform(o.b, tprod::dct{});
    benchmark::DoNotOptimize(dist::inverse_transform(chat).local().data());
  });
}

void transform(benchmark::State& state, std::size_t s, std::size_t p) {
  const operands o(s, p);
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(dist::transform(o.a, tprod::dct{}).local().data().data()); });
}

void local_transform(benchmark::State& state, std::size_t s, std::size_t p) {
  const operands o(s, p);
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(tprod::transform(o.a.local(), tprod::dct{}).data().data()); });
}

/// The routes of transform's all-to-all: this rank's transformed tubes to every rank's whole slices.
dist::detail::routes slab_routes(const operands& o, const dist::transformed<double, tprod::dct>& out) {
  return {o.a.tubes(), o.a.m(), o.a.n(), dist::detail::box_layout::slabs(out.slices(), o.a.m()), o.comm.rank()};
}

void alltoall(benchmark::State& state, std::size_t s, std::size_t p) {
  const operands o(s, p);
  const auto local_hat = tprod::transform(o.a.local(), tprod::dct{});
  dist::transformed<double, tprod::dct> out(o.comm, s, s, p, tprod::dct{}, tprod::uninitialized);
  const auto r = slab_routes(o, out);
  dist::detail::messages<const double> sends(std::size_t(o.comm.size()));
  dist::detail::messages<double> recvs(std::size_t(o.comm.size()));
  r.add_tubes(sends, local_hat.data().data());
  r.add_boxes(recvs, std::vector<double*>{out.local().data().data()});
  timed(state, o.comm, [&] { dist::detail::exchange(o.comm, sends, recvs); });
  // What this rank sends to the others (its own block stays).
  const int rank = o.comm.rank();
  const double sent = double(o.a.tubes().size(rank)) * double(p - out.slices().size(rank)) * sizeof(double);
  state.counters["sent_bytes"] = sent;
  state.counters["sent_rate"] = benchmark::Counter(sent, benchmark::Counter::kIsIterationInvariantRate);
}

/// The forward exchange of two operands to whole slices: in one all-to-all (`together`) or in two.
void alltoall_pair(benchmark::State& state, std::size_t s, std::size_t p, bool together) {
  const operands o(s, p);
  const auto a_hat = tprod::transform(o.a.local(), tprod::dct{}), b_hat = tprod::transform(o.b.local(), tprod::dct{});
  dist::transformed<double, tprod::dct> a_out(o.comm, s, s, p, tprod::dct{}, tprod::uninitialized),
      b_out(o.comm, s, s, p, tprod::dct{}, tprod::uninitialized);
  const auto r = slab_routes(o, a_out);
  const std::size_t ranks = std::size_t(o.comm.size());
  const auto messages_of = [&](const auto& hats, const auto& outs) {
    std::pair<dist::detail::messages<const double>, dist::detail::messages<double>> m{ranks, ranks};
    for (const auto* hat : hats) r.add_tubes(m.first, hat->data().data());
    for (auto* out : outs) r.add_boxes(m.second, std::vector<double*>{out->local().data().data()});
    return m;
  };
  const auto both = messages_of(std::vector{&a_hat, &b_hat}, std::vector{&a_out, &b_out});
  const auto a_only = messages_of(std::vector{&a_hat}, std::vector{&a_out});
  const auto b_only = messages_of(std::vector{&b_hat}, std::vector{&b_out});
  timed(state, o.comm, [&] {
    if (together) {
      dist::detail::exchange(o.comm, both.first, both.second);
    } else {
      dist::detail::exchange(o.comm, a_only.first, a_only.second);
      dist::detail::exchange(o.comm, b_only.first, b_only.second);
    }
  });
}
void alltoall_two(benchmark::State& state, std::size_t s, std::size_t p) { alltoall_pair(state, s, p, true); }
void alltoall_twice(benchmark::State& state, std::size_t s, std::size_t p) { alltoall_pair(state, s, p, false); }

void facewise(benchmark::State& state, std::size_t s, std::size_t p) {
  const operands o(s, p);
  const auto ahat = dist::transform(o.a, tprod::dct{}), bhat = dist::transform(o.b, tprod::dct{});
  timed(state, o.comm, [&] { benchmark::DoNotOptimize((ahat * bhat).local().data().data()); });
}

void register_cases(const char* size_name, std::size_t s, std::size_t p) {
  const std::string suffix = std::string("/") + size_name;
  const auto add = [&](const char* name, void (*f)(benchmark::State&, std::size_t, std::size_t)) {
    benchmark::RegisterBenchmark((std::string("mpi/") + name + suffix).c_str(),
                                 [f, s, p](benchmark::State& st) { f(st, s, p); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  add("product", product);
  add("slab_product", slab_product);
  add("transform", transform);
  add("local_transform", local_transform);
  add("alltoall", alltoall);
  add("alltoall_two", alltoall_two);
  add("alltoall_twice", alltoall_twice);
  add("facewise", facewise);
}

/// The other ranks run the same cases silently.
class silent_reporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  register_cases("s1024_p16", 1024, 16);
  register_cases("s512_p16", 512, 16);
  register_cases("s1024_p1", 1024, 1);
  register_cases("smoke", 32, 4);
  benchmark::Initialize(&argc, argv);
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    silent_reporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
