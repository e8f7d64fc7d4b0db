"""Verified twin of :mod:`prirfed.reference.manifolds.spd` (Numba kernels).

Mirrors ``reference/manifolds/spd.py`` formula for formula (same eigh-based matrix functions,
the symmetric eigendecomposition computed here by a cyclic Jacobi kernel for n <= 4 (where it
beats the LAPACK call from Numba: 0.16 vs 0.37 us at n = 2; Jacobi is at least as accurate) and
LAPACK above,
same ``log1p`` difference form and its direct-form branch, same retraction pair, same basis order and signs); see
``proofs_notes/manifold_spd.md``. The class subclasses the reference so that input validation
and the random draws are literally the same code; the geometry goes through
``@njit(cache=True)`` kernels (no fastmath). Kernels take C-contiguous float64 arrays and hold no
Python objects, so samplers and trainers can call them from other njit code:

``inner_kernel(x, u, v)``, ``norm_kernel(x, u)``, ``proj_kernel(x, w)``,
``egrad2rgrad_kernel(x, g)``, ``exp_kernel(x, v)``, ``log_kernel(x, y)``, ``dist_kernel(x, y)``,
``transp_kernel(x, y, v)``, ``retr_kernel(x, v)``, ``inv_retr_kernel(x, y)``,
``tangent_basis_kernel(x)`` and the batched ``exp_batch``, ``log_batch``, ``dist_batch``,
``transp_batch`` over stacks of shape (m, n, n).

Kernels do not validate points (the public methods do); where floating point leaves the domain
(a generalised eigenvalue <= 0, Y outside the image of the retraction, an Exp or retraction whose
result underflows, overflows or is not positive definite, a transport that overflows) they raise
``ValueError`` rather than return NaN, inf or a matrix check_point would refuse.

Examples
--------
>>> import numpy as np
>>> from prirfed.verified.manifolds.spd import SPD, dist_kernel
>>> I, Y = np.eye(2), np.diag([np.e, np.exp(-2.0)])
>>> float(SPD(2).dist(I, Y))                # ||diag(1, -2)||_F = sqrt(5)
2.2360679775
>>> bool(np.isclose(dist_kernel(I, Y), np.sqrt(5.0), rtol=1e-14))
True
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

from prirfed.reference.manifolds.spd import EXP_ARG_MIN, SYMMETRY_RTOL
from prirfed.reference.manifolds.spd import SPD as _ReferenceSPD
from prirfed.reference.manifolds.spd import finite_or_raise
from prirfed.verified.kernels import all_finite_kernel as _all_finite
from prirfed.verified.kernels import matmul_kernel as _mm

from .checks import BatchRows, norm2_kernel
from .common import KernelMetric, contiguous as _c

__all__ = ["SPD", "JACOBI_MAX_N", "eigh_kernel", "sym_kernel", "sqrtm_and_invsqrtm_kernel", "inner_kernel", "norm_kernel", "proj_kernel",
           "egrad2rgrad_kernel", "exp_kernel", "log_kernel", "dist_kernel", "transp_kernel", "retr_kernel",
           "inv_retr_kernel", "tangent_basis_kernel", "exp_batch", "log_batch", "dist_batch", "transp_batch"]


JACOBI_MAX_N = 4  # eigh by cyclic Jacobi up to this size (faster there), LAPACK (np.linalg.eigh) above


@njit(cache=True)
def sym_kernel(a):
    """Verified twin of :func:`prirfed.reference.manifolds.spd.sym`: (A + A^T)/2, as A/2 + A^T/2 (the same numbers; no
    overflow of A + A^T)."""
    n = a.shape[0]
    out = np.empty((n, n))
    for i in range(n):
        out[i, i] = a[i, i]
        for j in range(i + 1, n):
            t = 0.5 * a[i, j] + 0.5 * a[j, i]
            out[i, j] = t
            out[j, i] = t
    return out


@njit(cache=True)
def _mmt(a, b):
    """a @ b.T by loops."""
    n, m, p = a.shape[0], a.shape[1], b.shape[0]
    out = np.empty((n, p))
    for i in range(n):
        for j in range(p):
            t = 0.0
            for k in range(m):
                t += a[i, k] * b[j, k]
            out[i, j] = t
    return out


@njit(cache=True)
def _colscale(a, d):
    """a @ diag(d)."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * d[j]
    return out


