// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file predicates.hpp
/// @brief Structure tests (paper 000 Def. 7, paper 001 Def. 3.4), all judged in the transform domain.
///
/// - L-orthogonal: Qᵀ *_L Q = I, i.e. Q̂(:, :, k)ᴴQ̂(:, :, k) = I for every k (for square slices this also gives
///   Q *_L Qᵀ = I; for m > n it is "partially orthogonal", orthonormal columns).
/// - f-diagonal: every frontal slice is diagonal. Z acts along tubes, so this holds in one domain iff in the other.
/// - f-symmetric: every transform-domain slice Â(:, :, k) is symmetric (Hermitian when complex), i.e. A = Aᵀ.
/// - f-positive-definite (semidefinite): f-symmetric, and every Â(:, :, k) positive definite (semidefinite), i.e.
///   ⟨X, A *_L X⟩ > 0 (≥ 0) for every X ≠ 0 under a unitary Z (paper 001 Def. 3.4).
/// Tolerances are relative to the data's scale; the default is 100·ε·max(m, n, p). A device tensor is judged on a
/// host copy (the predicates return one bool and are used to verify results; the copy is their cost).
#include <Eigen/Eigenvalues>
#include <algorithm>

#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

namespace detail {
/// max|x| over the entries of an Eigen expression, 0 for an empty one (Eigen's maxCoeff requires an entry).
template <class X>
auto max_abs(const X& x) {
  using R = decltype(x.cwiseAbs().maxCoeff());
  return x.size() == 0 ? R(0) : x.cwiseAbs().maxCoeff();
}
}  // namespace detail

template <class T> real_t<T> default_tolerance(std::size_t m, std::size_t n, std::size_t p) {
  return real_t<T>(100) * epsilon_v<T> * real_t<T>(std::max({m, n, p, std::size_t(1)}));
}

/// @brief Whether Q̂ᴴQ̂ = I slice by slice, within tol (max-abs deviation).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool is_orthogonal(const transformed<T, L, E, S>& qhat, real_t<T> tol = -1) {
  if constexpr (!std::same_as<S, host_space>) {
    return is_orthogonal(copy(qhat, host_space{}), tol);
  } else {
    if (tol < 0) tol = default_tolerance<T>(qhat.m(), qhat.n(), qhat.p());
    bool orthogonal = true;
    for (std::size_t k = 0; k < qhat.stored_slices() && orthogonal; ++k) {
      const auto q = qhat.slice(k);
      const auto gram = (q.adjoint() * q).eval();
      using G = std::decay_t<decltype(gram)>;
      orthogonal = !(detail::max_abs(gram - G::Identity(gram.rows(), gram.cols())) > tol);
    }
    return qhat.window().all(orthogonal);  // every holder's slices
  }
}
/// @brief Whether Q is L-orthogonal: Qᵀ *_L Q = I.
template <any_tensor3 A, transform_policy L>
bool is_orthogonal(const A& q, const L& policy, real_t<value_type_of<A>> tol = -1) {
  return is_orthogonal(transform(q, policy), tol);
}

/// @brief Whether every frontal slice is diagonal: off-diagonal entries at most tol·max|a| (default tolerance
/// when tol < 0). Works on a tensor3 or a transformed tensor (all its holders' slices).
template <class X>
bool is_f_diagonal(const X& a, double tol = -1) {
  if constexpr (!std::same_as<typename X::memory_space_type, host_space>) {
    return is_f_diagonal(copy(a, host_space{}), tol);
  } else {
    const auto& t = [&]() -> decltype(auto) {
      if constexpr (host_tensor3<X>) return a; else return a.data();
    }();
    const auto v = cview(t);
    using V = value_type_of<std::remove_cvref_t<decltype(t)>>;
    if (tol < 0) tol = default_tolerance<V>(v.m(), v.n(), v.p());
    const slice_window whole = slice_window::whole(v.p());
    const slice_window& w = [&]() -> const slice_window& {
      if constexpr (host_tensor3<X>) return whole; else return a.window();
    }();
    const double scale = std::max(1.0, w.max(double(detail::max_abs(
                                           Eigen::Map<const Eigen::Matrix<V, Eigen::Dynamic, 1>>(
                                               v.data(), Eigen::Index(v.size()))))));
    bool diagonal = true;
    for (std::size_t k = 0; k < v.p() && diagonal; ++k)
      for (std::size_t j = 0; j < v.n(); ++j)
        for (std::size_t i = 0; i < v.m(); ++i)
          if (i != j && std::abs(v(i, j, k)) > tol * scale) diagonal = false;
    return w.all(diagonal);
  }
}

