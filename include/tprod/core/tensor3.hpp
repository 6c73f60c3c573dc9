// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file tensor3.hpp
/// @brief tensor3<T, Extents, Space>: an owning third-order tensor A ∈ T^{m×n×p} in host or device memory.
///
/// Elements are stored as in tensor3_view (frontal slices contiguous, column-major inside a slice).
/// Storage follows the memory space: host tensors hold a 64-byte aligned heap block (large blocks recycled per
/// thread: see detail/buffer.hpp), device tensors a stream-ordered GPU allocation (backend/cuda/device_buffer.hpp,
/// through tprod/cuda.hpp). Fixed extents give compile-time shape checks, not stack storage.
///
/// Element access and the Eigen maps exist only on the host. Arithmetic (+=, −=, *=, unary −) runs through the
/// space's backend tasks. Copies between spaces are explicit (tprod::to_device, tprod::to_host, tprod::copy).
#include <Eigen/Core>
#include <concepts>
#include <initializer_list>
#include <utility>

#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/core/detail/buffer.hpp"
#include "tprod/core/error.hpp"
#include "tprod/core/extents.hpp"
#include "tprod/core/memory_space.hpp"
#include "tprod/core/scalar.hpp"
#include "tprod/core/tensor3_view.hpp"

namespace tprod {

/// @brief Tag asking a constructor to leave the elements uninitialized (for outputs that are overwritten anyway).
struct uninitialized_t {
  explicit constexpr uninitialized_t() = default;
};
inline constexpr uninitialized_t uninitialized{};

namespace detail {
/// @brief The owning element storage of a memory space: `type` has a constructor from an element count, deep
/// copies, moves, data() and size(). The device's is specialized by the CUDA backend.
template <class T, memory_space Space>
struct storage_for;
template <class T>
struct storage_for<T, host_space> {
  using type = buffer<T>;
};
template <class...>
inline constexpr bool dependent_false = false;
}  // namespace detail

/// @brief An owning third-order tensor.
/// @tparam T      float, double, std::complex<float> or std::complex<double>.
/// @tparam Extents extents3<M, N, P>, each fixed or dynamic_extent (default: all dynamic).
/// @tparam Space  host_space (default) or device_space (include tprod/cuda.hpp and link tprod::cuda).
template <scalar T, extents3_type Extents = dextents3, memory_space Space = host_space>
class tensor3 {
  static constexpr bool on_host = std::same_as<Space, host_space>;
  static auto system() { return detail::system_of<Space>(); }

 public:
  using value_type = T;
  using extents_type = Extents;
  using memory_space_type = Space;
  using view_type = tensor3_view<T, Extents, Space>;
  using const_view_type = tensor3_view<const T, Extents, Space>;
  using matrix_type = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

  /// @brief The fixed shape, or 0×0×0 where an extent is dynamic; zero-filled.
  tensor3() : tensor3(Extents{}) {}
  /// @brief A zero-filled tensor of the given shape.
  explicit tensor3(const Extents& extents) : extents_(extents), storage_(extents.size()) { fill(system(), dynamic_view(), T(0)); }
  /// @brief A zero-filled m×n×p tensor. @throws shape_error if it contradicts a fixed extent.
  tensor3(std::size_t m, std::size_t n, std::size_t p) : tensor3(Extents(m, n, p)) {}
  /// @brief A tensor whose elements are left uninitialized; every element must be written before it is read.
  tensor3(const Extents& extents, uninitialized_t) : extents_(extents), storage_(extents.size()) {}
  tensor3(std::size_t m, std::size_t n, std::size_t p, uninitialized_t) : tensor3(Extents(m, n, p), uninitialized) {}

  /// @brief A copy of a view (of the same space) or of another tensor with compatible extents (checked at run
  /// time where needed), converting the scalar where U differs (real to complex, say).
  template <class U, class E2>
    requires std::constructible_from<Extents, E2>
  explicit tensor3(const tensor3_view<U, E2, Space>& v) : extents_(v.extents()), storage_(v.size()) {
    convert(system(), tensor3_view<const std::remove_const_t<U>, dextents3, Space>(v), dynamic_view());
  }
  /// @brief Views of the other memory space do not convert implicitly: the copy between spaces is explicit.
  template <class U, class E2, memory_space S2>
    requires(!std::same_as<S2, Space>)
  explicit tensor3(const tensor3_view<U, E2, S2>&) {
    static_assert(detail::dependent_false<S2>, "tprod::tensor3: the view lives in another memory space; copy it "
                                               "explicitly with tprod::to_device(a), tprod::to_host(a) or "
                                               "tprod::copy(a, space)");
  }
  template <class E2>
    requires(!std::same_as<E2, Extents> && std::constructible_from<Extents, E2>)
  tensor3(const tensor3<T, E2, Space>& other) : tensor3(other.view()) {}

  /// @brief Stacks p equally sized m×n matrices as frontal slices 0…p−1.
  /// @throws shape_error when the slices differ in size or contradict a fixed extent.
  static tensor3 from_slices(std::initializer_list<matrix_type> slices)
    requires on_host
  {
    TPROD_EXPECTS(slices.size() > 0, "tensor3::from_slices: at least one slice is needed");
    const auto& first = *slices.begin();
    tensor3 t(std::size_t(first.rows()), std::size_t(first.cols()), slices.size());
    std::size_t k = 0;
    for (const auto& s : slices) {
      TPROD_EXPECTS(s.rows() == first.rows() && s.cols() == first.cols(),
                    "tensor3::from_slices: slice " + std::to_string(k) + " is " + std::to_string(s.rows()) + "x" +
                        std::to_string(s.cols()) + " but slice 0 is " + std::to_string(first.rows()) + "x" +
                        std::to_string(first.cols()));
      t.slice(k++) = s;
    }
    return t;
  }

