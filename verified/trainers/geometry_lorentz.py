"""The Lorentz family of the fused loops: H^d (Lorentz model) with hyperbolic structured prediction.

Points and tangent vectors are float64 vectors of length D = d + 1; ``dims`` is ``LorentzDims(D)``.
Mirrors ``reference/manifolds/lorentz.py`` (Exp, Log, transport, norm, dist), the problem of
``reference/problems/hsp.py`` (f_ij = alpha_ij dist^2(x, y_ij), grad f_ij = -2 alpha_ij Log_x(y_ij),
000 section 6.3) and the Lorentz branch of ``reference/mechanisms.sample_tangent_gaussian_closed_form``
(the origin's tangent Gaussian transported to x: d normals, O(d)). The per-sample gradient is
written into a scratch vector the caller allocates once (:func:`add_clipped_grad`).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.verified.manifolds import lorentz as vlorentz
from prirfed.verified.problems.hsp import hsp_rgrad_kernel
from prirfed.verified.randomness import normals_into

__all__ = ["exp", "log", "transp", "norm", "noise_into", "add_clipped_grad", "grad_sample", "agent_grad",
           "full_grad", "record"]


@njit(cache=True, inline="always")
def exp(dims, x, v):
    """Exp_x(v)."""
    return vlorentz.exp_kernel(x, v)


@njit(cache=True, inline="always")
def log(dims, x, y):
    """Exp_x^{-1}(y)."""
    return vlorentz.log_kernel(x, y)


@njit(cache=True, inline="always")
def transp(dims, x, y, v):
    """Parallel transport Gamma_x^y v."""
    return vlorentz.transp_kernel(x, y, v)


@njit(cache=True, inline="always")
def norm(dims, x, v):
    """||v||_x (Minkowski norm of a tangent vector, from its space part)."""
    return vlorentz.norm_kernel(x, v)


@njit(cache=True, inline="always")
def noise_into(dims, x, sigma, st, out):
    """out = PT_{o -> x}((0, z)), z = sigma * (d normals of st): (x_bar^T z, z + (x_bar^T z)/(1 + x_0) x_bar)
    (reference: mechanisms.sample_tangent_gaussian_closed_form, the Lorentz branch)."""
    D = x.shape[0]
    normals_into(st, out[1:], sigma)
    a = 0.0
    for k in range(1, D):
        a += x[k] * out[k]
    c = a / (1.0 + x[0])
    for k in range(1, D):
        out[k] = out[k] + c * x[k]
    out[0] = a


@njit(cache=True, inline="always")
def add_clipped_grad(dims, x, Z, C, row, tau, acc, work):
    """acc += clip_tau(-2 alpha_row Log_x(y_row)), the gradient written into ``work`` (no allocation)."""
    vlorentz._log_into(x, Z[row], work)
    s = -2.0 * C[row]
    for k in range(work.shape[0]):
        work[k] = s * work[k]
    f = 1.0
    if tau != math.inf:
        nrm = vlorentz.norm_kernel(x, work)
        if nrm != 0.0 and tau / nrm < 1.0:
            f = tau / nrm
    for k in range(work.shape[0]):
        acc[k] += f * work[k]


@njit(cache=True, inline="always")
def grad_sample(dims, x, Z, row, c):
    """grad f_ij(x) = -2 alpha_ij Log_x(y_ij) (a new array)."""
    return hsp_rgrad_kernel(x, Z[row], c)


@njit(cache=True, inline="always")
def agent_grad(dims, x, Z, C, offsets, sizes, A, i):
    """grad f_i(x) = (1/N_i) sum_j grad f_ij(x), summed in order (reference: FederatedProblem._rgrad_i)."""
    off = offsets[i]
    g = np.zeros(x.shape[0])
    for j in range(sizes[i]):
        g += hsp_rgrad_kernel(x, Z[off + j], C[off + j])
    return g / sizes[i]


@njit(cache=True, inline="always")
def full_grad(dims, x, Z, C, offsets, sizes, A, ps):
    """grad f(x) = sum_i p_i grad f_i(x)."""
    g = np.zeros(x.shape[0])
    for i in range(sizes.shape[0]):
        g += ps[i] * agent_grad(dims, x, Z, C, offsets, sizes, A, i)
    return g


@njit(cache=True)
def record(dims, x, Z, C, offsets, sizes, A, ps, xstar):
    """(f(x), ||grad f(x)||_x, dist(x, x*)) (reference: History.record; f = sum_i p_i (1/N_i)
    sum_j alpha_ij dist^2(x, y_ij); NaN error if x* is unknown: empty)."""
    f = 0.0
    for i in range(sizes.shape[0]):
        off = offsets[i]
        fi = 0.0
        for j in range(off, off + sizes[i]):
            d = vlorentz.dist_kernel(x, Z[j])
            fi += C[j] * (d * d)
        f += ps[i] * (fi / sizes[i])
    gnorm = vlorentz.norm_kernel(x, full_grad(dims, x, Z, C, offsets, sizes, A, ps))
    err = math.nan
    if xstar.shape[0] == x.shape[0]:
        err = vlorentz.dist_kernel(x, xstar)
    return f, gnorm, err
