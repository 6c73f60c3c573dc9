# SPDX-License-Identifier: Apache-2.0
"""tprod inside PyTorch models: the L-product as an autograd Function, and tprod's layers as torch.nn.Modules.

Forward and backward passes run tprod's kernels. Tensors are real (float32 or float64). ``lproduct`` and
``LLinear`` compute where their tensors are, on the CPU or (in a CUDA build) on a CUDA device, on the stream torch
is using; the C++ layers below them compute on the CPU.

* ``lproduct`` and ``LLinear``: the L-product and the L-linear layer, with their parameters in the original domain;
* ``LMultiheadAttention`` and ``LTransformerEncoderLayer``: tprod's C++ layers (L-multi-head attention; the
  encoder layer in paper 000's post-norm form, paper 001's pre-norm TCP-ViT form, or between);
* ``LMPOLinear`` and ``LSpectralAttention``: the MPO linear layer and tensorized spectral attention (paper 002),
  on tokens as vectors.

The C++ layers' parameters are the layer's own, in its own domain (projections in the transform domain, MPO
cores), shared with it without a copy, so PyTorch's optimizers update the layer in place.

The L-product's gradients follow from its adjoint:

* for the DCT, the DFT, the identity (ZᵀZ = cI): dA = G *_L Bᵀ and dB = Aᵀ *_L G (ᵀ the L-transpose);
* for a general real Z: Ĝ = G ×₃ Z⁻ᵀ, dÂ_k = Ĝ_k B̂_kᵀ, dB̂_k = Â_kᵀ Ĝ_k, and dA = dÂ ×₃ Zᵀ (likewise dB).

PyTorch's tensors are in C order, so tprod copies each input once into its own (Fortran) order; the results
come back without a copy.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np
import torch

from . import Transform, _tprod, dct, facewise, mode_product, product, transpose

__all__ = ["lproduct", "LProduct", "LLinear", "LMultiheadAttention", "LTransformerEncoderLayer", "LMPOLinear",
           "LSpectralAttention"]


def _array(t: torch.Tensor, what: str, ndim: int = 3, cuda: bool = False):
    """t, detached, as tprod's functions take it: a NumPy array over its memory on the CPU, or (with cuda) the
    detached tensor itself on a CUDA device."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"tprod.torch: {what} is {type(t).__name__}, not a torch.Tensor")
    if t.device.type != "cpu" and not (cuda and t.device.type == "cuda"):
        raise TypeError(f"tprod.torch: {what} is on {t.device}, and this computes on the CPU" +
                        (" or a CUDA device" if cuda else " only") + ": move it with .cpu()")
    if t.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"tprod.torch: {what} has dtype {t.dtype}; the autograd functions take float32 or float64")
    if t.dim() != ndim:
        raise ValueError(f"tprod.torch: {what} has shape {tuple(t.shape)}; " +
                         ("a third-order tensor has 3 dimensions (m, n, p)" if ndim == 3 else
                          f"this layer takes {ndim} dimensions"))
    return t.detach() if t.device.type == "cuda" else t.detach().numpy()


def _tensor(x) -> Optional[torch.Tensor]:
    """A result of tprod's functions as a torch tensor (a NumPy array's memory shared, not copied)."""
    return None if x is None or isinstance(x, torch.Tensor) else torch.from_numpy(x)


def _z_and_inverse_transpose(L: Transform, dtype):
    z = L.matrix
    return z.astype(dtype), np.linalg.inv(z).T.astype(dtype)


