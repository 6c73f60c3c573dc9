// SPDX-License-Identifier: Apache-2.0
// The algebra on device tensors against the CPU backend on the same inputs, over the four scalars, every
// transform (dct, dft, identity, real and complex matrix_transform), p ∈ {1, 2, 3, 16, 17}, non-square and empty
// shapes.
#include "cuda_test.hpp"
#include "mode_product_task.hpp"

using namespace tprod;
using namespace tprod::test;

TEST_CASE_TEMPLATE("device transform and inverse_transform equal the host's", T, TPROD_DEVICE_SCALARS) {
  for (std::size_t p : test_tubes) {
    for_each_policy(p, [&](const auto& l) {
      CAPTURE(p);
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      for (const auto& [m, n] : {std::pair{3, 5}, std::pair{1, 1}, std::pair{0, 4}}) {
        const auto a = random_tensor3<T>(m, n, p, 10 + p);
        const auto da = to_device(a);
        const auto ahat = transform(a, l);
        const auto dahat = transform(da, l);
        CHECK(dahat.stored_slices() == ahat.stored_slices());
        check_close(ahat, dahat, p);
        check_close(inverse_transform(ahat), inverse_transform(dahat), 2 * p);
        // the round trip (A itself, promoted to complex under a complex Z)
        check_close(inverse_transform(transform(a, l)), inverse_transform(transform(da, l)), 4 * p);
      }
    });
  }
}

// The transform takes tprod's tube kernel for p, q ≤ 16 (tiles of 4 and 16 outputs, vector loads where the tube
// count allows) and cuBLAS's GEMM beyond.
TEST_CASE_TEMPLATE("device transform on both sides of the tube kernel's bounds", T, TPROD_DEVICE_SCALARS) {
  for (std::size_t p : {4, 5, 9, 16, 17, 31, 40, 65}) {
    for_each_policy(p, [&](const auto& l) {
      CAPTURE(p);
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      // 111 tubes: one per thread; 24: vectors of 16 bytes (4 floats, 2 doubles or complex floats) per thread
      for (const auto& [m, n] : {std::pair{37, 3}, std::pair{8, 3}}) {
        const auto a = random_tensor3<T>(m, n, p, 20 + p);
        const auto da = to_device(a);
        const auto ahat = transform(a, l);
        check_close(ahat, transform(da, l), p);
        check_close(inverse_transform(ahat), inverse_transform(to_device(ahat)), 2 * p);
      }
    });
  }
}

TEST_CASE_TEMPLATE("device facewise and L-product equal the host's", T, TPROD_DEVICE_SCALARS) {
  for (std::size_t p : test_tubes) {
    for_each_policy(p, [&](const auto& l) {
      CAPTURE(p);
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      const auto a = random_tensor3<T>(4, 3, p, 20), b = random_tensor3<T>(3, 6, p, 21);
      const auto da = to_device(a), db = to_device(b);
      check_close(facewise(a, b), facewise(da, db), 3);
      check_close(product(a, b, l), product(da, db, l), 8 * p + 3);
      check_close(transform(a, l) * transform(b, l), transform(da, l) * transform(db, l), 4 * p + 3);
    });
  }
}

TEST_CASE("device L-product: empty inner dimension and empty results") {
  const tensor3<double> a(3, 0, 4), b(0, 5, 4);
  check_close(product(a, b, dct{}), product(to_device(a), to_device(b), dct{}), 1);
  const tensor3<double> c(0, 2, 4), d(2, 3, 4);
  check_close(product(c, d, dft{}), product(to_device(c), to_device(d), dft{}), 1);
}

TEST_CASE("device L-product: shape errors name both shapes") {
  const device_tensor3<float> a(3, 4, 5), b(5, 2, 5), c(4, 2, 6);
  CHECK_THROWS_WITH_AS(product(a, b, dct{}), doctest::Contains("3x4x5"), shape_error);
  CHECK_THROWS_WITH_AS(product(a, c, dct{}), doctest::Contains("p = 6"), shape_error);
}

