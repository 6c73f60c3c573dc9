# SPDX-License-Identifier: Apache-2.0
"""tprod: third-order tensors under transform-based tensor-tensor products, from Python.

A tensor is a NumPy array of shape (m, n, p) and dtype float32, float64, complex64 or complex128; p is the tube
length, along which the transform L acts. The L-product is A *_L B = L^-1(L(A) facewise-times L(B)).

Arrays in Fortran order (``numpy.asfortranarray``) are read without a copy, since that is tprod's own storage
order; any other layout is copied once. Results are NumPy arrays in Fortran order that own their memory.
Torch tensors and other DLPack arrays on the CPU are read the same way. In a CUDA build, the algebra, the L-SVD,
the ranks, the L-QR, the norms and the predicates also take CUDA arrays (torch tensors on a GPU) and compute on
their device, on the stream torch is using, returning torch tensors there (docs/howto/python.md, "CUDA tensors").
The computations release the GIL and run on ``num_threads()`` threads (``set_num_threads``; by default
TPROD_NUM_THREADS, else OMP_NUM_THREADS, else every core the process may use).

    >>> import numpy as np, tprod
    >>> A = np.random.default_rng(1).standard_normal((4, 3, 8))
    >>> B = np.random.default_rng(2).standard_normal((3, 2, 8))
    >>> C = tprod.product(A, B, tprod.dct())          # 4 x 2 x 8
    >>> r = tprod.svd(A, tprod.dct(), rank=2)          # U 4x2x8, S 2x2x8, V 3x2x8

Errors: ``tprod.ShapeError`` (a ValueError) for shapes, ``tprod.NumericalError`` (a ValueError) for singular
slices, NaN or Inf, ``TypeError`` for dtypes.
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from ._tprod import (  # noqa: F401  (re-exported)
    NumericalError,
    ShapeError,
    Transform,
    __version__,
    dct,
    dft,
    facewise,
    frobenius_norm,
    identity,
    identity_transform,
    inner,
    inverse,
    is_f_diagonal,
    is_f_positive_definite,
    is_f_symmetric,
    is_orthogonal,
    matrix_transform,
    mode_product,
    nuclear_norm,
    num_threads,
    product,
    qr,
    set_num_threads,
    spectral_norm,
    transpose,
)
from . import _tprod, _device
from ._device import DeviceArray


def _default_threads() -> int:
    """TPROD_NUM_THREADS, else OMP_NUM_THREADS, else every core this process may run on. Set here rather than
    left to OpenMP's default, which another library may have changed before tprod was imported (importing torch
    first sets it to torch's own thread count)."""
    for variable in ("TPROD_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


set_num_threads(_default_threads())

__all__ = [
    "NumericalError", "ShapeError", "Transform", "Transformed", "SVD", "Ranks", "__version__",
    "dct", "dft", "identity_transform", "matrix_transform",
    "transform", "inverse_transform", "product", "facewise", "transpose", "inverse", "identity",
    "frobenius_norm", "inner", "is_orthogonal", "is_f_diagonal", "is_f_symmetric", "is_f_positive_definite",
    "mode_product", "svd", "ranks", "tubal_rank", "multi_rank", "average_rank", "qr", "spectral_norm",
    "nuclear_norm", "num_threads", "set_num_threads", "DeviceArray",
]


class Transformed:
    """A tensor in the transform domain, L(A): its stored slices ``data`` (m x n x stored_slices, of the domain's
    scalar: complex under the dft), with the tube length ``p`` of A, the transform ``L`` and A's ``dtype``.

    Products (``*``: the facewise product of the slices), sums, differences, scalar multiples, ``.T`` and
    ``inverse()`` stay in the transform domain, so a chain costs one transform per operand and one
    ``inverse_transform`` at the end::

        Ahat, Bhat = tprod.transform(A, L), tprod.transform(B, L)
        C = tprod.inverse_transform(Ahat * Bhat.T)     # A *_L B^T
    """

    __slots__ = ("data", "p", "L", "dtype")

    def __init__(self, data: np.ndarray, p: int, L: Transform, dtype):
        self.data = data
        self.p = int(p)
        self.L = L
        self.dtype = np.dtype(dtype)

    @classmethod
    def _of(cls, parts, L: Transform) -> "Transformed":
        data, p, dtype = parts
        return cls(data, p, L, dtype)

    @property
    def shape(self):
        """(m, n, p) of the original tensor."""
        return (self.data.shape[0], self.data.shape[1], self.p)

    def _parts(self):
        return (self.data, self.p, self.L, self.dtype)

    def _check_same(self, other: "Transformed", op: str):
        if not isinstance(other, Transformed):
            raise TypeError(f"tprod.Transformed {op}: the other operand is {type(other).__name__}, not a Transformed")
        if other.L is not self.L and repr(other.L) != repr(self.L):
            raise ShapeError(f"tprod.Transformed {op}: the operands are under different transforms ({self.L!r} and {other.L!r})")
        if other.p != self.p or other.dtype != self.dtype:
            raise ShapeError(f"tprod.Transformed {op}: the operands have p = {self.p}, {other.p} and dtypes "
                             f"{self.dtype}, {other.dtype}")

    def __mul__(self, other):
        if isinstance(other, Transformed):
            self._check_same(other, "*")
            return Transformed(facewise(self.data, other.data), self.p, self.L, self.dtype)
        if np.isscalar(other):
            return Transformed(_device.fortran(self.data * other), self.p, self.L, self.dtype)
        return NotImplemented

    def __rmul__(self, other):
        if np.isscalar(other):
            return self * other
        return NotImplemented

    def __add__(self, other):
        self._check_same(other, "+")
        if self.data.shape != other.data.shape:
            raise ShapeError(f"tprod.Transformed +: shapes {self.shape} and {other.shape} differ")
        return Transformed(_device.fortran(self.data + other.data), self.p, self.L, self.dtype)

    def __sub__(self, other):
        self._check_same(other, "-")
        if self.data.shape != other.data.shape:
            raise ShapeError(f"tprod.Transformed -: shapes {self.shape} and {other.shape} differ")
        return Transformed(_device.fortran(self.data - other.data), self.p, self.L, self.dtype)

    @property
    def T(self) -> "Transformed":
        """The L-transpose, in the transform domain."""
        return Transformed._of(_device.backend(self.data).domain_transpose(*self._parts()), self.L)

    def transpose(self) -> "Transformed":
        """The L-transpose, in the transform domain (as .T)."""
        return self.T

    def inverse(self) -> "Transformed":
        """The L-inverse (every stored slice inverted); NumericalError for a singular slice."""
        return Transformed._of(_device.backend(self.data).domain_inverse(*self._parts()), self.L)

    def frobenius_norm(self) -> float:
        """||Â||_F over all p transform-domain slices (the dft's half spectrum weighted as the whole): ||A||_F
        under an orthonormal transform (dct, identity), sqrt(p)·||A||_F under the dft."""
        return _device.backend(self.data).domain_frobenius_norm(*self._parts())

    def __repr__(self):
        m, n, p = self.shape
        return f"tprod.Transformed({m}x{n}x{p} {self.dtype} under {self.L!r})"


def transform(A, L: Transform = None) -> Transformed:
    """L(A) as a Transformed (default L: the DCT)."""
    L = dct() if L is None else L
    return Transformed._of(_device.backend(A).transform(A, L), L)


def inverse_transform(Ahat: Transformed) -> np.ndarray:
    """L^-1 of a Transformed: the tensor in the original domain."""
    if not isinstance(Ahat, Transformed):
        raise TypeError(f"tprod.inverse_transform takes a tprod.Transformed, not {type(Ahat).__name__}")
    return _device.backend(Ahat.data).inverse_transform(*Ahat._parts())


@dataclass
class SVD:
    """The L-SVD A = U *_L S *_L V^T (V^T the L-transpose).

    U is m x r x p, S r x r x p (f-diagonal), V n x r x p; ``sigma[i, k]`` is the i-th singular value of stored
    transform-domain slice k (0 where a truncation dropped it) and ``kept`` the multi-rank: how many each of
    the p slices keeps.
    """

    U: np.ndarray
    S: np.ndarray
    V: np.ndarray
    sigma: np.ndarray
    kept: List[int]
    L: Transform

    def reconstruct(self) -> np.ndarray:
        """U *_L S *_L V^T."""
        return product(product(self.U, self.S, self.L), transpose(self.V, self.L), self.L)

    def __iter__(self):  # U, S, V = tprod.svd(A)
        return iter((self.U, self.S, self.V))


def svd(A, L: Transform = None, *, full: bool = False, rank: Optional[int] = None,
        energy: Optional[float] = None) -> SVD:
    """The L-SVD of A (default L: the DCT): economy (r = min(m, n)) by default, ``full=True`` for square U and V,
    ``rank=k`` for the tubal-rank-k truncation, ``energy=gamma`` for the smallest multi-rank keeping at least
    gamma of ||A||_F^2."""
    L = dct() if L is None else L
    d = _device.backend(A)._svd(A, L, full, rank, energy)
    return SVD(d["U"], d["S"], d["V"], d["sigma"], list(d["kept"]), L)


@dataclass
class Ranks:
    """The ranks of A under L: the tubal rank (max over slices), the average rank, the multi-rank (one per
    transform-domain slice) and the tolerance above which singular values counted."""

    tubal_rank: int
    average_rank: float
    multi_rank: List[int]
    tolerance: float


def ranks(A, L: Transform = None, tol: float = -1.0) -> Ranks:
    """Ranks of A under L (default L: the DCT); tol < 0 takes numpy.linalg.matrix_rank's rule over all slices."""
    d = _device.backend(A)._ranks(A, dct() if L is None else L, tol)
    return Ranks(int(d["tubal_rank"]), float(d["average_rank"]), list(d["multi_rank"]), float(d["tolerance"]))


def tubal_rank(A, L: Transform = None, tol: float = -1.0) -> int:
    """The tubal rank: the largest rank of a transform-domain slice (ranks(A, L, tol).tubal_rank)."""
    return ranks(A, L, tol).tubal_rank


def multi_rank(A, L: Transform = None, tol: float = -1.0) -> List[int]:
    """The rank of each of the p transform-domain slices (ranks(A, L, tol).multi_rank)."""
    return ranks(A, L, tol).multi_rank


def average_rank(A, L: Transform = None, tol: float = -1.0) -> float:
    """The mean rank of the p transform-domain slices (ranks(A, L, tol).average_rank)."""
    return ranks(A, L, tol).average_rank


# --- Decompositions of order-N tensors (float32 or float64 arrays of any number of dimensions) -------------------

def _mode_multiply(x: np.ndarray, u: np.ndarray, mode: int) -> np.ndarray:
    """x ×_mode u: u's columns contract x's axis `mode`."""
    return np.moveaxis(np.tensordot(u, x, axes=(1, mode)), 0, mode)


@dataclass
class Tucker:
    """X ≈ core ×_{m_1} U_1 ⋯ ×_{m_K} U_K over the decomposed ``modes`` (every mode unless a partial Tucker was
    asked for); the factors have orthonormal columns. ``relative_error`` is ||X − X̂||_F / ||X||_F, measured."""

    core: np.ndarray
    factors: List[np.ndarray]
    modes: List[int]
    relative_error: float
    compression_ratio: float
    fit_history: List[float]
    sweeps: int

    def reconstruct(self) -> np.ndarray:
        x = self.core
        for u, mode in zip(self.factors, self.modes):
            x = _mode_multiply(x, u, mode)
        return x


def _tucker(method, X, ranks, tolerance, modes, max_sweeps=50, fit_tolerance=1e-10) -> Tucker:
    d = _tprod._tucker(X, method, list(ranks or []), float(tolerance), list(modes or []), int(max_sweeps),
                       float(fit_tolerance))
    return Tucker(d["core"], list(d["factors"]), list(d["modes"]), d["relative_error"], d["compression_ratio"],
                  list(d["fit_history"]), int(d["sweeps"]))


def hosvd(X, ranks=None, *, tolerance: float = 0.0, modes=None) -> Tucker:
    """The truncated higher-order SVD: multilinear ``ranks`` (one per decomposed mode), or the ranks that keep
    ||X − X̂||_F ≤ tolerance·||X||_F; ``modes`` for a partial Tucker (default: every mode)."""
    return _tucker("hosvd", X, ranks, tolerance, modes)


def st_hosvd(X, ranks=None, *, tolerance: float = 0.0, modes=None) -> Tucker:
    """The sequentially truncated HOSVD (truncating in the order of ``modes``); arguments as hosvd."""
    return _tucker("st_hosvd", X, ranks, tolerance, modes)


def hooi(X, ranks=None, *, tolerance: float = 0.0, modes=None, max_sweeps: int = 50,
         fit_tolerance: float = 1e-10) -> Tucker:
    """Higher-order orthogonal iteration from the HOSVD, until a sweep raises the fit by less than
    ``fit_tolerance`` or after ``max_sweeps`` sweeps."""
    return _tucker("hooi", X, ranks, tolerance, modes, max_sweeps, fit_tolerance)


@dataclass
class TensorTrain:
    """X ≈ the chain of ``cores``, core n of shape R_{n−1} × I_n × R_n with R_0 = R_N = 1."""

    cores: List[np.ndarray]

    @property
    def ranks(self) -> List[int]:
        return [c.shape[0] for c in self.cores] + [self.cores[-1].shape[2]]

    def full(self) -> np.ndarray:
        x = self.cores[0]
        for c in self.cores[1:]:
            x = np.tensordot(x, c, axes=(x.ndim - 1, 0))
        return x.reshape(x.shape[1:-1])


def tt_svd(X, *, max_rank: Optional[int] = None, tolerance: float = 0.0) -> TensorTrain:
    """TT-SVD: bond ranks at most ``max_rank``, each truncation within tolerance·||X||_F/sqrt(N − 1), so that
    ||X − TT(X)||_F ≤ tolerance·||X||_F unless max_rank cuts deeper."""
    cap = np.iinfo(np.uint64).max if max_rank is None else int(max_rank)
    return TensorTrain(list(_tprod._tt_svd(X, cap, float(tolerance))))


@dataclass
class CP:
    """X ≈ Σ_r weights[r] · a⁽⁰⁾_r ∘ a⁽¹⁾_r ∘ ⋯ (factors[n] = A⁽ⁿ⁾ with unit-norm columns, weights decreasing)."""

    weights: np.ndarray
    factors: List[np.ndarray]
    fit_history: List[float]
    relative_error: float
    sweeps: int

    def reconstruct(self) -> np.ndarray:
        letters = "abcdefghijklmnopqrstuvwxyz"[: len(self.factors)]
        spec = "z," + ",".join(f"{c}z" for c in letters) + "->" + letters
        return np.einsum(spec, self.weights, *self.factors)


def cp_als(X, rank: int, *, max_sweeps: int = 500, fit_tolerance: float = 1e-12, seed: int = 0,
           restarts: int = 1) -> CP:
    """The rank-``rank`` CP decomposition by alternating least squares, from ``restarts`` initializations
    (seeds seed, seed + 1, …; the best fit is kept); the same seed gives the same result."""
    d = _tprod._cp_als(X, int(rank), int(max_sweeps), float(fit_tolerance), int(seed), int(restarts))
    return CP(np.asarray(d["weights"]), list(d["factors"]), list(d["fit_history"]), d["relative_error"],
              int(d["sweeps"]))


__all__ += ["Tucker", "TensorTrain", "CP", "hosvd", "st_hosvd", "hooi", "tt_svd", "cp_als"]


@dataclass
class MultiheadTucker:
    """The shared-factor Tucker decomposition of one multi-head attention layer (TensorLLM): the heads' weights
    stacked as W_all (d_model x d_v x 4 x heads; W_all[:, :, 0, i] = W_q's columns of head i, then W_k's, W_v's, and
    W_o's rows of head i transposed), decomposed over modes 0, 1, 2 with factors shared by every head and one core
    per head (``tucker.core[..., i]``); ``query``, ``key``, ``value`` and ``output`` are the four weights rebuilt
    from it (the denoised layer)."""

    tucker: Tucker
    query: np.ndarray
    key: np.ndarray
    value: np.ndarray
    output: np.ndarray


def multihead_tucker(W_q, W_k, W_v, W_o, heads: int, ranks=None, *, tolerance: float = 0.0,
                     max_sweeps: int = 50, fit_tolerance: float = 1e-10) -> MultiheadTucker:
    """Shared-factor Tucker denoising of an attention layer: W_q, W_k, W_v (d_model x heads*d_v) and W_o
    (heads*d_v x d_model), multilinear ``ranks`` (R_1, R_2, R_3) or a ``tolerance``, fitted by HOOI."""
    d = _tprod._multihead_tucker(W_q, W_k, W_v, W_o, int(heads), list(ranks or []), float(tolerance),
                                 int(max_sweeps), float(fit_tolerance))
    t = Tucker(d["core"], list(d["factors"]), list(d["modes"]), d["relative_error"], d["compression_ratio"],
               list(d["fit_history"]), int(d["sweeps"]))
    return MultiheadTucker(t, *d["weights"])


@dataclass
class MPO:
    """A matrix W (I x J) as a Matrix Product Operator: ``cores[n]`` of shape R_{n-1} x I_n x J_n x R_n,
    R_0 = R_N = 1, I = prod I_n, J = prod J_n, with little-endian indices i = i_1 + I_1 (i_2 + ...) (likewise j):
    W[i, j] = cores[0][:, i_1, j_1, :] @ ... @ cores[N-1][:, i_N, j_N, :]."""

    cores: List[np.ndarray]
    __array_ufunc__ = None  # so that X @ mpo reaches __rmatmul__ instead of NumPy's matmul

    @property
    def ranks(self) -> List[int]:
        return [c.shape[0] for c in self.cores] + [self.cores[-1].shape[3]]

    @property
    def shape(self):
        """(I, J)."""
        return (int(np.prod([c.shape[1] for c in self.cores])), int(np.prod([c.shape[2] for c in self.cores])))

    def parameter_count(self) -> int:
        return int(sum(c.size for c in self.cores))

    def full(self) -> np.ndarray:
        """The dense W."""
        x = self.cores[0][0]  # I_1 x J_1 x R_1
        for c in self.cores[1:]:
            # (i, j, r) x (r, i', j', r') -> (i, i', j, j', r'), little-endian: i + I * i'
            x = np.einsum("ijr,rabs->iajbs", x, c)
            x = x.reshape(x.shape[0] * x.shape[1], x.shape[2] * x.shape[3], x.shape[4], order="F")
        return x[:, :, 0]

    def matmul(self, X) -> np.ndarray:
        """X @ W for X of I columns, core by core without forming W."""
        return _tprod._mpo_product(X, self.cores)

    def __rmatmul__(self, X):
        return self.matmul(X)


def mpo_from_matrix(W, row_dims, col_dims, *, max_rank: Optional[int] = None, tolerance: float = 0.0) -> MPO:
    """W (I x J) as an MPO over the factorizations I = prod row_dims, J = prod col_dims, by TT-SVD: exact at full
    ranks (the default), else bond ranks at most ``max_rank`` and ||W - MPO||_F <= tolerance ||W||_F."""
    cap = np.iinfo(np.uint64).max if max_rank is None else int(max_rank)
    return MPO(list(_tprod._mpo_from_matrix(W, list(row_dims), list(col_dims), cap, float(tolerance))))


@dataclass
class BlockTerm:
    """X ≈ sum_p cores[p] x_0 factors[p][0] x_1 factors[p][1] ... (P block terms of multilinear rank (R_1, ...),
    factors with orthonormal columns); for a third-order X and ranks (L, M, N), the rank-(L, M, N) BTD."""

    cores: List[np.ndarray]
    factors: List[List[np.ndarray]]
    fit_history: List[float]
    relative_error: float
    compression_ratio: float
    sweeps: int

    def term(self, p: int) -> np.ndarray:
        x = self.cores[p]
        for mode, u in enumerate(self.factors[p]):
            x = _mode_multiply(x, u, mode)
        return x

    def reconstruct(self) -> np.ndarray:
        return sum(self.term(p) for p in range(len(self.cores)))


def block_term(X, terms: int, ranks, *, max_sweeps: int = 500, fit_tolerance: float = 1e-12, seed: int = 0,
               restarts: int = 1, init: str = "dominant_subspace", line_search: bool = True) -> BlockTerm:
    """The block-term decomposition by alternating least squares: ``terms`` terms of multilinear ``ranks`` (one per
    mode of X); ``init`` "dominant_subspace" (random combinations of X's leading singular vectors) or "random";
    ``restarts`` runs from seeds seed, seed + 1, ... and keeps the best fit; Bro's ``line_search`` between sweeps."""
    d = _tprod._block_term(X, int(terms), list(ranks), int(max_sweeps), float(fit_tolerance), int(seed),
                           int(restarts), str(init), bool(line_search))
    return BlockTerm(list(d["cores"]), [list(f) for f in d["factors"]], list(d["fit_history"]),
                     d["relative_error"], d["compression_ratio"], int(d["sweeps"]))


__all__ += ["MultiheadTucker", "multihead_tucker", "MPO", "mpo_from_matrix", "BlockTerm", "block_term"]


# --- Graph filters (paper 002): a signal is an array whose first axis is the graph's vertices ------------------

def _unfolding(x):
    """The signal's mode-1 unfolding (L x R, in Fortran order: a view of a Fortran-ordered array) and the function
    that folds a result of L' rows back to the signal's shape with L' in front."""
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("tprod: the signal is a 0-dimensional array; a graph signal has the vertices on its first axis")
    rest = x.shape[1:]
    unfolded = x.reshape(x.shape[0], int(np.prod(rest)), order="F")
    return unfolded, lambda y: y.reshape((y.shape[0],) + rest, order="F")


def _dtype_name(dtype) -> str:
    d = np.dtype(dtype)
    if d not in (np.float32, np.float64):
        raise TypeError(f"tprod: the graph filters compute in float32 or float64, not {d}")
    return d.name


def adjacency(vertices: int, edges, weights=None, *, directed: bool = False, dtype=np.float64) -> np.ndarray:
    """A (vertices x vertices): a[from, to] = weight (1 without ``weights``) for every edge (from, to), and
    a[to, from] too unless ``directed``; repeated edges add their weights."""
    edges = [(int(a), int(b)) for a, b in edges]
    w = [] if weights is None else [float(x) for x in np.asarray(weights).ravel()]
    return _tprod._adjacency(int(vertices), edges, w, bool(directed), _dtype_name(dtype))


def time_adjacency(steps: int, c: float, *, bidirectional: bool = False, dtype=np.float64) -> np.ndarray:
    """The RGTN time graph: a[l1, l2] = c^(l2 - l1) for l2 > l1 (0 < c < 1), or with ``bidirectional``
    Omega = (A + A^T) / 2."""
    return _tprod._time_adjacency(int(steps), float(c), bool(bidirectional), _dtype_name(dtype))


def degrees(A) -> np.ndarray:
    """The (out-)degrees d_l = sum_l2 a[l, l2]."""
    return _tprod._degrees(A)[:, 0]


def laplacian(A, *, normalized: bool = False) -> np.ndarray:
    """D - A, or with ``normalized`` I - D^(-1/2) A D^(-1/2) (an isolated vertex keeps 1 on the diagonal)."""
    return _tprod._laplacian(A, bool(normalized))


@dataclass
class GraphFourier:
    """The eigenbasis Psi = Phi diag(lam) Phi^T of a symmetric graph matrix: ``phi`` (orthonormal columns, the
    graph Fourier modes) and ``lam`` (the graph frequencies, ascending)."""

    phi: np.ndarray
    lam: np.ndarray

    def transform(self, x) -> np.ndarray:
        """x_hat = Phi^T x_1 x (along the first axis)."""
        return np.tensordot(self.phi.T, x, axes=1)

    def inverse(self, x_hat) -> np.ndarray:
        """x = Phi x_1 x_hat."""
        return np.tensordot(self.phi, x_hat, axes=1)

    def convolve(self, gamma, x) -> np.ndarray:
        """Phi diag(gamma) Phi^T x_1 x: one multiplier per graph frequency."""
        unfolded, fold = _unfolding(x)
        return fold(_tprod._spectral_convolution(self.phi, np.asarray(gamma, dtype=self.phi.dtype), unfolded))

    def polynomial_multipliers(self, alpha) -> np.ndarray:
        """f_alpha(lam_l) = sum_k alpha_k lam_l^k, so that convolve(polynomial_multipliers(alpha), x) equals
        polynomial_filter(Psi, alpha, x)."""
        return np.polynomial.polynomial.polyval(self.lam, np.asarray(alpha, dtype=np.float64)).astype(self.lam.dtype)


def graph_fourier(Psi) -> GraphFourier:
    """The graph Fourier basis of a symmetric Psi (a Laplacian or an undirected adjacency matrix)."""
    phi, lam = _tprod._graph_fourier(Psi)
    return GraphFourier(phi, lam[:, 0])


def polynomial_filter(Psi, alpha, x) -> np.ndarray:
    """f_alpha(Psi) x_1 x = sum_k alpha_k Psi^k x_1 x (Horner's rule) for a signal x on Psi's vertices."""
    unfolded, fold = _unfolding(x)
    return fold(_tprod._polynomial_filter(Psi, [float(a) for a in np.asarray(alpha).ravel()], unfolded))


def rgtn_forward(A, x, *, P=None, fast: bool = False) -> np.ndarray:
    """The RGTN forward pass on a time graph A: (I + A)^(-1/2) x_1 x; with ``fast``, (I + A) x_1 x; with an
    idempotent feature propagation ``P`` (x a steps x features matrix), x + A x P^T."""
    if P is not None:
        if fast:
            raise ValueError("tprod.rgtn_forward: the fast form takes no propagation P")
        return _tprod._rgtn_forward_propagated(A, P, x)
    unfolded, fold = _unfolding(x)
    return fold(_tprod._rgtn_forward(A, unfolded, bool(fast)))


def attention_coefficients(K, d_k: float) -> np.ndarray:
    """Theta = ReLU(K K^T / d_k) with a zero diagonal, for keys K (steps x features, or a tensor whose first axis is
    the steps): the context-dependent graph of tensorized spectral attention."""
    return _tprod._attention_coefficients(_unfolding(K)[0], float(d_k))


__all__ += ["adjacency", "time_adjacency", "degrees", "laplacian", "GraphFourier", "graph_fourier",
            "polynomial_filter", "rgtn_forward", "attention_coefficients"]


# --- Published architectures: checkpoints in Hugging Face's layout ---------------------------------------------

class _PublishedModel:
    """What the published architectures share: the config, the parameter count, writing the folder back, and paper
    004's interventions on the model's own weights (in place; each returns one dict per layer changed)."""

    _name = "tprod model"

    def __init__(self, impl):
        self._impl = impl

    @classmethod
    def _open(cls, impls, folder, dtype, *seed):
        d = np.dtype(dtype)
        if d not in (np.float32, np.float64):
            raise TypeError(f"{cls._name}.load: dtype {d}; tprod computes it in float32 or float64")
        return cls(impls[d == np.float64](os.fspath(folder), *seed))

    @property
    def config(self) -> dict:
        """The config.json fields of the model, as tprod will write them."""
        return json.loads(self._impl.config_json())

    def save(self, folder, dtype: Optional[str] = None) -> None:
        """Writes config.json and model.safetensors into folder (created if needed) in the published layout, in
        the model's dtype or as "F32" (from float64), "F16" or "BF16"; atomically per file."""
        self._impl.save(os.fspath(folder), dtype or "")

    def parameter_count(self) -> int:
        """The numbers the model holds (a head tied to the embedding counted once, with the embedding)."""
        return self._impl.parameter_count()

    def compress_attention(self, ranks, layers=None) -> List[dict]:
        """Replaces W_Q, W_K, W_V, W_O of each layer (all, or those listed) by their shared-factor multi-head
        Tucker reconstruction at multilinear ranks (R1, R2, R3) <= (d, d / heads, 4): tprod's multihead_tucker on
        the layer's attention matrices. Returns the compression ratio, ranks and the four matrices' relative errors
        per layer."""
        return self._impl.compress_attention([int(r) for r in ranks], list(layers or []))

    def laser_attention(self, rank: int, layers=None) -> List[dict]:
        """LASER: each of the four attention matrices replaced by its rank-k truncated SVD."""
        return self._impl.laser_attention(int(rank), list(layers or []))

    def laser_mlp(self, rank: int, layers=None, *, input: bool = True, output: bool = True) -> List[dict]:
        """LASER on the MLP: its input (d -> hidden) and/or output (hidden -> d) matrix replaced by its rank-k
        truncated SVD."""
        return self._impl.laser_mlp(int(rank), list(layers or []), bool(input), bool(output))


class GPT2(_PublishedModel):
    """GPT-2 read from a Hugging Face checkpoint folder: config.json beside model.safetensors (or a sharded
    model.safetensors.index.json), weights in F32, F16, BF16 (or F64 for float64), under GPT2Model's names or
    GPT2LMHeadModel's ("transformer." first). tprod computes it with its own layers (the encoder layer with p = 1,
    pre-norm, causal) in float32 or float64. Options config.json names that tprod does not implement, a missing,
    extra or misshapen tensor, or another model_type raise an error naming the file and the field or tensor.

        model = tprod.GPT2.load("gpt2-folder")
        z = model.logits(np.array([[464, 3290, 318]]))   # (B, T, V); a 1-D (T,) input gives (T, V)
        model.save("copy", dtype="BF16")                   # the same layout, readable by transformers

    save() writes a head that no longer equals the embedding as lm_head.weight, with tie_word_embeddings false.
    """

    _name = "tprod.GPT2"

    @classmethod
    def load(cls, folder, dtype=np.float64) -> "GPT2":
        return cls._open((_tprod._GPT2_float32, _tprod._GPT2_float64), folder, dtype)

    def logits(self, tokens) -> np.ndarray:
        """The next-token logits at every position of every sequence: tokens (T,) or (B, T) integers in
        [0, vocab_size), T <= n_positions; the result (T, V) or (B, T, V) in the model's dtype."""
        return self._impl.logits(np.asarray(from_dlpack(tokens)))


class _Bert(_PublishedModel):
    @classmethod
    def load(cls, folder, dtype=np.float64, seed: int = 1):
        """The model of a Hugging Face BERT folder. Tensors of a head the folder lacks (a classifier fine-tuned
        from a pre-trained encoder) are drawn from seed and listed by fresh()."""
        return cls._open(cls._impls(), folder, dtype, int(seed))

    def fresh(self) -> List[str]:
        """tprod's names of the parameters the checkpoint did not hold (drawn from the seed), as transformers'
        "newly initialized" warning lists them."""
        return list(self._impl.fresh())

    def logits(self, input_ids, token_type_ids=None, attention_mask=None) -> np.ndarray:
        """input_ids (T,) or (B, T) integers in [0, vocab_size), T <= max_position_embeddings; token_type_ids of
        the same shape in [0, type_vocab_size) (default all 0); attention_mask of the same shape, 1 on each
        sequence's tokens and 0 on the padding after them (default all 1)."""
        def array(x):
            return None if x is None else np.asarray(from_dlpack(x))
        return self._impl.logits(array(input_ids), array(token_type_ids), array(attention_mask))


class BertForSequenceClassification(_Bert):
    """BERT with its pooler and a classification head, read from a Hugging Face checkpoint folder (config.json
    beside model.safetensors or a sharded index; F32, F16, BF16 weights) under BertModel's names, or under
    "bert." with classifier.weight as BertForSequenceClassification writes them; LayerNorm weight/bias or the older
    gamma/beta. tprod computes it with its own layers (the encoder layer with p = 1, post-norm) in float32 or
    float64; logits() gives (B, num_labels) ((num_labels,) for a 1-D input).

        model = tprod.BertForSequenceClassification.load("bert-folder")
        z = model.logits(ids, token_type_ids=segments, attention_mask=mask)
    """

    _name = "tprod.BertForSequenceClassification"

    @staticmethod
    def _impls():
        return (_tprod._BertClassifier_float32, _tprod._BertClassifier_float64)


class BertForMaskedLM(_Bert):
    """BERT with its masked-language-model head (cls.predictions, the decoder tied to the word embeddings unless
    the folder holds cls.predictions.decoder.weight), read as BertForSequenceClassification reads its folder;
    BertForPreTraining's folders too (the next-sentence head is skipped). logits() gives (B, T, vocab_size)."""

    _name = "tprod.BertForMaskedLM"

    @staticmethod
    def _impls():
        return (_tprod._BertMaskedLM_float32, _tprod._BertMaskedLM_float64)


class GPT2Tokenizer:
    """GPT-2's byte-level BPE tokenizer (OpenAI's encoder.py) on GPT-2's published files: encoder.json and vocab.bpe
    (scripts/get-gpt2-vocabulary.sh fetches them), or a Hugging Face folder's vocab.json and merges.txt. Text in
    UTF-8 (a str, or bytes whose invalid sequences read as U+FFFD); the pieces are GPT-2's pattern's, with Unicode's
    White_Space and general categories L and N (from ICU).

        tok = tprod.GPT2Tokenizer.from_folder("build/data/gpt2-vocabulary")
        ids = tok.encode("Hello world!")     # array([15496, 995, 0])
        tok.decode(ids)                      # 'Hello world!'
    """

    def __init__(self, encoder, merges):
        self._impl = _tprod._BPETokenizer(os.fspath(encoder), os.fspath(merges))

    @classmethod
    def from_folder(cls, folder) -> "GPT2Tokenizer":
        """The tokenizer of a folder holding encoder.json and vocab.bpe, or vocab.json and merges.txt."""
        tokenizer = cls.__new__(cls)
        tokenizer._impl = _tprod._BPETokenizer.from_folder(os.fspath(folder))
        return tokenizer

    def __len__(self) -> int:
        return self._impl.size()

    def id(self, symbol: str) -> int:
        """The id of a symbol as encoder.json spells it, e.g. "<|endoftext|>"."""
        return self._impl.id(symbol)

    def encode(self, text) -> np.ndarray:
        """The ids of text (str or UTF-8 bytes), int64."""
        return self._impl.encode(text)

    def decode(self, ids, errors: str = "replace") -> str:
        """The text of ids; bytes that do not form UTF-8 (ids cut inside a character) decode by `errors`."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_bytes(self, ids) -> bytes:
        """The bytes of ids, exactly."""
        return self._impl.decode(np.asarray(from_dlpack(ids)))

    def pieces(self, text) -> List[str]:
        """The pieces GPT-2's pattern splits text into, before the merges."""
        return self._impl.pieces(text)


class BertTokenizer:
    """BERT's WordPiece tokenizer (Google's tokenization.py: BasicTokenizer, then WordpieceTokenizer) on a vocab.txt
    (scripts/get-bert-vocabulary.sh writes bert-base-uncased's; every BERT checkpoint folder holds one). Text in
    UTF-8 (a str, or bytes whose invalid sequences read as U+FFFD); with lower_case (the uncased models), words are
    lower-cased and stripped of accents; punctuation and CJK ideographs split; words cut greedily into the longest
    vocabulary pieces, continuations spelled "##".

        tok = tprod.BertTokenizer.from_folder("build/data/bert-vocabulary")
        tok.tokenize("Unaffable!")                 # ['una', '##ffa', '##ble', '!']
        ids, segments = tok.encode("a question", "its answer")   # [CLS] a [SEP] b [SEP], segments 0 … 0 1 … 1
    """

    def __init__(self, vocabulary, lower_case: bool = True):
        self._impl = _tprod._WordPieceTokenizer(os.fspath(vocabulary), bool(lower_case))

    @classmethod
    def from_folder(cls, folder) -> "BertTokenizer":
        """The tokenizer of a folder's vocab.txt, lower-casing as its tokenizer_config.json's do_lower_case says
        (true without one)."""
        tokenizer = cls.__new__(cls)
        tokenizer._impl = _tprod._WordPieceTokenizer.from_folder(os.fspath(folder))
        return tokenizer

    def __len__(self) -> int:
        return self._impl.size()

    @property
    def lower_case(self) -> bool:
        return self._impl.lower_case()

    def id(self, token: str) -> int:
        """The id of a token as vocab.txt spells it, e.g. "[MASK]" or "##ing"."""
        return self._impl.id(token)

    def token(self, id: int) -> str:
        return self._impl.token(int(id))

    def tokenize(self, text) -> List[str]:
        """The WordPiece pieces of text, without [CLS] and [SEP]."""
        return self._impl.tokenize(text)

    def ids(self, text) -> np.ndarray:
        """The ids of tokenize(text), int64."""
        return self._impl.ids(text)

    def encode(self, first, second=None, max_length: int = 512):
        """(ids, token_type_ids) of [CLS] first [SEP] (second [SEP]), int64, at most max_length ids: the longer
        text loses its last pieces first."""
        return self._impl.encode(first, second, int(max_length))

    def decode(self, ids) -> str:
        """The ids' tokens joined by spaces with the "##" continuations glued on (lower-cased text for an uncased
        vocabulary, not the original)."""
        return self._impl.decode(np.asarray(from_dlpack(ids)))


if hasattr(_tprod, "_BPETokenizer"):
    __all__ += ["GPT2Tokenizer", "BertTokenizer"]
else:  # a build without tprod::text (ICU) has no tokenizer
    del GPT2Tokenizer, BertTokenizer


if hasattr(_tprod, "_GPT2_float64"):
    __all__ += ["GPT2", "BertForSequenceClassification", "BertForMaskedLM"]
else:  # a build without tprod::io (nlohmann-json) has no checkpoint reader
    del GPT2, BertForSequenceClassification, BertForMaskedLM


# --- Arrays of other libraries: torch tensors, and any other array that speaks DLPack ---------------------------

_DLPACK_DEVICES = {1: "the CPU", 2: "a CUDA device", 3: "pinned CUDA host memory", 4: "an OpenCL device",
                   7: "a Vulkan device", 8: "a Metal device", 10: "a ROCm device", 13: "CUDA managed memory",
                   14: "a oneAPI device"}


def from_dlpack(x) -> np.ndarray:
    """x as a NumPy array over the same memory (no copy) when it is a CPU array of another library that speaks
    DLPack (a torch.Tensor, a JAX or CuPy array on the host, ...); NumPy arrays and other objects pass unchanged.
    Every tprod function applies it to its host array arguments. Raises TypeError for an array on a device (in a
    CUDA build the algebra, svd, the ranks, qr, the norms and the predicates take CUDA arrays directly and compute
    on their device) and for a torch tensor that requires grad (use tprod.torch for autograd)."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        return x
    kind = f"{type(x).__module__}.{type(x).__name__}"
    device = int(x.__dlpack_device__()[0])
    if device != 1:  # kDLCPU
        where = _DLPACK_DEVICES.get(device, f"DLPack device type {device}")
        raise TypeError(f"tprod: a {kind} on {where}; tprod.from_dlpack gives host arrays: move it to the CPU "
                        f"first (a torch tensor with .cpu())")
    if getattr(x, "requires_grad", False):
        raise TypeError(f"tprod: a {kind} that requires grad; pass x.detach(), or use the autograd functions and "
                        f"layers of tprod.torch")
    try:
        return np.from_dlpack(x)
    except (RuntimeError, BufferError, TypeError) as e:  # e.g. torch's conjugate or negative bit
        if hasattr(x, "__array__"):  # a dtype DLPack lacks in that library (bool in torch 1.13): its own view
            try:
                return np.asarray(x)
            except (RuntimeError, TypeError):
                pass
        raise TypeError(f"tprod: a {kind} that NumPy cannot view through DLPack ({e}); pass x.resolve_conj()"
                        f" / x.resolve_neg() or a copy") from e


def _accepting_dlpack(f):
    """f with its array arguments passed through from_dlpack, so that torch tensors go in without a copy, and with
    CUDA arrays sent to f's device version (tprod._device). NumPy arguments take the direct call (the bindings
    refuse any other array with a TypeError, and only then are the arguments looked at), which keeps the small
    calls' overhead where it was."""
    name = f.__name__

    @functools.wraps(f)
    def accepting(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except TypeError:
            if _device.any_device_array(args, kwargs):
                if name in _device.BOUND:  # a host binding, which refused the CUDA array: its device twin
                    return getattr(_device, name)(*args, **kwargs)
                if name in _device.FUNCTIONS:  # already sent to the device: the TypeError is its own
                    raise
                raise TypeError(f"tprod.{name} computes on the CPU only: move its arguments there first (a torch "
                                f"tensor with .cpu()); on the GPU tprod computes "
                                f"{', '.join(_device.FUNCTIONS)}") from None
            converted = tuple(from_dlpack(a) for a in args)
            keywords = {k: from_dlpack(v) for k, v in kwargs.items()}
            if all(a is b for a, b in zip(converted, args)) and all(keywords[k] is kwargs[k] for k in kwargs):
                raise  # nothing to convert: the TypeError is the call's own
        return f(*converted, **keywords)
    return accepting


for _name in list(__all__):
    _f = globals()[_name]
    if callable(_f) and not isinstance(_f, type) and _name not in ("dct", "dft", "identity_transform",
                                                                   "num_threads", "set_num_threads"):
        globals()[_name] = _accepting_dlpack(_f)
del _name, _f
__all__ += ["from_dlpack"]
