"""Verified twin of :mod:`prirfed.reference.manifolds.lorentz` (Numba kernels).

The class subclasses the reference, so the random draws and every refusal message are literally
the same code (a Numba pre-check only waves through inputs that are valid with half the tolerance
to spare; everything else goes to the reference check); the geometry goes through ``@njit(cache=True)`` kernels written with the same
formulas in the same order (see ``proofs_notes/manifold_lorentz.md``). The kernels take and
return plain float64 arrays, so samplers and trainers can call them from other njit code:

    minkowski_kernel(u, v), inner_kernel(x, u, v), norm_kernel(x, u), proj_kernel(x, w),
    egrad2rgrad_kernel(x, g), exp_kernel(x, v), log_kernel(x, y), dist_kernel(x, y),
    transp_kernel(x, y, v), retr_kernel(x, v), inv_retr_kernel(x, y), tangent_basis_kernel(x),
    sinhc_kernel(t), t_over_sinh_kernel(t), chord_to_dist_kernel(q), time_coordinate_kernel(x),
    chord_kernel(x, y)

and batched versions over stacks of shape (n, d+1): exp_batch, log_batch, dist_batch,
transp_batch. Kernels do not validate their inputs (the class's public methods do); their domain
is the reference's (points with x_0 <= X0_MAX = 2^500): ``exp_kernel`` raises ``ValueError`` when
||v||_L > 700 or the result leaves the domain, ``transp_kernel`` when its result overflows, so no
kernel returns a non-finite point or vector.

Examples
--------
>>> import numpy as np
>>> from prirfed.verified.manifolds.lorentz import Lorentz, dist_kernel
>>> o, t = np.array([1.0, 0.0, 0.0]), 1.5
>>> y = np.array([np.cosh(t), np.sinh(t), 0.0])     # the geodesic from o at time t
>>> float(Lorentz(2).dist(o, y))
1.5
>>> bool(np.isclose(dist_kernel(o, y), t, rtol=1e-14))
True
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

from prirfed.reference.manifolds.lorentz import TINY
from prirfed.reference.manifolds.lorentz import Lorentz as _ReferenceLorentz
from .checks import BatchRows
from .common import KernelMetric, contiguous as _c

__all__ = [
    "Lorentz",
    "minkowski_kernel", "inner_kernel", "norm_kernel", "proj_kernel", "egrad2rgrad_kernel",
    "sinhc_kernel", "t_over_sinh_kernel", "chord_to_dist_kernel", "time_coordinate_kernel", "chord_kernel",
    "exp_kernel", "log_kernel", "dist_kernel", "transp_kernel", "retr_kernel", "inv_retr_kernel",
    "tangent_basis_kernel",
    "exp_batch", "log_batch", "dist_batch", "transp_batch",
]

_TINY = TINY
_X0_MAX = 3.273390607896142e150  # = reference X0_MAX = 2^500 (a literal: Numba caches globals)
_WEDGE_X0 = 67108864.0  # = reference WEDGE_X0 = 2^26 (a literal: Numba caches globals)


@njit(cache=True)
def minkowski_kernel(u, v):
    """Verified twin of :func:`prirfed.reference.manifolds.lorentz.minkowski_inner`: <u, v>_L = -u_0 v_0 + sum_{i>=1}
    u_i v_i."""
    s = 0.0
    for i in range(1, u.shape[0]):
        s += u[i] * v[i]
    return -u[0] * v[0] + s


@njit(cache=True, inline="always")
def inner_kernel(x, u, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.inner`: <u, v>_x for u, v in T_x from the
    space parts (reference: tangent_inner)."""
    n = x.shape[0]
    n2 = 0.0
    xu = 0.0
    xv = 0.0
    for i in range(1, n):
        n2 += x[i] * x[i]
        xu += x[i] * u[i]
        xv += x[i] * v[i]
    if n2 <= 1.0:
        s = 0.0
        for i in range(1, n):
            s += u[i] * v[i]
        return s - xu * xv / (1.0 + n2)
    nn = math.sqrt(n2)
    a_u = xu / nn
    a_v = xv / nn
    cu = a_u / nn
    cv = a_v / nn
    s = 0.0
    for i in range(1, n):
        s += (u[i] - cu * x[i]) * (v[i] - cv * x[i])
    return s + a_u * a_v / (1.0 + n2)


