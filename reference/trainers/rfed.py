"""RFedSVRG (Algorithm 1 of Li and Ma (2023)) and RFedAvg / RFedProx (Algorithms 2, 3 of Li and Ma (2023), Appendix C).

Randomness (the policy in :mod:`prirfed.reference.randomness`): the run key is drawn once from the
caller's Generator; in round t the server's stream draws the client set S_t
(``sample_without_replacement(server_stream(key, t), N, k)``) and, with Option 2, client i draws its
upload ``integers(1, tau_i + 1)`` from its own stream ``agent_stream(key, t, i)``; after the rounds,
Option 2 of the output draws ``integers(1, T + 1)`` from the server's stream of round T. RFedAvg and
RFedProx draw only the client sets. ``maps="retraction"`` uses the manifold's
retraction and its inverse in place of Exp and Log, as Li and Ma (2023) did on Stiefel.
"""

from __future__ import annotations

import numpy as np

from prirfed.reference.checks import INT_MAGNITUDE_MAX
from prirfed.reference.manifolds.retracted import geometry

from .aggregation import server_step
from prirfed.reference.randomness import agent_stream, run_key, server_stream

from .base import (History, TrainResult, check_flag, check_generator, check_nonnegative, is_choice, per_agent, record_schedule,
                   round_settings, sample_without_replacement)

__all__ = ["rfedsvrg", "rfedavg", "rfedprox", "prox_gradient", "federated_settings"]


def prox_gradient(M, x, x_t, grad_fi, mu):
    r"""grad h_i(x) for h_i = f_i + (mu/2) dist^2(., x_t) of (27) in Li and Ma (2023): grad f_i(x) - mu Log_x(x_t).

    grad (1/2) dist^2(., y)(x) = -Log_x(y). See the errata page: the authors' code adds +Log_x(x_0), which
    pushes clients away from the server point for mu > 0.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : numpy.ndarray
        Point on the manifold.
    x_t : numpy.ndarray
        The server point.
    grad_fi : numpy.ndarray
        Riemannian gradient of :math:`f_i` at ``x``.
    mu : float
        Proximal weight :math:`\mu \ge 0`.

    Returns
    -------
    numpy.ndarray
        :math:`\operatorname{grad} h_i(x)`.
    """
    return grad_fi - mu * M.log(x, x_t)


def federated_settings(where: str, problem, T, k, eta, tau, option, aggregation, weighting, record_every,
                       keep_iterates=False):
    r"""The settings of Li and Ma's (2023) Algorithms 1-3 that both twins check the same way: T >= 1 rounds, k in
    [1, N] clients per round, option 1 or 2, the aggregation, the weighting, eta_i positive and
    finite and tau_i integers in [1, 2^62) per agent, record_every >= 1 or "auto" (:func:`record_schedule`
    with k clients of mean(tau_i) local steps over mean(N_i) samples per round), keep_iterates True
    or False. Returns (T, k, etas, taus, record_every), etas float and taus int64 arrays of shape (N,).

    Parameters
    ----------
    where : str
        Function named in error messages.
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    T : int
        Rounds (steps), >= 1.
    k : int
        Clients per round, in [1, N].
    eta : float or array_like
        Step size per client (scalar or one per agent), > 0.
    tau : int or array_like
        Local steps :math:`\tau_i` per client (scalar or one per agent), integers in [1, 2^62).
    option : int
        Option 1 (last iterate) or 2 (an iterate drawn uniformly).
    aggregation : str
        ``"tangent"`` (tangent mean, default) or ``"karcher"`` (Karcher mean).
    weighting : str
        ``"uniform"`` (Li and Ma (2023), (8), default) or ``"size"`` (Huang et al. (2024), (3.2)).
    record_every : int or str
        History period (1: every round); ``"auto"`` (default): :func:`~prirfed.reference.trainers.base.record_schedule`.
    keep_iterates : bool, optional
        Must be True or False (default False).

    Returns
    -------
    T, k : int
        Rounds and clients per round.
    etas : numpy.ndarray
        Step sizes.
    taus : numpy.ndarray
        Local step counts (int64).
    record_every : int
        The recording period.

    Raises
    ------
    ValueError
        If a setting is out of range, not a number of the right kind, or unknown.
    """
    N = problem.N
    T, k = round_settings(where, problem, T, k, "k", option, aggregation)
    if not is_choice(weighting, ("uniform", "size")):
        raise ValueError(f"{where}: weighting must be 'uniform' (002 (8)) or 'size' (000 (3.2)) (got {weighting!r})")
    etas = per_agent(where, "eta", eta, N)
    if np.any(~np.isfinite(etas)) or np.any(etas <= 0):
        raise ValueError(f"{where}: step sizes eta must be positive and finite (got {eta!r})")
    taus = per_agent(where, "tau", tau, N)
    # strict bound: the float64 conversion rounds 2^62 + 1 down to 2^62; NaN fails every comparison
    if not np.all((taus >= 1) & (taus < INT_MAGNITUDE_MAX) & (taus == np.round(taus))):
        raise ValueError(f"{where}: local step counts tau_i must be integers in [1, 2^62) (got {tau!r})")
    n = int(sum(problem.sizes))
    record_every = record_schedule(where, record_every, T, n, k * float(np.mean(taus)) * n / N)
    check_flag(where, "keep_iterates", keep_iterates)
    return T, k, etas, taus.astype(np.int64), record_every


