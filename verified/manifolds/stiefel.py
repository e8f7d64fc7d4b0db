"""Verified twin of :mod:`prirfed.reference.manifolds.stiefel` (Numba kernels).

The class subclasses the reference so that input validation and the random draws are the
same code; the geometry goes through ``@njit(cache=True)`` kernels (no fastmath). Kernels
take and return plain float64 arrays and can be called from other njit code:

``inner_kernel, proj_kernel, egrad2rgrad_kernel, exp_kernel, log_kernel, dist_kernel,
transp_kernel, retr_kernel, inv_retr_kernel`` (the polar pair), ``retr_polar_kernel,
inv_retr_polar_kernel, retr_qr_kernel, inv_retr_qr_kernel, tangent_basis_kernel`` and the
batched ``exp_batch, log_batch, dist_batch, transp_batch`` over stacks of shape (N, n, p).

Kernels that can fail (log, dist, the inverse retractions) raise ``ValueError`` inside Numba;
the class methods call the ``_core`` kernels, which return a status instead, to build the same
detailed messages as the reference. expm is a Pade(13) scaling-and-squaring (Higham 2005)
written here because Numba has no expm; the reference uses scipy.linalg.expm.

Examples
--------
>>> import numpy as np
>>> from prirfed.verified.manifolds.stiefel import Stiefel
>>> e1, quarter = np.array([[1.0], [0.0], [0.0]]), np.array([[0.0], [np.pi / 2], [0.0]])
>>> np.round(Stiefel(3, 1).exp(e1, quarter), 12) + 0.0     # St(3, 1) is the sphere S^2
array([[0.],
       [1.],
       [0.]])
>>> float(Stiefel(3, 1).dist(e1, np.array([[0.0], [1.0], [0.0]])))   # pi/2
1.5707963267949
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

from prirfed.reference.manifolds.stiefel import LOG_MAXITER, LOG_TOL
from prirfed.reference.manifolds.stiefel import Stiefel as _ReferenceStiefel
from prirfed.reference.manifolds.stiefel import LOG_STOP
from prirfed.verified.kernels import matmul_kernel as _mm
from prirfed.verified.kernels import sym_part_kernel as _sym

from .checks import BatchRows, norm2_kernel
from .common import KernelMetric, contiguous as _c

__all__ = ["Stiefel", "inner_kernel", "norm_kernel", "proj_kernel", "egrad2rgrad_kernel", "exp_kernel", "log_kernel",
           "dist_kernel", "transp_kernel", "retr_kernel", "inv_retr_kernel", "retr_polar_kernel",
           "inv_retr_polar_kernel", "retr_qr_kernel", "inv_retr_qr_kernel", "tangent_basis_kernel",
           "exp_batch", "log_batch", "dist_batch", "transp_batch", "expm_kernel"]

_PADE13 = np.array([64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
                    129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
                    40840800.0, 960960.0, 16380.0, 182.0, 1.0])
_THETA13 = 5.371920351148152
_MAX_STEP = 4503599627370496.0  # = reference base.EXP_MAX_STEP = 2^52 (a literal: Numba caches globals)


# ---------------------------------------------------------------------- small helpers
@njit(cache=True)
def _pade13_scaled(A):
    """The [13/13] Pade approximant of exp(A / 2^sq) and the number sq of squarings that undo the
    scaling (Higham 2005): the shared first half of :func:`expm_kernel` and :func:`_expm_skew`."""
    m = A.shape[0]
    b = _PADE13
    nrm = 0.0
    for j in range(m):
        s = 0.0
        for i in range(m):
            s += abs(A[i, j])
        if s > nrm:
            nrm = s
    sq = 0
    if nrm > _THETA13:
        sq = int(math.ceil(math.log2(nrm / _THETA13)))
    As = A / (2.0 ** sq)
    Id = np.eye(m)
    A2 = _mm(As, As)
    A4 = _mm(A2, A2)
    A6 = _mm(A4, A2)
    U = _mm(As, _mm(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * Id)
    V = _mm(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * Id
    return _solve(V - U, V + U), sq


@njit(cache=True)
def expm_kernel(A):
    """Matrix exponential: [13/13] Pade approximant with scaling and squaring (Higham (2005)).

    Higham (2005), "The scaling and squaring method for the matrix exponential revisited",
    Algorithm 2.3. The reference exponentiates skew matrices through an eigendecomposition
    (:func:`prirfed.reference.manifolds.stiefel.expm_skew`); the Stiefel kernels built on this one
    are tested equal to it.

    Parameters
    ----------
    A : numpy.ndarray
        Square matrix.

    Returns
    -------
    numpy.ndarray
        :math:`e^A`.
    """
    F, sq = _pade13_scaled(A)
    for _ in range(sq):
        F = _mm(F, F)
    return F


@njit(cache=True)
def _expm_skew(B):
    """exp(B) for skew B: the Pade(13) scaling and squaring of :func:`expm_kernel`, with one
    Newton-Schulz step F <- F (3I - F^T F)/2 after each squaring. exp(B) is orthogonal; each
    squaring doubles the orthogonality defect of F (1e-10 ... 1 after 31 ... 98 squarings), and the
    Newton-Schulz step maps a defect E to O(E^2), so F stays orthogonal to rounding at every norm.
    The rotation angles keep the error eps ||B|| that any method has."""
    F, sq = _pade13_scaled(B)
    Id = np.eye(B.shape[0])
    for _ in range(sq):
        F = _mm(F, F)
        F = 0.5 * _mm(F, 3.0 * Id - _tmm(F, F))
    return F


@njit(cache=True)
def _orthonormal_defect(Y):
    """max |Y^T Y - I| (the point test of check_point), NaN for non-finite Y."""
    G = _tmm(Y, Y)
    d = 0.0
    for i in range(G.shape[0]):
        for j in range(G.shape[1]):
            t = abs(G[i, j] - (1.0 if i == j else 0.0))
            if not t <= d:
                d = t
    return d


@njit(cache=True)
def _point_ok(Y):
    """Y is finite and on St(n, p) within the reference's point tolerance 1e-10 + 64 n eps."""
    return _orthonormal_defect(Y) <= 1e-10 + 64.0 * Y.shape[0] * 2.220446049250313e-16


