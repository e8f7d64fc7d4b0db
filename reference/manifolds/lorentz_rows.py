r"""Lorentz-model formulas vectorised over rows (batches of points), the same stable forms as
:class:`prirfed.reference.manifolds.lorentz.Lorentz` (Huang et al. (2024), Section 6.3:
:math:`\langle x, y\rangle_L = x^\top y - 2x_0y_0`).

For code that needs thousands of distances at once (training the WordNet embedding of
:mod:`prirfed.reference.data.wordnet`, the batched HSP objective of
:class:`prirfed.verified.problems.cached.BatchedHSP`): ``U``, ``V`` are arrays of points on
:math:`H^d` along the last axis, broadcast against each other. Checked point by point against
the Lorentz class in ``tests/data/test_data_wordnet.py``.
"""

from __future__ import annotations

import numpy as np

from .lorentz import TINY, WEDGE_X0

__all__ = ["inner_rows", "dist_rows", "grad_dist_rows", "exp_rows"]


def inner_rows(U, V):
    r"""Row-wise :math:`\langle u, v\rangle_L = u^\top v - 2u_0v_0`, Huang et al. (2024), Section 6.3.

    Parameters
    ----------
    U, V : numpy.ndarray
        Points (or vectors) along the last axis, broadcast against each other.

    Returns
    -------
    numpy.ndarray
        The inner products, one per row.
    """
    return np.sum(U * V, axis=-1) - 2.0 * U[..., 0] * V[..., 0]


def dist_rows(U, V):
    r"""Row-wise distance :math:`2\operatorname{asinh}(\tfrac12\sqrt q)`, :math:`q = \langle v - u, v - u\rangle_L`, Huang et al. (2024), Section 6.3.

    Equal to :math:`\operatorname{acosh}(-\langle u, v\rangle_L)` without its cancellation at 0. As
    in :func:`prirfed.reference.manifolds.lorentz.chord`, the chord is read through the space parts:
    :math:`\bar c = \bar v - \bar u`, :math:`c_0 = \langle\bar c, \bar u + \bar v\rangle/(u_0 + v_0)`
    with :math:`u_0 = \sqrt{1 + \lVert\bar u\rVert^2}`. Rows with :math:`c_0^2 \le \lVert\bar c\rVert^2/2`
    take the plain :math:`q = \lVert\bar c\rVert^2 - c_0^2` (at most half of it cancels: relative
    error a few :math:`\varepsilon`); the other rows, where it cancels (near-radial pairs far from
    the origin: 23.28 instead of 20 at radii 10 and 30 on one ray), take :math:`q = 2h` with
    :math:`h = \cosh(\operatorname{dist}) - 1` evaluated as in ``chord`` (polar form beyond
    :math:`h = 1`, chord form below, its perpendicular part by the wedge beyond
    :math:`\max(u_0, v_0) = 2^{26}`), row by row with the same decisions.

    Parameters
    ----------
    U, V : numpy.ndarray
        Points of :math:`H^d` along the last axis.

    Returns
    -------
    numpy.ndarray
        The distances, one per row.
    """
    ub, vb = U[..., 1:], V[..., 1:]
    cb = vb - ub
    u0 = np.sqrt(1.0 + np.sum(ub * ub, axis=-1))
    v0 = np.sqrt(1.0 + np.sum(vb * vb, axis=-1))
    c0 = np.sum(cb * (ub + vb), axis=-1) / (u0 + v0)
    cc = np.sum(cb * cb, axis=-1)
    q = cc - c0 * c0
    cancels = c0 * c0 > 0.5 * cc
    if np.any(cancels):
        q = np.array(q, dtype=float)  # (a 0-d result of two single points becomes writable)
        Ub, Vb = np.broadcast_arrays(U, V)
        q[cancels] = 2.0 * _chord_h_rows(np.asarray(Ub[cancels], dtype=float), np.asarray(Vb[cancels], dtype=float))
    return 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(q, 0.0)))