def _federated(where, problem, M, x0, T, k, eta, tau, rng, option, aggregation, weighting, record_every,
               keep_iterates, local_step):
    N = problem.N
    check_generator(where, rng)
    T, k, etas, taus, record_every = federated_settings(where, problem, T, k, eta, tau, option, aggregation, weighting,
                                                       record_every, keep_iterates)
    x = M.check_point(x0, where=where)
    key = run_key(rng)
    hist = History()
    hist.record(problem, 0, x, keep_iterates)
    outer = []
    for t in range(T):
        S = sample_without_replacement(server_stream(key, t), N, k)
        ctx = local_step("round", x, None, None)  # per-round context (e.g. grad f(x_t) for RFedSVRG)
        uploads, weights = [], []
        for i in S:
            i = int(i)
            xl = x
            path = []
            for _ell in range(taus[i]):
                xl = M.exp(xl, -etas[i] * local_step("step", x, i, xl, ctx))
                path.append(xl)
            uploads.append(path[-1] if option == 1 else path[int(agent_stream(key, t, i).integers(1, taus[i] + 1)) - 1])
            weights.append(1.0 if weighting == "uniform" else problem.sizes[i])
        x = server_step(M, x, uploads, weights, aggregation)  # (3.2) / (8), or (3.1) / (7)
        outer.append(x)
        if (t + 1) % record_every == 0 or t + 1 == T:
            hist.record(problem, t + 1, x, keep_iterates)
    x_out = x if option == 1 else outer[int(server_stream(key, T).integers(1, T + 1)) - 1]
    return TrainResult(x=x_out, history=hist)


def rfedsvrg(problem, x0, T, k, eta, tau, rng, *, option=1, aggregation="tangent", weighting="uniform",
             record_every="auto", keep_iterates=False, maps="exp"):
    r"""Algorithm 1 of Li and Ma (2023) (RFedSVRG), with the local step (9):

    .. code-block:: text

        x_{l+1} = Exp_{x_l}[ -eta_i ( grad f_i(x_l) - P_{x_t -> x_l}( grad f_i(x_t) - grad f(x_t) ) ) ],

    then the tangent space consensus (8) over the k sampled clients.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem.
    x0 : numpy.ndarray
        Start point.
    T : int
        Rounds, >= 1.
    k : int
        Clients per round, in [1, N].
    eta : float or array_like
        Step size per client, > 0.
    tau : int or array_like
        Local steps :math:`\tau_i` per client, integers >= 1.
    rng : numpy.random.Generator
        The caller's Generator.
    option : int, optional
        Option 1 (default, last local iterate) or 2 (drawn).
    aggregation : str, optional
        ``"tangent"`` (default) or ``"karcher"``.
    weighting : str, optional
        ``"uniform"`` ((8), default) or ``"size"``.
    record_every : int or str, optional
        History period (default ``"auto"``).
    keep_iterates : bool, optional
        Keep the recorded iterates (default ``False``).
    maps : str, optional
        ``"exp"`` (default) or ``"retraction"``.

    Returns
    -------
    TrainResult
        Output point and history.

    Raises
    ------
    ValueError
        If a setting is out of range or unknown (:func:`federated_settings`), or the start is not
        on the manifold.
    """
    M = geometry(problem.manifold, maps, "rfedsvrg")

    def local_step(kind, x_t, i, xl, ctx=None):
        if kind == "round":
            return {"full": problem.grad(x_t), "cache": {}}
        if i not in ctx["cache"]:
            ctx["cache"][i] = problem.grad_agent(x_t, i) - ctx["full"]
        return problem.grad_agent(xl, i) - M.transp(x_t, xl, ctx["cache"][i])

    return _federated("rfedsvrg", problem, M, x0, T, k, eta, tau, rng, option, aggregation, weighting, record_every,
                      keep_iterates, local_step)


