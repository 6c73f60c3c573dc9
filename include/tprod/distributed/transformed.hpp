// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transformed.hpp
/// @brief distributed::transformed: Â = L(A) spread over the ranks by frontal slices, and the transforms
/// between the two distributions.
///
/// Rank r owns the stored slices slices().begin(r) … end(r) − 1 (the DFT of real data stores ⌊p/2⌋+1), whole, as an
/// m×n×(owned slices) tprod::tensor3 of L's domain scalar: every facewise operation is then local. Every stored slice
/// costs the same (one complex GEMM per slice under the DFT, where slices 0 and p/2 are stored complex too), so equal
/// counts balance the work. The slice weights of the half spectrum are those of the one-process tensor, by the
/// slice's global index (slice_weight).
///
/// transform = the local tube transforms, then one all-to-all from tubes to slices (the slab pattern of FFTW-MPI
/// and heFFTe); inverse_transform = the all-to-all back, then the local inverse transforms. A chain of products kept
/// in the transform domain communicates only at its two ends, and a product's two operands go in one all-to-all.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tprod/distributed/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod::distributed {

template <scalar T, transform_policy L>
class transformed {
 public:
  using original_scalar = T;
  using value_type = typename L::template domain_scalar<T>;
  using transform_type = L;
  using local_type = tprod::tensor3<value_type>;

  /// @brief The zero transform-domain tensor of an m×n×p original shape on `comm`.
  /// @throws shape_error (on every rank alike) when L cannot act on p tubes.
  transformed(communicator comm, std::size_t m, std::size_t n, std::size_t p, L policy)
      : transformed(comm, m, n, p, policy, slice_partition(comm, p, policy), true) {}
  /// @brief As above with the owned slices left uninitialized (to be overwritten).
  transformed(communicator comm, std::size_t m, std::size_t n, std::size_t p, L policy, uninitialized_t)
      : transformed(comm, m, n, p, policy, slice_partition(comm, p, policy), false) {}

  std::size_t m() const { return m_; }
  std::size_t n() const { return n_; }
  std::size_t p() const { return p_; }  ///< tubes of the original tensor
  std::size_t stored_slices() const { return slices_.count(); }
  std::string shape() const { return shape_string(m_, n_, p_); }
  const communicator& comm() const { return comm_; }
  const L& transform() const { return policy_; }
  /// @brief Which rank owns which stored slices.
  const block_partition& slices() const { return slices_; }
  std::size_t first_slice() const { return slices_.begin(comm_.rank()); }
  /// @brief How many of the p slices global stored slice k stands for (as tprod::transformed::slice_weight).
  double slice_weight(std::size_t k) const { return policy_.template slice_weight<T>(k, p_); }
  /// @brief This rank's stored slices, m×n×(owned slices).
  local_type& local() { return local_; }
  const local_type& local() const { return local_; }

  /// @throws shape_error (on every rank alike) unless b has the same shape, transform and communicator.
  template <class Other>
  void check_same(const Other& b, const char* op) const {
    check_compatible(b, op);
    TPROD_EXPECTS(m_ == b.m() && n_ == b.n() && p_ == b.p(),
                  std::string("distributed::transformed ") + op + ": shapes " + shape() + " and " + b.shape() +
                      " differ");
  }
  /// @throws shape_error (on every rank alike) unless b has the same p, transform and communicator.
  template <class Other>
  void check_compatible(const Other& b, const char* op) const {
    if (!(comm_ == b.comm()))
      throw shape_error(std::string("distributed::transformed ") + op +
                        ": the operands live on different communicators");
    if (!(policy_ == b.transform()))
      throw transform_mismatch_error(std::string("distributed::transformed ") + op +
                                     ": the operands are in different " + std::string(L::name()) +
                                     " transform domains (different Z)");
    TPROD_EXPECTS(p_ == b.p(), std::string("distributed::transformed ") + op + ": tubes p = " + std::to_string(p_) +
                                   " and p = " + std::to_string(b.p()) + " differ");
  }

 private:
  static block_partition slice_partition(const communicator& comm, std::size_t p, const L& policy) {
    policy.check_size(p);
    return block_partition(policy.template stored_slices<T>(p), comm.size());
  }
  transformed(communicator comm, std::size_t m, std::size_t n, std::size_t p, L policy, block_partition slices,
              bool zero)
      : comm_(comm), m_(m), n_(n), p_(p), policy_(std::move(policy)), slices_(std::move(slices)),
        local_(zero ? local_type(m, n, slices_.size(comm_.rank()))
                    : local_type(m, n, slices_.size(comm_.rank()), uninitialized)) {}

