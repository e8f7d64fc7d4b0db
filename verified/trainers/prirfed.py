"""Verified twin of :mod:`prirfed.reference.trainers.prirfed` (PriRFed, Algorithm 1 of 000), fused in Numba.

Mirrors ``reference/trainers/prirfed.py`` with its local trainers ``reference/trainers/local.py``
(DP-RSGD, Algorithm 2; DP-RSVRG, Algorithm 3; here :mod:`prirfed.verified.trainers.local`), the
server step of ``reference/trainers/aggregation.py`` and ``sample_without_replacement`` of
``reference/trainers/base.py``. Same signature, same defaults, same result (``TrainResult`` with the
reference ``History`` and the event of ``reference/trainers/privacy.py``), and the SAME ORDER OF
RANDOM DRAWS (the contract written in the reference docstrings):

- per round t: the agent set S_t, ``s`` draws ``rng.integers(j, N)`` (partial Fisher-Yates);
- then, for each selected agent in the drawn order, its local training (the draws listed in
  :mod:`prirfed.verified.trainers.local`);
- after the T rounds, Option 2 draws one ``rng.integers(1, T + 1)``.

Design (one fused loop, no per-step Python): the whole T-round loop is the single
``@njit(cache=True)`` function :func:`prirfed_loop`, written once for every geometry family
(:mod:`prirfed.verified.trainers.geometry`: ``dims`` an int n for the sphere, SPD and Lorentz, the
pair (d, r) for Stiefel) and dispatching on the integer codes of
:mod:`prirfed.verified.trainers.codes` (manifold and maps, problem, local trainer, aggregation).

The loop returns the iterates at the recorded rounds; :func:`prirfed` (the wrapper) validates the
inputs exactly like the reference, computes the history (f, ||grad f||, error to the optimum)
with the problem's own methods, so that histories of both twins are comparable, and builds the
privacy event with :func:`prirfed.reference.trainers.privacy.prirfed_run_event`.

Supported: ``aggregation="tangent"`` (3.2) and ``"karcher"`` (3.1); ``maps="exp"`` on sphere PCA,
the SPD Frechet mean, hyperbolic structured prediction on the Lorentz model and Stiefel kPCA
(reference or verified problem classes); ``maps="retraction"`` on the sphere and Stiefel.
Anything else raises ``ValueError``. Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.reference.checks import check_int
from prirfed.reference.trainers.base import TrainResult
from prirfed.reference.trainers.prirfed import prirfed_settings
from prirfed.reference.trainers.privacy import prirfed_run_event
from prirfed.verified.kernels import all_finite_kernel

from .arrays import flat_start, fused_settings_only, history_of, problem_arrays
from .codes import *  # noqa: F401,F403 - the codes were importable from here before the split (issue 12)
from .codes import AGG_TANGENT, LOCAL_DP_RSGD, LOCAL_DP_RSVRG
from .draws import sample_without_replacement_kernel
from .geometry import aggregate
from .local import NOT_FINITE, dp_rsgd_local_kernel, dp_rsvrg_local_kernel
from .records import keep_round, option_output, recorded_rounds, start_rounds

__all__ = ["prirfed", "prirfed_loop"]


@njit(cache=True)
def prirfed_loop(geom, prob, dims, Z, C, offsets, sizes, A, ps, x0, T, s, alphas, rng, local, K, bs, m, sigmas,
                 tau, tau0, tau1, option, local_option, record_every, aggregation=AGG_TANGENT):
    """Algorithm 1 of 000 (reference: prirfed.prirfed; maps through ``geom``, aggregation AGG_TANGENT or AGG_KARCHER).

    The first nine arguments, as in every fused loop, are the fields of
    :class:`prirfed.verified.trainers.arrays.FusedArrays` (``A`` and ``ps`` are not read here):
    Z (sum N_i, width) the samples of all agents stacked, agent i in rows offsets[i] ..
    offsets[i] + sizes[i] - 1, C (sum N_i,) the scale of each sample's gradient; then x0 (D,) and
    the trainer's settings, bs/sigmas (N,).
    Returns (R, x_out): R (number of recorded rounds, D) the iterates x^(0) and x^(t+1) for
    (t + 1) % record_every == 0 or t + 1 == T; x_out the output (Option 1: x^(T); Option 2:
    uniform from x^(1..T) by one rng.integers(1, T + 1)).
    """
    D = x0.shape[0]
    N = sizes.shape[0]
    R, r, outer, x = start_rounds(T, record_every, option == 2, x0)
    for t in range(T):
        S = sample_without_replacement_kernel(rng, N, s)
        uploads = np.empty((s, D))
        w = np.empty(s)
        for q in range(s):
            i = S[q]
            if local == LOCAL_DP_RSGD:
                uploads[q] = dp_rsgd_local_kernel(geom, prob, dims, x, Z, C, offsets[i], sizes[i], K, bs[i], sigmas[i],
                                                  tau, alphas[t], rng, local_option)
            else:
                uploads[q] = dp_rsvrg_local_kernel(geom, prob, dims, x, Z, C, offsets[i], sizes[i], K, m, sigmas[i],
                                                   tau0, tau1, alphas[t], rng, local_option)
            w[q] = sizes[i]
        # tangent mean (3.2) or Karcher mean (3.1), w_q = N_q / sum_{S_t} N_k
        x = aggregate(geom, dims, x, uploads, w, aggregation)
        if not all_finite_kernel(x):
            raise ValueError(NOT_FINITE)
        r = keep_round(R, r, outer, t, T, record_every, x)
    return R, option_output(option, x, outer, rng, T)


def prirfed(problem, x0, T, s, alpha, rng, *, local="dp_rsgd", K=1, b=None, m=1, sigma=0.0,
            tau=math.inf, tau0=None, tau1=None, option=1, local_option=None, aggregation="tangent",
            record_every=1, keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.prirfed.prirfed` (Algorithm 1 of 000):
    same parameters, defaults, draws and result; the T rounds run in :func:`prirfed_loop`.
    Both aggregations; ``maps="retraction"`` on the sphere and Stiefel (others raise ``ValueError``)."""
    where = "prirfed (verified)"
    agg = fused_settings_only(where, "prirfed.reference.trainers.prirfed", rng, aggregation=aggregation)
    arr = problem_arrays(where, problem, maps)
    M = problem.manifold
    N = problem.N
    T, s, alphas, sigmas, b_arr = prirfed_settings(where, problem, T, s, alpha, option, local, aggregation, sigma, b)
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

    x = flat_start(M, x0, where)
    code = LOCAL_DP_RSGD if local == "dp_rsgd" else LOCAL_DP_RSVRG
    R, x_out = prirfed_loop(*arr, x, T, s, alphas, rng, code, K, bs, m, sigmas, float(tau), float(tau0), float(tau1),
                            int(option), int(local_option), record_every, agg)
    hist = history_of(problem, recorded_rounds(T, record_every), R, keep_iterates)
    event, why = prirfed_run_event(problem, local=local, N=N, s=s, T=T, K=K, m=m, sigmas=sigmas, bs=bs, tau=tau,
                                   tau0=tau0, tau1=tau1)
    return TrainResult(x=x_out.reshape(tuple(M.ambient_shape)), history=hist, event=event,
                       info=dict(T=T, s=s, K=K, m=m, local=local, sigma=sigmas, b=bs, tau=tau, tau0=tau0, tau1=tau1,
                                 privacy=why))
