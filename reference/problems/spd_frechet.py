"""Fréchet (Karcher) mean on SPD(n) with the affine-invariant metric (Huang et al. (2024) section 6.2 (6.2); Han et al. (2024) section 5.2 (3)).

    Huang et al. (2024) (6.2): f(X) = sum_i (p_i / N_i) sum_j || log(X^{-1/2} Z_ij X^{-1/2}) ||_F^2,   p_i = N_i / sum N_k
    Han et al. (2024) (3):   F(W) = (1/n) sum_i || log_m(W^{-1/2} X_i W^{-1/2}) ||_F^2              (one agent)

Both use f_ij(X) = dist^2(X, Z_ij) with no factor 1/2; ``c = 0.5`` gives the other common
convention f_ij = (1/2) dist^2 (gradient -Log_X(Z_ij)). Derivations, constants and the errata of
Han et al. (2024) section 5.2 (its gradient lacks the factor -2): ``proofs_notes/problem_spd_frechet_mean.md``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from prirfed.reference.checks import check_real

from ..manifolds import SPD
from ..manifolds.base import zeta
from .base import FederatedProblem, Refusal, agent_arrays, agent_weights, positive_float, public

__all__ = ["SPDFrechetMean", "sym_fun"]


def sym_fun(S: np.ndarray, fun) -> np.ndarray:
    r"""A function of a symmetric matrix by one eigendecomposition, :math:`U\,\mathrm{diag}(f(\lambda))\,U^\top`, symmetrised (Bhatia (2007), Chapter 6).

    Parameters
    ----------
    S : numpy.ndarray
        A symmetric matrix.
    fun : callable
        A function applied to the eigenvalues (vectorised).

    Returns
    -------
    numpy.ndarray
        :math:`f(S)`.
    """
    lam, U = np.linalg.eigh(S)
    F = (U * fun(lam)) @ U.T
    return 0.5 * (F + F.T)


def _whiten(X: np.ndarray):
    """(X^{1/2}, X^{-1/2}) from one eigh of X."""
    lam, U = np.linalg.eigh(X)
    s = np.sqrt(lam)
    S = (U * s) @ U.T
    Si = (U / s) @ U.T
    return 0.5 * (S + S.T), 0.5 * (Si + Si.T)


def _whitened_positive(lam) -> None:
    """Refuse a whitened sample X^{-1/2} Z X^{-1/2} that is not positive definite in floating point
    (its log, hence the loss and the gradient, would be NaN)."""
    if not float(np.min(lam)) > 0.0:
        raise Refusal(f"X^(-1/2) Z X^(-1/2) has eigenvalue {float(np.min(lam)):.3e} <= 0 in floating point "
                      "(cond(X) cond(Z) is beyond float64)")


class SPDFrechetMean(FederatedProblem):
    """Federated Fréchet mean of SPD matrices (Huang et al. (2024) (6.2)).

    Domain: samples that pass the SPD point check; at a point X the whitened samples
    X^{-1/2} Z_ij X^{-1/2} must be positive definite in floating point (else the methods raise
    ``ValueError``: cond(X) cond(Z_ij) is then beyond float64), and every result is finite or raises.

    Parameters
    ----------
    Z : sequence of arrays, agent i of shape (N_i, n, n); a single 3-D array is one agent.
    c : per-sample scale, f_ij = c dist^2 (papers: c = 1; c = 1/2 gives grad f_ij = -Log_X(Z_ij)).
    """

    def __init__(self, Z, c: float = 1.0):
        where = "SPDFrechetMean"
        Z = agent_arrays(where, "Z", Z)
        if Z[0].ndim != 3 or Z[0].shape[1] != Z[0].shape[2]:
            raise ValueError(f"{where}: each agent's data must have shape (N_i, n, n) (got {Z[0].shape})")
        c = positive_float(where, "the scale c", c)
        self.n = Z[0].shape[1]
        self.manifold = SPD(self.n)
        for i, Zi in enumerate(Z):
            for j in range(Zi.shape[0]):
                self.manifold.check_point(Zi[j], where=f"{where}: Z[{i}][{j}]")
        self.Z = Z
        self.c = c
        self.N_i = [int(z.shape[0]) for z in Z]
        self.p = agent_weights(self.N_i, "samples")

    # ------------------------------------------------------------------ per sample
    def _f_ij(self, X, i, j):
        """f_ij(X) = c ||log(X^{-1/2} Z_ij X^{-1/2})||_F^2 = c sum_k log^2 lambda_k, lambda the
        eigenvalues of the pencil (Z_ij, X) (equal to those of X^{-1/2} Z_ij X^{-1/2})."""
        lam = scipy.linalg.eigh(self.Z[i][j], X, eigvals_only=True)
        _whitened_positive(lam)
        return self.c * float(np.sum(np.log(lam) ** 2))

    def _log_whitened(self, Xmh, i, j):
        """log(X^{-1/2} Z_ij X^{-1/2}); refuses (Refusal) an eigenvalue <= 0 in floating point."""
        lam, U = np.linalg.eigh(Xmh @ self.Z[i][j] @ Xmh)
        _whitened_positive(lam)
        F = (U * np.log(lam)) @ U.T
        return 0.5 * (F + F.T)

    def _rgrad_ij(self, X, i, j):
        """grad f_ij(X) = -2 c X^{1/2} log(X^{-1/2} Z_ij X^{-1/2}) X^{1/2} = -2 c Log_X(Z_ij) (Huang et al. (2024) section 6.2)."""
        Xh, Xmh = _whiten(X)
        G = -2.0 * self.c * (Xh @ self._log_whitened(Xmh, i, j) @ Xh)
        return 0.5 * (G + G.T)

    def _egrad_ij(self, X, i, j):
        """Euclidean gradient X^{-1} grad f_ij X^{-1} = -2 c X^{-1/2} log(X^{-1/2} Z_ij X^{-1/2}) X^{-1/2}
        (inverse of egrad2rgrad(X, G) = X G X for symmetric G)."""
        _, Xmh = _whiten(X)
        G = -2.0 * self.c * (Xmh @ self._log_whitened(Xmh, i, j) @ Xmh)
        return 0.5 * (G + G.T)

    @public("rgrad_norm_ij")
    def rgrad_norm_ij(self, X, i, j) -> float:
        """||grad f_ij(X)||_X = 2 c dist(X, Z_ij)."""
        X = self._x("rgrad_norm_ij", X)
        i = self._i("rgrad_norm_ij", i)
        j = self._j("rgrad_norm_ij", i, j)
        return 2.0 * self.c * float(np.sqrt(self._f_ij(X, i, j) / self.c))

    # ------------------------------------------------------------------ optimum
    def _weighted_log_sum(self, Xmh):
        """T = sum_ij (p_i / N_i) log(X^{-1/2} Z_ij X^{-1/2}): grad f(X) = -2 c X^{1/2} T X^{1/2}."""
        T = np.zeros((self.n, self.n))
        for i in range(self.N):
            for j in range(self.N_i[i]):
                T += (self.p[i] / self.N_i[i]) * self._log_whitened(Xmh, i, j)
        return T

    def log_euclidean_mean(self) -> np.ndarray:
        """expm(sum_ij (p_i/N_i) logm Z_ij): the starting point of :meth:`optimum`."""
        L = sum((self.p[i] / self.N_i[i]) * sym_fun(self.Z[i][j], np.log) for i in range(self.N) for j in range(self.N_i[i]))
        return sym_fun(L, np.exp)

    def optimum(self, tol: float = 1e-12, max_iter: int = 500, return_info: bool = False):
        """The Fréchet mean X* by Riemannian gradient descent with step 1/(2c) (the Karcher flow)

            X_{k+1} = Exp_{X_k}(-(1/(2c)) grad f(X_k)) = X^{1/2} expm(T) X^{1/2},

        T = sum (p_i/N_i) log(X^{-1/2} Z_ij X^{-1/2}), started at the log-Euclidean mean, until
        ||grad f(X)||_X = 2 c ||T||_F <= tol. f is geodesically strongly convex (2c-strongly; Han et al. (2024)
        Theorem 7), so the minimiser is unique. Raises ``ValueError`` if ``max_iter`` steps do not
        reach ``tol`` (with the norm reached).
        """
        if not (tol > 0 and max_iter >= 1):
            raise ValueError(f"SPDFrechetMean.optimum: need tol > 0 and max_iter >= 1 (got tol={tol}, max_iter={max_iter})")
        X = self.log_euclidean_mean()
        gnorm = np.inf
        for k in range(max_iter + 1):
            Xh, Xmh = _whiten(X)
            T = self._weighted_log_sum(Xmh)
            gnorm = 2.0 * self.c * float(np.linalg.norm(T))
            if gnorm <= tol:
                return (X, {"iterations": k, "grad_norm": gnorm}) if return_info else X
            if k == max_iter:
                break
            X = Xh @ sym_fun(T, np.exp) @ Xh
            X = 0.5 * (X + X.T)
        raise ValueError(
            f"SPDFrechetMean.optimum: gradient norm {gnorm:.3e} after {max_iter} iterations, tolerance {tol:.1e} not reached"
        )

    # ------------------------------------------------------------------ constants
    def data_diameter(self) -> float:
        """max over pairs of samples of dist(Z_a, Z_b): every point X of the geodesic convex hull
        of the data (which contains the Fréchet mean) has dist(X, Z_ij) <= this. O(n^2) eighs."""
        flat = [self.Z[i][j] for i in range(self.N) for j in range(self.N_i[i])]
        D = 0.0
        for a in range(len(flat)):
            for b in range(a + 1, len(flat)):
                lam = scipy.linalg.eigh(flat[a], flat[b], eigvals_only=True)
                D = max(D, float(np.sqrt(np.sum(np.log(lam) ** 2))))
        return D

    @staticmethod
    def _D(where, D) -> float:
        return check_real(f"SPDFrechetMean.{where}", "the diameter bound D", D, allow_zero=True)

    def L_f(self, D) -> float:
        """Lipschitz constant of every f_ij on a domain W with dist(X, Z_ij) <= D for X in W:
        ||grad f_ij(X)||_X = 2 c dist(X, Z_ij) <= 2 c D."""
        return 2.0 * self.c * self._D("L_f", D)

    def L_g(self, D) -> float:
        """Smoothness constant of every f_ij on such a domain: Hess(dist^2(., Z)) has eigenvalues
        ``2 sqrt(|k|) d coth(sqrt(|k|) d)`` for the curvatures k in [kappa_min, 0] of the planes
        through the geodesic, so ||Hess f_ij|| <= 2 c zeta(kappa_min, D) with kappa_min = -1/2
        for the affine-invariant metric (attained for n >= 2)."""
        return 2.0 * self.c * zeta(self.manifold.curvature_bounds[0], self._D("L_g", D))

    def paper_L_f(self, D) -> float:
        """Han et al. (2024), Section 5.2: L_0 = D_W, from its gradient grad f(W; X_i) = W log_m(W^{-1} X_i) whose
        norm is dist(W, X_i). The true gradient of dist^2 is -2 W log_m(W^{-1} X_i), so the true
        constant is 2 D (with c = 1): the paper's value is too small by a factor 2. Huang et al. (2024) states no
        L_f for this problem (it sets tau = 1)."""
        return self._D("paper_L_f", D)