TEST_CASE("device L-product in TF32 for float: close to FP32 within TF32's precision") {
  const auto a = random_tensor3<float>(64, 64, 8, 30), b = random_tensor3<float>(64, 64, 8, 31);
  const auto exact = product(a, b, dct{});
  const auto fast = to_host(product(cuda::execution{nullptr, true}, to_device(a), to_device(b), dct{}));
  // TF32 keeps 10 mantissa bits: a relative error near 2^-11 per product, growing like √n over n = 64 terms.
  CHECK(double(frobenius_norm(fast - exact)) <= 1e-2 * double(frobenius_norm(exact)));
}

TEST_CASE_TEMPLATE("device transpose, identity and inverse equal the host's", T, TPROD_DEVICE_SCALARS) {
  for (std::size_t p : test_tubes) {
    for_each_policy(p, [&](const auto& l) {
      CAPTURE(p);
      CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
      const auto a = random_tensor3<T>(4, 3, p, 40);
      const auto da = to_device(a);
      check_close(transpose(a, l), transpose(da, l), 4 * p);
      check_close(transpose(transform(a, l)), transpose(transform(da, l)), 4 * p);
      check_close(identity<T>(5, p, l), identity<T, device_space>(5, p, l), 4 * p);
      // A well-conditioned square tensor: 2I + noise in every slice of the original domain.
      auto sq = random_tensor3<T>(5, 5, p, 41);
      sq *= T(0.1);
      sq += identity<T>(5, p, identity_transform{}) * T(2);
      check_close(inverse(sq, l), inverse(to_device(sq), l), 40 * p);
    });
  }
}

TEST_CASE_TEMPLATE("device inverse refuses a singular slice by name, as the host does", T, TPROD_DEVICE_SCALARS) {
  auto a = random_tensor3<T>(3, 3, 4, 50);
  for (std::size_t i = 0; i < 3; ++i) a(i, 2, 2) = a(i, 1, 2);  // identity transform: slice 2 singular
  CHECK_THROWS_WITH_AS(inverse(a, identity_transform{}), doctest::Contains("slice 2"), numerical_error);
  CHECK_THROWS_WITH_AS(inverse(to_device(a), identity_transform{}), doctest::Contains("slice 2"), numerical_error);
  auto nan = a;
  nan(0, 0, 0) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
  CHECK_THROWS_WITH_AS(inverse(to_device(nan), dct{}), doctest::Contains("NaN"), numerical_error);
  CHECK_THROWS_WITH_AS(inverse(to_device(random_tensor3<T>(3, 4, 2, 1)), dct{}), doctest::Contains("square"), shape_error);
}

TEST_CASE_TEMPLATE("device norms and inner products equal the host's, in both domains", T, TPROD_DEVICE_SCALARS) {
  for (std::size_t p : test_tubes) {
    for_each_policy(p, [&](const auto& l) {
      CAPTURE(p);
      const auto a = random_tensor3<T>(6, 5, p, 60), b = random_tensor3<T>(6, 5, p, 61);
      const auto da = to_device(a), db = to_device(b);
      const double t = tol<T>(a.size());
      CHECK(std::abs(double(frobenius_norm(da)) - double(frobenius_norm(a))) <= t * double(frobenius_norm(a)));
      CHECK(std::abs(inner(da, db) - inner(a, b)) <= t * double(frobenius_norm(a) * frobenius_norm(b)));
      const auto ahat = transform(a, l), bhat = transform(b, l);
      const auto dahat = transform(da, l), dbhat = transform(db, l);
      CHECK(std::abs(double(frobenius_norm(dahat)) - double(frobenius_norm(ahat))) <= t * p * double(frobenius_norm(ahat)));
      CHECK(std::abs(inner(dahat, dbhat) - inner(ahat, bhat)) <=
            t * p * double(frobenius_norm(ahat) * frobenius_norm(bhat)));
    });
  }
  CHECK(frobenius_norm(device_tensor3<T>(0, 3, 2)) == 0);
}