class LProduct(torch.autograd.Function):
    """C = A *_L B with its gradients; call it as ``tprod.torch.lproduct(A, B, L)``."""

    @staticmethod
    def forward(ctx, A: torch.Tensor, B: torch.Tensor, L: Transform):
        a, b = _array(A, "A", cuda=True), _array(B, "B", cuda=True)
        if A.device != B.device:
            raise TypeError(f"tprod.torch.lproduct: A is on {A.device} and B on {B.device}; give them one device")
        if A.dtype != B.dtype:
            raise TypeError(f"tprod.torch.lproduct: A is {A.dtype} and B is {B.dtype}; give them one dtype")
        if L.name == "matrix" and np.iscomplexobj(L.matrix):
            raise TypeError("tprod.torch.lproduct: a complex Z makes a real tensor complex; the autograd functions "
                            "take real transforms (dct, dft, identity, a real Z)")
        ctx.L = L
        ctx.save_for_backward(A, B)
        return _tensor(product(a, b, L))

    @staticmethod
    def backward(ctx, G: torch.Tensor):
        A, B = ctx.saved_tensors
        L = ctx.L
        a, b = _array(A, "A", cuda=True), _array(B, "B", cuda=True)
        g = _array(G, "the gradient", cuda=True)
        da = db = None
        if L.name == "matrix":
            z, z_inv_t = _z_and_inverse_transpose(L, np.float32 if A.dtype == torch.float32 else np.float64)
            g_hat = mode_product(g, z_inv_t, 2)  # Ĝ = G ×₃ Z⁻ᵀ
            if ctx.needs_input_grad[0]:
                b_hat_t = mode_product(b, z, 2).swapaxes(0, 1)
                da = mode_product(facewise(g_hat, b_hat_t), np.ascontiguousarray(z.T), 2)
            if ctx.needs_input_grad[1]:
                a_hat_t = mode_product(a, z, 2).swapaxes(0, 1)
                db = mode_product(facewise(a_hat_t, g_hat), np.ascontiguousarray(z.T), 2)
        else:
            if ctx.needs_input_grad[0]:
                da = product(g, transpose(b, L), L)
            if ctx.needs_input_grad[1]:
                db = product(transpose(a, L), g, L)
        return _tensor(da), _tensor(db), None


def lproduct(A: torch.Tensor, B: torch.Tensor, L: Optional[Transform] = None) -> torch.Tensor:
    """A *_L B for torch tensors A (m x l x p) and B (l x n x p), differentiable in both (default L: the DCT)."""
    return LProduct.apply(A, B, dct() if L is None else L)


class LLinear(torch.nn.Module):
    """The L-linear layer Y = X *_L W + B (paper 000's building block, paper 001's t-Linear).

    X is r x in_features x p (r rows: batch times tokens), W in_features x out_features x p, the bias
    1 x out_features x p broadcast over the rows; Y is r x out_features x p. W and the bias are ordinary
    ``nn.Parameter``s in the original domain, initialized uniform in [-1/sqrt(in_features), 1/sqrt(in_features)]
    as torch.nn.Linear is, so optimizers and ``state_dict`` work unchanged.
    """

    def __init__(self, in_features: int, out_features: int, p: int, L: Optional[Transform] = None,
                 bias: bool = True, dtype=torch.float32):
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features), ("p", p)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"tprod.torch.LLinear: {name} = {value!r} must be a positive integer")
        self.in_features, self.out_features, self.p = in_features, out_features, p
        self.L = dct() if L is None else L
        self.L.stored_slices(p)  # raises ShapeError when L cannot act on p tubes
        bound = 1.0 / math.sqrt(in_features)
        self.weight = torch.nn.Parameter(torch.empty(in_features, out_features, p, dtype=dtype).uniform_(-bound, bound))
        self.bias = (torch.nn.Parameter(torch.empty(1, out_features, p, dtype=dtype).uniform_(-bound, bound))
                     if bias else None)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if X.dim() != 3 or X.shape[1] != self.in_features or X.shape[2] != self.p:
            raise ValueError(f"tprod.torch.LLinear: the input has shape {tuple(X.shape)}; this layer takes "
                             f"(rows, {self.in_features}, {self.p})")
        Y = lproduct(X, self.weight, self.L)
        return Y if self.bias is None else Y + self.bias

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, p={self.p}, L={self.L!r}, "
                f"bias={self.bias is not None}")


def _dtype_name(dtype) -> str:
    if dtype == torch.float32:
        return "float32"
    if dtype == torch.float64:
        return "float64"
    raise TypeError(f"tprod.torch: dtype {dtype}; tprod's layers compute in torch.float32 or torch.float64")


