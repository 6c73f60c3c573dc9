// SPDX-License-Identifier: Apache-2.0
#pragma once
// GPU arrays in and out of tprod's device tensors through DLPack (a CUDA build only).
//
// A CUDA array of another library (a torch tensor, a CuPy array: anything with __dlpack__) arrives as a DLPack
// capsule, made by tprod/_device.py on the stream the computation will use. A capsule whose strides are tprod's
// storage order, offset i + m·(j + n·k) (Fortran order; the strides of extents 1 do not matter), is viewed as a
// device tensor without a copy; any other layout is refused with the strides it has, and _device.py gives torch
// tensors in Fortran order (one device copy) before they come here. Results are device tensors moved into
// capsules that own them, so nothing is copied on the way out either; the consumer (torch.from_dlpack) frees
// them, on the stream they were made on.
#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "arrays.hpp"
#include "tprod/cuda.hpp"

static_assert(DLPACK_VERSION >= 60, "tprod's CUDA arrays from Python need DLPack 0.6 or later (kDLCUDA, DLManagedTensor)");

namespace tprod::python {

/// The scalar of a DLPack data type, or a TypeError naming `what` and the type ("int64", "bfloat16", ...).
scalar_kind scalar_of(const DLDataType& type, const char* what);

/// "float32", ... : the NumPy name of a scalar.
inline const char* scalar_name(scalar_kind kind) {
  return with_scalar(kind, [](auto tag) { return dtype_name<typename std::remove_cvref_t<decltype(tag)>::type>(); });
}

/// One CUDA array from a DLPack capsule, consumed: the capsule is marked used (so it cannot be consumed twice) and
/// the producer's deleter runs when this goes, after the work that reads it has been enqueued on the stream the
/// producer was asked to order it on.
class device_input {
 public:
  /// @throws TypeError when `capsule` is not an unused DLPack capsule, is not on a CUDA device or has a dtype
  /// tprod does not compute in; ValueError when it is not 3-dimensional, is on another device than the current
  /// one, or its strides are not tprod's order.
  device_input(const py::capsule& capsule, const char* what);
  device_input(const device_input&) = delete;
  device_input& operator=(const device_input&) = delete;
  ~device_input();

  scalar_kind scalar() const { return scalar_; }
  const char* what() const { return what_; }
  std::size_t extent(int d) const { return std::size_t(managed_->dl_tensor.shape[d]); }

  /// The array as a read-only device view of scalar T (T must be scalar()).
  template <class T>
  tensor3_view<const T, dextents3, device_space> view() const {
    const auto& t = managed_->dl_tensor;
    const auto* data = reinterpret_cast<const T*>(static_cast<const char*>(t.data) + t.byte_offset);
    return {data, extent(0), extent(1), extent(2)};
  }

 private:
  DLManagedTensor* managed_ = nullptr;
  scalar_kind scalar_{};
  const char* what_;
};

/// The DLPack data type of scalar T.
template <class T>
constexpr DLDataType dlpack_type() {
  constexpr bool complex = !std::same_as<T, real_t<T>>;
  return DLDataType{std::uint8_t(complex ? kDLComplex : kDLFloat), std::uint8_t(8 * sizeof(T)), 1};
}

/// A device tensor as a DLPack capsule ("dltensor") that owns it (moved, not copied): shape (m, n, p), strides
/// (1, m, m·n) in elements, on the current device. A capsule nobody consumed frees the tensor when it goes.
template <class T, class E>
py::capsule to_dlpack(tensor3<T, E, device_space>&& t) {
  struct owner {
    device_tensor3<T> tensor;
    std::int64_t shape[3];
    std::int64_t strides[3];
    DLManagedTensor managed;
  };
  auto* o = new owner{device_tensor3<T>(std::move(t)), {}, {}, {}};
  const auto m = std::int64_t(o->tensor.m()), n = std::int64_t(o->tensor.n()), p = std::int64_t(o->tensor.p());
  o->shape[0] = m, o->shape[1] = n, o->shape[2] = p;
  o->strides[0] = 1, o->strides[1] = m, o->strides[2] = m * n;
  int device = 0;
  cudaGetDevice(&device);
  o->managed.dl_tensor = DLTensor{o->tensor.data(), DLDevice{kDLCUDA, device}, 3, dlpack_type<T>(), o->shape,
                                  o->strides, 0};
  o->managed.manager_ctx = o;
  o->managed.deleter = [](DLManagedTensor* self) { delete static_cast<owner*>(self->manager_ctx); };
  PyObject* capsule = PyCapsule_New(&o->managed, "dltensor", [](PyObject* self) {
    // Consumed capsules are renamed "used_dltensor": their consumer frees the tensor.
    if (PyCapsule_IsValid(self, "dltensor")) {
      auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
      managed->deleter(managed);
    }
  });
  if (capsule == nullptr) {
    delete o;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

/// The CUDA stream a Python caller passes: the integer cudaStream_t (0 the legacy default stream, as torch's
/// Stream.cuda_stream gives it).
inline tprod::cuda::execution execution_on(std::uintptr_t stream) {
  return tprod::cuda::execution{reinterpret_cast<cudaStream_t>(stream)};
}

/// Calls f(A) with the device view of `a` in its own scalar.
template <class F>
py::object with_device_input(const device_input& a, F&& f) {
  return with_scalar(a.scalar(), [&](auto tag) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    return f(a.template view<T>());
  });
}

/// Calls f(A, B) with the device views of two arrays of one scalar (a TypeError when their dtypes differ).
template <class F>
py::object with_device_inputs(const device_input& a, const device_input& b, F&& f) {
  if (a.scalar() != b.scalar())
    throw py::type_error(std::string("tprod: ") + a.what() + " is " + scalar_name(a.scalar()) + " and " + b.what() +
                         " is " + scalar_name(b.scalar()) +
                         "; tprod does not mix scalar types silently: convert one of them");
  return with_device_input(a, [&](auto av) -> py::object {
    using T = value_type_of<decltype(av)>;
    return f(av, b.template view<T>());
  });
}

}  // namespace tprod::python
