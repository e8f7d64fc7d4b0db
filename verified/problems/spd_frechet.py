"""Verified twin of :mod:`prirfed.reference.problems.spd_frechet` (Numba per-sample gradients).

Mirrors ``reference/problems/spd_frechet.py``: same constructor, data, scale c, weights and
validation (the class subclasses the reference one); the Riemannian gradients go through
``@njit(cache=True)`` kernels (no fastmath) built from the verified SPD kernels (Jacobi eigh for
n <= 4), which the fused trainer loop (:mod:`prirfed.verified.trainers.prirfed`) calls directly:

- ``spd_frechet_rgrad_kernel(X, Z, c)``: grad f_ij(X) = -2 c X^{1/2} log(X^{-1/2} Z X^{-1/2}) X^{1/2}
  = -2 c Log_X(Z) (Huang et al. (2024) section 6.2), the same formula as the reference ``_rgrad_ij`` (one eigh
  of X, one of the whitened sample, symmetrised products); raises ``ValueError`` if the whitened
  sample has an eigenvalue <= 0 in floating point (the reference would return NaN);
- ``spd_frechet_rgrad_batch_kernel(X, Z, J, c)``: the samples Z[J[k]], stacked;
- ``spd_frechet_rgrad_mean_kernel(X, Z, c)``: grad f_i(X) = sym(mean_j grad f_ij(X)).

Derivation and equivalence tests: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.problems.base import public

from prirfed.reference.problems.spd_frechet import SPDFrechetMean as _ReferenceSPDFrechetMean
from prirfed.verified.manifolds.spd import SPD, kdkt_kernel, lal_kernel, eigh_kernel, sqrtm_and_invsqrtm_kernel, sym_kernel

__all__ = ["SPDFrechetMean", "spd_frechet_rgrad_kernel", "spd_frechet_rgrad_batch_kernel",
           "spd_frechet_rgrad_mean_kernel"]


@njit(cache=True)
def spd_frechet_rgrad_kernel(X, Z, c):
    """Verified twin of :meth:`prirfed.reference.problems.spd_frechet.SPDFrechetMean.rgrad_ij`: Takes the sample's data
    directly (no validation). -2 c sym(X^{1/2} L X^{1/2}), L = U diag(log lam) U^T, X^{-1/2} Z X^{-1/2} = U
    diag(lam) U^T."""
    Xh, Xmh = sqrtm_and_invsqrtm_kernel(X)
    lam, U = eigh_kernel(lal_kernel(Xmh, Z))
    if not lam[0] > 0.0:
        raise ValueError("SPDFrechetMean.rgrad: X^(-1/2) Z X^(-1/2) has an eigenvalue <= 0 in floating point")
    L = kdkt_kernel(U, np.log(lam))
    return -2.0 * c * lal_kernel(Xh, L)


@njit(cache=True)
def spd_frechet_rgrad_batch_kernel(X, Z, J, c):
    """Verified twin of :meth:`prirfed.reference.problems.spd_frechet.SPDFrechetMean.rgrad_batch`: Takes the agent's
    data and the index array ``J`` directly (no validation). Entry k = spd_frechet_rgrad_kernel(X, Z[J[k]], c)."""
    n = X.shape[0]
    out = np.empty((J.shape[0], n, n))
    for k in range(J.shape[0]):
        out[k] = spd_frechet_rgrad_kernel(X, Z[J[k]], c)
    return out


@njit(cache=True)
def spd_frechet_rgrad_mean_kernel(X, Z, c):
    """Verified twin of :meth:`prirfed.reference.problems.spd_frechet.SPDFrechetMean.rgrad_i`: Takes the agent's data
    directly (no validation). sym((1/N_i) sum_j grad f_ij(X)) (the reference's base-class form, proj = sym on SPD)."""
    n = X.shape[0]
    g = np.zeros((n, n))
    for j in range(Z.shape[0]):
        g += spd_frechet_rgrad_kernel(X, Z[j], c)
    return sym_kernel(g / Z.shape[0])


def _c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


class SPDFrechetMean(_ReferenceSPDFrechetMean):
    """Verified twin of :class:`prirfed.reference.problems.spd_frechet.SPDFrechetMean`, with Numba gradients
    and the verified :class:`~prirfed.verified.manifolds.spd.SPD` as manifold."""

    def __init__(self, Z, c: float = 1.0):
        super().__init__(Z, c)
        self.manifold = SPD(self.n)
        self.Z = [_c(z) for z in self.Z]

    # where a kernel refuses (a whitened sample not positive definite in floating point), the
    # reference computation runs on the same input and refuses with the reference's message
    def _rgrad_ij(self, x, i, j):
        try:
            return spd_frechet_rgrad_kernel(_c(x), self.Z[i][j], self.c)
        except ValueError:
            return super()._rgrad_ij(x, i, j)

    @public("rgrad_batch")
    def rgrad_batch(self, x, i, J):
        x, i, J = self._batch("rgrad_batch", x, i, J)
        try:
            return spd_frechet_rgrad_batch_kernel(_c(x), self.Z[i], J, self.c)
        except ValueError:
            return np.stack([super(SPDFrechetMean, self)._rgrad_ij(x, i, int(j)) for j in J])

    def _rgrad_i(self, x, i):
        try:
            return spd_frechet_rgrad_mean_kernel(_c(x), self.Z[i], self.c)
        except ValueError:
            return super()._rgrad_i(x, i)
