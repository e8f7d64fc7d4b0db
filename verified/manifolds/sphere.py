"""Verified twin of :mod:`prirfed.reference.manifolds.sphere` (Numba kernels).

Mirrors ``reference/manifolds/sphere.py`` formula for formula (see its docstrings and
``proofs_notes/manifold_sphere.md``). The class subclasses the reference, so input validation and
the random draws are literally the same code; the geometry goes through ``@njit(cache=True)``
kernels (never fastmath). Kernels take contiguous float64 1-d arrays of length d + 1 and hold no
Python objects, so samplers and trainers can call them from their own njit code. Kernels that
meet an antipodal pair raise ``ValueError`` with a fixed message (Numba cannot format); the
public wrappers re-raise with the distance and the threshold.

Batched kernels take stacks of shape (n, d + 1); the ``*_batch_into`` variants write into a
caller's (n, d + 1) buffer (no allocation) and raise like the single-point kernels. Unvalidated:
callers (njit trainers) pass points on the sphere and tangent vectors.

Examples
--------
The twin gives the reference's closed forms, and its kernels can be called directly (no
validation) from other njit code:

>>> import numpy as np
>>> from prirfed.reference.manifolds.sphere import Sphere as ReferenceSphere
>>> from prirfed.verified.manifolds.sphere import Sphere, dist_kernel
>>> x, y, z = np.eye(3)
>>> float(Sphere(2).dist(x, y))             # pi/2
1.5707963267949
>>> bool(np.isclose(dist_kernel(x, y), ReferenceSphere(2).dist(x, y), rtol=1e-15))
True
>>> Sphere(2).transp(x, y, z)
array([0., 0., 1.])
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

from prirfed.reference.manifolds.sphere import ANTIPODAL_TOL  # noqa: F401  (the literal _ANTI below equals it)
from prirfed.reference.manifolds.sphere import Sphere as _ReferenceSphere
from .checks import BatchRows, dot2_kernel, norm2_kernel
from .common import KernelMetric, contiguous as _c

__all__ = ["Sphere", "sinc_kernel", "inner_kernel", "norm_kernel", "proj_kernel", "egrad2rgrad_kernel",
           "exp_kernel", "log_kernel", "dist_kernel", "transp_kernel", "retr_kernel", "inv_retr_kernel",
           "tangent_basis_kernel", "exp_batch", "log_batch", "dist_batch", "transp_batch",
           "exp_batch_into", "log_batch_into", "transp_batch_into"]

# Literals, not the imported names: Numba freezes globals into its on-disk cache without tracking
# them, so a change in the reference module would not recompile these kernels.
# tests/manifolds/test_sphere.py::test_verified_constants_match_reference keeps them equal.
_ANTI = 1.4901161193847656e-08  # = reference ANTIPODAL_TOL = sqrt(eps)
_MAX_STEP = 4503599627370496.0  # = reference base.EXP_MAX_STEP = 2^52


@njit(cache=True)
def sinc_kernel(t):
    """Verified twin of :func:`prirfed.reference.manifolds.sphere.sinc`: sin(t)/t for t != 0, 1 at 0."""
    t = abs(t)
    if t == 0.0:
        return 1.0
    return math.sin(t) / t


@njit(cache=True)
def _dot(a, b):
    s = 0.0
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit(cache=True)
def _norm(a):
    """||a||_2 without overflow or underflow of the squares (reference: base.norm2)."""
    return norm2_kernel(a)


@njit(cache=True)
def _refuse_step(t):
    raise ValueError("Sphere.exp: ||v|| is not below 2^52 (EXP_MAX_STEP): no float64 input determines the endpoint")


@njit(cache=True)
def _refuse_retr():
    raise ValueError("Sphere.retr: ||x + v|| overflows float64")


@njit(cache=True)
def _norm_diff_sum(x, y):
    """(||x - y||, ||x + y||) in one pass."""
    sm = 0.0
    sp = 0.0
    for k in range(x.shape[0]):
        dm = x[k] - y[k]
        dp = x[k] + y[k]
        sm += dm * dm
        sp += dp * dp
    return math.sqrt(sm), math.sqrt(sp)


@njit(cache=True)
def inner_kernel(x, u, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.inner`: <u, v>_x = u^T v
    (overflow-safe: :func:`prirfed.verified.manifolds.checks.dot2_kernel`)."""
    return dot2_kernel(u, v)


@njit(cache=True)
def norm_kernel(x, u):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.norm`: ||u||_x = ||u||_2."""
    return _norm(u)


@njit(cache=True)
def proj_kernel(x, w):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.proj`: P_x w = w - (x^T w) x."""
    c = _dot(x, w)
    out = np.empty_like(w)
    for k in range(w.shape[0]):
        out[k] = w[k] - c * x[k]
    return out


@njit(cache=True)
def egrad2rgrad_kernel(x, g):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.egrad2rgrad`: grad f = P_x g."""
    return proj_kernel(x, g)


