# SPDX-License-Identifier: Apache-2.0
"""Tucker, Tensor-Train and CP from Python, against NumPy: the SVDs of the unfoldings, exact low-rank tensors
built in the test, and the error bounds the methods promise."""
import numpy as np
import pytest

import tprod


def unfolding(x, mode):
    return np.moveaxis(x, mode, 0).reshape(x.shape[mode], -1)


def low_multilinear_rank(rng, shape, ranks):
    x = rng.standard_normal(ranks)
    for mode, (i, r) in enumerate(zip(shape, ranks)):
        x = np.moveaxis(np.tensordot(rng.standard_normal((i, r)), x, axes=(1, mode)), 0, mode)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hosvd_against_unfolding_svds(rng, dtype):
    x = rng.standard_normal((5, 4, 6)).astype(dtype)
    eps = np.finfo(dtype).eps
    full = tprod.hosvd(x)
    np.testing.assert_allclose(full.reconstruct(), x, atol=200 * eps * np.abs(x).max())
    r = tprod.hosvd(x, [3, 2, 4])
    assert r.core.shape == (3, 2, 4) and [u.shape for u in r.factors] == [(5, 3), (4, 2), (6, 4)]
    for mode, u in enumerate(r.factors):
        np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=100 * eps)
        # the leading left singular subspace of the unfolding: equal projectors, whatever the signs
        w = np.linalg.svd(unfolding(x.astype(np.float64), mode))[0][:, : u.shape[1]]
        np.testing.assert_allclose(u @ u.T, w @ w.T, atol=1e4 * eps)
    measured = np.linalg.norm(r.reconstruct() - x) / np.linalg.norm(x)
    assert np.isclose(r.relative_error, measured, rtol=1e-3)
    assert tprod.hooi(x, [3, 2, 4]).relative_error <= r.relative_error + 1e-6


def test_tolerance_and_exact_ranks(rng):
    x = low_multilinear_rank(rng, (6, 5, 7), (2, 3, 2))
    for method in (tprod.hosvd, tprod.st_hosvd, tprod.hooi):
        r = method(x, tolerance=1e-8)
        assert r.core.shape == (2, 3, 2), method.__name__
        assert r.relative_error < 1e-10
    noisy = x + 1e-2 * rng.standard_normal(x.shape)
    r = tprod.st_hosvd(noisy, tolerance=0.05)
    assert r.relative_error <= 0.05
    partial = tprod.hosvd(x, [2], modes=[1])
    assert partial.modes == [1] and partial.core.shape == (6, 2, 7)


def test_tt_svd(rng):
    x = rng.standard_normal((3, 4, 2, 5))
    tt = tprod.tt_svd(x)
    assert tt.ranks[0] == 1 and tt.ranks[-1] == 1
    np.testing.assert_allclose(tt.full(), x, atol=1e-12 * np.abs(x).max() * 100)
    capped = tprod.tt_svd(x, max_rank=2)
    assert max(capped.ranks) <= 2
    approx = tprod.tt_svd(x, tolerance=0.3)
    assert np.linalg.norm(approx.full() - x) <= 0.3 * np.linalg.norm(x) * (1 + 1e-12)
    # a tensor of TT ranks (1, 2, 2, 1) is recovered with exactly those ranks
    cores = [rng.standard_normal(s) for s in ((1, 4, 2), (2, 3, 2), (2, 5, 1))]
    y = tprod.TensorTrain(cores).full()
    assert tprod.tt_svd(y, tolerance=1e-10).ranks == [1, 2, 2, 1]


def test_cp_als_recovers_a_rank_two_tensor(rng):
    a, b, c = rng.standard_normal((5, 2)), rng.standard_normal((4, 2)), rng.standard_normal((6, 2))
    x = np.einsum("ir,jr,kr->ijk", a, b, c)
    r = tprod.cp_als(x, 2, seed=3)
    assert r.relative_error < 1e-6 and r.weights.shape == (2,) and np.all(np.diff(r.weights) <= 0)
    np.testing.assert_allclose(r.reconstruct(), x, atol=1e-5 * np.abs(x).max())
    for _ in range(10):  # the same seed gives the same bits, call after call
        again = tprod.cp_als(x, 2, seed=3)
        np.testing.assert_array_equal(again.weights, r.weights)
        for f, g in zip(again.factors, r.factors):
            np.testing.assert_array_equal(f, g)


def test_bad_input():
    with pytest.raises(TypeError, match="float32 or float64"):
        tprod.hosvd(np.ones((2, 2, 2), dtype=np.complex128))
    with pytest.raises(ValueError):
        tprod.hosvd(np.ones((2, 2, 2)), [3, 1, 1])
    with pytest.raises(ValueError, match="0-dimensional"):
        tprod.tt_svd(np.array(1.0))
    with pytest.raises(ValueError):
        tprod.cp_als(np.ones((2, 2, 2)), 0)