def _chord_h_rows(X, Y):
    r""":math:`h = \cosh(\operatorname{dist}) - 1` for the rows of two stacks of points, by the forms and decisions of :func:`prirfed.reference.manifolds.lorentz.chord` (Huang et al. (2024), Section 6.3).

    Only for the rows where :func:`dist_rows`'s plain form cancels, :math:`c_0^2 > \lVert\bar c\rVert^2/2`.
    There :math:`\lVert\bar s\rVert^2 > 2`: :math:`|c_0| \le \lVert\bar c\rVert\lVert\bar s\rVert/(x_0 + y_0)`
    and :math:`x_0 + y_0 \ge 2`, so :math:`\lVert\bar s\rVert^2 > (x_0 + y_0)^2/2 \ge 2`. So ``chord``'s
    branch for :math:`\lVert\bar s\rVert \le 1` is never needed, and is not written.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Points of :math:`H^d`, shape ``(k, d + 1)``, each row a pair whose plain form cancels.

    Returns
    -------
    numpy.ndarray
        :math:`h` per row, shape ``(k,)``.
    """
    xb, yb = X[:, 1:], Y[:, 1:]
    x0 = np.sqrt(1.0 + np.sum(xb * xb, axis=-1))
    y0 = np.sqrt(1.0 + np.sum(yb * yb, axis=-1))
    cb, sb = yb - xb, xb + yb
    cs = np.sum(cb * sb, axis=-1)
    c0 = cs / (x0 + y0)
    nx = np.sqrt(np.sum(xb * xb, axis=-1))
    ny = np.sqrt(np.sum(yb * yb, axis=-1))
    h = (1.0 + nx * nx + ny * ny) / (x0 * y0 + nx * ny) - 1.0
    both = (nx > TINY) & (ny > TINY)  # angular term; below TINY x_bar/nx underflows
    dh = xb / np.where(both, nx, 1.0)[:, None] - yb / np.where(both, ny, 1.0)[:, None]
    h = h + np.where(both, 0.5 * nx * ny * np.sum(dh * dh, axis=-1), 0.0)
    s2 = np.sum(sb * sb, axis=-1)  # > 2 (see above)
    perp = cb - (cs / s2)[:, None] * sb
    pp = np.sum(perp * perp, axis=-1)
    wedge = np.maximum(x0, y0) > WEDGE_X0
    if np.any(wedge):  # the wedge sum_{i<j} (c_i s_j - c_j s_i)^2 / s2 (see lorentz._perp_square)
        cw, sw = cb[wedge], sb[wedge]
        ns = np.sqrt(s2[wedge])[:, None, None]
        W = (cw[:, :, None] * sw[:, None, :] - cw[:, None, :] * sw[:, :, None]) / ns
        pp[wedge] = 0.5 * np.sum(W * W, axis=(1, 2))
    rho2 = c0 * c0 / s2
    den = np.where(h > 1.0, 1.0, 1.0 - rho2)  # rows of the polar form may have rho2 = 1 (far apart)
    q = (pp + 4.0 * rho2) / den
    return np.where(h > 1.0, h, 0.5 * np.maximum(q, 0.0))


def grad_dist_rows(U, V, d):
    r"""Riemannian gradient of :math:`u \mapsto \operatorname{dist}(u, v)`: :math:`-\operatorname{Log}_u(v)/d = -(v - \cosh(d)u)/\sinh(d)` (Huang et al. (2024), Section 6.3).

    Written :math:`-((v - u) - 2\sinh^2(d/2)u)/\sinh(d)` (no cancellation as :math:`v \to u`), with
    the chord read through the space parts as in :func:`dist_rows`; zero at :math:`d = 0`.

    Parameters
    ----------
    U, V : numpy.ndarray
        Points of :math:`H^d` along the last axis.
    d : numpy.ndarray
        Their distances (``dist_rows(U, V)``).

    Returns
    -------
    numpy.ndarray
        The gradients, tangent at the rows of ``U``.
    """
    ub, vb = U[..., 1:], V[..., 1:]
    u0 = np.sqrt(1.0 + np.sum(ub * ub, axis=-1))
    v0 = np.sqrt(1.0 + np.sum(vb * vb, axis=-1))
    C = np.concatenate([(np.sum((vb - ub) * (ub + vb), axis=-1) / (u0 + v0))[..., None], vb - ub], axis=-1)
    Uc = np.concatenate([u0[..., None], ub], axis=-1)
    s = np.sinh(d)
    safe = np.where(s > 0, s, 1.0)
    w = C - (2.0 * np.sinh(0.5 * d) ** 2)[..., None] * Uc
    return np.where((s > 0)[..., None], -w / safe[..., None], 0.0)


def exp_rows(X, V):
    r"""Row-wise :math:`\operatorname{Exp}_x(v) = \cosh(t)x + \sinh(t)/t\,v`, :math:`t = \lVert v\rVert_L`, Huang et al. (2024), Section 6.3.

    The time coordinate of the result is then reset to :math:`\sqrt{1 + \lVert\bar x\rVert^2}`.

    Parameters
    ----------
    X : numpy.ndarray
        Points of :math:`H^d` along the last axis.
    V : numpy.ndarray
        Tangent vectors at those points.

    Returns
    -------
    numpy.ndarray
        The points :math:`\operatorname{Exp}_x(v)`.
    """
    t = np.sqrt(np.maximum(inner_rows(V, V), 0.0))
    sinhc = np.where(t > 1e-8, np.sinh(t) / np.where(t > 0, t, 1.0), 1.0 + t * t / 6.0)
    Y = np.cosh(t)[:, None] * X + sinhc[:, None] * V
    Y[:, 0] = np.sqrt(1.0 + np.sum(Y[:, 1:] ** 2, axis=1))
    return Y
