// SPDX-License-Identifier: Apache-2.0
// The slice factorizations on device tensors (cuSOLVER) against the CPU backend on the same inputs, over the four
// scalars, every transform, tall, wide and square slices: the L-SVD (its three routes: cuSOLVER's batched Jacobi up
// to 32×32, tprod's batched one-sided Jacobi for the economy form up to 256×256, one gesvdj per slice beyond or for
// the full form; economy, full, rank- and energy-truncated), whose singular values and
// multi-rank equal the host's, its reconstruction and the spectral and nuclear norms; the L-QR; the ranks. Factors
// are unique only up to the signs (phases) of their columns, so they are checked through the identities that define
// them (A = U *_L S *_L Vᴴ = Q *_L R, U, V and Q L-orthogonal, R̂ upper triangular).
#include "cuda_test.hpp"

using namespace tprod;
using namespace tprod::test;

namespace {


/// max |σ_device − σ_host| relative to the largest σ.
template <class M> double sigma_error(const M& device, const M& host) {
  REQUIRE(device.rows() == host.rows());
  REQUIRE(device.cols() == host.cols());
  const double scale = std::max(1.0, double(host.cwiseAbs().maxCoeff()));
  return double((device - host).cwiseAbs().maxCoeff()) / scale;
}

/// ‖Xᵀ *_L X − I‖_F: zero for X with L-orthonormal tube columns.
template <class X, class L> double orthogonality_error(const X& x, const L& l) {
  const auto g = product(transpose(x, l), x, l);
  using S = value_type_of<decltype(g)>;
  return double(frobenius_norm(g - identity<S>(g.m(), g.p(), l)));
}

}  // namespace

TEST_CASE_TEMPLATE("device svd: σ equals the host's and the factors reconstruct A, L-orthogonal", T,
                   TPROD_DEVICE_SCALARS) {
  for (const auto& [m, n, p] : {std::tuple{5, 3, 4}, std::tuple{3, 5, 5}, std::tuple{1, 1, 1},
                                std::tuple{40, 33, 3}, std::tuple{33, 40, 2}}) {
    for_each_policy(std::size_t(p), [&](const auto& l) {
      CAPTURE(shape_string(m, n, p));
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      const auto a = random_tensor3<T>(m, n, p, 90 + m);
      const auto da = to_device(a);
      for (factor_mode mode : {factor_mode::economy, factor_mode::full}) {
        const auto host = svd(a, l, mode);
        const auto dev = svd(da, l, mode);
        static_assert(std::same_as<typename std::remove_cvref_t<decltype(dev.u)>::memory_space_type, device_space>);
        const std::size_t size = std::size_t(m * n * p);
        CHECK(sigma_error(dev.sigma, host.sigma) <= tol<T>(size));
        CHECK(dev.kept == host.kept);
        const auto u = to_host(dev.u), s = to_host(dev.s), v = to_host(dev.v);
        CHECK(u.shape() == host.u.shape());
        CHECK(s.shape() == host.s.shape());
        CHECK(v.shape() == host.v.shape());
        const auto back = product(product(u, s, l), transpose(v, l), l);
        const auto a_promoted = inverse_transform(transform(a, l));  // complex under a complex Z
        CHECK(double(frobenius_norm(back - a_promoted)) <= 10 * tol<T>(size) * (double(frobenius_norm(a)) + 1));
        CHECK(orthogonality_error(u, l) <= 10 * tol<T>(size));
        CHECK(orthogonality_error(v, l) <= 10 * tol<T>(size));
      }
    });
  }
}

