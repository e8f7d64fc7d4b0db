"""Verified twins of :mod:`prirfed.reference.trainers.rgd`: RGD (fixed step) and DP-RGD (001 Algorithm 1), fused in Numba.

Mirrors ``reference/trainers/rgd.py``: same signatures, defaults, validation messages' content,
history, event and the SAME ORDER OF RANDOM DRAWS (the contract in the reference module docstring):
per DP-RGD step the batch B_t (``b`` draws ``rng.integers(j, n)``, partial Fisher-Yates over the
pooled samples, agent by agent in concatenation order), then, if sigma > 0, the tangent noise (one
``rng.standard_normal(dim)`` combined with the manifold's tangent basis); Output 2 draws one
``rng.integers(0, T)`` after the loop. RGD draws nothing.

Each run is one ``@njit(cache=True)`` loop (:func:`rgd_loop`, :func:`dp_rgd_loop`) written once
for every geometry family of :mod:`prirfed.verified.trainers.geometry` (integer manifold/problem
codes of :mod:`prirfed.verified.trainers.codes`: sphere PCA, SPD Frechet mean, HSP on the Lorentz
model, Stiefel kPCA). On the flat family the full gradient is
grad f(x) = sum_i p_i (1/N_i) sum_j grad f_ij(x) summed in that order (the reference projects the
sums onto T_x; the two agree to rounding, see the note); on Stiefel it is P_X(sum_i p_i grad f_i(X)).

``maps="retraction"`` is fused on the sphere (``GEOM_SPHERE_RETR``) and on Stiefel.
Refused with ``ValueError`` (use the reference): ``armijo=True`` in :func:`rgd`, the retraction on
SPD or Lorentz, other problems. Deviation: the reference computes the geodesic average (Output 3) in
every run; the verified loop computes it only when ``output=3`` (so a run with output 1 or 2 can
not fail in an averaging step whose result is not used).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.reference.checks import check_int
from prirfed.reference.trainers.base import TrainResult
from prirfed.reference.trainers.prirfed import step_sizes
from prirfed.reference.trainers.privacy import dp_rgd_run_event
from prirfed.reference.trainers.rgd import dp_rgd_settings
from prirfed.verified.kernels import all_finite_kernel

from .arrays import flat_start, fused_settings_only, history_of, problem_arrays
from .draws import sample_without_replacement_kernel
from .geometry import clip_or_identity, exp, full_grad, grad_sample, log, noise, norm
from .records import is_recorded, recorded_rounds, start_rounds

__all__ = ["rgd", "dp_rgd", "rgd_loop", "dp_rgd_loop"]


@njit(cache=True)
def rgd_loop(geom, prob, dims, Z, C, offsets, sizes, A, ps, x0, T, alphas, gtol, record_every):
    """x_{t+1} = Exp_{x_t}(-alpha_t grad f(x_t)), stopping when ||grad f(x_t)|| <= gtol
    (reference: rgd.rgd with armijo=False). The first nine arguments are those of every fused loop
    (:class:`prirfed.verified.trainers.arrays.FusedArrays`). Returns (R, rounds, stopped): the
    recorded iterates, their round numbers (as the reference History), and the iteration of the
    stop (-1: none)."""
    D = x0.shape[0]
    R = np.empty((T + 2, D))
    rounds = np.empty(T + 2, dtype=np.int64)
    R[0] = x0
    rounds[0] = 0
    r = 1
    x = x0.copy()
    stopped = -1
    for t in range(T):
        g = full_grad(prob, dims, x, Z, C, offsets, sizes, A, ps)
        if norm(geom, dims, x, g) <= gtol:
            stopped = t
            break
        x = exp(geom, dims, x, -alphas[t] * g)
        if not all_finite_kernel(x):
            raise ValueError("rgd (verified): an iterate is not finite (the steps overflow: reduce alpha)")
        if is_recorded(t, T, record_every):
            R[r] = x
            rounds[r] = t + 1
            r += 1
    if stopped >= 0 and rounds[r - 1] != stopped:
        R[r] = x
        rounds[r] = stopped
        r += 1
    return R[:r].copy(), rounds[:r].copy(), stopped


@njit(cache=True)
def dp_rgd_loop(geom, prob, dims, Z, C, offsets, sizes, A, ps, x0, T, alphas, rng, b, sigma, tau, output, c_avg,
                record_every):
    """Algorithm 1 of 001 on the pooled samples (reference: rgd.dp_rgd). The first nine arguments
    are those of every fused loop (:class:`prirfed.verified.trainers.arrays.FusedArrays`). Returns
    (R, x_out): the iterates at rounds 0 and t + 1 with (t + 1) % record_every == 0 or t + 1 == T,
    and the output (1: w_T; 2: w_k, k = rng.integers(0, T); 3: the geodesic average with
    c_t = c_avg / (t + 1))."""
    D = x0.shape[0]
    n_samples = Z.shape[0]
    R, r, its, w = start_rounds(T, record_every, output == 2, x0)
    wbar = x0.copy()
    for t in range(T):
        if output == 2:
            its[t] = w
        B = sample_without_replacement_kernel(rng, n_samples, b)
        mean = np.zeros(D)
        for q in range(b):
            g = grad_sample(prob, dims, w, Z, B[q], C[B[q]])
            mean = mean + clip_or_identity(geom, dims, w, g, tau)
        zeta = mean / b
        if sigma != 0.0:
            zeta = zeta + noise(geom, dims, w, sigma, rng)
        w = exp(geom, dims, w, -alphas[t] * zeta)
        if not all_finite_kernel(w):
            raise ValueError("dp_rgd (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)")
        if output == 3:
            if t == 0:
                wbar = w
            else:
                wbar = exp(geom, dims, wbar, (c_avg / (t + 1)) * log(geom, dims, wbar, w))
        if is_recorded(t, T, record_every):
            R[r] = w
            r += 1
    if output == 1:
        return R, w
    if output == 2:
        return R, its[rng.integers(0, T)].copy()
    return R, wbar


def rgd(problem, x0, alpha, T, *, armijo=False, c=1e-4, shrink=0.5, record_every=1, keep_iterates=False,
        gtol=0.0, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rgd.rgd` (Riemannian steepest descent,
    fixed steps): same parameters and result; ``armijo=True`` raises ``ValueError``."""
    where = "rgd (verified)"
    if armijo:
        raise ValueError(f"{where}: the Armijo line search is reference-only (armijo=True); "
                         "use prirfed.reference.trainers.rgd.rgd")
    fused_settings_only(where, "prirfed.reference.trainers.rgd")
    arr = problem_arrays(where, problem, maps, matrices=True)
    T = check_int(where, "T", T, 0)
    alphas = step_sizes(where, alpha, T) if T > 0 else np.zeros(0)
    record_every = check_int(where, "record_every", record_every)
    gtol = float(gtol)
    if not (gtol >= 0):
        raise ValueError(f"{where}: gtol must be >= 0 (got {gtol!r})")
    x = flat_start(problem.manifold, x0, where)
    R, rounds, stopped = rgd_loop(*arr, x, T, alphas, gtol, record_every)
    hist = history_of(problem, rounds, R, keep_iterates)
    why = None if stopped < 0 else f"||grad f|| <= gtol at iteration {stopped}"
    return TrainResult(x=R[-1].reshape(tuple(problem.manifold.ambient_shape)), history=hist, info=dict(stopped=why))


