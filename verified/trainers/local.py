"""Verified twins of :mod:`prirfed.reference.trainers.local`: DP-RSGD (Algorithm 2 of 000) and
DP-RSVRG (Algorithm 3 of 000), the local training of one agent, fused in Numba.

Mirrors ``reference/trainers/local.py``: same signatures, defaults, validation, result and the
same order of random draws (the contract in that module's docstring):

- DP-RSGD, per step k: the batch (``b_i`` draws ``rng.integers(j, N_i)``), then if sigma_i > 0
  the tangent noise (one ``rng.standard_normal(dim)``, combined with the manifold's
  ``tangent_basis``); Option 2: one ``rng.integers(0, K + 1)`` after the steps.
- DP-RSVRG, per inner step: ``rng.integers(0, N_i)``, then the noise if sigma_i > 0;
  Option 2: one ``rng.integers(0, K * m)`` after the loops.

:func:`dp_rsgd_local_kernel` and :func:`dp_rsvrg_local_kernel` are the loops the fused PriRFed loop
(:func:`prirfed.verified.trainers.prirfed.prirfed_loop`) runs for each selected agent
(``inline="always"``); :func:`local_kernel` calls them for one agent, so a standalone local run and
a local step inside PriRFed are the same compiled code. Written once for every geometry family
(:mod:`prirfed.verified.trainers.geometry`; ``dims`` an int or the pair (d, r)).

Supported problems: those of :func:`prirfed.verified.trainers.arrays.problem_arrays` (sphere PCA,
the SPD Frechet mean, HSP on the Lorentz model, Stiefel kPCA; ``maps="retraction"`` on the sphere
and Stiefel); anything else raises ``ValueError`` naming the reference function to use.
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.checks import check_int
from prirfed.reference.manifolds.retracted import geometry as reference_geometry
from prirfed.reference.trainers.local import check_local_args, check_option
from prirfed.verified.kernels import all_finite_kernel

from .arrays import problem_arrays
from .codes import LOCAL_DP_RSGD, LOCAL_DP_RSVRG
from .draws import sample_without_replacement_kernel
from .geometry import clip_or_identity, exp, grad_sample, noise, transp

__all__ = ["dp_rsgd_local", "dp_rsvrg_local", "local_kernel", "dp_rsgd_local_kernel", "dp_rsvrg_local_kernel"]

NOT_FINITE = "prirfed (verified): an iterate is not finite (the steps overflow: reduce alpha or clip)"


@njit(cache=True, inline="always")
def dp_rsgd_local_kernel(geom, prob, dims, x, Z, C, off, N_i, K, b, sigma, tau, alpha, rng, option):
    """Algorithm 2 of 000 (reference: local.dp_rsgd_local), on flat vectors."""
    D = x.shape[0]
    xk = x
    its = np.empty((K + 1 if option == 2 else 0, D))
    if option == 2:
        its[0] = x
    for k in range(K):
        B = sample_without_replacement_kernel(rng, N_i, b)
        mean = np.zeros(D)
        for q in range(b):
            g = grad_sample(prob, dims, xk, Z, off + B[q], C[off + B[q]])
            mean = mean + clip_or_identity(geom, dims, xk, g, tau)
        eta = mean / b
        if sigma != 0.0:
            eta = eta + noise(geom, dims, xk, sigma, rng)
        xk = exp(geom, dims, xk, -alpha * eta)
        if not all_finite_kernel(xk):
            raise ValueError(NOT_FINITE)
        if option == 2:
            its[k + 1] = xk
    if option == 1:
        return xk
    return its[rng.integers(0, K + 1)].copy()


@njit(cache=True, inline="always")
def dp_rsvrg_local_kernel(geom, prob, dims, x, Z, C, off, N_i, K, m, sigma, tau0, tau1, alpha, rng, option):
    """Algorithm 3 of 000 (reference: local.dp_rsvrg_local), on flat vectors."""
    D = x.shape[0]
    x_tilde = x
    inner = np.empty((K * m if option == 2 else 0, D))
    for k in range(K):
        xkj = x_tilde
        g = np.zeros(D)
        for j in range(N_i):
            g = g + clip_or_identity(geom, dims, x_tilde, grad_sample(prob, dims, x_tilde, Z, off + j, C[off + j]), tau0)
        g = g / N_i
        for j in range(m):
            if option == 2:
                inner[k * m + j] = xkj
            l = rng.integers(0, N_i)
            if sigma != 0.0:
                eps = noise(geom, dims, xkj, sigma, rng)
            else:
                eps = np.zeros(D)
            correction = clip_or_identity(geom, dims, x_tilde, grad_sample(prob, dims, x_tilde, Z, off + l, C[off + l]),
                                          tau1) - g
            eta = (clip_or_identity(geom, dims, xkj, grad_sample(prob, dims, xkj, Z, off + l, C[off + l]), tau1)
                   - transp(geom, dims, x_tilde, xkj, correction) + eps)
            xkj = exp(geom, dims, xkj, -alpha * eta)
            if not all_finite_kernel(xkj):
                raise ValueError(NOT_FINITE)
        x_tilde = xkj
    if option == 1:
        return x_tilde
    return inner[rng.integers(0, K * m)].copy()


@njit(cache=True)
def local_kernel(geom, prob, dims, Z, C, offsets, sizes, A, ps, x, i, local, K, b, m, sigma, tau, tau0, tau1, alpha,
                 rng, option):
    """Agent i's DP-RSGD (``local`` = LOCAL_DP_RSGD) or DP-RSVRG local training from x. The first nine
    arguments are those of every fused loop (:class:`prirfed.verified.trainers.arrays.FusedArrays`)."""
    if local == LOCAL_DP_RSGD:
        return dp_rsgd_local_kernel(geom, prob, dims, x, Z, C, offsets[i], sizes[i], K, b, sigma, tau, alpha, rng,
                                    option)
    return dp_rsvrg_local_kernel(geom, prob, dims, x, Z, C, offsets[i], sizes[i], K, m, sigma, tau0, tau1, alpha, rng,
                                 option)


def _run(where, problem, i, x, local, K, b, m, sigma, tau, tau0, tau1, alpha, rng, option, maps):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{where}: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    try:
        arr = problem_arrays(where, problem, maps)
    except ValueError as exc:
        raise ValueError(f"{exc}; use prirfed.reference.trainers.local") from None
    M = reference_geometry(problem.manifold, maps)
    x = M.check_point(x, where=where) if M.validate else np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
    out = local_kernel(*arr, flat, int(i), local, int(K), int(b), int(m), float(sigma), float(tau), float(tau0),
                       float(tau1), float(alpha), rng, int(option))
    return out.reshape(tuple(problem.manifold.ambient_shape))


def dp_rsgd_local(problem, i, x, K, b, sigma, tau, alpha, rng, option=1, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.local.dp_rsgd_local` (Algorithm 2 of 000)."""
    where = "dp_rsgd_local (verified)"
    check_local_args(where, problem, i, K, sigma, tau, alpha)
    check_option(where, option)
    b = check_int(where, "b", b, 1, problem.sizes[i])
    return _run(where, problem, i, x, LOCAL_DP_RSGD, K, b, 1, sigma, tau, tau, tau, alpha, rng, option, maps)


def dp_rsvrg_local(problem, i, x, K, m, sigma, tau0, tau1, alpha, rng, option=1, maps="exp"):
    """Verified twin of :func:`prirfed.reference.trainers.local.dp_rsvrg_local` (Algorithm 3 of 000)."""
    where = "dp_rsvrg_local (verified)"
    check_local_args(where, problem, i, K, sigma, min(tau0, tau1), alpha)
    check_option(where, option)
    m = check_int(where, "m", m)
    return _run(where, problem, i, x, LOCAL_DP_RSVRG, K, 1, m, sigma, tau0, tau0, tau1, alpha, rng, option, maps)
