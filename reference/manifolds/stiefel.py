"""The compact Stiefel manifold St(n, p) = {X in R^{n x p}: X^T X = I_p} with the Euclidean metric.

Sources: Li and Ma (2023), eq. (3) and Section 5 (federated kPCA on St(d, r)); the slides of
Sutti (2022) (tangent space ``{xi: X^T xi + xi^T X = 0}``, projection
``X skew(X^T xi) + (I - X X^T) xi``, ``dim = np - p(p+1)/2``); Edelman, Arias and Smith (1998)
(EAS), eq. (2.14), for the geodesic; Absil and Malick (2012) and Kaneko, Fiori and Tanaka (2013)
for the polar and QR retractions and their inverses; Zimmermann and Stoye (2024) for the
curvature bounds (``-1/2 <= K <= 1``) and the injectivity radius pi. Every formula is derived in ``proofs_notes/manifold_stiefel.md``.

Notation: ``X`` a point, ``V``/``U``/``xi`` tangent vectors, ``A = X^T V`` (skew),
``Q`` an orthonormal basis of the part of the ambient space orthogonal to span(X) that the
computation needs, ``R = Q^T V``.

Choices made here (see the note):

* ``exp`` evaluates EAS (2.14) in the equivalent, orthogonality-preserving form
  ``Exp_X(V) = [X, Q] expm([[2A, -R^T], [R, 0]]) [I; 0] expm(-A)`` (the block matrix is skew, so
  every factor is orthonormal); the literal (2.14) is kept as :meth:`Stiefel.exp_eas` and the
  tests check both agree. Exponentials of skew matrices come from the Hermitian
  eigendecomposition of iB (numpy ``eigh``), not from scipy.linalg.expm.
* ``log`` has no closed form: damped Gauss-Newton on Exp in the reduced St(p + k, p), k =
  min(p, n - p), with exact Jacobians (Daleckii-Krein Frechet derivative of expm). It raises ``ValueError`` if
  the residual does not reach ``LOG_TOL`` within ``LOG_MAXITER`` iterations, or if the geodesic
  it found is not shorter than the injectivity radius pi (then it is not certified minimizing).
* ``transp`` is the projection vector transport P_Y(V), not parallel transport
  (``exact_transport = False``).
* ``retr``/``inv_retr`` are the polar pair; the QR pair used in Li & Ma's public code is
  :meth:`retr_qr`/:meth:`inv_retr_qr`.

Examples
--------
St(3, 2) has dimension np - p(p+1)/2 = 3 and an orthonormal tangent basis; St(n, 1) is the unit
sphere, where Exp walks great circles:

>>> import numpy as np
>>> from prirfed.reference.manifolds.stiefel import Stiefel
>>> M = Stiefel(3, 2)
>>> X = np.eye(3)[:, :2]
>>> E = M.tangent_basis(X)
>>> M.dim, E.shape
(3, (3, 3, 2))
>>> G = np.array([[M.inner(X, a, b) for b in E] for a in E])
>>> bool(np.allclose(G, np.eye(3), rtol=0, atol=1e-14))
True
>>> V = 0.3 * E[0] - 0.2 * E[2]
>>> bool(np.allclose(M.log(X, M.exp(X, V)), V, rtol=0, atol=1e-12))
True
>>> S = Stiefel(3, 1)
>>> e1, quarter = np.array([[1.0], [0.0], [0.0]]), np.array([[0.0], [np.pi / 2], [0.0]])
>>> np.round(S.exp(e1, quarter), 12) + 0.0
array([[0.],
       [1.],
       [0.]])
>>> M.curvature_bounds, M.exact_transport   # transp is a vector transport, not parallel transport
((-0.5, 1.0), False)
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .base import EXP_MAX_STEP, Manifold, norm2, positive_int

__all__ = ["Stiefel", "LOG_TOL", "LOG_MAXITER"]

#: Newton on Exp stops successfully when ||Exp_X(V) - Y||_F <= LOG_TOL.
LOG_TOL = 1e-11
#: Iteration cap of the Newton iteration for the logarithm.
LOG_MAXITER = 60
#: The Newton loop keeps iterating while the residual exceeds this (polishing below LOG_TOL).
LOG_STOP = 1e-14


def sym(M: np.ndarray) -> np.ndarray:
    """sym(M) = (M + M^T)/2."""
    return 0.5 * (M + M.T)


def skew(M: np.ndarray) -> np.ndarray:
    """skew(M) = (M - M^T)/2."""
    return 0.5 * (M - M.T)


def _orth_complement_basis(X: np.ndarray, W: np.ndarray, k: int) -> np.ndarray:
    """k orthonormal columns orthogonal to span(X) whose span contains (I - X X^T) W.

    Householder QR of [X, W]: the first p columns of Q span range(X), the next ones are
    orthogonal to it and span the rest of range([X, W]).
    """
    p = X.shape[1]
    Q = np.linalg.qr(np.hstack([X, W]))[0]
    return Q[:, p:p + k]


def _skew_from_vec(a: np.ndarray, p: int) -> np.ndarray:
    """Skew matrix with a in the strict upper triangle (row-major order)."""
    A = np.zeros((p, p))
    iu = np.triu_indices(p, 1)
    A[iu] = a
    return A - A.T


def _block(A: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The skew block matrix [[2A, -R^T], [R, 0]] of the Euclidean-metric geodesic."""
    p, k = A.shape[0], R.shape[0]
    B = np.zeros((p + k, p + k))
    B[:p, :p] = 2.0 * A
    B[:p, p:] = -R.T
    B[p:, :p] = R
    return B