@njit(cache=True)
def _exp_into(x, v, out):
    t = _norm(v)
    if not t < _MAX_STEP:
        _refuse_step(t)
    c = math.cos(t)
    s = sinc_kernel(t)
    for k in range(x.shape[0]):
        out[k] = c * x[k] + s * v[k]
    r = _norm(out)  # renormalise, as the reference does (see Sphere.exp)
    for k in range(x.shape[0]):
        out[k] = out[k] / r


@njit(cache=True)
def exp_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.exp`: Exp_x(v) = cos(t) x + sinc(t) v, t =
    ||v||; raises ValueError unless t < 2^52 (the domain)."""
    out = np.empty(x.shape[0])
    _exp_into(x, v, out)
    return out


@njit(cache=True)
def dist_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.dist`: 2 atan2(||x - y||, ||x + y||)."""
    a, b = _norm_diff_sum(x, y)
    return 2.0 * math.atan2(a, b)


@njit(cache=True)
def _log_into(x, y, out):
    n = x.shape[0]
    sm = 0.0
    sp = 0.0
    c = 0.0
    for k in range(n):
        dm = x[k] - y[k]
        dp = x[k] + y[k]
        sm += dm * dm
        sp += dp * dp
        c += x[k] * y[k]
    b = math.sqrt(sp)
    if not b > _ANTI:
        raise ValueError("Sphere.log_kernel: y is (numerically) antipodal to x (||x + y|| <= ANTIPODAL_TOL)")
    theta = 2.0 * math.atan2(math.sqrt(sm), b)
    sgn = 1.0 if c >= 0.0 else -1.0
    a = 0.0
    for k in range(n):
        r = y[k] - sgn * x[k]
        out[k] = r
        a += x[k] * r
    nw2 = 0.0
    for k in range(n):
        w = out[k] - a * x[k]
        out[k] = w
        nw2 += w * w
    nw = math.sqrt(nw2)
    if nw == 0.0:
        for k in range(n):
            out[k] = 0.0
        return
    f = theta / nw
    for k in range(n):
        out[k] = f * out[k]


@njit(cache=True)
def log_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.log`: theta P_x(y -/+ x)/||P_x(y -/+ x)||,
    theta = dist(x, y); raises if ||x + y|| <= ANTIPODAL_TOL."""
    out = np.empty(x.shape[0])
    _log_into(x, y, out)
    return out


@njit(cache=True)
def _transp_into(x, y, v, out):
    n = x.shape[0]
    sp = 0.0
    c = 0.0
    for k in range(n):
        t = x[k] + y[k]
        sp += t * t
        c += x[k] * y[k]
    if not math.sqrt(sp) > _ANTI:
        raise ValueError("Sphere.transp_kernel: y is (numerically) antipodal to x (||x + y|| <= ANTIPODAL_TOL)")
    sgn = 1.0 if c >= 0.0 else -1.0
    b = 0.0
    for k in range(n):
        r = y[k] - sgn * x[k]
        out[k] = r
        b += x[k] * r
    s2 = 0.0
    for k in range(n):
        p = out[k] - b * x[k]
        out[k] = p
        s2 += p * p
    s = math.sqrt(s2)
    if s == 0.0:  # y = x: the identity
        for k in range(n):
            out[k] = v[k]
        return
    f = 0.0
    for k in range(n):
        out[k] = out[k] / s
        f += out[k] * v[k]
    a = s * s / (1.0 + c) if c >= 0.0 else 1.0 - c
    for k in range(n):
        out[k] = v[k] - f * (a * out[k] + s * x[k])


