# SPDX-License-Identifier: Apache-2.0
"""tprod.torch's C++ layers (L-multi-head attention, the L-Transformer encoder layer): equal to PyTorch's own
layers at p = 1, equal to a PyTorch reference of the definitions written here for p > 1 (the transform as a matrix
along the slices, then per-slice attention, LayerNorm and FFN), gradcheck in double, a training loop, state_dict,
and bad input."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tprod  # noqa: E402
import tprod.torch as ttorch  # noqa: E402
from conftest import dct_matrix  # noqa: E402


def transform_matrix(L, p):
    return torch.from_numpy(dct_matrix(p) if L.name == "dct" else np.eye(p) if L.name == "identity" else L.matrix)


def hat(x, z):
    """x x_3 Z for rows x width x p."""
    return torch.einsum("rwk,lk->rwl", x, z)


def slice_mm(x, w):
    """Per-slice products x_k w_k."""
    return torch.einsum("rik,ijk->rjk", x, w)


def reference_attention_hat(xh, prm, heads, batch, causal, lengths):
    """Paper 000, Alg. 2 on transform-domain rows (B*T) x width x p: per slice and head, softmax(QK^T/sqrt(dh))V."""
    rows, w, p = xh.shape
    tokens, dh = rows // batch, w // heads
    qkv = slice_mm(xh, prm["w_qkv"]) + (prm["b_qkv"] if "b_qkv" in prm else 0)
    q, k, v = (qkv[:, i * w:(i + 1) * w, :].reshape(batch, tokens, heads, dh, p).permute(4, 0, 2, 1, 3)
               for i in range(3))  # p x B x heads x T x dh
    scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
    keep = torch.ones(batch, tokens, tokens, dtype=torch.bool)
    if causal:
        keep &= torch.ones(tokens, tokens, dtype=torch.bool).tril()
    for b, n in enumerate(lengths):
        keep[b, :, n:] = False
    scores = scores.masked_fill(~keep[None, :, None], float("-inf"))
    h = (torch.softmax(scores, dim=-1) @ v).permute(1, 3, 2, 4, 0).reshape(rows, w, p)
    return slice_mm(h, prm["w_o"]) + (prm["b_o"] if "b_o" in prm else 0)


def reference_layer_norm(s, g, b, kind, eps):
    mean = s.mean(dim=1, keepdim=True)
    var = s.var(dim=1, unbiased=False, keepdim=True)
    scale = torch.sqrt(var + eps) if kind == "original_domain" else torch.sqrt(var) + eps
    return g * (s - mean) / scale + b


def reference_encoder(X, prm, cfg, z, causal=False, lengths=()):
    """Paper 000 eq. 4-5 (post) and paper 001 eq. 5.9-5.10 (pre), the residual stream in the LayerNorm's domain."""
    B, T, w, p = X.shape
    act = {"relu": torch.relu, "gelu": torch.nn.functional.gelu,
           "gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh")}[cfg["activation"]]
    z_inv = torch.linalg.inv(z)
    original = cfg["norm"] == "original_domain"
    to_f, from_f = ((lambda s: hat(s, z)), (lambda s: hat(s, z_inv))) if original else ((lambda s: s), (lambda s: s))
    attn = {k[5:]: v for k, v in prm.items() if k.startswith("attn.")}

    def f_attn(s):
        return from_f(reference_attention_hat(to_f(s), attn, cfg["heads"], B, causal, lengths))

    def f_ffn(s):
        h = slice_mm(to_f(s), prm["ffn.w1"]) + prm.get("ffn.b1", 0)
        return from_f(slice_mm(act(h), prm["ffn.w2"]) + prm.get("ffn.b2", 0))

    def ln(s, i):
        return reference_layer_norm(s, prm[f"ln{i}.gamma"], prm[f"ln{i}.beta"], cfg["norm"], cfg["eps"])

    s = X.reshape(B * T, w, p)
    s = s if original else hat(s, z)
    for i, f in ((1, f_attn), (2, f_ffn)):
        s = s + f(ln(s, i)) if cfg["norm_first"] else ln(s + f(s), i)
    return (s if original else hat(s, z_inv)).reshape(B, T, w, p)


