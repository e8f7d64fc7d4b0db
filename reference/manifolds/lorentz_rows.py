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
    with :math:`u_0 = \sqrt{1 + \lVert\bar u\rVert^2}`, :math:`q = \lVert\bar c\rVert^2 - c_0^2`.

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
    q = np.sum(cb * cb, axis=-1) - c0 * c0
    return 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(q, 0.0)))


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
