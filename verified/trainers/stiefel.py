"""Fused Numba loops on the Stiefel manifold St(d, r) for federated kPCA (002 (3)): RGD, DP-RGD (001
Algorithm 1), PriRFed (000 Algorithm 1 with DP-RSGD or DP-RSVRG) and RFedSVRG / RFedAvg / RFedProx
(002 Algorithms 1-3), with the tangent or the Karcher aggregation.

Mirrors ``reference/trainers/rfed.py`` (``_federated`` and the three local steps),
``reference/trainers/rgd.py`` (``rgd`` with fixed steps, ``dp_rgd``) and ``reference/trainers/prirfed.py``
with ``reference/trainers/local.py`` on ``reference/problems/stiefel_kpca.py``,
with ``reference/manifolds/retracted.py`` for ``maps="retraction"`` and
``reference/trainers/aggregation.py`` for the server step. Same order of random draws as
:mod:`prirfed.verified.trainers.rfed` (whose wrappers call :func:`stiefel_federated_loop`; RGD draws
nothing and :func:`prirfed.verified.trainers.rgd.rgd` calls :func:`stiefel_rgd_loop`), of
:mod:`prirfed.verified.trainers.prirfed` (:func:`stiefel_prirfed_loop`) and of ``rgd.dp_rgd``
(:func:`stiefel_dp_rgd_loop`); the local trainers, clipping (Frobenius norm) and the tangent noise
(one ``rng.standard_normal(dim)`` on the Stiefel tangent basis) are those of the sphere/SPD/Lorentz
loops with the Stiefel helpers.

Why separate loops: the kernels of St(d, r) (Pade expm, Householder QR and Gauss-Newton for Exp/Log;
eigh for the polar retraction, a Kronecker-Lyapunov solve for its inverse) are large, and the
sphere/SPD/Lorentz loops of :mod:`prirfed.verified.trainers.prirfed` already take 1-2 minutes to
compile cold; typing them inside those loops would make every user pay for Stiefel. These loops
type only the Stiefel kernels. Points and tangent vectors are flat float64 vectors of length d r
(row-major X), reshaped to (d, r) for the kernels of :mod:`prirfed.verified.manifolds.stiefel`.

Geometry codes (from :mod:`prirfed.verified.trainers.prirfed`): ``GEOM_STIEFEL`` (maps="exp": the
exact Exp and the Newton Log of the reference Stiefel class) and ``GEOM_STIEFEL_RETR``
(maps="retraction": the polar retraction R_X(V) = (X + V)(I + V^T V)^{-1/2} and its inverse, as
002 ran its experiments). The transport is the projection P_Y(V) = V - Y sym(Y^T V) in both cases
(the reference Stiefel.transp; Retracted keeps it). The agent gradient is
grad f_i(X) = P_X(-A_i X) with the reference problem's own arrays A_i = Z_i^T Z_i
(:func:`prirfed.verified.problems.stiefel_kpca.stiefel_kpca_rgrad_mean_kernel`); the full gradient is
P_X(sum_i p_i grad f_i(X)), the projection applied as the reference's FederatedProblem._rgrad does.
Proofs note: ``proofs_notes/verified_trainers.md`` (section 5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.verified.manifolds import stiefel as _vst
from prirfed.verified.mechanisms import clip_kernel, sample_tangent_gaussian_kernel
from prirfed.verified.problems.stiefel_kpca import (
    stiefel_kpca_rgrad_kernel,
    stiefel_kpca_rgrad_mean_kernel,
    stiefel_proj_kernel,
)

from .prirfed import (
    AGG_TANGENT,
    LOCAL_DP_RSGD,
    GEOM_STIEFEL_RETR,
    KARCHER_MAX_ITER,
    KARCHER_TOL,
    sample_without_replacement_kernel,
)
from .rfed import METHOD_PROX, METHOD_SVRG

__all__ = ["stiefel_federated_loop", "stiefel_rgd_loop", "stiefel_prirfed_loop", "stiefel_dp_rgd_loop", "kpca_arrays"]

# ---------------------------------------------------------------------------- geometry on flat vectors
@njit(cache=True, inline="always")
def _st_exp(geom, d, r, x, v):
    """Exp_X(V) (maps="exp") or the polar retraction R_X(V) (maps="retraction"). A step whose
    ||V||^2 overflows raises (LAPACK would otherwise see infinities)."""
    if not math.isfinite(np.sum(v * v)):
        raise ValueError("Stiefel (verified loops): a step V has ||V||_F^2 not finite (the steps overflow: reduce the step size)")
    if geom == GEOM_STIEFEL_RETR:
        return _vst.retr_polar_kernel(x.reshape((d, r)), v.reshape((d, r))).ravel()
    return _vst.exp_kernel(x.reshape((d, r)), v.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def _st_log(geom, d, r, x, y):
    """Log_X(Y) (Newton on Exp) or the inverse polar retraction R_X^{-1}(Y) (Lyapunov solve)."""
    if geom == GEOM_STIEFEL_RETR:
        return _vst.inv_retr_polar_kernel(x.reshape((d, r)), y.reshape((d, r))).ravel()
    return _vst.log_kernel(x.reshape((d, r)), y.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def _st_transp(d, r, y, v):
    """Projection vector transport T_{X->Y}(V) = P_Y(V) (reference Stiefel.transp)."""
    Y = y.reshape((d, r))
    return _vst.transp_kernel(Y, Y, v.reshape((d, r))).ravel()  # transp_kernel(x, y, v) reads only y


@njit(cache=True, inline="always")
def _st_norm(v):
    """||V||_X = ||V||_F (Euclidean metric)."""
    return math.sqrt(np.sum(v * v))


@njit(cache=True, inline="always")
def _st_agent_grad(d, r, x, A, i):
    """grad f_i(X) = P_X(-A_i X) (reference: StiefelKPCA._rgrad_i)."""
    return stiefel_kpca_rgrad_mean_kernel(x.reshape((d, r)), A[i]).ravel()


@njit(cache=True, inline="always")
def _st_full_grad(d, r, x, A, ps):
    """grad f(X) = P_X(sum_i p_i grad f_i(X)) (reference: FederatedProblem._rgrad)."""
    g = np.zeros(x.shape[0])
    for i in range(ps.shape[0]):
        g = g + ps[i] * _st_agent_grad(d, r, x, A, i)
    return stiefel_proj_kernel(x.reshape((d, r)), g.reshape((d, r))).ravel()


@njit(cache=True)
def _st_all_finite(x):
    for t in x:
        if not np.isfinite(t):
            return False
    return True


@njit(cache=True, inline="always")
def _st_grad_sample(d, r, x, Z, row, c):
    """grad f_ij(X) = P_X(-2 c z (z^T X)) for the sample in row ``row`` of Z (reference: StiefelKPCA._rgrad_ij)."""
    return stiefel_kpca_rgrad_kernel(x.reshape((d, r)), Z[row], c).ravel()


@njit(cache=True, inline="always")
def _st_clip(v, tau):
    """clip_tau(v) = min(1, tau/||v||_F) v; identity for tau = inf (reference: local.clip_or_identity)."""
    if tau == math.inf:
        return v
    return clip_kernel(v, _st_norm(v), tau)


@njit(cache=True, inline="always")
def _st_noise(d, r, x, sigma, rng):
    """eps ~ N_X(0, sigma^2): one rng.standard_normal(dim) combined with the Stiefel tangent basis at X
    (reference: local.tangent_noise -> mechanisms.sample_tangent_gaussian with Stiefel.tangent_basis)."""
    B = _vst.tangent_basis_kernel(x.reshape((d, r)))
    return sample_tangent_gaussian_kernel(rng, B.reshape((B.shape[0], d * r)), sigma)


@njit(cache=True)
def _st_check_finite(x):
    for t in x:
        if not np.isfinite(t):
            raise ValueError("prirfed (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)")


@njit(cache=True, inline="always")
def _st_aggregate(geom, d, r, x, uploads, w, aggregation):
    """Tangent space consensus (8) of 002 or Karcher mean (7) (the iteration of reference
    aggregation.karcher_mean with its defaults tol = 1e-10, max_iter = 1000); as
    prirfed.verified.trainers.prirfed._aggregate with the Stiefel maps."""
    w = w / np.sum(w)
    D = x.shape[0]
    if aggregation == AGG_TANGENT:
        v = np.zeros(D)
        for q in range(uploads.shape[0]):
            v = v + w[q] * _st_log(geom, d, r, x, uploads[q])
        return _st_exp(geom, d, r, x, v)
    y = x
    for it in range(KARCHER_MAX_ITER + 1):
        g = np.zeros(D)
        for q in range(uploads.shape[0]):
            g = g + w[q] * _st_log(geom, d, r, y, uploads[q])
        if _st_norm(g) <= KARCHER_TOL:
            return y
        if it == KARCHER_MAX_ITER:
            break
        y = _st_exp(geom, d, r, y, g)
    raise ValueError("karcher_mean (verified): the gradient norm is still > tol 1e-10 after max_iter = 1000 iterations")


# ---------------------------------------------------------------------------- loops
@njit(cache=True)
def stiefel_federated_loop(geom, d, r, x0, T, k, etas, taus, rng, A, sizes, ps, method, option, size_weights, mu,
                           aggregation, record_every):
    """Algorithms 1-3 of 002 on St(d, r) kPCA (reference: rfed._federated). A (N, d, d) the agents'
    A_i; other arguments and the result (R, x_out) as in rfed.federated_loop."""
    D = x0.shape[0]
    N = sizes.shape[0]
    n_rec = 1
    for t in range(T):
        if (t + 1) % record_every == 0 or t + 1 == T:
            n_rec += 1
    R = np.empty((n_rec, D))
    R[0] = x0
    rr = 1
    outer = np.empty((T if option == 2 else 0, D))
    x = x0.copy()
    for t in range(T):
        S = sample_without_replacement_kernel(rng, N, k)
        full = np.zeros(D)
        if method == METHOD_SVRG:
            full = _st_full_grad(d, r, x, A, ps)
        uploads = np.empty((k, D))
        w = np.empty(k)
        for q in range(k):
            i = S[q]
            cache = np.zeros(D)
            if method == METHOD_SVRG:
                cache = _st_agent_grad(d, r, x, A, i) - full
            xl = x
            pick = taus[i]
            path = np.empty((taus[i], D))
            for ell in range(taus[i]):
                g = _st_agent_grad(d, r, xl, A, i)
                if method == METHOD_SVRG:
                    g = g - _st_transp(d, r, xl, cache)  # (9): P_{x_t -> x_l}(grad f_i(x_t) - grad f(x_t))
                elif method == METHOD_PROX:
                    g = g - mu * _st_log(geom, d, r, xl, x)  # (27): grad f_i - mu Log_{x_l}(x_t)
                xl = _st_exp(geom, d, r, xl, -etas[i] * g)
                if not _st_all_finite(xl):
                    raise ValueError("rfed (verified): a local iterate is not finite (the steps overflow: reduce eta)")
                path[ell] = xl
            if option == 2:
                pick = rng.integers(1, taus[i] + 1)
            uploads[q] = path[pick - 1]
            w[q] = sizes[i] if size_weights else 1.0
        x = _st_aggregate(geom, d, r, x, uploads, w, aggregation)
        if not _st_all_finite(x):
            raise ValueError("rfed (verified): a server iterate is not finite")
        if option == 2:
            outer[t] = x
        if (t + 1) % record_every == 0 or t + 1 == T:
            R[rr] = x
            rr += 1
    if option == 1:
        return R, x
    return R, outer[rng.integers(1, T + 1) - 1].copy()


@njit(cache=True)
def stiefel_rgd_loop(geom, d, r, x0, T, alphas, A, ps, gtol, record_every):
    """x_{t+1} = Exp_{x_t}(-alpha_t grad f(x_t)) (or the retraction) on St(d, r) kPCA, stopping when
    ||grad f(x_t)|| <= gtol (reference: rgd.rgd with armijo=False). Returns (R, rounds, stopped) as
    rgd.rgd_loop."""
    D = x0.shape[0]
    R = np.empty((T + 2, D))
    rounds = np.empty(T + 2, dtype=np.int64)
    R[0] = x0
    rounds[0] = 0
    rr = 1
    x = x0.copy()
    stopped = -1
    for t in range(T):
        g = _st_full_grad(d, r, x, A, ps)
        if _st_norm(g) <= gtol:
            stopped = t
            break
        x = _st_exp(geom, d, r, x, -alphas[t] * g)
        if not _st_all_finite(x):
            raise ValueError("rgd (verified): an iterate is not finite (the steps overflow: reduce alpha)")
        if (t + 1) % record_every == 0 or t + 1 == T:
            R[rr] = x
            rounds[rr] = t + 1
            rr += 1
    if stopped >= 0 and rounds[rr - 1] != stopped:
        R[rr] = x
        rounds[rr] = stopped
        rr += 1
    return R[:rr].copy(), rounds[:rr].copy(), stopped


# ---------------------------------------------------------------------------- PriRFed (000) and DP-RGD (001)
@njit(cache=True, inline="always")
def _st_dp_rsgd_local(geom, d, r, x, Z, C, off, N_i, K, b, sigma, tau, alpha, rng, option):
    """Algorithm 2 of 000 on St(d, r) kPCA (reference: local.dp_rsgd_local; as prirfed._dp_rsgd_local)."""
    D = x.shape[0]
    xk = x
    its = np.empty((K + 1 if option == 2 else 0, D))
    if option == 2:
        its[0] = x
    for k in range(K):
        B = sample_without_replacement_kernel(rng, N_i, b)
        mean = np.zeros(D)
        for q in range(b):
            mean = mean + _st_clip(_st_grad_sample(d, r, xk, Z, off + B[q], C[off + B[q]]), tau)
        eta = mean / b
        if sigma != 0.0:
            eta = eta + _st_noise(d, r, xk, sigma, rng)
        xk = _st_exp(geom, d, r, xk, -alpha * eta)
        _st_check_finite(xk)
        if option == 2:
            its[k + 1] = xk
    if option == 1:
        return xk
    return its[rng.integers(0, K + 1)].copy()


@njit(cache=True, inline="always")
def _st_dp_rsvrg_local(geom, d, r, x, Z, C, off, N_i, K, m, sigma, tau0, tau1, alpha, rng, option):
    """Algorithm 3 of 000 on St(d, r) kPCA (reference: local.dp_rsvrg_local; as prirfed._dp_rsvrg_local),
    with the projection transport of the reference Stiefel class."""
    D = x.shape[0]
    x_tilde = x
    inner = np.empty((K * m if option == 2 else 0, D))
    for k in range(K):
        xkj = x_tilde
        g = np.zeros(D)
        for j in range(N_i):
            g = g + _st_clip(_st_grad_sample(d, r, x_tilde, Z, off + j, C[off + j]), tau0)
        g = g / N_i
        for j in range(m):
            if option == 2:
                inner[k * m + j] = xkj
            l = rng.integers(0, N_i)
            if sigma != 0.0:
                eps = _st_noise(d, r, xkj, sigma, rng)
            else:
                eps = np.zeros(D)
            correction = _st_clip(_st_grad_sample(d, r, x_tilde, Z, off + l, C[off + l]), tau1) - g
            eta = (_st_clip(_st_grad_sample(d, r, xkj, Z, off + l, C[off + l]), tau1)
                   - _st_transp(d, r, xkj, correction) + eps)
            xkj = _st_exp(geom, d, r, xkj, -alpha * eta)
            _st_check_finite(xkj)
        x_tilde = xkj
    if option == 1:
        return x_tilde
    return inner[rng.integers(0, K * m)].copy()


@njit(cache=True)
def stiefel_prirfed_loop(geom, d, r, x0, T, s, alphas, rng, Z, C, offsets, sizes, local, K, bs, m, sigmas, tau,
                         tau0, tau1, option, local_option, record_every, aggregation):
    """Algorithm 1 of 000 on St(d, r) kPCA (reference: prirfed.prirfed); arguments and result as
    prirfed.prirfed_loop (Z the stacked records z_ij, C their scales c_i)."""
    D = x0.shape[0]
    N = sizes.shape[0]
    n_rec = 1
    for t in range(T):
        if (t + 1) % record_every == 0 or t + 1 == T:
            n_rec += 1
    R = np.empty((n_rec, D))
    R[0] = x0
    rr = 1
    outer = np.empty((T if option == 2 else 0, D))
    x = x0.copy()
    for t in range(T):
        S = sample_without_replacement_kernel(rng, N, s)
        uploads = np.empty((s, D))
        w = np.empty(s)
        for q in range(s):
            i = S[q]
            if local == LOCAL_DP_RSGD:
                uploads[q] = _st_dp_rsgd_local(geom, d, r, x, Z, C, offsets[i], sizes[i], K, bs[i], sigmas[i], tau,
                                               alphas[t], rng, local_option)
            else:
                uploads[q] = _st_dp_rsvrg_local(geom, d, r, x, Z, C, offsets[i], sizes[i], K, m, sigmas[i], tau0,
                                                tau1, alphas[t], rng, local_option)
            w[q] = sizes[i]
        x = _st_aggregate(geom, d, r, x, uploads, w, aggregation)
        _st_check_finite(x)
        if option == 2:
            outer[t] = x
        if (t + 1) % record_every == 0 or t + 1 == T:
            R[rr] = x
            rr += 1
    if option == 1:
        return R, x
    return R, outer[rng.integers(1, T + 1) - 1].copy()


@njit(cache=True)
def stiefel_dp_rgd_loop(geom, d, r, x0, T, alphas, rng, Z, C, b, sigma, tau, output, c_avg, record_every):
    """Algorithm 1 of 001 on the pooled records, St(d, r) kPCA (reference: rgd.dp_rgd; as rgd.dp_rgd_loop)."""
    D = x0.shape[0]
    n_samples = Z.shape[0]
    n_rec = 1
    for t in range(T):
        if (t + 1) % record_every == 0 or t + 1 == T:
            n_rec += 1
    R = np.empty((n_rec, D))
    R[0] = x0
    rr = 1
    its = np.empty((T if output == 2 else 0, D))
    w = x0.copy()
    wbar = x0.copy()
    for t in range(T):
        if output == 2:
            its[t] = w
        B = sample_without_replacement_kernel(rng, n_samples, b)
        mean = np.zeros(D)
        for q in range(b):
            mean = mean + _st_clip(_st_grad_sample(d, r, w, Z, B[q], C[B[q]]), tau)
        zeta = mean / b
        if sigma != 0.0:
            zeta = zeta + _st_noise(d, r, w, sigma, rng)
        w = _st_exp(geom, d, r, w, -alphas[t] * zeta)
        if not _st_all_finite(w):
            raise ValueError("dp_rgd (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)")
        if output == 3:
            if t == 0:
                wbar = w
            else:
                wbar = _st_exp(geom, d, r, wbar, (c_avg / (t + 1)) * _st_log(geom, d, r, wbar, w))
        if (t + 1) % record_every == 0 or t + 1 == T:
            R[rr] = w
            rr += 1
    if output == 1:
        return R, w
    if output == 2:
        return R, its[rng.integers(0, T)].copy()
    return R, wbar


def kpca_arrays(problem):
    """The agents' A_i = Z_i^T Z_i of a StiefelKPCA problem stacked as (N, d, d) (the reference's own arrays)."""
    return np.ascontiguousarray(np.stack(problem.A_i), dtype=np.float64)
