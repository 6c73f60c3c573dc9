// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file ndtensor_in.hpp
/// @brief ndtensor_in<T, S>: an order-N tensor in memory space S — with S = device_space, the device twin of
///        ndtensor (`device_ndtensor<T>`) — and what the decompositions need of it, computed where it lives.
///
/// Layout: the same column-major order as ndtensor (first index fastest), held as a tensor3 of shape size×1×1 in
/// space S, so every backend's tasks apply to it. Mode n of a tensor of shape (I_1, …, I_N) is the middle extent of
/// the (Π_{m<n} I_m)×I_n×(Π_{m>n} I_m) view of the same memory (`around(n)`); every operation of this header is one
/// or two backend tasks on such a view:
///   ‖X‖_F              slice_squared_norms (accumulated in double, as ndtensor's frobenius)
///   X ×_n U            multiply_mode on the view around n (mode 1 of the tensor3)
///   X_(n)              adjoint_slices of the view around n: the I_n×before×after result *is* X_(n)
///   X_(n)·X_(n)ᵀ       facewise of X_(n) and its transpose
///   left singular vectors, energies   svd_slices of X_(n) or of the Gram matrix
/// Factor matrices live in S as well, as I×R×1 tensor3s (`matrix_in<T, S>`).
///
/// With S = host_space the same code runs through the CPU backend: that instantiation is how the device path is
/// tested on machines without a GPU (against the ndtensor functions, which compute with Eigen directly).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tprod/algebra/mode_product.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/backend/kernels/facewise.hpp"
#include "tprod/backend/kernels/mode_product.hpp"
#include "tprod/backend/kernels/slice_factorization.hpp"
#include "tprod/decomp/mode_product.hpp"
#include "tprod/decomp/ndtensor.hpp"

namespace tprod {

/// @brief A matrix in memory space S: an m×n×1 tensor3 (the factor matrices of decompositions of ndtensor_in).
template <real_scalar T, memory_space S>
using matrix_in = tensor3<T, dextents3, S>;

/// @brief An order-N tensor in memory space S, column-major (first index fastest) like ndtensor.
template <real_scalar T, memory_space S>
class ndtensor_in {
 public:
  using value_type = T;
  using memory_space_type = S;

  ndtensor_in() = default;
  /// @brief A zero tensor of the given shape.
  explicit ndtensor_in(nd_shape shape) : shape_(std::move(shape)), elements_(detail::product(shape_), 1, 1) {}
  /// @brief The tensor of the given shape over `elements` (any extents whose size is the shape's, read in order).
  /// @throws shape_error when the sizes differ.
  ndtensor_in(nd_shape shape, tensor3<T, dextents3, S> elements)
      : shape_(std::move(shape)), elements_(std::move(elements)) {
    TPROD_EXPECTS(elements_.size() == detail::product(shape_),
                  "ndtensor_in: " + std::to_string(elements_.size()) + " elements do not fill shape " +
                      shape_string(shape_));
  }

  const nd_shape& shape() const { return shape_; }
  std::size_t order() const { return shape_.size(); }
  std::size_t size() const { return elements_.size(); }
  /// @brief The elements' storage: a tensor3 of any extents of the right size (use `flat` or `around` to view it).
  const tensor3<T, dextents3, S>& elements() const { return elements_; }
  /// @brief All elements in order, as a size×1×1 view.
  tensor3_view<const T, dextents3, S> flat() const { return {elements_.data(), size(), 1, 1}; }
  tensor3_view<T, dextents3, S> flat() { return {elements_.data(), size(), 1, 1}; }
  /// @brief The (Π_{m<n} I_m)×I_n×(Π_{m>n} I_m) view of the elements: mode n in the middle.
  tensor3_view<const T, dextents3, S> around(std::size_t mode) const {
    const auto [before, size, after] = detail::split_at(shape_, mode);
    return {elements_.data(), before, size, after};
  }

