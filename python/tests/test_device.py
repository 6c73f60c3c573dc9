# SPDX-License-Identifier: Apache-2.0
"""CUDA arrays through DLPack (tprod._device).

Without a GPU, DLPack capsules made here with ctypes (a CUDA device, a data pointer never read) check what tprod
refuses before it touches the data, that each capsule is freed once, and the error that says there is no device.
With a GPU, torch tensors on it are computed on and compared with NumPy definitions (conftest.Reference) of the
same data; those tests are skipped, not passed, without one."""
import ctypes

import numpy as np
import pytest

import tprod
from conftest import Reference, tolerance

native = getattr(tprod._tprod, "_device", None)
cuda_build = pytest.mark.skipif(native is None, reason="tprod built without CUDA")
no_gpu = pytest.mark.skipif(native is None or native.device_count() > 0,
                            reason="a CUDA build on a machine without a GPU")


# --- DLPack 0.6's structures, for capsules made without any array library ----------------------------------------

class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_DLTENSOR = b"dltensor"

FLOAT32, FLOAT64, INT64, BFLOAT16 = (2, 32), (2, 64), (0, 64), (4, 16)


class FakeCudaArray:
    """A DLPack producer on cuda:0 (or `device`) whose data tprod must never read: it records the streams it was
    asked for and how often its deleter ran."""

    def __init__(self, shape, strides="fortran", dtype=FLOAT32, device=(2, 0), data=1 << 20):
        self.shape, self.dtype, self.device, self.data = tuple(shape), dtype, device, data
        if strides == "fortran":
            strides, step = [], 1
            for extent in self.shape:
                strides.append(step)
                step *= extent
        self.strides = strides
        self.streams, self.deleted, self._alive = [], 0, []

    def __dlpack_device__(self):
        return self.device

    def capsule(self):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * max(ndim, 1))(*self.strides)

        def deleter(_):
            self.deleted += 1
        callback = _Deleter(deleter)
        managed = _Managed(_Tensor(self.data, _Device(*self.device), ndim, _DataType(*self.dtype, 1), shape,
                                   strides, 0), None, callback)
        self._alive += [shape, strides, callback, managed]
        return _capsule_new(ctypes.addressof(managed), _DLTENSOR, None)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.capsule()


@cuda_build
@pytest.mark.parametrize("array, error, message", [
    (FakeCudaArray((2, 3, 4), dtype=INT64), TypeError, "dtype int64"),
    (FakeCudaArray((2, 3, 4), dtype=BFLOAT16), TypeError, "dtype bfloat16"),
    (FakeCudaArray((2, 3)), ValueError, r"shape \(2, 3\); a third-order tensor"),
    (FakeCudaArray((2, 3, 4, 1)), ValueError, r"shape \(2, 3, 4, 1\)"),
    (FakeCudaArray((2, 3, 4), strides=(12, 4, 1)), ValueError, r"strides \(12, 4, 1\).*Fortran order"),
    (FakeCudaArray((2, 3, 4), strides=None), ValueError, r"strides \(C order"),
    (FakeCudaArray((2, 3, 4), data=(1 << 20) + 2), ValueError, "not aligned to its 4-byte elements"),
    (FakeCudaArray((2, 3, 4), dtype=FLOAT64, data=(1 << 20) + 4), ValueError, "8-byte elements"),
])
def test_refused_before_the_data_is_read(array, error, message):
    with pytest.raises(error, match=message):
        tprod.frobenius_norm(array)
    assert array.deleted == 1, "the producer's deleter runs once, also when tprod refuses the array"
    assert array.streams == [1], "a producer other than torch is asked for the legacy default stream"


@cuda_build
def test_capsules_are_consumed_once_and_must_be_dlpack():
    array = FakeCudaArray((2, 3, 4), dtype=INT64)
    capsule = array.capsule()
    with pytest.raises(TypeError, match="int64"):
        native.frobenius_norm(capsule, 0)
    with pytest.raises(TypeError, match="not an unused DLPack capsule"):
        native.frobenius_norm(capsule, 0)
    assert array.deleted == 1
    on_host = FakeCudaArray((2, 3, 4), device=(1, 0))
    with pytest.raises(TypeError, match="DLPack device type 1"):
        native.frobenius_norm(on_host.capsule(), 0)
    assert on_host.deleted == 1


