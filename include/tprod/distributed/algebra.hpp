// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file algebra.hpp
/// @brief The algebra on distributed tensors: the one-process functions on each rank's slices (local()), whose
/// slice window reduces over the ranks where a result needs every slice, wrapped back into distributed tensors; in
/// the original domain, the transforms around them.
///
/// Communication: none for the facewise operations (products, transposes, identities, inverses); one MPI_Allreduce
/// for a norm or inner product, one MPI_Allgatherv of the singular values for the ranks and norms that need them,
/// one agreement on errors around every factorization (every rank throws distributed_error naming the rank that
/// failed). From or to the original domain, one all-to-all each way; a product of two tensors in the original domain
/// takes two in all.
#include <cmath>
#include <limits>
#include <vector>

#include "tprod/algebra/facewise.hpp"
#include "tprod/algebra/identity.hpp"
#include "tprod/algebra/inverse.hpp"
#include "tprod/algebra/norms.hpp"
#include "tprod/algebra/qr.hpp"
#include "tprod/algebra/rank.hpp"
#include "tprod/algebra/spectral_norms.hpp"
#include "tprod/algebra/transpose.hpp"
#include "tprod/backend/kernels/elementwise.hpp"
#include "tprod/distributed/transformed.hpp"

namespace tprod::distributed {

/// @brief Transform-domain L-product (Â·B̂)(:, :, k) = Â(:, :, k)·B̂(:, :, k): local, on each rank's own slices.
/// @throws shape_error (on every rank alike) unless A is m×l×p and B l×n×p on one communicator and transform.
template <scalar T, transform_policy L>
transformed<T, L> operator*(const transformed<T, L>& a, const transformed<T, L>& b) {
  return transformed<T, L>(a.local() * b.local());
}

/// @brief Collective: C = A *_L B, distributed by tubes like its operands. The local transforms of A and B; one
/// all-to-all that gives every rank an equal share of the rows of Â's stored slices (pencils, detail/boxes.hpp) and
/// the slices of B̂ they meet; Ĉ's rows = Â's rows · B̂ on each rank (the one-process facewise product of its
/// boxes); one all-to-all back and the local inverse transforms. Every rank computes, however few the slices.
/// @throws shape_error (on every rank alike) unless A is m×l×p and B l×n×p on one communicator.
template <scalar T0, transform_policy L>
auto product(const tensor3<T0>& a, const tensor3<T0>& b, const L& policy) {
  using T = typename L::template original_scalar<T0>;
  using D = typename L::template domain_scalar<T>;
  if (!(a.comm() == b.comm()))
    throw shape_error("distributed::product: the operands live on different communicators");
  tprod::detail::check_product_shapes("distributed::product", a.m(), a.n(), a.p(), b.m(), b.n(), b.p());
  policy.check_size(a.p());
  const auto& comm = a.comm();
  const int rank = comm.rank();
  const std::size_t m = a.m(), l = a.n(), n = b.n(), p = a.p(), total = policy.template stored_slices<T>(p);
  const auto a_layout = detail::box_layout::pencils(total, m, comm.size()), b_layout = a_layout.with_all_rows(l);
  const detail::routes a_routes(a.tubes(), m, l, a_layout, rank), b_routes(b.tubes(), l, n, b_layout, rank);

  const auto a_tubes = tprod::transform(a.local(), policy), b_tubes = tprod::transform(b.local(), policy);
  const auto& mine = a_layout.of(rank);
  std::vector<tprod::transformed<T, L>> a_boxes, b_boxes, c_boxes;  // reserved: their data pointers stay put
  a_boxes.reserve(mine.size()), b_boxes.reserve(mine.size()), c_boxes.reserve(mine.size());
  std::vector<D*> a_data, b_data;
  for (const auto& box : mine) {
    a_boxes.emplace_back(dextents3(box.rows, l, p), policy, box.window(total), uninitialized);
    b_boxes.emplace_back(dextents3(l, n, p), policy, box.window(total), uninitialized);
    a_data.push_back(a_boxes.back().data().data());
    b_data.push_back(b_boxes.back().data().data());
  }
  detail::to_boxes<D>(comm, {{a_routes, a_tubes.data().data(), a_data}, {b_routes, b_tubes.data().data(), b_data}});

  std::vector<const D*> c_data;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    c_boxes.push_back(a_boxes[i] * b_boxes[i]);  // Ĉ's rows of the box = Â's rows · B̂, slice by slice
    c_data.push_back(c_boxes.back().data().data());
  }
  const block_partition c_tubes(m * n, comm.size());
  tprod::transformed<T, L> c_tubes_hat(dextents3(c_tubes.size(rank), 1, p), policy, uninitialized);
  const detail::routes c_routes(c_tubes, m, n, a_layout, rank);
  detail::to_tubes<D>(comm, {{c_routes, c_tubes_hat.data().data(), c_data}});
  return tensor3<T>::from_local(comm, m, n, p, tprod::inverse_transform(c_tubes_hat));
}

/// @brief Transform-domain L-transpose, n×m×p from m×n×p: local.
template <scalar T, transform_policy L>
transformed<T, L> transpose(const transformed<T, L>& ahat) {
  return transformed<T, L>(tprod::transpose(ahat.local()));
}
/// @brief Collective: the L-transpose Aᵀ, n×m×p, distributed by tubes (two all-to-alls: the tubes of an n×m tensor
/// belong to other ranks than those of m×n).
template <scalar T, transform_policy L>
auto transpose(const tensor3<T>& a, const L& policy) {
  return inverse_transform(transpose(transform(a, policy)));
}

