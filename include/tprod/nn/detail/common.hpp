// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file common.hpp
/// @brief Internals shared by the nn layers: buffer reuse, strided block maps, and the transform along the
/// tubes together with its adjoint (what backpropagation through L and L⁻¹ needs).
#include <Eigen/Core>
#include <cmath>
#include <string>

#include "tprod/core/error.hpp"
#include "tprod/core/tensor3.hpp"
#include "tprod/nn/nn_concepts.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/backend/kernels/transform.hpp"

namespace tprod::nn::detail {

template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
/// A column-major block with an outer stride: a head's rows/columns inside a slice.
template <class T>
using block_map = Eigen::Map<matrix<T>, 0, Eigen::OuterStride<>>;
template <class T>
using const_block_map = Eigen::Map<const matrix<T>, 0, Eigen::OuterStride<>>;

/// @brief Gives t the shape m×n×p, keeping its storage (and contents) when it already has that shape, so
/// that layers called again on same-sized batches allocate nothing. A new tensor is left uninitialized: every
/// caller overwrites all of it.
template <class T, class S>
void ensure_shape(tensor3<T, dextents3, S>& t, std::size_t m, std::size_t n, std::size_t p) {
  if (t.m() != m || t.n() != n || t.p() != p) t = tensor3<T, dextents3, S>(m, n, p, uninitialized);
}
template <class T, class S>
void ensure_shape_like(tensor3<T, dextents3, S>& t, const tensor3<T, dextents3, S>& like) {
  ensure_shape(t, like.m(), like.n(), like.p());
}

/// @brief t's values on the host: t itself where it lives there (no copy, so bind the result by value when t is a
/// temporary), else a host copy, which waits for the stream (small tensors, files).
template <class T>
const tensor3<T>& on_host(const tensor3<T>& t) {
  return t;
}
template <class T, class S>
  requires(!std::same_as<S, host_space>)
tensor3<T> on_host(const tensor3<T, dextents3, S>& t) {
  return copy(t, host_space{});
}

template <class T>
std::size_t bytes_of(const tensor3<T>& t) {
  return t.size() * sizeof(T);
}

// The tube maps below run in the views' memory space S (given explicitly: host_space by default), through the
// backend's transform, scale and mode-product tasks.
template <class T, memory_space S>
using view_in = tensor3_view<T, dextents3, S>;

/// @brief The backend's passes, unrecorded (the adjoints below reuse them).
template <class T, memory_space S = host_space, class L>
void apply_forward(const L& l, view_in<const T, S> in, view_in<T, S> out) {
  forward(tprod::detail::system_of<S>(), l, in, out);
}
template <class T, memory_space S = host_space, class L>
void apply_inverse(const L& l, view_in<const T, S> in, view_in<T, S> out) {
  inverse(tprod::detail::system_of<S>(), l, in, out);
}
template <class T, memory_space S>
view_in<const T, S> const_view(view_in<T, S> v) {
  return {v.data(), v.m(), v.n(), v.p()};
}

/// @brief A trained transform (learned_transform<T, S>, learned_transform.hpp) trains in its memory space: the layers
/// that apply it must compute in the same one.
template <class T, memory_space S, class L>
constexpr void static_check_trained_in_space() {
  if constexpr (requires { typename L::memory_space_type; })
    static_assert(!trained_transform<L, T> || std::same_as<S, typename L::memory_space_type>,
                  "tprod::nn: a learned transform (nn::learned_transform<T, S>) trains in its memory space S: build "
                  "this model in the same space (learned_transform<T, device_space> for a model on the device)");
}

// The four maps below report to a trained transform (learned_transform.hpp) what its gradient needs: each pass's
// original-domain value in the forward pass, and the transform-domain gradient where its adjoint is applied.

/// @brief out = L(in) = in ×₃ Z (views of equal shape).
template <class T, memory_space S = host_space, class L>
void to_transform(const L& l, view_in<const T, S> in, view_in<T, S> out) {
  static_check_trained_in_space<T, S, L>();
  if constexpr (trained_transform<L, T>) l.record_pass(false, in);  // before: out may be in's memory
  apply_forward<T, S>(l, in, out);
}
/// @brief out = L⁻¹(in) = in ×₃ Z⁻¹.
template <class T, memory_space S = host_space, class L>
void from_transform(const L& l, view_in<const T, S> in, view_in<T, S> out) {
  static_check_trained_in_space<T, S, L>();
  apply_inverse<T, S>(l, in, out);
  if constexpr (trained_transform<L, T>) l.record_pass(true, const_view<T, S>(out));
}

/// @brief out = in ×₃ Zᵀ, the adjoint of L: the gradient of a loss with respect to A when Â = L(A) and `in`
/// is its gradient with respect to Â.
///
/// When ZᵀZ = I/c (an orthogonal Z times a scalar, which `norm_scale` reports as c) this is L⁻¹(in)/c;
/// a general real Z (matrix_transform) is applied explicitly.
template <class T, memory_space S = host_space, class L>
void transform_adjoint(const L& l, view_in<const T, S> in, view_in<T, S> out) {
  static_check_trained_in_space<T, S, L>();
  if constexpr (trained_transform<L, T>) l.backward_pass(false, in);  // before: out may be in's memory
  const auto sys = tprod::detail::system_of<S>();
  if (const auto c = l.norm_scale(in.p())) {
    apply_inverse<T, S>(l, in, out);
    if (*c != 1.0) scale(sys, T(1.0 / *c), out);
    return;
  }
  if constexpr (requires { l.matrix(); }) {
    multiply_mode(sys, 2, in, matrix<T>(l.matrix().transpose().template cast<T>()), out);  // tubes ← Zᵀ·tubes
  } else {
    throw numerical_error(std::string("nn: the adjoint of the ") + std::string(L::name()) +
                          " transform is not available (it is neither orthogonal nor a matrix_transform)");
  }
}
/// @brief out = in ×₃ Z⁻ᵀ, the adjoint of L⁻¹ (c·L(in) when ZᵀZ = I/c).
template <class T, memory_space S = host_space, class L>
void inverse_transform_adjoint(const L& l, view_in<const T, S> in, view_in<T, S> out) {
  static_check_trained_in_space<T, S, L>();
  const auto sys = tprod::detail::system_of<S>();
  if (const auto c = l.norm_scale(in.p())) {
    apply_forward<T, S>(l, in, out);
    if (*c != 1.0) scale(sys, T(*c), out);
  } else if constexpr (requires { l.inverse_matrix(); }) {
    multiply_mode(sys, 2, in, matrix<T>(l.inverse_matrix().transpose().template cast<T>()), out);  // Z⁻ᵀ·tubes
  } else {
    throw numerical_error(std::string("nn: the adjoint of the inverse ") + std::string(L::name()) +
                          " transform is not available (it is neither orthogonal nor a matrix_transform)");
  }
  if constexpr (trained_transform<L, T>) l.backward_pass(true, const_view<T, S>(out));
}

// The same four maps on whole tensors, shaping `out` like `in`.
template <class T, class S, class L>
void to_transform(const L& l, const tensor3<T, dextents3, S>& in, tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, in);
  to_transform<T, S>(l, in.dynamic_view(), out.dynamic_view());
}
template <class T, class S, class L>
void from_transform(const L& l, const tensor3<T, dextents3, S>& in, tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, in);
  from_transform<T, S>(l, in.dynamic_view(), out.dynamic_view());
}
template <class T, class S, class L>
void transform_adjoint(const L& l, const tensor3<T, dextents3, S>& in, tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, in);
  transform_adjoint<T, S>(l, in.dynamic_view(), out.dynamic_view());
}
template <class T, class S, class L>
void inverse_transform_adjoint(const L& l, const tensor3<T, dextents3, S>& in, tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, in);
  inverse_transform_adjoint<T, S>(l, in.dynamic_view(), out.dynamic_view());
}