@njit(cache=True)
def _refuse_exp():
    raise ValueError("Stiefel.exp: ||V||_F is not below 2^52, or the result is not on St(n, p)")


@njit(cache=True)
def _refuse_retr():
    raise ValueError("Stiefel.retr: the result is not finite or not on St(n, p)")


@njit(cache=True)
def _refuse_transp():
    raise ValueError("Stiefel.transp: the result overflows float64")


@njit(cache=True)
def _pow2_at_least(m):
    """2^e with 2^(e-1) <= m < 2^e for m > 1/2, else 1 (reference: stiefel._pow2_at_least)."""
    if not m > 0.5:
        return 1.0
    return math.ldexp(1.0, min(math.frexp(m)[1], 1023))


@njit(cache=True)
def _skew(M):
    return 0.5 * (M - M.T)


@njit(cache=True)
def _tmm(a, b):
    """a^T @ b by loops."""
    m, n = a.shape
    k = b.shape[1]
    out = np.zeros((n, k))
    for l in range(m):
        for i in range(n):
            t = a[l, i]
            if t != 0.0:
                for j in range(k):
                    out[i, j] += t * b[l, j]
    return out


@njit(cache=True)
def _solve(A, B):
    """Solve A X = B (B 2-D) by LU with partial pivoting; A must be nonsingular (callers check)."""
    n = A.shape[0]
    L = A.copy()
    X = B.copy()
    for c in range(n):
        piv = c
        big = abs(L[c, c])
        for r in range(c + 1, n):
            if abs(L[r, c]) > big:
                big = abs(L[r, c])
                piv = r
        if piv != c:
            for j in range(n):
                t = L[c, j]
                L[c, j] = L[piv, j]
                L[piv, j] = t
            for j in range(X.shape[1]):
                t = X[c, j]
                X[c, j] = X[piv, j]
                X[piv, j] = t
        d = L[c, c]
        for r in range(c + 1, n):
            f = L[r, c] / d
            if f != 0.0:
                for j in range(c + 1, n):
                    L[r, j] -= f * L[c, j]
                for j in range(X.shape[1]):
                    X[r, j] -= f * X[c, j]
    for c in range(n - 1, -1, -1):
        for j in range(X.shape[1]):
            s = X[c, j]
            for l in range(c + 1, n):
                s -= L[c, l] * X[l, j]
            X[c, j] = s / L[c, c]
    return X


