"""The geometry family "flat" of the fused loops: the sphere, SPD and Lorentz kernels on flat vectors.

Every point and tangent vector is a FLAT float64 vector (an n x n SPD matrix is stored as its n^2
entries and reshaped to (n, n) for the SPD kernels), so every branch below type-checks and one
compiled loop serves the three manifolds. Each function dispatches on the integer codes of
:mod:`prirfed.verified.trainers.codes`: the manifold and maps (``geom``: ``GEOM_SPHERE``,
``GEOM_SPHERE_RETR``, ``GEOM_SPD``, ``GEOM_LORENTZ``) or the problem (``prob``: ``PROB_SPHERE_PCA``,
``PROB_SPD_FRECHET``, ``PROB_HSP``); ``dims`` is the integer n, the SPD side (unused elsewhere). Adding a
(manifold, problem) pair of this family means one code and one branch in each function.

Mirrors, on flat vectors: the Exp/Log/transport/norm/tangent basis of
``reference/manifolds/{sphere,spd,lorentz}.py`` (``reference/manifolds/retracted.py`` for
``GEOM_SPHERE_RETR``: retr/inv_retr in place of Exp/Log, the sphere's transport, norm and basis),
the per-sample gradients of ``reference/problems/{sphere_pca,spd_frechet,hsp}.py`` and the agent
and global gradients of ``reference/problems/base.py``. The kernels are those of
:mod:`prirfed.verified.manifolds`, :mod:`prirfed.verified.mechanisms` and
:mod:`prirfed.verified.problems` (no fastmath: a privacy path). All functions are
``inline="always"``: they are typed inside each loop instead of compiled and linked one by one.
The loops do not call this module directly: :mod:`prirfed.verified.trainers.geometry` chooses it
for an integer ``dims`` (the Stiefel family, :mod:`prirfed.verified.trainers.geometry_stiefel`, with
the same arguments, for a pair ``(d, r)``). Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.verified.manifolds import lorentz as vlorentz
from prirfed.verified.manifolds import spd as vspd
from prirfed.verified.manifolds import sphere as vsphere
from prirfed.verified.mechanisms import sample_tangent_gaussian_kernel
from prirfed.verified.problems.hsp import hsp_rgrad_kernel
from prirfed.verified.problems.spd_frechet import spd_frechet_rgrad_kernel
from prirfed.verified.problems.sphere_pca import sphere_pca_rgrad_kernel

from .codes import GEOM_LORENTZ, GEOM_SPHERE, GEOM_SPHERE_RETR, PROB_HSP, PROB_SPHERE_PCA

__all__ = ["exp", "log", "transp", "norm", "noise", "grad_sample", "agent_grad", "full_grad"]


@njit(cache=True, inline="always")
def exp(geom, dims, x, v):
    """Exp_x(v) (R_x(v) for the retraction codes)."""
    n = dims  # the SPD side (0 for the sphere and Lorentz)
    if geom == GEOM_SPHERE:
        return vsphere.exp_kernel(x, v)
    if geom == GEOM_SPHERE_RETR:
        return vsphere.retr_kernel(x, v)
    if geom == GEOM_LORENTZ:
        return vlorentz.exp_kernel(x, v)
    return vspd.exp_kernel(x.reshape((n, n)), v.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def log(geom, dims, x, y):
    """Exp_x^{-1}(y) (R_x^{-1}(y) for the retraction codes)."""
    n = dims  # the SPD side (0 for the sphere and Lorentz)
    if geom == GEOM_SPHERE:
        return vsphere.log_kernel(x, y)
    if geom == GEOM_SPHERE_RETR:
        return vsphere.inv_retr_kernel(x, y)
    if geom == GEOM_LORENTZ:
        return vlorentz.log_kernel(x, y)
    return vspd.log_kernel(x.reshape((n, n)), y.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def transp(geom, dims, x, y, v):
    """Parallel transport Gamma_x^y v (the retracted sphere keeps the sphere's, as reference Retracted)."""
    n = dims  # the SPD side (0 for the sphere and Lorentz)
    if geom == GEOM_SPHERE or geom == GEOM_SPHERE_RETR:
        return vsphere.transp_kernel(x, y, v)
    if geom == GEOM_LORENTZ:
        return vlorentz.transp_kernel(x, y, v)
    return vspd.transp_kernel(x.reshape((n, n)), y.reshape((n, n)), v.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def norm(geom, dims, x, v):
    """||v||_x."""
    n = dims  # the SPD side (0 for the sphere and Lorentz)
    if geom == GEOM_SPHERE or geom == GEOM_SPHERE_RETR:
        return vsphere.norm_kernel(x, v)
    if geom == GEOM_LORENTZ:
        return vlorentz.norm_kernel(x, v)
    return vspd.norm_kernel(x.reshape((n, n)), v.reshape((n, n)))


@njit(cache=True, inline="always")
def noise(geom, dims, x, sigma, rng):
    """eps ~ N_x(0, sigma^2): one rng.standard_normal(dim), combined with the tangent basis at x
    (reference: local.tangent_noise -> mechanisms.sample_tangent_gaussian)."""
    n = dims  # the SPD side (0 for the sphere and Lorentz)
    if geom == GEOM_SPHERE or geom == GEOM_SPHERE_RETR:
        E = vsphere.tangent_basis_kernel(x)
    elif geom == GEOM_LORENTZ:
        E = vlorentz.tangent_basis_kernel(x)
    else:
        B = vspd.tangent_basis_kernel(x.reshape((n, n)))
        E = B.reshape((B.shape[0], n * n))
    return sample_tangent_gaussian_kernel(rng, E, sigma)


@njit(cache=True, inline="always")
def grad_sample(prob, dims, x, Z, row, c):
    """grad f_{i,j}(x) for the sample stored in row ``row`` of the flat data Z, with that sample's scale c
    (c_i for sphere PCA, c for the SPD Frechet mean, alpha_ij(w) for HSP)."""
    n = dims  # the SPD side (0 for the sphere and Lorentz)
    if prob == PROB_SPHERE_PCA:
        return sphere_pca_rgrad_kernel(x, Z[row], c)
    if prob == PROB_HSP:
        return hsp_rgrad_kernel(x, Z[row], c)
    return spd_frechet_rgrad_kernel(x.reshape((n, n)), Z[row].reshape((n, n)), c).ravel()


@njit(cache=True, inline="always")
def agent_grad(prob, dims, x, Z, C, offsets, sizes, A, i):
    """grad f_i(x) = (1/N_i) sum_j grad f_ij(x), summed over the agent's rows in order (reference:
    FederatedProblem._rgrad_i); ``A`` is not read in this family."""
    off = offsets[i]
    N_i = sizes[i]
    g = np.zeros(x.shape[0])
    for j in range(N_i):
        g = g + grad_sample(prob, dims, x, Z, off + j, C[off + j])
    return g / N_i


@njit(cache=True, inline="always")
def full_grad(prob, dims, x, Z, C, offsets, sizes, A, ps):
    """grad f(x) = sum_i p_i grad f_i(x) (000 (2.1); reference: FederatedProblem._rgrad)."""
    g = np.zeros(x.shape[0])
    for i in range(sizes.shape[0]):
        g = g + ps[i] * agent_grad(prob, dims, x, Z, C, offsets, sizes, A, i)
    return g
