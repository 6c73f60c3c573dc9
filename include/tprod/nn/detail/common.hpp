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
#include "tprod/backend/cpu/transform.hpp"

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
template <class T>
void ensure_shape(tensor3<T>& t, std::size_t m, std::size_t n, std::size_t p) {
  if (t.m() != m || t.n() != n || t.p() != p) t = tensor3<T>(m, n, p, uninitialized);
}
template <class T>
void ensure_shape_like(tensor3<T>& t, const tensor3<T>& like) {
  ensure_shape(t, like.m(), like.n(), like.p());
}

/// @brief Threads for a slice-parallel elementwise pass over t: one below about 32K elements, where starting
/// the threads costs more than the pass.
template <class T>
std::size_t elementwise_threads(const tensor3<T>& t) {
  return t.size() < backend::cpu::parallel_min_elements ? 1 : default_execution().thread_count();
}

template <class T>
std::size_t bytes_of(const tensor3<T>& t) {
  return t.size() * sizeof(T);
}

inline std::string dims(std::size_t m, std::size_t n, std::size_t p) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(p);
}

/// @brief The backend's passes, unrecorded (the adjoints below reuse them).
template <class T, class L>
void apply_forward(const L& l, tensor3_view<const T> in, tensor3_view<T> out) {
  backend::cpu::forward<T>(l, in, out, default_execution());
}
template <class T, class L>
void apply_inverse(const L& l, tensor3_view<const T> in, tensor3_view<T> out) {
  backend::cpu::inverse<T>(l, in, out, default_execution());
}
template <class T>
tensor3_view<const T> const_view(tensor3_view<T> v) {
  return {v.data(), v.m(), v.n(), v.p()};
}

// The four maps below report to a trained transform (learned_transform.hpp) what its gradient needs: each pass's
// original-domain value in the forward pass, and the transform-domain gradient where its adjoint is applied.

/// @brief out = L(in) = in ×₃ Z (views of equal shape).
template <class T, class L>
void to_transform(const L& l, tensor3_view<const T> in, tensor3_view<T> out) {
  if constexpr (trained_transform<L, T>) l.record_pass(false, in);  // before: out may be in's memory
  apply_forward<T>(l, in, out);
}
/// @brief out = L⁻¹(in) = in ×₃ Z⁻¹.
template <class T, class L>
void from_transform(const L& l, tensor3_view<const T> in, tensor3_view<T> out) {
  apply_inverse<T>(l, in, out);
  if constexpr (trained_transform<L, T>) l.record_pass(true, const_view(out));
}

/// @brief out = in ×₃ Zᵀ, the adjoint of L: the gradient of a loss with respect to A when Â = L(A) and `in`
/// is its gradient with respect to Â.
///
/// When ZᵀZ = I/c (an orthogonal Z times a scalar, which `norm_scale` reports as c) this is L⁻¹(in)/c;
/// a general real Z (matrix_transform) is applied explicitly.
template <class T, class L>
void transform_adjoint(const L& l, tensor3_view<const T> in, tensor3_view<T> out) {
  if constexpr (trained_transform<L, T>) l.backward_pass(false, in);  // before: out may be in's memory
  const auto c = l.norm_scale(in.p());
  if (c) {
    apply_inverse<T>(l, in, out);
    if (*c != 1.0) Eigen::Map<vector<T>>(out.data(), Eigen::Index(out.size())) *= T(1.0 / *c);
    return;
  }
  if constexpr (requires { l.matrix(); }) {
    backend::cpu::apply_along_tubes(in, matrix<T>(l.matrix().template cast<T>()), out, default_execution().thread_count());
  } else {
    throw numerical_error(std::string("nn: the adjoint of the ") + std::string(L::name()) +
                          " transform is not available (it is neither orthogonal nor a matrix_transform)");
  }
}
/// @brief out = in ×₃ Z⁻ᵀ, the adjoint of L⁻¹ (c·L(in) when ZᵀZ = I/c).
template <class T, class L>
void inverse_transform_adjoint(const L& l, tensor3_view<const T> in, tensor3_view<T> out) {
  const auto c = l.norm_scale(in.p());
  if (c) {
    apply_forward<T>(l, in, out);
    if (*c != 1.0) Eigen::Map<vector<T>>(out.data(), Eigen::Index(out.size())) *= T(*c);
  } else if constexpr (requires { l.inverse_matrix(); }) {
    backend::cpu::apply_along_tubes(in, matrix<T>(l.inverse_matrix().template cast<T>()), out, default_execution().thread_count());
  } else {
    throw numerical_error(std::string("nn: the adjoint of the inverse ") + std::string(L::name()) +
                          " transform is not available (it is neither orthogonal nor a matrix_transform)");
  }
  if constexpr (trained_transform<L, T>) l.backward_pass(true, const_view(out));
}

