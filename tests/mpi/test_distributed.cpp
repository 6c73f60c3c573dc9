// SPDX-License-Identifier: Apache-2.0
// The distributed tensors against the one-process library: every rank builds the same whole tensors from the same
// seeds, computes the one-process result, and checks its own part of the distributed one (its tubes, or its slices
// of the transform domain). Double within 1e-12 of the scale, as docs/distributed.md promises; float within its
// epsilon times the size. Shapes cover p not divisible by the rank count, ranks that own no tube or no slice, and
// empty tensors.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>

#include "tprod/distributed.hpp"
#include "tprod/io/npy_tensor3.hpp"
#include "tprod/distributed/data_parallel.hpp"
#include "tprod/nn/model.hpp"
#include "../nn/model_test_util.hpp"
#include "tprod_test.hpp"

namespace {

using namespace tprod;
namespace dist = tprod::distributed;
using test::cd;

template <class T>
double rel_tol(std::size_t n) {
  return std::is_same_v<real_t<T>, double> ? 1e-12 : test::tol<T>(n);
}

/// max |x − y| ≤ rel_tol · max(1, max |y|).
#define CHECK_PART_CLOSE(x, y, T, n)                                                                    \
  do {                                                                                                 \
    const double diff_ = test::max_diff(x, y), bound_ = rel_tol<T>(n) * test::max_abs(y);               \
    CHECK_MESSAGE(diff_ <= bound_, "max |difference| ", diff_, " > ", bound_);                          \
  } while (false)

/// This rank's tubes of a whole tensor, as its local part is laid out ((owned tubes)×1×p).
template <class T>
tensor3<T> tubes_of(const tensor3<T>& whole, const dist::block_partition& tubes, int rank) {
  const std::size_t first = tubes.begin(rank), count = tubes.size(rank), mn = whole.m() * whole.n();
  tensor3<T> part(count, 1, whole.p());
  for (std::size_t k = 0; k < whole.p(); ++k)
    for (std::size_t t = 0; t < count; ++t) part(t, 0, k) = whole.data()[first + t + mn * k];
  return part;
}

/// This rank's stored slices of a whole transform-domain tensor.
template <class T, class L>
auto slices_of(const transformed<T, L>& whole, const dist::block_partition& slices, int rank) {
  tensor3<typename L::template domain_scalar<T>> part(whole.m(), whole.n(), slices.size(rank));
  for (std::size_t k = 0; k < part.p(); ++k) part.slice(k) = whole.slice(slices.begin(rank) + k);
  return part;
}

/// The shapes every test runs: (m, n, p) with p = 5 and 7 (not divisible by 2, 3 or 4), m·n below the rank count,
/// and a 1×1×1 tensor.
const std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> shapes = {
    {4, 3, 5}, {3, 5, 7}, {1, 2, 3}, {6, 6, 2}, {1, 1, 1}};

/// Calls f(m, n, p, L) for every shape and every transform (the shape and L's name logged for a failure).
template <class F>
void for_each_transform_and_shape(F&& f) {
  for (const auto& [m, n, p] : shapes) {
    INFO("m = ", m, ", n = ", n, ", p = ", p);
    const Eigen::MatrixXd zr = test::well_conditioned(p, 7);
    const Eigen::MatrixXd zi = test::well_conditioned(p, 11);
    const Eigen::MatrixXcd zc = zr.template cast<cd>() + cd(0, 1) * zi.template cast<cd>() * 0.5;
    const auto call = [&](const auto& l) {
      INFO("transform ", l.name());
      f(m, n, p, l);
    };
    std::apply([&](const auto&... l) { (call(l), ...); },
               std::make_tuple(dct{}, dft{}, identity_transform{}, matrix_transform<double>(zr),
                               matrix_transform<cd>(zc)));
  }
}

}  // namespace

