"""Lorentz-model formulas vectorised over rows (batches of points), the same stable forms as
:class:`prirfed.reference.manifolds.lorentz.Lorentz` (000 section 6.3: <x, y>_L = x^T y - 2 x_0 y_0).

For code that needs thousands of distances at once (training the WordNet embedding of
:mod:`prirfed.reference.data.wordnet`, the batched HSP objective of
:class:`prirfed.verified.problems.cached.BatchedHSP`): ``U``, ``V`` are arrays of points on H^d
along the last axis, broadcast against each other. Checked point by point against the Lorentz
class in ``tests/data/test_data_wordnet.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["inner_rows", "dist_rows", "grad_dist_rows", "exp_rows"]


def inner_rows(U, V):
    """Row-wise ⟨u, v⟩_L = uᵀv − 2 u₀v₀ (000 §6.3)."""
    return np.sum(U * V, axis=-1) - 2.0 * U[..., 0] * V[..., 0]


def dist_rows(U, V):
    """Row-wise dist = 2 asinh(½ √q), q = ⟨v − u, v − u⟩_L (= acosh(−⟨u, v⟩_L), without its cancellation at 0).

    As in :func:`prirfed.reference.manifolds.lorentz.chord`, the chord is read through the space
    parts: ``c̄ = v̄ − ū``, ``c₀ = ⟨c̄, ū + v̄⟩ / (u₀ + v₀)`` with ``u₀ = √(1 + ‖ū‖²)``, ``q = ‖c̄‖² − c₀²``.
    """
    ub, vb = U[..., 1:], V[..., 1:]
    cb = vb - ub
    u0 = np.sqrt(1.0 + np.sum(ub * ub, axis=-1))
    v0 = np.sqrt(1.0 + np.sum(vb * vb, axis=-1))
    c0 = np.sum(cb * (ub + vb), axis=-1) / (u0 + v0)
    q = np.sum(cb * cb, axis=-1) - c0 * c0
    return 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(q, 0.0)))


def grad_dist_rows(U, V, d):
    """Riemannian gradient of ``u ↦ dist(u, v)``: ``−Log_u(v)/d = −(v − cosh(d) u)/sinh(d)``.

    Written ``−((v − u) − 2 sinh²(d/2) u)/sinh(d)`` (no cancellation as ``v → u``), with the chord
    ``c = v − u`` read through the space parts as in :func:`dist_rows` (``c₀ = ⟨c̄, ū + v̄⟩/(u₀ + v₀)``,
    ``u₀ = √(1 + ‖ū‖²)``); zero at ``d = 0``.
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
    """Row-wise Exp_x(v) = cosh(t) x + sinh(t)/t v, t = ‖v‖_L, then x₀ reset to √(1 + ‖x̄‖²)."""
    t = np.sqrt(np.maximum(inner_rows(V, V), 0.0))
    sinhc = np.where(t > 1e-8, np.sinh(t) / np.where(t > 0, t, 1.0), 1.0 + t * t / 6.0)
    Y = np.cosh(t)[:, None] * X + sinhc[:, None] * V
    Y[:, 0] = np.sqrt(1.0 + np.sum(Y[:, 1:] ** 2, axis=1))
    return Y
