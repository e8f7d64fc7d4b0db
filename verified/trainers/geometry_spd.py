"""The SPD family of the fused loops: SPD(n), affine-invariant metric, with the Frechet mean problem.

Points and tangent vectors are flat float64 vectors of length n^2 (row-major n x n matrices);
``dims`` is ``SPDDims(n)``. Mirrors ``reference/manifolds/spd.py`` (Exp, Log, transport, norm, dist),
``reference/problems/spd_frechet.py`` (f_ij = c dist^2(X, Z_ij), Huang et al. (2024) section 6.2) and the SPD branch of
``reference/mechanisms.sample_tangent_gaussian_closed_form`` (X^{1/2} S X^{1/2}, n(n+1)/2 normals: the
basis route's draws, without forming the basis). Every SPD kernel calls LAPACK (eigh) on n x n
matrices, which allocates; the per-sample gradients here therefore allocate their n x n results
(n <= 10 in the papers), unlike the sphere's and Lorentz's in-place passes.
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.verified.manifolds import spd as vspd
from prirfed.verified.mechanisms import clip_factor_kernel, sym_from_upper_kernel
from prirfed.verified.problems.spd_frechet import spd_frechet_rgrad_kernel
from prirfed.verified.randomness import normals_into

__all__ = ["exp", "log", "transp", "norm", "noise_into", "add_clipped_grad", "grad_sample", "f_sample", "dist"]


@njit(cache=True, inline="always")
def exp(dims, x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.exp`.

    Exp_X(V).

    On flat arrays (``dims`` gives the shape).
    """
    n = dims[0]
    return vspd.exp_kernel(x.reshape((n, n)), v.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def log(dims, x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.log`.

    Exp_X^{-1}(Y).

    On flat arrays (``dims`` gives the shape).
    """
    n = dims[0]
    return vspd.log_kernel(x.reshape((n, n)), y.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def transp(dims, x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.transp`.

    Parallel transport Gamma_X^Y V = E V E^T.

    On flat arrays (``dims`` gives the shape).
    """
    n = dims[0]
    return vspd.transp_kernel(x.reshape((n, n)), y.reshape((n, n)), v.reshape((n, n))).ravel()


@njit(cache=True, inline="always")
def norm(dims, x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.norm`.

    ||V||_X = ||X^{-1/2} V X^{-1/2}||_F.

    On flat arrays (``dims`` gives the shape).
    """
    n = dims[0]
    return vspd.norm_kernel(x.reshape((n, n)), v.reshape((n, n)))


@njit(cache=True, inline="always")
def noise_into(dims, x, sigma, st, out):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_closed_form`.

    out = X^{1/2} S X^{1/2}, S from sigma * (n(n+1)/2 normals of st) in the upper-triangle row-major
    order, S_ij = z/sqrt(2) off the diagonal (reference: mechanisms.sample_tangent_gaussian_closed_form).

    Written into ``out``, the normals read from the stream ``st``.
    """
    n = dims[0]
    z = np.empty(n * (n + 1) // 2)
    normals_into(st, z, sigma)
    Xh, _ = vspd.sqrtm_and_invsqrtm_kernel(x.reshape((n, n)))
    xi = Xh @ sym_from_upper_kernel(z, n) @ Xh
    for i in range(n):
        for j in range(n):
            out[i * n + j] = 0.5 * (xi[i, j] + xi[j, i])


@njit(cache=True, inline="always")
def add_clipped_grad(dims, x, Z, C, row, tau, acc, work):
    """acc += clip_tau(grad f_row(X)) (the n x n gradient allocated by the eigh-based kernel).

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
    n = dims[0]
    X = x.reshape((n, n))
    g = spd_frechet_rgrad_kernel(X, Z[row].reshape((n, n)), C[row]).ravel()
    f = clip_factor_kernel(vspd.norm_kernel(X, g.reshape((n, n))) if tau != math.inf else 0.0, tau)
    for k in range(g.shape[0]):
        acc[k] += f * g[k]


@njit(cache=True, inline="always")
def grad_sample(dims, x, Z, row, c):
    """Verified twin of :meth:`prirfed.reference.problems.spd_frechet.SPDFrechetMean.rgrad_ij`.

    grad f_ij(X) = -2 c sym(X^{1/2} log(X^{-1/2} Z X^{-1/2}) X^{1/2}).

    The sample is row ``row`` of ``Z``, scaled by ``c``; flat arrays.
    """
    n = dims[0]
    return spd_frechet_rgrad_kernel(x.reshape((n, n)), Z[row].reshape((n, n)), c).ravel()


@njit(cache=True, inline="always")
def f_sample(dims, x, Z, row, c):
    """Verified twin of :meth:`prirfed.reference.problems.spd_frechet.SPDFrechetMean.f_ij`.

    f_ij(X) = c dist^2(X, Z_ij) (the history; reference: SPDFrechetMean).

    The sample is row ``row`` of ``Z``, scaled by ``c``; flat arrays.
    """
    n = dims[0]
    d = vspd.dist_kernel(x.reshape((n, n)), Z[row].reshape((n, n)))
    return c * (d * d)


@njit(cache=True, inline="always")
def dist(dims, x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.spd.SPD.dist`.

    dist(X, Y), affine-invariant (the error to X*).

    On flat arrays (``dims`` gives the shape).
    """
    n = dims[0]
    return vspd.dist_kernel(x.reshape((n, n)), y.reshape((n, n)))
