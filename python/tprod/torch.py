# SPDX-License-Identifier: Apache-2.0
"""tprod's L-product inside PyTorch models: an autograd Function and the L-linear layer as a torch.nn.Module.

Forward and backward passes run tprod's kernels. Tensors are real (float32 or float64) and on the CPU; their
gradients follow from the L-product's adjoint:

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

from . import Transform, dct, facewise, mode_product, product, transpose

__all__ = ["lproduct", "LProduct", "LLinear"]


def _array(t: torch.Tensor, what: str) -> np.ndarray:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"tprod.torch: {what} is {type(t).__name__}, not a torch.Tensor")
    if t.device.type != "cpu":
        raise TypeError(f"tprod.torch: {what} is on {t.device}, and this tprod computes on the CPU only: "
                        f"move it with .cpu()")
    if t.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"tprod.torch: {what} has dtype {t.dtype}; the autograd functions take float32 or float64")
    if t.dim() != 3:
        raise ValueError(f"tprod.torch: {what} has shape {tuple(t.shape)}; a third-order tensor has 3 dimensions "
                         f"(m, n, p)")
    return t.detach().numpy()


def _z_and_inverse_transpose(L: Transform, dtype):
    z = L.matrix
    return z.astype(dtype), np.linalg.inv(z).T.astype(dtype)


class LProduct(torch.autograd.Function):
    """C = A *_L B with its gradients; call it as ``tprod.torch.lproduct(A, B, L)``."""

    @staticmethod
    def forward(ctx, A: torch.Tensor, B: torch.Tensor, L: Transform):
        a, b = _array(A, "A"), _array(B, "B")
        if a.dtype != b.dtype:
            raise TypeError(f"tprod.torch.lproduct: A is {A.dtype} and B is {B.dtype}; give them one dtype")
        if L.name == "matrix" and np.iscomplexobj(L.matrix):
            raise TypeError("tprod.torch.lproduct: a complex Z makes a real tensor complex; the autograd functions "
                            "take real transforms (dct, dft, identity, a real Z)")
        ctx.L = L
        ctx.save_for_backward(A, B)
        return torch.from_numpy(product(a, b, L))

    @staticmethod
    def backward(ctx, G: torch.Tensor):
        A, B = ctx.saved_tensors
        L = ctx.L
        a, b = A.detach().numpy(), B.detach().numpy()
        g = _array(G.contiguous(), "the gradient")
        da = db = None
        if L.name == "matrix":
            z, z_inv_t = _z_and_inverse_transpose(L, a.dtype)
            g_hat = mode_product(g, z_inv_t, 2)  # Ĝ = G ×₃ Z⁻ᵀ
            if ctx.needs_input_grad[0]:
                b_hat_t = np.swapaxes(mode_product(b, z, 2), 0, 1)
                da = mode_product(facewise(g_hat, b_hat_t), np.ascontiguousarray(z.T), 2)
            if ctx.needs_input_grad[1]:
                a_hat_t = np.swapaxes(mode_product(a, z, 2), 0, 1)
                db = mode_product(facewise(a_hat_t, g_hat), np.ascontiguousarray(z.T), 2)
        else:
            if ctx.needs_input_grad[0]:
                da = product(g, transpose(b, L), L)
            if ctx.needs_input_grad[1]:
                db = product(transpose(a, L), g, L)
        as_tensor = (lambda x: None if x is None else torch.from_numpy(x))
        return as_tensor(da), as_tensor(db), None


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