@cuda_build
def test_mixed_and_host_only_calls_say_what_to_do():
    with pytest.raises(TypeError, match="numpy.ndarray on the host while another operand is a CUDA array"):
        tprod.product(np.ones((2, 2, 2), dtype=np.float32), FakeCudaArray((2, 2, 2)))
    with pytest.raises(TypeError, match=r"tprod.hosvd computes on the CPU only.*product"):
        tprod.hosvd(FakeCudaArray((2, 2, 2)), [1, 1, 1])
    with pytest.raises(TypeError, match="from_dlpack gives host arrays"):
        tprod.from_dlpack(FakeCudaArray((2, 2, 2)))


@no_gpu
@pytest.mark.parametrize("array", [
    FakeCudaArray((2, 3, 4)),
    FakeCudaArray((1, 3, 4), strides=(99, 1, 3)),  # an extent 1's stride does not matter
    FakeCudaArray((1, 1, 5), strides=None),  # C order is Fortran order with one extent above 1
    FakeCudaArray((0, 3, 4)),
])
def test_an_acceptable_array_without_a_gpu_says_so(array):
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        tprod.product(array, FakeCudaArray((array.shape[1], 2, array.shape[2])))
    assert array.deleted == 1
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        tprod.svd(array, rank=1)
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        tprod.transform(array, tprod.dft())
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        tprod.tubal_rank(array)
    with pytest.raises(RuntimeError, match="no CUDA device is available"):
        tprod.is_f_diagonal(array)
    assert array.deleted == 5


def test_a_cuda_array_in_a_build_without_cuda(monkeypatch):
    """What a build without CUDA says (in a CUDA build, with its device module taken away for the test)."""
    if native is not None:
        monkeypatch.delattr(tprod._tprod, "_device")
    for call in (lambda a: tprod.product(a, a), lambda a: tprod.svd(a), lambda a: tprod.transform(a).T):
        array = FakeCudaArray((2, 2, 2))
        with pytest.raises(TypeError, match="built without CUDA"):
            call(array)
        assert array.streams == [], "nothing is asked of the array"


# --- On a GPU: torch tensors there ---------------------------------------------------------------------------------

torch = pytest.importorskip("torch")
gpu = pytest.mark.skipif(native is None or native.device_count() == 0 or not torch.cuda.is_available(),
                         reason="no CUDA device (or torch without CUDA): these need a GPU run")


def _cuda(x):
    return torch.from_numpy(np.ascontiguousarray(x)).cuda()


