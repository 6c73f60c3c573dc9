# SPDX-License-Identifier: Apache-2.0
"""tprod's algebra from Python against NumPy computations of the definitions (conftest.Reference)."""
import concurrent.futures

import numpy as np
import pytest

import tprod
from conftest import Reference, tolerance

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def random(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def transforms(p, rng):
    """(tprod transform, its reference) for each kind, Z well conditioned."""
    z = np.eye(p) + 0.3 * rng.standard_normal((p, p)) / np.sqrt(p)
    zc = z + 0.2j * rng.standard_normal((p, p)) / np.sqrt(p)
    return [(tprod.dct(), Reference("dct")), (tprod.dft(), Reference("dft")),
            (tprod.identity_transform(), Reference("identity")),
            (tprod.matrix_transform(z), Reference("matrix", z)), (tprod.matrix_transform(zc), Reference("matrix", zc))]


def close(actual, expected, dtype, size):
    scale = max(1.0, float(np.max(np.abs(expected))) if np.size(expected) else 1.0)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tolerance(dtype, size) * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 3, 2, 5), (1, 1, 1, 1), (3, 5, 4, 8), (2, 1, 3, 7)])
def test_product_transpose_inverse_against_numpy(rng, dtype, shape):
    m, l, n, p = shape
    a, b = random(rng, (m, l, p), dtype), random(rng, (l, n, p), dtype)
    for L, ref in transforms(p, rng):
        complex_z = np.iscomplexobj(ref.z)
        if complex_z and not np.issubdtype(dtype, np.complexfloating):
            # a real tensor under a complex Z is promoted to complex, results included
            c = tprod.product(a, b, L)
            assert np.iscomplexobj(c)
        out_dtype = np.result_type(dtype, np.complex64) if complex_z else dtype
        c = tprod.product(a, b, L)
        close(c, ref.product(a, b), out_dtype, l * p)
        assert c.dtype == out_dtype and c.flags.f_contiguous
        close(tprod.transpose(a, L), ref.transpose(a), out_dtype, p)
        if m == l:
            sq = (a + 4 * np.eye(m, dtype=dtype)[:, :, None] * np.ones(p, dtype=dtype)).astype(out_dtype)
            inv = tprod.inverse(sq, L)
            close(tprod.product(sq, inv, L), tprod.identity(m, p, L, dtype=out_dtype), out_dtype, 10 * m * p)


@pytest.mark.parametrize("dtype", DTYPES)
def test_facewise_norms_inner(rng, dtype):
    a, b, c = random(rng, (3, 4, 5), dtype), random(rng, (4, 2, 5), dtype), random(rng, (3, 4, 5), dtype)
    close(tprod.facewise(a, b), np.einsum("ilk,ljk->ijk", a, b), dtype, 20)
    assert np.isclose(tprod.frobenius_norm(a), np.linalg.norm(a.ravel()), rtol=tolerance(dtype, 60))
    assert np.isclose(tprod.inner(a, c), np.vdot(a.ravel(), c.ravel()), rtol=tolerance(dtype, 60) * 10)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_transformed_chain(rng, dtype):
    a, b = random(rng, (3, 4, 6), dtype), random(rng, (3, 4, 6), dtype)
    for L, ref in transforms(6, rng)[:4]:
        ahat, bhat = tprod.transform(a, L), tprod.transform(b, L)
        assert ahat.shape == (3, 4, 6) and ahat.dtype == dtype
        # A *_L B^T, A + B, 2A, computed in the transform domain, back to the original domain
        close(tprod.inverse_transform(ahat * bhat.T), ref.product(a, ref.transpose(b)), dtype, 24)
        close(tprod.inverse_transform(ahat + bhat), a + b, dtype, 24)
        close(tprod.inverse_transform(ahat - 2 * bhat), a - 2 * b, dtype, 24)
        assert np.isclose(ahat.frobenius_norm(), np.linalg.norm(ref.forward(a).ravel()), rtol=tolerance(dtype, 72))
        sq = tprod.transform(a[:, :3, :] + 3 * np.eye(3)[:, :, None], L)
        close(tprod.inverse_transform(sq * sq.inverse()), tprod.identity(3, 6, L, dtype=dtype), dtype, 200)


def test_dft_stores_half_spectrum(rng):
    a = rng.standard_normal((2, 3, 7))
    ahat = tprod.transform(a, tprod.dft())
    assert ahat.data.shape == (2, 3, 4) and ahat.data.dtype == np.complex128
    np.testing.assert_allclose(ahat.data, np.fft.fft(a, axis=2)[:, :, :4], atol=1e-12)
    assert tprod.dft().stored_slices(7) == 4 and tprod.dft().stored_slices(7, real=False) == 7


