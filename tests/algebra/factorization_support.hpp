// SPDX-License-Identifier: Apache-2.0
#pragma once
// Support for the L-SVD, L-QR and rank tests: the transforms to sweep (with orthogonal, merely invertible and
// complex matrices Z), tolerances, and small identities built from the product and transpose.
#include <doctest/doctest.h>

#include <Eigen/QR>
#include <complex>
#include <tuple>

#include "tprod/algebra/identity.hpp"
#include "tprod/algebra/norms.hpp"
#include "tprod/algebra/product.hpp"
#include "tprod/algebra/transpose.hpp"
#include "tprod/core/random.hpp"
#include "tprod/transform.hpp"
#include "tprod/algebra/extern_templates.hpp"

namespace tprod::factor_test {

using cd = std::complex<double>;

/// Tolerance for an error that grows with n accumulated roundings of T.
template <class T> double factor_tol(std::size_t n) { return 200.0 * double(epsilon_v<T>) * double(n); }

inline Eigen::MatrixXd random_matrix(std::size_t p, unsigned seed) {
  std::srand(seed);
  return Eigen::MatrixXd::Random(Eigen::Index(p), Eigen::Index(p));
}
/// An orthogonal p×p matrix (Q of a random matrix): norm_scale 1, so the truncation identities hold.
inline Eigen::MatrixXd orthogonal_z(std::size_t p) {
  return Eigen::HouseholderQR<Eigen::MatrixXd>(random_matrix(p, 5)).householderQ();
}
/// An invertible, well-conditioned but not orthogonal p×p matrix.
inline Eigen::MatrixXd skewed_z(std::size_t p) {
  return random_matrix(p, 7) * 0.3 + 2.0 * Eigen::MatrixXd::Identity(Eigen::Index(p), Eigen::Index(p));
}
inline Eigen::MatrixXcd complex_z(std::size_t p) {
  return skewed_z(p).cast<cd>() + cd(0, 0.5) * random_matrix(p, 11).cast<cd>();
}

/// Every kind of transform: dct, dft, identity, an orthogonal Z, a skewed Z and a complex Z.
inline auto factorization_transforms(std::size_t p) {
  return std::make_tuple(dct{}, dft{}, identity_transform{}, matrix_transform<double>(orthogonal_z(p)),
                         matrix_transform<double>(skewed_z(p)), matrix_transform<cd>(complex_z(p)));
}
/// The transforms whose Z is a multiple of a unitary matrix (Frobenius identities and optimality hold).
inline auto unitary_transforms(std::size_t p) {
  return std::make_tuple(dct{}, dft{}, identity_transform{}, matrix_transform<double>(orthogonal_z(p)));
}
template <class Tuple, class F> void for_each(Tuple&& t, F&& f) {
  std::apply([&](const auto&... l) { (f(l), ...); }, t);
}

/// The original-domain scalar of T under L (complex under a complex Z).
template <class T, class L> using scalar_under = typename L::template original_scalar<T>;

/// U *_L S *_L Vᵀ.
template <class U, class S, class V, class L>
auto reconstruct(const U& u, const S& s, const V& v, const L& l) {
  return product(product(u, s, l), transpose(v, l), l);
}

/// ‖Qᵀ *_L Q − I‖_F: Q has L-orthonormal columns.
template <class Q, class L>
double orthogonality_error(const Q& q, const L& l) {
  using T = value_type_of<Q>;
  return double(frobenius_norm(product(transpose(q, l), q, l) - identity<T>(q.n(), q.p(), l)));
}

/// ‖A − B‖_F.
template <class A, class B> double distance(const A& a, const B& b) { return double(frobenius_norm(a - b)); }

/// A random tensor of the scalar T promotes to under L.
template <class T, class L> tensor3<scalar_under<T, L>> random_under(std::size_t m, std::size_t n, std::size_t p,
                                                                      std::uint64_t seed) {
  return random_tensor3<scalar_under<T, L>>(m, n, p, seed);
}

}  // namespace tprod::factor_test
