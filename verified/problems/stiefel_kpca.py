"""Verified twin of :mod:`prirfed.reference.problems.stiefel_kpca` (Numba kPCA gradients on St(d, r)).

Mirrors ``reference/problems/stiefel_kpca.py`` (Li and Ma (2023) problem (3)): same constructor, data, A_i,
scalings c_i = N_i / 2, weights p_i and validation (the class subclasses the reference one); the
Riemannian gradients go through ``@njit(cache=True)`` kernels (no fastmath), which the fused Stiefel
trainer loops (:mod:`prirfed.verified.trainers.geometry_stiefel`) call directly. All three project a
Euclidean gradient G by P_X(G) = G - X sym(X^T G) (Euclidean metric), written as the reference does:

- ``stiefel_kpca_rgrad_kernel(X, z, c)``: grad f_ij(X) = P_X(-2 c z (z^T X)) for one sample row z;
- ``stiefel_kpca_rgrad_batch_kernel(X, Z, J, c)``: the rows z = Z[J[k]], stacked;
- ``stiefel_kpca_rgrad_mean_kernel(X, A)``: grad f_i(X) = P_X(-A_i X), A_i = Z_i^T Z_i (the
  reference's vectorised agent gradient; the fused loops pass the reference's own A_i arrays).

Derivation and equivalence tests: ``proofs_notes/verified_trainers.md`` (section 5).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.problems.base import public

from prirfed.reference.problems.stiefel_kpca import StiefelKPCA as _ReferenceStiefelKPCA
from prirfed.verified.manifolds.stiefel import Stiefel

__all__ = ["StiefelKPCA", "stiefel_kpca_rgrad_kernel", "stiefel_kpca_rgrad_batch_kernel",
           "stiefel_kpca_rgrad_mean_kernel", "stiefel_proj_kernel", "stiefel_proj_into"]


@njit(cache=True)
def stiefel_proj_kernel(X, G):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.proj`: P_X(G) = G - X sym(X^T G) (reference:
    StiefelKPCA._rgrad_ij / _rgrad_i, Stiefel.proj)."""
    out = G.copy()
    stiefel_proj_into(X, out)
    return out


@njit(cache=True, inline="always")
def stiefel_proj_into(X, out):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.proj`: In place: ``out`` is overwritten with
    its projection. out <- P_X(out) = out - X sym(X^T out), in place (the fused loops' Stiefel noise; reference:
    Stiefel.proj)."""
    d, r = X.shape
    S = np.zeros((r, r))
    for l in range(d):
        for a in range(r):
            t = X[l, a]
            for b in range(r):
                S[a, b] += t * out[l, b]
    H = np.empty((r, r))
    for a in range(r):
        for b in range(r):
            H[a, b] = 0.5 * (S[a, b] + S[b, a])
    for l in range(d):
        for a in range(r):
            t = X[l, a]
            for b in range(r):
                out[l, b] -= t * H[a, b]


@njit(cache=True)
def stiefel_kpca_rgrad_kernel(X, z, c):
    """Verified twin of :meth:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA.rgrad_ij`: Takes the sample's data
    directly (no validation). grad f_ij(X) = P_X(G), G = -2 c z (z^T X) the Euclidean gradient of f_ij = -c ||X^T
    z||^2."""
    d, r = X.shape
    b = np.zeros(r)
    for l in range(d):
        for a in range(r):
            b[a] += z[l] * X[l, a]
    G = np.empty((d, r))
    s = -2.0 * c
    for l in range(d):
        for a in range(r):
            G[l, a] = s * z[l] * b[a]
    return stiefel_proj_kernel(X, G)


@njit(cache=True)
def stiefel_kpca_rgrad_batch_kernel(X, Z, J, c):
    """Verified twin of :meth:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA.rgrad_batch`: Takes the agent's data
    and the index array ``J`` directly (no validation). Entry k = stiefel_kpca_rgrad_kernel(X, Z[J[k]], c)."""
    d, r = X.shape
    out = np.empty((J.shape[0], d, r))
    for k in range(J.shape[0]):
        out[k] = stiefel_kpca_rgrad_kernel(X, Z[J[k]], c)
    return out


@njit(cache=True)
def stiefel_kpca_rgrad_mean_kernel(X, A):
    """Verified twin of :meth:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA.rgrad_i`: Takes the agent's data
    directly (no validation). grad f_i(X) = P_X(-A_i X) (Li and Ma (2023) (3): f_i = -(1/2) tr(X^T A_i X), nabla f_i
    = -A_i X). The product is one BLAS dgemm (np.dot in Numba), as the reference's ``-A_i @ X``: this O(d^2 r)
    product is the cost of a local step at the sizes of Li and Ma (2023) (d = 200, 784)."""
    return stiefel_proj_kernel(X, -np.dot(np.ascontiguousarray(A), np.ascontiguousarray(X)))


def _c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


class StiefelKPCA(_ReferenceStiefelKPCA):
    """Verified twin of :class:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA`, with Numba gradients
    and the verified :class:`~prirfed.verified.manifolds.stiefel.Stiefel` as manifold."""

    def __init__(self, Z, r: int, weights: str = "uniform"):
        super().__init__(Z, r, weights)
        self.manifold = Stiefel(self.d, self.r)
        self.Z = [_c(z) for z in self.Z]
        self.A_i = [_c(a) for a in self.A_i]

    def _rgrad_ij(self, X, i, j):
        return stiefel_kpca_rgrad_kernel(_c(X), self.Z[i][j], float(self.c[i]))

    @public("rgrad_batch")
    def rgrad_batch(self, X, i, J):
        X, i, J = self._batch("rgrad_batch", X, i, J)
        return stiefel_kpca_rgrad_batch_kernel(_c(X), self.Z[i], J, float(self.c[i]))

    def _rgrad_i(self, X, i):
        return stiefel_kpca_rgrad_mean_kernel(_c(X), self.A_i[i])