 private:
  nd_shape shape_;
  tensor3<T, dextents3, S> elements_;
};

/// @brief The device twin of ndtensor (tprod/cuda.hpp): decompositions of it compute on the GPU.
template <real_scalar T>
using device_ndtensor = ndtensor_in<T, device_space>;

namespace detail {

/// t in memory space To: t itself (moved) when it is there, else a copy (between host and device: tprod/cuda.hpp).
template <memory_space To, class T, memory_space From>
tensor3<T, dextents3, To> in_space(tensor3<T, dextents3, From> t) {
  if constexpr (std::same_as<From, To>)
    return t;
  else
    return copy(t, To{});
}

/// A host Eigen matrix of an m×n×1 matrix_in.
template <class T, memory_space S>
dense_matrix<T> host_matrix(const matrix_in<T, S>& a) {
  const tensor3<T> h = in_space<host_space>(a);
  return h.slice(0);
}

/// An m×n×1 matrix_in of a host Eigen matrix.
template <memory_space S, class T>
matrix_in<T, S> matrix_in_space(const dense_matrix<T>& a) {
  tensor3<T> h(std::size_t(a.rows()), std::size_t(a.cols()), 1, uninitialized);
  h.slice(0) = a;
  return in_space<S>(std::move(h));
}

}  // namespace detail

/// @brief A copy of the host tensor x in memory space S (on the device: one upload).
template <memory_space S, real_scalar T>
ndtensor_in<T, S> copy(const ndtensor<T>& x, S = {}) {
  tensor3<T> h(x.size(), 1, 1, uninitialized);
  std::copy(x.data(), x.data() + x.size(), h.data());
  return ndtensor_in<T, S>(shape_of(x), detail::in_space<S>(std::move(h)));
}

/// @brief A host ndtensor holding x's elements (from the device: one download, ready when the call returns).
template <real_scalar T, memory_space S>
ndtensor<T> to_ndtensor(const ndtensor_in<T, S>& x) {
  const tensor3<T> h = detail::in_space<host_space>(x.elements());
  return from_column_major<T>(x.shape(), h.data(), h.size());
}

/// @brief The shape (I_1, …, I_N).
template <real_scalar T, memory_space S>
nd_shape shape_of(const ndtensor_in<T, S>& x) {
  return x.shape();
}

/// @brief The same elements under another shape of equal size (one copy in S).
/// @throws shape_error when the sizes differ.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> reshaped(const ndtensor_in<T, S>& x, const nd_shape& shape) {
  TPROD_EXPECTS(detail::product(shape) == x.size(), "reshaped: a tensor of shape " + shape_string(x.shape()) +
                                                        " cannot be viewed as shape " + shape_string(shape));
  return ndtensor_in<T, S>(shape, x.elements());
}

/// @brief The tensor with permuted modes, mode k of the result mode perm[k] of x (numpy.transpose), in S: one
///        permute_modes task (on the device at most 16 modes).
/// @throws shape_error unless perm is a permutation of 0…N−1.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> permuted(const ndtensor_in<T, S>& x, const std::vector<std::size_t>& perm) {
  const nd_shape shape = detail::permuted_shape(x.shape(), perm);
  tensor3<T, dextents3, S> out(x.size(), 1, 1, uninitialized);
  permute_modes(detail::system_of<S>(), x.flat(), x.shape(), perm, out.view());
  return ndtensor_in<T, S>(shape, std::move(out));
}

