"""Hyperbolic structured prediction on the Lorentz model H^d (Huang et al. (2024) section 6.3 (6.3); Marconi et al. 2020).

For a test feature w, each agent i computes kernel-ridge weights from its own training pairs
(w_ij, y_ij), w_ij in R^r, y_ij in H^d::

    alpha_i(w) = (K_i + gamma I)^{-1} K_{i,w},   (K_i)_{lj} = k(w_il, w_ij),  (K_{i,w})_j = k(w_ij, w),

and the prediction is the minimiser of (6.3)::

    f(x) = sum_i p_i (1/N_i) sum_j alpha_ij(w) dist^2(x, y_ij),   f_ij(x) = alpha_ij(w) dist^2(x, y_ij).

The RBF kernel is printed k(w, w') = exp(-||w - w'||^2 / (2 v)^2); the extraction is ambiguous and
the Gaussian kernel of Marconi et al. and of Han et al.'s (2024) public HSP code is exp(-||w - w'||^2 / (2 v^2)).
``kernel="gaussian"`` (default) uses 2 v^2, ``kernel="printed"`` uses (2 v)^2 = 4 v^2.
Derivations, constants and errata (lead 6; the sign of the printed gradient):
``proofs_notes/problem_hsp.md``.
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.checks import check_real

from ..manifolds import Lorentz
from ..manifolds.base import as_float_array, zeta
from ..manifolds.lorentz import time_coordinate
from .base import FederatedProblem, agent_arrays, agent_weights, positive_float

__all__ = ["HyperbolicStructuredPrediction", "rbf_kernel", "krr_weights", "lorentz_weighted_mean", "dist2_hessian"]


def rbf_kernel(w, w_prime, v_bar: float, kernel: str = "gaussian") -> float:
    r"""Kernel :math:`k(w, w') = \exp(-\lVert w - w'\rVert^2/s)` of the structured prediction, Huang et al. (2024), Section 6.3.

    :math:`s = 2\bar v^2` for ``"gaussian"``, :math:`s = (2\bar v)^2` for ``"printed"`` (the form
    printed in the paper).

    Parameters
    ----------
    w, w_prime : array_like
        Two inputs.
    v_bar : float
        Bandwidth :math:`\bar v`.
    kernel : {"gaussian", "printed"}, optional
        Which scaling (default ``"gaussian"``).

    Returns
    -------
    float
        :math:`k(w, w')`.
    """
    s = 2.0 * v_bar * v_bar if kernel == "gaussian" else (2.0 * v_bar) * (2.0 * v_bar)
    diff = np.asarray(w, dtype=np.float64) - np.asarray(w_prime, dtype=np.float64)
    return math.exp(-float(diff @ diff) / s)


def krr_weights(W_i: np.ndarray, w: np.ndarray, gamma: float, v_bar: float, kernel: str = "gaussian") -> np.ndarray:
    r"""Kernel ridge regression weights :math:`\alpha_i(w) = (K_i + \gamma I)^{-1}K_{i,w}`, Huang et al. (2024), Section 6.3.

    Parameters
    ----------
    W_i : numpy.ndarray
        The agent's inputs, one per row.
    w : numpy.ndarray
        The query input.
    gamma : float
        Ridge parameter.
    v_bar : float
        Kernel bandwidth.
    kernel : {"gaussian", "printed"}, optional
        Kernel scaling (see :func:`rbf_kernel`).

    Returns
    -------
    numpy.ndarray
        The weights, one per row of ``W_i``.
    """
    n = W_i.shape[0]
    K = np.array([[rbf_kernel(W_i[l], W_i[j], v_bar, kernel) for j in range(n)] for l in range(n)])
    Kw = np.array([rbf_kernel(W_i[j], w, v_bar, kernel) for j in range(n)])
    return np.linalg.solve(K + gamma * np.eye(n), Kw)


def _d_over_sinh(t: float) -> float:
    """t / sinh(t), 1 at t = 0 (series below 1e-4)."""
    if t < 1e-4:
        return 1.0 - t * t / 6.0
    return t / math.sinh(t)


def _tangent(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A sum of tangent vectors at x put into T_x by its time coordinate from tangency,
    v_0 = <x_bar, v_bar>/x_0 (as Lorentz.log does); the space part is kept. A sum of tangent vectors
    that nearly cancel can fail a relative tangency check, and the L-orthogonal projection
    v + <x, v>_L x cancels two terms of size x_0^2 ||v|| in <x, v>_L at a far point (at x_0 = 2.4e8 it
    turned a gradient of norm 40 into one of norm 550)."""
    v = np.array(v, dtype=np.float64)
    v[0] = float(x[1:] @ v[1:]) / time_coordinate(x[1:])
    return v


