"""Fast forms of reference problems whose data never change: the global objective, its gradient
and the optimum computed once or in one batched pass (the experiments' problems).

The trainers' ``History`` evaluates f(x^(t)) and ||grad f(x^(t))|| at every recorded round; the
reference classes compute them as Python loops over agents (and StiefelKPCA rebuilds A, a property,
on every access; SpherePCA keeps its A once built). These subclasses keep every formula of their
reference class and only change how often and in what order it is evaluated; the per-sample
gradients, weights, data and validation are the reference's, so every trainer (reference or
verified) accepts them.

- :class:`CachedSpherePCA` (Li and Ma (2023) (4) / Huang et al. (2024) (6.1)): A = sum_i p_i (c_i / N_i) Z_i^T Z_i, its
  eigenvalues and x* computed once; f(x) = -x^T A x, grad f(x) = P_x(-2 A x);
- :class:`CachedStiefelKPCA` (Li and Ma (2023) (3)): A = sum_i p_i A_i, eigenvalues and X* once;
  f(X) = -(1/2) tr(X^T A X), grad f(X) = P_X(-A X);
- :class:`BatchedHSP` (Huang et al. (2024) (6.3)): f(x) = sum_ij a_ij dist^2(x, y_ij), a_ij = p_i alpha_ij(w) / N_i,
  grad f(x) = -2 sum_ij a_ij Log_x(y_ij) with the row-wise Lorentz formulas of
  :mod:`prirfed.reference.manifolds.lorentz_rows`, and the optimum's Newton started at the data point
  of least f found from one pairwise-distance matrix (instead of one evaluation per point).

Mirrors ``reference/problems/sphere_pca.py``, ``reference/problems/stiefel_kpca.py`` and
``reference/problems/hsp.py``. Twin tests: ``tests/problems/test_cached_problems.py``
(f, grad f and the optimum equal to the reference class's to 1e-10).
"""

from __future__ import annotations

import numpy as np

from prirfed.reference.manifolds.lorentz_rows import dist_rows, grad_dist_rows
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction, lorentz_weighted_mean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA

__all__ = ["CachedSpherePCA", "CachedStiefelKPCA", "BatchedHSP", "CachedOptimum"]


class CachedOptimum:
    """Mixin (listed before a reference problem class): A, its eigenvalues and the optimum computed
    once by the parent class and returned from then on (copies, so callers cannot alter the cache).

    Helper, not a paper formula: a cache in front of the parent class's ``A``, ``eigenvalues`` and
    ``optimum``.
    """

    _cache: dict

    def _cached(self, key, compute):
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    @property
    def A(self):
        return self._cached("A", lambda: super(CachedOptimum, self).A)

    def eigenvalues(self):
        return self._cached("eigenvalues", lambda: super(CachedOptimum, self).eigenvalues()).copy()

    def optimum(self):
        return self._cached("optimum", lambda: super(CachedOptimum, self).optimum()).copy()


class CachedSpherePCA(CachedOptimum, SpherePCA):
    """Verified twin of :class:`prirfed.reference.problems.sphere_pca.SpherePCA`: :class:`SpherePCA` with A,
    eigenvalues and optimum computed once, and the global f and grad f through the cached A (one d x d product
    instead of a Python loop over n agents): ``SpherePCA.A`` = sum_i p_i (c_i / N_i) Z_i^T Z_i, so f(x) = -x^T A x
    and the Euclidean gradient is -2 A x (the per-agent forms summed with the weights p_i)."""

    def _f(self, x) -> float:
        return -float(x @ (self.A @ x))

    def _rgrad(self, x):
        return self.manifold.proj(x, -2.0 * (self.A @ x))


class CachedStiefelKPCA(CachedOptimum, StiefelKPCA):
    """Verified twin of :class:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA`: :class:`StiefelKPCA` with A,
    eigenvalues and optimum computed once, and the global f and grad f through the cached A = sum_i p_i A_i: f(X) =
    -(1/2) tr(X^T A X), Euclidean gradient -A X."""

    def _f(self, x) -> float:
        return -0.5 * float(np.sum(x * (self.A @ x)))

    def _rgrad(self, x):
        return self.manifold.proj(x, -(self.A @ x))


class BatchedHSP(HyperbolicStructuredPrediction):
    """Verified twin of :class:`prirfed.reference.problems.hsp.HyperbolicStructuredPrediction`: Problem (6.3) of Huang
    et al. (2024), :class:`HyperbolicStructuredPrediction` unchanged, except that the global objective f and its
    gradient are evaluated over all samples at once, and :meth:`optimum` starts Newton from the data point of least
    f found by one batched pairwise-distance matrix instead of one evaluation per point (the parent takes ~90 s on
    the mammal data, most of it to pick that start). f(x) = sum_ij a_ij dist^2(x, y_ij), a_ij = p_i alpha_ij(w) /
    N_i; grad f(x) = sum_ij a_ij 2 dist(x, y_ij) grad dist(., y_ij)(x) = -2 sum_ij a_ij Log_x(y_ij)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._Y_all = np.concatenate(self.Y)
        self._a_all = np.concatenate([self.p[i] * self.alpha[i] / self.N_i[i] for i in range(self.N)])

    def _f(self, x) -> float:
        d = dist_rows(x[None, :], self._Y_all)
        return float(np.sum(self._a_all * d * d))

    def _rgrad(self, x) -> np.ndarray:
        X = np.broadcast_to(x, self._Y_all.shape)
        d = dist_rows(X, self._Y_all)
        G = grad_dist_rows(X, self._Y_all, d)
        return self.manifold.proj(x, np.sum((2.0 * self._a_all * d)[:, None] * G, axis=0))

    def optimum(self, tol: float = 1e-10, max_iter: int = 200, return_info: bool = False):
        """h(w) = argmin f (:func:`lorentz_weighted_mean`, weights a_ij), started at the data point of least f."""
        Y, a = self._Y_all, self._a_all
        D = dist_rows(Y[:, None, :], Y[None, :, :])
        x0 = Y[int(np.argmin((D * D) @ a))]
        try:
            x, info = lorentz_weighted_mean(self.manifold, Y, a, tol=tol, max_iter=max_iter, x0=x0)
        except ValueError as exc:
            raise ValueError(f"BatchedHSP.optimum: {exc}") from None
        return (x, info) if return_info else x
