#pragma once
/// @file transformed.hpp
/// @brief transformed<T, L, Extents>: a tensor held in the transform domain of L, Â = L(A).
///
/// Its own type so that chains of products and sums stay in the transform domain (one forward transform per
/// operand, one inverse at the end) and so that domains and transforms cannot be mixed by accident: the
/// operators only accept operands with the same original scalar T and the same policy type L (and, for
/// matrix_transform, the same Z, checked at run time).
///
/// `T` is the original-domain scalar (after L's promotion), `Extents` the original shape m×n×p. The
/// transform-domain data has L's domain scalar and `stored_slices` ≤ p frontal slices.
#include <optional>
#include <utility>

#include "tprod/backend/cpu/transform.hpp"
#include "tprod/core/execution.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

template <scalar T, transform_policy L, extents3_type Extents = dextents3>
class transformed {
 public:
  using original_scalar = T;
  using value_type = typename L::template domain_scalar<T>;
  using extents_type = Extents;
  using transform_type = L;
  using data_type = tensor3<value_type>;
  static_assert(std::same_as<T, typename L::template original_scalar<T>>,
                "transformed's T must already be promoted by the transform (use tprod::transform(A, L))");

  /// @brief A zero transform-domain tensor for an original shape (all stored slices zero).
  transformed(const Extents& extents, L policy)
      : extents_(extents), policy_(std::move(policy)), data_(extents.m(), extents.n(), checked_slices()) {}
  /// @brief A transform-domain tensor whose stored slices are left uninitialized (to be overwritten).
  transformed(const Extents& extents, L policy, uninitialized_t)
      : extents_(extents), policy_(std::move(policy)), data_(extents.m(), extents.n(), checked_slices(), uninitialized) {}
  /// @brief Adopts `data` as the stored slices (no copy): it must be m×n×stored_slices for `extents`.
  /// @throws shape_error otherwise.
  transformed(const Extents& extents, L policy, data_type&& data)
      : extents_(extents), policy_(std::move(policy)), data_(std::move(data)) {
    TPROD_EXPECTS(data_.m() == extents_.m() && data_.n() == extents_.n() && data_.p() == checked_slices(),
                  "transformed: stored slices of shape " + data_.shape() + " do not fit the tensor " + shape());
  }

  const Extents& extents() const { return extents_; }
  std::size_t m() const { return extents_.m(); }
  std::size_t n() const { return extents_.n(); }
  std::size_t p() const { return extents_.p(); }  ///< tubes of the original tensor
  std::size_t stored_slices() const { return data_.p(); }
  std::string shape() const { return extents_.to_string(); }
  const L& transform() const { return policy_; }

  /// @brief How many of the p transform-domain slices stored slice k stands for (2 for a DFT slice whose
  /// conjugate partner is not stored).
  double slice_weight(std::size_t k) const { return policy_.template slice_weight<T>(k, p()); }

  /// @brief Â(:, :, k) as an Eigen map (no copy).
  auto slice(std::size_t k) { return data_.slice(k); }
  auto slice(std::size_t k) const { return data_.slice(k); }
  /// @brief The stored transform-domain slices as an m×n×stored_slices tensor.
  data_type& data() { return data_; }
  const data_type& data() const { return data_; }
  /// @brief Moves the stored slices out (the tensor is left empty).
  data_type release() && { return std::move(data_); }

  transformed& operator+=(const transformed& b) { check_same(b, "+="); data_ += b.data_; return *this; }
  transformed& operator-=(const transformed& b) { check_same(b, "-="); data_ -= b.data_; return *this; }
  transformed& operator*=(const T& s) { data_ *= value_type(s); return *this; }
  friend transformed operator+(transformed a, const transformed& b) { return a += b; }
  friend transformed operator-(transformed a, const transformed& b) { return a -= b; }
  friend transformed operator*(const T& s, transformed a) { return a *= s; }
  friend transformed operator*(transformed a, const T& s) { return a *= s; }

