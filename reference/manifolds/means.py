"""Weighted means of points on a manifold: the tangent mean (3.2) of 000 / (8) of 002, and the
Karcher (Frechet) mean (3.1) / (7), computed with the manifold's Exp and Log (geometry, not
training: the server step of the federated trainers, :mod:`prirfed.reference.trainers.aggregation`,
and the optimum of :class:`prirfed.reference.problems.frechet_mean.FrechetMean` both use them).

Any object with ``exp``, ``log``, ``norm`` and ``ambient_shape`` works, e.g. a
:class:`prirfed.reference.manifolds.retracted.Retracted` view (then the means use the retraction).
Proofs note: ``proofs_notes/algorithm_prirfed.md``.
"""

from __future__ import annotations

import numpy as np

from prirfed.reference.checks import check_int, check_positive

__all__ = ["tangent_mean", "karcher_mean"]


def _weights(where, points, weights):
    k = len(points)
    if k == 0:
        raise ValueError(f"{where}: no points to aggregate")
    if weights is None:
        return np.full(k, 1.0 / k)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (k,):
        raise ValueError(f"{where}: weights has shape {w.shape}, expected ({k},)")
    if np.any(~np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"{where}: weights must be finite, >= 0 and not all 0 (got {w})")
    return w / w.sum()


def tangent_mean(M, x, points, weights=None, beta: float = 1.0):
    r"""Tangent mean (3.2) of 000 / tangent space consensus (8) of 002.

    .. math:: x^+ = \mathrm{Exp}_x\Big(\beta \sum_i w_i\,\mathrm{Exp}_x^{-1}(x_i)\Big),
       \qquad w_i = N_i / \textstyle\sum_k N_k .

    ``beta`` < 1 is the moving-average variant of 002 (after (8)); ``beta = 1`` is (3.2).
    It is one Riemannian gradient step with unit step on (1/2) sum_i w_i dist^2(., x_i) from x.
    """
    w = _weights("tangent_mean", points, weights)
    v = np.zeros(M.ambient_shape)
    for wi, xi in zip(w, points):
        v = v + wi * M.log(x, xi)
    return M.exp(x, beta * v)


def karcher_mean(M, points, weights=None, x0=None, tol: float = 1e-10, max_iter: int = 1000):
    r"""Karcher (Frechet) mean (3.1) of 000 / (7) of 002 by Riemannian gradient descent.

    Minimises (1/2) sum_i w_i dist^2(x, x_i), whose Riemannian gradient is -sum_i w_i Log_x(x_i);
    iterates x <- Exp_x(sum_i w_i Log_x(x_i)) (unit step: the tangent mean applied repeatedly)
    from ``x0`` (default the first point) until ||grad|| <= tol. Raises if max_iter is reached.
    Returns (mean, number of iterations).
    """
    w = _weights("karcher_mean", points, weights)
    check_positive("karcher_mean", "tol", tol)
    check_int("karcher_mean", "max_iter", max_iter)
    x = np.array(points[0] if x0 is None else x0, dtype=np.float64)
    for it in range(max_iter + 1):
        g = np.zeros(M.ambient_shape)
        for wi, xi in zip(w, points):
            g = g + wi * M.log(x, xi)
        gn = M.norm(x, g)
        if gn <= tol:
            return x, it
        if it == max_iter:
            break
        x = M.exp(x, g)
    raise ValueError(f"karcher_mean: gradient norm {gn:.3e} > tol {tol:.1e} after {max_iter} iterations")
