# SPDX-License-Identifier: Apache-2.0
"""The L-SVD, ranks, L-QR and the spectral and nuclear norms from Python, checked with NumPy: the factors'
identities through the reference L-product, and the singular values of the reference transform's slices."""
import numpy as np
import pytest

import tprod
from conftest import Reference, tolerance

CASES = [(tprod.dct, Reference("dct")), (tprod.dft, Reference("dft")), (tprod.identity_transform, Reference("identity"))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(5, 3, 4), (3, 5, 6), (1, 1, 1), (4, 4, 1)])
def test_svd_identities(rng, dtype, shape):
    a = rng.standard_normal(shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    m, n, p = shape
    tol = tolerance(dtype, m * n * p) * 20
    for make, ref in CASES:
        L = make()
        r = tprod.svd(a, L)
        k = min(m, n)
        assert r.U.shape == (m, k, p) and r.S.shape == (k, k, p) and r.V.shape == (n, k, p)
        usv = ref.product(ref.product(r.U, r.S), ref.transpose(r.V))
        np.testing.assert_allclose(usv, a, atol=tol * max(1, np.abs(a).max()))
        utu = ref.product(ref.transpose(r.U), r.U)
        np.testing.assert_allclose(utu, tprod.identity(k, p, L, dtype=dtype), atol=tol)
        # sigma: the singular values of the reference's transform-domain slices, in descending order
        for col, s in enumerate(ref.slices(a)[: r.sigma.shape[1]]):
            np.testing.assert_allclose(r.sigma[:, col], np.linalg.svd(s, compute_uv=False), atol=tol * max(1, np.abs(s).max()))
        np.testing.assert_allclose(r.reconstruct(), a, atol=tol * max(1, np.abs(a).max()))
        U, S, V = r
        assert U is r.U


def test_full_and_truncated_svd(rng):
    a = rng.standard_normal((6, 4, 5))
    ref = Reference("dct")
    full = tprod.svd(a, tprod.dct(), full=True)
    assert full.U.shape == (6, 6, 5) and full.V.shape == (4, 4, 5)
    sigma = np.array([np.linalg.svd(s, compute_uv=False) for s in ref.slices(a)]).T  # 4 x 5
    for k in (1, 2, 4):
        r = tprod.svd(a, tprod.dct(), rank=k)
        assert r.U.shape == (6, k, 5) and r.kept == [k] * 5
        # Eckart-Young in each slice of an orthogonal transform: the error is the discarded singular values
        err = np.linalg.norm((r.reconstruct() - a).ravel())
        assert np.isclose(err, np.sqrt((sigma[k:] ** 2).sum()), rtol=1e-10, atol=1e-12)
    r = tprod.svd(a, tprod.dct(), energy=0.9)
    kept_energy = sum((sigma[: r.kept[j], j] ** 2).sum() for j in range(5))
    assert kept_energy >= 0.9 * (sigma ** 2).sum()
    # the smallest such multi-rank: dropping the smallest kept value anywhere falls below 0.9
    smallest = min(sigma[r.kept[j] - 1, j] for j in range(5) if r.kept[j] > 0)
    assert kept_energy - smallest ** 2 < 0.9 * (sigma ** 2).sum()
    with pytest.raises(ValueError, match="rank or energy"):
        tprod.svd(a, rank=2, energy=0.5)
    with pytest.raises(tprod.ShapeError, match="1..min"):
        tprod.svd(a, rank=5)
    with pytest.raises(tprod.ShapeError):
        tprod.svd(a, energy=1.5)


def test_ranks_qr_norms(rng):
    p = 6
    ref = Reference("dct")
    # a tensor whose transform-domain slices have ranks 1, 2, 3, 1, 2, 3
    slices = [rng.standard_normal((5, r)) @ rng.standard_normal((r, 4)) for r in (1, 2, 3, 1, 2, 3)]
    a = ref.inverse(np.stack(slices, axis=2), real=True)
    info = tprod.ranks(a, tprod.dct())
    assert info.multi_rank == [1, 2, 3, 1, 2, 3] and info.tubal_rank == 3 and np.isclose(info.average_rank, 2.0)
    assert tprod.tubal_rank(a, tprod.dct()) == 3 and tprod.multi_rank(a) == [1, 2, 3, 1, 2, 3]
    q, r = tprod.qr(a, tprod.dct())
    assert q.shape == (5, 4, p) and r.shape == (4, 4, p)
    np.testing.assert_allclose(ref.product(q, r), a, atol=1e-12 * np.abs(a).max() * 20)
    for s_hat, r_slice in zip(ref.slices(r), range(p)):
        assert np.allclose(np.tril(s_hat, -1), 0, atol=1e-12)
    b = rng.standard_normal((4, 3, 5))
    for make, ref in CASES:
        sv = [np.linalg.svd(s, compute_uv=False) for s in ref.slices(b)]
        assert np.isclose(tprod.spectral_norm(b, make()), max(s.max() for s in sv), rtol=1e-12)
        scale = 1.0 / 5 if make is tprod.dft else 1.0  # the DFT's FᴴF = pI
        assert np.isclose(tprod.nuclear_norm(b, make()), scale * sum(s.sum() for s in sv), rtol=1e-12)
