# SPDX-License-Identifier: Apache-2.0
"""References for the tests, written from the definitions with NumPy only (no tprod call): the transforms as
matrices or numpy.fft along the tubes, and the L-product slice by slice in the transform domain."""
import numpy as np
import pytest


def dct_matrix(p):
    """The orthonormal DCT-II: C[k, j] = sqrt(2/p) c_k cos(pi (2j + 1) k / (2p)), c_0 = 1/sqrt(2), else 1."""
    k = np.arange(p)[:, None]
    j = np.arange(p)[None, :]
    c = np.sqrt(2.0 / p) * np.cos(np.pi * (2 * j + 1) * k / (2 * p))
    c[0, :] /= np.sqrt(2.0)
    return c


class Reference:
    """A transform by name ('dct', 'dft', 'identity') or by its matrix Z, applied as A x_3 Z."""

    def __init__(self, name, z=None):
        self.name, self.z = name, z

    def forward(self, a):
        if self.name == "dft":
            return np.fft.fft(a, axis=2)
        z = {"dct": lambda p: dct_matrix(p), "identity": lambda p: np.eye(p)}.get(self.name, lambda p: self.z)(a.shape[2])
        return np.einsum("ijk,lk->ijl", a, z)

    def inverse(self, ahat, real):
        if self.name == "dft":
            out = np.fft.ifft(ahat, axis=2)
        else:
            z = {"dct": lambda p: dct_matrix(p), "identity": lambda p: np.eye(p)}.get(self.name, lambda p: self.z)(ahat.shape[2])
            out = np.einsum("ijk,lk->ijl", ahat, np.linalg.inv(z))
        return out.real if real else out

    def product(self, a, b):
        real = not (np.iscomplexobj(a) or np.iscomplexobj(b) or np.iscomplexobj(self.z))
        return self.inverse(np.einsum("ilk,ljk->ijk", self.forward(a), self.forward(b)), real)

    def transpose(self, a):
        real = not (np.iscomplexobj(a) or np.iscomplexobj(self.z))
        # slice by slice in the transform domain, conjugated where that domain is complex: Â_kᴴ
        return self.inverse(np.conj(np.swapaxes(self.forward(a), 0, 1)), real)

    def slices(self, a):
        """The transform-domain slices as a list of matrices."""
        ahat = self.forward(a)
        return [ahat[:, :, k] for k in range(ahat.shape[2])]


@pytest.fixture
def rng():
    return np.random.default_rng(20261128)


def tolerance(dtype, size):
    """A few units of rounding, grown with the problem size."""
    eps = np.finfo(np.dtype(dtype).type(0).real.dtype).eps
    return 50 * eps * max(1, size)