@njit(cache=True)
def _norm_scaled(x, u):
    """||u||_x with u divided by max |u_bar| first (reference: tangent_norm, the rare path)."""
    m = 0.0
    for i in range(1, u.shape[0]):
        if not abs(u[i]) <= m:
            m = abs(u[i])
    if not (0.0 < m < math.inf):
        return m
    w = u / m
    return m * math.sqrt(max(0.0, inner_kernel(x, w, w)))


@njit(cache=True, inline="always")
def norm_kernel(x, u):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.norm`: ||u||_x without overflow or underflow
    of <u, u>_x (reference: tangent_norm)."""
    q = inner_kernel(x, u, u)
    if 1e-290 <= q < math.inf:
        return math.sqrt(q)
    return _norm_scaled(x, u)


@njit(cache=True)
def _refuse_exp():
    raise ValueError("Lorentz.exp: ||v||_L > 700 or the result overflows the domain x_0 <= 2^500 of the model")


@njit(cache=True)
def _refuse_nonfinite():
    raise ValueError("Lorentz.transp: the result overflows float64")


@njit(cache=True)
def _finite(a):
    for t in a:
        if not np.isfinite(t):
            return False
    return True


@njit(cache=True)
def proj_kernel(x, w):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.proj`."""
    a = minkowski_kernel(x, w)
    out = np.empty_like(w)
    for i in range(w.shape[0]):
        out[i] = w[i] + a * x[i]
    return out


@njit(cache=True)
def egrad2rgrad_kernel(x, g):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.egrad2rgrad`."""
    Jg = g.copy()
    Jg[0] = -Jg[0]
    return proj_kernel(x, Jg)


@njit(cache=True)
def sinhc_kernel(t):
    """Verified twin of :func:`prirfed.reference.manifolds.lorentz.sinhc`."""
    t = abs(t)
    if t == 0.0:
        return 1.0
    return math.sinh(t) / t


@njit(cache=True)
def t_over_sinh_kernel(t):
    """Verified twin of :func:`prirfed.reference.manifolds.lorentz.t_over_sinh`."""
    t = abs(t)
    if t == 0.0:
        return 1.0
    return t / math.sinh(t)


@njit(cache=True)
def chord_to_dist_kernel(q):
    """Verified twin of :func:`prirfed.reference.manifolds.lorentz.chord_to_dist`."""
    return 2.0 * math.asinh(0.5 * math.sqrt(max(0.0, q)))


@njit(cache=True)
def time_coordinate_kernel(x):
    """Verified twin of :func:`prirfed.reference.manifolds.lorentz.time_coordinate`: sqrt(1 + ||x_bar||^2) from the
    space part x[1:] (reference: time_coordinate)."""
    s = 0.0
    for i in range(1, x.shape[0]):
        s += x[i] * x[i]
    return math.sqrt(1.0 + s)


@njit(cache=True, inline="always")
def _chord_c0_h(x, y):
    """(c_0, h) of `chord` without allocating c_bar (which callers form as y[i] - x[i])."""
    n = x.shape[0]
    cs = 0.0
    ss = 0.0
    xx = 0.0
    yy = 0.0
    for i in range(1, n):
        ci = y[i] - x[i]
        si = x[i] + y[i]
        cs += ci * si
        ss += si * si
        xx += x[i] * x[i]
        yy += y[i] * y[i]
    x0 = math.sqrt(1.0 + xx)
    y0 = math.sqrt(1.0 + yy)
    c0 = cs / (x0 + y0)
    nx = math.sqrt(xx)
    ny = math.sqrt(yy)
    h = (1.0 + nx * nx + ny * ny) / (x0 * y0 + nx * ny) - 1.0
    if nx > _TINY and ny > _TINY:
        dd = 0.0
        for i in range(1, n):
            di = x[i] / nx - y[i] / ny
            dd += di * di
        h += 0.5 * nx * ny * dd
    if not h > 1.0:
        q = 0.0
        if ss <= 1.0:
            for i in range(1, n):
                ci = y[i] - x[i]
                q += ci * ci
            q -= c0 * c0
        else:
            pp = 0.0
            if not max(x0, y0) > _WEDGE_X0:
                k = cs / ss
                for i in range(1, n):
                    pi = (y[i] - x[i]) - k * (x[i] + y[i])
                    pp += pi * pi
            else:  # reference: _perp_square (wedge beyond WEDGE_X0)
                ns = math.sqrt(ss)
                for i in range(1, n):
                    for j in range(i + 1, n):
                        t = ((y[i] - x[i]) * (x[j] + y[j]) - (y[j] - x[j]) * (x[i] + y[i])) / ns
                        pp += t * t
            rho2 = c0 * c0 / ss
            q = (pp + 4.0 * rho2) / (1.0 - rho2)
        h = 0.5 * max(0.0, q)
    return c0, h