  /// @brief Throws shape_error unless b is in the same transform domain with the same shape.
  template <class E2>
  void check_same(const transformed<T, L, E2>& b, const char* op) const {
    check_same_transform(b, op);
    TPROD_EXPECTS(extents_ == b.extents(),
                  std::string("transformed ") + op + ": shapes " + shape() + " and " + b.shape() + " differ");
  }
  template <class E2>
  void check_same_transform(const transformed<T, L, E2>& b, const char* op) const {
    if (!(policy_ == b.transform()))
      throw transform_mismatch_error(std::string("transformed ") + op + ": the operands are in different " +
                                     std::string(L::name()) + " transform domains (different Z)");
  }

 private:
  // The number of stored slices, after checking that the transform can act on p tubes.
  std::size_t checked_slices() const {
    policy_.check_size(extents_.p());
    return policy_.template stored_slices<T>(extents_.p());
  }

  Extents extents_;
  L policy_;
  data_type data_;
};

/// @brief Writes Â = L(A) into an existing transform-domain tensor of A's shape (no allocation), with L
/// the output's transform, run as `ex` says (path and threads). Real A is promoted to complex first when L's Z
/// is complex.
/// @throws shape_error when the shapes differ or L cannot act on A's tubes.
template <host_tensor3 A, scalar T, transform_policy L, extents3_type E>
void transform_into(const execution& ex, const A& a, transformed<T, L, E>& out) {
  using T0 = value_type_of<A>;
  static_assert(std::same_as<T, typename L::template original_scalar<T0>>,
                "tprod::transform_into: the output's scalar must be the input's, promoted by the transform");
  static_assert(extents_compatible(extents_of<A>::static_extent(2), L::static_size),
                "tprod::transform: the tensor's fixed tube count differs from the transform's fixed size");
  const auto av = cview(a);
  TPROD_EXPECTS(av.extents() == out.extents(),
                "transform_into: the input is " + av.shape() + " but the output is " + out.shape());
  if constexpr (std::same_as<T, T0>) {
    backend::cpu::forward<T>(out.transform(), tensor3_view<const T>(av), out.data().view(), ex);
  } else {
    const auto promoted = tensor3<T>(av);  // real → complex for a complex Z
    backend::cpu::forward<T>(out.transform(), tensor3_view<const T>(promoted.view()), out.data().view(), ex);
  }
}
/// @brief transform_into on the calling thread's default execution.
template <host_tensor3 A, scalar T, transform_policy L, extents3_type E>
void transform_into(const A& a, transformed<T, L, E>& out) {
  transform_into(default_execution(), a, out);
}

/// @brief Â = L(A) = A ×₃ Z as a new transform-domain tensor, run as `ex` says. Peak memory beyond A: Â (and
/// a promoted copy of A under a complex Z for real A). Real A is promoted to complex
/// first when L's Z is complex.
/// @throws shape_error when L cannot act on A's tubes (a matrix_transform of another size).
template <host_tensor3 A, transform_policy L>
auto transform(const execution& ex, const A& a, const L& policy) {
  transformed<typename L::template original_scalar<value_type_of<A>>, L, extents_of<A>> out(
      cview(a).extents(), policy, uninitialized);
  transform_into(ex, a, out);
  return out;
}
/// @brief Â = L(A) on the calling thread's default execution.
template <host_tensor3 A, transform_policy L>
auto transform(const A& a, const L& policy) {
  return transform(default_execution(), a, policy);
}

namespace detail {
/// The execution to transform L's T-tensors with p tubes in place with, or nothing when that is impossible: the
/// domain must keep T and all p slices, and the path be the GEMM (blockwise, through a small buffer) or the
/// identity; FFTW runs out of place. A tensor the caller gives up asks for the memory to be reused, so under
/// `automatic` the GEMM is taken in place up to measure_max_tubes even where FFTW measured faster: the peak memory
/// does not depend on a timing (above that, FFTW and a copy).
template <scalar T, transform_policy L>
std::optional<execution> in_place_execution(const L& policy, std::size_t p, std::size_t tubes, const execution& ex) {
  if constexpr (!std::same_as<typename L::template domain_scalar<T>, T> ||
                !std::same_as<typename L::template original_scalar<T>, T>) {
    return std::nullopt;
  } else {
    execution in_place = ex;
    if (ex.path == transform_path::automatic && p <= backend::cpu::measure_max_tubes)
      in_place.path = transform_path::gemm;
    if (policy.template stored_slices<T>(p) != p || backend::cpu::use_fftw<T>(policy, p, tubes, in_place))
      return std::nullopt;
    return in_place;
  }
}
}  // namespace detail