def dp_rgd(problem, x0, alpha, T, b, sigma, rng, *, output=1, tau=math.inf, lipschitz=None, averaging="convex",
           record_every=1, keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rgd.dp_rgd` (Algorithm 1 of 001, outputs
    1-3, batch sampling, optional clipping, tangent Gaussian noise): same parameters, draws and
    result (history, event, info); ``maps="retraction"`` off the sphere and Stiefel raises ``ValueError``."""
    where = "dp_rgd (verified)"
    fused_settings_only(where, "prirfed.reference.trainers.rgd", rng)
    arr = problem_arrays(where, problem, maps)
    T, n_pool, b, alphas = dp_rgd_settings(where, problem, T, b, sigma, output, averaging, alpha)
    if not (float(tau) > 0):
        raise ValueError(f"{where}: clipping threshold tau must be > 0 (got {tau!r})")
    record_every = check_int(where, "record_every", record_every)
    w = flat_start(problem.manifold, x0, where)
    c_avg = 1.0 if averaging == "convex" else 2.0
    R, x_out = dp_rgd_loop(*arr, w, T, alphas, rng, b, float(sigma), float(tau), int(output), c_avg, record_every)
    hist = history_of(problem, recorded_rounds(T, record_every), R, keep_iterates)
    radius = min(tau, math.inf if lipschitz is None else float(lipschitz))
    event, why = dp_rgd_run_event(n=n_pool, b=b, T=T, sigma=sigma, sensitivity_radius=radius)
    return TrainResult(x=x_out.reshape(tuple(problem.manifold.ambient_shape)), history=hist, event=event,
                       info=dict(T=T, b=b, sigma=sigma, tau=tau, n=n_pool, output=output, privacy=why))