def params_of(module):
    return {name: param for name, param in module.named_parameters()}


def randomize(module, gen, scale=0.5):
    """Random Γ and ℬ too (they start at 1 and 0), so that the tests see them."""
    with torch.no_grad():
        for param in module.parameters():
            param.add_(scale * torch.randn(param.shape, dtype=param.dtype, generator=gen))


@pytest.mark.parametrize("norm_first,activation", [(False, "relu"), (True, "gelu")])
def test_encoder_p1_equals_torch_transformer_encoder_layer(norm_first, activation):
    torch.manual_seed(11)
    d, heads, hidden, B, T = 8, 2, 12, 3, 5
    ours = ttorch.LTransformerEncoderLayer(d, 1, heads, hidden, tprod.identity_transform(), activation=activation,
                                           norm_first=norm_first, dtype=torch.float64)
    theirs = torch.nn.TransformerEncoderLayer(d, heads, hidden, dropout=0.0, activation=activation, batch_first=True,
                                              norm_first=norm_first, dtype=torch.float64)
    randomize(ours, torch.Generator().manual_seed(1))
    matrix, row = (lambda t: t[:, :, 0].T), (lambda t: t[0, :, 0])
    mapping = {  # PyTorch's parameter: ours, and how PyTorch stores it (y = x W^T + b)
        "self_attn.in_proj_weight": ("attn.w_qkv", matrix), "self_attn.in_proj_bias": ("attn.b_qkv", row),
        "self_attn.out_proj.weight": ("attn.w_o", matrix), "self_attn.out_proj.bias": ("attn.b_o", row),
        "linear1.weight": ("ffn.w1", matrix), "linear1.bias": ("ffn.b1", row),
        "linear2.weight": ("ffn.w2", matrix), "linear2.bias": ("ffn.b2", row),
        "norm1.weight": ("ln1.gamma", row), "norm1.bias": ("ln1.beta", row),
        "norm2.weight": ("ln2.gamma", row), "norm2.bias": ("ln2.beta", row)}
    P = params_of(ours)
    assert set(mapping) == {name for name, _ in theirs.named_parameters()}
    assert {name for name, _ in mapping.values()} == set(P)
    with torch.no_grad():
        for name, param in theirs.named_parameters():
            param.copy_(mapping[name][1](P[mapping[name][0]]))
    X = torch.randn(B, T, d, dtype=torch.float64)
    mask = torch.zeros(B, T, dtype=torch.bool)
    mask[1, 3:] = True  # the second sequence has 3 valid keys
    xa, xb = X.clone().requires_grad_(), X.clone().requires_grad_()
    ya = ours(xa.unsqueeze(-1), key_padding_mask=mask).squeeze(-1)
    yb = theirs(xb, src_key_padding_mask=mask)
    torch.testing.assert_close(ya, yb, rtol=0, atol=1e-12)
    G = torch.randn(B, T, d, dtype=torch.float64)
    (ya * G).sum().backward()
    (yb * G).sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, rtol=0, atol=1e-12)
    for name, param in theirs.named_parameters():  # the gradients map as the parameters do
        ours_name, as_theirs = mapping[name]
        torch.testing.assert_close(as_theirs(P[ours_name].grad), param.grad, rtol=0, atol=1e-12, msg=name)


