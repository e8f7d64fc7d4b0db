"""The sphere family of the fused loops: S^d with sphere PCA (Huang et al. (2024) (6.1), Han et al. (2024) (2), Li and Ma (2023) (4)).

Points and tangent vectors are float64 vectors of length D = d + 1; ``dims`` is
``SphereDims(D)`` (Exp/Log) or ``SphereRetrDims(D)`` (the retraction and its inverse: the ``*_retr``
functions below, chosen by :mod:`prirfed.verified.trainers.geometry`). Mirrors
``reference/manifolds/sphere.py`` (Exp, Log, transport, norm; ``retracted.py`` for the retraction),
``reference/problems/sphere_pca.py`` (f_ij = -c_i (z^T x)^2, grad f_ij = -2 c_i a (z - a x), a = z^T x)
and the sphere branch of ``reference/mechanisms.sample_tangent_gaussian_closed_form`` (noise).

The per-sample work is in place (:func:`add_clipped_grad`: two passes over the sample, the first
reading it from memory and computing z^T x and z^T z together, the second adding the clipped
gradient into the running sum; no temporary array), and the history is one pass over the data
(:func:`record`: f, grad f and the angle to x* together; the agents' sums in parallel by
:func:`agent_sums`, reduced in agent order). Proofs note:
``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from prirfed.verified.kernels import dot_and_square_kernel, dot_kernel
from prirfed.verified.manifolds import sphere as vsphere
from prirfed.verified.problems.sphere_pca import sphere_pca_rgrad_kernel, sphere_pca_rgrad_mean_kernel
from prirfed.verified.randomness import normals_into

__all__ = ["KERNELS", "norm", "noise_into", "add_clipped_grad", "grad_sample",
           "agent_grad", "agent_sums", "record"]

#: below this ratio ||z - a x||^2 / ||z||^2 the one-pass formula ||z||^2 - a^2 cancels too much, and
#: the norm is recomputed by an exact second pass
CANCELLATION = 1e-8


#: the maps that are a manifold kernel as it stands (geometry.py calls it with the loop's arguments):
#: Exp_x(v) = cos(t) x + sinc(t) v (t = ||v||), Exp_x^{-1}(y), parallel transport Gamma_x^y v (also
#: under the retraction, as reference Retracted); the retraction R_x(v) = (x + v)/||x + v|| and its
#: inverse (maps="retraction")
KERNELS = dict(exp=vsphere.exp_kernel, exp_retr=vsphere.retr_kernel, log=vsphere.log_kernel,
               log_retr=vsphere.inv_retr_kernel, transp=vsphere.transp_kernel)


@njit(cache=True, inline="always")
def norm(dims, x, v):
    """Verified twin of :meth:`prirfed.reference.manifolds.sphere.Sphere.norm`.

    ||v||_x = ||v||_2.

    On flat arrays (``dims`` gives the shape).
    """
    return math.sqrt(dot_kernel(v, v))


@njit(cache=True, inline="always")
def noise_into(dims, x, sigma, st, out):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_closed_form`.

    out = P_x g, g = sigma * (D normals of the stream st): N_x(0, sigma^2) in O(D) (reference:
    mechanisms.sample_tangent_gaussian_closed_form, the sphere branch: g - (x^T g) x).

    Written into ``out``, the normals read from the stream ``st``.
    """
    normals_into(st, out, sigma)
    a = dot_kernel(x, out)
    for k in range(out.shape[0]):
        out[k] = out[k] - a * x[k]


