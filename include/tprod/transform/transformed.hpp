// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transformed.hpp
/// @brief transformed<T, L, Extents, Space>: a tensor held in the transform domain of L, Â = L(A), in host or
/// device memory.
///
/// Its own type so that chains of products and sums stay in the transform domain (one forward transform per
/// operand, one inverse at the end) and so that domains and transforms cannot be mixed by accident: the
/// operators only accept operands with the same original scalar T and the same policy type L (and, for
/// matrix_transform, the same Z, checked at run time).
///
/// `T` is the original-domain scalar (after L's promotion), `Extents` the original shape m×n×p. The
/// transform-domain data has L's domain scalar and `stored_slices` ≤ p frontal slices: all of L's stored slices
/// on one process, or the block its slice_window names when the tensor is spread over ranks (the distributed layer
/// makes those; the algebra's functions take them alike).
#include <optional>
#include <utility>

#include "tprod/backend/kernels/transform.hpp"
#include "tprod/core/execution.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/transform/slice_window.hpp"
#include "tprod/transform/transform_concepts.hpp"

namespace tprod {

namespace detail {
/// @brief Fails to compile, with one sentence saying how to copy, when two operands live in different spaces.
template <memory_space S1, memory_space S2>
constexpr void static_check_same_space() {
  static_assert(std::same_as<S1, S2>,
                "tprod: the operands live in different memory spaces (host and device); copy one explicitly with "
                "tprod::to_device(a), tprod::to_host(a) or tprod::copy(a, space) first");
}
}  // namespace detail

template <scalar T, transform_policy L, extents3_type Extents = dextents3, memory_space Space = host_space>
class transformed {
  static constexpr bool on_host = std::same_as<Space, host_space>;

 public:
  using original_scalar = T;
  using value_type = typename L::template domain_scalar<T>;
  using extents_type = Extents;
  using transform_type = L;
  using memory_space_type = Space;
  using data_type = tensor3<value_type, dextents3, Space>;
  static_assert(std::same_as<T, typename L::template original_scalar<T>>,
                "transformed's T must already be promoted by the transform (use tprod::transform(A, L))");

  /// @brief A zero transform-domain tensor for an original shape (all stored slices zero).
  transformed(const Extents& extents, L policy)
      : extents_(extents), policy_(std::move(policy)), window_(whole_window()),
        data_(extents.m(), extents.n(), window_.count) {}
  /// @brief A transform-domain tensor whose stored slices are left uninitialized (to be overwritten).
  transformed(const Extents& extents, L policy, uninitialized_t)
      : extents_(extents), policy_(std::move(policy)), window_(whole_window()),
        data_(extents.m(), extents.n(), window_.count, uninitialized) {}
  /// @brief The slices `window` names of a tensor spread over several holders, zero or left uninitialized.
  /// @throws shape_error unless the window lies inside L's stored slices for p tubes.
  transformed(const Extents& extents, L policy, slice_window window)
      : extents_(extents), policy_(std::move(policy)), window_(checked(std::move(window))),
        data_(extents.m(), extents.n(), window_.count) {}
  transformed(const Extents& extents, L policy, slice_window window, uninitialized_t)
      : extents_(extents), policy_(std::move(policy)), window_(checked(std::move(window))),
        data_(extents.m(), extents.n(), window_.count, uninitialized) {}
  /// @brief Adopts `data` as the stored slices (no copy): it must be m×n×stored_slices for `extents`.
  /// @throws shape_error otherwise.
  transformed(const Extents& extents, L policy, data_type&& data)
      : extents_(extents), policy_(std::move(policy)), window_(whole_window()), data_(std::move(data)) {
    check_data();
  }
  /// @brief Adopts `data` as the slices `window` names (m×n×window.count). @throws shape_error otherwise.
  transformed(const Extents& extents, L policy, slice_window window, data_type&& data)
      : extents_(extents), policy_(std::move(policy)), window_(checked(std::move(window))), data_(std::move(data)) {
    check_data();
  }

  const Extents& extents() const { return extents_; }
  std::size_t m() const { return extents_.m(); }
  std::size_t n() const { return extents_.n(); }
  std::size_t p() const { return extents_.p(); }  ///< tubes of the original tensor
  std::size_t stored_slices() const { return data_.p(); }  ///< those held here (all of them on one process)
  /// @brief Which of the tensor's stored slices are held here, and by whom else.
  const slice_window& window() const { return window_; }
  std::string shape() const { return extents_.to_string(); }
  const L& transform() const { return policy_; }

  /// @brief How many of the p transform-domain slices stored slice k (of those held here) stands for (2 for a DFT
  /// slice whose conjugate partner is not stored).
  double slice_weight(std::size_t k) const { return policy_.template slice_weight<T>(window_.first + k, p()); }