@njit(cache=True)
def _hstack(a, b):
    out = np.empty((a.shape[0], a.shape[1] + b.shape[1]))
    out[:, :a.shape[1]] = a
    out[:, a.shape[1]:] = b
    return out


@njit(cache=True)
def _householder_qr(A, ncols):
    """Householder QR of A (n x m, n >= m) with LAPACK's dgeqrf/dlarfg conventions
    (beta = -sign(alpha) ||column||, tau = 0 for a column that is already reduced).

    Returns (Q[:, :ncols], diag(R)): the first ncols columns of Q = H_1 ... H_m (ncols <= n); for
    entries beyond 2^500 (or below 2^-500) A is first scaled by a power of two, which leaves Q and
    the signs of diag(R) unchanged (diag(R) is then returned scaled).
    Written in loops (instead of np.linalg.qr) because it compiles much faster in Numba; it
    equals LAPACK's factors up to rounding. Works on transposed copies so that the inner loops
    run over contiguous memory.
    """
    n, m = A.shape
    W = np.ascontiguousarray(A.T)  # row j of W is column j of A
    # Q is invariant under scaling A by a power of two (exact); scale far-out inputs so that the
    # unscaled column norms below cannot overflow or underflow (LAPACK's dnrm2 scales the same way)
    big = 0.0
    for t in W.flat:
        if abs(t) > big:
            big = abs(t)
    if big > 2.0**500 or 0.0 < big < 2.0**-500:
        f = 2.0 ** (-int(math.floor(math.log2(big))))
        for i in range(W.shape[0]):
            for j in range(W.shape[1]):
                W[i, j] *= f
    taus = np.zeros(m)
    diag = np.zeros(m)
    for j in range(m):
        alpha = W[j, j]
        xn = 0.0
        for i in range(j + 1, n):
            xn += W[j, i] * W[j, i]
        xn = np.sqrt(xn)
        if xn == 0.0:
            taus[j] = 0.0
            diag[j] = alpha
            continue
        beta = -math.copysign(math.hypot(alpha, xn), alpha)
        taus[j] = (beta - alpha) / beta
        scale = 1.0 / (alpha - beta)
        for i in range(j + 1, n):
            W[j, i] *= scale
        W[j, j] = 1.0
        for c in range(j + 1, m):  # apply H_j = I - tau v v^T to the remaining columns
            s = 0.0
            for i in range(j, n):
                s += W[j, i] * W[c, i]
            s *= taus[j]
            for i in range(j, n):
                W[c, i] -= s * W[j, i]
        diag[j] = beta
    Qt = np.zeros((ncols, n))  # rows of Qt are columns of Q
    for c in range(ncols):
        Qt[c, c] = 1.0
    for j in range(m - 1, -1, -1):  # Q = H_1 (H_2 (... H_m I))
        if taus[j] == 0.0:
            continue
        for c in range(ncols):
            s = 0.0
            for i in range(j, n):
                s += W[j, i] * Qt[c, i]
            s *= taus[j]
            for i in range(j, n):
                Qt[c, i] -= s * W[j, i]
    return np.ascontiguousarray(Qt.T), diag


