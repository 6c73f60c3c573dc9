# SPDX-License-Identifier: Apache-2.0
"""tprod.torch's paper-002 layers, the MPO linear layer and tensorized spectral attention, against PyTorch
references of their definitions written here (W contracted from the cores with explicit index bookkeeping, the
attention graph, time graph and filter per sequence), outputs and every gradient; gradcheck in double; a training
loop; bad input."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tprod  # noqa: E402
import tprod.torch as ttorch  # noqa: E402


def dense_from_cores(cores):
    """W (I x J) of MPO cores G_n (R_{n-1} x I_n x J_n x R_n): W[i, j] = G_1[:, i_1, j_1, :] ... G_N[:, i_N, j_N, :]
    with little-endian i = i_1 + I_1 (i_2 + ...), built index by index (differentiable in the cores)."""
    rows, cols = [c.shape[1] for c in cores], [c.shape[2] for c in cores]
    entries = []
    for i in range(math.prod(rows)):
        ii = np.unravel_index(i, rows, order="F")
        row = []
        for j in range(math.prod(cols)):
            jj = np.unravel_index(j, cols, order="F")
            m = cores[0][:, ii[0], jj[0], :]
            for n in range(1, len(cores)):
                m = m @ cores[n][:, ii[n], jj[n], :]
            row.append(m[0, 0])
        entries.append(torch.stack(row))
    return torch.stack(entries)


def cores_of(module, prefix):
    names = sorted((n for n, _ in module.named_parameters() if n.startswith(prefix)),
                   key=lambda n: int(n.rsplit("_", 1)[1]))
    return [module.get_parameter(n) for n in names]


def randomize(module, gen, scale=0.3):
    with torch.no_grad():
        for param in module.parameters():
            param.add_(scale * torch.randn(param.shape, dtype=param.dtype, generator=gen))


def test_mpo_linear_matches_the_contracted_weight():
    torch.manual_seed(4)
    layer = ttorch.LMPOLinear([2, 3, 2], [3, 1, 2], ranks=[2, 3], dtype=torch.float64)
    assert [tuple(c.shape) for c in cores_of(layer, "core_")] == [(1, 2, 3, 2), (2, 3, 1, 3), (3, 2, 2, 1)]
    X = torch.randn(4, 5, 12, dtype=torch.float64, requires_grad=True)  # any leading dimensions
    Y = layer(X)
    assert Y.shape == (4, 5, 6)
    ref_cores = [c.detach().clone().requires_grad_() for c in cores_of(layer, "core_")]
    Xr = X.detach().clone().requires_grad_()
    W = dense_from_cores(ref_cores)
    torch.testing.assert_close(layer.weight(), W.detach(), rtol=0, atol=1e-13)
    Yr = Xr @ W
    torch.testing.assert_close(Y, Yr, rtol=0, atol=1e-12)
    G = torch.randn_like(Y)
    Y.backward(G)
    Yr.backward(G)
    torch.testing.assert_close(X.grad, Xr.grad, rtol=0, atol=1e-12)
    for c, r in zip(cores_of(layer, "core_"), ref_cores):
        torch.testing.assert_close(c.grad, r.grad, rtol=0, atol=1e-11)


def test_mpo_linear_from_dense_is_exact_and_trains():
    torch.manual_seed(5)
    W = torch.randn(8, 4, dtype=torch.float64)
    layer = ttorch.LMPOLinear.from_dense(W, [2, 4], [2, 2])
    torch.testing.assert_close(layer.weight(), W, rtol=0, atol=1e-12)
    X = torch.randn(10, 8, dtype=torch.float64)
    torch.testing.assert_close(layer(X), X @ W, rtol=0, atol=1e-12)
    # a float32 layer fitted to a linear map in a plain PyTorch loop: the loss falls
    target = torch.randn(16, 8)
    student = ttorch.LMPOLinear([4, 4], [2, 4], ranks=4)
    opt = torch.optim.Adam(student.parameters(), lr=0.05)
    X = torch.randn(64, 16)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(student(X), X @ target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    state = student.state_dict()
    assert set(state) == {"core_0", "core_1"}
    copy = ttorch.LMPOLinear([4, 4], [2, 4], ranks=4)
    copy.load_state_dict(state)
    torch.testing.assert_close(copy(X), student(X), rtol=0, atol=0)


def reference_tsa(X, module, lengths, damping):
    """Paper 002, Alg. 1, per head and sequence, from the module's parameters: K = X W_k, V = X W_v,
    Theta = ReLU(K K^T / d_k) off the diagonal and the padding, Psi = Omega * Theta, Y = f(Psi) V; heads side by
    side through the projection."""
    batch, tokens, _ = X.shape
    l1 = torch.arange(tokens, dtype=X.dtype)
    omega = 0.5 * damping ** (l1[:, None] - l1[None, :]).abs()
    omega.fill_diagonal_(0)
    heads = sorted({n.split(".")[0] for n, _ in module.named_parameters() if n.startswith("head_")})
    outs = []
    for h in heads:
        wk = dense_from_cores(cores_of(module, f"{h}.key.core_"))
        wv = dense_from_cores(cores_of(module, f"{h}.value.core_"))
        alpha = dict(module.named_parameters()).get(f"{h}.alpha")
        alpha = torch.ones(2, dtype=X.dtype) if alpha is None else alpha.reshape(-1)
        d_k = wk.shape[1]
        ys = []
        for b in range(batch):
            n = lengths[b]
            k, v = X[b] @ wk, X[b] @ wv
            theta = torch.relu(k[:n] @ k[:n].T / d_k) * (1 - torch.eye(n, dtype=X.dtype))
            psi = omega[:n, :n] * theta
            y, power = alpha[0] * v[:n], v[:n]
            for a in alpha[1:]:
                power = psi @ power
                y = y + a * power
            ys.append(torch.cat([y, alpha[0] * v[n:]]))
        outs.append(torch.stack(ys))
    wp = dense_from_cores(cores_of(module, "projection.core_"))
    return torch.cat(outs, dim=2) @ wp


@pytest.mark.parametrize("heads,filter_order", [(1, 0), (2, 3)])
def test_spectral_attention_matches_reference(heads, filter_order):
    torch.manual_seed(6)
    damping = 0.7
    layer = ttorch.LSpectralAttention([2, 2], [2, 2], rank=2, heads=heads, filter_order=filter_order,
                                      damping=damping, dtype=torch.float64)
    randomize(layer, torch.Generator().manual_seed(1))
    X = torch.randn(3, 5, 4, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    Y = layer(X, key_padding_mask=mask)
    assert Y.shape == (3, 5, 4)
    Xr = X.detach().clone().requires_grad_()
    Yr = reference_tsa(Xr, layer, [5, 3, 4], damping)
    torch.testing.assert_close(Y, Yr, rtol=0, atol=1e-12)
    G = torch.randn_like(Y)
    Y.backward(G)
    grads = torch.autograd.grad(reference_tsa(Xr, layer, [5, 3, 4], damping), [Xr, *layer.parameters()], G)
    torch.testing.assert_close(X.grad, grads[0], rtol=0, atol=1e-11)
    for (name, param), ref in zip(layer.named_parameters(), grads[1:]):
        torch.testing.assert_close(param.grad, ref, rtol=0, atol=1e-11, msg=name)
    # without the mask the padded tokens take part: a different output, so the mask was used
    assert not torch.allclose(layer(X), Y)


@pytest.mark.parametrize("make", [
    lambda: ttorch.LMPOLinear([2, 3], [3, 2], ranks=2, dtype=torch.float64),
    lambda: ttorch.LSpectralAttention([2, 2], [2, 2], heads=2, filter_order=3, dtype=torch.float64),
    lambda: ttorch.LSpectralAttention([4], [2], dtype=torch.float64)])
def test_gradcheck(make):
    torch.manual_seed(7)
    layer = make()
    randomize(layer, torch.Generator().manual_seed(2), scale=0.2)
    params = list(layer.parameters())
    shape = (5, layer.in_features) if isinstance(layer, ttorch.LMPOLinear) else (2, 4, layer.in_features)
    X = torch.randn(*shape, dtype=torch.float64, requires_grad=True)

    def run(x, *values):
        for param, value in zip(params, values):
            assert param.data_ptr() == value.data_ptr()
        return layer(x)

    # ReLU's kink: the scores of this seed keep away from 0 by more than eps
    assert torch.autograd.gradcheck(run, (X, *params), eps=1e-6, atol=1e-7)


def test_bad_input():
    mpo = ttorch.LMPOLinear([2, 2], [2, 2])
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\)"):
        mpo(torch.ones(3, 5))
    with pytest.raises(TypeError, match="float32"):
        mpo(torch.ones(3, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="same length"):
        ttorch.LMPOLinear([2, 2], [4])
    with pytest.raises(ValueError, match="positive"):
        ttorch.LMPOLinear([2, 0], [2, 2])
    with pytest.raises(ValueError, match="rank|N - 1"):
        ttorch.LMPOLinear([2, 2, 2], [2, 2, 2], ranks=[2])
    with pytest.raises(TypeError, match="float32 or torch.float64"):
        ttorch.LMPOLinear([2, 2], [2, 2], dtype=torch.float16)
    tsa = ttorch.LSpectralAttention([2, 2], [2, 2])
    with pytest.raises(ValueError, match=r"\(batch, tokens, 4\)"):
        tsa(torch.ones(3, 4))
    with pytest.raises(ValueError, match="at least one"):
        tsa(torch.ones(0, 3, 4))
    with pytest.raises(ValueError, match="pad the end"):
        tsa(torch.ones(1, 3, 4), key_padding_mask=torch.tensor([[True, False, False]]))
    with pytest.raises(ValueError, match="damping"):
        ttorch.LSpectralAttention([2, 2], [2, 2], damping=1.0)
    with pytest.raises(ValueError, match="head"):
        ttorch.LSpectralAttention([2, 2], [2, 2], heads=0)
    with pytest.raises(ValueError, match="causal"):
        tsa._call_layer(torch.ones(3, 4), 1, causal=True)