def dist2_hessian(M: Lorentz, x: np.ndarray, y: np.ndarray, E: np.ndarray) -> np.ndarray:
    r"""Matrix of :math:`\operatorname{Hess}\operatorname{dist}^2(\cdot, y)(x)` on :math:`H^d` in an orthonormal basis of :math:`T_x` (Jacobi fields in curvature :math:`-1`; Lee (2018), Chapter 10).

    :math:`2[t\coth t\,I + (1 - t\coth t)\,uu^\top]`, :math:`u` the coordinates of
    :math:`\operatorname{Log}_x(y)/t`, :math:`t = \operatorname{dist}(x, y)`: eigenvalue 2 radially,
    :math:`2t\coth t` orthogonally; :math:`2I` at :math:`t = 0`.

    Parameters
    ----------
    M : Lorentz
        The hyperbolic space.
    x, y : numpy.ndarray
        Points of :math:`H^d`.
    E : numpy.ndarray
        Orthonormal basis of :math:`T_x`, one vector per row.

    Returns
    -------
    numpy.ndarray
        The Hessian matrix, shape ``(d, d)``.
    """
    L = M.log(x, y)
    t = M.norm(x, L)
    c = zeta(-1.0, t)  # t coth t, exact at t = 0
    H = 2.0 * c * np.eye(M.dim)
    if t > 0:
        u = np.array([M.inner(x, L, e) for e in E]) / t
        H += 2.0 * (1.0 - c) * np.outer(u, u)
    return H


def lorentz_weighted_mean(M: Lorentz, Y: np.ndarray, a: np.ndarray, tol: float = 1e-10, max_iter: int = 200, x0=None):
    r"""A minimiser of :math:`g(x) = \sum_k a_k\operatorname{dist}^2(x, y_k)` on :math:`H^d` by a damped Riemannian Newton method (the prediction step of Huang et al. (2024), Section 6.3).

    :math:`\operatorname{grad} g(x) = -2\sum_k a_k\operatorname{Log}_x(y_k)`; the Hessian is
    :func:`dist2_hessian` summed with the weights. If it is positive definite the direction is the
    Newton step, otherwise the gradient step :math:`-\operatorname{grad} g/(2\sum_{a_k>0}a_k)`; the
    step is halved until the Armijo condition holds (constant :math:`10^{-4}`), or, once :math:`g` no
    longer changes beyond rounding, until the gradient norm decreases; a trial point that ``Lorentz.exp``
    refuses (beyond float64's model) is a failed trial. With negative :math:`a_k`,
    :math:`g` need not be convex and the result is a stationary point reached from ``x0``.

    Parameters
    ----------
    M : Lorentz
        The hyperbolic space.
    Y : numpy.ndarray
        The points :math:`y_k`, one per row.
    a : array_like
        The weights :math:`a_k`, with a positive sum.
    tol : float, optional
        Stopping threshold on the gradient norm (default 1e-10).
    max_iter : int, optional
        Maximum number of Newton steps (default 200).
    x0 : numpy.ndarray, optional
        Starting point (default: the data point of smallest :math:`g`).

    Returns
    -------
    x : numpy.ndarray
        The minimiser.
    info : dict
        Iterations and the final gradient norm.

    Raises
    ------
    ValueError
        If the weights do not have a positive sum, or the gradient norm does not reach ``tol`` in
        ``max_iter`` steps (the message gives the last iterate's distance to the data: a minimiser far
        out, as negative weights can put it, is beyond float64's resolution of the gradient).
    """
    a = np.asarray(a, dtype=np.float64)
    if not a.sum() > 0:
        raise ValueError(f"lorentz_weighted_mean: the weights must have a positive sum (got {a.sum():.3e})")

    def g(x):
        return sum(a[k] * M.dist(x, Y[k]) ** 2 for k in range(len(a)))

    def grad(x):
        return _tangent(x, -2.0 * sum(a[k] * M.log(x, Y[k]) for k in range(len(a))))

    def hess(x, E):
        return sum(a[k] * dist2_hessian(M, x, Y[k], E) for k in range(len(a)))

    x = Y[int(np.argmin([g(y) for y in Y]))] if x0 is None else M.check_point(x0, where="lorentz_weighted_mean")
    t_grad = 1.0 / (2.0 * a[a > 0].sum())
    gx = g(x)
    for k in range(max_iter + 1):
        G = grad(x)
        gn = M.norm(x, G)
        if gn <= tol:
            return x, {"iterations": k, "grad_norm": gn}
        if k == max_iter:
            break
        E = M.tangent_basis(x)
        try:
            Lc = np.linalg.cholesky(hess(x, E))
            coords = np.array([M.inner(x, G, e) for e in E])
            eta = _tangent(x, -np.tensordot(np.linalg.solve(Lc.T, np.linalg.solve(Lc, coords)), E, axes=1))
        except np.linalg.LinAlgError:  # not positive definite: gradient direction
            eta = -t_grad * G
        slope = M.inner(x, G, eta)
        s = 1.0
        for _ in range(60):
            try:
                y = M.exp(x, s * eta)
                gy = g(y)
            except ValueError:  # the trial point leaves float64's model (a Newton step of a flat Hessian)
                s *= 0.5
                continue
            if gy <= gx + 1e-4 * s * slope:
                break
            if abs(gy - gx) <= 1e-13 * (abs(gx) + 1e-300) and M.norm(y, grad(y)) < gn:
                break  # below the rounding level of g the Armijo test is blind
            s *= 0.5
        else:  # no acceptable step: rounding floor reached
            break
        x, gx = y, gy
    far = min(M.dist(x, y) for y in Y)
    raise ValueError(f"lorentz_weighted_mean: gradient norm {gn:.3e} after {k} iterations, tolerance {tol:.1e} not reached "
                     f"(last iterate at distance {far:.3g} from the nearest point, x_0 = {x[0]:.3g}; with negative weights "
                     f"sum|a_k| / sum a_k = {np.abs(a).sum() / a.sum():.3g} and the minimiser can lie far out, where float64 "
                     "cannot resolve the gradient, or in a long curved valley)")


