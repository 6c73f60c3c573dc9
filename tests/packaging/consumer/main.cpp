// SPDX-License-Identifier: Apache-2.0
// The packaging tests' consumer: the smallest real use of tprod from outside its source tree.
// Checks the defining identity of the L-identity, A *_L I = A, under the orthonormal DCT.
#include <tprod/tprod.hpp>

#include <cstdio>
#include <limits>

#ifdef TPROD_EXPECT_FFTW
static_assert(TPROD_HAS_FFTW == TPROD_EXPECT_FFTW, "tprod::tprod did not pass on the FFTW choice of the build");
#endif

#if defined(TPROD_EXPECT_INSTANCES) && !defined(TPROD_EXTERN_TEMPLATES)
#error "tprod::instances did not pass on TPROD_EXTERN_TEMPLATES"
#endif

int main() {
  const std::size_t m = 4, n = 3, p = 5;
  const auto A = tprod::random_tensor3<double>(m, n, p, 2024);
  const auto I = tprod::identity<double>(n, p, tprod::dct{});
  const double err = tprod::frobenius_norm(tprod::product(A, I, tprod::dct{}) - A);
  // Two orthonormal transforms and n-term dot products: rounding grows like n·p·eps·‖A‖.
  const double tol = 50 * std::numeric_limits<double>::epsilon() * double(n * p) * tprod::frobenius_norm(A);
  std::printf("tprod %s (FFTW %d): ||A *_L I - A||_F = %.3g (tolerance %.3g)\n", TPROD_VERSION_STRING,
              TPROD_HAS_FFTW, err, tol);
#ifdef TPROD_EXPECT_INSTANCES
  // An L-SVD, linked from the library: A = U *_L S *_L Vᵀ.
  const auto f = tprod::svd(A, tprod::dct{});
  const double svd_err = tprod::frobenius_norm(
      tprod::product(tprod::product(f.u, f.s, tprod::dct{}), tprod::transpose(f.v, tprod::dct{}), tprod::dct{}) - A);
  std::printf("with tprod::instances: ||U *_L S *_L V^T - A||_F = %.3g\n", svd_err);
  if (!(svd_err <= tol)) return 1;
#endif
  return err <= tol ? 0 : 1;
}