@njit(cache=True)
def transp_kernel(x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.transp`: v - (u^T v)(a u + s x), u = P_x(y -/+
    x)/s, s = ||P_x y||, a = 1 - x^T y (reference transp); raises near the antipode."""
    out = np.empty(x.shape[0])
    _transp_into(x, y, v, out)
    return out


@njit(cache=True)
def retr_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.retr`: (x + v)/||x + v||; raises ValueError if
    ||x + v|| overflows (the norm itself is overflow-free)."""
    n = x.shape[0]
    s = np.empty(n)
    for k in range(n):
        s[k] = x[k] + v[k]
    nrm = _norm(s)
    if not nrm < math.inf:
        _refuse_retr()
    for k in range(n):
        s[k] = s[k] / nrm
    return s


@njit(cache=True)
def inv_retr_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.inv_retr`: P_x(y - x)/(x^T y); raises if x^T y
    <= ANTIPODAL_TOL."""
    c = _dot(x, y)
    if not c > _ANTI:
        raise ValueError("Sphere.inv_retr_kernel: y is not in the open hemisphere x^T y > 0 reached by retr")
    n = x.shape[0]
    r = np.empty(n)
    for k in range(n):
        r[k] = y[k] - x[k]
    a = _dot(x, r)
    for k in range(n):
        r[k] = (r[k] - a * x[k]) / c
    return r


@njit(cache=True)
def tangent_basis_kernel(x):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.tangent_basis`: Rows E_k = e_k - x_k m, m = (x
    + s e_0)/(1 + s x_0), s = sign(x_0) (bitwise the reference's values)."""
    n = x.shape[0]
    s = 1.0 if x[0] >= 0.0 else -1.0
    m = x.copy()
    m[0] += s
    den = 1.0 + s * x[0]
    for k in range(n):
        m[k] = m[k] / den
    E = np.empty((n - 1, n))
    for i in range(n - 1):
        xi = x[i + 1]
        for j in range(n):
            e = 1.0 if j == i + 1 else 0.0
            E[i, j] = e - xi * m[j]
    return E


@njit(cache=True)
def exp_batch_into(X, V, out):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.exp`, row by row over stacks, written into the
    caller's buffer ``out`` (no allocation). exp_batch writing into a caller's buffer (trainers reuse it: a fresh
    (n, d+1) output costs page faults)."""
    for i in range(X.shape[0]):
        _exp_into(X[i], V[i], out[i])


@njit(cache=True)
def exp_batch(X, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.exp`, row by row over stacks."""
    out = np.empty(X.shape)
    exp_batch_into(X, V, out)
    return out


@njit(cache=True)
def log_batch_into(X, Y, out):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.log`, row by row over stacks, written into the
    caller's buffer ``out`` (no allocation)."""
    for i in range(X.shape[0]):
        _log_into(X[i], Y[i], out[i])


@njit(cache=True)
def log_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.log`, row by row over stacks."""
    out = np.empty(X.shape)
    log_batch_into(X, Y, out)
    return out


@njit(cache=True)
def dist_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.dist`, row by row over stacks."""
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = dist_kernel(X[i], Y[i])
    return out


@njit(cache=True)
def transp_batch_into(X, Y, V, out):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.transp`, row by row over stacks, written into
    the caller's buffer ``out`` (no allocation)."""
    for i in range(X.shape[0]):
        _transp_into(X[i], Y[i], V[i], out[i])


@njit(cache=True)
def transp_batch(X, Y, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.transp`, row by row over stacks."""
    out = np.empty(V.shape)
    transp_batch_into(X, Y, V, out)
    return out




class Sphere(BatchRows, KernelMetric, _ReferenceSphere):
    """Verified twin of :class:`prirfed.reference.manifolds.sphere.Sphere`: S^d; same API and validation as the
    reference, geometry in Numba kernels. Where a kernel refuses (antipodes, a step beyond the domain, an overflow),
    the reference method is called on the same input so that the refusal carries the reference's message."""

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        try:
            out = exp_kernel(_c(x), _c(v))
        except ValueError:
            return super().exp(x, v)
        return self._out("exp", out)

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return float(dist_kernel(_c(x), _c(y)))

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        x, y = _c(x), _c(y)
        try:
            return log_kernel(x, y)
        except ValueError:
            return super().log(x, y)

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        x, y = _c(x), _c(y)
        try:
            out = transp_kernel(x, y, _c(v))
        except ValueError:
            return super().transp(x, y, v)
        return self._out("transp", out)

    def retr(self, x, v):
        x = self._pt("retr", x)
        v = self._tv("retr", x, v)
        try:
            out = retr_kernel(_c(x), _c(v))
        except ValueError:
            return super().retr(x, v)
        return self._out("retr", out)

    def inv_retr(self, x, y):
        x = self._pt("inv_retr", x)
        y = self._pt("inv_retr", y, "y")
        try:
            return inv_retr_kernel(_c(x), _c(y))
        except ValueError:
            return super().inv_retr(x, y)

    def tangent_basis(self, x):
        x = self._pt("tangent_basis", x)
        return tangent_basis_kernel(_c(x))

    # ------------------------------------------------------------------ batched (BatchRows)
    # Screens: rows that pass the single-point checks with half the tolerance to spare (one njit
    # pass per stack); every other row is decided by the single-point method itself.
    def _clearly_points(self, X):
        finite, norms, _ = _row_stats(X, X)
        return finite & (np.abs(norms - 1.0) <= 0.5 * self.tol)

    def _clearly_tangents(self, X, V):
        finite, norms, dots = _row_stats(V, X)
        return finite & (np.abs(dots) <= 0.5 * self.tol * np.maximum(1.0, norms)) & (norms < 1e300)


@njit(cache=True)
def _row_stats(A, X):
    """Per row i: all entries of A[i] finite, ||A[i]||, X[i]^T A[i] (validation helper, one pass)."""
    n = A.shape[0]
    finite = np.ones(n, dtype=np.bool_)
    norms = np.empty(n)
    dots = np.empty(n)
    for i in range(n):
        s = 0.0
        t = 0.0
        for k in range(A.shape[1]):
            a = A[i, k]
            if not math.isfinite(a):
                finite[i] = False
            s += a * a
            t += X[i, k] * a
        norms[i] = math.sqrt(s)
        dots[i] = t
    return finite, norms, dots


Sphere._kernels = sys.modules[__name__]  # KernelMetric calls this module's kernels
Sphere._batch_kernels = {"exp": exp_batch, "log": log_batch, "dist": dist_batch, "transp": transp_batch}
