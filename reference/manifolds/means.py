"""Weighted means of points on a manifold: the tangent mean, eq. (3.2) of Huang et al. (2024) and
eq. (8) of Li and Ma (2023), and the Karcher (Fréchet) mean, eqs. (3.1) and (7), computed with
the manifold's Exp and Log (geometry, not training: the server step of the federated trainers,
:mod:`prirfed.reference.trainers.aggregation`, and the optimum of
:class:`prirfed.reference.problems.frechet_mean.FrechetMean` both use them).

Any object with ``exp``, ``log``, ``norm`` and ``ambient_shape`` works, e.g. a
:class:`prirfed.reference.manifolds.retracted.Retracted` view (then the means use the
retraction). Proofs note: ``algorithm_prirfed``.
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
    r"""Tangent mean, Huang et al. (2024), eq. (3.2); tangent space consensus, Li and Ma (2023), eq. (8).

    .. math::

        x^+ = \mathrm{Exp}_x\Big(\beta \sum_i w_i\,\mathrm{Exp}_x^{-1}(x_i)\Big),
        \qquad w_i = N_i / \textstyle\sum_k N_k .

    ``beta < 1`` is the moving-average variant of Li and Ma (2023) (after their eq. (8));
    ``beta = 1`` is eq. (3.2). It is one Riemannian gradient step with unit step on
    :math:`\tfrac12\sum_i w_i\operatorname{dist}^2(\cdot, x_i)` from :math:`x`.

    Parameters
    ----------
    M : Manifold
        The manifold (or a :class:`~prirfed.reference.manifolds.retracted.Retracted` view).
    x : array_like
        The base point.
    points : sequence of array_like
        The points :math:`x_i`.
    weights : array_like, optional
        Non-negative weights, normalised to sum 1; default uniform.
    beta : float, optional
        Step of the consensus (default 1).

    Returns
    -------
    numpy.ndarray
        :math:`x^+`.

    Raises
    ------
    ValueError
        If the weights are invalid or a Log is not defined.
    """
    w = _weights("tangent_mean", points, weights)
    v = np.zeros(M.ambient_shape)
    for wi, xi in zip(w, points):
        v = v + wi * M.log(x, xi)
    return M.exp(x, beta * v)


def karcher_mean(M, points, weights=None, x0=None, tol: float = 1e-10, max_iter: int = 1000):
    r"""Karcher (Fréchet) mean, Huang et al. (2024), eq. (3.1); Li and Ma (2023), eq. (7), by Riemannian gradient descent.

    Minimises :math:`\tfrac12\sum_i w_i\operatorname{dist}^2(x, x_i)`, whose Riemannian gradient is
    :math:`-\sum_i w_i\operatorname{Log}_x(x_i)`; iterates
    :math:`x \leftarrow \operatorname{Exp}_x(\sum_i w_i\operatorname{Log}_x(x_i))` (unit step: the
    tangent mean applied repeatedly) until the gradient norm is at most ``tol``.

    Parameters
    ----------
    M : Manifold
        The manifold.
    points : sequence of array_like
        The points :math:`x_i`.
    weights : array_like, optional
        Non-negative weights, normalised to sum 1; default uniform.
    x0 : array_like, optional
        Starting point (default the first point).
    tol : float, optional
        Stopping threshold on the gradient norm (default 1e-10).
    max_iter : int, optional
        Maximum number of iterations (default 1000).

    Returns
    -------
    mean : numpy.ndarray
        The Karcher mean.
    iterations : int
        Number of iterations used.

    Raises
    ------
    ValueError
        If the gradient norm is still above ``tol`` after ``max_iter`` iterations, or an argument is
        invalid.
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