TEST_CASE("distributed: a block partition gives every rank a contiguous block, sizes within one, larger first") {
  const dist::block_partition a(10, 4);
  CHECK(a.count() == 10);
  CHECK(a.begin(0) == 0);
  CHECK(a.end(0) == 3);
  CHECK(a.end(1) == 6);
  CHECK(a.end(2) == 8);
  CHECK(a.end(3) == 10);
  const dist::block_partition b(2, 4);  // more ranks than items: the last two own none
  CHECK(b.size(0) == 1);
  CHECK(b.size(1) == 1);
  CHECK(b.size(2) == 0);
  CHECK(b.size(3) == 0);
  CHECK(b.begin(3) == 2);
  CHECK_THROWS_AS(dist::block_partition(3, 0), argument_error);
}

TEST_CASE_TEMPLATE("distributed: scatter and gather move every tube to its rank and back", T, TPROD_TEST_SCALARS) {
  const dist::communicator comm;
  for (const auto& [m, n, p] : shapes) {
    const auto whole = random_tensor3<T>(m, n, p, 3);
    for (int root = 0; root < comm.size(); ++root) {
      // Only the root's tensor is read: the others pass an empty one.
      const auto a = dist::scatter(comm, comm.rank() == root ? whole : tensor3<T>(), root);
      CHECK(a.m() == m);
      CHECK(a.n() == n);
      CHECK(a.p() == p);
      CHECK(test::max_diff(a.local(), tubes_of(whole, a.tubes(), comm.rank())) == 0.0);
      const auto back = dist::gather(a, root);
      if (comm.rank() == root) CHECK(test::max_diff(back, whole) == 0.0);
      else CHECK(back.size() == 0);
    }
  }
  CHECK_THROWS_AS(dist::scatter(comm, tensor3<T>(2, 2, 2), comm.size()), distributed_error);
}

TEST_CASE_TEMPLATE("distributed: the transform and its inverse equal the one-process ones, slice by slice", T, float,
                   double) {
  const dist::communicator comm;
  for_each_transform_and_shape([&](std::size_t m, std::size_t n, std::size_t p, const auto& l) {
    using To = typename std::decay_t<decltype(l)>::template original_scalar<T>;
    const auto whole = random_tensor3<To>(m, n, p, 5);
    const auto a = dist::scatter(comm, whole);
    const auto ahat = dist::transform(a, l);
    const auto one = transform(whole, l);
    CHECK(ahat.stored_slices() == one.stored_slices());
    CHECK_PART_CLOSE(ahat.local().data(), slices_of(one, ahat.slices(), comm.rank()), To, p);
    const auto back = dist::inverse_transform(ahat);
    CHECK_PART_CLOSE(back.local(), tubes_of(whole, back.tubes(), comm.rank()), To, p);
  });
}

TEST_CASE_TEMPLATE("distributed: products, transposes, identities and inverses equal the one-process ones", T, float,
                   double, std::complex<double>) {
  const dist::communicator comm;
  for_each_transform_and_shape([&](std::size_t m, std::size_t n, std::size_t p, const auto& l) {
    using To = typename std::decay_t<decltype(l)>::template original_scalar<T>;
    const auto wa = random_tensor3<To>(m, n, p, 11), wb = random_tensor3<To>(n, m + 1, p, 12);
    const auto a = dist::scatter(comm, wa), b = dist::scatter(comm, wb);

    const auto c = dist::product(a, b, l);
    CHECK(c.m() == m);
    CHECK(c.n() == m + 1);
    CHECK_PART_CLOSE(c.local(), tubes_of(product(wa, wb, l), c.tubes(), comm.rank()), To, n * p);

    // A chain kept in the transform domain: (Â·B̂)ᵀ·(Â·B̂).
    const auto ahat = dist::transform(a, l), bhat = dist::transform(b, l);
    const auto chat = ahat * bhat;
    const auto chain = dist::transpose(chat) * chat;
    const auto one_chat = transform(wa, l) * transform(wb, l);
    const auto one_chain = transpose(one_chat) * one_chat;
    CHECK_PART_CLOSE(chain.local().data(), slices_of(one_chain, chain.slices(), comm.rank()), To, 2 * n * m * p);

    const auto at = dist::transpose(a, l);
    CHECK(at.m() == n);
    CHECK_PART_CLOSE(at.local(), tubes_of(transpose(wa, l), at.tubes(), comm.rank()), To, p);

    const auto id = dist::identity<T>(comm, m, p, l);
    CHECK_PART_CLOSE(id.local(), tubes_of(identity<T>(m, p, l), id.tubes(), comm.rank()), To, p);

    // A well-conditioned square tensor: its inverse, and A *_L A⁻¹ = I.
    auto wsq = random_tensor3<To>(m, m, p, 13);
    for (std::size_t k = 0; k < p; ++k)
      for (std::size_t i = 0; i < m; ++i) wsq(i, i, k) += To(real_t<To>(2 * m));
    const auto sq = dist::scatter(comm, wsq);
    const auto inv = dist::inverse(sq, l);
    CHECK_PART_CLOSE(inv.local(), tubes_of(inverse(wsq, l), inv.tubes(), comm.rank()), To, m * p);
  });
}