@njit(cache=True)
def chord_kernel(x, y):
    """Verified twin of :func:`prirfed.reference.manifolds.lorentz.chord`: (c_bar, c_0, h) of c = y - x, h = cosh(dist)
    - 1 (reference: chord); c_bar has length d."""
    n = x.shape[0]
    cb = np.empty(n - 1)
    for i in range(1, n):
        cb[i - 1] = y[i] - x[i]
    c0, h = _chord_c0_h(x, y)
    return cb, c0, h


@njit(cache=True, inline="always")
def _exp_into(x, v, out):
    t = norm_kernel(x, v)
    a = math.cosh(t)
    b = sinhc_kernel(t)
    s = 0.0
    for i in range(1, x.shape[0]):
        yi = a * x[i] + b * v[i]
        out[i] = yi
        s += yi * yi
    out[0] = math.sqrt(1.0 + s)
    return t


@njit(cache=True, inline="always")
def log_into(x, y, out):
    """Log_x(y) written into ``out`` (no allocation): the kernel of ``log_kernel``, also called by the
    fused loops per sample."""
    c0, h = _chord_c0_h(x, y)
    a = t_over_sinh_kernel(chord_to_dist_kernel(2.0 * h))
    s = 0.0
    xx = 0.0
    for i in range(1, x.shape[0]):
        oi = a * ((y[i] - x[i]) - h * x[i])
        out[i] = oi
        s += x[i] * oi
        xx += x[i] * x[i]
    out[0] = s / math.sqrt(1.0 + xx)


@njit(cache=True, inline="always")
def _transp_into(x, y, v, out):
    """out = PT_{x->y} v with <y, v>_L read as the metric at x of p = c - h x and v (reference:
    Lorentz.transp; p's space part is written into ``out`` first, then overwritten, so ``out`` must
    not be ``v``: both callers allocate it)."""
    n = x.shape[0]
    c0, h = _chord_c0_h(x, y)
    yy = 0.0
    out[0] = 0.0
    for i in range(1, n):
        out[i] = (y[i] - x[i]) - h * x[i]
        yy += y[i] * y[i]
    beta = inner_kernel(x, out, v) / (2.0 + h)
    s = 0.0
    for i in range(1, n):
        oi = v[i] + beta * (x[i] + y[i])
        out[i] = oi
        s += y[i] * oi
    out[0] = s / math.sqrt(1.0 + yy)


@njit(cache=True)
def exp_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.exp`: cosh(t) x + sinhc(t) v, t = ||v||_x;
    raises ValueError unless t <= 700 and x_0 <= 2^500 for the result."""
    out = np.empty(x.shape[0])
    t = _exp_into(x, v, out)
    if not (t <= 700.0 and out[0] <= _X0_MAX):
        _refuse_exp()
    return out


@njit(cache=True)
def log_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.log`: Log_x(y) for x, y in the domain (x_0,
    y_0 <= 2^500): finite by construction."""
    out = np.empty(x.shape[0])
    log_into(x, y, out)
    return out


@njit(cache=True)
def dist_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.dist`."""
    c0, h = _chord_c0_h(x, y)
    return chord_to_dist_kernel(2.0 * h)


