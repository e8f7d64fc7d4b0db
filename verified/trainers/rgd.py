"""Verified twins of :mod:`prirfed.reference.trainers.rgd`: RGD (fixed step) and DP-RGD (Han et al. (2024) Algorithm 1), fused in Numba.

Mirrors ``reference/trainers/rgd.py``: same signatures, defaults, validation messages' content,
history, event and the SAME RANDOM DRAWS (the contract in the reference module docstring; the
policy in :mod:`prirfed.reference.randomness`): the run key from the caller's Generator (one draw);
DP-RGD step t reads the stream of (agent 0, round t): the batch B_t (``batch_into``: ``b`` bounded
integers, partial Fisher-Yates over the pooled samples, agent by agent in concatenation order; none for
a full batch b = n, which is the samples in that order), then, if sigma > 0,
the tangent noise (the O(dim) closed form); Output 2 draws one ``integers(0, T)`` from the
server's stream of round T. RGD draws nothing.

Each run is one ``@njit(cache=True)`` loop (:func:`rgd_loop`, :func:`dp_rgd_loop`) written once
for every geometry of :mod:`prirfed.verified.trainers.geometry` (chosen by the class of ``dims``:
sphere PCA, SPD Frechet mean, HSP on the Lorentz model, Stiefel kPCA), with the history computed
in the loop. On the flat family the full gradient is
grad f(x) = sum_i p_i (1/N_i) sum_j grad f_ij(x) summed in that order (the reference projects the
sums onto T_x; the two agree to rounding, see the note); on Stiefel it is P_X(sum_i p_i grad f_i(X)).

``maps="retraction"`` is fused on the sphere and on Stiefel (``SphereRetrDims``, ``StiefelRetrDims``).
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

from prirfed.reference.randomness import ROLE_AGENT, ROLE_SERVER, run_key
from prirfed.reference.manifolds.retracted import check_maps
from prirfed.reference.trainers.base import TrainResult, check_generator
from prirfed.reference.trainers.privacy import dp_rgd_run_event
from prirfed.reference.trainers.rgd import dp_rgd_settings, rgd_settings
from prirfed.verified.kernels import all_finite_kernel
from prirfed.verified.randomness import batch_into, integers, open_stream

from .arrays import flat_start, fused_settings_only, history_of, history_optimum, problem_arrays
from .geometry import exp, full_grad, log, noisy_clipped_mean_into, norm
from .records import count_records, keep_round, recorded_rounds, start_rounds, write_record
from .warm import compiling

__all__ = ["rgd", "dp_rgd", "rgd_loop", "dp_rgd_loop"]


@njit(cache=True)
def rgd_loop(dims, Z, C, offsets, sizes, A, ps, xstar, x0, T, alphas, gtol, record_every, keep_iterates):
    """``x_{t+1} = Exp_{x_t}(-alpha_t grad f(x_t))``, stopping when ||grad f(x_t)|| <= gtol
    (reference: rgd.rgd with armijo=False). The first seven arguments are those of every fused loop
    (:class:`prirfed.verified.trainers.arrays.FusedArrays`). Returns (H, R, rounds, stopped, x): the
    history, the kept iterates, their round numbers (as the reference History), the iteration of the
    stop (-1: none) and the last iterate.

    Riemannian steepest descent (Absil, Mahony and Sepulchre (2008), Section 4.2) with fixed steps.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    A : numpy.ndarray
        Per-agent matrices where the family uses them (Stiefel kPCA's :math:`A_i`), else a placeholder.
    ps : numpy.ndarray
        Agent weights :math:`p_i`.
    xstar : numpy.ndarray
        The optimum, flat, or an empty array when it is unknown.
    x0 : numpy.ndarray
        Start point, flat.
    T : int
        Rounds (steps for the single-dataset trainers).
    alphas : numpy.ndarray
        Step size per round.
    gtol : float
        Stop when the gradient norm is at most this.
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).
    keep_iterates : bool
        Keep the recorded iterates.

    Returns
    -------
    H, R : numpy.ndarray
        History rows and kept iterates.
    rounds : numpy.ndarray
        Their round numbers.
    stopped : int
        Iteration of the ``gtol`` stop (-1: none).
    x : numpy.ndarray
        The last iterate.

    Raises
    ------
    ValueError
        If an iterate is not finite (the steps overflow).
    """
    D = x0.shape[0]
    H = np.empty((count_records(T, record_every) + 1, 3))
    R = np.empty((H.shape[0] if keep_iterates else 0, D))
    rounds = np.empty(H.shape[0], dtype=np.int64)
    write_record(dims, Z, C, offsets, sizes, A, ps, xstar, x0, H, R, 0)
    rounds[0] = 0
    r = 1
    x = x0.copy()
    stopped = -1
    for t in range(T):
        g = full_grad(dims, x, Z, C, offsets, sizes, A, ps)
        if norm(dims, x, g) <= gtol:
            stopped = t
            break
        x = exp(dims, x, -alphas[t] * g)
        if not all_finite_kernel(x):
            raise ValueError("rgd (verified): an iterate is not finite (the steps overflow: reduce alpha)")
        if (t + 1) % record_every == 0 or t + 1 == T:
            write_record(dims, Z, C, offsets, sizes, A, ps, xstar, x, H, R, r)
            rounds[r] = t + 1
            r += 1
    if stopped >= 0 and rounds[r - 1] != stopped:
        write_record(dims, Z, C, offsets, sizes, A, ps, xstar, x, H, R, r)
        rounds[r] = stopped
        r += 1
    return H[:r].copy(), R[:r].copy() if keep_iterates else R, rounds[:r].copy(), stopped, x


@njit(cache=True)
def dp_rgd_loop(dims, Z, C, offsets, sizes, A, ps, xstar, x0, T, alphas, key, b, sigma, tau, output, c_avg,
                record_every, keep_iterates):
    """Algorithm 1 of Han et al. (2024) on the pooled samples (reference: rgd.dp_rgd). The first seven arguments
    are those of every fused loop (:class:`prirfed.verified.trainers.arrays.FusedArrays`). Returns
    (H, R, x_out): the history at rounds 0 and t + 1 with (t + 1) % record_every == 0 or t + 1 == T,
    the iterates there if kept, and the output (1: w_T; 2: w_k, k = integers(0, T) from the server's
    stream of round T; 3: the geodesic average with c_t = c_avg / (t + 1)).

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    A : numpy.ndarray
        Per-agent matrices where the family uses them (Stiefel kPCA's :math:`A_i`), else a placeholder.
    ps : numpy.ndarray
        Agent weights :math:`p_i`.
    xstar : numpy.ndarray
        The optimum, flat, or an empty array when it is unknown.
    x0 : numpy.ndarray
        Start point, flat.
    T : int
        Rounds (steps for the single-dataset trainers).
    alphas : numpy.ndarray
        Step size per round.
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    b : int
        Batch size over the pooled samples.
    sigma : float
        Noise standard deviation (0: none).
    tau : float
        Clipping threshold (``inf``: no clipping).
    output : int
        Output 1, 2 or 3 of Han et al. (2024), Algorithm 1.
    c_avg : float
        Averaging constant of Output 3.
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).
    keep_iterates : bool
        Keep the recorded iterates.

    Returns
    -------
    H : numpy.ndarray
        History rows at the recorded rounds.
    R : numpy.ndarray
        The recorded iterates (empty unless kept).
    x_out : numpy.ndarray
        The output point, flat.

    Raises
    ------
    ValueError
        If an iterate is not finite (the steps overflow).
    """
    D = x0.shape[0]
    n_samples = Z.shape[0]
    H, R, r, its, w = start_rounds(dims, Z, C, offsets, sizes, A, ps, xstar, T, record_every, keep_iterates,
                                   output == 2, x0)
    wbar = x0.copy()
    perm = np.empty(n_samples, dtype=np.int64)
    mean = np.empty(D)
    work = np.empty(D)
    eps = np.empty(D)
    for t in range(T):
        if output == 2:
            its[t] = w
        st = open_stream(key, ROLE_AGENT, t, 0)
        batch_into(st, perm, n_samples, b)
        noisy_clipped_mean_into(dims, w, Z, C, perm, 0, b, tau, sigma, st, mean, work, eps)
        w = exp(dims, w, -alphas[t] * mean)
        if not all_finite_kernel(w):
            raise ValueError("dp_rgd (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)")
        if output == 3:
            if t == 0:
                wbar = w
            else:
                wbar = exp(dims, wbar, (c_avg / (t + 1)) * log(dims, wbar, w))
        r = keep_round(dims, Z, C, offsets, sizes, A, ps, xstar, H, R, r, its[:0], t, T, record_every, w)
    if output == 1:
        return H, R, w
    if output == 2:
        return H, R, its[integers(open_stream(key, ROLE_SERVER, T, 0), 0, T)].copy()
    return H, R, wbar

def rgd(problem, x0, alpha, T, *, armijo=False, c=1e-4, shrink=0.5, record_every="auto", keep_iterates=False,
        gtol=0.0, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rgd.rgd` (Riemannian steepest descent,
    fixed steps): same parameters and result; ``armijo=True`` raises ``ValueError``."""
    where = "rgd (verified)"
    check_maps(where, maps)
    arr = problem_arrays(where, problem, maps, matrices=True)  # an unsupported problem: refused before its settings
    T, alphas, record_every, gtol = rgd_settings(where, problem, T, alpha, record_every, gtol, armijo, c, shrink,
                                                 keep_iterates)
    if armijo:
        raise ValueError(f"{where}: the Armijo line search is reference-only (armijo=True); "
                         "use prirfed.reference.trainers.rgd.rgd")
    fused_settings_only(where, "prirfed.reference.trainers.rgd")
    x = flat_start(problem.manifold, x0, where)
    xstar = history_optimum(problem)
    with compiling(rgd_loop, arr.dims):
        H, R, rounds, stopped, x_last = rgd_loop(*arr, xstar, x, T, alphas, gtol, record_every, bool(keep_iterates))
    hist = history_of(problem, rounds, H, R)
    why = None if stopped < 0 else f"||grad f|| <= gtol at iteration {stopped}"
    return TrainResult(x=x_last.reshape(tuple(problem.manifold.ambient_shape)), history=hist, info=dict(stopped=why))


