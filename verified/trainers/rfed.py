"""Verified twins of :mod:`prirfed.reference.trainers.rfed`: RFedSVRG, RFedAvg, RFedProx (002 Algorithms 1-3), fused in Numba.

Mirrors ``reference/trainers/rfed.py``: same signatures, defaults, history and the SAME ORDER OF
RANDOM DRAWS (the contract in the reference module docstring): per round the client set S_t
(``k`` draws ``rng.integers(j, N)``, partial Fisher-Yates), then, for each client in the drawn
order, Option 2 (RFedSVRG only) draws ``rng.integers(1, tau_i + 1)``; after the rounds, Option 2
of the output draws ``rng.integers(1, T + 1)``.

The T rounds run in one ``@njit(cache=True)`` loop, :func:`federated_loop`, dispatching on the
method code (``METHOD_SVRG``, ``METHOD_AVG``, ``METHOD_PROX``) and on the manifold/problem codes of
:mod:`prirfed.verified.trainers.prirfed` (sphere PCA, SPD Frechet mean, HSP on the Lorentz model).
Local step directions (``x_t`` the server point, ``x_l`` the client's current point):

- RFedSVRG (9):  grad f_i(x_l) - Gamma_{x_t}^{x_l}(grad f_i(x_t) - grad f(x_t));
- RFedAvg:       grad f_i(x_l);
- RFedProx (27): grad f_i(x_l) - mu Log_{x_l}(x_t);

then x_{l+1} = Exp_{x_l}(-eta_i direction), and the tangent space consensus (8) or the Karcher mean
(7) (``aggregation="karcher"``) with uniform (002) or size (000 (3.2)) weights. ``maps="retraction"``
is fused on the sphere (``GEOM_SPHERE_RETR``) and, like ``maps="exp"``, on Stiefel kPCA (002 (3)),
which runs in :func:`prirfed.verified.trainers.stiefel.stiefel_federated_loop`; other settings
raise ``ValueError`` (use the reference).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.trainers.base import History, TrainResult, check_int
from prirfed.reference.trainers.prirfed import _per_agent

from .prirfed import (
    GEOM_STIEFEL,
    GEOM_STIEFEL_RETR,
    AGG_TANGENT,
    _aggregate,
    _exp,
    _log,
    _transp,
    fused_settings_only,
    problem_arrays,
    sample_without_replacement_kernel,
)
from .rgd import _agent_grad, _all_finite, full_grad_kernel

__all__ = ["rfedsvrg", "rfedavg", "rfedprox", "federated_loop", "METHOD_SVRG", "METHOD_AVG", "METHOD_PROX"]

METHOD_SVRG = 0
METHOD_AVG = 1
METHOD_PROX = 2


@njit(cache=True)
def federated_loop(geom, prob, n, x0, T, k, etas, taus, rng, Z, C, offsets, sizes, ps, method, option,
                   size_weights, mu, record_every, aggregation=AGG_TANGENT):
    """Algorithms 1-3 of 002 (reference: rfed._federated; maps through ``geom``, the tangent space
    consensus (8) or the Karcher mean (7) by ``aggregation``). Returns (R, x_out): the iterates at rounds 0 and t + 1 with
    (t + 1) % record_every == 0 or t + 1 == T, and the output (option 1: x_T; option 2: x_t with
    t = rng.integers(1, T + 1))."""
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
        S = sample_without_replacement_kernel(rng, N, k)
        full = np.zeros(D)
        if method == METHOD_SVRG:
            full = full_grad_kernel(geom, prob, n, x, Z, C, offsets, sizes, ps)
        uploads = np.empty((k, D))
        w = np.empty(k)
        for q in range(k):
            i = S[q]
            cache = np.zeros(D)
            if method == METHOD_SVRG:
                cache = _agent_grad(geom, prob, n, x, Z, C, offsets[i], sizes[i]) - full
            xl = x
            pick = taus[i]
            path = np.empty((taus[i], D))
            for ell in range(taus[i]):
                d = _agent_grad(geom, prob, n, xl, Z, C, offsets[i], sizes[i])
                if method == METHOD_SVRG:
                    d = d - _transp(geom, n, x, xl, cache)
                elif method == METHOD_PROX:
                    d = d - mu * _log(geom, n, xl, x)
                xl = _exp(geom, n, xl, -etas[i] * d)
                if not _all_finite(xl):
                    raise ValueError("rfed (verified): a local iterate is not finite (the steps overflow: reduce eta)")
                path[ell] = xl
            if option == 2:
                pick = rng.integers(1, taus[i] + 1)
            uploads[q] = path[pick - 1]
            w[q] = sizes[i] if size_weights else 1.0
        # tangent space consensus (8) / tangent mean (3.2), or the Karcher mean (7) / (3.1)
        x = _aggregate(geom, n, x, uploads, w, aggregation)
        if not _all_finite(x):
            raise ValueError("rfed (verified): a server iterate is not finite")
        if option == 2:
            outer[t] = x
        if (t + 1) % record_every == 0 or t + 1 == T:
            R[r] = x
            r += 1
    if option == 1:
        return R, x
    return R, outer[rng.integers(1, T + 1) - 1].copy()


def _run(where, method, problem, x0, T, k, eta, tau, rng, option, aggregation, weighting, record_every,
         keep_iterates, maps, mu=0.0):
    agg = fused_settings_only(where, "prirfed.reference.trainers.rfed", rng, aggregation=aggregation)
    geom, prob, n, Z, C, offsets = problem_arrays(where, problem, maps)
    M = problem.manifold
    N = problem.N
    T = check_int(where, "T", T)
    k = check_int(where, "k", k, 1, N)
    if option not in (1, 2):
        raise ValueError(f"{where}: option must be 1 or 2 (got {option!r})")
    if weighting not in ("uniform", "size"):
        raise ValueError(f"{where}: weighting must be 'uniform' (002 (8)) or 'size' (000 (3.2)) (got {weighting!r})")
    etas = _per_agent(where, "eta", eta, N)
    if np.any(~np.isfinite(etas)) or np.any(etas <= 0):
        raise ValueError(f"{where}: step sizes eta must be positive and finite (got {eta!r})")
    taus = _per_agent(where, "tau", tau, N)
    if np.any(taus < 1) or np.any(taus != np.round(taus)):
        raise ValueError(f"{where}: local step counts tau_i must be integers >= 1 (got {tau!r})")
    taus = taus.astype(np.int64)
    record_every = check_int(where, "record_every", record_every)
    x = M.check_point(x0, where=where)
    x = np.ascontiguousarray(x, dtype=np.float64).ravel()
    sizes = np.asarray(problem.sizes, dtype=np.int64)
    ps = np.asarray(problem.weights, dtype=np.float64)
    if geom in (GEOM_STIEFEL, GEOM_STIEFEL_RETR):
        from .stiefel import kpca_arrays, stiefel_federated_loop

        R, x_out = stiefel_federated_loop(geom, problem.d, problem.r, x, T, k, etas, taus, rng, kpca_arrays(problem),
                                          sizes, ps, method, int(option), weighting == "size", float(mu), agg,
                                          record_every)
    else:
        R, x_out = federated_loop(geom, prob, n, x, T, k, etas, taus, rng, Z, C, offsets, sizes, ps, method,
                                  int(option), weighting == "size", float(mu), record_every, agg)
    shape = tuple(M.ambient_shape)
    rounds = [0] + [t + 1 for t in range(T) if (t + 1) % record_every == 0 or t + 1 == T]
    hist = History()
    for r, t in enumerate(rounds):
        hist.record(problem, t, R[r].reshape(shape), keep_iterates)
    return TrainResult(x=x_out.reshape(shape), history=hist)


def rfedsvrg(problem, x0, T, k, eta, tau, rng, *, option=1, aggregation="tangent", weighting="uniform",
             record_every=1, keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rfed.rfedsvrg` (Algorithm 1 of 002)."""
    return _run("rfedsvrg (verified)", METHOD_SVRG, problem, x0, T, k, eta, tau, rng, option, aggregation, weighting,
                record_every, keep_iterates, maps)


def rfedavg(problem, x0, T, k, eta, tau, rng, *, aggregation="tangent", weighting="uniform", record_every=1,
            keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rfed.rfedavg` (Algorithm 2 of 002)."""
    return _run("rfedavg (verified)", METHOD_AVG, problem, x0, T, k, eta, tau, rng, 1, aggregation, weighting,
                record_every, keep_iterates, maps)


def rfedprox(problem, x0, T, k, eta, tau, mu, rng, *, aggregation="tangent", weighting="uniform", record_every=1,
             keep_iterates=False, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.rfed.rfedprox` (Algorithm 3 of 002)."""
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"rfedprox (verified): mu must be finite and >= 0 (got {mu!r})")
    return _run("rfedprox (verified)", METHOD_PROX, problem, x0, T, k, eta, tau, rng, 1, aggregation, weighting,
                record_every, keep_iterates, maps, mu)
