"""Federated kPCA on the Stiefel manifold St(d, r) (Li and Ma (2023) (3)); r = 1 is PCA on the sphere (Li and Ma (2023) (4)).

    Li and Ma (2023) (3):  min_{X in St(d, r)} f(X) = (1/n) sum_i f_i(X),   f_i(X) = -(1/2) tr(X^T A_i X),

with A_i the agent's (unnormalised) covariance A_i = X_i X_i^T, records as the columns of X_i
(Li and Ma (2023) section 5.2); here records are the rows z_ij of Z_i, so A_i = Z_i^T Z_i = sum_j z_ij z_ij^T.
To expose per-sample losses with f_i = (1/N_i) sum_j f_ij we set

    f_ij(X) = -c_i ||X^T z_ij||^2,   c_i = N_i / 2.

The optimum is any orthonormal basis of the top-r eigenspace of sum_i p_i A_i (Ky Fan); it is
determined only up to X -> X Q (Li and Ma (2023) footnote 3), so it is compared by principal angles.
Derivations and constants: ``proofs_notes/problem_stiefel_kpca.md``.
"""

from __future__ import annotations

import math

import numpy as np

from ..manifolds import Stiefel
from .base import FederatedProblem, agent_arrays, agent_weights, public
from .sphere_pca import check_data_bound

__all__ = ["StiefelKPCA", "principal_angles"]