def _seed() -> int:
    """A seed for the C++ initialization drawn from PyTorch's generator, so that torch.manual_seed repeats it."""
    return int(torch.randint(0, 2**62, (), dtype=torch.int64))


def _key_lengths(key_padding_mask: Optional[torch.Tensor], batch: int, tokens: int) -> list:
    """PyTorch's key_padding_mask (batch x tokens, True where a key is padding) as one valid length per sequence."""
    if key_padding_mask is None:
        return []
    mask = torch.as_tensor(key_padding_mask)
    if mask.dtype != torch.bool or tuple(mask.shape) != (batch, tokens):
        raise ValueError(f"tprod.torch: key_padding_mask has dtype {mask.dtype} and shape {tuple(mask.shape)}; "
                         f"it must be a bool tensor of shape ({batch}, {tokens}), True where a key is padding")
    mask = mask.cpu()
    lengths = (~mask).sum(dim=1)
    prefix = torch.arange(tokens).unsqueeze(0) >= lengths.unsqueeze(1)
    if not torch.equal(prefix, mask):
        raise ValueError("tprod.torch: key_padding_mask must pad the end of each sequence (False for its first "
                         "keys, True for the rest); tprod's masks keep a prefix of the keys")
    return [int(n) for n in lengths]


class _LayerFunction(torch.autograd.Function):
    """Y = layer(X) with the C++ layer's forward and backward passes; the parameters are inputs so that
    autograd gives them their gradients."""

    @staticmethod
    def forward(ctx, layer, batch: int, causal: bool, key_lengths: list, X: torch.Tensor, *params):
        current = [p.detach().numpy() for p in params]
        y, ctx.layer_pass = layer.forward(_array(X, "the input", X.dim()), batch, causal, key_lengths, current)
        return torch.from_numpy(y)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dY: torch.Tensor):
        dx, grads = ctx.layer_pass.backward(_array(dY, "the output's gradient", dY.dim()))
        return (None, None, None, None, torch.from_numpy(dx), *(torch.from_numpy(g) for g in grads))


class _TprodLayer(torch.nn.Module):
    """A tprod C++ layer as a module: its parameters registered under the C++ names ("attn.w_qkv" is the
    parameter w_qkv of the submodule attn), each an nn.Parameter over the layer's own memory."""

    def _hold(self, layer) -> None:
        self._layer = layer
        self._names = []
        for name, array in layer.parameters():
            owner = self
            *path, leaf = name.split(".")
            for part in path:
                if part not in owner._modules:
                    owner.add_module(part, torch.nn.Module())
                owner = owner._modules[part]
            owner.register_parameter(leaf, torch.nn.Parameter(torch.from_numpy(array)))
            self._names.append(name)

    def _check_input(self, X, shape: tuple, expected: str) -> None:
        """X a torch.Tensor of len(shape) dimensions, equal to `shape` where it is not None, and not empty."""
        if not isinstance(X, torch.Tensor):
            raise TypeError(f"{type(self).__name__}: the input is {type(X).__name__}, not a torch.Tensor")
        if X.dim() != len(shape) or any(s is not None and X.shape[i] != s for i, s in enumerate(shape)):
            raise ValueError(f"{type(self).__name__}: the input has shape {tuple(X.shape)}; this layer takes "
                             f"{expected}")
        if X.numel() == 0:
            raise ValueError(f"{type(self).__name__}: the input has shape {tuple(X.shape)}; give at least one "
                             f"sequence of at least one token")

    def _call_layer(self, X: torch.Tensor, batch: int, causal: bool = False, lengths: Optional[list] = None):
        params = [self.get_parameter(name) for name in self._names]
        return _LayerFunction.apply(self._layer, batch, bool(causal), lengths or [], X, *params)

    def _run(self, X: torch.Tensor, causal: bool, key_padding_mask: Optional[torch.Tensor]) -> torch.Tensor:
        """An L-layer on X of shape (batch, tokens, width, p)."""
        self._check_input(X, (None, None, self._width, self._p), f"(batch, tokens, {self._width}, {self._p})")
        batch, tokens = int(X.shape[0]), int(X.shape[1])
        lengths = _key_lengths(key_padding_mask, batch, tokens)
        Y = self._call_layer(X.reshape(batch * tokens, self._width, self._p), batch, causal, lengths)
        return Y.view(batch, tokens, self._width, self._p)


