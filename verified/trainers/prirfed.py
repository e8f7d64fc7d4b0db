"""Verified twin of :mod:`prirfed.reference.trainers.prirfed` (PriRFed, Algorithm 1 of Huang et al. (2024)), fused in Numba.

Mirrors ``reference/trainers/prirfed.py`` with its local trainers ``reference/trainers/local.py``
(DP-RSGD, Algorithm 2; DP-RSVRG, Algorithm 3; here :mod:`prirfed.verified.trainers.local`), the
server step of ``reference/trainers/aggregation.py`` and ``sample_without_replacement`` of
``reference/trainers/base.py``. Same signature, same defaults, same result (``TrainResult`` with the
reference ``History`` and the event of ``reference/trainers/privacy.py``), and the SAME RANDOM
DRAWS (the contract written in the reference docstrings; the policy in
:mod:`prirfed.reference.randomness`):

- the run key: one ``rng.integers(0, 2**64, size=2, dtype=np.uint64)`` from the caller's Generator
  (its only use);
- round t: the agent set S_t from the server's stream of round t (``s`` bounded integers, partial
  Fisher-Yates); each selected agent i trains on its own stream of (t, i);
- after the T rounds, Option 2 draws one ``integers(1, T + 1)`` from the server's stream of round T.

Design: the T rounds are one ``@njit(cache=True)`` loop, :func:`prirfed_loop`, written once for
every geometry (:mod:`prirfed.verified.trainers.geometry` chooses the kernels by the class of
``dims``: a run compiles only its own geometry). The agents of a round run in parallel
(:func:`prirfed.verified.trainers.local.agents_round`, Numba ``prange``; the output is the same for
any number of threads: ``numba.set_num_threads``). The history (f, ||grad f||, error to the
optimum) is computed in the loop, at the recorded rounds (default ``record_every="auto"``:
:func:`prirfed.reference.trainers.base.record_schedule`, about 5% of the training).

Supported: ``aggregation="tangent"`` (3.2) and ``"karcher"`` (3.1); ``maps="exp"`` on sphere PCA,
the SPD Frechet mean, hyperbolic structured prediction on the Lorentz model and Stiefel kPCA
(reference or verified problem classes); ``maps="retraction"`` on the sphere and Stiefel.
Anything else raises ``ValueError``. Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.reference.randomness import ROLE_SERVER, run_key
from prirfed.reference.manifolds.retracted import check_maps
from prirfed.reference.trainers.base import TrainResult, check_generator
from prirfed.reference.trainers.prirfed import prirfed_local_settings, prirfed_settings
from prirfed.reference.trainers.privacy import prirfed_run_event
from prirfed.verified.kernels import all_finite_kernel
from prirfed.verified.randomness import open_stream, sample_without_replacement

from .arrays import flat_start, fused_settings_only, history_of, history_optimum, problem_arrays
from .codes import AGG_TANGENT, LOCAL_DP_RSGD, LOCAL_DP_RSVRG
from .geometry import aggregate
from .local import NOT_FINITE, agents_round
from .records import keep_round, option_output, recorded_rounds, start_rounds
from .warm import compiling

__all__ = ["prirfed", "prirfed_loop"]


@njit(cache=True)
def prirfed_loop(dims, Z, C, offsets, sizes, A, ps, xstar, x0, T, s, alphas, key, local, K, bs, m, sigmas, tau, tau0,
                 tau1, option, local_option, record_every, keep_iterates, aggregation=AGG_TANGENT):
    """Algorithm 1 of Huang et al. (2024) (reference: prirfed.prirfed; maps through the class of ``dims``, aggregation
    AGG_TANGENT or AGG_KARCHER).

    The first seven arguments, as in every fused loop, are the fields of
    :class:`prirfed.verified.trainers.arrays.FusedArrays` (``A`` is not read here): Z (sum N_i, width)
    the samples of all agents stacked, agent i in rows offsets[i] .. offsets[i] + sizes[i] - 1,
    C (sum N_i,) the scale of each sample's gradient; then xstar (the optimum for the history's
    error, empty if unknown), x0 (D,) and the settings, bs/sigmas (N,), key (2,) uint64 the run key.
    Returns (H, R, x_out): H (recorded rounds, 3) = f, ||grad f||, error at x^(0) and x^(t+1) for
    (t + 1) % record_every == 0 or t + 1 == T; R the iterates there (empty unless keep_iterates);
    x_out the output (Option 1: x^(T); Option 2: uniform from x^(1..T), one integers(1, T + 1) from
    the server's stream of round T).

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
    s : int
        Agents per round.
    alphas : numpy.ndarray
        Step size per round.
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    local : int
        Local trainer code (:mod:`prirfed.verified.trainers.codes`: DP-RSGD or DP-RSVRG).
    K : int
        Local iterations.
    bs : numpy.ndarray
        Batch size per agent.
    m : int
        DP-RSVRG inner-loop length.
    sigmas : numpy.ndarray
        Noise standard deviation per agent.
    tau : float
        Clipping threshold (``inf``: no clipping).
    tau0 : float
        DP-RSVRG clipping threshold of the full gradient.
    tau1 : float
        DP-RSVRG clipping threshold of the per-sample terms.
    option : int
        The output option of Algorithm 1, 1 or 2.
    local_option : int
        The local trainers' option.
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).
    keep_iterates : bool
        Keep the recorded iterates.
    aggregation : int, optional
        Server step code (:mod:`prirfed.verified.trainers.codes`: tangent mean or Karcher mean).

    Returns
    -------
    H : numpy.ndarray
        History rows (f, gradient norm, error) at the recorded rounds.
    R : numpy.ndarray
        The recorded iterates (empty unless ``keep_iterates``).
    x_out : numpy.ndarray
        The output point, flat.

    Raises
    ------
    ValueError
        If an iterate is not finite (the steps overflow).
    """
    D = x0.shape[0]
    N = sizes.shape[0]
    H, R, r, outer, x = start_rounds(dims, Z, C, offsets, sizes, A, ps, xstar, T, record_every, keep_iterates,
                                     option == 2, x0)
    uploads = np.empty((s, D))
    w = np.empty(s)
    for t in range(T):
        S = sample_without_replacement(open_stream(key, ROLE_SERVER, t, 0), N, s)
        agents_round(dims, Z, C, offsets, sizes, x, key, t, S, local, K, bs, m, sigmas, tau, tau0, tau1, alphas[t],
                     local_option, uploads)
        for q in range(s):
            w[q] = sizes[S[q]]
        # tangent mean (3.2) or Karcher mean (3.1), w_q = N_q / sum_{S_t} N_k
        x = aggregate(dims, x, uploads, w, aggregation)
        if not all_finite_kernel(x):
            raise ValueError(NOT_FINITE)
        r = keep_round(dims, Z, C, offsets, sizes, A, ps, xstar, H, R, r, outer, t, T, record_every, x)
    return H, R, option_output(option, x, outer, key, T)


def prirfed(problem, x0, T, s, alpha, rng, *, local="dp_rsgd", K=1, b=None, m=1, sigma=0.0,
            tau=math.inf, tau0=None, tau1=None, option=1, local_option=None, aggregation="tangent",
            record_every="auto", keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.prirfed.prirfed` (Algorithm 1 of Huang et al. (2024)):
    same parameters, defaults, draws and result; the T rounds run in :func:`prirfed_loop`.
    Both aggregations; ``maps="retraction"`` on the sphere and Stiefel (others raise ``ValueError``).
    """
    where = "prirfed (verified)"
    check_generator(where, rng)  # the reference's checks in the reference's order
    check_maps(where, maps)
    arr = problem_arrays(where, problem, maps)  # an unsupported problem: refused before its settings are read
    M = problem.manifold
    N = problem.N
    T, s, alphas, sigmas, b_arr = prirfed_settings(where, problem, T, s, alpha, option, local, aggregation, sigma, b)
    bs, K, m, tau, tau0, tau1, local_option, record_every = prirfed_local_settings(
        where, problem, T, s, local, b_arr, K, m, tau, tau0, tau1, option, local_option, record_every,
        keep_iterates)
    agg = fused_settings_only(where, "prirfed.reference.trainers.prirfed", aggregation=aggregation)

    x = flat_start(M, x0, where)
    xstar = history_optimum(problem)
    key = run_key(rng)
    code = LOCAL_DP_RSGD if local == "dp_rsgd" else LOCAL_DP_RSVRG
    with compiling(prirfed_loop, arr.dims):
        H, R, x_out = prirfed_loop(*arr, xstar, x, T, s, alphas, key, code, K, bs, m, sigmas, float(tau), float(tau0),
                                   float(tau1), int(option), int(local_option), record_every, bool(keep_iterates), agg)
    hist = history_of(problem, recorded_rounds(T, record_every), H, R)
    event, why = prirfed_run_event(problem, local=local, N=N, s=s, T=T, K=K, m=m, sigmas=sigmas, bs=bs, tau=tau,
                                   tau0=tau0, tau1=tau1)
    return TrainResult(x=x_out.reshape(tuple(M.ambient_shape)), history=hist, event=event,
                       info=dict(T=T, s=s, K=K, m=m, local=local, sigma=sigmas, b=bs, tau=tau, tau0=tau0, tau1=tau1,
                                 privacy=why))
