#pragma once
/// @file tensor3.hpp
/// @brief tensor3<T, Extents, Space>: an owning third-order tensor A ∈ T^{m×n×p}.
///
/// Elements are stored as in tensor3_view (frontal slices contiguous, column-major inside a slice).
/// Storage is always on the heap (64-byte aligned, large blocks recycled per thread: see detail/buffer.hpp);
/// fixed extents give compile-time shape checks, not stack storage.
#include <Eigen/Core>
#include <concepts>
#include <initializer_list>
#include <utility>

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

/// @brief An owning third-order tensor.
/// @tparam T      float, double, std::complex<float> or std::complex<double>.
/// @tparam Extents extents3<M, N, P>, each fixed or dynamic_extent (default: all dynamic).
/// @tparam Space  host_space (device_space is reserved for the CUDA backend).
template <scalar T, extents3_type Extents = dextents3, memory_space Space = host_space>
class tensor3 {
  static_assert(std::same_as<Space, host_space>,
                "tensor3's Space parameter must be host_space unless the CUDA backend (tprod/cuda.hpp) is used");

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
  explicit tensor3(const Extents& extents) : extents_(extents), storage_(extents.size()) { elements().setZero(); }
  /// @brief A zero-filled m×n×p tensor. @throws shape_error if it contradicts a fixed extent.
  tensor3(std::size_t m, std::size_t n, std::size_t p) : tensor3(Extents(m, n, p)) {}
  /// @brief A tensor whose elements are left uninitialized; every element must be written before it is read.
  tensor3(const Extents& extents, uninitialized_t) : extents_(extents), storage_(extents.size()) {}
  tensor3(std::size_t m, std::size_t n, std::size_t p, uninitialized_t) : tensor3(Extents(m, n, p), uninitialized) {}

  /// @brief A copy of a view or of another tensor with compatible extents (checked at run time where needed).
  template <class U, class E2>
    requires std::constructible_from<Extents, E2>
  explicit tensor3(const tensor3_view<U, E2>& v) : extents_(v.extents()), storage_(v.size()) {
    std::copy(v.data(), v.data() + v.size(), storage_.data());
  }
  template <class E2>
    requires(!std::same_as<E2, Extents> && std::constructible_from<Extents, E2>)
  tensor3(const tensor3<T, E2, Space>& other) : tensor3(other.view()) {}

  /// @brief Stacks p equally sized m×n matrices as frontal slices 0…p−1.
  /// @throws shape_error when the slices differ in size or contradict a fixed extent.
  static tensor3 from_slices(std::initializer_list<matrix_type> slices) {
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
  std::size_t m() const { return extents_.m(); }
  std::size_t n() const { return extents_.n(); }
  std::size_t p() const { return extents_.p(); }
  std::size_t size() const { return extents_.size(); }
  std::string shape() const { return extents_.to_string(); }
  T* data() { return storage_.data(); }
  const T* data() const { return storage_.data(); }

  view_type view() { return view_type(data(), extents_); }
  const_view_type view() const { return const_view_type(data(), extents_); }
  operator view_type() { return view(); }
  operator const_view_type() const { return view(); }

  T& operator()(std::size_t i, std::size_t j, std::size_t k) { return view()(i, j, k); }
  const T& operator()(std::size_t i, std::size_t j, std::size_t k) const { return view()(i, j, k); }
  typename view_type::slice_map slice(std::size_t k) { return view().slice(k); }
  typename const_view_type::slice_map slice(std::size_t k) const { return view().slice(k); }
  typename view_type::slice_map unfold_tubes() { return view().unfold_tubes(); }
  typename const_view_type::slice_map unfold_tubes() const { return view().unfold_tubes(); }
  typename view_type::tube_map tube(std::size_t i, std::size_t j) { return view().tube(i, j); }
  typename const_view_type::tube_map tube(std::size_t i, std::size_t j) const { return view().tube(i, j); }

  /// @brief All elements as one contiguous Eigen vector (for elementwise arithmetic and norms).
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> elements() { return {data(), Eigen::Index(size())}; }
  Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> elements() const { return {data(), Eigen::Index(size())}; }

  tensor3& operator+=(const tensor3& b) { return combine(b, "+=", [](auto& x, const auto& y) { x += y; }); }
  tensor3& operator-=(const tensor3& b) { return combine(b, "-=", [](auto& x, const auto& y) { x -= y; }); }
  tensor3& operator*=(const T& s) { elements() *= s; return *this; }
  friend tensor3 operator+(tensor3 a, const tensor3& b) { return a += b; }
  friend tensor3 operator-(tensor3 a, const tensor3& b) { return a -= b; }
  friend tensor3 operator-(tensor3 a) { a.elements() = -a.elements(); return a; }
  friend tensor3 operator*(const T& s, tensor3 a) { return a *= s; }
  friend tensor3 operator*(tensor3 a, const T& s) { return a *= s; }

 private:
  template <class Op>
  tensor3& combine(const tensor3& b, const char* op, Op apply) {
    TPROD_EXPECTS(extents_ == b.extents_, std::string("tensor3 ") + op + ": shapes " + shape() + " and " +
                                              b.shape() + " differ");
    auto mine = elements();
    apply(mine, b.elements());
    return *this;
  }

  Extents extents_;
  detail::buffer<T> storage_;
};

template <class X> struct is_tensor3 : std::false_type {};
template <class T, class E> struct is_tensor3<tensor3<T, E, host_space>> : std::true_type {};
template <class T, class E> struct is_tensor3<tensor3_view<T, E, host_space>> : std::true_type {};

/// @brief A host tensor3 or tensor3_view: anything the CPU algebra reads (`.view()` gives a tensor3_view).
template <class X>
concept host_tensor3 = is_tensor3<std::remove_cvref_t<X>>::value;

/// @brief The element type and the extents of a host_tensor3.
template <host_tensor3 X> using value_type_of = std::remove_cv_t<typename std::remove_cvref_t<X>::value_type>;
template <host_tensor3 X> using extents_of = typename std::remove_cvref_t<X>::extents_type;

/// @brief A read-only view of any host_tensor3.
template <host_tensor3 X>
tensor3_view<const value_type_of<X>, extents_of<X>> cview(const X& x) { return x.view(); }

}  // namespace tprod