@njit(cache=True, inline="always")
def add_clipped_grad(dims, x, Z, C, row, tau, acc, work):
    """acc += clip_tau(grad f_row(x)), grad f_row(x) = s (z - a x), s = -2 c a, a = z^T x, in place.

    ||grad||^2 = s^2 (||z||^2 - a^2) (x is a unit vector), from the same pass that gives a; when
    that difference cancels (ratio below :data:`CANCELLATION`) the norm is recomputed exactly.
    Clipping (reference: mechanisms.clip): the factor min(1, tau/||grad||) (1 at a zero gradient).

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
    z = Z[row]
    a, zz = dot_and_square_kernel(z, x)
    s = -2.0 * C[row] * a
    f = 1.0
    if tau != math.inf:
        r2 = zz - a * a
        if r2 <= CANCELLATION * zz:
            r2 = 0.0
            for k in range(z.shape[0]):
                w = z[k] - a * x[k]
                r2 += w * w
        nrm = abs(s) * math.sqrt(r2)
        if nrm != 0.0 and tau / nrm < 1.0:
            f = tau / nrm
    fs = f * s
    for k in range(z.shape[0]):
        acc[k] += fs * (z[k] - a * x[k])


@njit(cache=True, inline="always")
def grad_sample(dims, x, Z, row, c):
    """Verified twin of :meth:`prirfed.reference.problems.sphere_pca.SpherePCA.rgrad_ij`.

    grad f_ij(x) of the sample in row ``row`` (a new array).

    The sample is row ``row`` of ``Z``, scaled by ``c``; flat arrays.
    """
    return sphere_pca_rgrad_kernel(x, Z[row], c)


@njit(cache=True, inline="always")
def agent_grad(dims, x, Z, C, offsets, sizes, A, i):
    """Verified twin of :meth:`prirfed.reference.problems.sphere_pca.SpherePCA.rgrad_i`.

    grad f_i(x) = P_x(-(2 c_i / N_i) Z_i^T (Z_i x)) (reference: SpherePCA._rgrad_i).

    Agent ``i`` of the stacked arrays; flat.
    """
    off = offsets[i]
    return sphere_pca_rgrad_mean_kernel(x, Z[off:off + sizes[i]], C[off])


@njit(cache=True, parallel=True)
def agent_sums(x, Z, offsets, sizes, F, G):
    """F[i] = sum_j a_j^2 and G[i] = sum_j a_j z_j over agent i's rows (a_j = z_j^T x), the agents in
    parallel (``prange``; each agent writes only its own row, summing its rows in order, so the
    values do not depend on the number of threads).

    Helper, not a paper formula: the one pass over the data that a history row of :func:`record` costs.

    Parameters
    ----------
    x : numpy.ndarray
        Current point, flat float64 array.
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    F : numpy.ndarray
        Output, one entry per agent, overwritten.
    G : numpy.ndarray
        Output, one row per agent, overwritten.
    """
    D = x.shape[0]
    for i in prange(sizes.shape[0]):
        off = offsets[i]
        fi = 0.0
        gi = G[i]
        for k in range(D):
            gi[k] = 0.0
        for j in range(off, off + sizes[i]):
            z = Z[j]
            a = dot_kernel(z, x)
            fi += a * a
            for k in range(D):
                gi[k] += a * z[k]
        F[i] = fi


@njit(cache=True)
def record(dims, x, Z, C, offsets, sizes, A, ps, xstar):
    """(f(x), ||grad f(x)||, angle to x*) in one pass over the data (reference: History.record with
    SpherePCA.f, .grad and .angle_to_optimum): per agent, sum_j a_j^2 and sum_j a_j z_j with
    a_j = z_j^T x; f = sum_i p_i (-c_i / N_i) sum_j a_j^2; grad f = P_x(sum_i p_i (-2 c_i / N_i)
    sum_j a_j z_j); the angle ``atan2(||x - (x^T x*) x*||, |x^T x*|)`` (NaN if x* is unknown: empty).

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
    D = x.shape[0]
    N = sizes.shape[0]
    F = np.empty(N)
    G = np.empty((N, D))
    agent_sums(x, Z, offsets, sizes, F, G)
    # the reduction over agents in agent order: the same floating-point sums for every thread count
    g = np.zeros(D)
    f = 0.0
    for i in range(N):
        off = offsets[i]
        n = sizes[i]
        c = C[off]
        f += ps[i] * (-c * (F[i] / n))
        w = ps[i] * (-2.0 * c / n)
        for k in range(D):
            g[k] += w * G[i, k]
    b = dot_kernel(x, g)
    for k in range(D):
        g[k] = g[k] - b * x[k]
    gnorm = math.sqrt(dot_kernel(g, g))
    err = math.nan
    if xstar.shape[0] == D:
        a = dot_kernel(x, xstar)
        r = 0.0
        for k in range(D):
            w = x[k] - a * xstar[k]
            r += w * w
        err = math.atan2(math.sqrt(r), abs(a))
    return f, gnorm, err
