// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file transformed.hpp
/// @brief distributed::transformed: Â = L(A) spread over the ranks by frontal slices, and the transforms
/// between the two distributions.
///
/// Rank r holds the stored slices slices().begin(r) … end(r) − 1 (the DFT of real data stores ⌊p/2⌋+1), whole, as a
/// tprod::transformed whose slice_window names them and whose group is the communicator's ranks (local()). The
/// one-process algebra takes that local tensor as it is: the facewise operations stay on each rank, and the few
/// steps that need every slice (norms, singular values, errors) reduce over the ranks through the window. Every
/// stored slice costs the same (one complex GEMM per slice under the DFT, where slices 0 and p/2 are stored complex
/// too), so equal counts balance the work.
///
/// transform = the local tube transforms, then one all-to-all from tubes to slices (the slab pattern of FFTW-MPI
/// and heFFTe); inverse_transform = the all-to-all back, then the local inverse transforms. A chain of products kept
/// in the transform domain communicates only at its two ends. (distributed::product of two tensors in the original
/// domain holds its slices in pencils instead, detail/boxes.hpp, so that ranks beyond the stored slices work too.)
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tprod/distributed/detail/boxes.hpp"
#include "tprod/distributed/slice_group.hpp"
#include "tprod/distributed/tensor3.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod::distributed {

template <scalar T, transform_policy L>
class transformed {
 public:
  using original_scalar = T;
  using value_type = typename L::template domain_scalar<T>;
  using transform_type = L;
  using local_type = tprod::transformed<T, L>;

  /// @brief The zero transform-domain tensor of an m×n×p original shape on `comm`.
  /// @throws shape_error (on every rank alike) when L cannot act on p tubes.
  transformed(communicator comm, std::size_t m, std::size_t n, std::size_t p, L policy)
      : transformed(local_type(dextents3(m, n, p), policy, window_on(comm, p, policy))) {}
  /// @brief As above with the owned slices left uninitialized (to be overwritten).
  transformed(communicator comm, std::size_t m, std::size_t n, std::size_t p, L policy, uninitialized_t)
      : transformed(local_type(dextents3(m, n, p), policy, window_on(comm, p, policy), uninitialized)) {}
  /// @brief Adopts what the one-process algebra made of this class's local tensors (their window and group kept).
  /// @throws argument_error when `local`'s slices are not held by the ranks of a communicator.
  explicit transformed(local_type local)
      : group_(std::dynamic_pointer_cast<const rank_slice_group>(local.window().group)), local_(std::move(local)) {
    if (!group_) throw argument_error("distributed::transformed: the tensor's slices are not spread over MPI ranks");
  }

  std::size_t m() const { return local_.m(); }
  std::size_t n() const { return local_.n(); }
  std::size_t p() const { return local_.p(); }  ///< tubes of the original tensor
  std::size_t stored_slices() const { return local_.window().total; }  ///< over all ranks
  std::string shape() const { return local_.shape(); }
  const communicator& comm() const { return group_->comm(); }
  const L& transform() const { return local_.transform(); }
  /// @brief Which rank owns which stored slices.
  const block_partition& slices() const { return group_->slices(); }
  std::size_t first_slice() const { return local_.window().first; }
  /// @brief This rank's stored slices, m×n×(owned slices), as a tensor the one-process algebra takes.
  local_type& local() { return local_; }
  const local_type& local() const { return local_; }

  /// @brief This rank's window of the stored slices of a tensor with p tubes under L, spread over `comm`.
  /// @throws shape_error when L cannot act on p tubes.
  static slice_window window_on(const communicator& comm, std::size_t p, const L& policy) {
    policy.check_size(p);
    return rank_slice_group::window(
        std::make_shared<const rank_slice_group>(comm, block_partition(policy.template stored_slices<T>(p),
                                                                       comm.size())));
  }

 private:

  std::shared_ptr<const rank_slice_group> group_;
  local_type local_;
};

/// @brief Collective: Â = L(A), from the tube distribution to the slice distribution (local transforms, one
/// all-to-all). Real A is promoted to complex first when L's Z is complex, as on one process.
/// @throws shape_error (on every rank alike) when L cannot act on A's tubes.
template <scalar T0, transform_policy L>
auto transform(const tensor3<T0>& a, const L& policy) {
  using T = typename L::template original_scalar<T0>;
  using D = typename L::template domain_scalar<T>;
  const auto& comm = a.comm();
  transformed<T, L> out(comm, a.m(), a.n(), a.p(), policy, uninitialized);
  const auto tubes_hat = tprod::transform(a.local(), policy);  // (owned tubes)×1×(all stored slices)
  const detail::routes r(a.tubes(), a.m(), a.n(), detail::box_layout::slabs(out.slices(), a.m()), comm.rank());
  detail::to_boxes<D>(comm, {{r, tubes_hat.data().data(), {out.local().data().data()}}});
  return out;
}

/// @brief Collective: A = L⁻¹(Â), from the slice distribution back to the tube distribution (one all-to-all, local
/// inverse transforms).
template <scalar T, transform_policy L>
tensor3<T> inverse_transform(const transformed<T, L>& ahat) {
  using D = typename L::template domain_scalar<T>;
  const auto& comm = ahat.comm();
  const block_partition tubes(ahat.m() * ahat.n(), comm.size());
  tprod::transformed<T, L> tubes_hat(dextents3(tubes.size(comm.rank()), 1, ahat.p()), ahat.transform(), uninitialized);
  const detail::routes r(tubes, ahat.m(), ahat.n(), detail::box_layout::slabs(ahat.slices(), ahat.m()), comm.rank());
  detail::to_tubes<D>(comm, {{r, tubes_hat.data().data(), {ahat.local().data().data()}}});
  return tensor3<T>::from_local(comm, ahat.m(), ahat.n(), ahat.p(), tprod::inverse_transform(tubes_hat));
}

}  // namespace tprod::distributed