def skew_eig(B: np.ndarray):
    """Spectral decomposition of a real skew matrix: iB is Hermitian, iB = U diag(lam) U^H,
    so B = U diag(-i lam) U^H (normal, unitarily diagonalisable)."""
    return np.linalg.eigh(1j * B)


def expm_skew(B: np.ndarray, eig=None) -> np.ndarray:
    """exp(B) = U diag(exp(-i lam)) U^H for real skew B (Higham 2008, Functions of Matrices, (1.4)),
    followed by Newton-Schulz steps F <- F (3I - F^T F)/2 (one, and more while the orthogonality
    defect max |F^T F - I| exceeds 16 eps, at most 64).

    The complex product is unitary to rounding, but its imaginary part (zero in exact arithmetic)
    is as large as the eigenvector error, about eps ||B|| / gap; dropping it leaves a real part
    whose orthogonality defect is the square of that (1.4e-7 at ||B|| = 1e12, 0.1 at 1e15, up to 0.99
    at 4e15: the real part of a unitary matrix has singular values sigma in (0, 1]). A
    Newton-Schulz step maps sigma to sigma (3 - sigma^2)/2: about 1.5 sigma while sigma is small, then
    quadratically to 1, so it takes about log_1.5(1/sigma_min) + 6 steps, and changes an orthogonal F
    by O(eps) only. Near the exp domain's end (||V|| = 4e15) sigma_min reached 0.008 and 17 steps
    in 1800 draws; the cap was 12 before, and Exp then refused one such input as off St(n, p)
    (``test_exp_stays_orthonormal_at_steps_up_to_the_exp_domain_limit``). 64 steps reach 16 eps from
    sigma_min down to about 1e-10."""
    lam, U = skew_eig(B) if eig is None else eig
    F = ((U * np.exp(-1j * lam)) @ U.conj().T).real
    eye = np.eye(F.shape[0])
    for _ in range(64):
        F = 0.5 * F @ (3.0 * eye - F.T @ F)
        if float(np.max(np.abs(F.T @ F - eye))) <= 16.0 * np.finfo(float).eps:
            break
    return F


def frechet_expm_skew(eig, E: np.ndarray) -> np.ndarray:
    """Frechet derivative L(B, E) = d/dt exp(B + tE)|_0 at skew B = U diag(mu) U^H, mu = -i lam
    (Daleckii-Krein): L = U (F o (U^H E U)) U^H with F_jk = (e^mu_j - e^mu_k)/(mu_j - mu_k),
    evaluated without cancellation as F_jk = exp(-i (lam_j + lam_k)/2) sinc((lam_j - lam_k)/2)."""
    lam, U = eig
    half = 0.5 * (lam[:, None] - lam[None, :])
    F = np.exp(-0.5j * (lam[:, None] + lam[None, :])) * np.sinc(half / np.pi)
    return (U @ (F * (U.conj().T @ E @ U)) @ U.conj().T).real