TEST_CASE("distributed: pencils give every rank an equal share of the slices' rows, each row once") {
  for (const auto& [slices, m] : {std::pair<std::size_t, std::size_t>{1, 7}, {2, 5}, {9, 4}, {3, 1}, {0, 4}, {4, 0}})
    for (int ranks : {1, 2, 3, 4, 5, 16}) {
      INFO(slices, " slices of ", m, " rows over ", ranks, " ranks");
      const auto layout = dist::detail::box_layout::pencils(slices, m, ranks);
      std::vector<int> owners(slices * m, 0);
      std::size_t fewest = slices * m, most = 0;
      for (int r = 0; r < ranks; ++r) {
        std::size_t rows = 0;
        CHECK(layout.of(r).size() <= 3);
        for (const auto& box : layout.of(r)) {
          CHECK(box.first_row + box.rows <= m);
          CHECK(box.first_slice + box.slices <= slices);
          for (std::size_t k = box.first_slice; k < box.first_slice + box.slices; ++k)
            for (std::size_t i = box.first_row; i < box.first_row + box.rows; ++i) ++owners[k * m + i];
          rows += box.rows * box.slices;
        }
        fewest = std::min(fewest, rows);
        most = std::max(most, rows);
      }
      CHECK(std::count(owners.begin(), owners.end(), 1) == std::ptrdiff_t(owners.size()));
      CHECK(most - fewest <= 1);
    }
  const auto slabs = dist::detail::box_layout::slabs(dist::block_partition(3, 4), 6);
  CHECK(slabs.of(0).size() == 1);
  CHECK(slabs.of(0)[0].rows == 6);
  CHECK(slabs.of(3).empty());  // more ranks than slices: the last holds none
  CHECK(slabs.with_all_rows(2).of(1)[0].rows == 2);
}

TEST_CASE("distributed: the routes between tubes and boxes carry every element of a box from its tube, once") {
  // Element (i, j) of stored slice k: tube t = i + m·j at (t − b) + (e − b)·k on the rank owning tubes [b, e); in a
  // box at (i − first_row) + rows·(j + n·(k − first_slice)). Every run is followed element by element.
  const std::size_t m = 5, n = 3, slices = 2;
  for (int ranks : {1, 2, 4, 7}) {
    const dist::block_partition tubes(m * n, ranks);
    const auto layout = dist::detail::box_layout::pencils(slices, m, ranks);
    for (int d = 0; d < ranks; ++d)
      for (const auto& box : layout.of(d)) {
        std::vector<int> hits(box.rows * n * box.slices, 0);
        for (int q = 0; q < ranks; ++q) {
          const std::size_t b = tubes.begin(q), e = tubes.end(q);
          for (const auto& [from, to] : dist::detail::box_runs(b, e, m, n, box)) {
            REQUIRE(from.rows == to.rows);
            REQUIRE(from.columns == to.columns);
            for (std::size_t c = 0; c < from.columns; ++c)
              for (std::size_t x = 0; x < from.rows; ++x) {
                const std::size_t at = from.offset + c * from.stride + x, held = e - b;
                const std::size_t t = b + at % held, k = at / held, i = t % m, j = t / m;
                CHECK(t < e);
                CHECK(i >= box.first_row);
                CHECK(i < box.first_row + box.rows);
                CHECK(k >= box.first_slice);
                const std::size_t there = to.offset + c * to.stride + x;
                CHECK(there == (i - box.first_row) + box.rows * (j + n * (k - box.first_slice)));
                if (there < hits.size()) ++hits[there];
              }
          }
        }
        CHECK(std::count(hits.begin(), hits.end(), 1) == std::ptrdiff_t(hits.size()));
      }
  }
}