def test_attention_p1_equals_torch_multihead_attention():
    torch.manual_seed(12)
    d, heads, B, T = 6, 3, 2, 4
    ours = ttorch.LMultiheadAttention(d, heads, 1, tprod.identity_transform(), dtype=torch.float64)
    theirs = torch.nn.MultiheadAttention(d, heads, batch_first=True, dtype=torch.float64)
    P = params_of(ours)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(P["w_qkv"][:, :, 0].T)
        theirs.in_proj_bias.copy_(P["b_qkv"][0, :, 0])
        theirs.out_proj.weight.copy_(P["w_o"][:, :, 0].T)
        theirs.out_proj.bias.copy_(P["b_o"][0, :, 0])
    X = torch.randn(B, T, d, dtype=torch.float64)
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    ya = ours(X.unsqueeze(-1), causal=True).squeeze(-1)
    yb, _ = theirs(X, X, X, attn_mask=causal, need_weights=False)
    torch.testing.assert_close(ya, yb, rtol=0, atol=1e-12)


@pytest.mark.parametrize("L", [tprod.dct(), tprod.matrix_transform(np.array([[1.0, 0.5, 0.0], [0.2, 1.0, 0.3],
                                                                                 [0.0, -0.4, 1.0]]))])
def test_attention_matches_reference(L):
    torch.manual_seed(13)
    w, heads, p, B, T = 4, 2, 3, 2, 5
    layer = ttorch.LMultiheadAttention(w, heads, p, L, dtype=torch.float64)
    X = torch.randn(B, T, w, p, dtype=torch.float64)
    z = transform_matrix(L, p)
    for causal, lengths in ((False, [5, 2]), (True, [])):
        mask = torch.arange(T)[None, :] >= torch.tensor(lengths)[:, None] if lengths else None
        Y = layer(X, causal=causal, key_padding_mask=mask)
        xh = hat(X.reshape(B * T, w, p), z)
        ref = hat(reference_attention_hat(xh, params_of(layer), heads, B, causal, lengths), torch.linalg.inv(z))
        torch.testing.assert_close(Y, ref.reshape(B, T, w, p), rtol=0, atol=1e-12)


@pytest.mark.parametrize("cfg", [
    dict(activation="relu", norm_first=False, norm="original_domain"),
    dict(activation="gelu", norm_first=True, norm="original_domain"),
    dict(activation="gelu_tanh", norm_first=True, norm="transform_domain"),
    dict(activation="relu", norm_first=False, norm="transform_domain")])
def test_encoder_matches_reference(cfg):
    torch.manual_seed(14)
    w, p, heads, hidden, B, T = 4, 3, 2, 6, 2, 3
    layer = ttorch.LTransformerEncoderLayer(w, p, heads, hidden, tprod.dct(), dtype=torch.float64, **cfg)
    randomize(layer, torch.Generator().manual_seed(2))
    X = torch.randn(B, T, w, p, dtype=torch.float64)
    full = dict(cfg, heads=heads, eps=1e-5)
    ref = reference_encoder(X, params_of(layer), full, transform_matrix(tprod.dct(), p), causal=True)
    torch.testing.assert_close(layer(X, causal=True), ref, rtol=0, atol=1e-11)


@pytest.mark.parametrize("make", [
    lambda: ttorch.LMultiheadAttention(4, 2, 3, dtype=torch.float64),
    lambda: ttorch.LMultiheadAttention(4, 2, 3, variant="t_softmax", bias=False, dtype=torch.float64),
    lambda: ttorch.LMultiheadAttention(4, 2, 2, variant="dimension_wise", dtype=torch.float64),
    lambda: ttorch.LTransformerEncoderLayer(4, 3, 2, 5, dtype=torch.float64),
    lambda: ttorch.LTransformerEncoderLayer.tcp_vit(4, 3, 2, 2, dtype=torch.float64),
    lambda: ttorch.LTransformerEncoderLayer(2, 1, 1, 3, tprod.identity_transform(), dtype=torch.float64)])
def test_layers_gradcheck(make):
    torch.manual_seed(15)
    layer = make()
    randomize(layer, torch.Generator().manual_seed(3), scale=0.2)
    width, p = layer._width, layer._p
    X = torch.randn(2, 3, width, p, dtype=torch.float64, requires_grad=True)
    params = list(layer.parameters())
    causal = getattr(layer, "variant", "spectral") != "dimension_wise"

    def run(x, *values):  # the layer with the parameters gradcheck perturbs (they share the layer's memory)
        for param, value in zip(params, values):
            assert param.data_ptr() == value.data_ptr()
        return layer(x, causal=causal)

    assert torch.autograd.gradcheck(run, (X, *params), eps=1e-6, atol=1e-7)