class HyperbolicStructuredPrediction(FederatedProblem):
    """Problem (6.3) of Huang et al. (2024) for one test feature ``w``.

    Domain: finite real features, embeddings that pass the Lorentz point check (x_0 <= 2^500),
    gamma and v_bar positive floats with a representable kernel width, kernel-ridge weights that are
    finite; every loss and gradient is finite or the method raises ``ValueError``.

    Parameters
    ----------
    W : sequence of arrays, agent i of shape (N_i, r): the features w_ij.
    Y : sequence of arrays, agent i of shape (N_i, d + 1): the embeddings y_ij in H^d.
    w : array (r,): the test feature.
    gamma : ridge parameter gamma > 0.
    v_bar : kernel width > 0.
    kernel : "gaussian" (default, 2 v^2) or "printed" ((2 v)^2), see the module docstring.
    """

    def __init__(self, W, Y, w, gamma: float, v_bar: float, kernel: str = "gaussian"):
        where = "HyperbolicStructuredPrediction"
        W = agent_arrays(where, "W", W)
        Y = agent_arrays(where, "Y", Y)
        if W[0].ndim != 2 or Y[0].ndim != 2:
            raise ValueError(f"{where}: W and Y must hold 2-D per-agent arrays (got ndim {W[0].ndim} and {Y[0].ndim})")
        if len(W) != len(Y):
            raise ValueError(f"{where}: W has {len(W)} agents but Y has {len(Y)}")
        for i, (Wi, Yi) in enumerate(zip(W, Y)):
            if Wi.shape[0] != Yi.shape[0]:
                raise ValueError(f"{where}: agent {i} has {Wi.shape[0]} features but {Yi.shape[0]} embeddings")
        if Y[0].shape[1] < 2:
            raise ValueError(f"{where}: embeddings need d + 1 >= 2 coordinates (got {Y[0].shape[1]})")
        gamma = positive_float(where, "gamma", gamma)
        v_bar = positive_float(where, "v_bar", v_bar)
        if kernel not in ("gaussian", "printed"):
            raise ValueError(f"{where}: kernel must be 'gaussian' or 'printed' (got {kernel!r})")
        width = 2.0 * v_bar * v_bar if kernel == "gaussian" else (2.0 * v_bar) * (2.0 * v_bar)
        if not 0.0 < width < math.inf:
            raise ValueError(f"{where}: v_bar = {v_bar!r} makes the kernel width ({width!r}) under- or overflow float64")
        self.r = W[0].shape[1]
        self.w = as_float_array(where, "w", w, (self.r,))
        self.d = Y[0].shape[1] - 1
        self.manifold = Lorentz(self.d)
        for i, Yi in enumerate(Y):
            for j in range(Yi.shape[0]):
                self.manifold.check_point(Yi[j], where=f"{where}: Y[{i}][{j}]")
        self.W, self.Y = W, Y
        self.gamma, self.v_bar, self.kernel = float(gamma), float(v_bar), kernel
        self.N_i = [int(y.shape[0]) for y in Y]
        self.p = agent_weights(self.N_i, "samples")
        #: alpha[i][j] = alpha_ij(w), one kernel-ridge solve per agent (Huang et al. (2024), Section 6.3)
        try:
            with np.errstate(over="ignore", invalid="ignore", under="ignore"):
                self.alpha = [krr_weights(W[i], self.w, self.gamma, self.v_bar, kernel) for i in range(self.N)]
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"{where}: K_i + gamma I is singular in floating point ({exc}); increase gamma") from None
        for i, a in enumerate(self.alpha):
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{where}: the kernel-ridge weights alpha_{i} are not finite (K_i + gamma I is "
                                 f"numerically singular at gamma = {self.gamma!r}); increase gamma")

    # ------------------------------------------------------------------ per sample
    def _f_ij(self, x, i, j):
        """f_ij(x) = alpha_ij(w) dist^2(x, y_ij)."""
        return float(self.alpha[i][j]) * self.manifold.dist(x, self.Y[i][j]) ** 2

    def _rgrad_ij(self, x, i, j):
        """grad f_ij(x) = -2 alpha_ij(w) Log_x(y_ij). (Huang et al. (2024) section 6.3 prints +2 alpha Exp_x^{-1}(y_ij):
        the sign is wrong; that vector points towards y_ij, an ascent direction of dist^2 when alpha > 0.)"""
        return -2.0 * float(self.alpha[i][j]) * self.manifold.log(x, self.Y[i][j])

    def _proj(self, x, g):
        """The mean of per-sample gradients into T_x by :func:`_tangent` (not Lorentz.proj, which at a far
        point cancels terms of size x_0^2 ||g||: at distance 20 from the data it returned an agent gradient
        of norm 55 where ||grad f_i|| <= mean_j 2 |alpha_ij| dist = 8.6). A non-finite g (outside the
        domain) stays non-finite and is refused by :func:`~prirfed.reference.problems.base.public`."""
        return _tangent(x, g)

    def _egrad_ij(self, x, i, j):
        """Euclidean gradient of the extension alpha acosh(-<x, y>_L)^2 on R^{d+1}:
        -2 alpha (t / sinh t) J y, t = dist(x, y), J = diag(-1, 1, ..., 1)."""
        y = self.Y[i][j]
        t = self.manifold.dist(x, y)
        Jy = y.copy()
        Jy[0] = -Jy[0]
        return -2.0 * float(self.alpha[i][j]) * _d_over_sinh(t) * Jy

    # ------------------------------------------------------------------ optimum
    def optimum(self, tol: float = 1e-10, max_iter: int = 200, return_info: bool = False):
        """The prediction h(w) = argmin f by a damped Riemannian Newton method on H^d
        (:func:`lorentz_weighted_mean` with weights p_i alpha_ij / N_i). Raises ``ValueError`` when
        sum_ij p_i alpha_ij / N_i <= 0 or when ``tol`` is not reached."""
        Y = np.concatenate(self.Y)
        a = np.concatenate([self.p[i] * self.alpha[i] / self.N_i[i] for i in range(self.N)])
        try:
            x, info = lorentz_weighted_mean(self.manifold, Y, a, tol=tol, max_iter=max_iter)
        except ValueError as exc:
            raise ValueError(f"HyperbolicStructuredPrediction.optimum: {exc}") from None
        return (x, info) if return_info else x

    # ------------------------------------------------------------------ constants
    @property
    def alpha_max(self) -> float:
        """``max_ij |alpha_ij(w)|``."""
        return max(float(np.max(np.abs(a))) for a in self.alpha)

    @staticmethod
    def _M(where, M) -> float:
        return check_real(f"HyperbolicStructuredPrediction.{where}", "the distance bound M", M, allow_zero=True)

    def L_f(self, M) -> float:
        """L_f = 2 max|alpha| M for x with dist(x, y_ij) <= M (derived in Huang et al. (2024) section 6.3; correct)."""
        return 2.0 * self.alpha_max * self._M("L_f", M)

    def L_g(self, M) -> float:
        """L_g = 2 max|alpha| zeta(-1, M) = 2 max|alpha| M / tanh(M): the Hessian of dist^2(., y) has
        eigenvalues 2 (radial) and 2 t coth t (t = dist <= M); AOBL20 Lemma 2 bounds the Hessian
        of (1/2) dist^2 by zeta, hence the factor 2 that Huang et al. (2024) drops (lead 6)."""
        return 2.0 * self.alpha_max * zeta(-1.0, self._M("L_g", M))

    def paper_L_f(self, M) -> float:
        """L_f as set in Huang et al.'s (2024) experiment (section 6.3, WordNet): max|alpha| M, half the value it derives."""
        return self.alpha_max * self._M("paper_L_f", M)

    def paper_L_g(self, M) -> float:
        """L_g as stated in Huang et al. (2024) section 6.3: max|alpha| M / tanh(M) (half the true bound)."""
        return self.alpha_max * zeta(-1.0, self._M("paper_L_g", M))