  communicator comm_;
  std::size_t m_, n_, p_;
  L policy_;
  block_partition slices_;
  local_type local_;
};

namespace detail {
/// @brief The blocks between the tube layout (each rank's transformed tubes: rows = its tubes, columns = all
/// stored slices) and the slice layout (m·n rows, each rank's owned slices): what `rank` holds of every rank's part
/// in the tube layout (one contiguous run of its slices), and what it holds of every rank's tubes in the slice layout.
inline std::vector<strided_block> tube_layout_blocks(const block_partition& tubes, const block_partition& slices,
                                                     int rank) {
  const std::size_t rows = tubes.size(rank);
  std::vector<strided_block> blocks;
  for (int q = 0; q < slices.parts(); ++q) blocks.push_back({rows * slices.size(q), 1, 0, rows * slices.begin(q)});
  return blocks;
}
inline std::vector<strided_block> slice_layout_blocks(const block_partition& tubes, const block_partition& slices,
                                                      int rank) {
  std::vector<strided_block> blocks;
  for (int q = 0; q < tubes.parts(); ++q)
    blocks.push_back({tubes.size(q), slices.size(rank), tubes.count(), tubes.begin(q)});
  return blocks;
}
}  // namespace detail

namespace detail {
/// @brief Collective: L of each tensor (all on one communicator), the local tube transforms of all of them, then one
/// all-to-all that carries every one's blocks (a product's two operands travel in one exchange).
template <scalar T0, transform_policy L>
auto transform_together(const std::vector<const tensor3<T0>*>& tensors, const L& policy) {
  using T = typename L::template original_scalar<T0>;
  using D = typename L::template domain_scalar<T>;
  std::vector<transformed<T, L>> outs;
  std::vector<tprod::transformed<T, L>> local_hats;  // (owned tubes)×1×(all stored slices) each
  for (const auto* a : tensors) {
    outs.emplace_back(a->comm(), a->m(), a->n(), a->p(), policy, uninitialized);
    local_hats.push_back(tprod::transform(a->local(), policy));
  }
  const int rank = tensors.front()->comm().rank();
  std::vector<exchange_part<const D>> sends;
  std::vector<exchange_part<D>> recvs;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& tubes = tensors[i]->tubes();
    sends.push_back({local_hats[i].data().data(), tube_layout_blocks(tubes, outs[i].slices(), rank)});
    recvs.push_back({outs[i].local().data(), slice_layout_blocks(tubes, outs[i].slices(), rank)});
  }
  exchange(tensors.front()->comm(), sends, recvs);
  return outs;
}
}  // namespace detail

/// @brief Collective: Â = L(A), from the tube distribution to the slice distribution (local transforms, one
/// all-to-all). Real A is promoted to complex first when L's Z is complex, as on one process.
/// @throws shape_error (on every rank alike) when L cannot act on A's tubes.
template <scalar T0, transform_policy L>
auto transform(const tensor3<T0>& a, const L& policy) {
  return std::move(detail::transform_together<T0>({&a}, policy).front());
}

/// @brief Collective: A = L⁻¹(Â), from the slice distribution back to the tube distribution (one all-to-all, local
/// inverse transforms).
template <scalar T, transform_policy L>
tensor3<T> inverse_transform(const transformed<T, L>& ahat) {
  const auto& comm = ahat.comm();
  const block_partition tubes(ahat.m() * ahat.n(), comm.size());
  const int rank = comm.rank();
  const std::size_t rows = tubes.size(rank);
  tprod::transformed<T, L> local_hat(dextents3(rows, 1, ahat.p()), ahat.transform(), uninitialized);
  detail::exchange(comm, ahat.local().data(), detail::slice_layout_blocks(tubes, ahat.slices(), rank),
                   local_hat.data().data(), detail::tube_layout_blocks(tubes, ahat.slices(), rank));
  return tensor3<T>::from_local(comm, ahat.m(), ahat.n(), ahat.p(), tprod::inverse_transform(local_hat));
}

}  // namespace tprod::distributed