/// @brief The mode-n product Y = X ×_n U with a host matrix U ∈ ℝ^{J×I_n} (Y_(n) = U·X_(n)), where X lives: one
///        backend multiply_mode on the view around n.
/// @throws shape_error when U has not I_n columns, has no rows, or the mode is out of range.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> mode_product(const ndtensor_in<T, S>& x,
                               const std::type_identity_t<Eigen::Ref<const dense_matrix<T>>>& u, std::size_t mode) {
  nd_shape shape = x.shape();
  detail::expect_nonempty(shape, "mode_product");
  detail::expect_mode(mode, shape, "mode_product");
  TPROD_EXPECTS(std::size_t(u.cols()) == shape[mode] && u.rows() > 0,
                "mode_product: a " + shape_string(u) + " matrix cannot multiply mode " + std::to_string(mode) +
                    " (size " + std::to_string(shape[mode]) + ") of a tensor of shape " + shape_string(shape));
  shape[mode] = std::size_t(u.rows());
  return ndtensor_in<T, S>(shape, tprod::mode_product(x.around(mode), u, 1));
}

/// @brief The chain X ×_{m_1} U_1 ×_{m_2} U_2 ⋯ (or ×_{m_k} U_kᵀ) with factors in X's memory space, as
///        multi_mode_product of ndtensor (the same order of products).
/// @throws shape_error as multi_mode_product of ndtensor.
template <real_scalar T, memory_space S>
ndtensor_in<T, S> multi_mode_product(const ndtensor_in<T, S>& x, const std::vector<matrix_in<T, S>>& factors,
                                     const std::vector<std::size_t>& modes, factor_use use = factor_use::as_given) {
  std::vector<std::pair<std::size_t, std::size_t>> sizes;  // (rows, columns) of each factor
  for (const auto& f : factors) sizes.emplace_back(f.m(), f.n());
  const auto order = detail::mode_chain_order(x.shape(), sizes, modes, use, "multi_mode_product");
  if (modes.empty()) return x;
  ndtensor_in<T, S> y;
  const ndtensor_in<T, S>* current = &x;  // the input is read in place, never copied
  for (const std::size_t k : order) {
    const dense_matrix<T> f = detail::host_matrix(factors[k]);  // small: the task takes U on the host
    ndtensor_in<T, S> next = use == factor_use::transposed ? mode_product(*current, f.transpose(), modes[k])
                                                           : mode_product(*current, f, modes[k]);
    y = std::move(next);
    current = &y;
  }
  return y;
}

