"""PriRFed: Algorithm 1 of Huang et al. (2024) (private Riemannian federated learning).

Randomness (contract with the verified twin; the policy in :mod:`prirfed.reference.randomness`):
the run key is drawn once from the caller's Generator (:func:`~prirfed.reference.randomness.run_key`,
its only use); in round t the server's stream draws the agent set S_t
(``sample_without_replacement(server_stream(key, t), N, s)``: s bounded integers) and each selected
agent i trains on its own stream ``agent_stream(key, t, i)`` (the draws listed in
:mod:`prirfed.reference.trainers.local`), so no agent's draws depend on another's and the agents of
a round can run in any order or in parallel; after the rounds, Option 2 draws one
``integers(1, T + 1)`` from the server's stream of round T.
"""

from __future__ import annotations

import math

import numpy as np

from prirfed.reference.checks import check_int
from prirfed.reference.manifolds.retracted import geometry

from prirfed.reference.randomness import agent_stream, run_key, server_stream

from .aggregation import server_step
from .base import (History, TrainResult, check_flag, check_generator, check_tau, is_choice, per_agent, real_array, record_schedule,
                   round_settings, sample_without_replacement)
from .local import dp_rsgd_local, dp_rsvrg_local
from .privacy import prirfed_run_event

__all__ = ["prirfed", "step_sizes", "prirfed_settings", "prirfed_local_settings"]


def step_sizes(where: str, alpha, T: int) -> np.ndarray:
    """alpha_t for t = 0..T-1 from a constant, a sequence of length T, or a callable t -> alpha_t
    (real numbers only, :func:`~prirfed.reference.trainers.base.real_array`).

    Helper, not a paper formula: argument check.

    Parameters
    ----------
    where : str
        Function named in error messages.
    alpha : float, sequence or callable
        Step size: a constant, one per round, or a function of the round.
    T : int
        Rounds (steps), >= 1.

    Returns
    -------
    numpy.ndarray
        Shape ``(T,)``.

    Raises
    ------
    ValueError
        If the shape is not ``(T,)``, a step is not a real number, or a step is not positive and
        finite.
    """
    if callable(alpha):
        a = real_array(where, "step sizes", [alpha(t) for t in range(T)])
    else:
        a = real_array(where, "step sizes", alpha)
        a = np.full(T, float(a)) if a.ndim == 0 else a
    if a.shape != (T,):
        raise ValueError(f"{where}: step sizes have shape {a.shape}, expected ({T},)")
    bad = np.flatnonzero(~np.isfinite(a) | (a <= 0))
    if bad.size:
        t = int(bad[0])
        raise ValueError(f"{where}: step sizes must be positive and finite (the step of round {t} is {float(a[t])!r}; "
                         f"{bad.size} of {T} are not)")
    return a


def prirfed_settings(where: str, problem, T, s, alpha, option, local, aggregation, sigma, b):
    """The settings of Algorithm 1 that both twins check the same way: T >= 1 rounds, s in [1, N]
    agents per round, option 1 or 2, the local trainer, the aggregation, the step sizes alpha_t
    (:func:`step_sizes`), sigma_i finite and >= 0 and b_i (default N_i) per agent. Returns
    (T, s, alphas, sigmas, b) with sigmas and b as float arrays of shape (N,).

    The settings of Huang et al. (2024), Algorithm 1, checked once for both twins.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    T : int
        Rounds (steps), >= 1.
    s : int
        Agents per round, in [1, N].
    alpha : float, sequence or callable
        Step size: a constant, one per round, or a function of the round.
    option : int
        Option 1 (last iterate) or 2 (an iterate drawn uniformly).
    local : str
        ``"dp_rsgd"`` or ``"dp_rsvrg"``.
    aggregation : str
        ``"tangent"`` (tangent mean, default) or ``"karcher"`` (Karcher mean).
    sigma : float or array_like
        Noise per agent.
    b : int, array_like or None
        Batch size per agent (default :math:`N_i`).

    Returns
    -------
    T, s : int
        Rounds and agents per round.
    alphas : numpy.ndarray
        Step sizes.
    sigmas, b : numpy.ndarray
        Per-agent noise and batch sizes.

    Raises
    ------
    ValueError
        If a setting is out of range or unknown.
    """
    N = problem.N
    T, s = round_settings(where, problem, T, s, "s", option, aggregation)
    if not is_choice(local, ("dp_rsgd", "dp_rsvrg")):
        raise ValueError(f"{where}: local must be 'dp_rsgd' or 'dp_rsvrg' (got {local!r})")
    alphas = step_sizes(where, alpha, T)
    sigmas = per_agent(where, "sigma", sigma, N)
    if np.any(sigmas < 0) or np.any(~np.isfinite(sigmas)):
        raise ValueError(f"{where}: sigma must be finite and >= 0 (got {sigma!r})")
    return T, s, alphas, sigmas, per_agent(where, "b", problem.sizes if b is None else b, N)


