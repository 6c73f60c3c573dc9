#pragma once
/// @file predicates.hpp
/// @brief Structure tests (paper 000 Def. 7, paper 001 Def. 3.4), all judged in the transform domain.
///
/// - L-orthogonal: Qᵀ *_L Q = I, i.e. Q̂(:, :, k)ᴴQ̂(:, :, k) = I for every k (for square slices this also gives
///   Q *_L Qᵀ = I; for m > n it is "partially orthogonal", orthonormal columns).
/// - f-diagonal: every frontal slice is diagonal. Z acts along tubes, so this holds in one domain iff in the other.
/// - f-symmetric: every transform-domain slice Â(:, :, k) is symmetric (Hermitian when complex), i.e. A = Aᵀ.
/// Tolerances are relative to the data's scale; the default is 100·ε·max(m, n, p). A device tensor is judged on a
/// host copy (the predicates return one bool and are used to verify results; the copy is their cost).
#include <algorithm>

#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

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
    for (std::size_t k = 0; k < qhat.stored_slices(); ++k) {
      const auto q = qhat.slice(k);
      const auto gram = (q.adjoint() * q).eval();
      using G = std::decay_t<decltype(gram)>;
      if ((gram - G::Identity(gram.rows(), gram.cols())).cwiseAbs().maxCoeff() > tol) return false;
    }
    return true;
  }
}
/// @brief Whether Q is L-orthogonal: Qᵀ *_L Q = I.
template <any_tensor3 A, transform_policy L>
bool is_orthogonal(const A& q, const L& policy, real_t<value_type_of<A>> tol = -1) {
  return is_orthogonal(transform(q, policy), tol);
}

/// @brief Whether every frontal slice is diagonal: off-diagonal entries at most tol·max|a| (default tolerance
/// when tol < 0). Works on a tensor3 or a transformed tensor.
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
    const double scale = std::max(1.0, double(Eigen::Map<const Eigen::Matrix<V, Eigen::Dynamic, 1>>(
                                                v.data(), Eigen::Index(v.size())).cwiseAbs().maxCoeff()));
    for (std::size_t k = 0; k < v.p(); ++k)
      for (std::size_t j = 0; j < v.n(); ++j)
        for (std::size_t i = 0; i < v.m(); ++i)
          if (i != j && std::abs(v(i, j, k)) > tol * scale) return false;
    return true;
  }
}

/// @brief Whether every transform-domain slice is symmetric/Hermitian within tol·max|Â| (A = Aᵀ).
template <scalar T, transform_policy L, extents3_type E, memory_space S>
bool is_f_symmetric(const transformed<T, L, E, S>& ahat, real_t<T> tol = -1) {
  if constexpr (!std::same_as<S, host_space>) {
    return is_f_symmetric(copy(ahat, host_space{}), tol);
  } else {
    if (ahat.m() != ahat.n()) return false;
    if (tol < 0) tol = default_tolerance<T>(ahat.m(), ahat.n(), ahat.p());
    real_t<T> scale = 1;
    for (std::size_t k = 0; k < ahat.stored_slices(); ++k) scale = std::max(scale, ahat.slice(k).cwiseAbs().maxCoeff());
    for (std::size_t k = 0; k < ahat.stored_slices(); ++k)
      if ((ahat.slice(k) - ahat.slice(k).adjoint()).cwiseAbs().maxCoeff() > tol * scale) return false;
    return true;
  }
}
/// @brief Whether A is f-symmetric under L.
template <any_tensor3 A, transform_policy L>
bool is_f_symmetric(const A& a, const L& policy, real_t<value_type_of<A>> tol = -1) {
  return is_f_symmetric(transform(a, policy), tol);
}

}  // namespace tprod