/// @brief Â = L(A) for a tensor the caller gives up: transformed in place where in_place_execution allows
/// (real tensors under the DCT, the identity and real Z on the GEMM path; complex ones under any L but FFTW),
/// so the peak memory is A's (plus blocks of 2¹⁶ elements per thread); otherwise as transform(ex, a, policy).
template <scalar T, extents3_type E, transform_policy L>
auto transform(const execution& ex, tensor3<T, E>&& a, const L& policy) {
  using Out = transformed<typename L::template original_scalar<T>, L, E>;
  if constexpr (std::same_as<typename L::template original_scalar<T>, T> &&
                std::same_as<typename L::template domain_scalar<T>, T>) {
    policy.check_size(a.p());
    if (const auto in_place = detail::in_place_execution<T>(policy, a.p(), a.m() * a.n(), ex)) {
      const E extents = a.extents();
      backend::cpu::forward<T>(policy, tensor3_view<const T>(a.view()), a.view(), *in_place);
      return Out(extents, policy, tensor3<T>(std::move(a)));
    }
  }
  return transform(ex, static_cast<const tensor3<T, E>&>(a), policy);
}
template <scalar T, extents3_type E, transform_policy L>
auto transform(tensor3<T, E>&& a, const L& policy) {
  return transform(default_execution(), std::move(a), policy);
}

/// @brief Writes A = L⁻¹(Â) into an existing tensor of the original shape (no allocation).
/// @throws shape_error when the shapes differ.
template <scalar T, transform_policy L, extents3_type E, host_tensor3 Out>
void inverse_transform_into(const execution& ex, const transformed<T, L, E>& ahat, Out&& a) {
  static_assert(std::same_as<value_type_of<Out>, T>,
                "tprod::inverse_transform_into: the output's scalar must be the transformed tensor's original scalar");
  const tensor3_view<T> out = a.view();
  TPROD_EXPECTS(out.extents() == ahat.extents(),
                "inverse_transform_into: the input is " + ahat.shape() + " but the output is " + out.shape());
  backend::cpu::inverse<T>(ahat.transform(), tensor3_view<const typename L::template domain_scalar<T>>(ahat.data().view()),
                           out, ex);
}
template <scalar T, transform_policy L, extents3_type E, host_tensor3 Out>
void inverse_transform_into(const transformed<T, L, E>& ahat, Out&& a) {
  inverse_transform_into(default_execution(), ahat, std::forward<Out>(a));
}

/// @brief A = L⁻¹(Â), back in the original domain, run as `ex` says.
template <scalar T, transform_policy L, extents3_type E>
tensor3<T, E> inverse_transform(const execution& ex, const transformed<T, L, E>& ahat) {
  tensor3<T, E> a(ahat.extents(), uninitialized);
  inverse_transform_into(ex, ahat, a);
  return a;
}
template <scalar T, transform_policy L, extents3_type E>
tensor3<T, E> inverse_transform(const transformed<T, L, E>& ahat) {
  return inverse_transform(default_execution(), ahat);
}

/// @brief A = L⁻¹(Â) for a transform-domain tensor the caller gives up: in place where in_place_execution
/// allows (peak memory Â's), otherwise as inverse_transform(ex, ahat).
template <scalar T, transform_policy L>
tensor3<T> inverse_transform(const execution& ex, transformed<T, L, dextents3>&& ahat) {
  if (const auto in_place = detail::in_place_execution<T>(ahat.transform(), ahat.p(), ahat.m() * ahat.n(), ex)) {
    const L policy = ahat.transform();
    if constexpr (std::same_as<typename L::template domain_scalar<T>, T>) {
      tensor3<T> a = std::move(ahat).release();
      backend::cpu::inverse<T>(policy, tensor3_view<const T>(a.view()), a.view(), *in_place);
      return a;
    }
  }
  return inverse_transform(ex, static_cast<const transformed<T, L, dextents3>&>(ahat));
}
template <scalar T, transform_policy L>
tensor3<T> inverse_transform(transformed<T, L, dextents3>&& ahat) {
  return inverse_transform(default_execution(), std::move(ahat));
}

}  // namespace tprod