@njit(cache=True)
def kdkt_kernel(k, d):
    """sym(K diag(d) K^T), fused: one allocation, exactly symmetric."""
    n, m = k.shape[0], k.shape[1]
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            t = 0.0
            for q in range(m):
                t += k[i, q] * d[q] * k[j, q]
            out[i, j] = t
            out[j, i] = t
    return out


@njit(cache=True)
def _ggt(c):
    """sym(C C^T), fused: one allocation, exactly symmetric (a Gram matrix)."""
    n, m = c.shape[0], c.shape[1]
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            t = 0.0
            for q in range(m):
                t += c[i, q] * c[j, q]
            out[i, j] = t
            out[j, i] = t
    return out


@njit(cache=True)
def _max_abs(a):
    """max |a_ij| (0 for an empty array; NaN entries are skipped)."""
    m = 0.0
    for t in a.flat:
        if abs(t) > m:
            m = abs(t)
    return m


@njit(cache=True)
def lal_kernel(l, a):
    """sym(L A L) for symmetric L: L A, then the lower triangle of (L A) L mirrored."""
    n = l.shape[0]
    la = _mm(l, a)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            t = 0.0
            for q in range(n):
                t += la[i, q] * l[q, j]
            out[i, j] = t
            out[j, i] = t
    return out


@njit(cache=True)
def _jacobi_eigh(a):
    """Cyclic-by-row Jacobi eigensolver for a symmetric matrix (Golub & Van Loan, Matrix
    Computations, section 8.5, with the 2 x 2 symmetric Schur rotation): returns ascending eigenvalues w and orthonormal
    eigenvectors V (columns), A = V diag(w) V^T. The matrix is scaled by max|a_ij| first so the
    stopping test (off-diagonal Frobenius norm <= 1e-18 ||A||_F, or exactly zero) cannot
    underflow; each rotation zeroes its pair exactly and updates the diagonal by
    a_pp - t a_pq, a_qq + t a_pq."""
    n = a.shape[0]
    A = sym_kernel(a)
    V = np.eye(n)
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(A[i, j]))
    if scale == 0.0:
        return np.zeros(n), V
    for i in range(n):
        for j in range(n):
            A[i, j] /= scale
    norm2 = 0.0
    for i in range(n):
        for j in range(n):
            norm2 += A[i, j] * A[i, j]
    for sweep in range(60):
        off2 = 0.0
        for p in range(n - 1):
            for q in range(p + 1, n):
                off2 += A[p, q] * A[p, q]
        if off2 == 0.0 or off2 <= 1e-36 * norm2:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                if apq == 0.0:
                    continue
                app, aqq = A[p, p], A[q, q]
                tau = (aqq - app) / (2.0 * apq)
                t = 1.0 / (abs(tau) + math.hypot(1.0, tau))
                if tau < 0.0:
                    t = -t
                c = 1.0 / math.hypot(1.0, t)
                s = t * c
                for k in range(n):
                    akp, akq = A[k, p], A[k, q]
                    A[k, p] = c * akp - s * akq
                    A[k, q] = s * akp + c * akq
                for k in range(n):
                    apk, aqk = A[p, k], A[q, k]
                    A[p, k] = c * apk - s * aqk
                    A[q, k] = s * apk + c * aqk
                A[p, p] = app - t * apq
                A[q, q] = aqq + t * apq
                A[p, q] = 0.0
                A[q, p] = 0.0
                for k in range(n):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    w = np.empty(n)
    for i in range(n):
        w[i] = A[i, i] * scale
    # insertion sort, ascending (like LAPACK), carrying the eigenvector columns
    for i in range(1, n):
        j = i
        while j > 0 and w[j - 1] > w[j]:
            w[j - 1], w[j] = w[j], w[j - 1]
            for k in range(n):
                V[k, j - 1], V[k, j] = V[k, j], V[k, j - 1]
            j -= 1
    return w, V


@njit(cache=True)
def eigh_kernel(a):
    """Symmetric eigendecomposition of sym(a), ascending.

    Helper, not a paper formula: Jacobi for n <= JACOBI_MAX_N (fast and accurate for the small
    matrices of the experiments), LAPACK otherwise (on ``a`` scaled by a power of two, exact, since
    LAPACK fails to converge on entries near the float64 range). The reference's eigensolver is
    NumPy's ``eigh``; the SPD kernels built on this one are tested equal to the reference.

    Parameters
    ----------
    a : numpy.ndarray
        Square matrix (its symmetric part is decomposed).

    Returns
    -------
    w : numpy.ndarray
        Eigenvalues, ascending.
    q : numpy.ndarray
        Orthonormal eigenvectors as columns.
    """
    if a.shape[0] <= JACOBI_MAX_N:
        return _jacobi_eigh(a)
    # LAPACK on a / 2^k (exact scaling; it fails to converge on entries near the float64 range)
    m = _max_abs(a)
    if 0.0 < m < math.inf:
        f = math.ldexp(1.0, math.frexp(m)[1] - 1)  # 2^k <= m: 2^(k+1) overflows at m >= 2^1023
        w, q = np.linalg.eigh(sym_kernel(a / f))
        return w * f, q
    return np.linalg.eigh(sym_kernel(a))


