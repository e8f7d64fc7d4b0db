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
from .common import same_n as _same_n

__all__ = ["Euclidean", "exp_kernel", "log_kernel", "dist_kernel", "transp_kernel",
           "exp_batch", "log_batch", "dist_batch", "transp_batch"]


@njit(cache=True)
def exp_kernel(x, v):
    return x + v


@njit(cache=True)
def log_kernel(x, y):
    return y - x


@njit(cache=True)
def dist_kernel(x, y):
    s = 0.0
    for k in range(x.shape[0]):
        t = x[k] - y[k]
        s += t * t
    return np.sqrt(s)


@njit(cache=True)
def transp_kernel(x, y, v):
    return v.copy()


@njit(cache=True)
def exp_batch(X, V):
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = exp_kernel(X[i], V[i])
    return out


@njit(cache=True)
def log_batch(X, Y):
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = log_kernel(X[i], Y[i])
    return out


@njit(cache=True)
def dist_batch(X, Y):
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = dist_kernel(X[i], Y[i])
    return out


@njit(cache=True)
def transp_batch(X, Y, V):
    out = np.empty_like(V)
    for i in range(X.shape[0]):
        out[i] = transp_kernel(X[i], Y[i], V[i])
    return out


class Euclidean(_ReferenceEuclidean):
    """R^d; same API as the reference, geometry in Numba."""

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        return exp_kernel(np.ascontiguousarray(x), np.ascontiguousarray(v))

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        return log_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y))

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return float(dist_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y)))

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        return transp_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y), np.ascontiguousarray(v))

    def retr(self, x, v):
        return self.exp(x, v)

    def inv_retr(self, x, y):
        return self.log(x, y)

    # batched: stacks of shape (n, *ambient_shape)
    def _stack(self, method, A, name):
        A = np.ascontiguousarray(np.asarray(A, dtype=np.float64))
        if A.ndim != 2 or A.shape[1:] != self.ambient_shape:
            raise ValueError(f"{self._where(method)}: {name} has shape {A.shape}, expected (n, {self.d})")
        if self.validate and not np.all(np.isfinite(A)):
            raise ValueError(f"{self._where(method)}: {name} has non-finite entries")
        return A

    def exp_batch(self, X, V):
        X = self._stack("exp_batch", X, "X")
        V = self._stack("exp_batch", V, "V")
        _same_n("Euclidean.exp_batch", X, V)
        return exp_batch(X, V)

    def log_batch(self, X, Y):
        X = self._stack("log_batch", X, "X")
        Y = self._stack("log_batch", Y, "Y")
        _same_n("Euclidean.log_batch", X, Y)
        return log_batch(X, Y)

    def dist_batch(self, X, Y):
        X = self._stack("dist_batch", X, "X")
        Y = self._stack("dist_batch", Y, "Y")
        _same_n("Euclidean.dist_batch", X, Y)
        return dist_batch(X, Y)

    def transp_batch(self, X, Y, V):
        X = self._stack("transp_batch", X, "X")
        Y = self._stack("transp_batch", Y, "Y")
        V = self._stack("transp_batch", V, "V")
        _same_n("Euclidean.transp_batch", X, Y, V)
        return transp_batch(X, Y, V)