  /// @brief Â(:, :, k) as an Eigen map (no copy). Host only.
  auto slice(std::size_t k) requires on_host { return data_.slice(k); }
  auto slice(std::size_t k) const requires on_host { return data_.slice(k); }
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
  void check_same(const transformed<T, L, E2, Space>& b, const char* op) const {
    check_same_transform(b, op);
    TPROD_EXPECTS(extents_ == b.extents(),
                  std::string("transformed ") + op + ": shapes " + shape() + " and " + b.shape() + " differ");
  }
  /// @brief Throws shape_error unless b holds the same stored slices on the same holders (always so on one process).
  template <class E2>
  void check_same_window(const transformed<T, L, E2, Space>& b, const char* op) const {
    TPROD_EXPECTS(window_ == b.window(), std::string("transformed ") + op +
                                             ": the operands hold different slices or live on different holders");
  }
  template <class E2>
  void check_same_transform(const transformed<T, L, E2, Space>& b, const char* op) const {
    if (!(policy_ == b.transform()))
      throw transform_mismatch_error(std::string("transformed ") + op + ": the operands are in different " +
                                     std::string(L::name()) + " transform domains (different Z)");
    check_same_window(b, op);
  }

 private:
  // The number of stored slices, after checking that the transform can act on p tubes.
  std::size_t checked_slices() const {
    policy_.check_size(extents_.p());
    return policy_.template stored_slices<T>(extents_.p());
  }
  slice_window whole_window() const { return slice_window::whole(checked_slices()); }
  void check_data() const {
    TPROD_EXPECTS(data_.m() == extents_.m() && data_.n() == extents_.n() && data_.p() == window_.count,
                  "transformed: stored slices of shape " + data_.shape() + " do not fit the tensor " + shape());
  }
  slice_window checked(slice_window w) const {
    const std::size_t total = checked_slices();
    TPROD_EXPECTS(w.total == total && w.first <= total && w.count <= total - w.first,
                  "transformed: the slice window " + std::to_string(w.first) + " + " + std::to_string(w.count) +
                      " of " + std::to_string(w.total) + " does not lie in the " + std::to_string(total) +
                      " stored slices of the tensor " + shape());
    return w;
  }