def prirfed_local_settings(where: str, problem, T, s, local, b_arr, K, m, tau, tau0, tau1, option, local_option,
                           record_every, keep_iterates=False):
    """The local-training settings of Huang et al. (2024), Algorithm 1, checked once for both twins.

    Called after :func:`prirfed_settings`: b_i an integer in [1, N_i] for each agent, K >= 1 local
    steps (DP-RSGD) or epochs (DP-RSVRG), m >= 1 inner steps, the clipping thresholds tau, tau0,
    tau1 (> 0, inf: none; tau0 and tau1 default to tau), the local option (default: ``option``) 1
    or 2, record_every (an int >= 1 or "auto":
    :func:`~prirfed.reference.trainers.base.record_schedule` for the samples s agents read in a
    round) and keep_iterates True or False.

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    T : int
        Rounds, already checked by :func:`prirfed_settings`.
    s : int
        Agents per round, already checked.
    local : str
        ``"dp_rsgd"`` or ``"dp_rsvrg"`` (already checked), for the samples read per round.
    b_arr : numpy.ndarray
        The batch sizes b_i, shape ``(N,)`` (from :func:`prirfed_settings`).
    K : int
        Local steps (DP-RSGD) or epochs (DP-RSVRG), >= 1.
    m : int
        Inner steps of DP-RSVRG, >= 1.
    tau : float
        Clipping threshold, > 0 (``inf``: none).
    tau0, tau1 : float or None
        DP-RSVRG's two thresholds (None: ``tau``).
    option : int
        The server's option, the default of ``local_option``.
    local_option : int or None
        1 or 2 (None: ``option``).
    record_every : int or str
        History period, an int >= 1 or ``"auto"``.
    keep_iterates : bool, optional
        Must be True or False (default False).

    Returns
    -------
    bs : numpy.ndarray
        The batch sizes as int64, shape ``(N,)``.
    K, m : int
        Local steps or epochs, inner steps.
    tau, tau0, tau1 : float
        The clipping thresholds.
    local_option : int
        1 or 2.
    record_every : int
        The resolved history period.

    Raises
    ------
    ValueError
        If a setting is out of range or not a number of the right kind.
    """
    for i in range(problem.N):
        check_int(where, f"b[{i}]", b_arr[i], 1, problem.sizes[i])
    bs = b_arr.astype(np.int64)
    local_option = option if local_option is None else local_option
    if not is_choice(local_option, (1, 2)):
        raise ValueError(f"{where}: local_option must be 1 or 2 (got {local_option!r})")
    K = check_int(where, "K", K)
    m = check_int(where, "m", m)
    tau = check_tau(where, "tau", tau)
    tau0 = tau if tau0 is None else check_tau(where, "tau0", tau0)
    tau1 = tau if tau1 is None else check_tau(where, "tau1", tau1)
    sizes = np.asarray(problem.sizes, dtype=np.float64)
    per_round = s * K * (float(np.mean(bs)) if local == "dp_rsgd" else float(np.mean(sizes)) + 2 * m)
    record_every = record_schedule(where, record_every, T, int(sizes.sum()), per_round)
    check_flag(where, "keep_iterates", keep_iterates)
    return bs, K, m, tau, tau0, tau1, int(local_option), record_every