@njit(cache=True)
def _orth_complement_basis(x, w, k):
    p = x.shape[1]
    Q = _householder_qr(_hstack(x, w), p + k)[0]
    return np.ascontiguousarray(Q[:, p:p + k])


@njit(cache=True)
def _block(A, R):
    p, k = A.shape[0], R.shape[0]
    B = np.zeros((p + k, p + k))
    B[:p, :p] = 2.0 * A
    B[:p, p:] = -R.T
    B[p:, :p] = R
    return B


@njit(cache=True)
def _reduced_exp(A, R):
    p = A.shape[0]
    return _mm(np.ascontiguousarray(_expm_skew(_block(A, R))[:, :p]), _expm_skew(-A))


@njit(cache=True)
def _frechet(B, E):
    """L(B, E) = d/dt expm(B + t E) at 0: the upper-right block of expm([[B, E], [0, B]])."""
    m = B.shape[0]
    big = np.zeros((2 * m, 2 * m))
    big[:m, :m] = B
    big[:m, m:] = E
    big[m:, m:] = B
    return np.ascontiguousarray(expm_kernel(big)[:m, m:])


@njit(cache=True)
def _unpack(theta, p, k):
    A = np.zeros((p, p))
    m = 0
    for i in range(p):
        for j in range(i + 1, p):
            A[i, j] = theta[m]
            A[j, i] = -theta[m]
            m += 1
    R = np.empty((k, p))
    for s in range(k):
        for t in range(p):
            R[s, t] = theta[m]
            m += 1
    return A, R


@njit(cache=True)
def _reduced_residual(theta, Z, p, k):
    A, R = _unpack(theta, p, k)
    F = _reduced_exp(A, R) - Z
    return np.sqrt(np.sum(F * F))


@njit(cache=True)
def _reduced_jacobian(theta, Z, p, k):
    A, R = _unpack(theta, p, k)
    B = _block(A, R)
    EB = np.ascontiguousarray(expm_kernel(B)[:, :p])
    EA = expm_kernel(-A)
    F = _mm(EB, EA) - Z
    nt = theta.shape[0]
    J = np.empty(((p + k) * p, nt))
    zR = np.zeros((k, p))
    zA = np.zeros((p, p))
    m = 0
    for i in range(p):
        for j in range(i + 1, p):
            E = np.zeros((p, p))
            E[i, j] = 1.0
            E[j, i] = -1.0
            LB = np.ascontiguousarray(_frechet(B, _block(E, zR))[:, :p])
            LA = _frechet(-A, -E)
            J[:, m] = (_mm(LB, EA) + _mm(EB, LA)).ravel()
            m += 1
    for s in range(k):
        for t in range(p):
            G = np.zeros((k, p))
            G[s, t] = 1.0
            LB = np.ascontiguousarray(_frechet(B, _block(zA, G))[:, :p])
            J[:, m] = _mm(LB, EA).ravel()
            m += 1
    return F, J


@njit(cache=True)
def _reduced_log(Z, p):
    """Damped Gauss-Newton for reduced_exp(A, R) = Z (same algorithm as the reference)."""
    k = Z.shape[0] - p
    na = p * (p - 1) // 2
    theta = np.empty(na + k * p)
    m = 0
    for i in range(p):
        for j in range(i + 1, p):
            theta[m] = 0.5 * (Z[i, j] - Z[j, i])
            m += 1
    for s in range(k):
        for t in range(p):
            theta[m] = Z[p + s, t]
            m += 1
    res = _reduced_residual(theta, Z, p, k)
    it = 0
    while res > LOG_STOP and it < LOG_MAXITER:
        it += 1
        F, J = _reduced_jacobian(theta, Z, p, k)
        # Gauss-Newton step by the normal equations J^T J d = -J^T F (J has full column rank
        # away from conjugate points; the reference uses lstsq, both converge to the same root)
        g = F.ravel().reshape((-1, 1))
        d = _solve(_tmm(J, J), -_tmm(J, g))[:, 0]
        t = 1.0
        improved = False
        new = theta
        res_new = res
        for _ in range(30):
            new = theta + t * d
            res_new = _reduced_residual(new, Z, p, k)
            if res_new < res:
                improved = True
                break
            t *= 0.5
        if not improved:
            break
        theta = new
        res = res_new
    A, R = _unpack(theta, p, k)
    return A, R, res, it


