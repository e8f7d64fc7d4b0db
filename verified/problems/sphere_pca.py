"""Verified twin of :mod:`prirfed.reference.problems.sphere_pca` (Numba per-sample gradients).

Mirrors ``reference/problems/sphere_pca.py``: same constructor, data, scalings c_i, weights p_i
and validation (the class subclasses the reference one); the Riemannian gradients go through
``@njit(cache=True)`` kernels (no fastmath), which the fused trainer loop
(:mod:`prirfed.verified.trainers.prirfed`) calls directly:

- ``sphere_pca_rgrad_kernel(x, z, c)``: grad f_ij(x) = -2 c (z^T x)(z - (z^T x) x)
  (Han et al. (2024) section 5.1; Huang et al. (2024) (6.1) with c = 1), for one sample row z;
- ``sphere_pca_rgrad_batch_kernel(x, Z, J, c)``: the rows z = Z[J[k]], stacked;
- ``sphere_pca_rgrad_mean_kernel(x, Z, c)``: grad f_i(x) = P_x(-(2c/N_i) Z^T (Z x)).

Derivation and equivalence tests: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.problems.base import public

from prirfed.reference.problems.sphere_pca import SpherePCA as _ReferenceSpherePCA
from prirfed.verified.manifolds.sphere import Sphere

__all__ = ["SpherePCA", "sphere_pca_rgrad_kernel", "sphere_pca_rgrad_batch_kernel", "sphere_pca_rgrad_mean_kernel"]


@njit(cache=True)
def sphere_pca_rgrad_kernel(x, z, c):
    """Verified twin of :meth:`prirfed.reference.problems.sphere_pca.SpherePCA.rgrad_ij`: Takes the sample's data
    directly (no validation). grad f_ij(x) = (I - x x^T)(-2 c (z^T x) z) = -2 c a (z - a x), a = z^T x."""
    n = x.shape[0]
    a = 0.0
    for k in range(n):
        a += z[k] * x[k]
    s = -2.0 * c * a
    out = np.empty(n)
    for k in range(n):
        out[k] = s * (z[k] - a * x[k])
    return out


@njit(cache=True)
def sphere_pca_rgrad_batch_kernel(x, Z, J, c):
    """Verified twin of :meth:`prirfed.reference.problems.sphere_pca.SpherePCA.rgrad_batch`: Takes the agent's data and
    the index array ``J`` directly (no validation). Row k = sphere_pca_rgrad_kernel(x, Z[J[k]], c)."""
    out = np.empty((J.shape[0], x.shape[0]))
    for k in range(J.shape[0]):
        out[k] = sphere_pca_rgrad_kernel(x, Z[J[k]], c)
    return out


@njit(cache=True)
def sphere_pca_rgrad_mean_kernel(x, Z, c):
    """Verified twin of :meth:`prirfed.reference.problems.sphere_pca.SpherePCA.rgrad_i`: Takes the agent's data
    directly (no validation). grad f_i(x) = g - (x^T g) x with g = -(2c/N_i) Z^T (Z x) (the reference's vectorised
    form)."""
    N, n = Z.shape
    g = np.zeros(n)
    for j in range(N):
        a = 0.0
        for k in range(n):
            a += Z[j, k] * x[k]
        for k in range(n):
            g[k] += Z[j, k] * a
    f = -2.0 * c / N
    b = 0.0
    for k in range(n):
        g[k] = f * g[k]
        b += x[k] * g[k]
    for k in range(n):
        g[k] = g[k] - b * x[k]
    return g


def _c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


class SpherePCA(_ReferenceSpherePCA):
    """Verified twin of :class:`prirfed.reference.problems.sphere_pca.SpherePCA`, with Numba gradients
    and the verified :class:`~prirfed.verified.manifolds.sphere.Sphere` as manifold."""

    def __init__(self, Z, paper: str = "000"):
        super().__init__(Z, paper)
        self.manifold = Sphere(self.d)
        self.Z = [_c(z) for z in self.Z]

    def _rgrad_ij(self, x, i, j):
        return sphere_pca_rgrad_kernel(_c(x), self.Z[i][j], float(self.c[i]))

    @public("rgrad_batch")
    def rgrad_batch(self, x, i, J):
        x, i, J = self._batch("rgrad_batch", x, i, J)
        return sphere_pca_rgrad_batch_kernel(_c(x), self.Z[i], J, float(self.c[i]))

    def _rgrad_i(self, x, i):
        return sphere_pca_rgrad_mean_kernel(_c(x), self.Z[i], float(self.c[i]))
