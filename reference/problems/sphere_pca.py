"""Principal eigenvector on the sphere S^d (Huang et al. (2024) section 6.1 (6.1); Han et al. (2024) section 5.1 (2); Li and Ma (2023) (4)).

The three papers print the same problem with different constants::

    Huang et al. (2024) (6.1): f(x) = - sum_i (p_i / N_i) sum_j x^T (z_ij z_ij^T) x,      p_i = N_i / sum N_k
    Han et al. (2024) (2):   F(w) = - (1/n) sum_i w^T (z_i z_i^T) w                     (one agent)
    Li and Ma (2023) (4):   f(x) = (1/n) sum_i f_i(x),  f_i(x) = -(1/2) x^T A_i x,     A_i = Z_i^T Z_i (Li and Ma (2023) 5.2)

All are  f_ij(x) = -c_i (z_ij^T x)^2  with c_i = 1 (Huang et al. (2024), Han et al. (2024)) or c_i = N_i / 2 (Li and Ma (2023), so that
the mean over j of f_ij is -(1/2) x^T A_i x), and agent weights p_i = N_i / sum N_k (Huang et al. (2024)) or
1/n (Li and Ma (2023)). Derivations, constants and errata (leads 7 and 15): ``proofs_notes/problem_sphere_pca.md``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from ..manifolds import Sphere
from .base import FederatedProblem, agent_arrays, agent_weights, public

__all__ = ["SpherePCA", "DATA_BOUND", "check_data_bound"]

_PAPERS = ("000", "001", "002")

#: Domain of the data: ``N_i c_i max_j ||z_ij||^2 <= DATA_BOUND = 2^1000`` (1.07e301) for every
#: agent. Then every loss ``|f_ij| <= c ||z||^2``, every gradient entry (at most ``4 c ||z||^2``) and
#: every sum of N_i of them stays below 2^1002 at every point of the sphere: nothing overflows float64.
DATA_BOUND = 2.0**1000


def check_data_bound(where: str, Z, c) -> None:
    r"""Refuse data outside the domain :math:`N_i c_i \max_j \lVert z_{ij}\rVert^2 \le` ``DATA_BOUND`` :math:`= 2^{1000}`.

    Helper, not a paper formula: the data domain on which every loss and gradient of the sphere PCA
    problem (Huang et al. (2024), eq. (6.1)) is finite in float64.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    Z : sequence of numpy.ndarray
        Agent :math:`i`'s records as rows, shape ``(N_i, d + 1)``.
    c : sequence of float
        The agents' loss scalings :math:`c_i`.

    Raises
    ------
    ValueError
        If an agent's data leave the domain (the value and the bound are named).
    """
    for i, z in enumerate(Z):
        with np.errstate(over="ignore"):
            m = float(np.max(np.einsum("jk,jk->j", z, z))) * float(c[i]) * z.shape[0]
        if not m <= DATA_BOUND:
            raise ValueError(f"{where}: Z[{i}] is outside the domain of the problem: N_i c_i max_j ||z_ij||^2 = "
                             f"{m:.3e} > 2^1000 = {DATA_BOUND:.3e} (losses and gradients would overflow float64)")


class SpherePCA(FederatedProblem):
    """Leading eigenvector of a (federated) sample covariance as minimisation on :math:`S^d`; Huang et al. (2024), eq. (6.1); Han et al. (2024), eq. (2); Li and Ma (2023), eq. (4).

    Parameters
    ----------
    Z : sequence of array_like, or numpy.ndarray
        Agent :math:`i`'s samples :math:`z_{ij}` as rows, shape ``(N_i, d + 1)``; a single 2-D array
        is one agent.
    paper : str, optional
        Whose scaling :math:`c_i` and weights :math:`p_i` to use: ``"000"`` Huang et al. (2024)
        (default), ``"001"`` Han et al. (2024) (a single agent), ``"002"`` Li and Ma (2023) (see the
        module docstring).

    Raises
    ------
    ValueError
        If ``paper`` is unknown, the data are malformed, or ``"001"`` is given several agents.
    """

    def __init__(self, Z, paper: str = "000"):
        where = "SpherePCA"
        if paper not in _PAPERS:
            raise ValueError(f"{where}: paper must be one of {_PAPERS} (got {paper!r})")
        Z = agent_arrays(where, "Z", Z)
        if Z[0].ndim != 2:
            raise ValueError(f"{where}: each agent's data must be a 2-D array (N_i, d+1) (got ndim {Z[0].ndim})")
        D1 = Z[0].shape[1]
        if D1 < 2:
            raise ValueError(f"{where}: samples must have d + 1 >= 2 coordinates (got {D1})")
        if paper == "001" and len(Z) != 1:
            raise ValueError(f"{where}: paper '001' is the single-agent problem (2) (got {len(Z)} agents)")
        self.paper = paper
        self.Z = Z
        self.d = D1 - 1
        self.manifold = Sphere(self.d)
        self.N_i = [int(z.shape[0]) for z in Z]
        self.p = agent_weights(self.N_i, "uniform" if paper == "002" else "samples")
        # per-sample scale c_i: f_ij = -c_i (z_ij^T x)^2
        self.c = np.array([n / 2.0 if paper == "002" else 1.0 for n in self.N_i])
        check_data_bound(where, Z, self.c)

    # ------------------------------------------------------------------ per sample
    def _f_ij(self, x, i, j):
        """f_ij(x) = -c_i x^T (z_ij z_ij^T) x (Huang et al. (2024) (6.1) with c_i = 1)."""
        z = self.Z[i][j]
        return -self.c[i] * float(z @ x) ** 2

    def _egrad_ij(self, x, i, j):
        """Euclidean gradient -2 c_i (z_ij^T x) z_ij."""
        z = self.Z[i][j]
        return -2.0 * self.c[i] * float(z @ x) * z

    def _rgrad_ij(self, x, i, j):
        """grad f_ij(x) = (I - x x^T) egrad = -2 c_i (z^T x)(z - (z^T x) x) (Han et al. (2024) section 5.1)."""
        z = self.Z[i][j]
        a = float(z @ x)
        return -2.0 * self.c[i] * a * (z - a * x)

    @public("rhess_ij")
    def rhess_ij(self, x, i, j, v):
        """Riemannian Hessian of f_ij on S^d applied to v in T_x:
        Hess f_ij(x)[v] = (I - x x^T)(-2 c z z^T v) + 2 c (z^T x)^2 v
        (projected Euclidean Hessian minus (x^T egrad) v). Huang et al. (2024) section 6.1 prints the negative of
        this (the Hessian of +x^T z z^T x); the bound 2 z^T z on its norm is unaffected."""
        x = self._x("rhess_ij", x)
        i = self._i("rhess_ij", i)
        j = self._j("rhess_ij", i, j)
        v = self.manifold.check_tangent(x, v, where="SpherePCA.rhess_ij")
        z = self.Z[i][j]
        c = self.c[i]
        w = -2.0 * c * float(z @ v) * z
        return (w - float(x @ w) * x) + 2.0 * c * float(z @ x) ** 2 * v

    # ------------------------------------------------------------------ vectorised averages
    def covariance_i(self, i) -> np.ndarray:
        """(c_i / N_i) Z_i^T Z_i, so that f_i(x) = -x^T covariance_i x."""
        i = self._i("covariance_i", i)
        return self.c[i] / self.N_i[i] * (self.Z[i].T @ self.Z[i])

    @property
    def A(self) -> np.ndarray:
        """A = sum_i p_i (c_i / N_i) Z_i^T Z_i, so that f(x) = -x^T A x.

        Computed on first use and kept (like :attr:`x_star`; the data do not change after
        construction), read-only: the optimum and the verified trainers' history share it."""
        if getattr(self, "_A", None) is None:
            A = sum(self.p[i] * self.covariance_i(i) for i in range(self.N))
            A.setflags(write=False)
            self._A = A
        return self._A

    def _f_i(self, x, i):
        return -self.c[i] * float(np.mean((self.Z[i] @ x) ** 2))

    def _egrad_i(self, x, i):
        return -2.0 * self.c[i] / self.N_i[i] * (self.Z[i].T @ (self.Z[i] @ x))

    def _rgrad_i(self, x, i):
        g = self._egrad_i(x, i)
        return g - float(x @ g) * x

    # ------------------------------------------------------------------ optimum
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of A in decreasing order (A is symmetric: ``eigh``, never ``eig``)."""
        lam = np.linalg.eigvalsh(self.A)
        return np.sort(lam)[::-1]

    def optimum(self) -> np.ndarray:
        """x* = a unit eigenvector of A for its largest eigenvalue, so f(x*) = -lambda_1.

        Uses the symmetric solver ``eigh`` and sorts explicitly (ERRATA lead 15: the authors' code
        took the first column of an unsorted ``np.linalg.eig``). The sign is fixed so that the
        entry of largest magnitude is positive. Raises ``ValueError`` when lambda_1 = lambda_2
        to within rounding (the minimiser is then not unique up to sign).

        Only the top two eigenpairs are needed, and A = W^T W where W stacks the samples z_ij as rows
        scaled by sqrt(p_i c_i / N_i) (all positive). With n samples in all:

        - n >= d + 1: the top two eigenpairs of A, asked of ``scipy.linalg.eigh`` by index (no
          other eigenvector is computed);
        - n < d + 1: those of the n x n Gram matrix G = W W^T. If G u = lambda u with ||u|| = 1 and
          lambda > 0, then A (W^T u) = lambda (W^T u) and ||W^T u||^2 = lambda; A's other
          eigenvalues are 0, so lambda_2 is G's second eigenvalue (0 when n = 1). This costs
          O(n^2 (d + 1)) instead of the O((d + 1)^3) of A's eigendecomposition (3.8 s -> 0.24 s at
          d + 1 = 3000, n = 1000: ``benchmarks/bench_fast.py --only optimum``).
        """
        n, D1 = sum(self.N_i), self.d + 1
        if n < D1:
            W = np.vstack([math.sqrt(self.p[i] * self.c[i] / self.N_i[i]) * self.Z[i] for i in range(self.N)])
            lam, U = scipy.linalg.eigh(W @ W.T)
            order = np.argsort(lam)[::-1]
            lam1 = float(lam[order[0]])
            lam2 = max(float(lam[order[1]]), 0.0) if n >= 2 else 0.0
            u = U[:, order[0]]
        else:
            lam, U = scipy.linalg.eigh(self.A, subset_by_index=[D1 - 2, D1 - 1])
            order = np.argsort(lam)[::-1]
            lam1, lam2 = float(lam[order[0]]), float(lam[order[1]])
            u = U[:, order[0]]
        tol = 1e-12 * abs(lam1)  # relative at every scale; all-zero data (0 <= 0) is refused too
        if lam1 - lam2 <= tol:
            raise ValueError(
                f"SpherePCA.optimum: the top eigenvalue is not simple (lambda_1 - lambda_2 = {lam1 - lam2:.3e}, "
                f"tolerance {tol:.3e}): the minimiser is not unique"
            )
        if n < D1:
            x = W.T @ u
            x = x / np.linalg.norm(x)
        else:
            x = u
        k = int(np.argmax(np.abs(x)))
        return x if x[k] > 0 else -x

    def angle_to_optimum(self, x) -> float:
        """Angle in [0, pi/2] between the lines spanned by x and x*: ``atan2(||x - (x^T x*) x*||, |x^T x*|)``.

        x* is :attr:`x_star` (``optimum()`` computed once per problem), not a new eigendecomposition
        per call: histories call this every recorded round (0.29 s per call at d + 1 = 784 before).
        """
        x = self._x("angle_to_optimum", x)
        s = self.x_star
        a = float(x @ s)
        return math.atan2(float(np.linalg.norm(x - a * s)), abs(a))

    # ------------------------------------------------------------------ constants
    @property
    def theta(self) -> float:
        """vartheta = max_ij c_i z_ij^T z_ij (Han et al. (2024) section 5.1; Huang et al. (2024) writes it vartheta~ with c_i = 1)."""
        return max(float(self.c[i] * np.max(np.einsum("jk,jk->j", self.Z[i], self.Z[i]))) for i in range(self.N))

    @property
    def L_f(self) -> float:
        """Geodesic Lipschitz constant of every f_ij on all of S^d (Definition 2.1 of Huang et al. (2024)):
        ``||grad f_ij(x)|| = c ||z||^2 |sin 2 phi| <= c ||z||^2`` where phi is the angle between x and z,
        so L_f = vartheta, attained at phi = pi/4. Tight."""
        return self.theta

    @property
    def L_g(self) -> float:
        """Geodesic smoothness constant of every f_ij on S^d (Definition 2.2 of Huang et al. (2024)):
        the eigenvalues of Hess f_ij(x) are 2 c (z^T x)^2 and 4 c (z^T x)^2 - 2 c ||z||^2, so
        ||Hess f_ij|| <= 2 c ||z||^2 and L_g = 2 vartheta, attained at x = z/||z|| and at x orthogonal to z."""
        return 2.0 * self.theta

    @property
    def paper_L_f(self) -> float | None:
        """L_f as the selected paper states it: Huang et al. (2024) section 6.1: 2 vartheta~ (valid, twice the tight
        value); Han et al. (2024) section 5.1: L_0 = vartheta (true, although its intermediate step
        2||z z^T w|| <= vartheta is false); Li and Ma (2023) states none (None)."""
        return {"000": 2.0 * self.theta, "001": self.theta, "002": None}[self.paper]

    @property
    def paper_L_g(self) -> float | None:
        """L_g as the selected paper states it: Huang et al. (2024) section 6.1: 2 vartheta~ (correct); Han et al. (2024) and Li and Ma (2023): None."""
        return {"000": 2.0 * self.theta, "001": None, "002": None}[self.paper]
