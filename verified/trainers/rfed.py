"""Verified twins of :mod:`prirfed.reference.trainers.rfed`: RFedSVRG, RFedAvg, RFedProx (Li and Ma (2023) Algorithms 1-3), fused in Numba.

Mirrors ``reference/trainers/rfed.py``: same signatures, defaults, history and the SAME RANDOM
DRAWS (the contract in the reference module docstring; the policy in
:mod:`prirfed.reference.randomness`): the run key from the caller's Generator (one draw); round t's
client set S_t from the server's stream of round t (``k`` bounded integers, partial Fisher-Yates);
with Option 2 (RFedSVRG only) client i's upload ``integers(1, tau_i + 1)`` from its stream of
(t, i); Option 2 of the output ``integers(1, T + 1)`` from the server's stream of round T.

The T rounds run in one ``@njit(cache=True)`` loop, :func:`federated_loop`, dispatching on the
method code (``METHOD_SVRG``, ``METHOD_AVG``, ``METHOD_PROX``), written once for every geometry
(:mod:`prirfed.verified.trainers.geometry`, by the class of ``dims``: sphere PCA, SPD Frechet mean,
HSP on the Lorentz model; Stiefel kPCA, Li and Ma (2023) (3)); the clients of a round run in parallel
(:func:`clients_round`, ``prange``, each writing its own row: the same output for every number of
threads); the history is computed in the loop (:mod:`prirfed.verified.trainers.records`).
Local step directions (``x_t`` the server point, ``x_l`` the client's current point):

- RFedSVRG (9):  ``grad f_i(x_l) - Gamma_{x_t}^{x_l}(grad f_i(x_t) - grad f(x_t))``;
- RFedAvg:       grad f_i(x_l);
- RFedProx (27): ``grad f_i(x_l) - mu Log_{x_l}(x_t)``;

then ``x_{l+1} = Exp_{x_l}(-eta_i direction)``, and the tangent space consensus (8) or the Karcher mean
(7) (``aggregation="karcher"``) with uniform (Li and Ma (2023)) or size (Huang et al. (2024) (3.2)) weights. ``maps="retraction"``
is fused on the sphere (``SphereRetrDims``) and on Stiefel kPCA (``StiefelRetrDims``); other
settings raise ``ValueError`` (use the reference).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from prirfed.reference.randomness import ROLE_AGENT, ROLE_SERVER, run_key
from prirfed.reference.manifolds.retracted import check_maps
from prirfed.reference.trainers.base import TrainResult, check_generator, check_nonnegative
from prirfed.reference.trainers.rfed import federated_settings
from prirfed.verified.kernels import all_finite_kernel
from prirfed.verified.randomness import integers, open_stream, sample_without_replacement

from .arrays import flat_start, fused_settings_only, history_of, history_optimum, problem_arrays
from .codes import AGG_TANGENT, METHOD_AVG, METHOD_PROX, METHOD_SVRG
from .geometry import agent_grad, aggregate, exp, full_grad, log, transp
from .records import keep_round, option_output, recorded_rounds, start_rounds
from .warm import compiling

__all__ = ["rfedsvrg", "rfedavg", "rfedprox", "federated_loop", "client_update", "clients_round", "METHOD_SVRG",
           "METHOD_AVG", "METHOD_PROX"]

LOCAL_NOT_FINITE = "rfed (verified): a local iterate is not finite (the steps overflow: reduce eta)"


@njit(cache=True)
def client_update(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, i, eta, tau_i, method, option, mu, out):
    """out = client i's upload after tau_i local steps from the server point x (Li and Ma (2023) (9), Algorithms 2,
    3; reference: rfed._federated's inner loop); Option 2 picks the upload with integers(1, tau_i + 1)
    from the client's stream of round t.

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
    x : numpy.ndarray
        The server point, flat.
    full : numpy.ndarray
        The full gradient at the round's start (RFedSVRG).
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    t : int
        Round.
    i : int
        Agent index.
    eta : float
        The client's step size.
    tau_i : int
        The client's local steps.
    method : int
        Algorithm code (:mod:`prirfed.verified.trainers.codes`: RFedSVRG, RFedAvg or RFedProx).
    option : int
        Option 1 (last local iterate) or 2 (drawn).
    mu : float
        RFedProx proximal weight.
    out : numpy.ndarray
        Output buffer, overwritten.

    Raises
    ------
    ValueError
        If a local iterate is not finite.
    """
    D = x.shape[0]
    cache = np.zeros(D)
    if method == METHOD_SVRG:
        cache = agent_grad(dims, x, Z, C, offsets, sizes, A, i) - full
    xl = x
    path = np.empty((tau_i, D))
    for ell in range(tau_i):
        d = agent_grad(dims, xl, Z, C, offsets, sizes, A, i)
        if method == METHOD_SVRG:
            d = d - transp(dims, x, xl, cache)  # (9): P_{x_t -> x_l}(grad f_i(x_t) - grad f(x_t))
        elif method == METHOD_PROX:
            d = d - mu * log(dims, xl, x)  # (27): grad f_i - mu Log_{x_l}(x_t)
        xl = exp(dims, xl, -eta * d)
        if not all_finite_kernel(xl):
            raise ValueError(LOCAL_NOT_FINITE)
        path[ell] = xl
    pick = tau_i
    if option == 2:
        pick = integers(open_stream(key, ROLE_AGENT, t, i), 1, tau_i + 1)
    out[:] = path[pick - 1]


@njit(cache=True)
def _guarded_client(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, i, eta, tau_i, method, option, mu, out):
    # exceptions inside a parallel region are lost: caught here, re-raised by a serial re-run
    try:
        client_update(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, i, eta, tau_i, method, option, mu, out)
    except Exception:  # noqa: BLE001 - re-raised by the serial re-run
        return 1
    return 0


@njit(cache=True, parallel=True)
def clients_round(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, S, etas, taus, method, option, mu, uploads):
    """uploads[q] = client S[q]'s upload in round t, in parallel (``prange``; the same result for every
    number of threads); a client that raises is run again serially to raise.

    Li and Ma (2023), Algorithms 1-3, the clients' part of a round.

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
    x : numpy.ndarray
        The server point, flat.
    full : numpy.ndarray
        The full gradient at the round's start (RFedSVRG).
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    t : int
        Round.
    S : numpy.ndarray
        The agents (clients) of the round.
    etas : numpy.ndarray
        Step size per client.
    taus : numpy.ndarray
        Local steps per client.
    method : int
        Algorithm code (:mod:`prirfed.verified.trainers.codes`: RFedSVRG, RFedAvg or RFedProx).
    option : int
        Option 1 or 2 of the uploads.
    mu : float
        RFedProx proximal weight.
    uploads : numpy.ndarray
        Output buffer, one row per agent of the round, overwritten.

    Raises
    ------
    ValueError
        If a client's iterate is not finite.
    """
    k = S.shape[0]
    status = np.zeros(k, dtype=np.int64)
    for q in prange(k):
        i = S[q]
        status[q] = _guarded_client(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, i, etas[i], taus[i], method,
                                    option, mu, uploads[q])
    for q in range(k):
        if status[q] != 0:
            i = S[q]
            client_update(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, i, etas[i], taus[i], method, option, mu,
                          uploads[q])


@njit(cache=True)
def federated_loop(dims, Z, C, offsets, sizes, A, ps, xstar, x0, T, k, etas, taus, key, method, option,
                   size_weights, mu, record_every, keep_iterates, aggregation=AGG_TANGENT):
    """Algorithms 1-3 of Li and Ma (2023) (reference: rfed._federated; maps through the class of ``dims``, the
    tangent space consensus (8) or the Karcher mean (7) by ``aggregation``). The first seven
    arguments are those of every fused loop (:class:`prirfed.verified.trainers.arrays.FusedArrays`).
    Returns (H, R, x_out): the history (f, ||grad f||, error) at rounds 0 and t + 1 with
    (t + 1) % record_every == 0 or t + 1 == T, the iterates there if kept, and the output (option 1:
    x_T; option 2: x_t with t = integers(1, T + 1) from the server's stream of round T).

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
    k : int
        Clients per round.
    etas : numpy.ndarray
        Step size per client.
    taus : numpy.ndarray
        Local steps per client.
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    method : int
        Algorithm code (:mod:`prirfed.verified.trainers.codes`: RFedSVRG, RFedAvg or RFedProx).
    option : int
        Option 1 or 2 (uploads and output).
    size_weights : bool
        Weight the uploads by the clients' sizes (else uniformly).
    mu : float
        RFedProx proximal weight.
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).
    keep_iterates : bool
        Keep the recorded iterates.
    aggregation : int, optional
        Server step code (:mod:`prirfed.verified.trainers.codes`: tangent mean or Karcher mean).

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
        If a server or client iterate is not finite.
    """
    D = x0.shape[0]
    N = sizes.shape[0]
    H, R, r, outer, x = start_rounds(dims, Z, C, offsets, sizes, A, ps, xstar, T, record_every, keep_iterates,
                                     option == 2, x0)
    uploads = np.empty((k, D))
    w = np.empty(k)
    for t in range(T):
        S = sample_without_replacement(open_stream(key, ROLE_SERVER, t, 0), N, k)
        full = np.zeros(D)
        if method == METHOD_SVRG:
            full = full_grad(dims, x, Z, C, offsets, sizes, A, ps)
        clients_round(dims, Z, C, offsets, sizes, A, ps, x, full, key, t, S, etas, taus, method, option, mu, uploads)
        for q in range(k):
            w[q] = sizes[S[q]] if size_weights else 1.0
        # tangent space consensus (8) / tangent mean (3.2), or the Karcher mean (7) / (3.1)
        x = aggregate(dims, x, uploads, w, aggregation)
        if not all_finite_kernel(x):
            raise ValueError("rfed (verified): a server iterate is not finite")
        r = keep_round(dims, Z, C, offsets, sizes, A, ps, xstar, H, R, r, outer, t, T, record_every, x)
    return H, R, option_output(option, x, outer, key, T)


def _run(where, method, problem, x0, T, k, eta, tau, rng, option, aggregation, weighting, record_every,
         keep_iterates, maps, mu=0.0):
    check_maps(where, maps)  # the reference's checks in the reference's order
    check_generator(where, rng)
    arr = problem_arrays(where, problem, maps, matrices=True)  # an unsupported problem: refused before its settings
    T, k, etas, taus, record_every = federated_settings(where, problem, T, k, eta, tau, option, aggregation, weighting,
                                                       record_every, keep_iterates)
    agg = fused_settings_only(where, "prirfed.reference.trainers.rfed", aggregation=aggregation)
    x = flat_start(problem.manifold, x0, where)
    xstar = history_optimum(problem)
    key = run_key(rng)
    with compiling(federated_loop, arr.dims):
        H, R, x_out = federated_loop(*arr, xstar, x, T, k, etas, taus, key, method, int(option), weighting == "size",
                                     float(mu), record_every, bool(keep_iterates), agg)
    hist = history_of(problem, recorded_rounds(T, record_every), H, R)
    return TrainResult(x=x_out.reshape(tuple(problem.manifold.ambient_shape)), history=hist)

def rfedsvrg(problem, x0, T, k, eta, tau, rng, *, option=1, aggregation="tangent", weighting="uniform",
             record_every="auto", keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rfed.rfedsvrg` (Algorithm 1 of Li and Ma (2023))."""
    return _run("rfedsvrg (verified)", METHOD_SVRG, problem, x0, T, k, eta, tau, rng, option, aggregation, weighting,
                record_every, keep_iterates, maps)


def rfedavg(problem, x0, T, k, eta, tau, rng, *, aggregation="tangent", weighting="uniform", record_every="auto",
            keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rfed.rfedavg` (Algorithm 2 of Li and Ma (2023))."""
    return _run("rfedavg (verified)", METHOD_AVG, problem, x0, T, k, eta, tau, rng, 1, aggregation, weighting,
                record_every, keep_iterates, maps)


def rfedprox(problem, x0, T, k, eta, tau, mu, rng, *, aggregation="tangent", weighting="uniform", record_every="auto",
             keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rfed.rfedprox` (Algorithm 3 of Li and Ma (2023))."""
    mu = check_nonnegative("rfedprox (verified)", "mu", mu)
    return _run("rfedprox (verified)", METHOD_PROX, problem, x0, T, k, eta, tau, rng, 1, aggregation, weighting,
                record_every, keep_iterates, maps, mu)
