# SPDX-License-Identifier: Apache-2.0
"""The graph filters from Python (paper 002), against NumPy computations of their definitions: adjacency from edges,
Laplacians, the eigenbasis, spectral convolution and polynomial filters, the time graph, the RGTN passes and the
attention graph."""
import numpy as np
import pytest

import tprod

EDGES = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]


def test_adjacency_and_laplacians():
    w = [1.0, 2.0, 0.5, 1.5, 3.0]
    a = tprod.adjacency(5, EDGES, w)
    ref = np.zeros((5, 5))
    for (i, j), x in zip(EDGES, w):
        ref[i, j] += x
        ref[j, i] += x
    np.testing.assert_array_equal(a, ref)
    d = ref.sum(axis=1)
    np.testing.assert_array_equal(tprod.degrees(a), d)
    np.testing.assert_allclose(tprod.laplacian(a), np.diag(d) - ref)
    s = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    np.testing.assert_allclose(tprod.laplacian(a, normalized=True), np.eye(5) - s[:, None] * ref * s[None, :],
                               atol=1e-15)
    directed = tprod.adjacency(3, [(0, 1), (0, 1)], directed=True, dtype=np.float32)
    assert directed.dtype == np.float32 and directed[0, 1] == 2 and directed[1, 0] == 0
    with pytest.raises(ValueError, match="vertex"):
        tprod.adjacency(3, [(0, 3)])
    with pytest.raises(ValueError, match="weights"):
        tprod.adjacency(3, [(0, 1)], [1.0, 2.0])
    with pytest.raises(ValueError, match="square"):
        tprod.laplacian(np.ones((2, 3)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fourier_basis_convolution_and_polynomial_filter(rng, dtype):
    lap = tprod.laplacian(tprod.adjacency(5, EDGES, dtype=dtype))
    eps = np.finfo(dtype).eps
    b = tprod.graph_fourier(lap)
    np.testing.assert_allclose(b.phi @ np.diag(b.lam) @ b.phi.T, lap, atol=200 * eps)
    np.testing.assert_allclose(b.lam, np.linalg.eigvalsh(lap.astype(np.float64)), atol=200 * eps)
    x = rng.standard_normal((5, 3, 2)).astype(dtype)  # a tensor signal on the 5 vertices
    np.testing.assert_allclose(b.inverse(b.transform(x)), x, atol=200 * eps)
    alpha = [0.5, -0.2, 0.1]
    by_powers = sum(a * np.tensordot(np.linalg.matrix_power(lap.astype(np.float64), k), x, axes=1)
                    for k, a in enumerate(alpha))
    y = tprod.polynomial_filter(lap, alpha, x)
    assert y.shape == x.shape and y.dtype == dtype
    np.testing.assert_allclose(y, by_powers, atol=2000 * eps)
    # the same filter in the spectral domain: Phi diag(f(lam)) Phi^T
    np.testing.assert_allclose(b.convolve(b.polynomial_multipliers(alpha), x), by_powers, atol=2000 * eps)
    vector = x[:, 0, 0].copy()
    np.testing.assert_allclose(tprod.polynomial_filter(lap, alpha, vector), by_powers[:, 0, 0], atol=2000 * eps)
    with pytest.raises(ValueError, match="vertices|5"):
        tprod.polynomial_filter(lap, alpha, np.ones((4, 2), dtype=dtype))
    with pytest.raises(TypeError, match="Psi"):
        tprod.polynomial_filter(lap.astype(np.float64 if dtype == np.float32 else np.float32), alpha, x)
    with pytest.raises(ValueError, match="multipliers"):
        b.convolve(np.ones(4), x)
    with pytest.raises(ValueError):
        tprod.graph_fourier(np.triu(np.ones((3, 3))))  # not symmetric


def test_time_graph_and_rgtn(rng):
    c, steps = 0.6, 6
    a = tprod.time_adjacency(steps, c)
    l1, l2 = np.meshgrid(np.arange(steps), np.arange(steps), indexing="ij")
    ref = np.where(l2 > l1, c ** (l2 - l1).astype(float), 0.0)
    np.testing.assert_allclose(a, ref, atol=1e-15)
    np.testing.assert_allclose(tprod.time_adjacency(steps, c, bidirectional=True), (ref + ref.T) / 2, atol=1e-15)
    x = rng.standard_normal((steps, 4))
    np.testing.assert_allclose(tprod.rgtn_forward(a, x, fast=True), x + a @ x, atol=1e-14)
    # (I + A)^(-1/2) x: its square inverts I + A
    y = tprod.rgtn_forward(a, x)
    r = tprod.rgtn_forward(a, np.eye(steps))
    np.testing.assert_allclose(r @ r @ (np.eye(steps) + a), np.eye(steps), atol=1e-12)
    np.testing.assert_allclose(y, r @ x, atol=1e-12)
    p = np.diag([1.0, 1.0, 0.0, 0.0])  # idempotent
    np.testing.assert_allclose(tprod.rgtn_forward(a, x, P=p), x + a @ x @ p.T, atol=1e-14)
    with pytest.raises(ValueError, match="idempotent"):
        tprod.rgtn_forward(a, x, P=2 * p)
    with pytest.raises(ValueError, match="c"):
        tprod.time_adjacency(3, 1.5)


def test_attention_coefficients(rng):
    k = rng.standard_normal((5, 3, 2))
    k1 = k.reshape(5, -1, order="F")
    theta = np.maximum(k1 @ k1.T / 4.0, 0)
    np.fill_diagonal(theta, 0)
    np.testing.assert_allclose(tprod.attention_coefficients(k, 4.0), theta, atol=1e-14)
    with pytest.raises(ValueError, match="d_k"):
        tprod.attention_coefficients(k, 0.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        tprod.attention_coefficients(k.astype(np.complex128), 1.0)


def test_empty_and_one_vertex_graphs():
    none = np.zeros((0, 0))
    b = tprod.graph_fourier(none)
    assert b.phi.shape == (0, 0) and b.lam.shape == (0,)
    assert b.convolve(np.zeros(0), np.zeros((0, 3))).shape == (0, 3)
    assert tprod.polynomial_filter(none, [1.0, 2.0], np.zeros((0, 2, 3))).shape == (0, 2, 3)
    assert tprod.rgtn_forward(tprod.time_adjacency(0, 0.5), np.zeros((0, 2))).shape == (0, 2)
    assert tprod.attention_coefficients(np.zeros((0, 3)), 1.0).shape == (0, 0)
    assert tprod.degrees(none).shape == (0,) and tprod.laplacian(none, normalized=True).shape == (0, 0)
    one = tprod.graph_fourier(np.full((1, 1), 3.0))
    np.testing.assert_allclose(np.abs(one.phi), [[1.0]])
    np.testing.assert_allclose(one.lam, [3.0])
    np.testing.assert_allclose(tprod.rgtn_forward(tprod.time_adjacency(1, 0.5), np.ones((1, 2))), np.ones((1, 2)))