namespace detail {
/// max(1, max|Â|) over the stored slices of a host tensor (every holder's): the scale of the slice predicates'
/// tolerances.
template <scalar T, transform_policy L, extents3_type E>
real_t<T> slice_scale(const transformed<T, L, E>& ahat) {
  real_t<T> scale = 1;
  for (std::size_t k = 0; k < ahat.stored_slices(); ++k) scale = std::max(scale, max_abs(ahat.slice(k)));
  return real_t<T>(ahat.window().max(double(scale)));
}
/// Whether every stored slice of a square host tensor (every holder's) is Hermitian within `bound`.
template <scalar T, transform_policy L, extents3_type E>
bool slices_hermitian(const transformed<T, L, E>& ahat, real_t<T> bound) {
  bool hermitian = true;
  for (std::size_t k = 0; k < ahat.stored_slices() && hermitian; ++k)
    hermitian = !(max_abs(ahat.slice(k) - ahat.slice(k).adjoint()) > bound);
  return ahat.window().all(hermitian);
}
}  // namespace detail

/// @brief Whether every transform-domain slice is symmetric/Hermitian within tol·max(1, max|Â|) (A = Aᵀ).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool is_f_symmetric(const transformed<T, L, E, S>& ahat, real_t<T> tol = -1) {
  if constexpr (!std::same_as<S, host_space>) {
    return is_f_symmetric(copy(ahat, host_space{}), tol);
  } else {
    if (ahat.m() != ahat.n()) return false;
    if (tol < 0) tol = default_tolerance<T>(ahat.m(), ahat.n(), ahat.p());
    return detail::slices_hermitian(ahat, tol * detail::slice_scale(ahat));
  }
}
/// @brief Whether A is f-symmetric under L.
template <any_tensor3 A, transform_policy L>
bool is_f_symmetric(const A& a, const L& policy, real_t<value_type_of<A>> tol = -1) {
  return is_f_symmetric(transform(a, policy), tol);
}

namespace detail {
/// Whether Â is f-symmetric and the smallest eigenvalue of every slice is above tol·max(1, max|Â|)
/// (strict: positive definite) or at least −tol·max(1, max|Â|) (semidefinite).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool is_f_definite(const transformed<T, L, E, S>& ahat, bool strict, real_t<T> tol) {
  if constexpr (!std::same_as<S, host_space>) {
    return is_f_definite(copy(ahat, host_space{}), strict, tol);
  } else {
    if (ahat.m() != ahat.n()) return false;
    if (tol < 0) tol = default_tolerance<T>(ahat.m(), ahat.n(), ahat.p());
    const real_t<T> scale = slice_scale(ahat);
    if (!slices_hermitian(ahat, tol * scale)) return false;
    using D = typename L::template domain_scalar<T>;
    bool definite = true;
    ahat.window().agree([&] {
      for (std::size_t k = 0; k < ahat.stored_slices() && definite; ++k) {
        // The Hermitian part: the slice itself within tol, exactly Hermitian for the solver.
        const Eigen::Matrix<D, Eigen::Dynamic, Eigen::Dynamic> h = (ahat.slice(k) + ahat.slice(k).adjoint()) / D(2);
        const Eigen::SelfAdjointEigenSolver<decltype(h)> eig(h, Eigen::EigenvaluesOnly);
        if (eig.info() != Eigen::Success)
          throw numerical_error("is_f_positive_definite: the eigenvalues of transform-domain slice " +
                                std::to_string(ahat.window().first + k) + " did not converge (NaN or Inf in the tensor?)");
        const real_t<T> lowest = eig.eigenvalues().minCoeff();
        definite = strict ? lowest > tol * scale : lowest >= -tol * scale;
      }
    });
    return ahat.window().all(definite);
  }
}
}  // namespace detail

/// @brief Whether A is f-positive-definite: f-symmetric with every transform-domain slice positive definite, its
/// smallest eigenvalue above tol·max(1, max|Â|) (paper 001 Def. 3.4). Square tensors only (false otherwise).
/// @throws numerical_error when a slice's eigenvalues do not converge (NaN or Inf).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool is_f_positive_definite(const transformed<T, L, E, S>& ahat, real_t<T> tol = -1) {
  return detail::is_f_definite(ahat, true, tol);
}
/// @brief Whether A is f-positive-definite under L.
template <any_tensor3 A, transform_policy L>
bool is_f_positive_definite(const A& a, const L& policy, real_t<value_type_of<A>> tol = -1) {
  return is_f_positive_definite(transform(a, policy), tol);
}

/// @brief Whether A is f-positive-semidefinite: f-symmetric with no transform-domain slice eigenvalue below
/// −tol·max(1, max|Â|) (paper 001 Def. 3.4).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool is_f_positive_semidefinite(const transformed<T, L, E, S>& ahat, real_t<T> tol = -1) {
  return detail::is_f_definite(ahat, false, tol);
}
/// @brief Whether A is f-positive-semidefinite under L.
template <any_tensor3 A, transform_policy L>
bool is_f_positive_semidefinite(const A& a, const L& policy, real_t<value_type_of<A>> tol = -1) {
  return is_f_positive_semidefinite(transform(a, policy), tol);
}

}  // namespace tprod