def dp_rgd(problem, x0, alpha, T, b, sigma, rng, *, output=1, tau=math.inf, lipschitz=None, averaging="convex",
           record_every="auto", keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rgd.dp_rgd` (Algorithm 1 of Han et al. (2024), outputs
    1-3, batch sampling, optional clipping, tangent Gaussian noise): same parameters, draws and
    result (history, event, info); ``maps="retraction"`` off the sphere and Stiefel raises ``ValueError``.
    """
    where = "dp_rgd (verified)"
    check_generator(where, rng)  # the reference's checks in the reference's order
    check_maps(where, maps)
    arr = problem_arrays(where, problem, maps)  # an unsupported problem: refused before its settings are read
    T, n_pool, b, alphas, record_every, sigma, tau, lipschitz = dp_rgd_settings(
        where, problem, T, b, sigma, output, averaging, alpha, tau=tau, lipschitz=lipschitz, record_every=record_every,
        keep_iterates=keep_iterates)
    fused_settings_only(where, "prirfed.reference.trainers.rgd")
    w = flat_start(problem.manifold, x0, where)
    xstar = history_optimum(problem)
    key = run_key(rng)
    c_avg = 1.0 if averaging == "convex" else 2.0
    with compiling(dp_rgd_loop, arr.dims):
        H, R, x_out = dp_rgd_loop(*arr, xstar, w, T, alphas, key, b, float(sigma), float(tau), int(output), c_avg,
                                  record_every, bool(keep_iterates))
    hist = history_of(problem, recorded_rounds(T, record_every), H, R)
    radius = min(tau, math.inf if lipschitz is None else float(lipschitz))
    event, why = dp_rgd_run_event(n=n_pool, b=b, T=T, sigma=sigma, sensitivity_radius=radius)
    return TrainResult(x=x_out.reshape(tuple(problem.manifold.ambient_shape)), history=hist, event=event,
                       info=dict(T=T, b=b, sigma=sigma, tau=tau, n=n_pool, output=output, privacy=why))