@njit(cache=True)
def sqrtm_and_invsqrtm_kernel(x):
    """Verified twin of :func:`prirfed.reference.manifolds.spd.sqrtm_and_invsqrtm`: X^{1/2}, X^{-1/2} from one eigh
    (reference: sqrtm_and_invsqrtm), from the eigendecomposition of x / 4^j, 4^j <= max(abs(x)) < 4^(j+1), and
    scaled back by 2^(+-j) after the products (exact; (4^j x)^{1/2} = 2^j x^{1/2} bit for bit)."""
    m = _max_abs(x)
    j = 0
    if 0.0 < m < math.inf:
        j = (math.frexp(m)[1] - 1) // 2
    w, q = eigh_kernel(_ldexp_all(x, -2 * j))
    r = np.sqrt(w)
    return _ldexp_all(kdkt_kernel(q, r), j), _ldexp_all(kdkt_kernel(q, 1.0 / r), -j)


@njit(cache=True)
def _congruence_eigh(l, d):
    """eigh of sym(L D L); NaN eigenvalues when L D L overflows (the eigen-solvers return garbage
    on inf entries: 0 and the identity for a 2 x 2; the callers refuse a NaN, as the reference)."""
    m = lal_kernel(l, d)
    if not np.all(np.isfinite(m)):
        return np.full(m.shape[0], np.nan), np.full(m.shape, np.nan)
    return eigh_kernel(m)


@njit(cache=True)
def _ldexp_all(a, e):
    """a * 2^e entry by entry (``math.ldexp``: exact, or correctly rounded where it underflows)."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = math.ldexp(a[i, j], e)
    return out


@njit(cache=True)
def scaled_congruence_kernel(l, u):
    """Verified twin of :func:`prirfed.reference.manifolds.spd.scaled_congruence`: (A, k) with L U L = 2^k A,
    A = L^ U^ L^ for the power-of-two scalings L^ = L / 2^a, U^ = U / 2^b (largest entries in [1, 2)), k = 2a + b."""
    mu = _max_abs(u)
    if mu == 0.0:
        return np.zeros_like(u), 0
    a = math.frexp(_max_abs(l))[1] - 1
    b = math.frexp(mu)[1] - 1
    lh = _ldexp_all(l, -a)
    return lal_kernel(lh, _ldexp_all(u, -b)), 2 * a + b


@njit(cache=True)
def inner_kernel(x, u, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.inner`: <U, V>_X = sum((L U L) * (L V L)), L =
    X^{-1/2}, each congruence by :func:`scaled_congruence_kernel` (no intermediate overflow)."""
    _, l = sqrtm_and_invsqrtm_kernel(x)
    a, ka = scaled_congruence_kernel(l, u)
    b, kb = scaled_congruence_kernel(l, v)
    return math.ldexp(np.sum(a * b), ka + kb)


@njit(cache=True)
def norm_kernel(x, u):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.norm`: ||U||_X = ||X^{-1/2} U X^{-1/2}||_F, the
    congruence by :func:`scaled_congruence_kernel` (no intermediate overflow)."""
    _, l = sqrtm_and_invsqrtm_kernel(x)
    a, k = scaled_congruence_kernel(l, u)
    return math.ldexp(norm2_kernel(a), k)


@njit(cache=True)
def proj_kernel(x, w):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.proj`: sym(W)."""
    return sym_kernel(w)


@njit(cache=True)
def egrad2rgrad_kernel(x, g):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.egrad2rgrad`: X sym(G) X."""
    return lal_kernel(x, sym_kernel(g))


@njit(cache=True)
def _exp_core(x, v):
    r, l = sqrtm_and_invsqrtm_kernel(x)
    s, p = _congruence_eigh(l, v)
    return _ggt(_colscale(_mm(r, p), np.exp(0.5 * s))), s[0]


