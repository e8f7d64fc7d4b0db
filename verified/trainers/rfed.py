"""Verified twins of :mod:`prirfed.reference.trainers.rfed`: RFedSVRG, RFedAvg, RFedProx (002 Algorithms 1-3), fused in Numba.

Mirrors ``reference/trainers/rfed.py``: same signatures, defaults, history and the SAME ORDER OF
RANDOM DRAWS (the contract in the reference module docstring): per round the client set S_t
(``k`` draws ``rng.integers(j, N)``, partial Fisher-Yates), then, for each client in the drawn
order, Option 2 (RFedSVRG only) draws ``rng.integers(1, tau_i + 1)``; after the rounds, Option 2
of the output draws ``rng.integers(1, T + 1)``.

The T rounds run in one ``@njit(cache=True)`` loop, :func:`federated_loop`, dispatching on the
method code (``METHOD_SVRG``, ``METHOD_AVG``, ``METHOD_PROX``) and on the manifold/problem codes of
:mod:`prirfed.verified.trainers.codes`, written once for every geometry family
(:mod:`prirfed.verified.trainers.geometry`: sphere PCA, SPD Frechet mean, HSP on the Lorentz model;
Stiefel kPCA, 002 (3)).
Local step directions (``x_t`` the server point, ``x_l`` the client's current point):

- RFedSVRG (9):  grad f_i(x_l) - Gamma_{x_t}^{x_l}(grad f_i(x_t) - grad f(x_t));
- RFedAvg:       grad f_i(x_l);
- RFedProx (27): grad f_i(x_l) - mu Log_{x_l}(x_t);

then x_{l+1} = Exp_{x_l}(-eta_i direction), and the tangent space consensus (8) or the Karcher mean
(7) (``aggregation="karcher"``) with uniform (002) or size (000 (3.2)) weights. ``maps="retraction"``
is fused on the sphere (``GEOM_SPHERE_RETR``) and on Stiefel kPCA (``GEOM_STIEFEL_RETR``); other
settings raise ``ValueError`` (use the reference).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.trainers.base import TrainResult
from prirfed.reference.trainers.rfed import federated_settings
from prirfed.verified.kernels import all_finite_kernel

from .arrays import flat_start, fused_settings_only, history_of, problem_arrays
from .codes import AGG_TANGENT, METHOD_AVG, METHOD_PROX, METHOD_SVRG
from .draws import sample_without_replacement_kernel
from .geometry import agent_grad, aggregate, exp, full_grad, log, transp
from .records import keep_round, option_output, recorded_rounds, start_rounds

__all__ = ["rfedsvrg", "rfedavg", "rfedprox", "federated_loop", "METHOD_SVRG", "METHOD_AVG", "METHOD_PROX"]


@njit(cache=True)
def federated_loop(geom, prob, dims, Z, C, offsets, sizes, A, ps, x0, T, k, etas, taus, rng, method, option,
                   size_weights, mu, record_every, aggregation=AGG_TANGENT):
    """Algorithms 1-3 of 002 (reference: rfed._federated; maps through ``geom``, the tangent space
    consensus (8) or the Karcher mean (7) by ``aggregation``). The first nine arguments are those of
    every fused loop (:class:`prirfed.verified.trainers.arrays.FusedArrays`). Returns (R, x_out): the
    iterates at rounds 0 and t + 1 with (t + 1) % record_every == 0 or t + 1 == T, and the output
    (option 1: x_T; option 2: x_t with t = rng.integers(1, T + 1))."""
    D = x0.shape[0]
    N = sizes.shape[0]
    R, r, outer, x = start_rounds(T, record_every, option == 2, x0)
    for t in range(T):
        S = sample_without_replacement_kernel(rng, N, k)
        full = np.zeros(D)
        if method == METHOD_SVRG:
            full = full_grad(prob, dims, x, Z, C, offsets, sizes, A, ps)
        uploads = np.empty((k, D))
        w = np.empty(k)
        for q in range(k):
            i = S[q]
            cache = np.zeros(D)
            if method == METHOD_SVRG:
                cache = agent_grad(prob, dims, x, Z, C, offsets, sizes, A, i) - full
            xl = x
            pick = taus[i]
            path = np.empty((taus[i], D))
            for ell in range(taus[i]):
                d = agent_grad(prob, dims, xl, Z, C, offsets, sizes, A, i)
                if method == METHOD_SVRG:
                    d = d - transp(geom, dims, x, xl, cache)  # (9): P_{x_t -> x_l}(grad f_i(x_t) - grad f(x_t))
                elif method == METHOD_PROX:
                    d = d - mu * log(geom, dims, xl, x)  # (27): grad f_i - mu Log_{x_l}(x_t)
                xl = exp(geom, dims, xl, -etas[i] * d)
                if not all_finite_kernel(xl):
                    raise ValueError("rfed (verified): a local iterate is not finite (the steps overflow: reduce eta)")
                path[ell] = xl
            if option == 2:
                pick = rng.integers(1, taus[i] + 1)
            uploads[q] = path[pick - 1]
            w[q] = sizes[i] if size_weights else 1.0
        # tangent space consensus (8) / tangent mean (3.2), or the Karcher mean (7) / (3.1)
        x = aggregate(geom, dims, x, uploads, w, aggregation)
        if not all_finite_kernel(x):
            raise ValueError("rfed (verified): a server iterate is not finite")
        r = keep_round(R, r, outer, t, T, record_every, x)
    return R, option_output(option, x, outer, rng, T)


def _run(where, method, problem, x0, T, k, eta, tau, rng, option, aggregation, weighting, record_every,
         keep_iterates, maps, mu=0.0):
    agg = fused_settings_only(where, "prirfed.reference.trainers.rfed", rng, aggregation=aggregation)
    arr = problem_arrays(where, problem, maps, matrices=True)
    T, k, etas, taus, record_every = federated_settings(where, problem, T, k, eta, tau, option, aggregation, weighting,
                                                       record_every)
    x = flat_start(problem.manifold, x0, where)
    R, x_out = federated_loop(*arr, x, T, k, etas, taus, rng, method, int(option), weighting == "size", float(mu),
                              record_every, agg)
    hist = history_of(problem, recorded_rounds(T, record_every), R, keep_iterates)
    return TrainResult(x=x_out.reshape(tuple(problem.manifold.ambient_shape)), history=hist)


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