namespace detail {

/// ‖x‖_F accumulated in double.
template <real_scalar T, memory_space S>
double frobenius(const ndtensor_in<T, S>& x) {
  if (x.size() == 0) return 0;
  return std::sqrt(slice_squared_norms(system_of<S>(), x.flat())[0]);
}

/// Throws numerical_error naming `where` unless every element of x is finite.
template <real_scalar T, memory_space S>
void expect_finite(const ndtensor_in<T, S>& x, const char* where) {
  if (!all_finite(system_of<S>(), x.flat()))
    throw numerical_error(std::string(where) + ": the tensor holds NaN or Inf; decompositions need finite data");
}

/// ‖x − y‖_F/‖norm_x‖ accumulated in double; 0 when both are zero.
template <real_scalar T, memory_space S>
double relative_difference(const ndtensor_in<T, S>& x, const ndtensor_in<T, S>& y, double norm_x) {
  TPROD_ASSERT(x.size() == y.size());
  ndtensor_in<T, S> d = y;
  axpy(system_of<S>(), T(-1), x.flat(), d.flat());
  const double diff = frobenius(d);
  return norm_x == 0 ? (diff == 0 ? 0.0 : std::numeric_limits<double>::infinity()) : diff / norm_x;
}

/// An orthonormal basis of ℝ^{I_n} in X's memory space, ordered by the energy of X_(n) it captures, with those
/// energies (singular_subspace's twin for ndtensor_in).
template <real_scalar T, memory_space S>
struct singular_subspace_in {
  matrix_in<T, S> basis;
  std::vector<double> energies;
};

/// Σ_t A_tᵀ·B_t over the slices of A (m×a×p) and B (m×b×p) in memory space S, an a×b×1 tensor3: the slices
/// transposed side by side make the a×(m·p) matrix [A_0ᵀ … A_{p−1}ᵀ], and B's the same, transposed once more into
/// the (m·p)×b matrix below it, so the sum is one GEMM (facewise on single slices). With A = B this is the Gram
/// matrix X_(n)·X_(n)ᵀ of the view around mode n.
template <class T, memory_space S>
tensor3<T, dextents3, S> cross_gram(tensor3_view<const T, dextents3, S> a, tensor3_view<const T, dextents3, S> b) {
  using tensor = tensor3<T, dextents3, S>;
  using const_view = tensor3_view<const T, dextents3, S>;
  TPROD_ASSERT(a.m() == b.m() && a.p() == b.p());
  const auto sys = system_of<S>();
  const std::size_t mp = a.m() * a.p();
  tensor at(a.n(), a.m(), a.p(), uninitialized), bt_t(mp, b.n(), 1, uninitialized), out(a.n(), b.n(), 1, uninitialized);
  adjoint_slices(sys, a, at.view());
  const_view bt(at.data(), b.n(), mp, 1);  // B's slices transposed side by side: A's, when B is A
  tensor b_side;
  if (b.data() != a.data() || b.n() != a.n()) {
    b_side = tensor(b.n(), b.m(), b.p(), uninitialized);
    adjoint_slices(sys, b, b_side.view());
    bt = const_view(b_side.data(), b.n(), mp, 1);
  }
  adjoint_slices(sys, bt, bt_t.view());
  facewise(sys, const_view(at.data(), a.n(), mp, 1), cview(bt_t), out.view());
  return out;
}

/// The singular subspace of X_(n), where X lives: the SVD of the Gram matrix X_(n)·X_(n)ᵀ (`gram`; its singular
/// values are the energies) or of X_(n) itself, which is the data when mode n comes first and otherwise the
/// transposed before×I_n blocks of the view around n (economy when X_(n) is wide; full U when it is tall, which
/// completes the basis).
template <real_scalar T, memory_space S>
singular_subspace_in<T, S> mode_singular_subspace(const ndtensor_in<T, S>& x, std::size_t mode, bool gram) {
  using tensor = tensor3<T, dextents3, S>;
  using const_view = tensor3_view<const T, dextents3, S>;
  const auto sys = system_of<S>();
  const const_view around = x.around(mode);
  const std::size_t size = around.n(), cols = around.m() * around.p();
  singular_subspace_in<T, S> s{matrix_in<T, S>(size, size, 1, uninitialized), std::vector<double>(size, 0.0)};
  if (gram) {
    // symmetric positive semidefinite: its singular values are its eigenvalues, the energies σ_i² of X_(n)
    const tensor g = cross_gram(around, around);
    tensor right(size, size, 1, uninitialized);
    const auto sigma = svd_slices(sys, cview(g), std::vector<char>{}, s.basis.view(), right.view());
    for (std::size_t i = 0; i < size; ++i) s.energies[i] = double(sigma[i]);
    return s;
  }
  tensor blocks;  // X_(n) when it is not the data itself
  const_view unfolding(around.data(), size, cols, 1);
  if (around.m() > 1) {
    blocks = tensor(size, around.m(), around.p(), uninitialized);
    adjoint_slices(sys, around, blocks.view());
    unfolding = const_view(blocks.data(), size, cols, 1);
  }
  const std::size_t r = std::min(size, cols);
  tensor right(cols, r, 1, uninitialized);
  const auto sigma = svd_slices(sys, unfolding, std::vector<char>{}, s.basis.view(), right.view());
  for (std::size_t i = 0; i < r; ++i) s.energies[i] = double(sigma[i]) * double(sigma[i]);
  return s;
}

/// The first r columns of a basis (the leading factor), in its memory space.
template <real_scalar T, memory_space S>
matrix_in<T, S> leading_columns_of(const matrix_in<T, S>& basis, std::size_t r) {
  matrix_in<T, S> out(basis.m(), r, 1, uninitialized);
  leading_columns(system_of<S>(), cview(basis), out.view());
  return out;
}

}  // namespace detail

}  // namespace tprod
