"""The Lorentz family of the fused loops: H^d (Lorentz model) with hyperbolic structured prediction.

Points and tangent vectors are float64 vectors of length D = d + 1; ``dims`` is ``LorentzDims(D)``.
Mirrors ``reference/manifolds/lorentz.py`` (Exp, Log, transport, norm, dist), the problem of
``reference/problems/hsp.py`` (f_ij = alpha_ij dist^2(x, y_ij), grad f_ij = -2 alpha_ij Log_x(y_ij),
Huang et al. (2024) section 6.3) and the Lorentz branch of ``reference/mechanisms.sample_tangent_gaussian_closed_form``
(the origin's tangent Gaussian transported to x: d normals, O(d)). The per-sample gradient is
written into a scratch vector the caller allocates once (:func:`add_clipped_grad`).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

from numba import njit

from prirfed.verified.manifolds import lorentz as vlorentz
from prirfed.verified.problems.hsp import hsp_rgrad_kernel
from prirfed.verified.mechanisms import clip_factor_kernel
from prirfed.verified.randomness import normals_into

__all__ = ["KERNELS", "noise_into", "add_clipped_grad", "grad_sample", "f_sample", "dist"]


#: the maps that are a manifold kernel as it stands (geometry.py calls it with the loop's arguments):
#: Exp_x(v), Exp_x^{-1}(y), parallel transport Gamma_x^y v, ||v||_x (the Minkowski norm of a tangent
#: vector, from its space part)
KERNELS = dict(exp=vlorentz.exp_kernel, log=vlorentz.log_kernel, transp=vlorentz.transp_kernel,
               norm=vlorentz.norm_kernel)


@njit(cache=True, inline="always")
def noise_into(dims, x, sigma, st, out):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_closed_form`.

    out = PT_{o -> x}((0, z)), z = sigma * (d normals of st): (x_bar^T z, z + (x_bar^T z)/(1 + x_0) x_bar)
    (reference: mechanisms.sample_tangent_gaussian_closed_form, the Lorentz branch).

    Written into ``out``, the normals read from the stream ``st``.
    """
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
    """acc += clip_tau(-2 alpha_row Log_x(y_row)), the gradient written into ``work`` (no allocation).

    The clipped per-sample gradient of Huang et al. (2024), Algorithm 2, line 4, accumulated in place.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    row : int
        Row of ``Z``.
    tau : float
        Clipping threshold (``inf``: no clipping).
    acc : numpy.ndarray
        Running sum, updated in place.
    work : numpy.ndarray
        Scratch vector of the point's length.
    """
    vlorentz.log_into(x, Z[row], work)
    s = -2.0 * C[row]
    for k in range(work.shape[0]):
        work[k] = s * work[k]
    f = clip_factor_kernel(vlorentz.norm_kernel(x, work) if tau != math.inf else 0.0, tau)
    for k in range(work.shape[0]):
        acc[k] += f * work[k]


@njit(cache=True, inline="always")
def grad_sample(dims, x, Z, row, c):
    """Verified twin of :meth:`prirfed.reference.problems.hsp.HyperbolicStructuredPrediction.rgrad_ij`.

    grad f_ij(x) = -2 alpha_ij Log_x(y_ij) (a new array).

    The sample is row ``row`` of ``Z``, scaled by ``c``; flat arrays.
    """
    return hsp_rgrad_kernel(x, Z[row], c)


@njit(cache=True, inline="always")
def f_sample(dims, x, Z, row, c):
    """Verified twin of :meth:`prirfed.reference.problems.hsp.HyperbolicStructuredPrediction.f_ij`.

    f_ij(x) = alpha_ij dist^2(x, y_ij) (the history; reference: HyperbolicStructuredPrediction).

    The sample is row ``row`` of ``Z``, scaled by ``c``; flat arrays.
    """
    d = vlorentz.dist_kernel(x, Z[row])
    return c * (d * d)


@njit(cache=True, inline="always")
def dist(dims, x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.lorentz.Lorentz.dist`.

    dist(x, y) on the hyperboloid (the error to x*).

    On flat arrays (``dims`` gives the shape).
    """
    return vlorentz.dist_kernel(x, y)
