// SPDX-License-Identifier: Apache-2.0
// Empty and degenerate shapes on every transform and every CPU path: each public algebra function and
// factorization, given extents 0 and 1 in each of m, n and p, returns a result of the right (possibly empty) shape
// or refuses with tprod::shape_error — never a crash, a hang or another exception. (The tube kernels once divided
// by p·(parts per element) when p = 0.)
#include "tprod_test.hpp"

// In a namespace of its own: the area's tests compile as one unity source, and a file-scope
// `using namespace tprod` would make tprod::transform ambiguous with other files' helpers.
namespace empty_shapes_test {
using namespace tprod;
using namespace tprod::test;

namespace {

/// f() either returns or throws one of tprod's errors for arguments it cannot take (shape_error, argument_error,
/// numerical_error for an empty matrix that has no inverse), with a message; anything else fails the test.
template <class F>
void returns_or_refuses(const std::string& what, F&& f) {
  CAPTURE(what);
  std::string refusal, unexpected;
  try {
    f();
  } catch (const shape_error& e) {
    refusal = e.what();
  } catch (const argument_error& e) {
    refusal = e.what();
  } catch (const numerical_error& e) {
    refusal = e.what();
  } catch (const std::exception& e) {
    unexpected = e.what();
  }
  CHECK_MESSAGE(unexpected.empty(), "unexpected exception: " << unexpected);
  if (!refusal.empty()) CHECK_MESSAGE(refusal.find("x") != std::string::npos, "the refusal names no shape: " << refusal);
}

template <class T, class L>
void sweep(const L& l, std::size_t m, std::size_t n, std::size_t p) {
  const auto a = random_tensor3<T>(m, n, p, 1), b = random_tensor3<T>(n, 2, p, 2);
  returns_or_refuses("transform", [&] {
    const auto ahat = transform(a, l);
    CHECK(ahat.m() == m);
    CHECK(ahat.n() == n);
    const auto back = inverse_transform(ahat);
    CHECK(back.shape() == a.shape());
  });
  returns_or_refuses("product", [&] { CHECK(product(a, b, l).shape() == random_tensor3<T>(m, 2, p, 3).shape()); });
  returns_or_refuses("facewise", [&] { CHECK(facewise(a, b).shape() == random_tensor3<T>(m, 2, p, 3).shape()); });
  returns_or_refuses("transpose", [&] { CHECK(transpose(a, l).shape() == random_tensor3<T>(n, m, p, 3).shape()); });
  returns_or_refuses("frobenius_norm", [&] {
    const double norm = double(frobenius_norm(a));
    CHECK(std::isfinite(norm));
    if (a.size() == 0) CHECK(norm == 0.0);
  });
  returns_or_refuses("inner", [&] { CHECK(std::isfinite(double(std::abs(inner(a, a))))); });
  returns_or_refuses("identity", [&] { CHECK(identity<T>(n, p, l).size() == n * n * p); });
  returns_or_refuses("inverse", [&] { (void)inverse(random_tensor3<T>(n, n, p, 4), l); });
  returns_or_refuses("svd", [&] {
    const auto r = svd(a, l);
    CHECK(r.u.m() == m);
  });
  returns_or_refuses("truncated_svd", [&] { (void)truncated_svd(a, l, 1); });
  returns_or_refuses("qr", [&] { (void)qr(a, l); });
  returns_or_refuses("ranks", [&] { (void)ranks(a, l); });
  returns_or_refuses("spectral_norm", [&] { (void)spectral_norm(a, l); });
  returns_or_refuses("nuclear_norm", [&] { (void)nuclear_norm(a, l); });
  returns_or_refuses("is_orthogonal", [&] { (void)is_orthogonal(a, l); });
  returns_or_refuses("is_f_diagonal", [&] { (void)is_f_diagonal(transform(a, l)); });
}

}  // namespace

TEST_CASE_TEMPLATE("empty shapes: every algebra function on every transform and path returns or refuses", T, float,
                   double, std::complex<double>) {
  std::vector<transform_path> paths{transform_path::automatic, transform_path::gemm, transform_path::tuned};
  if (TPROD_HAS_FFTW) paths.push_back(transform_path::fftw);
  for (const transform_path path : paths)
    for (std::size_t m : {0, 1, 2})
      for (std::size_t n : {0, 1, 2})
        for (std::size_t p : {0, 1, 2, 5}) {
          CAPTURE(to_string(path));
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(p);
          const execution_scope scope(execution{path, 1});
          sweep<T>(dct{}, m, n, p);
          sweep<T>(dft{}, m, n, p);
          sweep<T>(identity_transform{}, m, n, p);
          if (p > 0 && path == transform_path::fftw) {  // a general Z has no FFT: forcing one is refused
            const matrix_transform<double> z(2.0 * Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p)));
            CHECK_THROWS_WITH_AS(transform(random_tensor3<T>(m, n, p, 1), z), doctest::Contains("has no FFT"),
                                 shape_error);
          } else if (p > 0) {
            sweep<T>(matrix_transform<double>(2.0 * Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p))), m, n,
                     p);
          } else {
            returns_or_refuses("matrix_transform of size 0", [&] { (void)matrix_transform<double>(Eigen::MatrixXd(0, 0)); });
          }
        }
}

}  // namespace empty_shapes_test