@njit(cache=True)
def transp_kernel(x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.transp`: Parallel transport x -> y; raises
    ValueError if the result overflows (huge v at far points)."""
    out = np.empty(x.shape[0])
    _transp_into(x, y, v, out)
    if not _finite(out):
        _refuse_nonfinite()
    return out


@njit(cache=True)
def retr_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.retr`."""
    return exp_kernel(x, v)


@njit(cache=True)
def inv_retr_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.inv_retr`."""
    return log_kernel(x, y)


@njit(cache=True)
def tangent_basis_kernel(x):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.tangent_basis`: Row k-1 is E_k = (x_k, e_k +
    x_k x_bar / (1 + x_0)): the boost of the origin's e_k."""
    d = x.shape[0] - 1
    E = np.empty((d, d + 1))
    den = 1.0 + x[0]
    for k in range(d):
        E[k, 0] = x[k + 1]
        for j in range(d):
            E[k, j + 1] = (x[k + 1] * x[j + 1]) / den + (1.0 if j == k else 0.0)
    return E


@njit(cache=True)
def exp_batch(X, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.exp`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        t = _exp_into(X[i], V[i], out[i])
        if not (t <= 700.0 and out[i, 0] <= _X0_MAX):
            _refuse_exp()
    return out


@njit(cache=True)
def log_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.log`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        log_into(X[i], Y[i], out[i])
    return out


@njit(cache=True)
def dist_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.dist`, row by row over stacks."""
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = dist_kernel(X[i], Y[i])
    return out


@njit(cache=True)
def transp_batch(X, Y, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.transp`, row by row over stacks (row ``i``
    of the result is the single-point kernel at row ``i`` of the inputs)."""
    out = np.empty_like(V)
    for i in range(X.shape[0]):
        _transp_into(X[i], Y[i], V[i], out[i])
    return out


@njit(cache=True)
def _point_clearly_ok(x, tol):
    """Fast pre-check: finite, x_0 > 0 and |<x,x>_L + 1| <= tol x_0^2 / 2 (half the reference
    tolerance, so every input near the boundary goes through the reference check)."""
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    if not 0.0 < x[0] <= _X0_MAX:
        return False
    return abs(minkowski_kernel(x, x) + 1.0) <= 0.5 * tol * x[0] * x[0]


@njit(cache=True)
def _tangent_clearly_ok(x, v, tol):
    """Fast pre-check: finite and |<x,v>_L| <= tol x_0 ||v||_2 / 2 (see _point_clearly_ok)."""
    s = 0.0
    for i in range(v.shape[0]):
        if not np.isfinite(v[i]):
            return False
        s += v[i] * v[i]
    if not s <= 1e300:  # huge v: leave it to the reference's overflow-free check
        return False
    return abs(minkowski_kernel(x, v)) <= 0.5 * tol * x[0] * math.sqrt(s)


def _fast(a, shape):
    return type(a) is np.ndarray and a.dtype == np.float64 and a.shape == shape and a.flags.c_contiguous




class Lorentz(BatchRows, KernelMetric, _ReferenceLorentz):
    """Verified twin of :class:`prirfed.reference.manifolds.lorentz.Lorentz`: H^d in the hyperboloid model; same API as
    the reference, geometry in Numba. Where a kernel refuses (a step beyond the domain, an overflow) the reference
    method is called on the same input, so the refusal carries the reference's message."""

    # validation: a Numba pre-check accepts inputs that are clearly valid (half the tolerance);
    # everything else goes through the reference check, which decides and writes the message.
    def _pt(self, method, x, name="x"):
        if self.validate and _fast(x, self.ambient_shape) and _point_clearly_ok(x, self.tol):
            return x
        return super()._pt(method, x, name)

    def _tv(self, method, x, v, name="v"):
        if self.validate and _fast(v, self.ambient_shape) and _fast(x, self.ambient_shape) \
                and _tangent_clearly_ok(x, v, self.tol):
            return v
        return super()._tv(method, x, v, name)

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        try:
            return exp_kernel(_c(x), _c(v))
        except ValueError:
            return super().exp(x, v)

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        return self._out("log", log_kernel(_c(x), _c(y)))

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return self._out("dist", float(dist_kernel(_c(x), _c(y))))

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        try:
            return transp_kernel(_c(x), _c(y), _c(v))
        except ValueError:
            return super().transp(x, y, v)

    def retr(self, x, v):
        return self.exp(x, v)

    def inv_retr(self, x, y):
        return self.log(x, y)

    def tangent_basis(self, x):
        x = self._pt("tangent_basis", x)
        return self._out("tangent_basis", tangent_basis_kernel(_c(x)))

    # ------------------------------------------------------------------ batched (BatchRows)
    def _clearly_points(self, X):
        x0 = X[:, 0]
        finite = np.all(np.isfinite(X), axis=1)
        defect = np.abs(_rows_minkowski(X, X) + 1.0)
        return finite & (x0 > 0) & (x0 <= _X0_MAX) & (defect <= 0.5 * self.tol * x0 * x0)

    def _clearly_tangents(self, X, V):
        finite = np.all(np.isfinite(V), axis=1)
        nv = np.linalg.norm(V, axis=1)
        defect = np.abs(_rows_minkowski(X, V))
        return finite & (nv <= 1e150) & (defect <= 0.5 * self.tol * X[:, 0] * nv)


def _rows_minkowski(U, V):
    return -U[:, 0] * V[:, 0] + np.einsum("ij,ij->i", U[:, 1:], V[:, 1:])


Lorentz._kernels = sys.modules[__name__]  # KernelMetric calls this module's kernels
Lorentz._batch_kernels = {"exp": exp_batch, "log": log_batch, "dist": dist_batch, "transp": transp_batch}
