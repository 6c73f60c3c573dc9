# SPDX-License-Identifier: Apache-2.0
"""tprod's algebra on CUDA arrays: torch tensors on a GPU, and any other array whose ``__dlpack_device__`` is CUDA.

The public functions (``tprod.product``, ``tprod.svd``, ...) come here when an argument is a CUDA array, so that a
CUDA-built tprod computes where the tensor lives, without copying it to the host:

- A torch tensor is read on the stream torch is using on its device (``torch.cuda.current_stream``), and the
  result is a torch tensor on that device, ordered on that stream. A tensor in tprod's storage order (Fortran
  order: strides (1, m, m·n)) is read without a copy; any other layout is first copied once on the device into
  that order, as the host functions do for C-order NumPy arrays. Results have strides (1, m, m·n).
- Another library's array (CuPy, JAX, ...) is asked for its data on the stream of the work (the legacy default
  stream, DLPack's stream 1, when no torch tensor leads the call), must already be in Fortran order, and the
  result is a ``DeviceArray``, which any DLPack consumer takes (``cupy.from_dlpack``, ``torch.from_dlpack``).

Scalars, shapes and errors are the host functions': ShapeError for shapes, TypeError for dtypes, and a TypeError
for a CUDA array given to a build without CUDA or to a function that computes on the CPU only.
"""
from __future__ import annotations

import sys

import numpy as np

from . import _tprod

_CUDA_DEVICE_TYPES = (2, 13)  # DLPack's kDLCUDA and kDLCUDAManaged

# The public functions that compute on CUDA arrays (the others take host arrays only).
FUNCTIONS = ("transform", "inverse_transform", "product", "facewise", "transpose", "inverse", "frobenius_norm",
             "inner", "mode_product", "svd", "ranks", "tubal_rank", "multi_rank", "average_rank", "qr",
             "spectral_norm", "nuclear_norm", "is_orthogonal", "is_f_diagonal", "is_f_symmetric",
             "is_f_positive_definite")
# Those of them that are host bindings re-exported as they are: a CUDA array reaches their namesake here.
BOUND = ("product", "facewise", "transpose", "inverse", "frobenius_norm", "inner", "mode_product", "qr",
         "spectral_norm", "nuclear_norm", "is_orthogonal", "is_f_diagonal", "is_f_symmetric", "is_f_positive_definite")


def is_device_array(x) -> bool:
    """x is an array on a CUDA device (or in CUDA managed memory) that speaks DLPack."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack_device__"):
        return False
    try:
        return int(x.__dlpack_device__()[0]) in _CUDA_DEVICE_TYPES
    except (TypeError, ValueError, IndexError):
        return False


def any_device_array(args, kwargs) -> bool:
    return any(is_device_array(a) for a in args) or any(is_device_array(v) for v in kwargs.values())


def _native():
    native = getattr(_tprod, "_device", None)
    if native is None:
        raise TypeError("tprod: a CUDA array was given, but this tprod was built without CUDA "
                        "(TPROD_ENABLE_CUDA=OFF): move it to the host first (a torch tensor with .cpu())")
    return native


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _fortran_strides(shape, strides) -> bool:
    """strides (in elements) are (1, m, m·n), those of extents 1 not mattering."""
    expected = 1
    for extent, stride in zip(shape, strides):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


def fortran(x):
    """x in Fortran order: a copy of a NumPy array in another order; other libraries' arrays pass unchanged (their
    order is dealt with when tprod reads them)."""
    return np.asfortranarray(x) if isinstance(x, np.ndarray) else x


class DeviceArray:
    """A CUDA array tprod computed from another library's array than torch's: give it to that library's
    ``from_dlpack`` (``cupy.from_dlpack(r)``, ``torch.from_dlpack(r)``); shape (m, n, p), Fortran order. Its data
    goes to one consumer, once (DLPack hands ownership over): to tprod's next call or to that library."""

    __slots__ = ("_capsule", "_stream", "_device")

    def __init__(self, capsule, stream: int, device: int):
        self._capsule, self._stream, self._device = capsule, stream, device

    def __dlpack_device__(self):
        return (2, self._device)  # kDLCUDA

    def __dlpack__(self, stream=None, **_):
        if self._capsule is None:
            raise BufferError("tprod.DeviceArray: its data was already handed to a consumer (__dlpack__ gives it "
                              "once)")
        legacy = 0 if stream == 1 else stream  # DLPack's 1 is the legacy default stream, cudaStream_t 0
        if stream is not None and stream != -1 and legacy != self._stream:
            # The consumer reads on another stream than the one tprod computed on: let the work finish first.
            _native().synchronize(self._stream)
        capsule, self._capsule = self._capsule, None
        return capsule

    def __repr__(self):
        state = "consumed" if self._capsule is None else "unconsumed"
        return f"tprod.DeviceArray(on cuda:{self._device}, {state})"