// The same four maps on whole tensors, shaping `out` like `in`.
template <class T, class L>
void to_transform(const L& l, const tensor3<T>& in, tensor3<T>& out) {
  ensure_shape_like(out, in);
  to_transform<T>(l, in.view(), out.view());
}
template <class T, class L>
void from_transform(const L& l, const tensor3<T>& in, tensor3<T>& out) {
  ensure_shape_like(out, in);
  from_transform<T>(l, in.view(), out.view());
}
template <class T, class L>
void transform_adjoint(const L& l, const tensor3<T>& in, tensor3<T>& out) {
  ensure_shape_like(out, in);
  transform_adjoint<T>(l, in.view(), out.view());
}
template <class T, class L>
void inverse_transform_adjoint(const L& l, const tensor3<T>& in, tensor3<T>& out) {
  ensure_shape_like(out, in);
  inverse_transform_adjoint<T>(l, in.view(), out.view());
}

/// @brief The four tube maps of a transform (L, L⁻¹ and their adjoints) behind function pointers, so that the
/// layers' kernels are compiled once per scalar type rather than once per (scalar, transform) pair.
/// Holds a pointer to the policy: it must outlive the tube_maps.
template <class T>
struct tube_maps {
  using view = tensor3_view<T>;
  using cview = tensor3_view<const T>;
  using fn = void (*)(const void*, cview, view);
  const void* policy;
  fn forward_, inverse_, adjoint_, inverse_adjoint_;

  void forward(cview in, view out) const { forward_(policy, in, out); }                  ///< ×₃ Z
  void inverse(cview in, view out) const { inverse_(policy, in, out); }                  ///< ×₃ Z⁻¹
  void adjoint(cview in, view out) const { adjoint_(policy, in, out); }                  ///< ×₃ Zᵀ
  void inverse_adjoint(cview in, view out) const { inverse_adjoint_(policy, in, out); }  ///< ×₃ Z⁻ᵀ

  // Whole-tensor forms, shaping `out` like `in`.
  void forward(const tensor3<T>& in, tensor3<T>& out) const {
    ensure_shape_like(out, in);
    forward(in.view(), out.view());
  }
  void inverse(const tensor3<T>& in, tensor3<T>& out) const {
    ensure_shape_like(out, in);
    inverse(in.view(), out.view());
  }
  void adjoint(const tensor3<T>& in, tensor3<T>& out) const {
    ensure_shape_like(out, in);
    adjoint(in.view(), out.view());
  }
  void inverse_adjoint(const tensor3<T>& in, tensor3<T>& out) const {
    ensure_shape_like(out, in);
    inverse_adjoint(in.view(), out.view());
  }
};

template <class T, class L>
tube_maps<T> tube_maps_of(const L& l) {
  using cview = tensor3_view<const T>;
  using view = tensor3_view<T>;
  return {&l, [](const void* p, cview in, view out) { to_transform<T>(*static_cast<const L*>(p), in, out); },
          [](const void* p, cview in, view out) { from_transform<T>(*static_cast<const L*>(p), in, out); },
          [](const void* p, cview in, view out) { transform_adjoint<T>(*static_cast<const L*>(p), in, out); },
          [](const void* p, cview in, view out) { inverse_transform_adjoint<T>(*static_cast<const L*>(p), in, out); }};
}

/// @brief a += b elementwise (same shapes).
template <class T>
void add_into(tensor3<T>& a, const tensor3<T>& b) {
  a.elements() += b.elements();
}

/// @brief out = a + b elementwise.
template <class T>
void add_to(const tensor3<T>& a, const tensor3<T>& b, tensor3<T>& out) {
  ensure_shape_like(out, a);
  out.elements() = a.elements() + b.elements();
}

}  // namespace tprod::nn::detail