TEST_CASE("device transform-domain tensors move between spaces") {
  const auto a = random_tensor3<double>(4, 4, 6, 70);
  const auto ahat = transform(a, dft{});
  const auto dhat = to_device(ahat);
  static_assert(std::same_as<typename std::remove_cvref_t<decltype(dhat)>::memory_space_type, device_space>);
  check_close(a, inverse_transform(dhat), 24);
  check_close(ahat, to_device(to_host(dhat)), 1);
}

TEST_CASE_TEMPLATE("device mode products equal the host's, the scalars promoted as on the host", T, TPROD_DEVICE_SCALARS) {
  using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  for (const auto& [m, n, p] : {std::tuple{4, 3, 5}, std::tuple{7, 2, 17}, std::tuple{3, 3, 1}, std::tuple{0, 3, 2}}) {
    CAPTURE(shape_string(m, n, p));
    const auto a = random_tensor3<T>(m, n, p, 80);
    const auto da = to_device(a);
    std::srand(unsigned(m + n + p));
    const M u1 = M::Random(6, m), u2 = M::Random(5, n), u3 = M::Random(4, p), u3_long = M::Random(20, p);
    check_close(mode_product(a, u1, 0), mode_product(da, u1, 0), std::size_t(m) + 1);
    check_close(mode_product(a, u2, 1), mode_product(da, u2, 1), std::size_t(n) + 1);
    check_close(mode_product(a, u3, 2), mode_product(da, u3, 2), std::size_t(p) + 1);            // tprod's tube kernel
    check_close(mode_product(a, u3_long, 2), mode_product(da, u3_long, 2), std::size_t(p) + 1);  // one GEMM
    if constexpr (!is_complex_v<T>) {  // a real tensor times a complex matrix is complex, as on the host
      using C = std::complex<T>;
      const Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic> uc = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic>::Random(3, n);
      check_close(mode_product(a, uc, 1), mode_product(da, uc, 1), std::size_t(n) + 1);
    }
  }
  CHECK_THROWS_WITH_AS(mode_product(to_device(random_tensor3<T>(2, 3, 4, 1)), M::Random(2, 2), 1),
                       doctest::Contains("mode 1 of the 2x3x4 tensor has extent 3"), shape_error);
}

TEST_CASE_TEMPLATE("the device mode-product task refuses a bad mode or shape as the host's does", T, double,
                   std::complex<float>) {
  check_mode_product_task_refusals<T, device_space>();
}

TEST_CASE("device predicates judge as the host's") {
  const auto a = random_tensor3<double>(5, 5, 4, 90);
  const auto da = to_device(a);
  for_each_policy(4, [&](const auto& l) {
    CAPTURE(std::string(std::remove_cvref_t<decltype(l)>::name()));
    const auto q = qr(da, l).q;  // L-orthogonal
    CHECK(is_orthogonal(q, l));
    CHECK(is_orthogonal(qr(a, l).q, l));
    CHECK_FALSE(is_orthogonal(da, l));
    const auto ap = inverse_transform(transform(da, l));  // A, complex under a complex Z
    const auto sym = product(transpose(ap, l), ap, l);    // f-symmetric, and positive definite (Gram slices)
    CHECK(is_f_symmetric(sym, l));
    CHECK_FALSE(is_f_symmetric(da, l));
    CHECK(is_f_positive_definite(sym, l));
    CHECK_FALSE(is_f_positive_semidefinite(-sym, l));
    CHECK(is_f_diagonal(svd(da, l).s_hat));
    CHECK_FALSE(is_f_diagonal(transform(da, l)));
  });
  CHECK(is_f_diagonal(to_device(identity<double>(4, 3, dct{}))));
  CHECK_FALSE(is_f_diagonal(da));
}
