"""Verified twin of :mod:`prirfed.reference.manifolds.euclidean` (Numba kernels).

The class subclasses the reference so that input validation, ``tangent_basis`` and the
random draws are literally the same code; the geometry goes through ``@njit(cache=True)``
kernels. Batched kernels take stacks of points, shape ``(n, d)``.

Examples
--------
>>> import numpy as np
>>> from prirfed.verified.manifolds.euclidean import Euclidean, dist_kernel
>>> x, y = np.array([1.0, 1.0]), np.array([4.0, 5.0])
>>> float(Euclidean(2).dist(x, y)), float(dist_kernel(x, y))   # a 3-4-5 triangle
(5.0, 5.0)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.manifolds.euclidean import Euclidean as _ReferenceEuclidean
from .checks import BatchRows, norm2_kernel

__all__ = ["Euclidean", "exp_kernel", "log_kernel", "dist_kernel", "transp_kernel",
           "exp_batch", "log_batch", "dist_batch", "transp_batch"]


@njit(cache=True)
def exp_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.exp`."""
    return x + v


@njit(cache=True)
def log_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.log`."""
    return y - x


@njit(cache=True)
def dist_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.dist`: ||x - y||_2 without overflow of
    the squares (inf only if x - y or its norm overflows)."""
    return norm2_kernel(x - y)


@njit(cache=True)
def transp_kernel(x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.transp`."""
    return v.copy()


@njit(cache=True)
def exp_batch(X, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.exp`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = exp_kernel(X[i], V[i])
    return out


@njit(cache=True)
def log_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.log`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = log_kernel(X[i], Y[i])
    return out


@njit(cache=True)
def dist_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.dist`, row by row over stacks."""
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = dist_kernel(X[i], Y[i])
    return out


@njit(cache=True)
def transp_batch(X, Y, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.euclidean.Euclidean.transp`, row by row over stacks (row
    ``i`` of the result is the single-point kernel at row ``i`` of the inputs)."""
    out = np.empty_like(V)
    for i in range(X.shape[0]):
        out[i] = transp_kernel(X[i], Y[i], V[i])
    return out


class Euclidean(BatchRows, _ReferenceEuclidean):
    """Verified twin of :class:`prirfed.reference.manifolds.euclidean.Euclidean`: R^d; same API as the reference,
    geometry in Numba; results that overflow raise as there."""

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        return self._out("exp", exp_kernel(np.ascontiguousarray(x), np.ascontiguousarray(v)))

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        return self._out("log", log_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y)))

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return self._out("dist", float(dist_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y))))

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        return transp_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y), np.ascontiguousarray(v))

    def retr(self, x, v):
        return self.exp(x, v)

    def inv_retr(self, x, y):
        return self.log(x, y)

    # batched (BatchRows): every finite row is a point and a tangent vector
    def _clearly_points(self, X):
        return np.all(np.isfinite(X), axis=1)

    def _clearly_tangents(self, X, V):
        return np.all(np.isfinite(V), axis=1)


Euclidean._batch_kernels = {"exp": exp_batch, "log": log_batch, "dist": dist_batch, "transp": transp_batch}
