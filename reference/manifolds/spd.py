"""SPD(n): symmetric positive definite n x n matrices with the affine-invariant metric.

Sources: Huang et al. (2024) section 6.2 (metric, tangent space, Exp, the Frechet-mean gradient), Han et al. (2024) section 5.2
(the same formulas, Riemannian gradient ``W grad F W``), Bhatia, *Positive Definite Matrices*
(2007) ch. 6, Pennec et al. (2006). Derivations, the test checking each formula and the errata
of the papers are in ``proofs_notes/manifold_spd.md``.

Numerics:

- one ``eigh`` of X gives both X^{1/2} and X^{-1/2};
- functions of symmetric matrices (expm, logm, sqrtm) go through ``eigh`` of a symmetrised
  argument, and every returned matrix is symmetrised;
- Log, dist and the transport work with the *difference* M - I = X^{-1/2} (Y - X) X^{-1/2}
  and ``log1p``, so that nearby points keep full relative accuracy (the eigenvalues of M are
  1 + nu with nu tiny, and ``log(fl(1 + nu))`` would lose all digits of nu below 1e-16); when
  all generalised eigenvalues are below 1/2 the direct M is used (see ``_generalised_eigh``);
- tolerances of the checks scale with the input (relative symmetry defect).

Examples
--------
At the identity the affine-invariant Log is the matrix logarithm and the distance is the
Frobenius norm of log Y; congruence ``X -> A X A^T`` is an isometry:

>>> import numpy as np
>>> from prirfed.reference.manifolds.spd import SPD
>>> M = SPD(2)
>>> I, Y = np.eye(2), np.diag([np.e, np.exp(-2.0)])
>>> float(M.dist(I, Y))                     # ||diag(1, -2)||_F = sqrt(5)
2.2360679775
>>> np.round(M.log(I, Y), 12) + 0.0         # logm(Y)
array([[ 1.,  0.],
       [ 0., -2.]])
>>> A = np.array([[2.0, 1.0], [0.0, 1.0]])  # any invertible A
>>> bool(np.isclose(M.dist(A @ A.T, A @ Y @ A.T), np.sqrt(5.0), rtol=1e-12))
True
>>> bool(np.allclose(M.exp(I, M.log(I, Y)), Y, rtol=1e-14))
True
>>> M.dim, M.curvature_bounds               # n(n+1)/2; K in [-1/2, 0] for n >= 2
(3, (-0.5, 0.0))
"""

from __future__ import annotations

import math

import numpy as np

from .base import Manifold, norm2, positive_int

__all__ = ["SPD", "sym", "sqrtm_and_invsqrtm", "spd_random_point"]

SYMMETRY_RTOL = 1e-10  # relative symmetry defect accepted by check_point / check_tangent


def sym(A: np.ndarray) -> np.ndarray:
    r"""Symmetric part :math:`\operatorname{sym}(A) = (A + A^\top)/2`, the orthogonal projection onto symmetric matrices (Bhatia (2007), Chapter 6).

    Parameters
    ----------
    A : numpy.ndarray
        A square matrix.

    Returns
    -------
    numpy.ndarray
        :math:`(A + A^\top)/2`, evaluated as :math:`A/2 + A^\top/2` (the same numbers, halving
        is exact) without overflow of :math:`A + A^\top`.
    """
    return 0.5 * A + 0.5 * A.T


def _pow2_scale(m: float) -> float:
    """2^k with 2^k <= m < 2^(k+1), for 0 < m < inf: the exact scale by which the eigen-solvers
    divide a matrix whose largest entry is m (LAPACK does not converge on entries near the float64
    range). 2^(k+1) > m was used before and overflowed ``math.ldexp`` once m >= 2^1023 (an
    ``OverflowError`` from ``check_point``; found by the fuzz suite)."""
    return math.ldexp(1.0, math.frexp(m)[1] - 1)


