// SPDX-License-Identifier: Apache-2.0
// Tests of transform/dct.hpp, dft.hpp, matrix_transform.hpp, identity_transform.hpp and transformed.hpp:
// the pinned normalizations against values built here from the definitions, round trips, both paths, errors.
#include "scratch_dir.hpp"
#include "tprod_test.hpp"

using namespace tprod;
using namespace tprod::test;

TEST_CASE_TEMPLATE("every transform: inverse(forward(A)) = A, and forward equals A x3 Z by definition", T,
                   TPROD_TEST_SCALARS) {
  for (std::size_t p : {1, 2, 5, 8, 10, 16}) {  // 8, 10, 16: the DCT's even/odd split
    for_each_transform(p, [&](const auto& l) {
      CAPTURE(l.name());
      CAPTURE(p);
      const auto a = random_for<T>(l, extents3<3, 2, dynamic_extent>(3, 2, p), 1);
      using Tp = value_type_of<decltype(a)>;
      const auto ah = transform(a, l);
      TPROD_CHECK_CLOSE(inverse_transform(ah), a, Tp, 4 * p);
      // The stored slices are the first stored_slices() slices of A ×₃ Z.
      const auto full = reference_mode3(to_cd(a), reference_z(l, p));
      for (std::size_t k = 0; k < ah.stored_slices(); ++k)
        CHECK((ah.slice(k).template cast<cd>() - full.slice(k)).cwiseAbs().maxCoeff() <=
              tol<Tp>(4 * p) * max_abs(full));
    });
  }
}

TEST_CASE("DCT matches scipy.fft.dct(x, type=2, norm='ortho') on a known vector") {
  // scipy.fft.dct([1, 2, 3, 4], type=2, norm="ortho") = [5, -2.2304424973876626, 0, -0.15851266778110737]
  tensor3<double> a(1, 1, 4);
  for (std::size_t k = 0; k < 4; ++k) a(0, 0, k) = double(k + 1);
  for (auto path : {transform_path::gemm, transform_path::fftw}) {
    if (path == transform_path::fftw && !TPROD_HAS_FFTW) continue;
    const auto ah = transform(execution{path}, a, dct{});
    const double expected[] = {5.0, -2.2304424973876626, 0.0, -0.15851266778110737};
    for (std::size_t k = 0; k < 4; ++k) CHECK(ah.slice(k)(0, 0) == doctest::Approx(expected[k]).epsilon(1e-14));
  }
  // Φ is orthogonal: Φ·Φᵀ = I.
  const auto phi = dct::matrix(7);
  CHECK((phi * phi.transpose() - Eigen::MatrixXd::Identity(7, 7)).norm() < 1e-14);
}

TEST_CASE_TEMPLATE("DFT of real data stores floor(p/2)+1 slices equal to numpy.fft.fft's first half", T, float, double) {
  for (std::size_t p : {1, 4, 7, 64, 65}) {
    const auto a = random_tensor3<T>(2, 3, p, p);
    const auto ah = transform(execution{transform_path::gemm}, a, dft{});
    CHECK(ah.stored_slices() == p / 2 + 1);
    CHECK(std::is_same_v<typename decltype(ah)::value_type, std::complex<T>>);
    const auto full = reference_mode3(to_cd(a), reference_z(dft{}, p));
    for (std::size_t k = 0; k < ah.stored_slices(); ++k) {
      CHECK((ah.slice(k).template cast<cd>() - full.slice(k)).cwiseAbs().maxCoeff() <= tol<T>(p) * max_abs(full));
      CHECK(ah.slice_weight(k) == ((k == 0 || 2 * k == p) ? 1.0 : 2.0));
    }
#if TPROD_HAS_FFTW
    const auto af = transform(execution{transform_path::fftw}, a, dft{});
    TPROD_CHECK_CLOSE(af.data(), ah.data(), T, p);
    TPROD_CHECK_CLOSE(inverse_transform(execution{transform_path::fftw}, af), a, T, p);
#endif
  }
  // numpy.fft.fft([1, 2, 3, 4]) = [10, -2+2j, -2, -2-2j]
  tensor3<T> v(1, 1, 4);
  for (std::size_t k = 0; k < 4; ++k) v(0, 0, k) = T(k + 1);
  const auto vh = transform(v, dft{});
  CHECK(vh.slice(0)(0, 0) == std::complex<T>(10, 0));
  CHECK(std::abs(vh.slice(1)(0, 0) - std::complex<T>(-2, 2)) < 10 * epsilon_v<T>);
  CHECK(std::abs(vh.slice(2)(0, 0) - std::complex<T>(-2, 0)) < 10 * epsilon_v<T>);
}

