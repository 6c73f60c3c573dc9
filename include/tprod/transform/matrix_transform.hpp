// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file matrix_transform.hpp
/// @brief matrix_transform<Scalar, P>: the L-transform of any invertible real or complex p×p matrix Z,
/// Â(i, j, :) = Z·A(i, j, :), with Z⁻¹ computed once at construction.
///
/// A singular or numerically singular Z (1-norm condition estimate κ, as LAPACK's gecon, above `max_condition`)
/// is refused with that estimate, and so is a Z holding NaN or Inf, or one whose inverse cannot be represented.
///
/// Accuracy: the transform's rounding errors are amplified by about κ, and the identities of the algebra
/// (A *_L I = A, A *_L A⁻¹ = I) go through Z and Z⁻¹ twice, so they hold to a relative error of about κ²·ε
/// (measured at p = 8…200: below 0.01·κ²·ε). The default limit κ ≤ ε^(−1/4) (8192 for double, 54 for float,
/// ε that of Scalar's precision) keeps that error below √ε (1.5e-8 for double); a caller who accepts less
/// accuracy raises `max_condition`. With a complex Z, real tensors are promoted to complex: the L-product of two real
/// tensors under a general complex Z is complex.
#include <Eigen/LU>
#include <cmath>
#include <memory>
#include <sstream>

#include "tprod/core/error.hpp"
#include "tprod/core/extents.hpp"
#include "tprod/core/detail/dense_matrix.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

/// @tparam Scalar float, double, std::complex<float> or std::complex<double> (Z is kept in double precision).
/// @tparam P      the size of Z when known at compile time, else dynamic_extent.
template <scalar Scalar = double, std::size_t P = dynamic_extent>
class matrix_transform {
 public:
  using z_scalar = std::conditional_t<is_complex_v<Scalar>, std::complex<double>, double>;
  using z_matrix = detail::dense_matrix<z_scalar>;

  template <scalar T> using original_scalar = std::conditional_t<is_complex_v<Scalar>, complex_t<T>, T>;
  template <scalar T> using domain_scalar = original_scalar<T>;
  static constexpr std::size_t static_size = P;
  static constexpr tube_algorithm algorithm = tube_algorithm::none;

  /// @brief Default: an unusable transform of size 0 (assign a real one before use).
  matrix_transform() = default;

  /// @brief From Z (any Eigen expression convertible to a matrix of Scalar).
  /// @param z the p×p matrix Z (Â(i, j, :) = Z·A(i, j, :)).
  /// @param max_condition refuse Z whose 1-norm condition estimate exceeds this (≤ 0: the default
  ///        default_max_condition = ε^(−1/4), ε of Scalar's precision; see the accuracy note above).
  /// @throws shape_error if Z is not square (or not P×P); numerical_error if Z is singular, ill-conditioned,
  /// holds NaN or Inf, or has an inverse beyond the range of double.
  template <class Derived>
  explicit matrix_transform(const Eigen::MatrixBase<Derived>& z, double max_condition = -1.0)
      : state_(std::make_shared<state>(z.template cast<z_scalar>(), max_condition)) {}

  /// @brief The default limit on the condition estimate: ε^(−1/4), ε the machine epsilon of Scalar's precision.
  static double default_max_condition() { return std::pow(double(epsilon_v<real_t<Scalar>>), -0.25); }

  static constexpr std::string_view name() { return "matrix"; }
  std::size_t size() const { return state_ ? std::size_t(state_->z.rows()) : 0; }
  /// @brief Z and Z⁻¹ (double precision).
  const z_matrix& matrix() const { return checked().z; }
  const z_matrix& inverse_matrix() const { return checked().z_inv; }
  /// @brief The 1-norm condition estimate of Z, 1/rcond from its LU factorization.
  double condition() const { return checked().condition; }

  void check_size(std::size_t p) const {
    TPROD_EXPECTS(size() == p, "matrix_transform: Z is " + std::to_string(size()) + "x" + std::to_string(size()) +
                                   " but the tubes have length p = " + std::to_string(p));
  }
  template <scalar T> std::size_t stored_slices(std::size_t p) const { return p; }
  template <scalar T> double slice_weight(std::size_t, std::size_t) const { return 1.0; }
  std::optional<double> norm_scale(std::size_t) const { return checked().norm_scale; }
  bool is_real() const { return !is_complex_v<Scalar>; }

  /// @brief Equal when both hold the same Z (compared exactly).
  friend bool operator==(const matrix_transform& a, const matrix_transform& b) {
    if (a.state_ == b.state_) return true;
    if (!a.state_ || !b.state_) return false;
    return a.state_->z.rows() == b.state_->z.rows() && a.state_->z == b.state_->z;
  }

  /// @brief Zᵀ (Â = A·Zᵀ on the (m·n)×p matrix of tubes) in T's precision, made once per transform.
  /// @throws shape_error unless Z is p×p.
  template <scalar T> auto forward_factor(std::size_t p) const {
    check_size(p);
    return checked().template factors<T>().forward;
  }
  /// @brief Z⁻ᵀ (A = Â·Z⁻ᵀ), likewise.
  template <scalar T> auto inverse_factor(std::size_t p) const {
    check_size(p);
    return checked().template factors<T>().inverse;
  }