class _Call:
    """One call's CUDA arrays on one stream: torch's current stream on the first array's device when that array
    is a torch tensor, else the legacy default stream (0)."""

    def __init__(self, first):
        self.native = _native()
        self.torch = _is_torch(first)
        if self.torch:
            import torch
            self.stream = torch.cuda.current_stream(first.device).cuda_stream
        else:
            self.stream = 0

    def capsule(self, x, what: str):
        """x's DLPack capsule, x in Fortran order (a torch tensor copied into it on the device when it is not)."""
        if not is_device_array(x):
            raise TypeError(f"tprod: {what} is a {type(x).__module__}.{type(x).__name__} on the host while another "
                            f"operand is a CUDA array; give all of them on one device")
        if _is_torch(x):
            if x.requires_grad:
                raise TypeError(f"tprod: {what} is a torch.Tensor that requires grad; pass x.detach(), or use the "
                                f"autograd functions and layers of tprod.torch")
            x = x.resolve_conj().resolve_neg()
            if x.dim() == 3 and not _fortran_strides(x.shape, x.stride()):
                x = x.permute(2, 1, 0).contiguous().permute(2, 1, 0)
            return x.__dlpack__()  # torch's current stream, on which the work is enqueued: no wait needed
        # Ordered before the work's stream (DLPack's 1 for the legacy default one, 0 being reserved).
        return x.__dlpack__(stream=self.stream or 1)

    def out(self, capsule):
        """A result capsule as the caller's kind of array."""
        if self.torch:
            import torch.utils.dlpack
            return torch.utils.dlpack.from_dlpack(capsule)
        return DeviceArray(capsule, self.stream, self.native.current_device())


def _default(L):
    return _tprod.dct() if L is None else L


def _domain(call, parts):
    data, p, dtype = parts
    return call.out(data), p, dtype


def transform(A, L=None):
    """(slices, p, dtype) of L(A), as tprod.Transformed holds them."""
    c = _Call(A)
    return _domain(c, c.native.transform(c.capsule(A, "A"), _default(L), c.stream))


def inverse_transform(data, p, L, dtype):
    c = _Call(data)
    return c.out(c.native.inverse_transform(c.capsule(data, "the transform-domain slices"), p, L, dtype, c.stream))


def domain_transpose(data, p, L, dtype):
    c = _Call(data)
    return _domain(c, c.native.domain_transpose(c.capsule(data, "the transform-domain slices"), p, L, dtype,
                                                c.stream))


def domain_inverse(data, p, L, dtype):
    c = _Call(data)
    return _domain(c, c.native.domain_inverse(c.capsule(data, "the transform-domain slices"), p, L, dtype, c.stream))


def domain_frobenius_norm(data, p, L, dtype):
    c = _Call(data)
    return c.native.domain_frobenius_norm(c.capsule(data, "the transform-domain slices"), p, L, dtype, c.stream)


def product(A, B, L=None):
    c = _Call(A)
    return c.out(c.native.product(c.capsule(A, "A"), c.capsule(B, "B"), _default(L), c.stream))


def facewise(A, B):
    c = _Call(A)
    return c.out(c.native.facewise(c.capsule(A, "A"), c.capsule(B, "B"), c.stream))


def transpose(A, L=None):
    c = _Call(A)
    return c.out(c.native.transpose(c.capsule(A, "A"), _default(L), c.stream))


def inverse(A, L=None):
    c = _Call(A)
    return c.out(c.native.inverse(c.capsule(A, "A"), _default(L), c.stream))


def frobenius_norm(A):
    c = _Call(A)
    return c.native.frobenius_norm(c.capsule(A, "A"), c.stream)


def inner(A, B):
    c = _Call(A)
    return c.native.inner(c.capsule(A, "A"), c.capsule(B, "B"), c.stream)


def mode_product(A, U, mode):
    """A ×_mode U with U a host matrix (NumPy) or a torch tensor, which is copied to the host: U is small, and the
    library's device mode product takes it there."""
    c = _Call(A)
    if _is_torch(U):
        U = U.detach().cpu().numpy()
    return c.out(c.native.mode_product(c.capsule(A, "A"), np.asarray(U), mode, c.stream))


def _svd(A, L=None, full=False, rank=None, energy=None):
    """The L-SVD's parts as the host binding gives them: U, S and V on the device, sigma (host) and kept."""
    c = _Call(A)
    d = c.native._svd(c.capsule(A, "A"), _default(L), full, rank, energy, c.stream)
    return {"U": c.out(d["U"]), "S": c.out(d["S"]), "V": c.out(d["V"]), "sigma": d["sigma"], "kept": d["kept"]}


def _ranks(A, L=None, tol=-1.0):
    c = _Call(A)
    return c.native._ranks(c.capsule(A, "A"), _default(L), tol, c.stream)


def qr(A, L=None, full=False):
    c = _Call(A)
    q, r = c.native.qr(c.capsule(A, "A"), _default(L), full, c.stream)
    return c.out(q), c.out(r)


def spectral_norm(A, L=None):
    c = _Call(A)
    return c.native.spectral_norm(c.capsule(A, "A"), _default(L), c.stream)


def nuclear_norm(A, L=None):
    c = _Call(A)
    return c.native.nuclear_norm(c.capsule(A, "A"), _default(L), c.stream)


def is_orthogonal(Q, L=None, tol=-1.0):
    c = _Call(Q)
    return c.native.is_orthogonal(c.capsule(Q, "Q"), _default(L), tol, c.stream)


def is_f_diagonal(A, tol=-1.0):
    c = _Call(A)
    return c.native.is_f_diagonal(c.capsule(A, "A"), tol, c.stream)


def is_f_symmetric(A, L=None, tol=-1.0):
    c = _Call(A)
    return c.native.is_f_symmetric(c.capsule(A, "A"), _default(L), tol, c.stream)


def is_f_positive_definite(A, L=None, tol=-1.0):
    c = _Call(A)
    return c.native.is_f_positive_definite(c.capsule(A, "A"), _default(L), tol, c.stream)


def backend(x):
    """The module whose functions compute on x: this one for a CUDA array, else the host bindings."""
    return sys.modules[__name__] if is_device_array(x) else _tprod
