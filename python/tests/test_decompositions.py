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


def test_multihead_tucker_against_the_stacked_heads(rng):
    d_model, heads, d_v = 6, 3, 2
    wq, wk, wv = (rng.standard_normal((d_model, heads * d_v)) for _ in range(3))
    wo = rng.standard_normal((heads * d_v, d_model))
    # W_all (d_model x d_v x 4 x heads), written from the definition
    w_all = np.empty((d_model, d_v, 4, heads))
    for i in range(heads):
        cols = slice(i * d_v, (i + 1) * d_v)
        w_all[:, :, 0, i], w_all[:, :, 1, i], w_all[:, :, 2, i] = wq[:, cols], wk[:, cols], wv[:, cols]
        w_all[:, :, 3, i] = wo[cols, :].T
    full = tprod.multihead_tucker(wq, wk, wv, wo, heads)  # full ranks: the layer itself
    for rebuilt, w in zip((full.query, full.key, full.value, full.output), (wq, wk, wv, wo)):
        np.testing.assert_allclose(rebuilt, w, atol=1e-12 * 100)
    r = tprod.multihead_tucker(wq, wk, wv, wo, heads, [3, 2, 2])
    assert r.tucker.core.shape == (3, 2, 2, heads) and r.tucker.modes == [0, 1, 2]
    approx = r.tucker.reconstruct()
    assert np.isclose(r.tucker.relative_error, np.linalg.norm(approx - w_all) / np.linalg.norm(w_all), rtol=1e-6)
    np.testing.assert_allclose(r.query[:, 2:4], approx[:, :, 0, 1], atol=1e-12)  # head 1's W_q from the model
    np.testing.assert_allclose(r.output[0:2, :], approx[:, :, 3, 0].T, atol=1e-12)
    # the shared factors span the leading subspaces no worse than a plain HOOI of W_all over the same modes
    plain = tprod.hooi(w_all, [3, 2, 2], modes=[0, 1, 2])
    assert r.tucker.relative_error <= plain.relative_error + 1e-9
    with pytest.raises(ValueError, match="divide|head"):
        tprod.multihead_tucker(wq, wk, wv, wo, 4)
    with pytest.raises(TypeError, match="W_k"):
        tprod.multihead_tucker(wq, wk.astype(np.float32), wv, wo, heads)


def mpo_dense_reference(cores):
    """W[i, j] = prod_n G_n[:, i_n, j_n, :], i = i_1 + I_1 (i_2 + ...), by explicit index loops."""
    rows, cols = [c.shape[1] for c in cores], [c.shape[2] for c in cores]
    w = np.zeros((int(np.prod(rows)), int(np.prod(cols))))
    for i in range(w.shape[0]):
        ii = np.unravel_index(i, rows, order="F")
        for j in range(w.shape[1]):
            jj = np.unravel_index(j, cols, order="F")
            m = np.eye(1)
            for n, c in enumerate(cores):
                m = m @ c[:, ii[n], jj[n], :]
            w[i, j] = m[0, 0]
    return w


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mpo_from_matrix_and_product(rng, dtype):
    w = rng.standard_normal((12, 6)).astype(dtype)
    eps = np.finfo(dtype).eps
    m = tprod.mpo_from_matrix(w, [3, 4], [2, 3])  # exact at full ranks
    assert m.shape == (12, 6) and m.ranks[0] == 1 and m.ranks[-1] == 1
    assert [c.shape[1:3] for c in m.cores] == [(3, 2), (4, 3)]
    np.testing.assert_allclose(mpo_dense_reference([c.astype(np.float64) for c in m.cores]), w, atol=500 * eps)
    np.testing.assert_allclose(m.full(), w, atol=500 * eps)
    x = rng.standard_normal((5, 12)).astype(dtype)
    np.testing.assert_allclose(m.matmul(x), x.astype(np.float64) @ w, atol=2000 * eps)
    np.testing.assert_allclose(x @ m, m.matmul(x))
    capped = tprod.mpo_from_matrix(w, [3, 4], [2, 3], max_rank=2)
    assert max(capped.ranks) == 2 and capped.parameter_count() == 1 * 3 * 2 * 2 + 2 * 4 * 3 * 1
    loose = tprod.mpo_from_matrix(w.astype(np.float64), [3, 4], [2, 3], tolerance=0.5)
    assert np.linalg.norm(loose.full() - w) <= 0.5 * np.linalg.norm(w) * (1 + 1e-12)
    with pytest.raises(ValueError):
        tprod.mpo_from_matrix(w, [3, 5], [2, 3])
    with pytest.raises(ValueError, match="columns|match|MPO"):
        m.matmul(np.ones((2, 11), dtype=dtype))


def test_block_term_recovers_two_terms(rng):
    terms = [low_multilinear_rank(rng, (6, 5, 7), (2, 2, 2)) for _ in range(2)]
    x = terms[0] + terms[1]
    r = tprod.block_term(x, 2, [2, 2, 2], seed=1, restarts=3)
    assert len(r.cores) == 2 and r.cores[0].shape == (2, 2, 2)
    assert all(f.shape == (i, 2) for fs in r.factors for f, i in zip(fs, x.shape))
    assert np.isclose(r.relative_error, np.linalg.norm(r.reconstruct() - x) / np.linalg.norm(x), rtol=1e-6,
                      atol=1e-12)
    assert r.relative_error < 1e-6
    again = tprod.block_term(x, 2, [2, 2, 2], seed=1, restarts=3)
    np.testing.assert_array_equal(again.cores[0], r.cores[0])
    one = tprod.block_term(x, 1, [2, 2, 2], init="random", line_search=False, max_sweeps=50)
    assert one.relative_error > 0.1  # one term cannot hold two generic ones
    with pytest.raises(ValueError, match="rank"):
        tprod.block_term(x, 2, [2, 2])
    with pytest.raises(ValueError, match="init"):
        tprod.block_term(x, 2, [2, 2, 2], init="svd")