def reduced_exp(A: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Exp on St(p + k, p) at [I; 0] of [A; R]: expm([[2A, -R^T], [R, 0]]) [I; 0] expm(-A).

    The geodesic (2.14) of EAS 1998 rewritten with [X, V] = [X, Q] [[I, A], [0, R]] (see the
    note, section "Exponential map"). Both matrices are skew: exponentials by their spectral
    decomposition (exactly orthogonal up to rounding; no scipy.linalg.expm).
    """
    p = A.shape[0]
    return expm_skew(_block(A, R))[:, :p] @ expm_skew(-A)


def _reduced_exp_and_jacobian(A, R):
    """reduced_exp(A, R) and its Jacobian w.r.t. (strict upper triangle of A, entries of R)."""
    p, k = A.shape[0], R.shape[0]
    B = _block(A, R)
    eB, eA = skew_eig(B), skew_eig(-A)
    EB = expm_skew(B, eB)
    EA = expm_skew(-A, eA)
    F = EB[:, :p] @ EA
    cols = []
    for i, j in zip(*np.triu_indices(p, 1)):
        E = np.zeros((p, p))
        E[i, j], E[j, i] = 1.0, -1.0
        dB = _block(E, np.zeros((k, p)))
        LB = frechet_expm_skew(eB, dB)
        LA = frechet_expm_skew(eA, -E)
        cols.append((LB[:, :p] @ EA + EB[:, :p] @ LA).ravel())
    for s in range(k):
        for t in range(p):
            G = np.zeros((k, p))
            G[s, t] = 1.0
            dB = _block(np.zeros((p, p)), G)
            LB = frechet_expm_skew(eB, dB)
            cols.append((LB[:, :p] @ EA).ravel())
    J = np.array(cols).T if cols else np.zeros((F.size, 0))
    return F, J


def reduced_log(Z: np.ndarray, p: int):
    """Solve reduced_exp(A, R) = Z for skew A (p x p) and R (k x p) by damped Gauss-Newton.

    Returns (A, R, residual, iterations). Initial guess: A = skew(Z_top), R = Z_bottom (the
    first-order expansion Exp_{[I;0]}([A; R]) = [I + A; R] + O(||(A, R)||^2)). Each step solves
    the least-squares Newton system J d = -F and halves the step until the residual decreases.
    """
    k = Z.shape[0] - p
    iu = np.triu_indices(p, 1)
    a = skew(Z[:p])[iu]
    r = Z[p:].ravel().copy()

    def unpack(a, r):
        return _skew_from_vec(a, p), r.reshape(k, p)

    F = reduced_exp(*unpack(a, r)) - Z
    res = float(np.linalg.norm(F))
    it = 0
    while res > LOG_STOP and it < LOG_MAXITER:
        it += 1
        F, J = _reduced_exp_and_jacobian(*unpack(a, r))
        F = F - Z
        d = np.linalg.lstsq(J, -F.ravel(), rcond=None)[0]
        na = a.size
        t, improved = 1.0, False
        for _ in range(30):
            a_new, r_new = a + t * d[:na], r + t * d[na:]
            res_new = float(np.linalg.norm(reduced_exp(*unpack(a_new, r_new)) - Z))
            if res_new < res:
                improved = True
                break
            t *= 0.5
        if not improved:
            break
        a, r, res = a_new, r_new, res_new
    A, R = unpack(a, r)
    return A, R, res, it


def gauss_sectional_curvature(X: np.ndarray, U: np.ndarray, V: np.ndarray) -> float:
    """Sectional curvature of span(U, V) at X by the Gauss formula for St(n,p) in R^{n x p}.

    K = (<II(U,U), II(V,V)> - ||II(U,V)||^2) / (||U||^2 ||V||^2 - <U,V>^2), with the second
    fundamental form II(U, V) = -X sym(U^T V) (derived in the note), so with X^T X = I:
    K = (tr(U^T U V^T V) - ||sym(U^T V)||_F^2) / (||U||^2 ||V||^2 - <U,V>^2).
    """
    num = np.trace(U.T @ U @ V.T @ V) - np.sum(sym(U.T @ V) ** 2)
    den = np.sum(U * U) * np.sum(V * V) - np.sum(U * V) ** 2
    if not den > 0:
        raise ValueError(f"gauss_sectional_curvature: U and V are linearly dependent (||U^V||^2 = {den:.3e})")
    return float(num / den)


def _pow2_at_least(m: float) -> float:
    """2^e with 2^(e-1) <= m < 2^e for m > 1/2 (finite; capped at 2^1023), else 1: a power of two
    (>= m below 2^1023), so dividing by it is exact in float64."""
    return math.ldexp(1.0, min(math.frexp(m)[1], 1023)) if m > 0.5 else 1.0


class Stiefel(Manifold):
    r"""The compact Stiefel manifold :math:`\mathrm{St}(n, p) = \{X \in \mathbb R^{n\times p} : X^\top X = I_p\}` with :math:`\langle U, V\rangle_X = \operatorname{tr}(U^\top V)`; Li and Ma (2023), eq. (3); Edelman, Arias and Smith (1998).

    ``dim = np - p(p+1)/2``, ``ambient_shape = (n, p)``, ``exact_transport = False`` (the transport
    is the projection :math:`P_Y(V)`, see the module). Curvature bounds :math:`[-1/2, 1]`.


    Domain (``proofs_notes/manifold_stiefel.md``): points are finite real n x p arrays
    with ``max |X^T X - I| <= 1e-10 + 64 n eps``; tangent vectors finite arrays with
    ``max |sym(X^T V)| <= that * (1 + ||V||_F)``. ``exp`` needs ``||V||_F < EXP_MAX_STEP = 2^52``
    (beyond, no float64 input determines the endpoint); the retractions accept every tangent
    vector whose result is representable (they are evaluated scale-invariantly). Every result that
    is a point is checked to lie on St(n, p) within the point tolerance, and every result to be
    finite; otherwise ``ValueError``.

    Parameters
    ----------
    n : int
        Number of rows, greater than ``p``.
    p : int
        Number of columns, at least 1.
    validate : bool, optional
        Check every input (default True).

    Raises
    ------
    ValueError
        If ``n`` or ``p`` is not a positive integer, or ``n <= p`` (:math:`\mathrm{St}(p, p) = O(p)`
        is disconnected).
    """

    exact_transport = False

    def __init__(self, n: int, p: int, validate: bool = True):
        super().__init__(validate)
        n, p = positive_int("Stiefel", "n", n), positive_int("Stiefel", "p", p)
        if n <= p:
            raise ValueError(
                f"Stiefel: need n > p (got n={n}, p={p}); St(p, p) = O(p) is disconnected, "
                "so its distance is not finite between the two components")
        self.n, self.p = n, p
        self.k = min(p, n - p)
        self.dim = n * p - p * (p + 1) // 2
        self.ambient_shape = (n, p)
        # p = 1: the unit sphere S^{n-1} (K = 1). p >= 2: Zimmermann & Stoye 2024,
        # -1/2 <= K <= 1 for the Euclidean metric (see the note; the Gauss formula gives the
        # safe bounds -1 <= K <= 1 in two lines and the tests sample K).
        self.curvature_bounds = (1.0, 1.0) if p == 1 else (-0.5, 1.0)
        # defect tolerances: 1e-10 plus rounding of an n-term dot product
        self._atol = 1e-10 + 64.0 * n * np.finfo(float).eps

    def __repr__(self) -> str:
        return f"Stiefel({self.n}, {self.p})"

    # ------------------------------------------------------------------ defects
    def _point_defect(self, x):
        with np.errstate(over="ignore", invalid="ignore"):
            d = float(np.max(np.abs(x.T @ x - np.eye(self.p))))
        if not d <= self._atol:
            return f"X^T X != I (max |X^T X - I| = {d:.3e}, tolerance {self._atol:.1e})"
        return None

    def _tangent_defect(self, x, v):
        with np.errstate(over="ignore", invalid="ignore"):
            d = float(np.max(np.abs(sym(x.T @ v))))
        tol = self._atol * (1.0 + norm2(v))
        if not d <= tol:
            return f"not tangent (max |sym(X^T V)| = {d:.3e}, tolerance {tol:.1e})"
        return None

    def _point_or_raise(self, method: str, y: np.ndarray) -> np.ndarray:
        """Refuse to return a result that is not finite or not on St(n, p) within the point tolerance."""
        y = self._out(method, y)
        msg = self._point_defect(y)
        if msg is not None:
            raise ValueError(f"{self._where(method)}: the result is not on St({self.n}, {self.p}): {msg}")
        return y

    # ------------------------------------------------------------------ metric
    def inner(self, x, u, v):
        """<U, V>_X = tr(U^T V) (Euclidean metric, Li and Ma (2023) section 2)."""
        x = self._pt("inner", x)
        u = self._tv("inner", x, u, "u")
        v = self._tv("inner", x, v, "v")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("inner", float(np.sum(u * v)))

    def norm(self, x, u):
        """||U||_X = ||U||_F."""
        x = self._pt("norm", x)
        u = self._tv("norm", x, u, "u")
        return self._out("norm", norm2(u))

    def proj(self, x, w):
        """P_X(W) = W - X sym(X^T W) (Sutti (2022) slides: X skew(X^T W) + (I - X X^T) W)."""
        x = self._pt("proj", x)
        w = self._amb("proj", w)
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("proj", w - x @ sym(x.T @ w))

    def egrad2rgrad(self, x, g):
        """grad f(X) = P_X(nabla f(X)) (Riemannian submanifold; Sutti (2022) slides)."""
        x = self._pt("egrad2rgrad", x)
        g = self._amb("egrad2rgrad", g, "g")
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("egrad2rgrad", g - x @ sym(x.T @ g))

    # ------------------------------------------------------------------ exp / log / dist
    def exp(self, x, v):
        """Exp_X(V) = [X, Q] expm([[2A, -R^T], [R, 0]]) [I; 0] expm(-A), A = X^T V, R = Q^T V.

        Equal to EAS 1998 eq. (2.14) (derivation in the note); every factor is orthonormal.
        Domain: ``||V||_F < 2^52`` (:data:`~prirfed.reference.manifolds.base.EXP_MAX_STEP`); the
        result is checked to lie on St(n, p) (``ValueError`` otherwise).
        """
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        t = norm2(v)
        if not t < EXP_MAX_STEP:
            raise ValueError(f"Stiefel.exp: ||V||_F = {t:.3e} is not below 2^52 = {EXP_MAX_STEP:.2e}: one ulp of "
                             "||V|| is then >= 1, so no float64 input determines where the geodesic ends")
        A = skew(x.T @ v)
        Q = _orth_complement_basis(x, v, self.k)
        R = Q.T @ v
        return self._point_or_raise("exp", np.hstack([x, Q]) @ reduced_exp(A, R))

    def exp_eas(self, x, v):
        """EAS 1998 eq. (2.14) literally: [X, V] expm([[A, -S], [I, A]]) [expm(-A); 0], S = V^T V.

        It loses orthogonality like eps ||V||^2 (the tests compare on that scale); a result off
        St(n, p) beyond the point tolerance raises ``ValueError`` (use :meth:`exp`)."""
        x = self._pt("exp_eas", x)
        v = self._tv("exp_eas", x, v)
        p = self.p
        A = x.T @ v
        S = v.T @ v
        M = np.block([[A, -S], [np.eye(p), A]])
        with np.errstate(over="ignore", invalid="ignore"):
            y = np.hstack([x, v]) @ scipy.linalg.expm(M) @ np.vstack([scipy.linalg.expm(-A), np.zeros((p, p))])
        return self._point_or_raise("exp_eas", y)

    def _log_solve(self, method, x, y):
        Q = _orth_complement_basis(x, y, self.k)
        Z = np.vstack([x.T @ y, Q.T @ y])
        A, R, res, it = reduced_log(Z, self.p)
        if not res <= LOG_TOL:
            raise ValueError(
                f"{self._where(method)}: Newton iteration on Exp did not converge "
                f"(residual ||Exp_x(v) - y||_F = {res:.3e} after {it} iterations, tolerance {LOG_TOL:.0e}); "
                "y is probably too far from x (the method is certified below the injectivity radius pi)")
        length = math.sqrt(float(np.sum(A * A) + np.sum(R * R)))
        if not length < math.pi:
            raise ValueError(
                f"{self._where(method)}: the geodesic found has length {length:.6f} >= injectivity radius pi; "
                "it is not certified to be minimizing")
        return x @ A + Q @ R

    def log(self, x, y):
        """Log_X(Y): Newton on Exp (no closed form, Zimmermann & Hueper 2022); raises if not converged."""
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        return self._out("log", self._log_solve("log", x, y))

    def dist(self, x, y):
        """dist(X, Y) = ||Log_X(Y)||_F (raises where log does)."""
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return float(np.linalg.norm(self._log_solve("dist", x, y)))

    def transp(self, x, y, v):
        """Projection vector transport T_{X->Y}(V) = P_Y(V) (not parallel transport)."""
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        with np.errstate(over="ignore", invalid="ignore"):
            return self._out("transp", v - y @ sym(y.T @ v))

    # ------------------------------------------------------------------ retractions
    def _polar(self, method, x, v):
        """(X + V)(I + V^T V)^{-1/2}, evaluated as W (I/m^2 + (V/m)^T (V/m))^{-1/2} with W = (X + V)/m,
        m the smallest power of two >= max(1, max |V|): the same numbers where the printed form
        does not overflow (scaling by a power of two is exact), and no overflow of V^T V beyond
        (the printed form returned NaN for ||V|| >= 1e154)."""
        m = _pow2_at_least(float(np.max(np.abs(v))) if v.size else 0.0)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            vs = v / m
            w, E = np.linalg.eigh(np.eye(self.p) / (m * m) + vs.T @ vs)
            y = ((x + v) / m) @ (E * (1.0 / np.sqrt(w))) @ E.T
        if not np.all(np.isfinite(y)):
            raise ValueError(f"{self._where(method)}: (I + V^T V)^(-1/2) is not representable in float64 "
                             f"(max |V| = {float(np.max(np.abs(v))):.3e}; its eigenvalues span more than the float64 range)")
        return self._point_or_raise(method, y)

    def retr_polar(self, x, v):
        """Polar retraction R_X(V) = (X + V)(I + V^T V)^{-1/2} (Absil & Malick 2012).

        Evaluated scale-invariantly (see ``_polar``); a result off St(n, p) (for a long,
        rank-deficient V the inverse square root loses orthogonality like eps ||V||) raises."""
        x = self._pt("retr_polar", x)
        v = self._tv("retr_polar", x, v)
        return self._polar("retr_polar", x, v)

    def inv_retr_polar(self, x, y):
        """Inverse polar retraction: V = Y P - X with P solving (X^T Y) P + P (X^T Y)^T = 2 I.

        P = (I + V^T V)^{1/2} must be symmetric positive definite (Kaneko, Fiori & Tanaka 2013);
        raises if the Lyapunov equation is singular or its solution is not positive definite.
        """
        return self._inv_polar("inv_retr_polar", x, y)

    def _inv_polar(self, method, x, y):
        x = self._pt(method, x)
        y = self._pt(method, y, "y")
        where = self._where(method)
        p = self.p
        M = x.T @ y
        # sep(M, -M^T) = sigma_min of the Kronecker sum I (x) M + M (x) I: the equation is
        # uniquely solvable iff no lambda_i(M) + lambda_j(M) = 0
        sep = float(np.linalg.svd(np.kron(np.eye(p), M) + np.kron(M, np.eye(p)), compute_uv=False)[-1])
        if not sep > 1e-12:
            raise ValueError(f"{where}: the Lyapunov equation M P + P M^T = 2I, M = X^T Y, is singular "
                             f"(sep = sigma_min(I kron M + M kron I) = {sep:.3e}, tolerance 1e-12)")
        P = scipy.linalg.solve_continuous_lyapunov(M, 2.0 * np.eye(p))
        P = sym(P)
        lmin = float(np.min(np.linalg.eigvalsh(P)))
        if not lmin > 0:
            raise ValueError(f"{where}: y is not a polar retraction of a tangent vector at x "
                             f"(P = (I + V^T V)^(1/2) is not positive definite: lambda_min(P) = {lmin:.3e})")
        return self._out(method, y @ P - x)

    def retr_qr(self, x, v):
        """QR retraction R_X(V) = qf(X + V), signs fixed so that diag(R) > 0."""
        x = self._pt("retr_qr", x)
        v = self._tv("retr_qr", x, v)
        a = x + v
        # qf is invariant under scaling by a power of two (exact); scaling keeps LAPACK's
        # reflectors finite for entries near the float64 range
        with np.errstate(over="ignore", invalid="ignore"):
            Q, Rf = np.linalg.qr(a / _pow2_at_least(float(np.max(np.abs(a)))))
        return self._point_or_raise("retr_qr", Q * np.where(np.diag(Rf) < 0, -1.0, 1.0))

    def inv_retr_qr(self, x, y):
        """Inverse QR retraction: V = Y R - X with R upper triangular, diag(R) > 0, solving
        (X^T Y) R + R^T (X^T Y)^T = 2 I column by column (Kaneko, Fiori & Tanaka 2013)."""
        x = self._pt("inv_retr_qr", x)
        y = self._pt("inv_retr_qr", y, "y")
        where = self._where("inv_retr_qr")
        p = self.p
        M = x.T @ y
        Rt = np.zeros((p, p))
        for j in range(p):
            Mj = M[:j + 1, :j + 1]
            smin = float(np.linalg.svd(Mj, compute_uv=False)[-1])
            if not smin > 1e-12:
                raise ValueError(f"{where}: the leading {j + 1}x{j + 1} block of X^T Y is singular "
                                 f"(sigma_min = {smin:.3e}); y is not a QR retraction of a tangent vector at x")
            b = np.zeros(j + 1)
            b[j] = 1.0  # (M R)_jj = 1
            for i in range(j):  # (M R)_ij = -(M R)_ji, column i < j already known
                b[i] = -M[j, :i + 1] @ Rt[:i + 1, i]
            Rt[:j + 1, j] = np.linalg.solve(Mj, b)
            if not Rt[j, j] > 0:
                raise ValueError(f"{where}: y is not a QR retraction of a tangent vector at x "
                                 f"(R[{j},{j}] = {Rt[j, j]:.3e} is not positive)")
        return self._out("inv_retr_qr", y @ Rt - x)

    def retr(self, x, v):
        """The retraction of this class: the polar retraction (see the note)."""
        x = self._pt("retr", x)
        v = self._tv("retr", x, v)
        return self._polar("retr", x, v)

    def inv_retr(self, x, y):
        """Inverse of :meth:`retr` (inverse polar retraction)."""
        return self._inv_polar("inv_retr", x, y)

    # ------------------------------------------------------------------ basis and draws
    def orth_complement(self, x) -> np.ndarray:
        """X_perp: the last n - p columns of the complete Householder QR of X."""
        x = self._pt("orth_complement", x)
        return np.linalg.qr(x, mode="complete")[0][:, self.p:]

    def tangent_basis(self, x):
        """Orthonormal basis of T_X: X (e_i e_j^T - e_j e_i^T)/sqrt(2) for i < j (row-major),
        then X_perp e_k e_l^T for k < n - p, l < p (row-major); X_perp from the complete QR of X."""
        x = self._pt("tangent_basis", x)
        n, p = self.n, self.p
        Xp = np.linalg.qr(x, mode="complete")[0][:, p:]
        E = np.zeros((self.dim, n, p))
        m = 0
        for i in range(p):
            for j in range(i + 1, p):
                E[m][:, j] = x[:, i] / math.sqrt(2.0)
                E[m][:, i] = -x[:, j] / math.sqrt(2.0)
                m += 1
        for kk in range(n - p):
            for ll in range(p):
                E[m][:, ll] = Xp[:, kk]
                m += 1
        return E

    def random_point(self, rng):
        """Haar-distributed point: qf(G), G an n x p standard Gaussian matrix, diag(R) > 0."""
        G = rng.standard_normal((self.n, self.p))
        Q, Rf = np.linalg.qr(G)
        return Q * np.where(np.diag(Rf) < 0, -1.0, 1.0)

    def random_tangent(self, x, rng):
        """sum_k z_k e_k, z ~ N(0, I_dim), in the basis of :meth:`tangent_basis` (same draws in
        the same order), assembled as X Omega + X_perp K without forming the basis."""
        x = self._pt("random_tangent", x)
        n, p = self.n, self.p
        z = rng.standard_normal(self.dim)
        ns = p * (p - 1) // 2
        Om = _skew_from_vec(z[:ns], p) / math.sqrt(2.0)  # sum_{i<j} z_ij (e_i e_j^T - e_j e_i^T)/sqrt 2
        K = z[ns:].reshape(n - p, p)
        Xp = np.linalg.qr(x, mode="complete")[0][:, p:]
        return x @ Om + Xp @ K

    def injectivity_radius(self, x=None) -> float:
        """pi for every n > p (Zimmermann & Stoye 2024; p = 1 is the unit sphere)."""
        return math.pi
