"""The Stiefel family of the fused loops: St(d, r) with the Euclidean metric, kPCA (Li and Ma (2023) (3)).

Points and tangent vectors are flat float64 vectors of length d r (row-major X); ``dims`` is
``StiefelDims(d, r)`` (the exact Exp and the Newton Log of the reference Stiefel class) or
``StiefelRetrDims(d, r)`` (the polar retraction R_X(V) = (X + V)(I + V^T V)^{-1/2} and its inverse, a
Lyapunov solve: the ``*_retr`` functions, as Li and Ma (2023) ran its experiments).

Why a family of its own: the kernels of St(d, r) (Pade expm, Householder QR and Gauss-Newton for
Exp/Log; eigh for the polar retraction) are large, and a user of the sphere should not compile them.

Mirrors ``reference/manifolds/stiefel.py``, ``reference/manifolds/retracted.py``,
``reference/problems/stiefel_kpca.py`` and the Stiefel branch of
``reference/mechanisms.sample_tangent_gaussian_closed_form`` (the projected ambient Gaussian
G - X sym(X^T G): d r normals, O(d r^2), no basis). The transport is the projection
P_Y(V) = V - Y sym(Y^T V) (reference Stiefel.transp; Retracted keeps it); the norm is Frobenius.
The per-sample gradient is rank one, grad f_ij(X) = -2 c (z - X u) u^T with u = X^T z (since
X^T(z u^T) = u u^T is symmetric, P_X(z u^T) = (z - X u) u^T), accumulated in place from two
scratch vectors; the agent gradient is P_X(-A_i X) with the problem's A_i = Z_i^T Z_i.
Proofs note: ``proofs_notes/verified_trainers.md`` (section 5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from prirfed.verified.manifolds import stiefel as vst
from prirfed.verified.problems.stiefel_kpca import (
    stiefel_kpca_rgrad_kernel,
    stiefel_kpca_rgrad_mean_kernel,
    stiefel_proj_into,
    stiefel_proj_kernel,
)
from prirfed.verified.randomness import normals_into

__all__ = ["step_matrix", "exp", "exp_retr", "log", "log_retr", "transp", "norm", "noise_into", "add_clipped_grad", "grad_sample",
           "agent_grad", "record"]

STEP_OVERFLOW = "Stiefel (verified loops): a step V is not finite (the steps overflow: reduce the step size)"


@njit(cache=True, inline="always")
def step_matrix(dims, v):
    """The step V as a d x r matrix; a step with an entry that is not finite (an overflowed step) raises.

    Helper, not a paper formula: a reshape with a finiteness check. Only the entries are checked,
    not ||V||^2: the polar retraction is evaluated scale-invariantly and takes any finite step, as
    the reference does (a squared-norm check refused steps with ||V||_F above 1.3e154 that the
    reference retracts), and the exponential map refuses ||V||_F >= 2^52 itself.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    v : numpy.ndarray
        Tangent vector at ``x``, flat.

    Returns
    -------
    numpy.ndarray
        The ``d x r`` step.

    Raises
    ------
    ValueError
        If an entry of the step is not finite.
    """
    for t in v:
        if not math.isfinite(t):
            raise ValueError(STEP_OVERFLOW)
    return v.reshape((dims[0], dims[1]))


@njit(cache=True, inline="always")
def exp(dims, x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.exp`.

    Exp_X(V).

    On flat arrays (``dims`` gives the shape).
    """
    return vst.exp_kernel(x.reshape((dims[0], dims[1])), step_matrix(dims, v)).ravel()