TEST_CASE_TEMPLATE("distributed: a product with more ranks than stored slices equals the one-process one", T, double,
                   std::complex<double>) {
  // p = 1 and 2: at 3 and 4 ranks every rank computes rows of a slice (pencils), none idles.
  const dist::communicator comm;
  for (const auto& [m, l, n, p] : std::vector<std::array<std::size_t, 4>>{{7, 3, 4, 1}, {9, 2, 5, 2}, {2, 6, 3, 2}}) {
    INFO("m = ", m, ", l = ", l, ", n = ", n, ", p = ", p);
    const auto wa = random_tensor3<T>(m, l, p, 21), wb = random_tensor3<T>(l, n, p, 22);
    const auto a = dist::scatter(comm, wa), b = dist::scatter(comm, wb);
    const auto check = [&](const auto& policy) {
      INFO("transform ", policy.name());
      const auto c = dist::product(a, b, policy);
      CHECK_PART_CLOSE(c.local(), tubes_of(product(wa, wb, policy), c.tubes(), comm.rank()), T, l * p);
      const auto layout = dist::detail::box_layout::pencils(policy.template stored_slices<T>(p), m, comm.size());
      CHECK(!layout.of(comm.rank()).empty());  // this rank has rows to compute
    };
    check(dct{});
    check(dft{});
  }
}

TEST_CASE_TEMPLATE("distributed: norms and inner products are the one-process ones on every rank", T,
                   TPROD_TEST_SCALARS) {
  const dist::communicator comm;
  for_each_transform_and_shape([&](std::size_t m, std::size_t n, std::size_t p, const auto& l) {
    using To = typename std::decay_t<decltype(l)>::template original_scalar<T>;
    const auto wa = random_tensor3<To>(m, n, p, 21), wb = random_tensor3<To>(m, n, p, 22);
    const auto a = dist::scatter(comm, wa), b = dist::scatter(comm, wb);
    const double scale = std::max(1.0, double(frobenius_norm(wa)) * double(frobenius_norm(wb)));
    CHECK(std::abs(double(dist::frobenius_norm(a)) - double(frobenius_norm(wa))) <=
          rel_tol<To>(m * n * p) * std::max(1.0, double(frobenius_norm(wa))));
    CHECK(std::abs(cd(dist::inner(a, b)) - cd(inner(wa, wb))) <= rel_tol<To>(m * n * p) * scale);
    const auto ahat = dist::transform(a, l), bhat = dist::transform(b, l);
    const auto oa = transform(wa, l), ob = transform(wb, l);
    CHECK(std::abs(double(dist::frobenius_norm(ahat)) - double(frobenius_norm(oa))) <=
          rel_tol<To>(m * n * p) * std::max(1.0, double(frobenius_norm(oa))));
    CHECK(std::abs(cd(dist::inner(ahat, bhat)) - cd(inner(oa, ob))) <=
          rel_tol<To>(m * n * p) * std::max(1.0, double(frobenius_norm(oa)) * double(frobenius_norm(ob))));
  });
}