# ---------------------------------------------------------------------- metric
@njit(cache=True)
def inner_kernel(x, u, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.inner`: <U, V>_X = tr(U^T V)."""
    return np.sum(u * v)


@njit(cache=True)
def norm_kernel(x, u):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.norm`: ||U||_X = ||U||_F without overflow or
    underflow of the squares (reference: base.norm2)."""
    return norm2_kernel(u)


@njit(cache=True)
def proj_kernel(x, w):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.proj`: P_X(W) = W - X sym(X^T W)."""
    return w - _mm(x, _sym(_tmm(x, w)))


@njit(cache=True)
def egrad2rgrad_kernel(x, g):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.egrad2rgrad`: grad f(X) = P_X(egrad)."""
    return g - _mm(x, _sym(_tmm(x, g)))


# ---------------------------------------------------------------------- exp / log / dist
@njit(cache=True)
def exp_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.exp`: Exp_X(V) = [X, Q] expm([[2A, -R^T],
    [R, 0]]) [I; 0] expm(-A) (EAS (2.14), see the note). Domain ||V||_F < 2^52; raises ValueError outside it or if
    the result is not on St(n, p)."""
    n, p = x.shape
    if not norm2_kernel(v) < _MAX_STEP:
        _refuse_exp()
    k = min(p, n - p)
    A = _skew(_tmm(x, v))
    Q = _orth_complement_basis(x, v, k)
    R = _tmm(Q, v)
    y = _mm(_hstack(x, Q), _reduced_exp(A, R))
    if not _point_ok(y):
        _refuse_exp()
    return y


@njit(cache=True)
def log_core(x, y):
    """Newton on Exp: returns (V, residual, iterations, length); the caller checks convergence."""
    n, p = x.shape
    k = min(p, n - p)
    Q = _orth_complement_basis(x, y, k)
    Z = np.empty((p + k, p))
    Z[:p] = _tmm(x, y)
    Z[p:] = _tmm(Q, y)
    A, R, res, it = _reduced_log(Z, p)
    length = np.sqrt(np.sum(A * A) + np.sum(R * R))
    return _mm(x, A) + _mm(Q, R), res, it, length


@njit(cache=True)
def log_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.log`: Log_X(Y); raises ValueError when
    Newton does not converge or the geodesic is >= pi long."""
    V, res, it, length = log_core(x, y)
    if not res <= LOG_TOL:
        raise ValueError("Stiefel.log: Newton iteration on Exp did not converge (residual, iterations)", res, it)
    if not length < np.pi:
        raise ValueError("Stiefel.log: geodesic found is not shorter than the injectivity radius pi (length)", length)
    return V


@njit(cache=True)
def dist_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.dist`: dist(X, Y) = ||Log_X(Y)||_F."""
    V = log_kernel(x, y)
    # the norm of checks.norm2_kernel, also taken by the single-point dist: the two are equal to the last
    # bit (numpy's pairwise sum there differed from this loop by an ulp at dist = 1e-12)
    return norm2_kernel(V)


@njit(cache=True)
def transp_kernel(x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.transp`: Projection vector transport P_Y(V)
    = V - Y sym(Y^T V) (fused loops, one allocation); raises ValueError if the result overflows (V near the float64
    range)."""
    n, p = y.shape
    S = np.zeros((p, p))
    for l in range(n):
        for i in range(p):
            t = y[l, i]
            for j in range(p):
                S[i, j] += t * v[l, j]
    out = v.copy()
    for i in range(p):
        for j in range(i, p):
            s = 0.5 * S[i, j] + 0.5 * S[j, i]
            S[i, j] = s
            S[j, i] = s
    ok = True
    for l in range(n):
        for i in range(p):
            t = y[l, i]
            for j in range(p):
                out[l, j] -= t * S[i, j]
        for j in range(p):
            if not np.isfinite(out[l, j]):
                ok = False
    if not ok:
        _refuse_transp()
    return out


# ---------------------------------------------------------------------- retractions
@njit(cache=True)
def retr_polar_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.retr_polar`: (X + V)(I + V^T V)^{-1/2} by
    one eigh, evaluated as W (I/m^2 + (V/m)^T(V/m))^{-1/2}, W = (X + V)/m, m the smallest power of two >= max(1,
    max|V|) (reference: Stiefel._polar; the same numbers where the printed form does not overflow). Raises
    ValueError if the result is not finite or not on St(n, p) within the point tolerance."""
    p = x.shape[1]
    m = 0.0
    for t in v.flat:
        if not abs(t) <= m:
            m = abs(t)
    if not m < math.inf:
        _refuse_retr()
    m = _pow2_at_least(m)
    vs = v / m
    G = np.eye(p) / (m * m) + _tmm(vs, vs)
    for t in G.flat:
        if not np.isfinite(t):
            _refuse_retr()
    w, E = np.linalg.eigh(G)
    y = _mm((x + v) / m, _mm(E * (1.0 / np.sqrt(w)), np.ascontiguousarray(E.T)))
    if not _point_ok(y):
        _refuse_retr()
    return y


@njit(cache=True)
def inv_retr_polar_core(x, y):
    """Returns (V, status, value): status 0 ok; 1 singular Lyapunov (value = sep); 2 P not PD (value = lambda_min)."""
    p = x.shape[1]
    M = _tmm(x, y)
    Ip = np.eye(p)
    Kr = np.kron(Ip, M) + np.kron(M, Ip)
    sep = np.linalg.svd(Kr)[1][-1]
    if not sep > 1e-12:
        return np.zeros_like(x), 1, sep
    rhs = np.zeros((p * p, 1))
    for i in range(p):
        rhs[i + i * p, 0] = 2.0
    sol = _solve(Kr, rhs)
    P = np.empty((p, p))
    for j in range(p):
        for i in range(p):
            P[i, j] = sol[i + j * p, 0]  # column-major vec
    P = _sym(P)
    lmin = np.linalg.eigvalsh(P)[0]
    if not lmin > 0:
        return np.zeros_like(x), 2, lmin
    return _mm(y, P) - x, 0, 0.0


@njit(cache=True)
def inv_retr_polar_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.inv_retr_polar`."""
    V, status, val = inv_retr_polar_core(x, y)
    if status == 1:
        raise ValueError("Stiefel.inv_retr_polar: the Lyapunov equation is singular (sep)", val)
    if status == 2:
        raise ValueError("Stiefel.inv_retr_polar: P = (I + V^T V)^(1/2) is not positive definite (lambda_min)", val)
    return V


@njit(cache=True)
def retr_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.retr`: The class retraction: polar."""
    return retr_polar_kernel(x, v)


@njit(cache=True)
def inv_retr_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.inv_retr`: Inverse of retr_kernel (inverse
    polar retraction)."""
    return inv_retr_polar_kernel(x, y)


@njit(cache=True)
def retr_qr_kernel(x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.retr_qr`: qf(X + V) with diag(R) > 0
    (Householder with power-of-two scaling of far-out input, so that the factor is computed for every finite X + V)."""
    Q, d = _householder_qr(x + v, x.shape[1])
    for j in range(Q.shape[1]):
        if d[j] < 0:
            Q[:, j] = -Q[:, j]
    return Q


@njit(cache=True)
def inv_retr_qr_core(x, y):
    """Returns (V, status, j, value): status 0 ok; 1 leading (j+1)-block singular (value = sigma_min);
    2 R[j, j] <= 0 (value = R[j, j])."""
    p = x.shape[1]
    M = _tmm(x, y)
    Rt = np.zeros((p, p))
    for j in range(p):
        Mj = np.ascontiguousarray(M[:j + 1, :j + 1])
        smin = np.linalg.svd(Mj)[1][-1]
        if not smin > 1e-12:
            return np.zeros_like(x), 1, j, smin
        b = np.zeros((j + 1, 1))
        b[j, 0] = 1.0
        for i in range(j):
            s = 0.0
            for l in range(i + 1):
                s += M[j, l] * Rt[l, i]
            b[i, 0] = -s
        Rt[:j + 1, j] = _solve(Mj, b)[:, 0]
        if not Rt[j, j] > 0:
            return np.zeros_like(x), 2, j, Rt[j, j]
    return _mm(y, Rt) - x, 0, 0, 0.0


@njit(cache=True)
def inv_retr_qr_kernel(x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.inv_retr_qr`."""
    V, status, j, val = inv_retr_qr_core(x, y)
    if status == 1:
        raise ValueError("Stiefel.inv_retr_qr: a leading block of X^T Y is singular (index, sigma_min)", j, val)
    if status == 2:
        raise ValueError("Stiefel.inv_retr_qr: R[j, j] is not positive (index, value)", j, val)
    return V


# ---------------------------------------------------------------------- basis
@njit(cache=True)
def orth_complement_kernel(x):
    """X_perp = last n - p columns of the complete Householder QR of X (the p reflectors of X
    applied to the identity, as LAPACK's complete-mode dorgqr does)."""
    n, p = x.shape
    Q = _householder_qr(x, n)[0]
    return np.ascontiguousarray(Q[:, p:])


@njit(cache=True)
def tangent_basis_kernel(x):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.tangent_basis`: Same basis, order and signs
    as the reference tangent_basis."""
    n, p = x.shape
    dim = n * p - p * (p + 1) // 2
    Xp = orth_complement_kernel(x)
    E = np.zeros((dim, n, p))
    r2 = math.sqrt(2.0)
    m = 0
    for i in range(p):
        for j in range(i + 1, p):
            E[m, :, j] = x[:, i] / r2
            E[m, :, i] = -x[:, j] / r2
            m += 1
    for kk in range(n - p):
        for ll in range(p):
            E[m, :, ll] = Xp[:, kk]
            m += 1
    return E


# ---------------------------------------------------------------------- batched
@njit(cache=True)
def exp_batch(X, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.exp`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = exp_kernel(np.ascontiguousarray(X[i]), np.ascontiguousarray(V[i]))
    return out


@njit(cache=True)
def log_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.log`, row by row over stacks."""
    out = np.empty_like(X)
    for i in range(X.shape[0]):
        out[i] = log_kernel(np.ascontiguousarray(X[i]), np.ascontiguousarray(Y[i]))
    return out


@njit(cache=True)
def dist_batch(X, Y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.dist`, row by row over stacks."""
    out = np.empty(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = dist_kernel(np.ascontiguousarray(X[i]), np.ascontiguousarray(Y[i]))
    return out


@njit(cache=True)
def transp_batch(X, Y, V):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.transp`, row by row over stacks (row ``i``
    of the result is the single-point kernel at row ``i`` of the inputs)."""
    out = np.empty_like(V)
    for i in range(X.shape[0]):
        out[i] = transp_kernel(np.ascontiguousarray(X[i]), np.ascontiguousarray(Y[i]), np.ascontiguousarray(V[i]))
    return out




class Stiefel(BatchRows, KernelMetric, _ReferenceStiefel):
    """Verified twin of :class:`prirfed.reference.manifolds.stiefel.Stiefel`: St(n, p) with the Euclidean metric; same
    API as the reference, geometry in Numba. Where a kernel refuses (a step beyond the domain, a result off the
    manifold, an overflow) the reference method is called on the same input, so the refusal carries the reference's
    message."""

    def exp(self, x, v):
        x = self._pt("exp", x)
        v = self._tv("exp", x, v)
        try:
            return exp_kernel(_c(x), _c(v))
        except ValueError:
            return super().exp(x, v)

    def _log_solve(self, method, x, y):
        V, res, it, length = log_core(_c(x), _c(y))
        if not (res <= LOG_TOL and length < math.pi):
            # the reference's Newton (lstsq steps) decides and words the refusal: the two iterations
            # differ in rounding, so a failure here is re-run there
            return super()._log_solve(method, x, y)
        return V

    def log(self, x, y):
        x = self._pt("log", x)
        y = self._pt("log", y, "y")
        return self._out("log", self._log_solve("log", x, y))

    def dist(self, x, y):
        x = self._pt("dist", x)
        y = self._pt("dist", y, "y")
        return float(norm2_kernel(_c(self._log_solve("dist", x, y))))

    def transp(self, x, y, v):
        x = self._pt("transp", x)
        y = self._pt("transp", y, "y")
        v = self._tv("transp", x, v)
        try:
            return transp_kernel(_c(x), _c(y), _c(v))
        except ValueError:
            return super().transp(x, y, v)

    def retr_polar(self, x, v):
        x = self._pt("retr_polar", x)
        v = self._tv("retr_polar", x, v)
        try:
            return retr_polar_kernel(_c(x), _c(v))
        except ValueError:
            return super().retr_polar(x, v)

    def retr(self, x, v):
        x = self._pt("retr", x)
        v = self._tv("retr", x, v)
        try:
            return retr_kernel(_c(x), _c(v))
        except ValueError:
            return super().retr(x, v)

    def _inv_polar(self, method, x, y):
        x = self._pt(method, x)
        y = self._pt(method, y, "y")
        V, status, val = inv_retr_polar_core(_c(x), _c(y))
        if status != 0:  # 1: singular Lyapunov equation, 2: P not positive definite
            return super()._inv_polar(method, x, y)  # the reference decides and words the refusal
        return self._out(method, V)

    def retr_qr(self, x, v):
        x = self._pt("retr_qr", x)
        v = self._tv("retr_qr", x, v)
        return self._point_or_raise("retr_qr", retr_qr_kernel(_c(x), _c(v)))

    def inv_retr_qr(self, x, y):
        x = self._pt("inv_retr_qr", x)
        y = self._pt("inv_retr_qr", y, "y")
        V, status, j, val = inv_retr_qr_core(_c(x), _c(y))
        if status != 0:  # 1: a leading block of X^T Y is singular, 2: a diagonal entry of R is not positive
            return super().inv_retr_qr(x, y)  # the reference decides and words the refusal
        return self._out("inv_retr_qr", V)

    def tangent_basis(self, x):
        x = self._pt("tangent_basis", x)
        return tangent_basis_kernel(_c(x))

    # ------------------------------------------------------------------ batched (BatchRows), (N, n, p)
    def _clearly_points(self, X):
        finite = np.all(np.isfinite(X), axis=(1, 2))
        Xf = np.where(finite[:, None, None], X, 0.0)
        G = np.einsum("kia,kib->kab", Xf, Xf) - np.eye(self.p)
        return finite & (np.max(np.abs(G), axis=(1, 2)) <= 0.5 * self._atol)

    def _clearly_tangents(self, X, V):
        finite = np.all(np.isfinite(V), axis=(1, 2))
        Vf = np.where(finite[:, None, None], V, 0.0)
        nv = np.sqrt(np.einsum("kia,kia->k", Vf, Vf))
        S = np.einsum("kia,kib->kab", X, Vf)
        d = np.max(np.abs(S + np.swapaxes(S, 1, 2)), axis=(1, 2)) * 0.5
        return finite & (nv <= 1e150) & (d <= 0.5 * self._atol * (1.0 + nv))


Stiefel._kernels = sys.modules[__name__]  # KernelMetric calls this module's kernels
Stiefel._batch_kernels = {"exp": exp_batch, "log": log_batch, "dist": dist_batch, "transp": transp_batch}