TEST_CASE_TEMPLATE("FFTW and GEMM paths agree for long tubes (automatic measures which is faster)", T,
                   TPROD_TEST_SCALARS) {
  const std::size_t p = 67;  // in the measured range, odd (no DCT even/odd split)
  const auto a = random_tensor3<T>(2, 2, p, 3);
  for (auto path : {transform_path::automatic, transform_path::fftw}) {
    if (path == transform_path::fftw && !TPROD_HAS_FFTW) {
      CHECK_THROWS_AS(transform(execution{path}, a, dct{}), shape_error);
      continue;
    }
    const execution gemm{transform_path::gemm};
    TPROD_CHECK_CLOSE(transform(execution{path}, a, dct{}).data(), transform(gemm, a, dct{}).data(), T, p);
    TPROD_CHECK_CLOSE(transform(execution{path}, a, dft{}).data(), transform(gemm, a, dft{}).data(), T, p);
    TPROD_CHECK_CLOSE(inverse_transform(execution{path}, transform(execution{path}, a, dct{})), a, T, p);
  }
}

TEST_CASE("matrix_transform refuses singular and ill-conditioned Z with the condition estimate") {
  Eigen::MatrixXd z = Eigen::MatrixXd::Identity(3, 3);
  z(2, 2) = 0;
  CHECK_THROWS_WITH_AS(matrix_transform<double>{z}, doctest::Contains("singular"), numerical_error);
  z(2, 2) = 1e-15;
  CHECK_THROWS_WITH_AS(matrix_transform<double>{z}, doctest::Contains("condition number estimate 1e+15"),
                       numerical_error);
  z(2, 2) = 1e-3;
  const matrix_transform<double> ok(z);
  CHECK(ok.condition() == doctest::Approx(1e3));
  CHECK_THROWS_WITH_AS(matrix_transform<double>(Eigen::MatrixXd::Ones(2, 3)), doctest::Contains("2x3"), shape_error);
  CHECK_THROWS_WITH_AS((matrix_transform<double, 4>(Eigen::MatrixXd::Identity(3, 3))), doctest::Contains("fixed size is 4"),
                       shape_error);
  CHECK_THROWS_WITH_AS(transform(random_tensor3<double>(2, 2, 5, 1), ok), doctest::Contains("the tubes have length p = 5"), shape_error);
  CHECK_THROWS_AS(transform(random_tensor3<double>(2, 2, 5, 1), matrix_transform<double>{}), shape_error);
}

TEST_CASE("matrix_transform: NaN is refused, the scale of Z does not matter, the default limit keeps the identities") {
  Eigen::MatrixXd z = Eigen::MatrixXd::Identity(4, 4);
  z(1, 2) = std::numeric_limits<double>::quiet_NaN();  // was accepted: condition estimate 1, NaN results
  CHECK_THROWS_WITH_AS(matrix_transform<double>{z}, doctest::Contains("holds NaN or Inf"), numerical_error);
  z(1, 2) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(matrix_transform<double>{z}, numerical_error);
  // Perfectly conditioned at any scale: 1e-300·I is accepted with condition 1; 1e-320·I (subnormal, was
  // called singular) is refused because its inverse overflows, and the message says so.
  const matrix_transform<double> tiny(1e-300 * Eigen::MatrixXd::Identity(4, 4));
  CHECK(tiny.condition() == doctest::Approx(1.0));
  const std::string msg = tprod::test::message_of<numerical_error>([&] { matrix_transform<double>(1e-320 * Eigen::MatrixXd::Identity(4, 4)); });
  CHECK(msg.find("condition number estimate 1") != std::string::npos);
  CHECK(msg.find("overflows") != std::string::npos);
  CHECK(msg.find("singular") == std::string::npos);
  // The default limit ε^(−1/4) (8192 in double): cond 1e4 refused unless the caller raises the limit, and at
  // the limit A *_L I = A holds to √ε.
  CHECK(matrix_transform<double>::default_max_condition() == doctest::Approx(8192.0));
  CHECK(matrix_transform<float>::default_max_condition() == doctest::Approx(std::pow(double(epsilon_v<float>), -0.25)));
  Eigen::MatrixXd d = Eigen::MatrixXd::Identity(8, 8);
  d(7, 7) = 1e-4;
  CHECK_THROWS_WITH_AS(matrix_transform<double>{d}, doctest::Contains("exceeds 8192"), numerical_error);
  CHECK(matrix_transform<double>(d, 1e5).condition() == doctest::Approx(1e4));
  std::srand(9);
  const Eigen::MatrixXd q1 = Eigen::MatrixXd::Random(8, 8).householderQr().householderQ();
  const Eigen::MatrixXd q2 = Eigen::MatrixXd::Random(8, 8).householderQr().householderQ();
  Eigen::VectorXd s(8);
  for (Eigen::Index i = 0; i < 8; ++i) s(i) = std::pow(2000.0, -double(i) / 7);  // 2-norm condition 2000
  const matrix_transform<double> l(q1 * s.asDiagonal() * q2.transpose());
  CAPTURE(l.condition());
  REQUIRE(l.condition() <= 8192);
  const auto a = random_tensor3<double>(5, 5, 8, 3);
  const auto ai = product(a, identity<double>(5, 8, l), l);
  CHECK((ai.elements() - a.elements()).norm() <= std::sqrt(epsilon_v<double>) * a.elements().norm());
}