def _check(result, expected, dtype, size):
    assert isinstance(result, torch.Tensor) and result.is_cuda
    np.testing.assert_allclose(result.cpu().numpy(), expected, atol=tolerance(dtype, size) * max(1, np.abs(expected).max(initial=0)))


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(4, 3, 2, 5), (1, 1, 1, 1), (0, 3, 2, 4), (3, 0, 2, 4)])
def test_the_algebra_on_torch_cuda_tensors(dtype, shape, rng):
    m, l, n, p = shape
    a = (rng.standard_normal((m, l, p)) + (1j * rng.standard_normal((m, l, p)) if np.iscomplexobj(dtype(0)) else 0)).astype(dtype)
    b = (rng.standard_normal((l, n, p)) + (1j * rng.standard_normal((l, n, p)) if np.iscomplexobj(dtype(0)) else 0)).astype(dtype)
    A, B = _cuda(a), _cuda(b)  # C order: copied into tprod's order on the device
    size = l * p
    for L, ref in ((tprod.dct(), Reference("dct")), (tprod.dft(), Reference("dft")),
                   (tprod.identity_transform(), Reference("identity"))):
        _check(tprod.product(A, B, L), ref.product(a, b), dtype, size)
        _check(tprod.transpose(A, L), ref.transpose(a), dtype, size)
        Ahat, Bhat = tprod.transform(A, L), tprod.transform(B, L)
        assert isinstance(Ahat.data, torch.Tensor) and Ahat.data.is_cuda
        _check(tprod.inverse_transform(Ahat * Bhat), ref.product(a, b), dtype, size)
        _check(tprod.inverse_transform(2.0 * Ahat + Ahat - Ahat), 2 * a, dtype, size)
    _check(tprod.facewise(A, B), np.einsum("ilk,ljk->ijk", a, b), dtype, size)
    np.testing.assert_allclose(tprod.frobenius_norm(A), np.linalg.norm(a), rtol=tolerance(dtype, a.size))
    np.testing.assert_allclose(tprod.inner(A, A), np.vdot(a, a), rtol=tolerance(dtype, a.size))
    u = rng.standard_normal((3, p)).astype(dtype)
    _check(tprod.mode_product(A, u, 2), np.einsum("ijk,lk->ijl", a, u), dtype, p)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_factorizations_on_torch_cuda_tensors(dtype, rng):
    a = rng.standard_normal((6, 4, 5)).astype(dtype)
    A = _cuda(a)
    ref = Reference("dct")
    singular = np.stack([np.linalg.svd(s, compute_uv=False) for s in ref.slices(a.astype(np.float64))], axis=1)
    r = tprod.svd(A)
    assert all(isinstance(x, torch.Tensor) and x.is_cuda for x in (r.U, r.S, r.V))
    _check(r.reconstruct(), a, dtype, a.size)
    np.testing.assert_allclose(r.sigma, singular, atol=tolerance(dtype, a.size) * singular.max())
    t = tprod.svd(A, rank=2)
    assert t.U.shape == (6, 2, 5) and t.kept == [2] * 5
    np.testing.assert_allclose(tprod.spectral_norm(A), singular.max(), rtol=tolerance(dtype, a.size))
    np.testing.assert_allclose(tprod.nuclear_norm(A), singular.sum(), rtol=tolerance(dtype, a.size))
    low = tprod.product(_cuda(a[:, :2]), _cuda(rng.standard_normal((2, 4, 5)).astype(dtype)))
    ranks = tprod.ranks(low)
    assert ranks.tubal_rank == 2 and ranks.multi_rank == [2] * 5 and ranks.average_rank == 2
    assert tprod.tubal_rank(A) == 4
    Q, R = tprod.qr(A)
    _check(tprod.product(Q, R), a, dtype, a.size)
    assert tprod.is_orthogonal(Q) and not tprod.is_orthogonal(A)
    assert tprod.is_f_diagonal(r.S) and not tprod.is_f_diagonal(A)
    gram = tprod.product(tprod.transpose(A), A)
    assert tprod.is_f_symmetric(gram) and tprod.is_f_positive_definite(gram)
    assert not tprod.is_f_positive_definite(-1.0 * gram)
    square = rng.standard_normal((4, 4, 5)).astype(dtype) + 4 * np.eye(4, dtype=dtype)[:, :, None]
    _check(tprod.product(tprod.inverse(_cuda(square)), _cuda(square)), np.repeat(np.eye(4)[:, :, None], 5, 2),
           dtype, 4 * 5)
    with pytest.raises(tprod.ShapeError):
        tprod.product(A, A)
    with pytest.raises(tprod.NumericalError):
        tprod.inverse(torch.zeros(3, 3, 2, device="cuda", dtype=A.dtype))


@gpu
def test_on_torch_s_current_stream_and_for_other_producers(rng):
    a, b = rng.standard_normal((64, 32, 8)), rng.standard_normal((32, 16, 8))
    expected = Reference("dct").product(a, b)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        A, B = _cuda(a), _cuda(b)
        C = tprod.product(A, B)
    stream.synchronize()
    _check(C, expected, np.float64, 32 * 8)
    assert C.stride() == (1, 64, 64 * 16)

    class Producer:  # another library's CUDA array: only the DLPack protocol
        def __init__(self, t):
            self.t = t

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

    F = lambda x: _cuda(x).permute(2, 1, 0).contiguous().permute(2, 1, 0)  # noqa: E731 (Fortran order)
    r = tprod.product(Producer(F(a)), Producer(F(b)))
    assert isinstance(r, tprod.DeviceArray)
    _check(torch.from_dlpack(r), expected, np.float64, 32 * 8)
    with pytest.raises(BufferError, match="once"):
        r.__dlpack__()


@gpu
def test_lproduct_and_llinear_on_cuda():
    import tprod.torch as ttorch
    gen = torch.Generator(device="cuda").manual_seed(5)
    for L in (tprod.dct(), tprod.dft(), tprod.matrix_transform(np.eye(4) + 0.2)):
        a = torch.randn(3, 2, 4, dtype=torch.float64, device="cuda", generator=gen, requires_grad=True)
        b = torch.randn(2, 5, 4, dtype=torch.float64, device="cuda", generator=gen, requires_grad=True)
        assert torch.autograd.gradcheck(lambda x, y: ttorch.lproduct(x, y, L), (a, b), eps=1e-6, atol=1e-8), L
        np.testing.assert_allclose(ttorch.lproduct(a, b, L).detach().cpu().numpy(),
                                   ttorch.lproduct(a.detach().cpu(), b.detach().cpu(), L).numpy(), atol=1e-12)
    torch.manual_seed(0)
    layer = ttorch.LLinear(6, 3, 4).cuda()
    x = torch.randn(32, 6, 4, device="cuda")
    target = torch.randn(32, 3, 4, device="cuda")
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(layer(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0]