// (double and complex<double>: the slice SVDs are the heaviest instantiations of this program, and float adds
// nothing the one-process tests of float do not check)
TEST_CASE_TEMPLATE("distributed: the L-SVD, its truncations and the ranks equal the one-process ones", T, double,
                   std::complex<double>) {
  const dist::communicator comm;
  for_each_transform_and_shape([&](std::size_t m, std::size_t n, std::size_t p, const auto& l) {
    using To = typename std::decay_t<decltype(l)>::template original_scalar<T>;
    // Rank 2 by construction (a product of m×2 and 2×n tensors), so the ranks are well separated from rounding.
    const auto whole = product(random_tensor3<To>(m, 2, p, 41), random_tensor3<To>(2, n, p, 42), l);
    const auto ahat = dist::transform(dist::scatter(comm, whole), l);
    const auto one_hat = transform(whole, l);
    const double scale = std::max(1.0, double(frobenius_norm(whole)));
    const auto check_result = [&](const auto& r, const auto& one) {
      CHECK(r.kept == one.kept);
      CHECK(r.tubes() == one.tubes());
      CHECK(double((r.sigma - one.sigma).cwiseAbs().maxCoeff()) <= rel_tol<To>(m * n * p) * scale);
      // The singular vectors are unique only up to phase: the product they form is compared.
      CHECK_PART_CLOSE(dist::reconstruct(r).local(), tubes_of(reconstruct(one), dist::reconstruct(r).tubes(), comm.rank()),
                       To, m * n * p);
    };
    check_result(dist::svd(ahat), svd(one_hat));
    const std::size_t k = 1;
    check_result(dist::truncated_svd(ahat, k), truncated_svd(one_hat, k));
    check_result(dist::energy_truncated_svd(ahat, 0.9), energy_truncated_svd(one_hat, 0.9));
    // Truncating a computed L-SVD, on each rank's slices without factoring again.
    const auto full = dist::svd(ahat);
    const auto one_full = svd(one_hat);
    check_result(dist::truncate(full, k), truncate(one_full, k));
    check_result(dist::truncate_energy(full, 0.9), truncate_energy(one_full, 0.9));
    CHECK_THROWS_AS((void)dist::truncate(full, full.tubes() + 1), shape_error);

    const auto r = dist::ranks(ahat), one = ranks(one_hat);
    CHECK(r.multi_rank == one.multi_rank);
    CHECK(r.tubal_rank == one.tubal_rank);
    CHECK(r.average_rank == one.average_rank);
    CHECK(r.tubal_rank == std::min<std::size_t>({m, n, 2}));
    CHECK(std::abs(r.tolerance - one.tolerance) <= 1e-6 * one.tolerance);

    // The norms from singular values, and the L-QR: the one-process functions on each rank's slices.
    CHECK(std::abs(double(dist::spectral_norm(ahat)) - double(spectral_norm(one_hat))) <=
          rel_tol<To>(m * n * p) * scale);
    CHECK(std::abs(double(dist::nuclear_norm(ahat)) - double(nuclear_norm(one_hat))) <=
          rel_tol<To>(m * n * p) * scale * double(std::min(m, n) * p));
    // (A rank-2 tensor's Q̂ columns past 2 are fixed by rounding: Q̂ᴴQ̂ = I and Q *_L R = A are what is compared.)
    const auto q = dist::qr(ahat);
    const auto qq = dist::transpose(q.q_hat) * q.q_hat;
    CHECK_PART_CLOSE(qq.local().data(), dist::identity_transformed<T>(comm, qq.m(), p, l).local().data(), To, m * n);
    const auto qr_back = dist::inverse_transform(q.q_hat * q.r_hat);
    CHECK_PART_CLOSE(qr_back.local(), tubes_of(whole, qr_back.tubes(), comm.rank()), To, m * n * p);
    // The predicates: every rank answers for all slices, so one rank's non-symmetric slice makes every rank say no.
    CHECK(is_orthogonal(q.q_hat.local()));
    CHECK(is_f_diagonal(dist::svd(ahat).s_hat.local()));
    auto gram = dist::transpose(ahat) * ahat;
    CHECK(is_f_symmetric(gram.local()));
    CHECK(is_f_positive_semidefinite(gram.local()));
    if (n > 1) {
      const auto& w = gram.local().window();
      if (w.count > 0 && w.first + w.count == w.total)
        gram.local().slice(gram.local().stored_slices() - 1)(0, 1) += 1;  // the last slice, on its owner
      CHECK_FALSE(is_f_symmetric(gram.local()));
      CHECK_FALSE(is_f_positive_semidefinite(gram.local()));
      CHECK_FALSE(is_f_diagonal(gram.local()));
    }
    // A rank's slices alone have no tubes to return to, unless it holds them all.
    if (ahat.local().window().holds_every_slice())
      CHECK(test::max_diff(inverse_transform(ahat.local()), whole) <= rel_tol<To>(m * n * p) * scale);
    else
      CHECK_THROWS_AS((void)inverse_transform(ahat.local()), shape_error);
  });
}