class LMultiheadAttention(_TprodLayer):
    """L-multi-head self-attention (paper 000, Alg. 1-2) on X of shape (batch, tokens, width, p).

    ``heads`` heads per slice (heads must divide width); the L-transform (default: the DCT) along the p slices.
    ``variant``: "spectral" (paper 000), "t_softmax" (paper 001's t-MHSA) or "dimension_wise" (TensorCoder,
    paper 003). Parameters, in the transform domain: ``w_qkv`` (width x 3 width x p, [Q | K | V], head j of Q in
    columns j d_h ... (j+1) d_h - 1), ``w_o`` (width x width x p), and with ``bias`` ``b_qkv`` and ``b_o``
    (1 x ... x p), initialized uniform in [-1/sqrt(width), 1/sqrt(width)] from PyTorch's generator. With p = 1 and
    the identity transform this is torch.nn.MultiheadAttention with w_qkv = in_proj_weight.T.
    """

    def __init__(self, width: int, heads: int, p: int, L: Optional[Transform] = None, bias: bool = True,
                 variant: str = "spectral", dtype=torch.float32):
        super().__init__()
        self.L, self.heads, self.variant = dct() if L is None else L, heads, variant
        self._width, self._p = width, p
        self._hold(_tprod._attention_layer(width, heads, p, self.L, bias, variant, _dtype_name(dtype), _seed()))

    def forward(self, X: torch.Tensor, causal: bool = False,
                key_padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """MHA_L(X); ``causal`` lets token t see tokens up to t; ``key_padding_mask`` (batch x tokens, True
        where a key is padding) must pad the end of each sequence."""
        return self._run(X, causal, key_padding_mask)

    def extra_repr(self) -> str:
        return f"width={self._width}, heads={self.heads}, p={self._p}, L={self.L!r}, variant={self.variant!r}"


class LTransformerEncoderLayer(_TprodLayer):
    """The L-Transformer encoder layer on X of shape (batch, tokens, width, p).

    Post-norm (paper 000, eq. 4-5): X' = LN1(X + MHA_L(X)), Y = LN2(X' + FFN_L(X')); with ``norm_first``
    (paper 001): X' = X + MHA_L(LN1(X)), Y = X' + FFN_L(LN2(X')). ``heads`` and ``hidden`` are per slice.
    ``norm``: "original_domain" (paper 000's LayerNorm over a token's width x p entries, sqrt(var + eps)) or
    "transform_domain" (paper 001's t-LayerNorm). ``activation``: "relu", "gelu" or "gelu_tanh". Parameters are
    the C++ layer's: ``attn.*`` as LMultiheadAttention's, ``ffn.w1`` (width x hidden x p), ``ffn.w2``, their biases,
    ``ln1.gamma``, ``ln1.beta``, ``ln2.*``. With p = 1 and the identity transform this is
    torch.nn.TransformerEncoderLayer (batch_first, dropout 0).
    """

    def __init__(self, width: int, p: int, heads: int, hidden: int, L: Optional[Transform] = None,
                 activation: str = "relu", bias: bool = True, norm_first: bool = False,
                 norm: str = "original_domain", variant: str = "spectral", eps: float = 1e-5, dtype=torch.float32):
        super().__init__()
        self.L = dct() if L is None else L
        self.config = dict(width=width, p=p, heads=heads, hidden=hidden, activation=activation, bias=bias,
                           norm_first=norm_first, norm=norm, variant=variant, eps=eps)
        self._width, self._p = width, p
        self._hold(_tprod._encoder_layer(width, p, heads, hidden, activation, bias, norm_first, norm, variant, eps,
                                         self.L, _dtype_name(dtype), _seed()))

    @classmethod
    def paper000(cls, d_model: int, nhead: int, dim_feedforward: int, p: int, L: Optional[Transform] = None,
                 activation: str = "relu", dtype=torch.float32) -> "LTransformerEncoderLayer":
        """Paper 000's layer for a width-d_model model with nhead heads, folded into p slices: width d_model/p,
        nhead/p heads and dim_feedforward/p hidden per slice (so each head keeps d_model/nhead features)."""
        if p < 1 or d_model % p or nhead % p or dim_feedforward % p:
            raise ValueError(f"LTransformerEncoderLayer.paper000: p = {p} must divide d_model = {d_model}, "
                             f"nhead = {nhead} and dim_feedforward = {dim_feedforward}")
        return cls(d_model // p, p, nhead // p, dim_feedforward // p, L, activation=activation, dtype=dtype)

    @classmethod
    def tcp_vit(cls, width: int, channels: int, heads: int, expansion: int, L: Optional[Transform] = None,
                dtype=torch.float32) -> "LTransformerEncoderLayer":
        """Paper 001's TCP-ViT block: pre-norm, t-LayerNorm, t-softmax attention, GELU, no biases; hidden =
        expansion x width per channel (slice)."""
        return cls(width, channels, heads, expansion * width, L, activation="gelu", bias=False, norm_first=True,
                   norm="transform_domain", variant="t_softmax", dtype=dtype)

    def forward(self, X: torch.Tensor, causal: bool = False,
                key_padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """The layer on X; masks as in LMultiheadAttention.forward."""
        return self._run(X, causal, key_padding_mask)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.config.items()) + f", L={self.L!r}"


def _dims(dims, what: str) -> list:
    dims = [int(d) for d in dims]
    if not dims or any(d < 1 for d in dims):
        raise ValueError(f"tprod.torch: {what} = {dims} must be a non-empty list of positive sizes")
    return dims


class LMPOLinear(_TprodLayer):
    """Y = X W with the weight W (in_features x out_features) held as a Matrix Product Operator and never formed
    (paper 002, eq. 2-4; paper 003's MPO layers): cores ``core_0``, ``core_1``, ... of shape
    R_{n-1} x I_n x J_n x R_n over the factorizations in_features = prod(row_dims), out_features = prod(col_dims),
    R_0 = R_N = 1 (the index convention of tprod.MPO). X has any leading dimensions and in_features last.

    ``ranks``: one bond rank for all N - 1 bonds, or a list of N - 1. The cores start uniform with the variance
    that gives W's entries torch.nn.Linear's, from PyTorch's generator. ``LMPOLinear.from_dense(W, ...)`` starts
    from a dense weight instead (exact at full ranks: paper 003's over-parameterization). No bias.
    """

    def __init__(self, row_dims, col_dims, ranks=2, dtype=torch.float32):
        super().__init__()
        self.row_dims, self.col_dims = _dims(row_dims, "row_dims"), _dims(col_dims, "col_dims")
        if len(self.row_dims) != len(self.col_dims):
            raise ValueError(f"tprod.torch.LMPOLinear: row_dims {self.row_dims} and col_dims {self.col_dims} "
                             f"must have the same length")
        bonds = len(self.row_dims) - 1
        ranks = [int(ranks)] * bonds if isinstance(ranks, int) else [int(r) for r in ranks]
        self.in_features, self.out_features = math.prod(self.row_dims), math.prod(self.col_dims)
        self._hold(_tprod._mpo_linear_layer(self.row_dims, self.col_dims, ranks, _dtype_name(dtype), _seed()))

    @classmethod
    def from_dense(cls, W: torch.Tensor, row_dims, col_dims, max_rank: Optional[int] = None,
                   tolerance: float = 0.0) -> "LMPOLinear":
        """The layer of a dense W (in_features x out_features) by TT-SVD (tprod.mpo_from_matrix): exact at full
        ranks, else bond ranks at most ``max_rank`` and ||W - MPO||_F <= tolerance ||W||_F."""
        from . import mpo_from_matrix
        w = W.detach().cpu().numpy() if isinstance(W, torch.Tensor) else np.asarray(W)
        cores = mpo_from_matrix(w, row_dims, col_dims, max_rank=max_rank, tolerance=tolerance).cores
        layer = cls(row_dims, col_dims, [c.shape[3] for c in cores[:-1]], dtype=torch.from_numpy(w).dtype)
        with torch.no_grad():
            for name, core in zip(layer._names, cores):
                layer.get_parameter(name).copy_(torch.from_numpy(np.ascontiguousarray(core)))
        return layer

    def weight(self) -> torch.Tensor:
        """The dense W the cores stand for (a copy, for inspection)."""
        from . import MPO
        return torch.from_numpy(MPO([self.get_parameter(n).detach().numpy() for n in self._names]).full())

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if not isinstance(X, torch.Tensor) or X.dim() < 1 or X.shape[-1] != self.in_features:
            shape = tuple(X.shape) if isinstance(X, torch.Tensor) else type(X).__name__
            raise ValueError(f"tprod.torch.LMPOLinear: the input has shape {shape}; this layer takes "
                             f"(..., {self.in_features})")
        rows = X.reshape(-1, self.in_features)
        self._check_input(rows, (None, self.in_features), f"(..., {self.in_features})")
        Y = self._call_layer(rows, int(rows.shape[0]))
        return Y.view(*X.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"row_dims={self.row_dims}, col_dims={self.col_dims}, ranks={[int(self.get_parameter(n).shape[3]) for n in self._names[:-1]]}"


class LSpectralAttention(_TprodLayer):
    """Tensorized spectral attention (TSA; paper 002, Alg. 1) on X of shape (batch, tokens, in_features).

    Each of ``heads`` heads computes K = X W_k and V = X W_v (MPO weights over row_dims x col_dims with bond rank
    ``rank``), the attention graph Theta = ReLU(K K^T / d_k) (zero diagonal, d_k = prod(col_dims)), Psi = Omega * Theta
    with the bidirectional time graph Omega = c^|l1 - l2| / 2, and Y = f(Psi) V: the simplified filter I + Psi
    (``filter_order=0``) or f(Psi) = sum_k alpha_k Psi^k with learnable alpha (``filter_order=K``, starting at I +
    Psi). The heads' outputs, side by side, pass an MPO projection to prod(col_dims) features. Parameters:
    ``head_h.key.core_n``, ``head_h.value.core_n``, ``head_h.alpha``, ``projection.core_n``.
    ``key_padding_mask`` (batch x tokens, True where a token is padding, at the end of each sequence) keeps padding
    out of the graph.
    """

    def __init__(self, row_dims, col_dims, rank: int = 2, heads: int = 1, filter_order: int = 0,
                 damping: float = 0.5, dtype=torch.float32):
        super().__init__()
        self.row_dims, self.col_dims = _dims(row_dims, "row_dims"), _dims(col_dims, "col_dims")
        self.in_features, self.out_features = math.prod(self.row_dims), math.prod(self.col_dims)
        self.config = dict(rank=rank, heads=heads, filter_order=filter_order, damping=damping)
        self._hold(_tprod._tsa_layer(self.row_dims, self.col_dims, int(rank), int(heads), int(filter_order),
                                     float(damping), _dtype_name(dtype), _seed()))

    def forward(self, X: torch.Tensor, key_padding_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        self._check_input(X, (None, None, self.in_features), f"(batch, tokens, {self.in_features})")
        batch, tokens = int(X.shape[0]), int(X.shape[1])
        lengths = _key_lengths(key_padding_mask, batch, tokens)
        Y = self._call_layer(X.reshape(batch * tokens, self.in_features), batch, False, lengths)
        return Y.view(batch, tokens, self.out_features)

    def extra_repr(self) -> str:
        return (f"row_dims={self.row_dims}, col_dims={self.col_dims}, " +
                ", ".join(f"{k}={v!r}" for k, v in self.config.items()))
