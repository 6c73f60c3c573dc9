// SPDX-License-Identifier: Apache-2.0
// Gradients with respect to Z (algebra/z_gradient.hpp) against central finite differences of the library's own
// transform, inverse transform and L-product, in double, for a general (non-orthogonal) Z, several p and shapes.
#include <doctest/doctest.h>

#include <functional>

#include "tprod/algebra/product.hpp"
#include "tprod/algebra/z_gradient.hpp"
#include "tprod/core/random.hpp"
#include "tprod/transform/transformed.hpp"

using tprod::tensor3;
using t3 = tensor3<double>;
using tprod::random_tensor3;

namespace {

double dot(const t3& a, const t3& b) { return (a.elements().array() * b.elements().array()).sum(); }

/// A well-conditioned random Z: I·2 + a random matrix of norm about 1/2.
Eigen::MatrixXd random_z(std::size_t p, unsigned seed) {
  std::srand(seed);
  return 2.0 * Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p)) +
         0.5 / std::sqrt(double(p)) * Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p));
}

/// Central differences of ℓ(Z) entry by entry; the error is O(h²·ℓ''') plus rounding O(ε·|ℓ|/h).
Eigen::MatrixXd finite_difference(const Eigen::MatrixXd& z, const std::function<double(const Eigen::MatrixXd&)>& loss) {
  const double h = 1e-5;
  Eigen::MatrixXd d(z.rows(), z.cols());
  for (Eigen::Index i = 0; i < z.rows(); ++i)
    for (Eigen::Index j = 0; j < z.cols(); ++j) {
      Eigen::MatrixXd zp = z, zm = z;
      zp(i, j) += h;
      zm(i, j) -= h;
      d(i, j) = (loss(zp) - loss(zm)) / (2 * h);
    }
  return d;
}

void check_close(const Eigen::MatrixXd& analytic, const Eigen::MatrixXd& numeric) {
  CAPTURE(analytic);
  CAPTURE(numeric);
  CHECK((analytic - numeric).norm() <= 1e-7 * (1 + numeric.norm()));
}

using z_transform = tprod::matrix_transform<double>;

}  // namespace

TEST_CASE("z_gradient: the transform, its inverse and the L-product against finite differences") {
  for (std::size_t p : {1, 3, 5}) {
    CAPTURE(p);
    const Eigen::MatrixXd z = random_z(p, unsigned(p));
    const t3 a = random_tensor3<double>(4, 3, p, 1), b = random_tensor3<double>(3, 2, p, 2);

    const t3 w_a = random_tensor3<double>(4, 3, p, 3);  // ℓ = ⟨W, L(A)⟩
    check_close(tprod::transform_z_gradient(a, w_a), finite_difference(z, [&](const Eigen::MatrixXd& zz) {
                  return dot(w_a, tprod::transform(a, z_transform(zz)).data());
                }));

    // ℓ = ⟨W, L⁻¹(Â)⟩ for a fixed transform-domain Â (the entries of `a`): L⁻¹ under Z is the transform of Z⁻¹.
    check_close(tprod::inverse_transform_z_gradient(z_transform(z), a, w_a),
                finite_difference(z, [&](const Eigen::MatrixXd& zz) {
                  return dot(w_a, tprod::transform(a, z_transform(Eigen::MatrixXd(zz.inverse()))).data());
                }));

    const t3 w_c = random_tensor3<double>(4, 2, p, 4);  // ℓ = ⟨W, A *_L B⟩
    check_close(tprod::product_z_gradient(z_transform(z), a, b, w_c), finite_difference(z, [&](const Eigen::MatrixXd& zz) {
                  return dot(w_c, tprod::product(a, b, z_transform(zz)));
                }));
  }
}

TEST_CASE("z_gradient: shapes that do not match are named") {
  const z_transform l(random_z(3, 7));
  const t3 a = random_tensor3<double>(2, 3, 3, 1), g = random_tensor3<double>(2, 2, 3, 2);
  CHECK_THROWS_AS(tprod::transform_z_gradient(a, g), tprod::shape_error);
  CHECK_THROWS_AS(tprod::inverse_transform_z_gradient(l, a, g), tprod::shape_error);
  CHECK_THROWS_AS(tprod::product_z_gradient(l, a, a, g), tprod::shape_error);
  const t3 a4 = random_tensor3<double>(2, 3, 4, 1);
  CHECK_THROWS_AS(tprod::inverse_transform_z_gradient(l, a4, a4), tprod::shape_error);
}