TEST_CASE_TEMPLATE("device slice SVDs from 33 to 256: tprod's batched one-sided Jacobi against cuSOLVER's and the "
                   "host's", T, TPROD_DEVICE_SCALARS) {
  using R = real_t<T>;
  // Tall, wide and square past cuSOLVER's batched 32×32, in shared memory (64×64) and in global memory (256×256
  // and 200×33 in double), an odd column count, rank 7 of 80 (zero σ completed), a zero slice and a slice of one row.
  for (const auto& [m, n, p, rank] : {std::tuple{64, 64, 5, 0}, std::tuple{128, 70, 3, 0}, std::tuple{70, 128, 3, 0},
                                      std::tuple{256, 256, 2, 0}, std::tuple{200, 33, 2, 0}, std::tuple{96, 80, 2, 7},
                                      std::tuple{40, 35, 1, -1}, std::tuple{1, 100, 2, 0}}) {
    CAPTURE(shape_string(m, n, p));
    CAPTURE(rank);
    tensor3<T> a = rank < 0 ? tensor3<T>(m, n, p) : random_tensor3<T>(m, n, p, 11 + m + n);
    if (rank > 0) {
      const auto b = random_tensor3<T>(m, rank, p, 3), c = random_tensor3<T>(rank, n, p, 4);
      for (int k = 0; k < p; ++k) a.slice(k) = b.slice(k) * c.slice(k);
    }
    const auto da = to_device(a);
    const std::size_t r = std::size_t(std::min(m, n)), q = std::size_t(p), size = std::size_t(m * n);
    device_tensor3<T> u(m, r, q), v(n, r, q), u_ref(m, r, q), v_ref(n, r, q);
    std::vector<R> sigma(r * q), sigma_ref(r * q);
    std::vector<int> info(q, -1), info_ref(q, -1);
    backend::cuda::raw::svd_slices<T>(da.data(), m, n, q, r, r, u.data(), v.data(), sigma.data(), info.data(), nullptr);
    backend::cuda::raw::svd_slices_cusolver<T>(da.data(), m, n, q, r, r, u_ref.data(), v_ref.data(), sigma_ref.data(),
                                              info_ref.data(), nullptr);
    const auto host_sigma = backend::cpu::singular_values_slices(backend::cpu::system{execution{}},
                                                                 std::as_const(a).dynamic_view(), {});
    const auto hu = to_host(u), hv = to_host(v);
    for (std::size_t k = 0; k < q; ++k) {
      CAPTURE(k);
      CHECK(info[k] == 0);
      CHECK(info_ref[k] == 0);
      const double top = std::max(1.0, double(host_sigma[k * r]));
      for (std::size_t i = 0; i < r; ++i) {
        CHECK(std::abs(double(sigma[i + k * r]) - double(host_sigma[i + k * r])) <= tol<T>(size) * top);
        CHECK(std::abs(double(sigma[i + k * r]) - double(sigma_ref[i + k * r])) <= tol<T>(size) * top);
      }
      using M = detail::dense_matrix<cd>;
      const M uk = hu.slice(k).template cast<cd>(), vk = hv.slice(k).template cast<cd>();
      Eigen::VectorXd s = Eigen::VectorXd::Zero(Eigen::Index(r));
      for (std::size_t i = 0; i < r; ++i) s(Eigen::Index(i)) = double(sigma[i + k * r]);
      CHECK((uk * s.cast<cd>().asDiagonal() * vk.adjoint() - a.slice(k).template cast<cd>()).norm() <=
            10 * tol<T>(size) * top);
      CHECK((uk.adjoint() * uk - M::Identity(Eigen::Index(r), Eigen::Index(r))).norm() <= 10 * tol<T>(size));
      CHECK((vk.adjoint() * vk - M::Identity(Eigen::Index(r), Eigen::Index(r))).norm() <= 10 * tol<T>(size));
    }
  }
}

TEST_CASE_TEMPLATE("device truncated and energy-truncated svd keep what the host keeps", T, TPROD_DEVICE_SCALARS) {
  for (const auto& [m, n, p] : {std::tuple{6, 4, 5}, std::tuple{36, 34, 2}}) {
    for_each_policy(std::size_t(p), [&](const auto& l) {
      CAPTURE(shape_string(m, n, p));
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      const auto a = random_tensor3<T>(m, n, p, 7 + n);
      const auto ahat = transform(a, l);
      const auto dhat = transform(to_device(a), l);
      const std::size_t size = std::size_t(m * n * p);
      const auto host_k = truncated_svd(ahat, 2), dev_k = truncated_svd(dhat, 2);
      CHECK(sigma_error(dev_k.sigma, host_k.sigma) <= tol<T>(size));
      CHECK(to_host(dev_k.u).shape() == host_k.u.shape());
      // A_k is unique where σ_k > σ_{k+1} (random data): the device's equals the host's up to roundings over the gap
      const auto approx = [&](const auto& r) { return product(product(r.u, r.s, l), transpose(r.v, l), l); };
      const auto host_ak = approx(host_k);
      CHECK(double(frobenius_norm(to_host(approx(dev_k)) - host_ak)) <=
            1000 * tol<T>(size) * (double(frobenius_norm(a)) + 1));
      CHECK(double(frobenius_norm(to_host(reconstruct(dev_k)) - reconstruct(host_k))) <=
            1000 * tol<T>(size) * (double(frobenius_norm(a)) + 1));
      CHECK(storage(dev_k) == storage(host_k));
      // the norms from the device's singular values
      const double spectral = double(spectral_norm(ahat)), nuclear = double(nuclear_norm(ahat));
      CHECK(std::abs(double(spectral_norm(dhat)) - spectral) <= tol<T>(size) * (spectral + 1));
      CHECK(std::abs(double(nuclear_norm(dhat)) - nuclear) <= tol<T>(size) * (nuclear + 1));
      const auto host_e = energy_truncated_svd(ahat, 0.7), dev_e = energy_truncated_svd(dhat, 0.7);
      CHECK(dev_e.kept == host_e.kept);
      CHECK(sigma_error(dev_e.sigma, host_e.sigma) <= tol<T>(size));
      // truncating a computed device L-SVD equals truncating afresh
      const auto dev_full = svd(dhat);
      CHECK(truncate(dev_full, 2).kept == dev_k.kept);
      CHECK(sigma_error(truncate(dev_full, 2).sigma, dev_k.sigma) == 0);
      CHECK(truncate_energy(dev_full, 0.7).kept == dev_e.kept);
    });
  }
}