def test_paper000_folds_heads_and_width():
    layer = ttorch.LTransformerEncoderLayer.paper000(16, 4, 32, 4)
    assert (layer.config["width"], layer.config["heads"], layer.config["hidden"]) == (4, 1, 8)
    assert layer(torch.randn(2, 3, 4, 4)).shape == (2, 3, 4, 4)
    with pytest.raises(ValueError, match="must divide"):
        ttorch.LTransformerEncoderLayer.paper000(16, 4, 32, 3)


def test_training_loop_state_dict_and_replaced_parameters():
    torch.manual_seed(16)
    w, p, B, T = 4, 2, 8, 5
    model = torch.nn.ModuleDict({"enc": ttorch.LTransformerEncoderLayer(w, p, 2, 8), "head": torch.nn.Linear(w * p, 2)})
    X = torch.randn(B, T, w, p)
    labels = (X[:, :, 0, 0].sum(dim=1) > 0).long()

    def loss_of():
        return torch.nn.functional.cross_entropy(model["head"](model["enc"](X).mean(dim=1).reshape(B, -1)), labels)

    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    first = loss_of().item()
    for _ in range(60):
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first
    # state_dict into a new layer reproduces the outputs
    copy = ttorch.LTransformerEncoderLayer(w, p, 2, 8)
    copy.load_state_dict(model["enc"].state_dict())
    torch.testing.assert_close(copy(X), model["enc"](X), rtol=0, atol=0)
    # a parameter whose .data is replaced is still what the layer computes with
    before = copy(X)
    copy.ffn.w2.data = copy.ffn.w2.data * 2
    assert not torch.equal(copy(X), before)
    copy.ffn.w2.data = copy.ffn.w2.data / 2
    torch.testing.assert_close(copy(X), before, rtol=0, atol=1e-6)


def test_bad_input():
    layer = ttorch.LTransformerEncoderLayer(4, 2, 2, 6)
    with pytest.raises(ValueError, match=r"takes \(batch, tokens, 4, 2\)"):
        layer(torch.randn(3, 4, 2))
    with pytest.raises(ValueError, match=r"takes \(batch, tokens, 4, 2\)"):
        layer(torch.randn(2, 3, 5, 2))
    with pytest.raises(TypeError, match="float64"):
        layer(torch.randn(2, 3, 4, 2, dtype=torch.float64))
    with pytest.raises(TypeError, match="float16"):
        layer(torch.randn(2, 3, 4, 2).half())
    with pytest.raises(ValueError, match="at least one"):
        layer(torch.randn(0, 3, 4, 2))
    with pytest.raises(ValueError, match="pad the end"):
        layer(torch.randn(2, 3, 4, 2), key_padding_mask=torch.tensor([[True, False, False], [False, False, False]]))
    with pytest.raises(ValueError, match="bool tensor of shape"):
        layer(torch.randn(2, 3, 4, 2), key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="keeps real tensors real"):
        ttorch.LMultiheadAttention(4, 2, 3, tprod.dft())
    with pytest.raises(ValueError, match="heads"):
        ttorch.LMultiheadAttention(4, 3, 3)
    with pytest.raises(ValueError, match="activation 'tanh' is not one of relu, gelu, gelu_tanh"):
        ttorch.LTransformerEncoderLayer(4, 2, 2, 6, activation="tanh")
    with pytest.raises(TypeError, match="float32 or torch.float64"):
        ttorch.LMultiheadAttention(4, 2, 3, dtype=torch.float16)
    layer.double()  # replaces every parameter's data with a float64 copy: refused, not silently ignored
    with pytest.raises(TypeError, match="this layer computes in float32"):
        layer(torch.randn(2, 3, 4, 2, dtype=torch.float64))
    if torch.cuda.is_available():
        with pytest.raises(TypeError, match="cuda"):
            ttorch.LMultiheadAttention(4, 2, 3)(torch.randn(1, 2, 4, 3, device="cuda"))
    inner = ttorch.LMultiheadAttention(4, 2, 3)._layer  # the C++ layer under the module
    with pytest.raises(ValueError, match="2 parameters given, the layer has 4"):
        inner.forward(np.zeros((2, 4, 3), np.float32), 1, parameters=[a for _, a in inner.parameters()][:2])
    with pytest.raises(ValueError, match="not whole sequences|rows"):
        inner.forward(np.zeros((0, 4, 3), np.float32), 1)
    with pytest.raises(ValueError, match="dimension-wise|causal"):
        ttorch.LMultiheadAttention(4, 2, 2, variant="dimension_wise")(torch.randn(1, 2, 4, 2), causal=True)


