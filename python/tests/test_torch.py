# SPDX-License-Identifier: Apache-2.0
"""tprod.torch: the L-product as an autograd Function and the L-linear layer as a torch.nn.Module, checked with
torch.autograd.gradcheck in double, against PyTorch's own layers where the two coincide, and in a training loop."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tprod  # noqa: E402
import tprod.torch as ttorch  # noqa: E402
from conftest import Reference  # noqa: E402


def transforms(p, gen):
    z = torch.eye(p, dtype=torch.float64) + 0.3 * torch.randn(p, p, generator=gen, dtype=torch.float64) / p ** 0.5
    return [tprod.dct(), tprod.dft(), tprod.identity_transform(), tprod.matrix_transform(z.numpy())]


@pytest.mark.parametrize("shape", [(3, 4, 2, 5), (1, 1, 1, 1), (2, 3, 4, 6)])
def test_lproduct_gradcheck(shape):
    gen = torch.Generator().manual_seed(7)
    m, l, n, p = shape
    for L in transforms(p, gen):
        a = torch.randn(m, l, p, dtype=torch.float64, generator=gen, requires_grad=True)
        b = torch.randn(l, n, p, dtype=torch.float64, generator=gen, requires_grad=True)
        assert torch.autograd.gradcheck(lambda x, y: ttorch.lproduct(x, y, L), (a, b), eps=1e-6, atol=1e-8), L


def test_lproduct_forward_matches_numpy_reference():
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(4, 3, 6, dtype=torch.float64, generator=gen)
    b = torch.randn(3, 2, 6, dtype=torch.float64, generator=gen)
    for L, ref in ((tprod.dct(), Reference("dct")), (tprod.dft(), Reference("dft"))):
        np.testing.assert_allclose(ttorch.lproduct(a, b, L).numpy(), ref.product(a.numpy(), b.numpy()), atol=1e-12)


def test_llinear_gradcheck_and_shapes():
    torch.manual_seed(5)
    for L in (tprod.dct(), tprod.dft(), tprod.identity_transform()):
        layer = ttorch.LLinear(3, 2, 4, L, dtype=torch.float64)
        x = torch.randn(5, 3, 4, dtype=torch.float64, requires_grad=True)
        assert layer(x).shape == (5, 2, 4)
        assert torch.autograd.gradcheck(lambda x, w, b: ttorch.lproduct(x, w, L) + b, (x, layer.weight, layer.bias))
        names = [n for n, _ in layer.named_parameters()]
        assert names == ["weight", "bias"] and set(layer.state_dict()) == {"weight", "bias"}


def test_p1_identity_llinear_is_torch_linear():
    """With p = 1 the L-linear layer is the ordinary linear layer: same outputs and gradients as torch.nn.Linear."""
    torch.manual_seed(11)
    layer = ttorch.LLinear(6, 3, 1, tprod.identity_transform(), dtype=torch.float64)
    linear = torch.nn.Linear(6, 3, dtype=torch.float64)
    with torch.no_grad():
        linear.weight.copy_(layer.weight[:, :, 0].T)
        linear.bias.copy_(layer.bias[0, :, 0])
    x = torch.randn(8, 6, dtype=torch.float64)
    y_l, y_t = layer(x[:, :, None])[:, :, 0], linear(x)
    torch.testing.assert_close(y_l, y_t, rtol=0, atol=1e-13)
    y_l.square().sum().backward()
    y_t.square().sum().backward()
    torch.testing.assert_close(layer.weight.grad[:, :, 0], linear.weight.grad.T, rtol=0, atol=1e-12)
    torch.testing.assert_close(layer.bias.grad[0, :, 0], linear.bias.grad, rtol=0, atol=1e-12)


def test_training_loop_learns():
    """An L-linear regression trained by torch.optim.Adam: the loss falls by two orders of magnitude."""
    torch.manual_seed(2)
    target = ttorch.LLinear(4, 3, 8, tprod.dct(), dtype=torch.float32)
    model = torch.nn.Sequential(ttorch.LLinear(4, 3, 8, tprod.dct(), dtype=torch.float32))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    x = torch.randn(64, 4, 8)
    with torch.no_grad():
        y = target(x)
    losses = []
    for _ in range(150):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-2 * losses[0], (losses[0], losses[-1])


def test_bad_input_raises():
    a = torch.randn(3, 4, 5)
    with pytest.raises(ValueError, match="3 dimensions"):
        ttorch.lproduct(a[:, :, 0], a)
    with pytest.raises(TypeError, match="int64"):
        ttorch.lproduct(torch.ones(2, 2, 2, dtype=torch.int64), torch.ones(2, 2, 2, dtype=torch.int64))
    with pytest.raises(TypeError, match="one dtype"):
        ttorch.lproduct(a, torch.randn(4, 2, 5, dtype=torch.float64))
    with pytest.raises(tprod.ShapeError):
        ttorch.lproduct(a, a)
    with pytest.raises(ValueError, match="positive"):
        ttorch.LLinear(0, 3, 4)
    with pytest.raises(ValueError, match=r"\(rows, 3, 4\)"):
        ttorch.LLinear(3, 2, 4)(torch.randn(5, 3, 5))
    with pytest.raises(TypeError, match="complex Z"):
        z = np.eye(3) + 0.1j
        x = torch.randn(2, 2, 3, dtype=torch.float64, requires_grad=True)
        ttorch.lproduct(x, x, tprod.matrix_transform(z)).sum().backward()


@pytest.mark.skipif(not torch.cuda.is_available() or hasattr(tprod._tprod, "_device"),
                    reason="needs a GPU and a tprod built without CUDA (test_device.py tests the CUDA build)")
def test_cuda_tensor_is_refused_by_a_cpu_build():
    with pytest.raises(TypeError, match="built without CUDA"):
        ttorch.lproduct(torch.randn(2, 2, 2, device="cuda"), torch.randn(2, 2, 2, device="cuda"))


def test_torch_tensors_into_every_kind_of_function():
    """CPU tensors go in through DLPack, without a copy; the results equal those of the same data as NumPy
    arrays (which test_algebra and the others check against NumPy definitions)."""
    gen = torch.Generator().manual_seed(9)
    a = torch.randn(4, 3, 5, dtype=torch.float64, generator=gen)
    b = torch.randn(3, 2, 5, dtype=torch.float64, generator=gen)
    an, bn = a.numpy(), b.numpy()
    np.testing.assert_array_equal(tprod.product(a, b), tprod.product(an, bn))
    np.testing.assert_array_equal(tprod.product(A=a, B=b, L=tprod.dft()), tprod.product(an, bn, tprod.dft()))
    np.testing.assert_array_equal(tprod.svd(a, rank=2).S, tprod.svd(an, rank=2).S)
    np.testing.assert_array_equal(tprod.transform(a).data, tprod.transform(an).data)
    np.testing.assert_array_equal(tprod.hosvd(a, [2, 2, 2]).core, tprod.hosvd(an, [2, 2, 2]).core)
    lap = torch.from_numpy(tprod.laplacian(tprod.adjacency(4, [(0, 1), (1, 2), (2, 3)])))
    np.testing.assert_array_equal(tprod.polynomial_filter(lap, [1.0, 0.5], a),
                                  tprod.polynomial_filter(lap.numpy(), [1.0, 0.5], an))
    # a tensor in tprod's own (Fortran) order is viewed, not copied: the view shares the tensor's memory
    f = torch.from_numpy(np.asfortranarray(an))
    view = tprod.from_dlpack(f)
    assert np.shares_memory(view, f.numpy()) and view.flags["F_CONTIGUOUS"]
    assert tprod.from_dlpack(an) is an  # NumPy arrays pass unchanged


class _ArrayOnDevice:
    """A DLPack producer that says it lives on a CUDA device (type 2), as a CUDA tensor would."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("tprod read a device array")


def test_dlpack_refusals():
    with pytest.raises(TypeError, match="tprod.hosvd computes on the CPU only"):
        tprod.hosvd(_ArrayOnDevice(), [1, 1, 1])
    with pytest.raises(TypeError, match="from_dlpack gives host arrays"):
        tprod.from_dlpack(_ArrayOnDevice())
    with pytest.raises(TypeError, match="requires grad"):
        tprod.frobenius_norm(torch.ones(2, 2, 2, requires_grad=True))
    with pytest.raises(TypeError, match="DLPack"):
        tprod.frobenius_norm(torch.ones(2, 2, 2, dtype=torch.complex128).conj())
    with pytest.raises(TypeError, match="dtype int64"):
        tprod.product(torch.ones(2, 2, 2, dtype=torch.int64), torch.ones(2, 2, 2, dtype=torch.int64))