/// @brief The four tube maps of a transform (L, L⁻¹ and their adjoints) in memory space S behind function pointers,
/// so that the layers' kernels are compiled once per scalar type rather than once per (scalar, transform) pair.
/// Holds a pointer to the policy: it must outlive the transform_passes.
template <class T, memory_space S = host_space>
struct transform_passes {
  using view = view_in<T, S>;
  using cview = view_in<const T, S>;
  using tensor = tensor3<T, dextents3, S>;
  using fn = void (*)(const void*, cview, view);
  const void* policy;
  fn forward_, inverse_, adjoint_, inverse_adjoint_;

  void forward(cview in, view out) const { forward_(policy, in, out); }                  ///< ×₃ Z
  void inverse(cview in, view out) const { inverse_(policy, in, out); }                  ///< ×₃ Z⁻¹
  void adjoint(cview in, view out) const { adjoint_(policy, in, out); }                  ///< ×₃ Zᵀ
  void inverse_adjoint(cview in, view out) const { inverse_adjoint_(policy, in, out); }  ///< ×₃ Z⁻ᵀ

  // Whole-tensor forms, shaping `out` like `in`.
  void forward(const tensor& in, tensor& out) const {
    ensure_shape_like(out, in);
    forward(in.dynamic_view(), out.dynamic_view());
  }
  void inverse(const tensor& in, tensor& out) const {
    ensure_shape_like(out, in);
    inverse(in.dynamic_view(), out.dynamic_view());
  }
  void adjoint(const tensor& in, tensor& out) const {
    ensure_shape_like(out, in);
    adjoint(in.dynamic_view(), out.dynamic_view());
  }
  void inverse_adjoint(const tensor& in, tensor& out) const {
    ensure_shape_like(out, in);
    inverse_adjoint(in.dynamic_view(), out.dynamic_view());
  }
};

template <class T, memory_space S = host_space, class L>
transform_passes<T, S> transform_passes_of(const L& l) {
  using cview = view_in<const T, S>;
  using view = view_in<T, S>;
  return {&l, [](const void* p, cview in, view out) { to_transform<T, S>(*static_cast<const L*>(p), in, out); },
          [](const void* p, cview in, view out) { from_transform<T, S>(*static_cast<const L*>(p), in, out); },
          [](const void* p, cview in, view out) { transform_adjoint<T, S>(*static_cast<const L*>(p), in, out); },
          [](const void* p, cview in, view out) {
            inverse_transform_adjoint<T, S>(*static_cast<const L*>(p), in, out);
          }};
}

/// @brief a += b elementwise (same shapes), in their memory space.
template <class T, class S>
void add_into(tensor3<T, dextents3, S>& a, const tensor3<T, dextents3, S>& b) {
  axpy(tprod::detail::system_of<S>(), T(1), b.dynamic_view(), a.dynamic_view());
}

/// @brief out = a + b elementwise (out may be neither a nor b).
template <class T, class S>
void add_to(const tensor3<T, dextents3, S>& a, const tensor3<T, dextents3, S>& b, tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, a);
  const auto sys = tprod::detail::system_of<S>();
  copy(sys, a.dynamic_view(), out.dynamic_view());
  axpy(sys, T(1), b.dynamic_view(), out.dynamic_view());
}

/// @brief out = a (shaped like a), in their memory space.
template <class T, class S>
void copy_into(const tensor3<T, dextents3, S>& a, tensor3<T, dextents3, S>& out) {
  ensure_shape_like(out, a);
  copy(tprod::detail::system_of<S>(), a.dynamic_view(), out.dynamic_view());
}

}  // namespace tprod::nn::detail
