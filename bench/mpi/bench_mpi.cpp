// SPDX-License-Identifier: Apache-2.0
// bench_mpi: the distributed L-product and its parts at P ranks, each case timed as the slowest rank's time
// (manual time, MPI_MAX over the ranks), so every rank sees the same time and Google Benchmark makes the same
// iteration decisions on every rank (no rank waits in a collective another never enters).
//
// Cases, for S×S×p double tensors under the DCT (S = 1024, p = 16 by default; p = 1 shows ranks beyond the
// stored slices; weak_s512_p16 makes A 512·P × 512 × 16 at P ranks, for weak scaling):
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
//   mpi/svd               the L-SVD of Â (each rank its slices' SVDs, one gather of the singular values)
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

/// A case's sizes: A is m×s×p, B s×s×p.
struct shape {
  std::size_t m, s, p;
};

struct operands {
  dist::communicator comm;
  dist::tensor3<double> a, b;
  explicit operands(shape z) : comm(MPI_COMM_WORLD), a(spread(z.m, z.s, z.p, 1)), b(spread(z.s, z.s, z.p, 2)) {}

 private:
  /// A random m×n×p tensor made on rank 0 and scattered by tubes.
  dist::tensor3<double> spread(std::size_t m, std::size_t n, std::size_t p, unsigned seed) const {
    using whole = tprod::tensor3<double>;
    return dist::scatter(comm, comm.rank() == 0 ? tprod::random_tensor3<double>(m, n, p, seed) : whole{});
  }
};

void product(benchmark::State& state, shape z) {
  const operands o(z);
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(dist::product(o.a, o.b, tprod::dct{}).local().data()); });
  state.counters["ranks"] = o.comm.size();
}

void slab_product(benchmark::State& state, shape z) {
  const operands o(z);
  timed(state, o.comm, [&] {
    const auto chat = dist::transform(o.a, tprod::dct{}) * dist::transform(o.b, tprod::dct{});
    benchmark::DoNotOptimize(dist::inverse_transform(chat).local().data());
  });
}

void transform(benchmark::State& state, shape z) {
  const operands o(z);
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(dist::transform(o.a, tprod::dct{}).local().data().data()); });
}

void local_transform(benchmark::State& state, shape z) {
  const operands o(z);
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(tprod::transform(o.a.local(), tprod::dct{}).data().data()); });
}

/// The routes of transform's all-to-all: this rank's transformed tubes to every rank's whole slices.
dist::detail::routes slab_routes(const dist::tensor3<double>& x, const dist::transformed<double, tprod::dct>& out) {
  return {x.tubes(), x.m(), x.n(), dist::detail::box_layout::slabs(out.slices(), x.m()), x.comm().rank()};
}

void alltoall(benchmark::State& state, shape z) {
  const operands o(z);
  const auto local_hat = tprod::transform(o.a.local(), tprod::dct{});
  dist::transformed<double, tprod::dct> out(o.comm, z.m, z.s, z.p, tprod::dct{}, tprod::uninitialized);
  const auto r = slab_routes(o.a, out);
  dist::detail::messages<const double> sends(std::size_t(o.comm.size()));
  dist::detail::messages<double> recvs(std::size_t(o.comm.size()));
  r.add_tubes(sends, local_hat.data().data());
  r.add_boxes(recvs, std::vector<double*>{out.local().data().data()});
  timed(state, o.comm, [&] { dist::detail::exchange(o.comm, sends, recvs); });
  // What this rank sends to the others (its own block stays).
  const int rank = o.comm.rank();
  const double sent = double(o.a.tubes().size(rank)) * double(z.p - out.slices().size(rank)) * sizeof(double);
  state.counters["sent_bytes"] = sent;
  state.counters["sent_rate"] = benchmark::Counter(sent, benchmark::Counter::kIsIterationInvariantRate);
}

/// The forward exchange of two operands to whole slices: in one all-to-all (`together`) or in two.
void alltoall_pair(benchmark::State& state, shape z, bool together) {
  const operands o(z);
  const auto a_hat = tprod::transform(o.a.local(), tprod::dct{}), b_hat = tprod::transform(o.b.local(), tprod::dct{});
  dist::transformed<double, tprod::dct> a_out(o.comm, z.m, z.s, z.p, tprod::dct{}, tprod::uninitialized),
      b_out(o.comm, z.m, z.s, z.p, tprod::dct{}, tprod::uninitialized);
  const auto a_routes = slab_routes(o.a, a_out), b_routes = slab_routes(o.b, b_out);
  const std::size_t ranks = std::size_t(o.comm.size());
  using pieces = std::pair<dist::detail::messages<const double>, dist::detail::messages<double>>;
  const auto add = [](pieces& m, const dist::detail::routes& r, const auto& hat, auto& out) {
    r.add_tubes(m.first, hat.data().data());
    r.add_boxes(m.second, std::vector<double*>{out.local().data().data()});
  };
  pieces both{ranks, ranks}, a_only{ranks, ranks}, b_only{ranks, ranks};
  add(both, a_routes, a_hat, a_out);
  add(both, b_routes, b_hat, b_out);
  add(a_only, a_routes, a_hat, a_out);
  add(b_only, b_routes, b_hat, b_out);
  timed(state, o.comm, [&] {
    if (together) {
      dist::detail::exchange(o.comm, both.first, both.second);
    } else {
      dist::detail::exchange(o.comm, a_only.first, a_only.second);
      dist::detail::exchange(o.comm, b_only.first, b_only.second);
    }
  });
}
void alltoall_two(benchmark::State& state, shape z) { alltoall_pair(state, z, true); }
void alltoall_twice(benchmark::State& state, shape z) { alltoall_pair(state, z, false); }

void facewise(benchmark::State& state, shape z) {
  const operands o(z);
  const auto ahat = dist::transform(o.a, tprod::dct{}), bhat = dist::transform(o.b, tprod::dct{});
  timed(state, o.comm, [&] { benchmark::DoNotOptimize((ahat * bhat).local().data().data()); });
}

void svd(benchmark::State& state, shape z) {
  const operands o(z);
  const auto ahat = dist::transform(o.a, tprod::dct{});
  timed(state, o.comm, [&] { benchmark::DoNotOptimize(dist::svd(ahat).sigma.data()); });
}

void register_cases(const std::string& size_name, shape z) {
  const std::string suffix = "/" + size_name;
  const auto add = [&](const char* name, void (*f)(benchmark::State&, shape)) {
    benchmark::RegisterBenchmark((std::string("mpi/") + name + suffix).c_str(),
                                 [f, z](benchmark::State& st) { f(st, z); })
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
  add("svd", svd);
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
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  register_cases("s1024_p16", {1024, 1024, 16});
  register_cases("s512_p16", {512, 512, 16});
  register_cases("s1024_p1", {1024, 1024, 1});
  register_cases("smoke", {32, 32, 4});
  // Weak scaling: A's rows grow with the ranks (512·P × 512 × 16), so each rank's share of the work stays the same.
  register_cases("weak_s512_p16", {512 * std::size_t(ranks), 512, 16});
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