  Extents extents_;
  L policy_;
  slice_window window_;
  data_type data_;
};

/// @brief Writes Â = L(A) into an existing transform-domain tensor of A's shape and space (no allocation), with
/// L the output's transform, run as `ex` says (host: path and threads; device: stream and precision). Real A is
/// promoted to complex first when L's Z is complex.
/// @throws shape_error when the shapes differ or L cannot act on A's tubes.
template <any_tensor3 A, scalar T, transform_policy L, extents3_type E, memory_space S>
void transform_into(const detail::execution_of<space_of<A>>& ex, const A& a, transformed<T, L, E, S>& out) {
  detail::static_check_same_space<space_of<A>, S>();
  using T0 = value_type_of<A>;
  static_assert(std::same_as<T, typename L::template original_scalar<T0>>,
                "tprod::transform_into: the output's scalar must be the input's, promoted by the transform");
  static_assert(extents_compatible(extents_of<A>::static_extent(2), L::static_size),
                "tprod::transform: the tensor's fixed tube count differs from the transform's fixed size");
  const auto av = cview(a);
  TPROD_EXPECTS(av.extents() == out.extents(),
                "transform_into: the input is " + av.shape() + " but the output is " + out.shape());
  const auto sys = detail::system_of<S>(ex);
  const detail::execution_scope_of<S> scope(ex);
  if constexpr (std::same_as<T, T0>) {
    forward(sys, out.transform(), tensor3_view<const T, dextents3, S>(av), out.data().dynamic_view());
  } else {
    const auto promoted = tensor3<T, dextents3, S>(av);  // real → complex for a complex Z
    forward(sys, out.transform(), promoted.dynamic_view(), out.data().dynamic_view());
  }
}
/// @brief transform_into on the calling thread's default execution.
template <any_tensor3 A, scalar T, transform_policy L, extents3_type E, memory_space S>
void transform_into(const A& a, transformed<T, L, E, S>& out) {
  transform_into(detail::default_execution_of<space_of<A>>(), a, out);
}

/// @brief Â = L(A) = A ×₃ Z as a new transform-domain tensor in A's memory space, run as `ex` says. Peak memory
/// beyond A: Â (and a promoted copy of A under a complex Z for real A). Real A is promoted to complex
/// first when L's Z is complex.
/// @throws shape_error when L cannot act on A's tubes (a matrix_transform of another size).
template <any_tensor3 A, transform_policy L>
auto transform(const detail::execution_of<space_of<A>>& ex, const A& a, const L& policy) {
  const detail::execution_scope_of<space_of<A>> scope(ex);
  transformed<typename L::template original_scalar<value_type_of<A>>, L, extents_of<A>, space_of<A>> out(
      cview(a).extents(), policy, uninitialized);
  transform_into(ex, a, out);
  return out;
}
/// @brief Â = L(A) on the calling thread's default execution.
template <any_tensor3 A, transform_policy L>
auto transform(const A& a, const L& policy) {
  return transform(detail::default_execution_of<space_of<A>>(), a, policy);
}

/// @brief Â = L(A) for a tensor the caller gives up: transformed in place where the backend can (on the CPU: real
/// tensors under the DCT, the identity and real Z on the GEMM path; complex ones under any L but FFTW), so the
/// peak memory is A's (plus blocks of 2¹⁶ elements per thread); otherwise as transform(ex, a, policy).
template <scalar T, extents3_type E, memory_space S, transform_policy L>
auto transform(const detail::execution_of<S>& ex, tensor3<T, E, S>&& a, const L& policy) {
  using Out = transformed<typename L::template original_scalar<T>, L, E, S>;
  if constexpr (std::same_as<typename L::template original_scalar<T>, T> &&
                std::same_as<typename L::template domain_scalar<T>, T>) {
    policy.check_size(a.p());
    if (transform_in_place(detail::system_of<S>(ex), policy, a.dynamic_view(), true)) {
      const E extents = a.extents();
      return Out(extents, policy, tensor3<T, dextents3, S>(std::move(a)));
    }
  }
  return transform(ex, static_cast<const tensor3<T, E, S>&>(a), policy);
}
template <scalar T, extents3_type E, memory_space S, transform_policy L>
auto transform(tensor3<T, E, S>&& a, const L& policy) {
  return transform(detail::default_execution_of<S>(), std::move(a), policy);
}

/// @brief Writes A = L⁻¹(Â) into an existing tensor of the original shape, in Â's space (no allocation).
/// @throws shape_error when the shapes differ.
template <scalar T, transform_policy L, extents3_type E, memory_space S, any_tensor3 Out>
void inverse_transform_into(const detail::execution_of<S>& ex, const transformed<T, L, E, S>& ahat, Out&& a) {
  detail::static_check_same_space<S, space_of<Out>>();
  static_assert(std::same_as<value_type_of<Out>, T>,
                "tprod::inverse_transform_into: the output's scalar must be the transformed tensor's original scalar");
  const tensor3_view<T, dextents3, S> out = a.view();
  TPROD_EXPECTS(out.extents() == ahat.extents(),
                "inverse_transform_into: the input is " + ahat.shape() + " but the output is " + out.shape());
  TPROD_EXPECTS(ahat.window().holds_every_slice(),
                "inverse_transform: the " + ahat.shape() + " tensor holds only stored slices " +
                    std::to_string(ahat.window().first) + " + " + std::to_string(ahat.window().count) + " of " +
                    std::to_string(ahat.window().total) + " here; its tubes need every slice (distributed::" +
                    "inverse_transform exchanges them)");
  inverse(detail::system_of<S>(ex), ahat.transform(), ahat.data().dynamic_view(), out);
}
template <scalar T, transform_policy L, extents3_type E, memory_space S, any_tensor3 Out>
void inverse_transform_into(const transformed<T, L, E, S>& ahat, Out&& a) {
  inverse_transform_into(detail::default_execution_of<S>(), ahat, std::forward<Out>(a));
}

/// @brief A = L⁻¹(Â), back in the original domain (in Â's memory space), run as `ex` says.
template <scalar T, transform_policy L, extents3_type E, memory_space S>
tensor3<T, E, S> inverse_transform(const detail::execution_of<S>& ex, const transformed<T, L, E, S>& ahat) {
  const detail::execution_scope_of<S> scope(ex);
  tensor3<T, E, S> a(ahat.extents(), uninitialized);
  inverse_transform_into(ex, ahat, a);
  return a;
}
template <scalar T, transform_policy L, extents3_type E, memory_space S>
tensor3<T, E, S> inverse_transform(const transformed<T, L, E, S>& ahat) {
  return inverse_transform(detail::default_execution_of<S>(), ahat);
}

/// @brief A = L⁻¹(Â) for a transform-domain tensor the caller gives up: in place where the backend can (peak
/// memory Â's), otherwise as inverse_transform(ex, ahat).
template <scalar T, transform_policy L, memory_space S>
tensor3<T, dextents3, S> inverse_transform(const detail::execution_of<S>& ex, transformed<T, L, dextents3, S>&& ahat) {
  if constexpr (std::same_as<typename L::template domain_scalar<T>, T>) {
    if (ahat.stored_slices() == ahat.p()) {
      const L policy = ahat.transform();
      tensor3<T, dextents3, S> a = std::move(ahat).release();
      if (transform_in_place(detail::system_of<S>(ex), policy, a.dynamic_view(), false)) return a;
      ahat = transformed<T, L, dextents3, S>(a.extents(), policy, std::move(a));  // not in place: give it back
    }
  }
  return inverse_transform(ex, static_cast<const transformed<T, L, dextents3, S>&>(ahat));
}
template <scalar T, transform_policy L, memory_space S>
tensor3<T, dextents3, S> inverse_transform(transformed<T, L, dextents3, S>&& ahat) {
  return inverse_transform(detail::default_execution_of<S>(), std::move(ahat));
}

}  // namespace tprod