def prirfed(problem, x0, T, s, alpha, rng, *, local="dp_rsgd", K=1, b=None, m=1, sigma=0.0,
            tau=math.inf, tau0=None, tau1=None, option=1, local_option=None, aggregation="tangent",
            record_every="auto", keep_iterates=False, maps="exp"):
    r"""Algorithm 1 of Huang et al. (2024) (PriRFed) with DP-RSGD (Alg. 2) or DP-RSVRG (Alg. 3) local training.

    The algorithm box, line by line:

    .. code-block:: text

        for t = 0..T-1:
          2:  S_t subset of [N], |S_t| = s, uniformly without replacement;
          3-8: each i in S_t: x~_i <- PrivateLocalTraining(x^(t), D_i, K, sigma_i, alpha_t);
          10: x^(t+1) <- Exp_{x^(t)}( sum_{i in S_t} N_i / (sum_{k in S_t} N_k) Exp^{-1}_{x^(t)}(x~_i) )  (3.2)
        12: Option 1: x^(T);  13: Option 2: uniform from {x^(1), ..., x^(T)}.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem.
    x0 : numpy.ndarray
        Start point :math:`x^{(0)}`.
    T : int
        Rounds, >= 1.
    s : int
        Agents per round, in [1, N].
    alpha : float, sequence or callable
        Step size :math:`\alpha_t`: a constant, one per round, or a function of the round.
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    local : str, optional
        ``"dp_rsgd"`` (default) or ``"dp_rsvrg"``.
    K : int, optional
        Local iterations (default 1).
    b : int, array_like or None, optional
        DP-RSGD batch size, scalar or per agent (default :math:`N_i`, full batch).
    m : int, optional
        DP-RSVRG inner-loop length (default 1).
    sigma : float or array_like, optional
        Noise standard deviation, scalar or per agent (default 0: non-private).
    tau : float, optional
        DP-RSGD clipping threshold (default ``inf``: none).
    tau0, tau1 : float or None, optional
        DP-RSVRG thresholds (default ``tau``).
    option : int, optional
        Output option of Algorithm 1, 1 (default) or 2.
    local_option : int or None, optional
        The local trainers' option (default ``option``, as Algorithm 1 couples them).
    aggregation : str, optional
        ``"tangent"`` ((3.2), default) or ``"karcher"`` ((3.1)).
    record_every : int or str, optional
        The history's period (1: every round); ``"auto"`` (default): ``record_schedule``, about 5%
        of the training's cost; rounds 0 and T are always recorded.
    keep_iterates : bool, optional
        Keep the recorded iterates (default ``False``).
    maps : str, optional
        ``"exp"`` (Exp/Log, default) or ``"retraction"`` (as Li and Ma (2023) on Stiefel).

    Returns
    -------
    TrainResult
        Output point, history, and ``event``: the run's record-level privacy event (``None`` when
        sigma = 0 or there is no clipping; ``info["privacy"]`` says why).

    Raises
    ------
    ValueError
        If a setting is out of range or unknown (:func:`prirfed_settings`), or the start is not on
        the manifold.
    """
    where = "prirfed"
    check_generator(where, rng)
    M = geometry(problem.manifold, maps, where)
    N = problem.N
    T, s, alphas, sigmas, b_arr = prirfed_settings(where, problem, T, s, alpha, option, local, aggregation, sigma, b)
    bs, K, m, tau, tau0, tau1, local_option, record_every = prirfed_local_settings(
        where, problem, T, s, local, b_arr, K, m, tau, tau0, tau1, option, local_option, record_every,
        keep_iterates)

    x = M.check_point(x0, where=where)
    key = run_key(rng)
    hist = History()
    hist.record(problem, 0, x, keep_iterates)
    outer = []
    for t in range(T):
        S = sample_without_replacement(server_stream(key, t), N, s)
        uploads, weights = [], []
        for i in S:
            i = int(i)
            stream = agent_stream(key, t, i)
            if local == "dp_rsgd":
                xi = dp_rsgd_local(problem, i, x, K, int(bs[i]), float(sigmas[i]), tau, float(alphas[t]), stream,
                                   local_option, maps)
            else:
                xi = dp_rsvrg_local(problem, i, x, K, m, float(sigmas[i]), tau0, tau1, float(alphas[t]), stream,
                                    local_option, maps)
            uploads.append(xi)
            weights.append(problem.sizes[i])
        x = server_step(M, x, uploads, weights, aggregation)  # (3.2) / (8), or (3.1) / (7)
        outer.append(x)
        if (t + 1) % record_every == 0 or t + 1 == T:
            hist.record(problem, t + 1, x, keep_iterates)
    x_out = x if option == 1 else outer[int(server_stream(key, T).integers(1, T + 1)) - 1]
    event, why = prirfed_run_event(problem, local=local, N=N, s=s, T=T, K=K, m=m, sigmas=sigmas, bs=bs, tau=tau,
                                   tau0=tau0, tau1=tau1)
    return TrainResult(x=x_out, history=hist, event=event,
                       info=dict(T=T, s=s, K=K, m=m, local=local, sigma=sigmas, b=bs, tau=tau, tau0=tau0, tau1=tau1,
                                 privacy=why))