 private:
  // The GEMM factors Zᵀ and Z⁻ᵀ in one precision: complex when Z is, real otherwise.
  template <class R>
  struct factor_pair {
    using S = std::conditional_t<is_complex_v<Scalar>, std::complex<R>, R>;
    std::shared_ptr<const detail::dense_matrix<S>> forward, inverse;
    factor_pair() = default;
    factor_pair(const z_matrix& z, const z_matrix& z_inv)
        : forward(std::make_shared<const detail::dense_matrix<S>>(z.transpose().template cast<S>())),
          inverse(std::make_shared<const detail::dense_matrix<S>>(z_inv.transpose().template cast<S>())) {}
  };

  /// m·2^k elementwise with std::ldexp: exact, and right where 2^k alone over- or underflows (k beyond ±1023).
  static z_matrix times_power_of_two(const z_matrix& m, int k) {
    return m.unaryExpr([k](const z_scalar& v) {
      if constexpr (is_complex_v<z_scalar>)
        return z_scalar(std::ldexp(v.real(), k), std::ldexp(v.imag(), k));
      else
        return std::ldexp(v, k);
    });
  }

  struct state {
    z_matrix z, z_inv;
    double condition = 0;
    std::optional<double> norm_scale;
    factor_pair<float> factors_float;
    factor_pair<double> factors_double;

    template <class T> const auto& factors() const {
      if constexpr (std::is_same_v<real_t<T>, float>)
        return factors_float;
      else
        return factors_double;
    }

    state(z_matrix zz, double max_condition) : z(std::move(zz)) {
      TPROD_EXPECTS(z.rows() == z.cols() && z.rows() > 0, "matrix_transform: Z must be square and non-empty, got " +
                                                              std::to_string(z.rows()) + "x" + std::to_string(z.cols()));
      TPROD_EXPECTS(P == dynamic_extent || std::size_t(z.rows()) == P,
                    "matrix_transform: Z is " + std::to_string(z.rows()) + "x" + std::to_string(z.cols()) +
                        " but the transform's fixed size is " + std::to_string(P));
      const double p = double(z.rows());
      if (max_condition <= 0) max_condition = default_max_condition();
      const auto describe = [&] {
        std::ostringstream msg;
        msg << "matrix_transform: Z (" << z.rows() << "x" << z.cols() << ")";
        return msg;
      };
      if (!z.allFinite()) throw numerical_error(describe().str() + " holds NaN or Inf");
      // The condition number does not depend on Z's scale, but Eigen's estimate of it overflows or underflows
      // for tiny or huge entries (1e-320·I came out singular), so Z is factorized scaled by a power of two
      // (exact) to a largest entry in [1, 2).
      const double largest = z.cwiseAbs().maxCoeff();
      const int e = largest > 0 ? std::ilogb(largest) : 0;
      const z_matrix scaled = times_power_of_two(z, -e);
      const Eigen::PartialPivLU<z_matrix> lu(scaled);
      // An exactly zero pivot makes Eigen's estimator meaningless, so it is checked first.
      const double rcond = largest > 0 && lu.matrixLU().diagonal().cwiseAbs().minCoeff() > 0 ? lu.rcond() : 0.0;
      condition = rcond > 0 ? 1.0 / rcond : std::numeric_limits<double>::infinity();
      if (!(condition <= max_condition)) {
        std::ostringstream msg = describe();
        msg << " is " << (std::isinf(condition) ? "singular" : "numerically singular")
            << ": condition number estimate " << condition << " exceeds " << max_condition;
        if (!std::isinf(condition))
          msg << " (accepted transforms keep A *_L I = A to about condition^2 * eps; raise the limit to accept less)";
        throw numerical_error(msg.str());
      }
      z_inv = times_power_of_two(z_matrix(lu.inverse()), -e);
      if (!z_inv.allFinite()) {
        std::ostringstream msg = describe();
        msg << " is well enough conditioned (condition number estimate " << condition << ") but its scale is out "
            << "of range: its largest entry is " << largest << ", so Z^-1 overflows double precision; rescale Z";
        throw numerical_error(msg.str());
      }
      factors_float = factor_pair<float>(z, z_inv);
      factors_double = factor_pair<double>(z, z_inv);
      // Z·Zᴴ = c·I (Z a multiple of a unitary matrix) makes ‖A‖²_F = Σ_k ‖Â_k‖²_F / c.
      const double c = (z * z.adjoint()).real().trace() / p;
      if ((z * z.adjoint() - c * z_matrix::Identity(z.rows(), z.cols())).norm() <= 100 * p * c * 1e-16 * p)
        norm_scale = 1.0 / c;
    }
  };

  const state& checked() const {
    if (!state_) throw shape_error("matrix_transform: used before a matrix Z was given");
    return *state_;
  }
  std::shared_ptr<const state> state_;
};

template <class Derived>
matrix_transform(const Eigen::MatrixBase<Derived>&) -> matrix_transform<typename Derived::Scalar>;
template <class Derived>
matrix_transform(const Eigen::MatrixBase<Derived>&, double) -> matrix_transform<typename Derived::Scalar>;

}  // namespace tprod
