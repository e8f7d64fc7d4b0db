"""Verified twin of :mod:`prirfed.reference.trainers.prirfed` (PriRFed, Algorithm 1 of 000), fused in Numba.

Mirrors ``reference/trainers/prirfed.py`` with its local trainers ``reference/trainers/local.py``
(DP-RSGD, Algorithm 2; DP-RSVRG, Algorithm 3), the tangent mean of
``reference/trainers/aggregation.py`` and ``sample_without_replacement`` of
``reference/trainers/base.py``. Same signature, same defaults, same result (``TrainResult`` with the
reference ``History`` and the event of ``reference/trainers/privacy.py``), and the SAME ORDER OF
RANDOM DRAWS (the contract written in the reference docstrings):

- per round t: the agent set S_t, ``s`` draws ``rng.integers(j, N)`` (partial Fisher-Yates);
- then, for each selected agent in the drawn order, its local training:
  DP-RSGD, per step k: the batch (``b_i`` draws ``rng.integers(j, N_i)``), then if sigma_i > 0
  the tangent noise (one ``rng.standard_normal(dim)``, combined with the manifold's
  ``tangent_basis``); Option 2: one ``rng.integers(0, K + 1)`` after the steps.
  DP-RSVRG, per inner step: ``rng.integers(0, N_i)``, then the noise if sigma_i > 0;
  Option 2: one ``rng.integers(0, K * m)`` after the loops;
- after the T rounds, Option 2 draws one ``rng.integers(1, T + 1)``.

Design (one fused loop, no per-step Python): the whole T-round loop is the single
``@njit(cache=True)`` function :func:`prirfed_loop`. Numba cannot cache a function that takes other
jitted functions as arguments (each dispatcher is its own type, so the on-disk cache misses in
every new process), so the loop instead dispatches on two integer codes, the manifold
(``GEOM_SPHERE``, ``GEOM_SPD``, ``GEOM_LORENTZ``) and the problem (``PROB_SPHERE_PCA``,
``PROB_SPD_FRECHET``, ``PROB_HSP``), in five small helpers (:func:`_exp`, :func:`_log`, :func:`_transp`, :func:`_norm`, :func:`_noise`) and
:func:`_grad`. Every point and tangent vector in the loop is a FLAT float64 vector (an n x n SPD
matrix is stored as its n^2 entries, reshaped to (n, n) for the SPD kernels), so both branches of
every helper type-check and the loop is one compiled function. Adding a (manifold, problem) pair
means one branch in each helper and one code. The kernels are those of
:mod:`prirfed.verified.manifolds` and :mod:`prirfed.verified.problems` (no fastmath anywhere:
this is a privacy path). The helpers and the two local trainers are ``inline="always"``: they are
typed inside :func:`prirfed_loop` rather than compiled and linked one by one, which halves the
cold compile time (45 s -> 25 s on the 2-core test machine under load).

The loop returns the iterates at the recorded rounds; :func:`prirfed` (the wrapper) validates the
inputs exactly like the reference, computes the history (f, ||grad f||, error to the optimum)
with the problem's own methods, so that histories of both twins are comparable, and builds the
privacy event with :func:`prirfed.reference.trainers.privacy.prirfed_run_event`.

Supported: ``aggregation="tangent"`` (3.2) and ``"karcher"`` (3.1) (:func:`_aggregate`, the iteration
of reference ``karcher_mean``); ``maps="exp"`` on sphere PCA, the SPD Frechet mean and hyperbolic
structured prediction on the Lorentz model (reference or verified problem classes;
``GEOM_LORENTZ``/``PROB_HSP``, per-sample gradient -2 alpha_ij(w) Log_x(y_ij)); ``maps="retraction"``
on the sphere (code ``GEOM_SPHERE_RETR``: retr/inv_retr in place of Exp/Log, the sphere's transport,
norm and basis, as reference ``Retracted``); Stiefel kPCA with either maps in the separate loop
:func:`prirfed.verified.trainers.stiefel.stiefel_prirfed_loop`. Anything else raises ``ValueError``.
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.reference.manifolds.spd import SPD as _SPD
from prirfed.reference.manifolds.sphere import Sphere as _Sphere
from prirfed.reference.problems.spd_frechet import SPDFrechetMean as _SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA as _SpherePCA
from prirfed.reference.trainers.base import History, TrainResult, check_int
from prirfed.reference.trainers.prirfed import _per_agent, step_sizes
from prirfed.reference.trainers.privacy import prirfed_run_event
from prirfed.reference.manifolds.lorentz import Lorentz as _Lorentz
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction as _HSP
from prirfed.verified.manifolds import lorentz as _vlorentz
from prirfed.verified.manifolds import spd as _vspd
from prirfed.verified.manifolds import sphere as _vsphere
from prirfed.verified.mechanisms import clip_kernel, sample_tangent_gaussian_kernel
from prirfed.verified.problems.hsp import hsp_rgrad_kernel
from prirfed.verified.problems.spd_frechet import spd_frechet_rgrad_kernel
from prirfed.verified.problems.sphere_pca import sphere_pca_rgrad_kernel

__all__ = ["prirfed", "prirfed_loop", "sample_without_replacement_kernel", "problem_arrays", "fused_settings_only",
           "GEOM_SPHERE", "GEOM_SPHERE_RETR", "GEOM_STIEFEL", "GEOM_STIEFEL_RETR", "PROB_STIEFEL_KPCA",
           "AGG_TANGENT", "AGG_KARCHER",
           "GEOM_SPD", "GEOM_LORENTZ", "PROB_SPHERE_PCA", "PROB_SPD_FRECHET", "PROB_HSP"]

# Literals (Numba freezes module globals into its on-disk cache).
GEOM_SPHERE = 0
GEOM_SPD = 1
GEOM_LORENTZ = 2
GEOM_SPHERE_RETR = 3  # the sphere seen through its retraction (maps="retraction"): Exp := retr, Log := inv_retr
GEOM_STIEFEL = 4  # St(d, r), maps="exp": fused in prirfed.verified.trainers.stiefel (its own loops)
GEOM_STIEFEL_RETR = 5  # St(d, r), maps="retraction" (polar pair): idem
PROB_SPHERE_PCA = 0
PROB_SPD_FRECHET = 1
PROB_HSP = 2
PROB_STIEFEL_KPCA = 3
LOCAL_DP_RSGD = 0
LOCAL_DP_RSVRG = 1
AGG_TANGENT = 0  # tangent mean (3.2) of 000 / (8) of 002
AGG_KARCHER = 1  # Karcher mean (3.1) of 000 / (7) of 002 (reference: aggregation.karcher_mean)
#: karcher_mean's defaults in reference/trainers/aggregation.py (a test checks they agree)
KARCHER_TOL = 1e-10
KARCHER_MAX_ITER = 1000


# ---------------------------------------------------------------------------- geometry on flat vectors
@njit(cache=True, inline="always")
def _exp(geom, n, x, v):
    """Exp_x(v) (R_x(v) for the retraction codes)."""
    if geom == GEOM_SPHERE:
        return _vsphere.exp_kernel(x, v)
    if geom == GEOM_SPHERE_RETR:
        return _vsphere.retr_kernel(x, v)
    if geom == GEOM_LORENTZ:
        return _vlorentz.exp_kernel(x, v)
    return _vspd.exp_kernel(x.reshape((n, n)), v.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def _log(geom, n, x, y):
    """Exp_x^{-1}(y) (R_x^{-1}(y) for the retraction codes)."""
    if geom == GEOM_SPHERE:
        return _vsphere.log_kernel(x, y)
    if geom == GEOM_SPHERE_RETR:
        return _vsphere.inv_retr_kernel(x, y)
    if geom == GEOM_LORENTZ:
        return _vlorentz.log_kernel(x, y)
    return _vspd.log_kernel(x.reshape((n, n)), y.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def _transp(geom, n, x, y, v):
    """Parallel transport Gamma_x^y v (the retracted sphere keeps the sphere's, as reference Retracted)."""
    if geom == GEOM_SPHERE or geom == GEOM_SPHERE_RETR:
        return _vsphere.transp_kernel(x, y, v)
    if geom == GEOM_LORENTZ:
        return _vlorentz.transp_kernel(x, y, v)
    return _vspd.transp_kernel(x.reshape((n, n)), y.reshape((n, n)), v.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def _norm(geom, n, x, v):
    """||v||_x."""
    if geom == GEOM_SPHERE or geom == GEOM_SPHERE_RETR:
        return _vsphere.norm_kernel(x, v)
    if geom == GEOM_LORENTZ:
        return _vlorentz.norm_kernel(x, v)
    return _vspd.norm_kernel(x.reshape((n, n)), v.reshape((n, n)))


@njit(cache=True, inline="always")
def _noise(geom, n, x, sigma, rng):
    """eps ~ N_x(0, sigma^2): one rng.standard_normal(dim), combined with the tangent basis at x
    (reference: local.tangent_noise -> mechanisms.sample_tangent_gaussian)."""
    if geom == GEOM_SPHERE or geom == GEOM_SPHERE_RETR:
        E = _vsphere.tangent_basis_kernel(x)
    elif geom == GEOM_LORENTZ:
        E = _vlorentz.tangent_basis_kernel(x)
    else:
        B = _vspd.tangent_basis_kernel(x.reshape((n, n)))
        E = B.reshape((B.shape[0], n * n))
    return sample_tangent_gaussian_kernel(rng, E, sigma)


@njit(cache=True, inline="always")
def _grad(prob, n, x, Z, row, c):
    """grad f_{i,j}(x) for the sample stored in row ``row`` of the flat data Z, with that sample's scale c
    (c_i for sphere PCA, c for the SPD Frechet mean, alpha_ij(w) for HSP)."""
    if prob == PROB_SPHERE_PCA:
        return sphere_pca_rgrad_kernel(x, Z[row], c)
    if prob == PROB_HSP:
        return hsp_rgrad_kernel(x, Z[row], c)
    return spd_frechet_rgrad_kernel(x.reshape((n, n)), Z[row].reshape((n, n)), c).ravel()


@njit(cache=True, inline="always")
def _clip_or_identity(geom, n, x, v, tau):
    """clip_tau(v) = min(1, tau/||v||_x) v; identity for tau = inf (reference: local.clip_or_identity)."""
    if tau == math.inf:
        return v
    return clip_kernel(v, _norm(geom, n, x, v), tau)


@njit(cache=True)
def _check_finite(x):
    for t in x:
        if not np.isfinite(t):
            raise ValueError("prirfed (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)")


@njit(cache=True, inline="always")
def _aggregate(geom, n, x, uploads, w, aggregation):
    """The server step from x: the tangent mean (3.2) of 000 / (8) of 002, Exp_x(sum_q w_q Log_x(x_q)),
    or the Karcher mean (3.1) / (7) by the iteration of reference aggregation.karcher_mean (unit-step
    Riemannian gradient descent on (1/2) sum_q w_q dist^2(., x_q) from x, stopping at the first
    iterate with ||sum_q w_q Log(x_q)|| <= KARCHER_TOL, raising after KARCHER_MAX_ITER steps).
    w is normalised here (w / sum w), as the reference does."""
    w = w / np.sum(w)
    D = x.shape[0]
    if aggregation == AGG_TANGENT:
        v = np.zeros(D)
        for q in range(uploads.shape[0]):
            v = v + w[q] * _log(geom, n, x, uploads[q])
        return _exp(geom, n, x, v)
    y = x
    for it in range(KARCHER_MAX_ITER + 1):
        g = np.zeros(D)
        for q in range(uploads.shape[0]):
            g = g + w[q] * _log(geom, n, y, uploads[q])
        if _norm(geom, n, y, g) <= KARCHER_TOL:
            return y
        if it == KARCHER_MAX_ITER:
            break
        y = _exp(geom, n, y, g)
    raise ValueError("karcher_mean (verified): the gradient norm is still > tol 1e-10 after max_iter = 1000 iterations")


# ---------------------------------------------------------------------------- random draws
@njit(cache=True)
def sample_without_replacement_kernel(rng, n, k):
    """k distinct indices of range(n) by a partial Fisher-Yates shuffle: one rng.integers(j, n)
    per j = 0..k-1 (reference: trainers.base.sample_without_replacement, the same loop)."""
    perm = np.arange(n)
    for j in range(k):
        r = rng.integers(j, n)
        t = perm[j]
        perm[j] = perm[r]
        perm[r] = t
    return perm[:k].copy()


# ---------------------------------------------------------------------------- local training
@njit(cache=True, inline="always")
def _dp_rsgd_local(geom, prob, n, x, Z, C, off, N_i, K, b, sigma, tau, alpha, rng, option):
    """Algorithm 2 of 000 (reference: local.dp_rsgd_local), on flat vectors."""
    D = x.shape[0]
    xk = x
    its = np.empty((K + 1 if option == 2 else 0, D))
    if option == 2:
        its[0] = x
    for k in range(K):
        B = sample_without_replacement_kernel(rng, N_i, b)
        mean = np.zeros(D)
        for q in range(b):
            g = _grad(prob, n, xk, Z, off + B[q], C[off + B[q]])
            mean = mean + _clip_or_identity(geom, n, xk, g, tau)
        eta = mean / b
        if sigma != 0.0:
            eta = eta + _noise(geom, n, xk, sigma, rng)
        xk = _exp(geom, n, xk, -alpha * eta)
        _check_finite(xk)
        if option == 2:
            its[k + 1] = xk
    if option == 1:
        return xk
    return its[rng.integers(0, K + 1)].copy()


@njit(cache=True, inline="always")
def _dp_rsvrg_local(geom, prob, n, x, Z, C, off, N_i, K, m, sigma, tau0, tau1, alpha, rng, option):
    """Algorithm 3 of 000 (reference: local.dp_rsvrg_local), on flat vectors."""
    D = x.shape[0]
    x_tilde = x
    inner = np.empty((K * m if option == 2 else 0, D))
    for k in range(K):
        xkj = x_tilde
        g = np.zeros(D)
        for j in range(N_i):
            g = g + _clip_or_identity(geom, n, x_tilde, _grad(prob, n, x_tilde, Z, off + j, C[off + j]), tau0)
        g = g / N_i
        for j in range(m):
            if option == 2:
                inner[k * m + j] = xkj
            l = rng.integers(0, N_i)
            if sigma != 0.0:
                eps = _noise(geom, n, xkj, sigma, rng)
            else:
                eps = np.zeros(D)
            correction = _clip_or_identity(geom, n, x_tilde, _grad(prob, n, x_tilde, Z, off + l, C[off + l]), tau1) - g
            eta = (_clip_or_identity(geom, n, xkj, _grad(prob, n, xkj, Z, off + l, C[off + l]), tau1)
                   - _transp(geom, n, x_tilde, xkj, correction) + eps)
            xkj = _exp(geom, n, xkj, -alpha * eta)
            _check_finite(xkj)
        x_tilde = xkj
    if option == 1:
        return x_tilde
    return inner[rng.integers(0, K * m)].copy()


# ---------------------------------------------------------------------------- the fused loop
@njit(cache=True)
def prirfed_loop(geom, prob, n, x0, T, s, alphas, rng, Z, C, offsets, sizes, local, K, bs, m, sigmas,
                 tau, tau0, tau1, option, local_option, record_every, aggregation=AGG_TANGENT):
    """Algorithm 1 of 000 (reference: prirfed.prirfed; maps through ``geom``, aggregation AGG_TANGENT or AGG_KARCHER).

    Flat inputs: x0 (D,), Z (sum N_i, D) the samples of all agents stacked, agent i in rows
    offsets[i] .. offsets[i] + sizes[i] - 1, C (sum N_i,) the scale of each sample's gradient (see
    :func:`_grad`), bs/sigmas (N,).
    Returns (R, x_out): R (number of recorded rounds, D) the iterates x^(0) and x^(t+1) for
    (t + 1) % record_every == 0 or t + 1 == T; x_out the output (Option 1: x^(T); Option 2:
    uniform from x^(1..T) by one rng.integers(1, T + 1)).
    """
    D = x0.shape[0]
    N = sizes.shape[0]
    n_rec = 1
    for t in range(T):
        if (t + 1) % record_every == 0 or t + 1 == T:
            n_rec += 1
    R = np.empty((n_rec, D))
    R[0] = x0
    r = 1
    outer = np.empty((T if option == 2 else 0, D))
    x = x0.copy()
    for t in range(T):
        S = sample_without_replacement_kernel(rng, N, s)
        uploads = np.empty((s, D))
        w = np.empty(s)
        for q in range(s):
            i = S[q]
            if local == LOCAL_DP_RSGD:
                uploads[q] = _dp_rsgd_local(geom, prob, n, x, Z, C, offsets[i], sizes[i], K, bs[i], sigmas[i],
                                            tau, alphas[t], rng, local_option)
            else:
                uploads[q] = _dp_rsvrg_local(geom, prob, n, x, Z, C, offsets[i], sizes[i], K, m, sigmas[i],
                                             tau0, tau1, alphas[t], rng, local_option)
            w[q] = sizes[i]
        # tangent mean (3.2) or Karcher mean (3.1), w_q = N_q / sum_{S_t} N_k
        x = _aggregate(geom, n, x, uploads, w, aggregation)
        _check_finite(x)
        if option == 2:
            outer[t] = x
        if (t + 1) % record_every == 0 or t + 1 == T:
            R[r] = x
            r += 1
    if option == 1:
        return R, x
    return R, outer[rng.integers(1, T + 1) - 1].copy()


# ---------------------------------------------------------------------------- public wrapper
def problem_arrays(where, problem, maps="exp"):
    """(geom, prob, n, Z, C, offsets) of a supported (problem, maps) pair for the fused loops, else
    ``ValueError`` naming ``where``: Z (sum N_i, width) the flat samples of all agents stacked in agent
    order (the pooled order of 001's trainers), C (sum N_i,) the scale of each sample's gradient
    (sphere PCA c_i, SPD Frechet mean c, HSP alpha_ij(w), Stiefel kPCA c_i), offsets (N,) the first
    row of each agent. ``maps="retraction"`` is fused on the sphere (GEOM_SPHERE_RETR) and on Stiefel
    (GEOM_STIEFEL_RETR, polar pair; n = r there, and the loops of
    :mod:`prirfed.verified.trainers.stiefel` run it)."""
    if maps not in ("exp", "retraction"):
        raise ValueError(f"{where}: maps must be 'exp' or 'retraction' (got {maps!r})")
    from prirfed.reference.manifolds.stiefel import Stiefel as _Stiefel
    from prirfed.reference.problems.stiefel_kpca import StiefelKPCA as _StiefelKPCA

    N_i = [int(k) for k in problem.sizes]
    offsets = np.concatenate([[0], np.cumsum(N_i)[:-1]]).astype(np.int64)
    if isinstance(problem, _SpherePCA) and isinstance(problem.manifold, _Sphere):
        Z = np.ascontiguousarray(np.concatenate(problem.Z, axis=0), dtype=np.float64)
        C = np.repeat(np.asarray(problem.c, dtype=np.float64), N_i)
        return GEOM_SPHERE if maps == "exp" else GEOM_SPHERE_RETR, PROB_SPHERE_PCA, 0, Z, C, offsets
    if isinstance(problem, _StiefelKPCA) and isinstance(problem.manifold, _Stiefel):
        Z = np.ascontiguousarray(np.concatenate(problem.Z, axis=0), dtype=np.float64)
        C = np.repeat(np.asarray(problem.c, dtype=np.float64), N_i)
        return (GEOM_STIEFEL if maps == "exp" else GEOM_STIEFEL_RETR, PROB_STIEFEL_KPCA, int(problem.r), Z, C,
                offsets)
    if maps != "exp":
        if isinstance(problem, (_SPDFrechetMean, _HSP)):
            raise ValueError(f"{where}: maps='retraction' is fused only on the sphere and Stiefel (got "
                             f"{type(problem).__name__} on {type(problem.manifold).__name__}); use the reference")
    if isinstance(problem, _SPDFrechetMean) and isinstance(problem.manifold, _SPD):
        n = int(problem.n)
        Z = np.ascontiguousarray(np.concatenate(problem.Z, axis=0).reshape(sum(N_i), n * n), dtype=np.float64)
        return GEOM_SPD, PROB_SPD_FRECHET, n, Z, np.full(sum(N_i), float(problem.c)), offsets
    if isinstance(problem, _HSP) and isinstance(problem.manifold, _Lorentz):
        Z = np.ascontiguousarray(np.concatenate(problem.Y, axis=0), dtype=np.float64)
        C = np.ascontiguousarray(np.concatenate([np.asarray(a, dtype=np.float64) for a in problem.alpha]))
        return GEOM_LORENTZ, PROB_HSP, 0, Z, C, offsets
    raise ValueError(f"{where}: the verified trainers support SpherePCA, SPDFrechetMean, "
                     f"HyperbolicStructuredPrediction and StiefelKPCA (got {type(problem).__name__} on "
                     f"{type(problem.manifold).__name__})")


def fused_settings_only(where, reference, rng=None, *, aggregation="tangent", karcher=True):
    """Refuse, with a ValueError naming the reference module to use instead, the settings the fused
    loops do not implement (``karcher=False``: the Karcher aggregation) and a ``rng`` that is not a
    ``numpy.random.Generator`` (``rng=None``: the trainer draws nothing). Returns the aggregation
    code. (Which maps are fused depends on the problem: :func:`problem_arrays` decides.)"""
    if aggregation not in ("tangent", "karcher"):
        raise ValueError(f"{where}: aggregation must be 'tangent' or 'karcher' (got {aggregation!r})")
    if aggregation == "karcher" and not karcher:
        raise ValueError(f"{where}: only aggregation='tangent' is fused here (got {aggregation!r}); "
                         f"use {reference} for 'karcher'")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    return AGG_TANGENT if aggregation == "tangent" else AGG_KARCHER


def prirfed(problem, x0, T, s, alpha, rng, *, local="dp_rsgd", K=1, b=None, m=1, sigma=0.0,
            tau=math.inf, tau0=None, tau1=None, option=1, local_option=None, aggregation="tangent",
            record_every=1, keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.prirfed.prirfed` (Algorithm 1 of 000):
    same parameters, defaults, draws and result; the T rounds run in :func:`prirfed_loop`.
    Both aggregations; ``maps="retraction"`` on the sphere and Stiefel (others raise ``ValueError``);
    Stiefel kPCA runs in :func:`prirfed.verified.trainers.stiefel.stiefel_prirfed_loop`."""
    where = "prirfed (verified)"
    agg = fused_settings_only(where, "prirfed.reference.trainers.prirfed", rng, aggregation=aggregation)
    geom, prob, n, Z, C, offsets = problem_arrays(where, problem, maps)
    M = problem.manifold
    N = problem.N
    T = check_int(where, "T", T)
    s = check_int(where, "s", s, 1, N)
    if option not in (1, 2):
        raise ValueError(f"{where}: option must be 1 or 2 (got {option!r})")
    if local not in ("dp_rsgd", "dp_rsvrg"):
        raise ValueError(f"{where}: local must be 'dp_rsgd' or 'dp_rsvrg' (got {local!r})")
    alphas = step_sizes(where, alpha, T)
    sigmas = _per_agent(where, "sigma", sigma, N)
    if np.any(sigmas < 0) or np.any(~np.isfinite(sigmas)):
        raise ValueError(f"{where}: sigma must be finite and >= 0 (got {sigma!r})")
    b_arr = _per_agent(where, "b", problem.sizes if b is None else b, N)
    for i in range(N):
        check_int(where, f"b[{i}]", b_arr[i], 1, problem.sizes[i])
    bs = b_arr.astype(np.int64)
    local_option = option if local_option is None else local_option
    if local_option not in (1, 2):
        raise ValueError(f"{where}: local_option must be 1 or 2 (got {local_option!r})")
    tau0 = tau if tau0 is None else tau0
    tau1 = tau if tau1 is None else tau1
    K = check_int(where, "K", K)
    m = check_int(where, "m", m)
    for name, val in (("tau", tau), ("tau0", tau0), ("tau1", tau1)):
        if not (float(val) > 0):
            raise ValueError(f"{where}: clipping threshold {name} must be > 0 (got {val!r})")
    record_every = check_int(where, "record_every", record_every)

    x = M.check_point(x0, where=where)
    sizes = np.asarray(problem.sizes, dtype=np.int64)
    x = np.ascontiguousarray(x, dtype=np.float64).ravel()
    code = LOCAL_DP_RSGD if local == "dp_rsgd" else LOCAL_DP_RSVRG
    if geom in (GEOM_STIEFEL, GEOM_STIEFEL_RETR):
        from .stiefel import stiefel_prirfed_loop

        R, x_out = stiefel_prirfed_loop(geom, problem.d, problem.r, x, T, s, alphas, rng, Z, C, offsets, sizes, code,
                                        K, bs, m, sigmas, float(tau), float(tau0), float(tau1), int(option),
                                        int(local_option), record_every, agg)
    else:
        R, x_out = prirfed_loop(geom, prob, n, x, T, s, alphas, rng, Z, C, offsets, sizes, code, K, bs, m, sigmas,
                                float(tau), float(tau0), float(tau1), int(option), int(local_option), record_every,
                                agg)
    shape = tuple(M.ambient_shape)
    rounds = [0] + [t + 1 for t in range(T) if (t + 1) % record_every == 0 or t + 1 == T]
    hist = History()
    for r, t in enumerate(rounds):
        hist.record(problem, t, R[r].reshape(shape), keep_iterates)
    event, why = prirfed_run_event(problem, local=local, N=N, s=s, T=T, K=K, m=m, sigmas=sigmas, bs=bs, tau=tau,
                                   tau0=tau0, tau1=tau1)
    return TrainResult(x=x_out.reshape(shape), history=hist, event=event,
                       info=dict(T=T, s=s, K=K, m=m, local=local, sigma=sigmas, b=bs, tau=tau, tau0=tau0, tau1=tau1,
                                 privacy=why))