TEST_CASE("device factorizations refuse NaN and empty tensors by name") {
  auto a = random_tensor3<double>(4, 3, 2, 5);
  a(1, 1, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(svd(to_device(a), dct{}), doctest::Contains("NaN or Inf"), numerical_error);
  CHECK_THROWS_AS(svd(device_tensor3<double>(0, 3, 2), dct{}), shape_error);
  CHECK_THROWS_WITH_AS(truncated_svd(to_device(random_tensor3<float>(4, 3, 2, 6)), dct{}, 4),
                       doctest::Contains("must lie in 1..min(m, n) = 3"), shape_error);
  CHECK_THROWS_WITH_AS(qr(to_device(a), dft{}), doctest::Contains("NaN or Inf"), numerical_error);
  CHECK_THROWS_AS(ranks(device_tensor3<float>(3, 0, 2), dct{}), shape_error);
}

TEST_CASE_TEMPLATE("device qr: Q *_L R = A with Q L-orthogonal and R̂ upper triangular", T, TPROD_DEVICE_SCALARS) {
  for (const auto& [m, n, p] : {std::tuple{5, 3, 4}, std::tuple{3, 5, 5}, std::tuple{1, 1, 1}, std::tuple{40, 33, 2}}) {
    for_each_policy(std::size_t(p), [&](const auto& l) {
      CAPTURE(shape_string(m, n, p));
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      const auto a = random_tensor3<T>(m, n, p, 40 + n);
      const std::size_t size = std::size_t(m * n * p);
      for (factor_mode mode : {factor_mode::economy, factor_mode::full}) {
        const auto host = qr(a, l, mode);
        const auto dev = qr(to_device(a), l, mode);
        const auto q = to_host(dev.q), r = to_host(dev.r);
        CHECK(q.shape() == host.q.shape());
        CHECK(r.shape() == host.r.shape());
        const auto a_promoted = inverse_transform(transform(a, l));
        CHECK(double(frobenius_norm(product(q, r, l) - a_promoted)) <=
              10 * tol<T>(size) * (double(frobenius_norm(a)) + 1));
        CHECK(orthogonality_error(q, l) <= 10 * tol<T>(size));
        const auto r_hat = to_host(dev.r_hat);
        double below = 0;
        for (std::size_t k = 0; k < r_hat.stored_slices(); ++k)
          for (std::size_t j = 0; j < r_hat.n(); ++j)
            for (std::size_t i = j + 1; i < r_hat.m(); ++i) below += std::abs(r_hat.slice(k)(Eigen::Index(i), Eigen::Index(j)));
        CHECK(below == 0);
      }
    });
  }
}

TEST_CASE_TEMPLATE("device ranks equal the host's, on tensors of known tubal rank", T, TPROD_DEVICE_SCALARS) {
  for (std::size_t p : {1, 4, 5}) {
    for_each_policy(p, [&](const auto& l) {
      CAPTURE(p);
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      // a product of 9×3×p and 3×7×p tensors has tubal rank at most 3 (3 for random factors)
      const auto a = product(random_tensor3<T>(9, 3, p, 1), random_tensor3<T>(3, 7, p, 2), l);
      const auto host = ranks(a, l);
      const auto dev = ranks(to_device(a), l);
      CHECK(host.tubal_rank == 3);
      CHECK(dev.tubal_rank == host.tubal_rank);
      CHECK(dev.multi_rank == host.multi_rank);
      CHECK(dev.average_rank == host.average_rank);
      CHECK(std::abs(dev.tolerance - host.tolerance) <= 1e-3 * host.tolerance);
    });
  }
}