def test_identity_predicates_mode_product(rng):
    p = 5
    for L, ref in transforms(p, rng)[:4]:
        eye = tprod.identity(4, p, L)
        close(ref.forward(eye), np.broadcast_to(np.eye(4)[:, :, None], (4, 4, p)).astype(complex), np.float64, 20)
        assert tprod.is_orthogonal(eye, L) and tprod.is_f_symmetric(eye, L) and tprod.is_f_positive_definite(eye, L)
        assert not tprod.is_orthogonal(2 * eye, L)
    q = tprod.qr(rng.standard_normal((5, 3, 4)), tprod.dct())[0]
    assert tprod.is_orthogonal(q, tprod.dct())
    d = np.zeros((3, 3, 4))
    d[np.arange(3), np.arange(3), :] = 1.0
    assert tprod.is_f_diagonal(d) and not tprod.is_f_diagonal(rng.standard_normal((3, 3, 4)))
    a = rng.standard_normal((3, 4, 5))
    for mode, spec in enumerate(("ijk,li->ljk", "ijk,lj->ilk", "ijk,lk->ijl")):
        u = rng.standard_normal((2, a.shape[mode]))
        close(tprod.mode_product(a, u, mode), np.einsum(spec, a, u), np.float64, a.shape[mode])
    with pytest.raises(tprod.ShapeError, match="mode 3"):
        tprod.mode_product(a, np.ones((2, 2)), 3)


def test_layouts_are_read_not_reordered(rng):
    a = rng.standard_normal((4, 3, 6))
    b = rng.standard_normal((3, 2, 6))
    expected = tprod.product(np.asfortranarray(a), np.asfortranarray(b))
    spread = np.zeros((4, 6, 6), order="F")
    spread[:, ::2, :] = a
    for a_layout in (np.ascontiguousarray(a), np.asfortranarray(a), spread[:, ::2, :]):
        np.testing.assert_array_equal(tprod.product(a_layout, b), expected)


def test_empty_shapes(rng):
    for L, _ in transforms(3, rng)[:4]:
        assert tprod.product(np.zeros((0, 2, 3)), np.zeros((2, 4, 3)), L).shape == (0, 4, 3)
        assert tprod.product(np.zeros((2, 0, 3)), np.zeros((0, 4, 3)), L).shape == (2, 4, 3)
        assert tprod.frobenius_norm(np.zeros((0, 0, 3))) == 0
    assert tprod.transform(np.zeros((0, 2, 3)), tprod.dft()).data.shape == (0, 2, 2)


def test_bad_input_raises(rng):
    a = rng.standard_normal((3, 4, 5))
    with pytest.raises(ValueError, match=r"shape \(3, 4\)"):
        tprod.product(a[:, :, 0], a)
    with pytest.raises(tprod.ShapeError, match="3x4x5"):
        tprod.product(a, a)
    with pytest.raises(TypeError, match="int64"):
        tprod.product(np.ones((2, 2, 2), dtype=np.int64), np.ones((2, 2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="float32"):
        tprod.product(a.astype(np.float32), rng.standard_normal((4, 2, 5)))
    with pytest.raises(tprod.NumericalError):
        tprod.inverse(np.zeros((3, 3, 5)))
    with pytest.raises(tprod.NumericalError):
        tprod.matrix_transform(np.ones((5, 5)))
    with pytest.raises(ValueError, match="square"):
        tprod.matrix_transform(np.ones((5, 4)))
    with pytest.raises(tprod.ShapeError):
        tprod.product(a, rng.standard_normal((4, 2, 5)), tprod.matrix_transform(np.eye(4)))
    with pytest.raises(TypeError):
        tprod.inverse_transform(a)
    with pytest.raises(tprod.NumericalError, match="NaN"):
        tprod.svd(np.full((2, 2, 2), np.nan))
    assert issubclass(tprod.ShapeError, ValueError) and issubclass(tprod.NumericalError, ValueError)


def test_threads_and_gil(rng):
    before = tprod.num_threads()
    tprod.set_num_threads(2)
    assert tprod.num_threads() == 2
    tprod.set_num_threads(before)
    with pytest.raises(ValueError, match="at least one"):
        tprod.set_num_threads(0)
    a = [rng.standard_normal((64, 64, 8)) for _ in range(8)]
    serial = [tprod.product(x, x) for x in a]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda x: tprod.product(x, x), a))
    for s, q in zip(serial, parallel):
        np.testing.assert_array_equal(s, q)
