"""Verified twins of :mod:`prirfed.reference.trainers.local`: DP-RSGD (Algorithm 2 of 000) and
DP-RSVRG (Algorithm 3 of 000), the local training of one agent, as standalone compiled trainers.

Mirrors ``reference/trainers/local.py``: same signatures, defaults, validation, result and the
same order of random draws (the contract in that module's docstring). The loops are the ones
the fused PriRFed loop runs for each selected agent (:func:`prirfed.verified.trainers.prirfed._dp_rsgd_local`,
``_dp_rsvrg_local`` and their Stiefel versions in :mod:`prirfed.verified.trainers.stiefel`), called here
for one agent from one small ``@njit(cache=True)`` entry point per geometry family, so a
standalone local run and a local step inside PriRFed are the same compiled code.

Supported problems: those of :func:`prirfed.verified.trainers.prirfed.problem_arrays` (sphere PCA,
the SPD Frechet mean, HSP on the Lorentz model, Stiefel kPCA; ``maps="retraction"`` on the sphere
and Stiefel); anything else raises ``ValueError`` naming the reference function to use.
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.manifolds.retracted import geometry
from prirfed.reference.trainers.base import check_int
from prirfed.reference.trainers.local import _check_common, _check_option

from .prirfed import (GEOM_STIEFEL, GEOM_STIEFEL_RETR, LOCAL_DP_RSGD, LOCAL_DP_RSVRG, _dp_rsgd_local,
                      _dp_rsvrg_local, problem_arrays)
from .stiefel import _st_dp_rsgd_local, _st_dp_rsvrg_local

__all__ = ["dp_rsgd_local", "dp_rsvrg_local", "local_kernel", "stiefel_local_kernel"]


@njit(cache=True)
def local_kernel(geom, prob, n, x, Z, C, off, N_i, local, K, b, m, sigma, tau, tau0, tau1, alpha, rng, option):
    """One agent's DP-RSGD (``local`` = LOCAL_DP_RSGD) or DP-RSVRG local training on the sphere,
    SPD or Lorentz geometries (flat vectors, as in :func:`prirfed.verified.trainers.prirfed.prirfed_loop`)."""
    if local == LOCAL_DP_RSGD:
        return _dp_rsgd_local(geom, prob, n, x, Z, C, off, N_i, K, b, sigma, tau, alpha, rng, option)
    return _dp_rsvrg_local(geom, prob, n, x, Z, C, off, N_i, K, m, sigma, tau0, tau1, alpha, rng, option)


@njit(cache=True)
def stiefel_local_kernel(geom, d, r, x, Z, C, off, N_i, local, K, b, m, sigma, tau, tau0, tau1, alpha, rng, option):
    """The same on Stiefel kPCA (:mod:`prirfed.verified.trainers.stiefel`)."""
    if local == LOCAL_DP_RSGD:
        return _st_dp_rsgd_local(geom, d, r, x, Z, C, off, N_i, K, b, sigma, tau, alpha, rng, option)
    return _st_dp_rsvrg_local(geom, d, r, x, Z, C, off, N_i, K, m, sigma, tau0, tau1, alpha, rng, option)


def _run(where, problem, i, x, local, K, b, m, sigma, tau, tau0, tau1, alpha, rng, option, maps):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    try:
        geom, prob, n, Z, C, offsets = problem_arrays(where, problem, maps)
    except ValueError as exc:
        raise ValueError(f"{exc}; use prirfed.reference.trainers.local") from None
    M = geometry(problem.manifold, maps)
    x = M.check_point(x, where=where) if M.validate else np.asarray(x, dtype=np.float64)
    shape = tuple(problem.manifold.ambient_shape)
    flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
    args = (flat, Z, C, int(offsets[i]), int(problem.sizes[i]), local, int(K), int(b), int(m), float(sigma),
            float(tau), float(tau0), float(tau1), float(alpha), rng, int(option))
    if geom in (GEOM_STIEFEL, GEOM_STIEFEL_RETR):
        out = stiefel_local_kernel(geom, int(problem.d), int(problem.r), *args)
    else:
        out = local_kernel(geom, prob, n, *args)
    return out.reshape(shape)


def dp_rsgd_local(problem, i, x, K, b, sigma, tau, alpha, rng, option=1, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.local.dp_rsgd_local` (Algorithm 2 of 000)."""
    where = "dp_rsgd_local (verified)"
    _check_common(where, problem, i, K, sigma, tau, alpha)
    _check_option(where, option)
    b = check_int(where, "b", b, 1, problem.sizes[i])
    return _run(where, problem, i, x, LOCAL_DP_RSGD, K, b, 1, sigma, tau, tau, tau, alpha, rng, option, maps)


def dp_rsvrg_local(problem, i, x, K, m, sigma, tau0, tau1, alpha, rng, option=1, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.local.dp_rsvrg_local` (Algorithm 3 of 000)."""
    where = "dp_rsvrg_local (verified)"
    _check_common(where, problem, i, K, sigma, min(tau0, tau1), alpha)
    _check_option(where, option)
    m = check_int(where, "m", m)
    return _run(where, problem, i, x, LOCAL_DP_RSVRG, K, 1, m, sigma, tau0, tau0, tau1, alpha, rng, option, maps)