  const Extents& extents() const { return extents_; }
  std::size_t m() const { return extents_.m(); }  ///< rows (the first extent)
  std::size_t n() const { return extents_.n(); }  ///< columns (the second extent)
  std::size_t p() const { return extents_.p(); }  ///< tube length: the number of frontal slices (the third extent)
  std::size_t size() const { return extents_.size(); }
  std::string shape() const { return extents_.to_string(); }
  T* data() { return storage_.data(); }
  const T* data() const { return storage_.data(); }

  view_type view() { return view_type(data(), extents_); }
  const_view_type view() const { return const_view_type(data(), extents_); }
  /// @brief The view with run-time extents (what the backends' kernel tasks take).
  tensor3_view<T, dextents3, Space> dynamic_view() { return {data(), m(), n(), p()}; }
  tensor3_view<const T, dextents3, Space> dynamic_view() const { return {data(), m(), n(), p()}; }
  operator view_type() { return view(); }
  operator const_view_type() const { return view(); }

  // Host only: element access and Eigen maps (a device pointer never reaches Eigen).
  T& operator()(std::size_t i, std::size_t j, std::size_t k) requires on_host { return view()(i, j, k); }
  const T& operator()(std::size_t i, std::size_t j, std::size_t k) const requires on_host { return view()(i, j, k); }
  auto slice(std::size_t k) requires on_host { return view().slice(k); }
  auto slice(std::size_t k) const requires on_host { return view().slice(k); }
  auto unfold_tubes() requires on_host { return view().unfold_tubes(); }
  auto unfold_tubes() const requires on_host { return view().unfold_tubes(); }
  auto tube(std::size_t i, std::size_t j) requires on_host { return view().tube(i, j); }
  auto tube(std::size_t i, std::size_t j) const requires on_host { return view().tube(i, j); }

  /// @brief All elements as one contiguous Eigen vector (for elementwise arithmetic and norms). Host only.
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> elements() requires on_host { return {data(), Eigen::Index(size())}; }
  Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> elements() const requires on_host {
    return {data(), Eigen::Index(size())};
  }

  tensor3& operator+=(const tensor3& b) { return combine(b, "+=", T(1)); }
  tensor3& operator-=(const tensor3& b) { return combine(b, "-=", T(-1)); }
  tensor3& operator*=(const T& s) { scale(system(), s, dynamic_view()); return *this; }
  friend tensor3 operator+(tensor3 a, const tensor3& b) { return a += b; }
  friend tensor3 operator-(tensor3 a, const tensor3& b) { return a -= b; }
  friend tensor3 operator-(tensor3 a) { return a *= T(-1); }
  friend tensor3 operator*(const T& s, tensor3 a) { return a *= s; }
  friend tensor3 operator*(tensor3 a, const T& s) { return a *= s; }

 private:
  tensor3& combine(const tensor3& b, const char* op, const T& sign) {
    TPROD_EXPECTS(extents_ == b.extents_, std::string("tensor3 ") + op + ": shapes " + shape() + " and " +
                                              b.shape() + " differ");
    axpy(system(), sign, b.dynamic_view(), dynamic_view());
    return *this;
  }

  Extents extents_;
  typename detail::storage_for<T, Space>::type storage_;
};

template <class X> struct is_tensor3 : std::false_type {};
template <class T, class E, class S> struct is_tensor3<tensor3<T, E, S>> : std::true_type {};
template <class T, class E, class S> struct is_tensor3<tensor3_view<T, E, S>> : std::true_type {};

/// @brief A tensor3 or tensor3_view in any memory space (`.view()` gives a tensor3_view).
template <class X>
concept any_tensor3 = is_tensor3<std::remove_cvref_t<X>>::value;

/// @brief The memory space of an any_tensor3.
template <any_tensor3 X> using space_of = typename std::remove_cvref_t<X>::memory_space_type;

/// @brief A host tensor3 or tensor3_view: anything the CPU algebra reads.
template <class X>
concept host_tensor3 = any_tensor3<X> && std::same_as<space_of<X>, host_space>;
/// @brief A device tensor3 or tensor3_view (tprod/cuda.hpp).
template <class X>
concept device_tensor3_like = any_tensor3<X> && std::same_as<space_of<X>, device_space>;

/// @brief The element type and the extents of an any_tensor3.
template <any_tensor3 X> using value_type_of = std::remove_cv_t<typename std::remove_cvref_t<X>::value_type>;
template <any_tensor3 X> using extents_of = typename std::remove_cvref_t<X>::extents_type;

/// @brief A read-only view of any tensor3 or view, in its own memory space.
template <any_tensor3 X>
tensor3_view<const value_type_of<X>, extents_of<X>, space_of<X>> cview(const X& x) { return x.view(); }

/// @brief A device tensor3 (tprod/cuda.hpp).
template <scalar T, extents3_type Extents = dextents3>
using device_tensor3 = tensor3<T, Extents, device_space>;

}  // namespace tprod
