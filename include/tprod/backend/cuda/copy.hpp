// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file copy.hpp
/// @brief Explicit copies between host and device memory: tprod::to_device(a), tprod::to_host(d) and
/// tprod::copy(a, space), for tensors (the extents are kept) and transform-domain tensors.
///
/// The copy from the host is synchronous for the host (the source may be reused at once); the copy to the host
/// waits for the stream, so the result is ready when the call returns.
#include <cstddef>

#include "tprod/backend/cuda/detail/raw.hpp"
#include "tprod/backend/cuda/device_buffer.hpp"
#include "tprod/transform/transformed.hpp"

namespace tprod {

namespace detail {
template <memory_space To, any_tensor3 A>
auto copy_to(const A& a, const cuda::execution& ex) {
  using T = value_type_of<A>;
  using From = space_of<A>;
  const auto v = cview(a);
  const cuda::execution_scope scope(ex);  // device memory allocated on ex's stream
  tensor3<T, extents_of<A>, To> out(v.extents(), uninitialized);
  if constexpr (std::same_as<From, To>) {
    out = tensor3<T, extents_of<A>, To>(v);
  } else {
    using backend::cuda::raw::direction;
    const direction dir = std::same_as<To, device_space> ? direction::host_to_device : direction::device_to_host;
    backend::cuda::raw::copy_bytes(out.data(), v.data(), v.size() * sizeof(T), dir, ex.stream);
    if constexpr (std::same_as<To, host_space>) backend::cuda::raw::synchronize(ex.stream);
  }
  return out;
}
}  // namespace detail

/// @brief A copy of A in memory space To (host_space or device_space), same extents.
template <memory_space To, any_tensor3 A>
auto copy(const A& a, To = {}, const cuda::execution& ex = cuda::default_execution()) {
  return detail::copy_to<To>(a, ex);
}
/// @brief A device copy of a host (or device) tensor.
template <any_tensor3 A>
auto to_device(const A& a, const cuda::execution& ex = cuda::default_execution()) {
  return detail::copy_to<device_space>(a, ex);
}
/// @brief A host copy of a device (or host) tensor; ready when the call returns.
template <any_tensor3 A>
auto to_host(const A& a, const cuda::execution& ex = cuda::default_execution()) {
  return detail::copy_to<host_space>(a, ex);
}

/// @brief Transform-domain tensors move between spaces the same way: the stored slices are copied.
template <memory_space To, scalar T, transform_policy L, extents3_type E, memory_space S>
transformed<T, L, E, To> copy(const transformed<T, L, E, S>& ahat, To = {}, const cuda::execution& ex = cuda::default_execution()) {
  return transformed<T, L, E, To>(ahat.extents(), ahat.transform(), ahat.window(),
                                  detail::copy_to<To>(ahat.data(), ex));
}
template <scalar T, transform_policy L, extents3_type E, memory_space S>
auto to_device(const transformed<T, L, E, S>& ahat, const cuda::execution& ex = cuda::default_execution()) {
  return copy<device_space>(ahat, device_space{}, ex);
}
template <scalar T, transform_policy L, extents3_type E, memory_space S>
auto to_host(const transformed<T, L, E, S>& ahat, const cuda::execution& ex = cuda::default_execution()) {
  return copy<host_space>(ahat, host_space{}, ex);
}

}  // namespace tprod