/// @brief The transform-domain m×m×p identity (every stored slice I_m): local.
/// @throws shape_error (on every rank alike) when L cannot act on p tubes.
template <scalar T0, transform_policy L>
auto identity_transformed(const communicator& comm, std::size_t m, std::size_t p, const L& policy) {
  using T = typename L::template original_scalar<T0>;
  return transformed<T, L>(tprod::identity_transformed<T>(m, p, policy, transformed<T, L>::window_on(comm, p, policy)));
}
/// @brief Collective: the m×m×p L-identity in the original domain, distributed by tubes.
template <scalar T0, transform_policy L>
auto identity(const communicator& comm, std::size_t m, std::size_t p, const L& policy) {
  return inverse_transform(identity_transformed<T0>(comm, m, p, policy));
}

/// @brief Collective: Â⁻¹, slice by slice on the owning ranks, with the one-process singularity test (against the
/// largest slice's 1-norm over all ranks).
/// @throws shape_error (on every rank alike) unless the slices are square; distributed_error on every rank naming the
/// rank and the first singular global slice it owns (as tprod::inverse words it), or NaN/Inf.
template <scalar T, transform_policy L>
transformed<T, L> inverse(const transformed<T, L>& ahat) {
  return transformed<T, L>(tprod::inverse(ahat.local()));
}
/// @brief Collective: the L-inverse A⁻¹ of a square-sliced tensor, distributed by tubes.
template <scalar T, transform_policy L>
auto inverse(const tensor3<T>& a, const L& policy) {
  return inverse_transform(inverse(transform(a, policy)));
}

/// @brief Collective: ‖Â‖_F over all p transform-domain slices and ⟨Â, B̂⟩, as tprod's (one MPI_Allreduce).
template <scalar T, transform_policy L>
real_t<T> frobenius_norm(const transformed<T, L>& ahat) {
  return tprod::frobenius_norm(ahat.local());
}
template <scalar T, transform_policy L>
auto inner(const transformed<T, L>& a, const transformed<T, L>& b) {
  return tprod::inner(a.local(), b.local());
}
/// @brief Collective: ‖A‖_F and ⟨A, B⟩ = Σ conj(a_ijk)·b_ijk of tensors distributed by tubes (each rank's part, one
/// MPI_Allreduce). @throws shape_error (on every rank alike) when the shapes differ.
template <scalar T>
real_t<T> frobenius_norm(const tensor3<T>& a) {
  double squares = 0;  // summed in double, as tprod's transform-domain norm sums its slices
  for (double s : slice_squared_norms(tprod::detail::system_of<host_space>(), a.local().dynamic_view())) squares += s;
  return real_t<T>(std::sqrt(sum_over_ranks(a.comm(), squares)));
}
template <scalar T>
T inner(const tensor3<T>& a, const tensor3<T>& b) {
  if (!(a.comm() == b.comm())) throw shape_error("distributed::inner: the operands live on different communicators");
  TPROD_EXPECTS(a.m() == b.m() && a.n() == b.n() && a.p() == b.p(),
                "distributed::inner: shapes " + a.shape() + " and " + b.shape() + " differ");
  return sum_over_ranks(a.comm(), tprod::inner(a.local(), b.local()));
}

/// @brief Collective: the multi-rank, average rank and tubal rank of Â, the same on every rank (and the same as
/// tprod::ranks of the whole tensor): one MPI_Allgatherv of the singular values, then the one-process decision.
/// @throws shape_error (every rank alike) for an empty dimension; distributed_error on every rank for NaN or Inf.
template <scalar T, transform_policy L>
rank_info ranks(const transformed<T, L>& ahat, double tol = -1,
                double epsilon = std::numeric_limits<real_t<T>>::epsilon()) {
  return tprod::ranks(ahat.local(), tol, epsilon);
}
template <scalar T, transform_policy L>
rank_info ranks(const tensor3<T>& a, const L& policy, double tol = -1,
                double epsilon = std::numeric_limits<real_t<T>>::epsilon()) {
  return ranks(transform(a, policy), tol, epsilon);
}

/// @brief Collective: the spectral and nuclear norms, as tprod's (one MPI_Allgatherv of the singular values).
template <scalar T, transform_policy L>
real_t<T> spectral_norm(const transformed<T, L>& ahat) {
  return tprod::spectral_norm(ahat.local());
}
template <scalar T, transform_policy L>
real_t<T> nuclear_norm(const transformed<T, L>& ahat) {
  return tprod::nuclear_norm(ahat.local());
}

/// @brief The L-QR's factors Q̂ and R̂ of a distributed Â, each slice on its rank (errors agreed).
template <scalar T, transform_policy L>
struct qr_result {
  transformed<T, L> q_hat, r_hat;
};
/// @brief Collective: Â_k = Q̂_k R̂_k for every stored slice, on its rank; inverse_transform gives Q and R by tubes.
template <scalar T, transform_policy L>
qr_result<T, L> qr(const transformed<T, L>& ahat, factor_mode mode = factor_mode::economy) {
  auto f = tprod::detail::transform_domain_qr(ahat.local(), mode);
  return {transformed<T, L>(std::move(f.q_hat)), transformed<T, L>(std::move(f.r_hat))};
}

}  // namespace tprod::distributed
