// SPDX-License-Identifier: Apache-2.0
// The algebra on CUDA arrays from Python (a CUDA build only): tprod._tprod._device, which tprod/_device.py calls
// with DLPack capsules and the caller's stream. Each binding views its capsules (device_arrays.hpp), makes the
// stream the thread's device execution, releases the GIL, calls the library and hands the result back as a capsule
// that owns it. The functions and their arguments are the host bindings' (algebra.cpp, factorizations.cpp).
#include <cuda_runtime_api.h>

#include <optional>

#include "device_arrays.hpp"
#include "tprod/algebra.hpp"

namespace tprod::python {

scalar_kind scalar_of(const DLDataType& type, const char* what) {
  if (type.lanes == 1 && type.code == kDLFloat && type.bits == 32) return scalar_kind::float32;
  if (type.lanes == 1 && type.code == kDLFloat && type.bits == 64) return scalar_kind::float64;
  if (type.lanes == 1 && type.code == kDLComplex && type.bits == 64) return scalar_kind::complex64;
  if (type.lanes == 1 && type.code == kDLComplex && type.bits == 128) return scalar_kind::complex128;
  const char* kind = type.code == kDLInt ? "int" : type.code == kDLUInt ? "uint" : type.code == kDLFloat ? "float"
                   : type.code == kDLBfloat ? "bfloat" : type.code == kDLComplex ? "complex" : "dtype code ";
  std::string name = kind + std::to_string(type.code > kDLComplex ? int(type.code) : int(type.bits));
  if (type.lanes != 1) name += "x" + std::to_string(type.lanes);
  throw py::type_error(std::string("tprod: ") + what + " has dtype " + name +
                       "; tprod computes in float32, float64, complex64 or complex128 (convert it first)");
}

device_input::device_input(const py::capsule& capsule, const char* what) : what_(what) {
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor"))
    throw py::type_error(std::string("tprod: ") + what + " is not an unused DLPack capsule (\"dltensor\"); pass " +
                         "the array itself, whose __dlpack__ tprod calls once");
  managed_ = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");  // ours now: the capsule must not free it as well
  // The array's own properties are checked before the device is asked for, so that they are refused alike on
  // a machine without a GPU (and testable there).
  try {
    const DLTensor& t = managed_->dl_tensor;
    if (t.device.device_type != kDLCUDA && t.device.device_type != kDLCUDAManaged)
      throw py::type_error(std::string("tprod: ") + what + " is on DLPack device type " +
                           std::to_string(int(t.device.device_type)) + "; tprod's GPU functions take CUDA arrays");
    scalar_ = scalar_of(t.dtype, what);
    std::string shape = "(";
    for (int d = 0; d < t.ndim; ++d) shape += (d ? ", " : "") + std::to_string(t.shape[d]);
    shape += t.ndim == 1 ? ",)" : ")";
    if (t.ndim != 3)
      throw py::value_error(std::string("tprod: ") + what + " has shape " + shape +
                            "; a third-order tensor is an array of 3 dimensions (m, n, p), p the tube length");
    // Fortran order: stride 1, m, m·n; an extent of 1 has no neighbour to step to, so its stride is free. No
    // strides (nullptr) means compact C order, which is Fortran order only when at most one extent exceeds 1.
    std::int64_t expected = 1;
    bool fortran = true;
    for (int d = 0; d < 3; ++d) {
      const std::int64_t stride = t.strides ? t.strides[d] : t.shape[d] == 1 ? expected : d == 2 ? 1 : -1;
      if (t.shape[d] > 1 && stride != expected) fortran = false;
      expected *= t.shape[d];
    }
    if (!fortran && expected > 0) {
      std::string strides = "(C order)";
      if (t.strides) {
        strides = "(";
        for (int d = 0; d < 3; ++d) strides += (d ? ", " : "") + std::to_string(t.strides[d]);
        strides += ")";
      }
      throw py::value_error(std::string("tprod: ") + what + " of shape " + shape + " has strides " + strides +
                            " (in elements); tprod's GPU functions take Fortran order, strides (1, m, m·n): give "
                            "a Fortran-ordered copy (tprod does this for torch tensors)");
    }
    const auto address = reinterpret_cast<std::uintptr_t>(t.data) + t.byte_offset;
    with_scalar(scalar_, [&](auto tag) {
      using T = typename std::remove_cvref_t<decltype(tag)>::type;
      if (address % alignof(T) != 0)
        throw py::value_error(std::string("tprod: ") + what + "'s data at address " + std::to_string(address) +
                              " is not aligned to its " + std::to_string(alignof(T)) + "-byte elements");
    });
    tprod::cuda::require_device();
    int current = 0;
    cudaGetDevice(&current);
    if (t.device.device_type == kDLCUDA && t.device.device_id != current)
      throw py::value_error(std::string("tprod: ") + what + " is on cuda:" + std::to_string(t.device.device_id) +
                            " but the current device is cuda:" + std::to_string(current) +
                            "; compute under `with torch.cuda.device(" + std::to_string(t.device.device_id) + "):`");
  } catch (...) {
    managed_->deleter(managed_);
    throw;
  }
}

device_input::~device_input() {
  if (managed_->deleter) managed_->deleter(managed_);
}

namespace {

/// Runs f() on `stream` (results allocated there too) with the GIL released.
template <class F>
decltype(auto) on_stream(std::uintptr_t stream, F&& f) {
  py::gil_scoped_release release;
  const tprod::cuda::execution_scope scope(execution_on(stream));
  return f();
}

/// Calls f(policy) with the transform's policy.
template <class F>
py::object with_policy(const transform_object& l, F&& f) {
  return std::visit([&](const auto& policy) -> py::object { return f(policy); }, l.policy);
}

/// Calls f(A, policy) with the device view of `a` in its own scalar and the transform's policy.
template <class F>
py::object with_device_policy(const device_input& a, const transform_object& l, F&& f) {
  return with_device_input(a, [&](auto av) {
    return with_policy(l, [&](const auto& policy) -> py::object { return f(av, policy); });
  });
}

/// The slices of a device transform-domain tensor, its p and its original scalar, as tprod.Transformed holds them.
template <scalar T, class L>
py::tuple domain_tuple(transformed<T, L, dextents3, device_space>&& hat) {
  const std::size_t p = hat.p();
  return py::make_tuple(to_dlpack(std::move(hat.data())), p, dtype_name<T>());
}

/// Rebuilds the device transformed<T, L> of a transform-domain tensor (a device copy of its slices `data`) and
/// calls f with it; the checks are those of with_transformed (arrays.hpp).
template <class F>
py::object with_device_transformed(const device_input& data, std::size_t p, const transform_object& l,
                                   const py::object& original, std::uintptr_t stream, F&& f) {
  return with_domain_policy(original_scalar(original), l, [&](auto tag, const auto& policy) -> py::object {
    using T = typename std::remove_cvref_t<decltype(tag)>::type;
    using L = std::remove_cvref_t<decltype(policy)>;
    using D = typename L::template domain_scalar<T>;
    check_domain_scalar<T>(policy, data.scalar(), scalar_name(data.scalar()));
    check_stored_slices<T>(policy, p, data.extent(2));
    auto hat = on_stream(stream, [&] {
      return transformed<T, L, dextents3, device_space>(dextents3(data.extent(0), data.extent(1), p), policy,
                                                        device_tensor3<D>(data.template view<D>()));
    });
    return f(hat);
  });
}

/// Binds name(data, p, L, dtype, stream): f(the device transform-domain tensor, stream) on the slices `data` of a
/// tprod.Transformed.
template <class F>
void def_domain(py::module_& d, const char* name, F f) {
  d.def(name, [f](const py::capsule& data, std::size_t p, const transform_object& l, const py::object& original,
                  std::uintptr_t stream) {
    const device_input in(data, "the transform-domain slices");
    return with_device_transformed(in, p, l, original, stream,
                                   [&](const auto& hat) -> py::object { return f(hat, stream); });
  });
}

}  // namespace

void bind_device(py::module_& m) {
  auto d = m.def_submodule("_device", "tprod's algebra on CUDA arrays given as DLPack capsules (tprod/_device.py)");
  d.def("device_count", [] { return tprod::cuda::device_count(); });
  d.def("no_device_reason", [] { return tprod::cuda::no_device_reason(); });
  d.def("current_device", [] {
    tprod::cuda::require_device();
    int device = 0;
    cudaGetDevice(&device);
    return device;
  });
  // Waits for the work enqueued on `stream`: a result handed to a consumer on another stream is complete first.
  d.def("synchronize", [](std::uintptr_t stream) {
    py::gil_scoped_release release;
    tprod::cuda::synchronize(execution_on(stream));
  });

  d.def("transform", [](const py::capsule& a, const transform_object& l, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return domain_tuple(on_stream(stream, [&] { return transform(av, policy); }));
    });
  });
  def_domain(d, "inverse_transform", [](const auto& hat, std::uintptr_t stream) -> py::object {
    return to_dlpack(on_stream(stream, [&] { return inverse_transform(hat); }));
  });
  def_domain(d, "domain_transpose", [](const auto& hat, std::uintptr_t stream) -> py::object {
    return domain_tuple(on_stream(stream, [&] { return transpose(hat); }));
  });
  def_domain(d, "domain_inverse", [](const auto& hat, std::uintptr_t stream) -> py::object {
    return domain_tuple(on_stream(stream, [&] { return inverse(hat); }));
  });
  def_domain(d, "domain_frobenius_norm", [](const auto& hat, std::uintptr_t stream) -> py::object {
    return py::float_(double(on_stream(stream, [&] { return frobenius_norm(hat); })));
  });

  d.def("product", [](const py::capsule& a, const py::capsule& b, const transform_object& l, std::uintptr_t stream) {
    const device_input ia(a, "A"), ib(b, "B");
    return with_device_inputs(ia, ib, [&](auto av, auto bv) {
      return with_policy(l, [&](const auto& policy) -> py::object {
        return to_dlpack(on_stream(stream, [&] { return product(av, bv, policy); }));
      });
    });
  });
  d.def("facewise", [](const py::capsule& a, const py::capsule& b, std::uintptr_t stream) {
    const device_input ia(a, "A"), ib(b, "B");
    return with_device_inputs(ia, ib, [&](auto av, auto bv) -> py::object {
      return to_dlpack(on_stream(stream, [&] { return facewise(av, bv); }));
    });
  });
  d.def("transpose", [](const py::capsule& a, const transform_object& l, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return to_dlpack(on_stream(stream, [&] { return transpose(av, policy); }));
    });
  });
  d.def("inverse", [](const py::capsule& a, const transform_object& l, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return to_dlpack(on_stream(stream, [&] { return inverse(av, policy); }));
    });
  });
  d.def("frobenius_norm", [](const py::capsule& a, std::uintptr_t stream) {
    const device_input in(a, "A");
    return with_device_input(in, [&](auto av) -> py::object {
      return py::float_(double(on_stream(stream, [&] { return frobenius_norm(av); })));
    });
  });
  d.def("inner", [](const py::capsule& a, const py::capsule& b, std::uintptr_t stream) {
    const device_input ia(a, "A"), ib(b, "B");
    return with_device_inputs(ia, ib, [&](auto av, auto bv) -> py::object {
      return py::cast(on_stream(stream, [&] { return inner(av, bv); }));
    });
  });
  d.def("mode_product", [](const py::capsule& a, const py::array& u, std::size_t mode, std::uintptr_t stream) {
    const device_input in(a, "A");
    return with_device_input(in, [&](auto av) -> py::object {
      using T = value_type_of<decltype(av)>;
      if (scalar_of(u, "U") != scalar_of_type<T>())
        throw py::type_error(std::string("tprod.mode_product: A is ") + dtype_name<T>() + " and U is " +
                             dtype_text(u.dtype()) + "; give them one dtype");
      const auto um = matrix_of<T>(u, "U");
      return to_dlpack(on_stream(stream, [&] { return mode_product(av, um, mode); }));
    });
  });

  d.def("_svd", [](const py::capsule& a, const transform_object& l, bool full, std::optional<std::size_t> rank,
                   std::optional<double> energy, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return svd_dict(on_stream(stream, [&] {
        const auto hat = transform(av, policy);
        if (rank) return truncated_svd(hat, *rank);
        if (energy) return energy_truncated_svd(hat, *energy);
        return svd(hat, full ? factor_mode::full : factor_mode::economy);
      }), [](auto&& t) { return to_dlpack(std::move(t)); });
    });
  });
  d.def("_ranks", [](const py::capsule& a, const transform_object& l, double tol, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return rank_dict(on_stream(stream, [&] { return ranks(av, policy, tol); }));
    });
  });
  d.def("qr", [](const py::capsule& a, const transform_object& l, bool full, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      auto r = on_stream(stream, [&] { return qr(av, policy, full ? factor_mode::full : factor_mode::economy); });
      return py::make_tuple(to_dlpack(std::move(r.q)), to_dlpack(std::move(r.r)));
    });
  });
  d.def("spectral_norm", [](const py::capsule& a, const transform_object& l, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return py::float_(double(on_stream(stream, [&] { return spectral_norm(av, policy); })));
    });
  });
  d.def("nuclear_norm", [](const py::capsule& a, const transform_object& l, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      return py::float_(double(on_stream(stream, [&] { return nuclear_norm(av, policy); })));
    });
  });

  // The predicates (judged on a host copy by the library: one bool out).
  d.def("is_orthogonal", [](const py::capsule& a, const transform_object& l, double tol, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "Q"), l, [&](auto av, const auto& policy) -> py::object {
      using R = real_t<value_type_of<decltype(av)>>;
      return py::bool_(on_stream(stream, [&] { return is_orthogonal(av, policy, R(tol)); }));
    });
  });
  d.def("is_f_symmetric", [](const py::capsule& a, const transform_object& l, double tol, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      using R = real_t<value_type_of<decltype(av)>>;
      return py::bool_(on_stream(stream, [&] { return is_f_symmetric(av, policy, R(tol)); }));
    });
  });
  d.def("is_f_positive_definite", [](const py::capsule& a, const transform_object& l, double tol, std::uintptr_t stream) {
    return with_device_policy(device_input(a, "A"), l, [&](auto av, const auto& policy) -> py::object {
      using R = real_t<value_type_of<decltype(av)>>;
      return py::bool_(on_stream(stream, [&] { return is_f_positive_definite(av, policy, R(tol)); }));
    });
  });
  d.def("is_f_diagonal", [](const py::capsule& a, double tol, std::uintptr_t stream) {
    return with_device_input(device_input(a, "A"), [&](auto av) -> py::object {
      return py::bool_(on_stream(stream, [&] { return is_f_diagonal(av, tol); }));
    });
  });
}

}  // namespace tprod::python
