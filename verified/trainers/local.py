"""Verified twins of :mod:`prirfed.reference.trainers.local`: DP-RSGD (Algorithm 2 of Huang et al. (2024)) and
DP-RSVRG (Algorithm 3 of Huang et al. (2024)), the local training of one agent, fused in Numba.

Mirrors ``reference/trainers/local.py``: same signatures, defaults, validation and result, and the
same random draws (the contract in that module's docstring; the policy in
:mod:`prirfed.reference.randomness`): one stream per (round t, agent i), in it, in order,

- DP-RSGD, per step k: the batch (``batch_into``: ``b_i`` bounded integers ``integers(j, N_i)``,
  partial Fisher-Yates; none for a full batch, which is the rows in order), then if sigma_i > 0 the
  tangent noise (the O(dim) closed form of the geometry,
  :func:`prirfed.verified.trainers.geometry.noise_into`); Option 2: one ``integers(0, K + 1)``.
- DP-RSVRG, per inner step: ``integers(0, N_i)``, then the noise if sigma_i > 0; Option 2: one
  ``integers(0, K * m)``.

:func:`agent_update` runs one agent from x on its stream of round t; the PriRFed loop runs it for the
agents of a round in parallel (:func:`agents_round`: ``prange`` over the agents, each writing its own
row, so the result does not depend on the number of threads). A standalone call
(:func:`dp_rsgd_local`) draws the run key from the caller's Generator and runs agent i's stream of
round 0, the same compiled code.

The per-sample work is in place (``add_clipped_grad`` adds each clipped gradient into the running
sum; the batch indices, the sum, the noise and the scratch vector are allocated once per agent run).
Supported problems: those of :func:`prirfed.verified.trainers.arrays.problem_arrays`; anything else
raises ``ValueError`` naming the reference function to use. Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from prirfed.reference.checks import check_int
from prirfed.reference.manifolds.retracted import check_maps
from prirfed.reference.manifolds.retracted import geometry as reference_geometry
from prirfed.reference.randomness import ROLE_AGENT, Stream, run_key
from prirfed.reference.trainers.local import check_local_args, check_local_rng, check_option
from prirfed.verified.kernels import all_finite_kernel
from prirfed.verified.randomness import batch_into, integers, open_stream

from .arrays import problem_arrays
from .codes import LOCAL_DP_RSGD, LOCAL_DP_RSVRG
from .geometry import add_clipped_grad, clip_or_identity, exp, grad_sample, noise_into, noisy_clipped_mean_into, transp

__all__ = ["dp_rsgd_local", "dp_rsvrg_local", "agent_update", "agents_round", "dp_rsgd_agent", "dp_rsvrg_agent",
           "NOT_FINITE"]

NOT_FINITE = "prirfed (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)"


@njit(cache=True, inline="always")
def dp_rsgd_agent(dims, Z, C, off, N_i, x, K, b, sigma, tau, alpha, st, option):
    """Algorithm 2 of Huang et al. (2024) (reference: local.dp_rsgd_local) from x on the stream st.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    off : int
        First row of the agent in ``Z``.
    N_i : int
        The agent's number of samples.
    x : numpy.ndarray
        Start point, flat.
    K : int
        Local steps.
    b : int
        Batch size.
    sigma : float
        Noise standard deviation (0: no noise).
    tau : float
        Clipping threshold (``inf``: no clipping).
    alpha : float
        Step size.
    st : numpy.ndarray
        The agent's stream state, advanced in place.
    option : int
        Option 1 (last iterate) or 2 (uniformly drawn iterate).

    Returns
    -------
    numpy.ndarray
        The agent's upload, flat.

    Raises
    ------
    ValueError
        If an iterate is not finite (the steps overflow).
    """
    D = x.shape[0]
    xk = x
    its = np.empty((K + 1 if option == 2 else 0, D))
    if option == 2:
        its[0] = x
    perm = np.empty(N_i, dtype=np.int64)
    mean = np.empty(D)
    work = np.empty(D)
    eps = np.empty(D)
    for k in range(K):
        batch_into(st, perm, N_i, b)
        noisy_clipped_mean_into(dims, xk, Z, C, perm, off, b, tau, sigma, st, mean, work, eps)
        xk = exp(dims, xk, -alpha * mean)
        if not all_finite_kernel(xk):
            raise ValueError(NOT_FINITE)
        if option == 2:
            its[k + 1] = xk
    if option == 1:
        return xk
    return its[integers(st, 0, K + 1)].copy()


@njit(cache=True, inline="always")
def dp_rsvrg_agent(dims, Z, C, off, N_i, x, K, m, sigma, tau0, tau1, alpha, st, option):
    """Algorithm 3 of Huang et al. (2024) (reference: local.dp_rsvrg_local) from x on the stream st.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    off : int
        First row of the agent in ``Z``.
    N_i : int
        The agent's number of samples.
    x : numpy.ndarray
        Start point, flat.
    K : int
        Outer iterations.
    m : int
        DP-RSVRG inner-loop length.
    sigma : float
        Noise standard deviation (0: no noise).
    tau0 : float
        DP-RSVRG clipping threshold of the full gradient.
    tau1 : float
        DP-RSVRG clipping threshold of the per-sample terms.
    alpha : float
        Step size.
    st : numpy.ndarray
        The agent's stream state, advanced in place.
    option : int
        Option 1 (last iterate) or 2 (uniformly drawn iterate).

    Returns
    -------
    numpy.ndarray
        The agent's upload, flat.

    Raises
    ------
    ValueError
        If an iterate is not finite (the steps overflow).
    """
    D = x.shape[0]
    x_tilde = x
    inner = np.empty((K * m if option == 2 else 0, D))
    g = np.empty(D)
    work = np.empty(D)
    eps = np.zeros(D)
    for k in range(K):
        xkj = x_tilde
        g[:] = 0.0
        for j in range(N_i):
            add_clipped_grad(dims, x_tilde, Z, C, off + j, tau0, g, work)
        for j in range(D):
            g[j] = g[j] / N_i
        for j in range(m):
            if option == 2:
                inner[k * m + j] = xkj
            l = integers(st, 0, N_i)
            if sigma != 0.0:
                noise_into(dims, xkj, sigma, st, eps)
            correction = clip_or_identity(dims, x_tilde, grad_sample(dims, x_tilde, Z, off + l, C[off + l]), tau1) - g
            eta = (clip_or_identity(dims, xkj, grad_sample(dims, xkj, Z, off + l, C[off + l]), tau1)
                   - transp(dims, x_tilde, xkj, correction) + eps)
            xkj = exp(dims, xkj, -alpha * eta)
            if not all_finite_kernel(xkj):
                raise ValueError(NOT_FINITE)
        x_tilde = xkj
    if option == 1:
        return x_tilde
    return inner[integers(st, 0, K * m)].copy()


@njit(cache=True)
def agent_update(dims, Z, C, offsets, sizes, x, key, t, i, local, K, b, m, sigma, tau, tau0, tau1, alpha, option,
                 out):
    """out = agent i's local training (DP-RSGD for ``local`` = LOCAL_DP_RSGD, else DP-RSVRG) from x on
    its stream of round t (reference: prirfed.prirfed's inner loop, local.dp_rsgd_local).

    Huang et al. (2024), Algorithm 1, lines 3-8, for one agent.

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
    x : numpy.ndarray
        The server point, flat.
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    t : int
        Round.
    i : int
        Agent index.
    local : int
        Local trainer code (:mod:`prirfed.verified.trainers.codes`: DP-RSGD or DP-RSVRG).
    K : int
        Local iterations.
    b : int
        The agent's batch size (DP-RSGD).
    m : int
        DP-RSVRG inner-loop length.
    sigma : float
        The agent's noise standard deviation.
    tau : float
        Clipping threshold (``inf``: no clipping).
    tau0 : float
        DP-RSVRG clipping threshold of the full gradient.
    tau1 : float
        DP-RSVRG clipping threshold of the per-sample terms.
    alpha : float
        Step size.
    option : int
        The local trainers' option, 1 or 2.
    out : numpy.ndarray
        The agent's upload, overwritten.

    Raises
    ------
    ValueError
        If an iterate is not finite.
    """
    st = open_stream(key, ROLE_AGENT, t, i)
    if local == LOCAL_DP_RSGD:
        y = dp_rsgd_agent(dims, Z, C, offsets[i], sizes[i], x, K, b, sigma, tau, alpha, st, option)
    else:
        y = dp_rsvrg_agent(dims, Z, C, offsets[i], sizes[i], x, K, m, sigma, tau0, tau1, alpha, st, option)
    out[:] = y


@njit(cache=True)
def _guarded_update(dims, Z, C, offsets, sizes, x, key, t, i, local, K, b, m, sigma, tau, tau0, tau1, alpha, option,
                    out):
    # an exception raised inside a parallel region is lost, so the parallel loop catches it here
    # and agents_round re-runs the failing agent serially, which raises it with its message
    try:
        agent_update(dims, Z, C, offsets, sizes, x, key, t, i, local, K, b, m, sigma, tau, tau0, tau1, alpha, option,
                     out)
    except Exception:  # noqa: BLE001 - re-raised by the serial re-run
        return 1
    return 0


@njit(cache=True, parallel=True)
def agents_round(dims, Z, C, offsets, sizes, x, key, t, S, local, K, bs, m, sigmas, tau, tau0, tau1, alpha, option,
                 uploads):
    """uploads[q] = agent S[q]'s local training from x in round t, for q = 0..len(S)-1, in parallel
    (``prange``; each agent reads only its own stream and writes only its own row, so the result is
    the same for every number of threads). An agent that raises is run again serially to raise.

    Huang et al. (2024), Algorithm 1, lines 3-8.

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
    x : numpy.ndarray
        The server point, flat.
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    t : int
        Round.
    S : numpy.ndarray
        The agents of the round.
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
    alpha : float
        Step size.
    option : int
        The local trainers' option, 1 or 2.
    uploads : numpy.ndarray
        Output buffer, one row per agent of the round, overwritten.

    Raises
    ------
    ValueError
        If an agent's iterate is not finite.
    """
    s = S.shape[0]
    status = np.zeros(s, dtype=np.int64)
    for q in prange(s):
        i = S[q]
        status[q] = _guarded_update(dims, Z, C, offsets, sizes, x, key, t, i, local, K, bs[i], m, sigmas[i], tau, tau0,
                                    tau1, alpha, option, uploads[q])
    for q in range(s):
        if status[q] != 0:
            i = S[q]
            agent_update(dims, Z, C, offsets, sizes, x, key, t, i, local, K, bs[i], m, sigmas[i], tau, tau0, tau1,
                         alpha, option, uploads[q])


def _run(where, problem, i, x, local, K, b, m, sigma, tau, tau0, tau1, alpha, rng, option, maps):
    check_local_rng(where, rng, i)
    check_maps(where, maps)
    key, t = (rng.key, rng.t) if isinstance(rng, Stream) else (None, 0)
    try:
        arr = problem_arrays(where, problem, maps)
    except ValueError as exc:
        raise ValueError(f"{exc}; use prirfed.reference.trainers.local") from None
    M = reference_geometry(problem.manifold, maps, where)
    x = M.check_point(x, where=where) if M.validate else np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
    if key is None:
        key = run_key(rng)
    out = np.empty_like(flat)
    agent_update(arr.dims, arr.Z, arr.C, arr.offsets, arr.sizes, flat, key, np.int64(t), np.int64(i), local, int(K),
                 int(b), int(m), float(sigma), float(tau), float(tau0), float(tau1), float(alpha), int(option), out)
    return out.reshape(tuple(problem.manifold.ambient_shape))


def dp_rsgd_local(problem, i, x, K, b, sigma, tau, alpha, rng, option=1, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.local.dp_rsgd_local` (Algorithm 2 of Huang et al. (2024))."""
    where = "dp_rsgd_local (verified)"
    i, K, sigma, alpha, tau = check_local_args(where, problem, i, K, sigma, alpha, tau=tau)
    check_option(where, option)
    b = check_int(where, "b", b, 1, problem.sizes[i])
    return _run(where, problem, i, x, LOCAL_DP_RSGD, K, b, 1, sigma, tau, tau, tau, alpha, rng, option, maps)


def dp_rsvrg_local(problem, i, x, K, m, sigma, tau0, tau1, alpha, rng, option=1, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.local.dp_rsvrg_local` (Algorithm 3 of Huang et al. (2024))."""
    where = "dp_rsvrg_local (verified)"
    i, K, sigma, alpha, tau0, tau1 = check_local_args(where, problem, i, K, sigma, alpha, tau0=tau0, tau1=tau1)
    check_option(where, option)
    m = check_int(where, "m", m)
    return _run(where, problem, i, x, LOCAL_DP_RSVRG, K, 1, m, sigma, tau0, tau0, tau1, alpha, rng, option, maps)