def _eigh(A: np.ndarray):
    """eigh of sym(A), computed on A / 2^k with 2^k near max |A| and the eigenvalues scaled back
    (exact): LAPACK does not converge on entries near the float64 range (found by the fuzz suite)."""
    m = float(np.max(np.abs(A))) if A.size else 0.0
    if 0.0 < m < math.inf:
        f = _pow2_scale(m)
        w, Q = np.linalg.eigh(sym(A / f))
        with np.errstate(over="ignore"):  # an eigenvalue beyond float64: inf, which the callers refuse
            return w * f, Q
    return np.linalg.eigh(sym(A))


def sqrtm_and_invsqrtm(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`X^{1/2}` and :math:`X^{-1/2}` from one eigendecomposition :math:`X = Q\,\mathrm{diag}(w)\,Q^\top` (Bhatia (2007), Chapter 6).

    :math:`X^{1/2} = Q\,\mathrm{diag}(\sqrt w)\,Q^\top`, :math:`X^{-1/2} = Q\,\mathrm{diag}(1/\sqrt w)\,Q^\top`,
    both symmetrised.

    The decomposition is of :math:`X / 4^j` with :math:`4^j \le \max|X_{ik}| < 4^{j+1}` (exact), and
    the square roots are scaled back by :math:`2^{\pm j}` after the products (exact), so
    :math:`(4^j X)^{1/2} = 2^j X^{1/2}` holds bit for bit. Scaling the eigenvalues back *before* the
    square root, as before, rounded them into the subnormals for entries below about 1e-308 and
    lost 1e-5 relative of :math:`X^{1/2}` at entries of 1e-319, and it overflowed to inf for
    eigenvalues beyond the float64 range whose square roots are finite
    (``test_sqrtm_is_exactly_homogeneous_under_powers_of_four``).

    Parameters
    ----------
    X : numpy.ndarray
        A symmetric positive definite matrix (not checked: the callers have checked it).

    Returns
    -------
    X_half : numpy.ndarray
        :math:`X^{1/2}`.
    X_inv_half : numpy.ndarray
        :math:`X^{-1/2}`.
    """
    m = float(np.max(np.abs(X))) if X.size else 0.0
    j = (math.frexp(m)[1] - 1) // 2 if 0.0 < m < math.inf else 0  # 4^j <= m < 4^(j+1)
    w, Q = _eigh(np.ldexp(X, -2 * j))
    r = np.sqrt(w)
    X_half = np.ldexp(sym((Q * r) @ Q.T), j)
    X_minus_half = np.ldexp(sym((Q / r) @ Q.T), -j)
    return X_half, X_minus_half


def scaled_congruence(L: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, int]:
    r"""(A, k) with :math:`L U L = 2^k A` and no overflow in forming A: the metric's congruence
    :math:`X^{-1/2} U X^{-1/2}` of :meth:`SPD.inner` and :meth:`SPD.norm` at every scale.

    Helper, not a paper formula. :math:`L = 2^a \hat L`, :math:`U = 2^b \hat U` with the largest
    entries of :math:`\hat L, \hat U` in [1, 2) (:func:`_pow2_scale`: exact), so the entries of
    :math:`A = \hat L \hat U \hat L` are at most :math:`8 n^2` and :math:`k = 2a + b`. Computing
    :math:`L U L` directly overflowed in a partial sum for :math:`\|U\|_F` near 1.7e308 while
    :math:`\|U\|_X` was 1.8e307, and the twins (different summation orders) then disagreed on
    whether the norm overflows (found by the fuzz suite; ``proofs_notes/manifold_spd.md``). The
    scaling by powers of two is exact, so in the normal range A 2^k is bit-identical to L U L.

    Parameters
    ----------
    L : numpy.ndarray
        A symmetric matrix with finite, not all zero entries (:math:`X^{-1/2}`).
    U : numpy.ndarray
        A finite symmetric matrix.

    Returns
    -------
    A : numpy.ndarray
        :math:`\hat L \hat U \hat L` (zero if U is zero).
    k : int
        The exponent: :math:`L U L = 2^k A`.
    """
    mu = float(np.max(np.abs(U))) if U.size else 0.0
    if mu == 0.0:
        return np.zeros_like(U), 0
    a = math.frexp(float(np.max(np.abs(L))))[1] - 1
    b = math.frexp(mu)[1] - 1
    Lh = np.ldexp(L, -a)
    return Lh @ np.ldexp(U, -b) @ Lh, 2 * a + b


def _congruence_eigh(X_minus_half: np.ndarray, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """eigh of sym(X^{-1/2} D X^{-1/2}): eigenvalues (ascending) and orthonormal eigenvectors."""
    return _eigh(X_minus_half @ D @ X_minus_half)


def spd_random_point(n: int, rng: np.random.Generator, scale: float = 0.5) -> np.ndarray:
    r"""A random SPD matrix :math:`\exp(S)`, :math:`S = \text{scale}\cdot\operatorname{sym}(G)` with :math:`G` an :math:`n\times n` standard Gaussian matrix.

    Helper, not a paper formula: test and example data.

    The condition number is :math:`\exp(\text{scale}\cdot\text{spread of the eigenvalues of }\operatorname{sym}(G))`,
    about :math:`e^{2.1}` for :math:`n = 9` and scale 0.5.

    Parameters
    ----------
    n : int
        Matrix size.
    rng : numpy.random.Generator
        The caller's random generator (one call ``standard_normal((n, n))``).
    scale : float, optional
        Spread of the log-eigenvalues (default 0.5).

    Returns
    -------
    numpy.ndarray
        An SPD matrix, shape ``(n, n)``.
    """
    G = rng.standard_normal((n, n))
    s, P = np.linalg.eigh(scale * sym(G))
    C = P * np.exp(0.5 * s)
    return sym(C @ C.T)


EXP_ARG_MIN = -708.0  # exp(s) is a normal float64 for s above this (exp(-708) = 3.3e-308)


def check_exp_range(where: str, s: np.ndarray) -> None:
    """Refuse an Exp whose result would have a zero (underflowed) eigenvalue: not a point."""
    if s[0] < EXP_ARG_MIN:
        raise ValueError(f"{where}: X^(-1/2) V X^(-1/2) has eigenvalue {s[0]:.3e} < {EXP_ARG_MIN}: Exp_X(V) "
                         "has an eigenvalue that underflows float64 (the result would not be positive definite)")


#: A result of Exp or of the retraction must have lambda_min > PD_MARGIN n eps lambda_max: its
#: smallest eigenvalue above the rounding noise (about n eps lambda_max) of any eigensolver, so that
#: the twins (LAPACK in the reference, Jacobi for n <= 4 in the verified twin) agree on the verdict
#: and check_point accepts the result wherever it is used next. For n = 2: condition number
#: below 3.5e13 (at cond about e^296 the twins disagreed on the sign of lambda_min).
PD_MARGIN = 64.0


def _extreme_eigenvalues(A: np.ndarray) -> tuple[float, float]:
    """(lambda_min, lambda_max) of sym(A), computed on A / 2^k (exact scaling)."""
    m = float(np.max(np.abs(A))) if A.size else 0.0
    if not 0.0 < m < math.inf:
        return (0.0, 0.0) if m == 0.0 else (math.nan, math.nan)
    f = _pow2_scale(m)
    w = np.linalg.eigvalsh(sym(A / f))
    return float(w[0]) * f, float(w[-1]) * f


def _positive_definite_or_raise(where: str, out: np.ndarray, s=None) -> np.ndarray:
    """Refuse a result whose smallest eigenvalue is not above PD_MARGIN n eps lambda_max (see there)."""
    lo, hi = _extreme_eigenvalues(out)
    n = out.shape[0]
    floor = PD_MARGIN * n * np.finfo(float).eps * hi
    if not lo > floor:
        why = ""
        if s is not None:
            why = (f"; X^(-1/2) V X^(-1/2) has eigenvalues in [{s[0]:.4g}, {s[-1]:.4g}], so cond(result) is about "
                   f"cond(X) e^{s[-1] - s[0]:.4g}")
        raise ValueError(f"{where}: the result is not positive definite to working accuracy in float64 (eigenvalues in "
                         f"[{lo:.3e}, {hi:.3e}], lambda_min <= {PD_MARGIN:.0f} n eps lambda_max{why}): its condition "
                         "number is beyond float64")
    return out


def finite_or_raise(where: str, out: np.ndarray) -> np.ndarray:
    """Refuse to return an overflowed (inf/NaN) matrix."""
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{where}: the result overflows float64 (max finite entry "
                         f"{float(np.max(np.abs(out[np.isfinite(out)]), initial=0.0)):.3e}; "
                         f"{int(np.size(out) - np.count_nonzero(np.isfinite(out)))} entries are inf or NaN)")
    return out


def _lambda_min(A: np.ndarray) -> float:
    """Smallest eigenvalue of sym(A) (the quantity check_point tests), computed on A / :func:`_pow2_scale`
    (exact scaling): LAPACK fails to converge on entries near the float64 range."""
    m = float(np.max(np.abs(A))) if A.size else 0.0
    if not 0.0 < m < math.inf:
        return float(np.linalg.eigvalsh(sym(A))[0]) if m == 0.0 else math.nan
    s = _pow2_scale(m)
    return float(np.linalg.eigvalsh(sym(A / s))[0]) * s


class SPD(Manifold):
    r"""SPD(n) with the affine-invariant metric :math:`\langle U, V\rangle_X = \operatorname{tr}(X^{-1}UX^{-1}V)`; Huang et al. (2024), Section 6.2; Han et al. (2024), Section 5.2.

    ``dim = n(n+1)/2``, ``ambient_shape = (n, n)``. Sectional curvature lies in
    :math:`[-1/2, 0]` for :math:`n \ge 2` (both ends attained); SPD(1) is one-dimensional, hence
    flat: ``curvature_bounds = (0, 0)``. A Hadamard manifold (complete, simply connected,
    non-positively curved), so :math:`\operatorname{Exp}_X` is a global diffeomorphism and the
    injectivity radius is infinite (Bhatia (2007), Chapter 6).

    ``retr`` is the second-order retraction :math:`R_X(V) = X + V + \tfrac12 VX^{-1}V` and
    ``inv_retr`` its inverse on :math:`\{Y : 2Y - X \succ 0\}` (see :meth:`inv_retr`).


    Domain (``proofs_notes/manifold_spd.md``): points are finite real symmetric matrices
    (relative symmetry defect <= 1e-10) whose smallest eigenvalue (``eigvalsh``) is > 0; tangent
    vectors are finite symmetric matrices. Results that are points (``exp``, ``retr``) must pass the
    test with a margin (lambda_min > 64 n eps lambda_max, :data:`PD_MARGIN`), so ``exp``/``retr`` raise
    ``ValueError`` when their result is not positive definite to working accuracy (condition number
    beyond about 1/(64 n eps)), underflows or overflows; every other result is finite or raises.

    Parameters
    ----------
    n : int
        Matrix size, at least 1.
    validate : bool, optional
        Check every input (default True).

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer.
    """

    exact_transport = True

    def __init__(self, n: int, validate: bool = True):
        super().__init__(validate)
        self.n = positive_int("SPD", "matrix size n", n)
        self.dim = self.n * (self.n + 1) // 2
        self.ambient_shape = (self.n, self.n)
        self.curvature_bounds = (-0.5, 0.0) if self.n >= 2 else (0.0, 0.0)

    def __repr__(self) -> str:
        return f"SPD({self.n})"

    # ------------------------------------------------------------------ checks
    def _point_defect(self, x):
        scale = float(np.max(np.abs(x)))
        asym = float(np.max(np.abs(x - x.T)))
        tol = SYMMETRY_RTOL * scale
        if not asym <= tol:
            return (f"matrix is not symmetric (max |X-X^T| = {asym:.3e}, tolerance {tol:.1e} = "
                    f"{SYMMETRY_RTOL:.0e} * max|X|)")
        lam_min = _lambda_min(x)
        if not lam_min > 0.0:
            return f"matrix is not positive definite (smallest eigenvalue {lam_min:.3e} <= 0)"
        return None

    def _tangent_defect(self, x, v):
        scale = float(np.max(np.abs(v))) if v.size else 0.0
        asym = float(np.max(np.abs(v - v.T))) if v.size else 0.0
        tol = SYMMETRY_RTOL * scale
        if not asym <= tol:
            return (f"not a symmetric matrix, so not in T_X SPD (max |V-V^T| = {asym:.3e}, "
                    f"tolerance {tol:.1e} = {SYMMETRY_RTOL:.0e} * max|V|)")
        return None

    # ------------------------------------------------------------------ metric
    def inner(self, x, u, v):
        """<U, V>_X = tr(X^{-1} U X^{-1} V) (Huang et al. (2024) section 6.2), computed as the Frobenius
        product of the symmetric matrices X^{-1/2} U X^{-1/2} and X^{-1/2} V X^{-1/2}, each formed by
        :func:`scaled_congruence` (no intermediate overflow: the result overflows only if the inner
        product itself does)."""
        x = self._pt("inner", x)
        u = self._tv("inner", x, u, "u")
        v = self._tv("inner", x, v, "v")
        _, L = sqrtm_and_invsqrtm(x)
        A, ka = scaled_congruence(L, u)
        B, kb = scaled_congruence(L, v)
        with np.errstate(over="ignore", under="ignore"):
            return self._out("inner", float(np.ldexp(np.sum(A * B), ka + kb)))

    def norm(self, x, u):
        """||U||_X = ||X^{-1/2} U X^{-1/2}||_F (no square root of a rounded difference), with the
        congruence formed by :func:`scaled_congruence` (the result overflows only if the norm itself
        does)."""
        x = self._pt("norm", x)
        u = self._tv("norm", x, u, "u")
        _, L = sqrtm_and_invsqrtm(x)
        A, k = scaled_congruence(L, u)
        with np.errstate(over="ignore", under="ignore"):
            return self._out("norm", float(np.ldexp(norm2(A), k)))

    def proj(self, x, w):
        """Orthogonal projection onto T_X = Sym(n) in the metric at X: sym(W).

        sym is self-adjoint for <.,.>_X: tr(X^{-1} skew X^{-1} S) = 0 for S symmetric."""
        self._pt("proj", x)
        w = self._amb("proj", w)
        return sym(w)  # finite: sym is evaluated as W/2 + W^T/2

    def egrad2rgrad(self, x, g):
        """grad f(X) = X sym(G) X (Han et al. (2024) section 5.2: 'grad F(W) = W nabla F(W) W')."""
        x = self._pt("egrad2rgrad", x)
        g = self._amb("egrad2rgrad", g, "g")
        return finite_or_raise(self._where("egrad2rgrad"), sym(x @ sym(g) @ x))

    # ------------------------------------------------------------------ geodesics
    def exp(self, x, v):
        """Exp_X(V) = X^{1/2} expm(X^{-1/2} V X^{-1/2}) X^{1/2} (Huang et al. (2024) section 6.2).

        With X^{-1/2} V X^{-1/2} = P diag(s) P^T the result is C C^T, C = X^{1/2} P diag(e^{s/2}):
        symmetric and positive definite in exact arithmetic. Raises ValueError when an eigenvalue of
        the result would underflow (s_min < -708), an entry overflows, or the computed result is not
        positive definite (its smallest eigenvalue, as ``check_point`` computes it, is <= 0: the
        condition number cond(X) e^(s_max - s_min) is beyond float64), instead of returning a
        singular matrix, an indefinite one or inf."""
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        R, L = sqrtm_and_invsqrtm(x)
        s, P = _congruence_eigh(L, v)
        check_exp_range(self._where("exp"), s)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected and raised just below
            C = (R @ P) * np.exp(0.5 * s)
            out = sym(C @ C.T)
        finite_or_raise(self._where("exp"), out)
        return _positive_definite_or_raise(self._where("exp"), out, s)

    def _generalised_eigh(self, method, x, y):
        """X^{1/2}, X^{-1/2}, mu, log mu, P with X^{-1/2} Y X^{-1/2} = P diag(mu) P^T (mu ascending:
        the generalised eigenvalues of (Y, X)).

        Default (difference form): eigh of X^{-1/2}(Y - X)X^{-1/2} = P diag(nu) P^T, mu = 1 + nu,
        log mu = log1p(nu): full relative accuracy when Y is near X. When every nu < -1/2 (Y much
        smaller than X, all mu < 1/2) the absolute error of nu (about eps * |nu_min| ~ eps) would
        dominate the small mu, so the direct form eigh(X^{-1/2} Y X^{-1/2}) (error eps * mu_max)
        is used instead. Raises ValueError if some mu <= 0 in floating point."""
        R, L = sqrtm_and_invsqrtm(x)
        nu, P = _congruence_eigh(L, y - x)
        if nu[-1] < -0.5:
            mu, P = _congruence_eigh(L, y)
            ok = mu[0] > 0.0
            log_mu = np.log(mu) if ok else None
        else:
            mu = 1.0 + nu
            ok = nu[0] > -1.0
            log_mu = np.log1p(nu) if ok else None
        if not ok:
            raise ValueError(
                f"{self._where(method)}: X^(-1/2) Y X^(-1/2) has eigenvalue mu_min = {mu[0]:.3e} "
                f"<= 0 in floating point (cond(X) and cond(Y) are too large for float64)")
        return R, L, mu, log_mu, P

    def log(self, x, y):
        """Log_X(Y) = X^{1/2} logm(X^{-1/2} Y X^{-1/2}) X^{1/2} (inverse of Exp; Huang et al. (2024) section 6.2).

        logm(M) = P diag(log mu) P^T, M = X^{-1/2} Y X^{-1/2} = P diag(mu) P^T, with log mu = log1p(nu)
        from M - I = X^{-1/2}(Y - X)X^{-1/2} = P diag(nu) P^T (see _generalised_eigh)."""
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        R, _, _, log_mu, P = self._generalised_eigh("log", x, y)
        K = R @ P
        return self._out("log", sym((K * log_mu) @ K.T))

    def dist(self, x, y):
        """dist(X, Y) = ||logm(X^{-1/2} Y X^{-1/2})||_F = sqrt(sum_i log^2 mu_i), mu_i the
        generalised eigenvalues of (Y, X) (Huang et al. (2024) (6.2), Han et al. (2024) (3)); log mu_i as in _generalised_eigh."""
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        _, _, _, log_mu, _ = self._generalised_eigh("dist", x, y)
        return self._out("dist", norm2(log_mu))

    def transp(self, x, y, v):
        """Parallel transport along the geodesic X -> Y: Gamma(U) = E U E^T with
        E = X^{1/2} M^{1/2} X^{-1/2}, M = X^{-1/2} Y X^{-1/2} (Sra & Hosseini 2015, eq. (3.4))."""
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        R, L, mu, _, P = self._generalised_eigh("transp", x, y)
        M_half = (P * np.sqrt(mu)) @ P.T
        E = R @ M_half @ L
        with np.errstate(over="ignore", invalid="ignore"):
            out = sym(E @ v @ E.T)
        return finite_or_raise(self._where("transp"), out)

    # ------------------------------------------------------------------ retraction
    def retr(self, x, v):
        """Second-order retraction R_X(V) = X + V + 1/2 V X^{-1} V (agrees with Exp_X(tV) to O(t^3)).

        Equal to X^{1/2} ((I + A)^2 + I)/2 X^{1/2} with A = X^{-1/2} V X^{-1/2}, hence positive
        definite for every symmetric V in exact arithmetic; a result that overflows or is not
        positive definite in float64 raises ``ValueError``."""
        x = self._pt("retr", x)
        v = self._tv("retr", x, v)
        with np.errstate(over="ignore", invalid="ignore"):
            out = sym(x + v + 0.5 * v @ np.linalg.solve(x, v))
        finite_or_raise(self._where("retr"), out)
        return _positive_definite_or_raise(self._where("retr"), out)

    def inv_retr(self, x, y):
        """Inverse of :meth:`retr` on its injectivity domain.

        R_X is a bijection from {V : X + V positive definite} onto {Y : 2Y - X positive definite}:
        V = X^{1/2} ((2M - I)^{1/2} - I) X^{1/2}, M = X^{-1/2} Y X^{-1/2}. With
        2M - I - I = 2 X^{-1/2}(Y - X)X^{-1/2} = P diag(eta) P^T, (2M - I)^{1/2} - I =
        P diag(eta / (1 + sqrt(1 + eta))) P^T (no cancellation near Y = X).
        Raises ValueError when 2Y - X is not positive definite (Y not in the image), and when
        X^(-1/2)(Y - X)X^(-1/2) overflows float64 (e.g. a subnormal X against a normal Y; found by
        the fuzz suite)."""
        x = self._pt("inv_retr", x)
        y = self._pt("inv_retr", y, "y")
        R, L = sqrtm_and_invsqrtm(x)
        with np.errstate(over="ignore", invalid="ignore"):
            eta, P = _congruence_eigh(L, 2.0 * (y - x))
        if not (np.all(np.isfinite(eta)) and np.all(np.isfinite(P))):
            raise ValueError(
                f"{self._where('inv_retr')}: 2 X^(-1/2)(Y - X)X^(-1/2) is not finite in float64 (X is too small or too "
                f"ill-conditioned against Y: smallest eigenvalue of X {_lambda_min(x):.3e}, largest |Y| entry "
                f"{float(np.max(np.abs(y))):.3e})")
        if not eta[0] > -1.0:
            raise ValueError(
                f"{self._where('inv_retr')}: y is outside the image of the retraction: 2Y - X is not positive "
                f"definite (smallest eigenvalue of X^(-1/2)(2Y - X)X^(-1/2) = {1.0 + eta[0]:.3e} <= 0)")
        K = R @ P
        return self._out("inv_retr", sym((K * (eta / (1.0 + np.sqrt(1.0 + eta)))) @ K.T))

    # ------------------------------------------------------------------ basis and sampling
    def tangent_basis(self, x):
        """Orthonormal basis E_k = X^{1/2} B_k X^{1/2} of T_X, k over the upper triangle in
        row-major order (i, j) = (0,0), (0,1), ..., (0,n-1), (1,1), ...; B_k = e_i e_i^T for i = j
        and (e_i e_j^T + e_j e_i^T)/sqrt(2) for i < j (orthonormal in the Frobenius product).
        With r_i the i-th column of X^{1/2}: E_k = r_i r_i^T or (r_i r_j^T + r_j r_i^T)/sqrt(2)."""
        x = self._pt("tangent_basis", x)
        R, _ = sqrtm_and_invsqrtm(x)
        n = self.n
        E = np.empty((self.dim, n, n))
        k = 0
        c = 1.0 / math.sqrt(2.0)
        for i in range(n):
            for j in range(i, n):
                if i == j:
                    E[k] = np.outer(R[:, i], R[:, i])
                else:
                    O = np.outer(R[:, i], R[:, j])
                    E[k] = c * (O + O.T)
                k += 1
        return E

    def random_point(self, rng):
        """expm(S), S = 0.5 sym(G), G standard Gaussian (well conditioned: see spd_random_point)."""
        return spd_random_point(self.n, rng)

    def injectivity_radius(self, x=None) -> float:
        """Infinite: SPD with the affine-invariant metric is a Hadamard manifold."""
        return math.inf