TEST_CASE("a complex Z promotes real tensors; a unitary Z preserves the norm") {
  const Eigen::MatrixXcd f = reference_z(dft{}, 4) / 2.0;  // F_4/√4 is unitary
  const matrix_transform<std::complex<double>> u(f);
  const auto a = random_tensor3<double>(2, 3, 4, 9);
  const auto ah = transform(a, u);
  static_assert(std::is_same_v<typename decltype(ah)::original_scalar, std::complex<double>>);
  REQUIRE(u.norm_scale(4).has_value());
  CHECK(*u.norm_scale(4) == doctest::Approx(1.0));
  CHECK(frobenius_norm(ah) == doctest::Approx(frobenius_norm(a)).epsilon(1e-14));
  // Products of real tensors under this Z are the (complex-typed, numerically real) t-products up to scaling.
  const auto b = random_tensor3<double>(3, 2, 4, 10);
  const auto c = product(a, b, u);
  CHECK(max_diff(c, product(a, b, dft{})) > 0.1);  // not the plain t-product: Z is scaled by 1/2
  TPROD_CHECK_CLOSE(c, reference_product(a, b, u), double, 16);
}

TEST_CASE("identity_transform is the identity and dct/dft/matrix policies satisfy the concept") {
  static_assert(transform_policy<dct> && transform_policy<dft> && transform_policy<identity_transform>);
  static_assert(transform_policy<matrix_transform<float>> && transform_policy<matrix_transform<std::complex<double>, 3>>);
  static_assert(!transform_policy<int>);
  const auto a = random_tensor3<float>(2, 2, 3, 1);
  CHECK(max_diff(transform(a, identity_transform{}).data(), a) == 0.0);
}

TEST_CASE("slice windows: a block of the stored slices, weighted by global index, refused where it does not fit") {
  // The DFT of a real 3×2×6 tensor stores 4 slices: 0 and 3 = p/2 stand for themselves, 1 and 2 for a pair each.
  const dextents3 e(3, 2, 6);
  const transformed<double, dft> whole(e, dft{});
  CHECK(whole.window().holds_every_slice());
  CHECK(whole.window().total == 4);
  transformed<double, dft> part(e, dft{}, slice_window{2, 2, 4, nullptr});
  CHECK_FALSE(part.window().holds_every_slice());
  CHECK(part.stored_slices() == 2);
  CHECK(part.slice_weight(0) == 2.0);  // global slice 2
  CHECK(part.slice_weight(1) == 1.0);  // global slice 3
  // Its norm counts the slices it holds with their global weights: 6 ones in slice 2 (twice) and in slice 3.
  for (std::size_t k = 0; k < 2; ++k) part.slice(k).setOnes();
  CHECK(std::abs(double(frobenius_norm(part)) - std::sqrt(18.0)) <= 4 * std::numeric_limits<double>::epsilon());
  CHECK_THROWS_AS((transformed<double, dft>(e, dft{}, slice_window{3, 2, 4, nullptr})), shape_error);
  CHECK_THROWS_AS((transformed<double, dft>(e, dft{}, slice_window{0, 2, 5, nullptr})), shape_error);
  CHECK_THROWS_AS((part + transformed<double, dft>(e, dft{}, slice_window{0, 2, 4, nullptr})), shape_error);
  CHECK_THROWS_AS((void)inverse_transform(part), shape_error);
}