@njit(cache=True)
def _refuse_exp():
    raise ValueError("SPD.exp: Exp_X(V) underflows, overflows or is not positive definite in float64")


@njit(cache=True)
def _is_point(a):
    """Finite, and lambda_min > 64 n eps lambda_max (reference: SPD PD_MARGIN, the result test of
    Exp and of the retraction)."""
    if not _all_finite(a):
        return False
    w = eigh_kernel(a)[0]
    return w[0] > 64.0 * a.shape[0] * 2.220446049250313e-16 * w[-1]


@njit(cache=True)
def exp_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.exp`: C C^T, C = X^{1/2} P diag(e^{s/2}), X^{-1/2} V
    X^{-1/2} = P diag(s) P^T. Raises ValueError when s_min < -708 (an eigenvalue underflows), the result overflows
    or is not positive definite to working accuracy (the reference's result test: lambda_min > 64 n eps lambda_max)."""
    out, s_min = _exp_core(x, v)
    if not (s_min >= EXP_ARG_MIN and _is_point(out)):
        _refuse_exp()
    return out


@njit(cache=True)
def _generalised_eigh_from_l(l, x, y):
    """mu, log mu, P with X^{-1/2} Y X^{-1/2} = P diag(mu) P^T given L = X^{-1/2}; difference form
    (log1p) unless every nu < -1/2, then the direct form (reference: SPD._generalised_eigh).
    If mu_min <= 0 in floating point, log mu is filled with NaN and the caller raises."""
    nu, p = _congruence_eigh(l, y - x)
    if nu[-1] < -0.5:
        mu, p = _congruence_eigh(l, y)
        if mu[0] > 0.0:
            log_mu = np.log(mu)
        else:
            log_mu = np.full_like(mu, np.nan)
    else:
        mu = 1.0 + nu
        if nu[0] > -1.0:
            log_mu = np.log1p(nu)
        else:
            log_mu = np.full_like(mu, np.nan)
    return mu, log_mu, p


@njit(cache=True)
def _generalised_eigh(x, y):
    """X^{1/2}, X^{-1/2}, mu, log mu, P (see _generalised_eigh_from_l)."""
    r, l = sqrtm_and_invsqrtm_kernel(x)
    mu, log_mu, p = _generalised_eigh_from_l(l, x, y)
    return r, l, mu, log_mu, p


@njit(cache=True)
def _invsqrtm_kernel(x):
    """X^{-1/2} alone (dist needs no X^{1/2}), from the same eigh as sqrtm_and_invsqrtm_kernel."""
    w, q = eigh_kernel(x)
    return kdkt_kernel(q, 1.0 / np.sqrt(w))


#: The class methods and batches use a kernel's answer only where X^(-1/2) Y X^(-1/2) (for inv_retr
#: the matrix of 1 + eta) has mu_min > KERNEL_MU_RATIO mu_max; beyond that the two twins' eigen-solvers
#: can decide differently whether mu_min > 0 (or return results far apart for a nearly singular X:
#: found by the fuzz suite), so the reference computes, decides and words the refusal. The fused
#: trainer loops call the kernels directly and are not affected.
KERNEL_MU_RATIO = 2.0 ** -26


@njit(cache=True)
def _in_domain(lo, hi):
    """lo > KERNEL_MU_RATIO hi (False for NaN): where the class methods trust a kernel's answer."""
    return lo > KERNEL_MU_RATIO * hi


@njit(cache=True)
def _log_core(x, y):
    r, _, mu, log_mu, p = _generalised_eigh(x, y)
    return kdkt_kernel(_mm(r, p), log_mu), mu[0], mu[-1]


@njit(cache=True)
def log_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.log`: X^{1/2} P diag(log mu) P^T X^{1/2}."""
    out, mu_min, _ = _log_core(x, y)
    if not mu_min > 0.0:
        raise ValueError("SPD.log: X^(-1/2) Y X^(-1/2) has an eigenvalue <= 0 in floating point")
    return out


@njit(cache=True)
def _dist_core(x, y):
    mu, log_mu, _ = _generalised_eigh_from_l(_invsqrtm_kernel(x), x, y)
    s = 0.0
    for i in range(log_mu.shape[0]):
        s += log_mu[i] * log_mu[i]
    return math.sqrt(s), mu[0], mu[-1]


@njit(cache=True)
def dist_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.dist`: sqrt(sum_i log^2 mu_i)."""
    d, mu_min, _ = _dist_core(x, y)
    if not mu_min > 0.0:
        raise ValueError("SPD.dist: X^(-1/2) Y X^(-1/2) has an eigenvalue <= 0 in floating point")
    return d