@pytest.mark.parametrize("make,shapes", [
    (lambda: ttorch.LTransformerEncoderLayer(4, 3, 2, 5, dtype=torch.float64), [(2, 3, 4, 3), (1, 5, 4, 3)]),
    (lambda: ttorch.LTransformerEncoderLayer.tcp_vit(4, 3, 2, 2, dtype=torch.float64), [(2, 3, 4, 3), (3, 2, 4, 3)]),
    (lambda: ttorch.LMultiheadAttention(4, 2, 3, dtype=torch.float64), [(2, 3, 4, 3), (1, 5, 4, 3)]),
    (lambda: ttorch.LSpectralAttention([2, 2], [2, 2], heads=2, filter_order=2, dtype=torch.float64),
     [(2, 3, 4), (1, 6, 4)]),
    (lambda: ttorch.LMPOLinear([2, 2], [3, 2], dtype=torch.float64), [(5, 4), (2, 3, 4)])])
def test_interleaved_passes_keep_their_own_state(make, shapes):
    """The layer reuses its scratch and recycles the states saved for backward passes; two forward passes of
    different shapes before either backward pass must give the gradients of two separate steps."""
    torch.manual_seed(21)
    layer = make()
    randomize(layer, torch.Generator().manual_seed(4), scale=0.2)
    xs = [torch.randn(*s, dtype=torch.float64) for s in shapes]
    separate_x, separate_p = [], [torch.zeros_like(p) for p in layer.parameters()]
    for k, x in enumerate(xs):
        x = x.clone().requires_grad_()
        layer.zero_grad()
        ((k + 1) * layer(x).square().sum()).backward()
        separate_x.append(x.grad)
        for total, p in zip(separate_p, layer.parameters()):
            total += p.grad
    layer.zero_grad()
    inputs = [x.clone().requires_grad_() for x in xs]
    outputs = [layer(x) for x in inputs]  # both forward passes first
    sum((k + 1) * y.square().sum() for k, y in enumerate(outputs)).backward()
    for x, ref in zip(inputs, separate_x):
        torch.testing.assert_close(x.grad, ref, rtol=0, atol=1e-12)
    for p, ref in zip(layer.parameters(), separate_p):
        torch.testing.assert_close(p.grad, ref, rtol=0, atol=1e-11)


def test_backward_twice_with_retain_graph():
    """A pass's saved state stays with its graph until the graph goes: a second backward pass over a retained graph
    gives the same gradients again."""
    torch.manual_seed(22)
    layer = ttorch.LTransformerEncoderLayer(4, 3, 2, 5, dtype=torch.float64)
    x = torch.randn(2, 3, 4, 3, dtype=torch.float64, requires_grad=True)
    y = layer(x).square().sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    layer(torch.randn(1, 2, 4, 3, dtype=torch.float64)).sum().backward()  # another pass in between
    x.grad = None
    y.backward()
    torch.testing.assert_close(x.grad, first, rtol=0, atol=0)