TEST_CASE("distributed: a non-finite slice on one rank stops every rank's L-SVD and ranks, naming the rank") {
  const dist::communicator comm;
  const std::size_t p = 5;
  const auto a = dist::scatter(comm, random_tensor3<double>(3, 4, p, 51));
  auto ahat = dist::transform(a, dct{});
  const dist::block_partition slices(p, comm.size());
  int owner = 0;
  while (!(slices.begin(owner) <= p - 1 && p - 1 < slices.end(owner))) ++owner;
  if (comm.rank() == owner) ahat.local().data()(0, 0, ahat.local().stored_slices() - 1) = std::numeric_limits<double>::quiet_NaN();
  for (int which = 0; which < 2; ++which) {
    try {
      if (which == 0) (void)dist::svd(ahat);
      else (void)dist::ranks(ahat);
      FAIL("a NaN was accepted");
    } catch (const distributed_error& e) {
      const std::string text = e.what();
      CHECK(text.find("rank " + std::to_string(owner)) == 0);
      CHECK(text.find("NaN") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(dist::truncated_svd(ahat, 4), shape_error);
  CHECK_THROWS_AS(dist::energy_truncated_svd(ahat, 1.5), shape_error);
  CHECK_THROWS_AS(dist::svd(dist::scatter(comm, tensor3<double>(0, 3, p)), dct{}), shape_error);
}

namespace {
/// A scratch folder shared by the ranks (named after rank 0's process id), removed by rank 0 at the end.
struct shared_scratch {
  const dist::communicator& comm;
  std::filesystem::path dir;
  explicit shared_scratch(const dist::communicator& c) : comm(c) {
    long long id = comm.rank() == 0 ? (long long)::getpid() : 0;
    MPI_Bcast(&id, 1, MPI_LONG_LONG, 0, comm.get());
    dir = std::filesystem::temp_directory_path() / ("tprod-mpi-npy-" + std::to_string(id));
    if (comm.rank() == 0) std::filesystem::create_directories(dir);
    MPI_Barrier(comm.get());
  }
  ~shared_scratch() {
    MPI_Barrier(comm.get());
    if (comm.rank() == 0) std::filesystem::remove_all(dir);
  }
};
}  // namespace

TEST_CASE_TEMPLATE("distributed: .npy files are read and written by every rank at its tubes' offsets", T, float,
                   std::complex<double>) {
  const dist::communicator comm;
  const shared_scratch scratch(comm);
  for (const auto& [m, n, p] : shapes) {
    INFO("m = ", m, ", n = ", n, ", p = ", p);
    const auto whole = random_tensor3<T>(m, n, p, 61);
    const auto file = scratch.dir / "a.npy";
    // Written by every rank, read back by one process.
    dist::write_tensor3(dist::scatter(comm, whole), file);
    if (comm.rank() == 0) CHECK(test::max_diff(io::read_tensor3<T>(file), whole) == 0.0);
    // Written by one process in Fortran order, read by every rank.
    if (comm.rank() == 0) io::write_npy(scratch.dir / "f.npy", whole);
    MPI_Barrier(comm.get());
    const auto a = dist::read_tensor3<T>(comm, scratch.dir / "f.npy");
    CHECK(a.m() == m);
    CHECK(a.p() == p);
    CHECK(test::max_diff(a.local(), tubes_of(whole, a.tubes(), comm.rank())) == 0.0);
    // A C-order file (numpy's default): the header says so and the tubes are contiguous.
    if (comm.rank() == 0) {
      std::string header = io::npy_header_bytes(io::dtype_of<T>, {m, n, p});
      header.replace(header.find("True"), 4, "False");
      header.erase(header.find(", }") + 3, 1);  // one space less keeps the length
      std::vector<T> c_order;
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t k = 0; k < p; ++k) c_order.push_back(whole(i, j, k));
      std::ofstream(scratch.dir / "c.npy", std::ios::binary)
          .write(header.data(), std::streamsize(header.size()))
          .write(reinterpret_cast<const char*>(c_order.data()), std::streamsize(c_order.size() * sizeof(T)));
    }
    MPI_Barrier(comm.get());
    const auto c = dist::read_tensor3<T>(comm, scratch.dir / "c.npy");
    CHECK(test::max_diff(c.local(), tubes_of(whole, c.tubes(), comm.rank())) == 0.0);
  }
  // Errors stop every rank: a missing file, another dtype, a folder as the target (left as it was).
  CHECK_THROWS_WITH_AS(dist::read_tensor3<T>(comm, scratch.dir / "missing.npy"), doctest::Contains("missing.npy"),
                       distributed_error);
  if (comm.rank() == 0) io::write_npy(scratch.dir / "d.npy", random_tensor3<double>(2, 2, 2, 1));
  MPI_Barrier(comm.get());
  CHECK_THROWS_WITH_AS(dist::read_tensor3<T>(comm, scratch.dir / "d.npy"), doctest::Contains("float64"),
                       distributed_error);
  CHECK_THROWS_WITH_AS(dist::write_tensor3(dist::scatter(comm, tensor3<T>(2, 2, 2)), scratch.dir),
                       doctest::Contains("rank 0"), distributed_error);
  MPI_Barrier(comm.get());
  if (comm.rank() == 0) CHECK(std::filesystem::is_directory(scratch.dir));
}

TEST_CASE("distributed: a data-parallel training step equals the one-process step on the whole batch") {
  const dist::communicator comm;
  // The text classifier of the nn tests (dropout 0) on B = 5 sequences of T = 4 tokens, 3 classes.
  auto c = nn_test::small_text_config();
  const std::size_t batch = 5, steps = 4;
  nn::batch whole{batch, {}, {4, 2, 3, 4, 1}, nn::phase::train};
  for (std::size_t i = 0; i < batch * steps; ++i) whole.tokens.push_back((i * 7 + 3) % 11);
  const std::vector<std::size_t> labels{0, 2, 1, 2, 0};

  auto one = nn::make_text_classifier<double>(c, dct{});
  auto one_params = nn::parameters<double>(one);
  nn::adamw<double> one_opt;
  c.seed = 100 + std::uint64_t(comm.rank());  // different initial values on every rank …
  auto model = nn::make_text_classifier<double>(c, dct{});
  auto params = nn::parameters<double>(model);
  dist::broadcast_parameters(comm, params);  // … made equal to rank 0's
  if (comm.rank() == 0)
    for (std::size_t i = 0; i < params.size(); ++i) *params.values.tensors[i] = *one_params.values.tensors[i];
  dist::broadcast_parameters(comm, params);
  nn::adamw<double> opt;
  // This rank's share: sequences b with b % P == rank (none for some ranks when P > B).
  nn::batch mine{0, {}, {}, nn::phase::train};
  std::vector<std::size_t> my_labels;
  for (std::size_t b = std::size_t(comm.rank()); b < batch; b += std::size_t(comm.size())) {
    ++mine.size;
    mine.tokens.insert(mine.tokens.end(), whole.tokens.begin() + std::ptrdiff_t(b * steps),
                       whole.tokens.begin() + std::ptrdiff_t(b * steps + steps));
    mine.lengths.push_back(whole.lengths[b]);
    my_labels.push_back(labels[b]);
  }
  for (int step = 0; step < 3; ++step) {
    one_params.zero_grad();
    nn::classification_step(one, tensor3<double>(), whole, labels);
    nn::step(one_opt, one_params);
    params.zero_grad();
    if (mine.size > 0) nn::classification_step(model, tensor3<double>(), mine, my_labels);
    dist::average_gradients(comm, params, double(mine.size));
    nn::step(opt, params);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    CAPTURE(params.values.names[i]);
    CHECK(test::max_diff(*params.values.tensors[i], *one_params.values.tensors[i]) <=
          1e-12 * (1 + test::max_abs(*one_params.values.tensors[i])));
  }
  // Models of different sizes are refused on every rank.
  auto other = c;
  other.width = comm.rank() == 0 ? 8 : 16;
  other.heads = 2;
  other.hidden = other.width;
  auto odd = nn::make_text_classifier<double>(other, dct{});
  auto odd_params = nn::parameters<double>(odd);
  if (comm.size() > 1) CHECK_THROWS_WITH_AS(dist::average_gradients(comm, odd_params), doctest::Contains("differ"),
                                            distributed_error);
}

TEST_CASE("distributed: empty tensors pass through every operation") {
  const dist::communicator comm;
  for (const auto& [m, n] : {std::pair<std::size_t, std::size_t>{0, 3}, {3, 0}, {0, 0}}) {
    const auto a = dist::scatter(comm, tensor3<double>(m, n, 4));
    const auto b = dist::scatter(comm, tensor3<double>(n, m, 4));
    const auto ab = dist::product(a, b, dct{});  // m×m, an empty inner dimension when n = 0: zeros
    CHECK(ab.m() == m);
    CHECK(dist::frobenius_norm(ab) == 0.0);
    CHECK(dist::product(b, a, dft{}).n() == n);
    CHECK(dist::frobenius_norm(a) == 0.0);
    const auto back = dist::gather(dist::inverse_transform(dist::transform(a, dft{})));
    if (comm.rank() == 0) CHECK(back.size() == 0);
  }
}

TEST_CASE("distributed: a bad part on one rank stops every rank with the same error, naming that rank") {
  const dist::communicator comm;
  const int bad = comm.size() - 1;
  const dist::block_partition tubes(4 * 3, comm.size());
  const std::size_t rows = tubes.size(comm.rank()) + (comm.rank() == bad ? 1 : 0);
  try {
    (void)dist::tensor3<double>::from_local(comm, 4, 3, 5, tensor3<double>(rows, 1, 5));
    FAIL("from_local accepted a part of the wrong shape");
  } catch (const distributed_error& e) {
    const std::string what = e.what();
    CHECK(what.find("rank " + std::to_string(bad) + " of " + std::to_string(comm.size())) == 0);
    CHECK(what.find("must be " + shape_string(tubes.size(bad), 1, 5)) != std::string::npos);
  }
  // The communicator still works on every rank: nobody was left behind in a collective.
  CHECK(dist::frobenius_norm(dist::scatter(comm, tensor3<double>(2, 2, 2))) == 0.0);
}

TEST_CASE("distributed: a singular slice on one rank stops every rank, naming the rank and the global slice") {
  const dist::communicator comm;
  const std::size_t p = 5;
  auto whole = random_tensor3<double>(3, 3, p, 31);
  auto what = transform(whole, dct{});
  what.slice(p - 1).setZero();  // the last slice, on the last rank that owns a slice
  const auto a = dist::scatter(comm, inverse_transform(what));
  const dist::block_partition slices(p, comm.size());
  int owner = 0;
  while (!(slices.begin(owner) <= p - 1 && p - 1 < slices.end(owner))) ++owner;
  try {
    (void)dist::inverse(a, dct{});
    FAIL("inverse accepted a singular slice");
  } catch (const distributed_error& e) {
    const std::string text = e.what();
    CHECK(text.find("rank " + std::to_string(owner)) == 0);
    CHECK(text.find("slice " + std::to_string(p - 1)) != std::string::npos);
  }
  CHECK_THROWS_AS(dist::inverse(dist::scatter(comm, tensor3<double>(2, 3, p)), dct{}), shape_error);
}

TEST_CASE("distributed: operands of different shapes are refused on every rank alike") {
  const dist::communicator comm;
  const auto a = dist::scatter(comm, tensor3<double>(2, 3, 4)), b = dist::scatter(comm, tensor3<double>(2, 3, 4));
  CHECK_THROWS_AS(dist::product(a, b, dct{}), shape_error);
  CHECK_THROWS_AS(dist::inner(a, dist::scatter(comm, tensor3<double>(3, 2, 4))), shape_error);
  CHECK_THROWS_AS(dist::transform(a, dct{}) * dist::transform(dist::scatter(comm, tensor3<double>(3, 2, 5)), dct{}),
                  shape_error);
  CHECK_THROWS_AS(dist::transform(a, matrix_transform<double>(Eigen::MatrixXd::Identity(3, 3))), shape_error);
}