def principal_angles(X, Y) -> np.ndarray:
    r"""Principal angles :math:`0 \le \theta_1 \le \dots \le \theta_r \le \pi/2` between the column spans of ``X`` and ``Y`` (Björck and Golub (1973)).

    :math:`\cos\theta_k` are the singular values of :math:`X^\top Y` (descending),
    :math:`\sin\theta_k` those of :math:`Y - X(X^\top Y)` (ascending);
    :math:`\theta_k = \operatorname{atan2}(\sin\theta_k, \cos\theta_k)` is accurate for small and
    large angles alike (arccos alone loses everything below about :math:`10^{-8}`).

    Parameters
    ----------
    X, Y : array_like
        Matrices of shape ``(d, r)`` with orthonormal columns.

    Returns
    -------
    numpy.ndarray
        The ``r`` angles, ascending.

    Raises
    ------
    ValueError
        If the shapes differ or are not two-dimensional.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if X.ndim != 2 or X.shape != Y.shape:
        raise ValueError(f"principal_angles: X and Y must be 2-D of the same shape (got {X.shape} and {Y.shape})")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise ValueError("principal_angles: X and Y must be finite")
    r = X.shape[1]
    for name, A in (("X", X), ("Y", Y)):
        err = float(np.max(np.abs(A.T @ A - np.eye(r))))
        if err > 1e-8:
            raise ValueError(f"principal_angles: {name} does not have orthonormal columns (max |A^T A - I| = {err:.1e}, tolerance 1e-08)")
    C = X.T @ Y
    cos = np.sort(np.linalg.svd(C, compute_uv=False))[::-1]
    sin = np.sort(np.linalg.svd(Y - X @ C, compute_uv=False))
    return np.arctan2(sin, cos)


class StiefelKPCA(FederatedProblem):
    r"""Federated kernel PCA on :math:`\mathrm{St}(d, r)`, Li and Ma (2023), eq. (3), from per-agent samples.

    Parameters
    ----------
    Z : sequence of array_like
        Agent :math:`i`'s records :math:`z_{ij}` as rows, shape ``(N_i, d)``
        (:math:`A_i = Z_i^\top Z_i`).
    r : int
        Number of components, :math:`1 \le r < d` (on :math:`\mathrm{St}(d, d) = O(d)` the
        objective is constant).
    weights : {"uniform", "samples"}, optional
        :math:`p_i = 1/n` as in Li and Ma (2023), eq. (3) (default), or :math:`p_i = N_i/\sum_k N_k`
        as in Huang et al. (2024), eq. (2.1).

    Raises
    ------
    ValueError
        If the data are malformed or ``r`` is out of range.

    Notes
    -----
    Domain: finite real data with ``N_i c_i max_j ||z_ij||^2 <= 2^1000`` (as for
    :class:`~prirfed.reference.problems.sphere_pca.SpherePCA`: every loss and gradient is then finite
    at every point of St(d, r)); points are validated by the Stiefel checks.
    """

    def __init__(self, Z, r: int, weights: str = "uniform"):
        where = "StiefelKPCA"
        Z = agent_arrays(where, "Z", Z)
        if Z[0].ndim != 2:
            raise ValueError(f"{where}: each agent's data must be a 2-D array (N_i, d) (got ndim {Z[0].ndim})")
        d = Z[0].shape[1]
        ok = isinstance(r, (int, float, np.integer, np.floating)) and not isinstance(r, (bool, np.bool_))
        if not (ok and math.isfinite(r) and int(r) == r and 1 <= r < d):
            raise ValueError(f"{where}: r must be an integer in [1, d - 1] (d = {d}; r = d makes f constant) (got {r!r})")
        if weights not in ("uniform", "samples"):
            raise ValueError(f"{where}: weights must be 'uniform' or 'samples' (got {weights!r})")
        self.Z = Z
        self.d, self.r = d, int(r)
        self.manifold = Stiefel(d, self.r)
        self.N_i = [int(z.shape[0]) for z in Z]
        self.p = agent_weights(self.N_i, weights)
        self.c = np.array([n / 2.0 for n in self.N_i])
        check_data_bound(where, Z, self.c)
        #: A_i = Z_i^T Z_i (Li and Ma (2023), Section 5.2)
        self.A_i = [z.T @ z for z in Z]

    # ------------------------------------------------------------------ per sample
    def _f_ij(self, X, i, j):
        """f_ij(X) = -(N_i/2) ||X^T z_ij||^2, so that mean_j f_ij = -(1/2) tr(X^T A_i X)."""
        b = X.T @ self.Z[i][j]
        return -self.c[i] * float(b @ b)

    def _egrad_ij(self, X, i, j):
        """Euclidean gradient -2 c_i z (z^T X) = -N_i z z^T X."""
        z = self.Z[i][j]
        return -2.0 * self.c[i] * np.outer(z, z @ X)

    def _rgrad_ij(self, X, i, j):
        """grad f_ij(X) = P_X(egrad) = egrad - X sym(X^T egrad) (Euclidean metric, Sutti (2022) slides);
        here X^T egrad = -2c b b^T is symmetric, so grad = -2c (I - X X^T) z b^T, b = X^T z."""
        G = self._egrad_ij(X, i, j)
        S = X.T @ G
        return G - X @ (0.5 * (S + S.T))

    @public("rhess_ij")
    def rhess_ij(self, X, i, j, V) -> np.ndarray:
        """Hess f_ij(X)[V] = P_X(D grad f_ij(X)[V]) (Riemannian submanifold; Absil, Mahony & Sepulchre
        2008, Prop. 5.3.2) = P_X(nabla^2 f_ij[V] - V sym(X^T nabla f_ij)) = P_X(-2c z z^T V + 2c V b b^T),
        b = X^T z (P_X annihilates X S for symmetric S)."""
        X = self._x("rhess_ij", X)
        i = self._i("rhess_ij", i)
        j = self._j("rhess_ij", i, j)
        V = self.manifold.check_tangent(X, V, where="StiefelKPCA.rhess_ij", name="V")
        z, c = self.Z[i][j], self.c[i]
        b = X.T @ z
        W = -2.0 * c * np.outer(z, z @ V) + 2.0 * c * np.outer(V @ b, b)
        S = X.T @ W
        return W - X @ (0.5 * (S + S.T))

    # ------------------------------------------------------------------ vectorised averages
    def _f_i(self, X, i):
        """f_i(X) = -(1/2) tr(X^T A_i X) (Li and Ma (2023) (3))."""
        return -0.5 * float(np.sum(X * (self.A_i[i] @ X)))

    def _egrad_i(self, X, i):
        """nabla f_i(X) = -A_i X (Sutti (2022) slides)."""
        return -self.A_i[i] @ X

    def _rgrad_i(self, X, i):
        G = self._egrad_i(X, i)
        S = X.T @ G
        return G - X @ (0.5 * (S + S.T))

    @property
    def A(self) -> np.ndarray:
        """A = sum_i p_i A_i, so that f(X) = -(1/2) tr(X^T A X)."""
        return sum(self.p[i] * self.A_i[i] for i in range(self.N))

    # ------------------------------------------------------------------ optimum
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of A, decreasing."""
        return np.sort(np.linalg.eigvalsh(self.A))[::-1]

    def optimum(self) -> np.ndarray:
        """An orthonormal basis X* of the top-r eigenspace of A (``eigh``, sorted decreasing), so that
        f(X*) = -(1/2) sum_{k <= r} lambda_k (Ky Fan). Raises ``ValueError`` if lambda_r = lambda_{r+1}
        to rounding (the optimal subspace is then not unique). Columns' signs: largest entry positive."""
        lam, U = np.linalg.eigh(self.A)
        order = np.argsort(lam)[::-1]
        lam, U = lam[order], U[:, order]
        r = self.r
        scale = max(abs(lam[0]), 1e-300)
        if r < self.d and lam[r - 1] - lam[r] <= 1e-12 * scale:
            raise ValueError(
                f"StiefelKPCA.optimum: lambda_r = lambda_(r+1) to rounding (gap {lam[r - 1] - lam[r]:.3e}, "
                f"tolerance {1e-12 * scale:.3e}): the optimal subspace is not unique"
            )
        X = U[:, :r].copy()
        for k in range(r):
            if X[int(np.argmax(np.abs(X[:, k]))), k] < 0:
                X[:, k] = -X[:, k]
        return X

    @property
    def x_star(self):
        """None: the optimum is a subspace; trainers' dist(x, x*) on St(d, r) is not meaningful.
        Use :meth:`angles_to_optimum` instead."""
        return None

    def angles_to_optimum(self, X) -> np.ndarray:
        """Principal angles between span(X) and the optimal subspace (Li and Ma (2023) section 5 reports their sum).

        X* is ``optimum()`` computed once per problem (histories call this every recorded round)."""
        X = self._x("angles_to_optimum", X)
        if getattr(self, "_X_star", None) is None:
            self._X_star = self.optimum()
        return principal_angles(X, self._X_star)

    # ------------------------------------------------------------------ constants
    @property
    def theta(self) -> float:
        """vartheta = max_ij c_i ||z_ij||^2 = max_ij N_i ||z_ij||^2 / 2."""
        return max(float(self.c[i] * np.max(np.einsum("jk,jk->j", self.Z[i], self.Z[i]))) for i in range(self.N))

    @property
    def L_f(self) -> float:
        """||grad f_ij(X)||_F = 2c ||(I - XX^T) z|| ||X^T z|| = c ||z||^2 sin(2 phi) <= vartheta
        (cos phi = ||X^T z|| / ||z||); attained when r < d."""
        return self.theta

    @property
    def L_g(self) -> float:
        """Per-sample smoothness: <V, Hess f_ij V> = -2c ||z^T V||^2 + 2c ||V b||^2 lies in
        [-2c ||z||^2, 2c ||z||^2] ||V||^2 and Hess is self-adjoint, so ||Hess f_ij|| <= 2 vartheta."""
        return 2.0 * self.theta

    def L_g_agent(self, i) -> float:
        """Smoothness of f_i: <V, Hess f_i V> = -tr(V^T A_i V) + tr(V^T V X^T A_i X) in
        [-lambda_max(A_i), lambda_max(A_i)] ||V||^2, so L_i = lambda_max(A_i)."""
        i = self._i("L_g_agent", i)
        return float(np.linalg.eigvalsh(self.A_i[i])[-1])

    @property
    def L_g_global(self) -> float:
        """Smoothness of f = sum_i p_i f_i: sum_i p_i L_i (the Hessian is the weighted mean)."""
        return float(sum(self.p[i] * self.L_g_agent(i) for i in range(self.N)))

    @property
    def paper_L_g_global(self) -> float:
        """Li and Ma (2023), Assumption 1: "f is L-smooth with L = sum_i L_i" (true for f = (1/n) sum f_i, but n times
        the weighted mean that suffices)."""
        return float(sum(self.L_g_agent(i) for i in range(self.N)))

    def sum_of_principal_angles(self, X) -> float:
        """The accuracy measure of Li and Ma (2023) section 5: sum of the principal angles to the optimum."""
        return float(math.fsum(self.angles_to_optimum(X)))