@njit(cache=True)
def _transp_core(x, y, v):
    r, l, mu, _, p = _generalised_eigh(x, y)
    if not mu[0] > 0.0:
        return np.full_like(x, np.nan), mu[0], mu[-1]
    e = _mm(_mm(r, kdkt_kernel(p, np.sqrt(mu))), l)
    ev = _mm(e, v)
    n = x.shape[0]
    out = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            t = 0.0
            for q in range(n):
                t += ev[i, q] * e[j, q]
            out[i, j] = t
            out[j, i] = t
    return out, mu[0], mu[-1]


@njit(cache=True)
def transp_kernel(x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.transp`: E V E^T, E = X^{1/2} M^{1/2} X^{-1/2};
    raises ValueError if mu_min <= 0 or the result overflows."""
    out, mu_min, _ = _transp_core(x, y, v)
    if not mu_min > 0.0:
        raise ValueError("SPD.transp: X^(-1/2) Y X^(-1/2) has an eigenvalue <= 0 in floating point")
    if not _all_finite(out):
        raise ValueError("SPD.transp: the result overflows float64")
    return out


@njit(cache=True)
def retr_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.retr`: X + V + 1/2 V X^{-1} V; raises ValueError if
    the result overflows or is not positive definite."""
    out = sym_kernel(x + v + 0.5 * _mm(v, np.linalg.solve(x, v)))
    if not _is_point(out):
        raise ValueError("SPD.retr: the result overflows or is not positive definite in float64")
    return out


@njit(cache=True)
def _inv_retr_core(x, y):
    r, l = sqrtm_and_invsqrtm_kernel(x)
    eta, p = _congruence_eigh(l, 2.0 * (y - x))
    if not eta[0] > -1.0:  # also NaN: the congruence overflowed (_congruence_eigh)
        return np.full_like(x, np.nan), eta[0], eta[-1]
    return kdkt_kernel(_mm(r, p), eta / (1.0 + np.sqrt(1.0 + eta))), eta[0], eta[-1]


@njit(cache=True)
def inv_retr_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.inv_retr`: X^{1/2} P diag(eta/(1 + sqrt(1 + eta)))
    P^T X^{1/2}, 2X^{-1/2}(Y - X)X^{-1/2} = P diag(eta) P^T."""
    out, eta_min, _ = _inv_retr_core(x, y)
    if not eta_min > -1.0:
        raise ValueError("SPD.inv_retr: y is outside the image of the retraction (2Y - X not positive definite)")
    return out


@njit(cache=True)
def tangent_basis_kernel(x):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.tangent_basis`: E_k = r_i r_i^T (i = j) or (r_i
    r_j^T + r_j r_i^T)/sqrt(2) (i < j), upper triangle row-major, r_i the columns of X^{1/2}: the same basis, order
    and signs as the reference."""
    r, _ = sqrtm_and_invsqrtm_kernel(x)
    n = x.shape[0]
    out = np.empty((n * (n + 1) // 2, n, n))
    c = 1.0 / math.sqrt(2.0)
    k = 0
    for i in range(n):
        for j in range(i, n):
            for a in range(n):
                for b in range(n):
                    if i == j:
                        out[k, a, b] = r[a, i] * r[b, i]
                    else:
                        out[k, a, b] = c * (r[a, i] * r[b, j] + r[a, j] * r[b, i])
            k += 1
    return out


@njit(cache=True)
def exp_batch(X, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.exp`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = exp_kernel(X[i], V[i])
    return out


@njit(cache=True)
def log_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.log`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        row, mu_min, mu_max = _log_core(X[i], Y[i])
        out[i] = row
        if not _in_domain(mu_min, mu_max):
            raise ValueError("SPD.log_batch: a row is outside the kernels' domain (KERNEL_MU_RATIO)")
    return out


@njit(cache=True)
def dist_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.dist`, row by row over stacks."""
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        row, mu_min, mu_max = _dist_core(X[i], Y[i])
        out[i] = row
        if not _in_domain(mu_min, mu_max):
            raise ValueError("SPD.dist_batch: a row is outside the kernels' domain (KERNEL_MU_RATIO)")
    return out


@njit(cache=True)
def transp_batch(X, Y, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.transp`, row by row over stacks."""
    out = np.empty_like(V)
    for i in range(X.shape[0]):
        row, mu_min, mu_max = _transp_core(X[i], Y[i], V[i])
        out[i] = row
        if not _in_domain(mu_min, mu_max):
            raise ValueError("SPD.transp_batch: a row is outside the kernels' domain (KERNEL_MU_RATIO)")
    return out




class SPD(BatchRows, KernelMetric, _ReferenceSPD):
    """Verified twin of :class:`prirfed.reference.manifolds.spd.SPD`: SPD(n) with the affine-invariant metric; same API
    as the reference, geometry in Numba. Where a kernel refuses (underflow, overflow, a result that is not positive
    definite, mu_min <= 0), or is outside its domain (mu_min <= KERNEL_MU_RATIO mu_max for log, dist, transp and
    inv_retr), the reference method is called on the same input, so the refusal carries the reference's message."""

    def egrad2rgrad(self, x, g):
        x = self._pt("egrad2rgrad", x)
        g = self._amb("egrad2rgrad", g, "g")
        return finite_or_raise(self._where("egrad2rgrad"), egrad2rgrad_kernel(_c(x), _c(g)))

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        try:
            return exp_kernel(_c(x), _c(v))
        except ValueError:
            return super().exp(x, v)

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        out, mu_min, mu_max = _log_core(_c(x), _c(y))
        if not _in_domain(mu_min, mu_max):
            return super().log(x, y)  # the reference decides and words the refusal
        return self._out("log", out)

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        d, mu_min, mu_max = _dist_core(_c(x), _c(y))
        if not _in_domain(mu_min, mu_max):
            return super().dist(x, y)
        return self._out("dist", float(d))

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        out, mu_min, mu_max = _transp_core(_c(x), _c(y), _c(v))
        if not (_in_domain(mu_min, mu_max) and np.all(np.isfinite(out))):
            return super().transp(x, y, v)
        return out

    def retr(self, x, v):
        x = self._pt("retr", x)
        v = self._tv("retr", x, v)
        try:
            return retr_kernel(_c(x), _c(v))
        except (ValueError, np.linalg.LinAlgError):
            return super().retr(x, v)

    def inv_retr(self, x, y):
        x = self._pt("inv_retr", x)
        y = self._pt("inv_retr", y, "y")
        out, eta_min, eta_max = _inv_retr_core(_c(x), _c(y))
        if not (eta_min > -1.0 and _in_domain(1.0 + eta_min, 1.0 + eta_max)):
            return super().inv_retr(x, y)  # the reference's refusal (outside the image, or an overflow)
        return self._out("inv_retr", out)

    def tangent_basis(self, x):
        x = self._pt("tangent_basis", x)
        return tangent_basis_kernel(_c(x))

    # ------------------------------------------------------------------ batched (BatchRows)
    # Screens with half the symmetry tolerance and a positive-definiteness margin of 64 n eps max|X|
    # (eigvalsh of the stack); every other row is decided by the single-point method.
    def _clearly_points(self, X):
        finite = np.all(np.isfinite(X), axis=(1, 2))
        Xf = np.where(finite[:, None, None], X, 0.0)
        scale = np.max(np.abs(Xf), axis=(1, 2))
        asym = np.max(np.abs(Xf - np.swapaxes(Xf, 1, 2)), axis=(1, 2))
        safe = np.where(scale > 0, scale, 1.0)[:, None, None]
        Xs = Xf / safe
        lam = np.linalg.eigvalsh(0.5 * Xs + 0.5 * np.swapaxes(Xs, 1, 2))[:, 0]
        margin = 64.0 * self.n * np.finfo(float).eps
        # lam * scale must be a normal number: the single check multiplies its scaled lambda_min back
        # and refuses when that underflows to 0 (a point scaled into the subnormals; fuzz suite)
        return (finite & (asym <= 0.5 * SYMMETRY_RTOL * scale) & (lam > margin)
                & (lam * scale >= np.finfo(float).tiny))

    def _clearly_tangents(self, X, V):
        finite = np.all(np.isfinite(V), axis=(1, 2))
        Vf = np.where(finite[:, None, None], V, 0.0)
        scale = np.max(np.abs(Vf), axis=(1, 2))
        asym = np.max(np.abs(Vf - np.swapaxes(Vf, 1, 2)), axis=(1, 2))
        return finite & (asym <= 0.5 * SYMMETRY_RTOL * scale)


SPD._kernels = sys.modules[__name__]  # KernelMetric calls this module's kernels
SPD._batch_kernels = {"exp": exp_batch, "log": log_batch, "dist": dist_batch, "transp": transp_batch}
