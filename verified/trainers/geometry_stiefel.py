"""The geometry family "stiefel" of the fused loops: St(d, r) kPCA (002 (3)) on flat vectors.

Points and tangent vectors are flat float64 vectors of length d r (row-major X), reshaped to
(d, r) for the kernels of :mod:`prirfed.verified.manifolds.stiefel`. The functions have the
arguments of :mod:`prirfed.verified.trainers.geometry_flat`, with ``dims`` the pair ``(d, r)``, so
that :mod:`prirfed.verified.trainers.geometry` can hand the same loop either family.

Why a family of its own: the kernels of St(d, r) (Pade expm, Householder QR and Gauss-Newton for
Exp/Log; eigh for the polar retraction, a Kronecker-Lyapunov solve for its inverse) are large, and
typing them inside the sphere/SPD/Lorentz specialisation would make every user pay their compile
time. A loop called with ``dims = (d, r)`` compiles a specialisation that types only these.

Codes: ``GEOM_STIEFEL`` (maps="exp": the exact Exp and the Newton Log of the reference Stiefel
class) and ``GEOM_STIEFEL_RETR`` (maps="retraction": the polar retraction
R_X(V) = (X + V)(I + V^T V)^{-1/2} and its inverse, as 002 ran its experiments). The transport is
the projection P_Y(V) = V - Y sym(Y^T V) in both cases (the reference Stiefel.transp; Retracted
keeps it); the norm is Frobenius (Euclidean metric). The agent gradient is grad f_i(X) = P_X(-A_i X)
with the reference problem's own arrays A_i = Z_i^T Z_i
(:func:`prirfed.verified.problems.stiefel_kpca.stiefel_kpca_rgrad_mean_kernel`); the full gradient
is P_X(sum_i p_i grad f_i(X)), the projection applied as the reference's FederatedProblem._rgrad
does. Mirrors ``reference/manifolds/stiefel.py``, ``reference/manifolds/retracted.py`` and
``reference/problems/stiefel_kpca.py``. Proofs note: ``proofs_notes/verified_trainers.md`` (section 5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.verified.manifolds import stiefel as vst
from prirfed.verified.mechanisms import sample_tangent_gaussian_kernel
from prirfed.verified.problems.stiefel_kpca import (
    stiefel_kpca_rgrad_kernel,
    stiefel_kpca_rgrad_mean_kernel,
    stiefel_proj_kernel,
)

from .codes import GEOM_STIEFEL_RETR

__all__ = ["exp", "log", "transp", "norm", "noise", "grad_sample", "agent_grad", "full_grad"]


@njit(cache=True, inline="always")
def exp(geom, dims, x, v):
    """Exp_X(V) (maps="exp") or the polar retraction R_X(V) (maps="retraction"). A step whose
    ||V||^2 overflows raises (LAPACK would otherwise see infinities)."""
    d, r = dims
    if not math.isfinite(np.sum(v * v)):
        raise ValueError("Stiefel (verified loops): a step V has ||V||_F^2 not finite (the steps overflow: reduce the step size)")
    if geom == GEOM_STIEFEL_RETR:
        return vst.retr_polar_kernel(x.reshape((d, r)), v.reshape((d, r))).ravel()
    return vst.exp_kernel(x.reshape((d, r)), v.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def log(geom, dims, x, y):
    """Log_X(Y) (Newton on Exp) or the inverse polar retraction R_X^{-1}(Y) (Lyapunov solve)."""
    d, r = dims
    if geom == GEOM_STIEFEL_RETR:
        return vst.inv_retr_polar_kernel(x.reshape((d, r)), y.reshape((d, r))).ravel()
    return vst.log_kernel(x.reshape((d, r)), y.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def transp(geom, dims, x, y, v):
    """Projection vector transport T_{X->Y}(V) = P_Y(V) (reference Stiefel.transp; reads only y)."""
    d, r = dims
    Y = y.reshape((d, r))
    return vst.transp_kernel(Y, Y, v.reshape((d, r))).ravel()  # transp_kernel(x, y, v) reads only y


@njit(cache=True, inline="always")
def norm(geom, dims, x, v):
    """||V||_X = ||V||_F (Euclidean metric)."""
    return math.sqrt(np.sum(v * v))


@njit(cache=True, inline="always")
def noise(geom, dims, x, sigma, rng):
    """eps ~ N_X(0, sigma^2): one rng.standard_normal(dim) combined with the Stiefel tangent basis at X
    (reference: local.tangent_noise -> mechanisms.sample_tangent_gaussian with Stiefel.tangent_basis)."""
    d, r = dims
    B = vst.tangent_basis_kernel(x.reshape((d, r)))
    return sample_tangent_gaussian_kernel(rng, B.reshape((B.shape[0], d * r)), sigma)


@njit(cache=True, inline="always")
def grad_sample(prob, dims, x, Z, row, c):
    """grad f_ij(X) = P_X(-2 c z (z^T X)) for the sample in row ``row`` of Z (reference: StiefelKPCA._rgrad_ij)."""
    d, r = dims
    return stiefel_kpca_rgrad_kernel(x.reshape((d, r)), Z[row], c).ravel()


@njit(cache=True, inline="always")
def agent_grad(prob, dims, x, Z, C, offsets, sizes, A, i):
    """grad f_i(X) = P_X(-A_i X) (reference: StiefelKPCA._rgrad_i; the rows of Z are not read)."""
    d, r = dims
    return stiefel_kpca_rgrad_mean_kernel(x.reshape((d, r)), A[i]).ravel()


@njit(cache=True, inline="always")
def full_grad(prob, dims, x, Z, C, offsets, sizes, A, ps):
    """grad f(X) = P_X(sum_i p_i grad f_i(X)) (reference: FederatedProblem._rgrad)."""
    d, r = dims
    g = np.zeros(x.shape[0])
    for i in range(ps.shape[0]):
        g = g + ps[i] * agent_grad(prob, dims, x, Z, C, offsets, sizes, A, i)
    return stiefel_proj_kernel(x.reshape((d, r)), g.reshape((d, r))).ravel()