@njit(cache=True, inline="always")
def exp_retr(dims, x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.retr_polar`.

    The polar retraction R_X(V) (maps="retraction").

    On flat arrays (``dims`` gives the shape).
    """
    d, r = dims
    V = step_matrix(dims, v)
    return vst.retr_polar_kernel(x.reshape((d, r)), V).ravel()


@njit(cache=True, inline="always")
def log(dims, x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.log`.

    Log_X(Y) (Newton on Exp).

    On flat arrays (``dims`` gives the shape).
    """
    d, r = dims
    return vst.log_kernel(x.reshape((d, r)), y.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def log_retr(dims, x, y):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.inv_retr_polar`.

    R_X^{-1}(Y) of the polar retraction (Lyapunov solve).

    On flat arrays (``dims`` gives the shape).
    """
    d, r = dims
    return vst.inv_retr_polar_kernel(x.reshape((d, r)), y.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def transp(dims, x, y, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.transp`.

    Projection vector transport T_{X->Y}(V) = P_Y(V) (reads only y).

    On flat arrays (``dims`` gives the shape).
    """
    d, r = dims
    Y = y.reshape((d, r))
    return vst.transp_kernel(Y, Y, v.reshape((d, r))).ravel()


@njit(cache=True, inline="always")
def norm(dims, x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.stiefel.Stiefel.norm`.

    ||V||_X = ||V||_F.

    On flat arrays (``dims`` gives the shape).
    """
    return math.sqrt(np.sum(v * v))


@njit(cache=True, inline="always")
def noise_into(dims, x, sigma, st, out):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_closed_form`.

    out = G - X sym(X^T G), G = sigma * (d r normals of st, row-major): N_X(0, sigma^2) in O(d r^2)
    (reference: mechanisms.sample_tangent_gaussian_closed_form, the Stiefel branch).

    Written into ``out``, the normals read from the stream ``st``.
    """
    d, r = dims
    normals_into(st, out, sigma)
    stiefel_proj_into(x.reshape((d, r)), out.reshape((d, r)))


@njit(cache=True, inline="always")
def add_clipped_grad(dims, x, Z, C, row, tau, acc, work):
    """acc += clip_tau(-2 c (z - X u) u^T), u = X^T z (rank one; ``work`` holds z - X u, length d, and
    u is kept in its first r entries of a second pass: no matrix temporary).

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
    d, r = dims
    X = x.reshape((d, r))
    z = Z[row]
    u = np.zeros(r)
    for l in range(d):
        zl = z[l]
        for a in range(r):
            u[a] += zl * X[l, a]
    vv = 0.0
    for l in range(d):
        s = 0.0
        for a in range(r):
            s += X[l, a] * u[a]
        w = z[l] - s
        work[l] = w
        vv += w * w
    uu = 0.0
    for a in range(r):
        uu += u[a] * u[a]
    s = -2.0 * C[row]
    f = 1.0
    if tau != math.inf:
        nrm = abs(s) * math.sqrt(vv * uu)
        if nrm != 0.0 and tau / nrm < 1.0:
            f = tau / nrm
    fs = f * s
    for l in range(d):
        wl = fs * work[l]
        for a in range(r):
            acc[l * r + a] += wl * u[a]


@njit(cache=True, inline="always")
def grad_sample(dims, x, Z, row, c):
    """Verified twin of :meth:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA.rgrad_ij`.

    grad f_ij(X) = P_X(-2 c z (z^T X)) (a new array; reference: StiefelKPCA._rgrad_ij).

    The sample is row ``row`` of ``Z``, scaled by ``c``; flat arrays.
    """
    d, r = dims
    return stiefel_kpca_rgrad_kernel(x.reshape((d, r)), Z[row], c).ravel()


@njit(cache=True, inline="always")
def agent_grad(dims, x, Z, C, offsets, sizes, A, i):
    """Verified twin of :meth:`prirfed.reference.problems.stiefel_kpca.StiefelKPCA.rgrad_i`.

    grad f_i(X) = P_X(-A_i X) (reference: StiefelKPCA._rgrad_i).

    Agent ``i`` of the stacked arrays; flat.
    """
    d, r = dims
    return stiefel_kpca_rgrad_mean_kernel(x.reshape((d, r)), A[i]).ravel()


@njit(cache=True)
def record(dims, x, Z, C, offsets, sizes, A, ps, xstar):
    """(f(X), ||grad f(X)||_F, sum of the principal angles to X*) from the samples in one pass
    (reference: History.record; f_i = -(c_i / N_i) sum_j ||X^T z_j||^2 = -(1/2) tr(X^T A_i X),
    grad f = P_X(sum_i p_i (-2 c_i / N_i) sum_j z_j (z_j^T X)); the angles atan2(sin_k, cos_k), cos_k
    the singular values of X^T X* (descending), sin_k those of X* - X (X^T X*) (ascending), as
    reference principal_angles; NaN if X* is unknown: empty).

    The quantities Huang et al. (2024) plot in Section 6, in one pass over the data.

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
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    A : numpy.ndarray
        Per-agent matrices where the family uses them (Stiefel kPCA's :math:`A_i`), else a placeholder.
    ps : numpy.ndarray
        Agent weights :math:`p_i`.
    xstar : numpy.ndarray
        The optimum, flat, or an empty array when it is unknown.

    Returns
    -------
    f, grad_norm, error : float
        The record.
    """
    d, r = dims
    X = x.reshape((d, r))
    G = np.zeros((d, r))
    Gi = np.empty((d, r))
    u = np.empty(r)
    f = 0.0
    for i in range(sizes.shape[0]):
        off = offsets[i]
        Gi[:, :] = 0.0
        fi = 0.0
        for j in range(off, off + sizes[i]):
            z = Z[j]
            u[:] = 0.0
            for l in range(d):
                for a in range(r):
                    u[a] += z[l] * X[l, a]
            for a in range(r):
                fi += u[a] * u[a]
            for l in range(d):
                for a in range(r):
                    Gi[l, a] += z[l] * u[a]
        c = C[off]
        f += ps[i] * (-c * (fi / sizes[i]))
        w = ps[i] * (-2.0 * c / sizes[i])
        for l in range(d):
            for a in range(r):
                G[l, a] += w * Gi[l, a]
    g = stiefel_proj_kernel(X, G)
    gnorm = math.sqrt(np.sum(g * g))
    err = math.nan
    if xstar.shape[0] == x.shape[0]:
        Y = xstar.reshape((d, r))
        Cm = X.T @ Y
        cos = np.sort(np.linalg.svd(Cm, full_matrices=False)[1])[::-1]
        sin = np.sort(np.linalg.svd(Y - X @ Cm, full_matrices=False)[1])
        err = 0.0
        for k in range(r):
            err += math.atan2(sin[k], cos[k])
    return f, gnorm, err