def rfedavg(problem, x0, T, k, eta, tau, rng, *, aggregation="tangent", weighting="uniform", record_every="auto",
            keep_iterates=False, maps="exp"):
    r"""Algorithm 2 of Li and Ma (2023) (RFedAvg): ``x_{l+1} = Exp_{x_l}(-eta_i grad f_i(x_l))``, output x_T.

    (25) of Li and Ma (2023) prints grad f_i(x_{l+1}) on the right-hand side of the Euclidean FedAvg step: an
    implicit step where the explicit x_l is meant, as the Riemannian version shows.

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    x0 : numpy.ndarray
        Start point.
    T : int
        Rounds (steps), >= 1.
    k : int
        Clients per round, in [1, N].
    eta : float or array_like
        Step size per client (scalar or one per agent), > 0.
    tau : int or array_like
        Local steps :math:`\tau_i` per client (scalar or one per agent), integers >= 1.
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    aggregation : str, optional
        ``"tangent"`` (tangent mean, default) or ``"karcher"`` (Karcher mean).
    weighting : str, optional
        ``"uniform"`` (Li and Ma (2023), (8), default) or ``"size"`` (Huang et al. (2024), (3.2)).
    record_every : int or str, optional
        History period (1: every round); ``"auto"`` (default): :func:`~prirfed.reference.trainers.base.record_schedule`.
    keep_iterates : bool, optional
        Keep the recorded iterates in the history (default ``False``).
    maps : str, optional
        ``"exp"`` (Exp/Log, default) or ``"retraction"`` (the retraction and its inverse).

    Returns
    -------
    TrainResult
        Final point and history.

    Raises
    ------
    ValueError
        If a setting is out of range or unknown.
    """

    def local_step(kind, x_t, i, xl, ctx=None):
        if kind == "round":
            return None
        return problem.grad_agent(xl, i)

    return _federated("rfedavg", problem, geometry(problem.manifold, maps, "rfedavg"), x0, T, k, eta, tau, rng, 1, aggregation, weighting, record_every,
                      keep_iterates, local_step)


def rfedprox(problem, x0, T, k, eta, tau, mu, rng, *, aggregation="tangent", weighting="uniform", record_every="auto",
             keep_iterates=False, maps="exp"):
    r"""Algorithm 3 of Li and Ma (2023) (RFedProx): tau_i RGD steps (28) on h_i = f_i + (mu/2) dist^2(., x_t) (27).

    Parameters
    ----------
    problem : FederatedProblem
        The federated problem (:mod:`prirfed.reference.problems`).
    x0 : numpy.ndarray
        Start point.
    T : int
        Rounds (steps), >= 1.
    k : int
        Clients per round, in [1, N].
    eta : float or array_like
        Step size per client (scalar or one per agent), > 0.
    tau : int or array_like
        Local steps :math:`\tau_i` per client (scalar or one per agent), integers >= 1.
    mu : float
        Proximal weight :math:`\mu \ge 0`.
    rng : numpy.random.Generator
        The caller's Generator (the run key is drawn from it once).
    aggregation : str, optional
        ``"tangent"`` (tangent mean, default) or ``"karcher"`` (Karcher mean).
    weighting : str, optional
        ``"uniform"`` (Li and Ma (2023), (8), default) or ``"size"`` (Huang et al. (2024), (3.2)).
    record_every : int or str, optional
        History period (1: every round); ``"auto"`` (default): :func:`~prirfed.reference.trainers.base.record_schedule`.
    keep_iterates : bool, optional
        Keep the recorded iterates in the history (default ``False``).
    maps : str, optional
        ``"exp"`` (Exp/Log, default) or ``"retraction"`` (the retraction and its inverse).

    Returns
    -------
    TrainResult
        Final point and history.

    Raises
    ------
    ValueError
        If ``mu`` is not finite and >= 0, or a setting is out of range.
    """
    mu = check_nonnegative("rfedprox", "mu", mu)
    M = geometry(problem.manifold, maps, "rfedprox")

    def local_step(kind, x_t, i, xl, ctx=None):
        if kind == "round":
            return None
        return prox_gradient(M, xl, x_t, problem.grad_agent(xl, i), mu)

    return _federated("rfedprox", problem, M, x0, T, k, eta, tau, rng, 1, aggregation, weighting, record_every,
                      keep_iterates, local_step)
