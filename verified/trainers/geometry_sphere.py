"""The sphere family of the fused loops: S^d with sphere PCA (Huang et al. (2024) (6.1), Han et al. (2024) (2), Li and Ma (2023) (4)).

Points and tangent vectors are float64 vectors of length D = d + 1; ``dims`` is
``SphereDims(D)`` (Exp/Log) or ``SphereRetrDims(D)`` (the retraction and its inverse: the ``*_retr``
functions below, chosen by :mod:`prirfed.verified.trainers.geometry`). Mirrors
``reference/manifolds/sphere.py`` (Exp, Log, transport, norm; ``retracted.py`` for the retraction),
``reference/problems/sphere_pca.py`` (f_ij = -c_i (z^T x)^2, grad f_ij = -2 c_i a (z - a x), a = z^T x)
and the sphere branch of ``reference/mechanisms.sample_tangent_gaussian_closed_form`` (noise).

The per-sample work is in place (:func:`add_clipped_grad`: two passes over the sample, the first
reading it from memory and computing z^T x and z^T z together, the second adding the clipped
gradient into the running sum; no temporary array; a minibatch by :func:`add_clipped_batch`, four
samples per pass of the sum), and the history is one pass over the data
(:func:`record`: f, grad f and the angle to x* together; the agents' sums in parallel by
:func:`agent_sums`, reduced in agent order). Proofs note:
``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from prirfed.verified.kernels import dot_and_square_kernel, dot_kernel
from prirfed.verified.manifolds import sphere as vsphere
from prirfed.verified.problems.sphere_pca import sphere_pca_rgrad_kernel, sphere_pca_rgrad_mean_kernel
from prirfed.verified.randomness import normals_into

__all__ = ["KERNELS", "norm", "noise_into", "exact_r2", "clip_factor", "clip_factors4", "clip_scale",
           "add_clipped_grad", "add_clipped_batch", "grad_sample", "agent_grad", "agent_sums", "record"]

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
def exact_r2(z, x, a):
    """||z - a x||^2 by a second pass over the sample: the squared norm of the tangent part when the
    one-pass ||z||^2 - a^2 cancels (see :func:`clip_scale`).

    Helper, not a paper formula.

    Parameters
    ----------
    z : numpy.ndarray
        The sample.
    x : numpy.ndarray
        Current point (unit vector).
    a : float
        z^T x.

    Returns
    -------
    float
        ||z - a x||^2.
    """
    r2 = 0.0
    for k in range(z.shape[0]):
        w = z[k] - a * x[k]
        r2 += w * w
    return r2


@njit(cache=True, inline="always")
def clip_factor(s, r2, tau):
    """g = f s with f = min(1, tau / nrm), nrm = abs(s) sqrt(r2); f = 1 at nrm = 0, for tau = inf and
    when nrm is not a number, written without branches (two selects): the scalar form of
    :func:`clip_factors4`, used for a single sample.

    Helper, not a paper formula: the factor of reference mechanisms.clip. Case by case it returns
    what the branch form ``f = tau / nrm if nrm != 0 and tau / nrm < 1 else 1`` returns, bit for bit:
    the divisor is replaced by 1 only where nrm = 0, and there the first test is false; tau = inf
    gives tau / nrm = inf (or NaN at nrm = inf), never below 1.

    Parameters
    ----------
    s : float
        The unclipped gradient's scale, -2 c a.
    r2 : float
        ||z - a x||^2.
    tau : float
        Clipping threshold (``inf``: no clipping).

    Returns
    -------
    float
        g.
    """
    nrm = abs(s) * math.sqrt(r2)
    t = tau / (nrm if nrm != 0.0 else 1.0)
    return (t if (t < 1.0) & (nrm != 0.0) else 1.0) * s


@intrinsic
def clip_factors4(typingctx, s0, s1, s2, s3, r0, r1, r2, r3, tau):
    """:func:`clip_factor` of four samples at once, (g0, g1, g2, g3), in LLVM ``<4 x double>``
    instructions: one vector square root, one vector division, and the two selects as lane masks.

    Helper, not a paper formula. IEEE square root, division and multiplication are correctly rounded
    lane by lane, and the comparisons are the scalar ones (``nrm != 0``: unordered or not equal, as
    Python's ``!=``; ``t < 1``: ordered, false for NaN), so each lane is bit for bit the scalar
    :func:`clip_factor` (``test_clip_factors4_is_clip_factor``). LLVM left the four scalar
    computations scalar (``inspect_asm``: four ``vsqrtsd`` and four ``vdivsd``), hence the
    explicit vector.

    Parameters
    ----------
    s0, s1, s2, s3 : float
        The unclipped gradients' scales, -2 c a.
    r0, r1, r2, r3 : float
        Their ||z - a x||^2.
    tau : float
        Clipping threshold (``inf``: no clipping).

    Returns
    -------
    tuple of float
        (g0, g1, g2, g3).
    """
    f8 = types.float64
    sig = types.UniTuple(f8, 4)(f8, f8, f8, f8, f8, f8, f8, f8, f8)

    def codegen(context, builder, signature, args):
        vty = ir.VectorType(ir.DoubleType(), 4)
        lane = [ir.Constant(ir.IntType(32), q) for q in range(4)]

        def vector(values):
            v = ir.Constant(vty, ir.Undefined)
            for q, value in enumerate(values):
                v = builder.insert_element(v, value, lane[q])
            return v

        unary = ir.FunctionType(vty, [vty])
        fabs = cgutils.get_or_insert_function(builder.module, unary, "llvm.fabs.v4f64")
        sqrt = cgutils.get_or_insert_function(builder.module, unary, "llvm.sqrt.v4f64")
        s = vector(args[0:4])
        one = ir.Constant(vty, [1.0] * 4)
        nrm = builder.fmul(builder.call(fabs, [s]), builder.call(sqrt, [vector(args[4:8])]))
        nonzero = builder.fcmp_unordered("!=", nrm, ir.Constant(vty, [0.0] * 4))
        t = builder.fdiv(vector([args[8]] * 4), builder.select(nonzero, nrm, one))
        f = builder.select(builder.and_(builder.fcmp_ordered("<", t, one), nonzero), t, one)
        g = builder.fmul(f, s)
        return context.make_tuple(builder, signature.return_type, [builder.extract_element(g, c) for c in lane])

    return sig, codegen


@njit(cache=True, inline="always")
def clip_scale(z, x, a, zz, c, tau):
    """The scale g of one clipped gradient: clip_tau(grad f(x)) = g (z - a x), g = f s, s = -2 c a,
    f = min(1, tau / ||grad f(x)||) (1 at a zero gradient and for tau = inf), a = z^T x, zz = z^T z.

    ||grad||^2 = s^2 (||z||^2 - a^2) (x is a unit vector); when that difference cancels (ratio below
    :data:`CANCELLATION`) the norm is recomputed exactly from z - a x (:func:`exact_r2`; not needed for
    tau = inf). Clipping as reference mechanisms.clip, of Huang et al. (2024), Algorithm 2, line 4.

    Parameters
    ----------
    z : numpy.ndarray
        The sample.
    x : numpy.ndarray
        Current point (unit vector).
    a : float
        z^T x.
    zz : float
        z^T z.
    c : float
        The sample's loss scale.
    tau : float
        Clipping threshold (``inf``: no clipping).

    Returns
    -------
    float
        g.
    """
    r2 = zz - a * a
    if r2 <= CANCELLATION * zz and tau != math.inf:
        r2 = exact_r2(z, x, a)
    return clip_factor(-2.0 * c * a, r2, tau)


@njit(cache=True, inline="always")
def add_clipped_grad(dims, x, Z, C, row, tau, acc, work):
    """acc += clip_tau(grad f_row(x)), grad f_row(x) = s (z - a x), s = -2 c a, a = z^T x, in place
    (the scale by :func:`clip_scale`).

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
    g = clip_scale(z, x, a, zz, C[row], tau)
    for k in range(z.shape[0]):
        acc[k] += g * (z[k] - a * x[k])


@njit(cache=True, inline="always")
def add_clipped_batch(dims, x, Z, C, perm, off, b, tau, acc, work):
    """acc += sum_{q < b} clip_tau(grad f_r(x)), r = off + perm[q], in place, four samples at a time.

    Each clipped gradient is g_r (z_r - a_r x) (:func:`clip_scale`), so the sum is
    sum_r g_r z_r - (sum_r g_r a_r) x: the first sum is built in ``work``, four rows per pass
    ((g0 z0 + g1 z1) + (g2 z2 + g3 z3), one read and write of the sum per four samples), the second
    as a scalar, and x is subtracted once at the end. The same value as :func:`add_clipped_grad`
    over the batch up to rounding: both round at the scale ``eps * sum_r |g_r| ||z_r||`` (the subtraction
    z - a x of one sample rounds at eps ||z||).

    The clipped minibatch sum of Huang et al. (2024), Algorithm 2, line 4.

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
    perm : numpy.ndarray
        The batch: rows ``off + perm[q]`` for ``q < b``.
    off : int
        First row of the agent in ``Z``.
    b : int
        Batch size.
    tau : float
        Clipping threshold (``inf``: no clipping).
    acc : numpy.ndarray
        Running sum, updated in place.
    work : numpy.ndarray
        Scratch vector of the point's length, overwritten.
    """
    D = x.shape[0]
    for k in range(D):
        work[k] = 0.0
    xs = 0.0
    q = 0
    while q + 4 <= b:
        r0 = off + perm[q]
        r1 = off + perm[q + 1]
        r2 = off + perm[q + 2]
        r3 = off + perm[q + 3]
        z0 = Z[r0]
        z1 = Z[r1]
        z2 = Z[r2]
        z3 = Z[r3]
        a0, zz0 = dot_and_square_kernel(z0, x)
        a1, zz1 = dot_and_square_kernel(z1, x)
        a2, zz2 = dot_and_square_kernel(z2, x)
        a3, zz3 = dot_and_square_kernel(z3, x)
        # clip_scale of the four samples: the rare exact pass under one test, then the four clip
        # factors in one vector (clip_factors4); a branch per sample was 2.2x slower at D = 25
        e0 = zz0 - a0 * a0
        e1 = zz1 - a1 * a1
        e2 = zz2 - a2 * a2
        e3 = zz3 - a3 * a3
        if tau != math.inf and ((e0 <= CANCELLATION * zz0) | (e1 <= CANCELLATION * zz1)
                                | (e2 <= CANCELLATION * zz2) | (e3 <= CANCELLATION * zz3)):
            if e0 <= CANCELLATION * zz0:
                e0 = exact_r2(z0, x, a0)
            if e1 <= CANCELLATION * zz1:
                e1 = exact_r2(z1, x, a1)
            if e2 <= CANCELLATION * zz2:
                e2 = exact_r2(z2, x, a2)
            if e3 <= CANCELLATION * zz3:
                e3 = exact_r2(z3, x, a3)
        g0, g1, g2, g3 = clip_factors4(-2.0 * C[r0] * a0, -2.0 * C[r1] * a1, -2.0 * C[r2] * a2, -2.0 * C[r3] * a3,
                                       e0, e1, e2, e3, tau)
        xs += (g0 * a0 + g1 * a1) + (g2 * a2 + g3 * a3)
        for k in range(D):
            work[k] += (g0 * z0[k] + g1 * z1[k]) + (g2 * z2[k] + g3 * z3[k])
        q += 4
    while q < b:
        r = off + perm[q]
        z = Z[r]
        a, zz = dot_and_square_kernel(z, x)
        g = clip_scale(z, x, a, zz, C[r], tau)
        xs += g * a
        for k in range(D):
            work[k] += g * z[k]
        q += 1
    for k in range(D):
        acc[k] += work[k] - xs * x[k]


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
    """(f(x), ||grad f(x)||, angle to x*) (reference: History.record with SpherePCA.f, .grad and
    .angle_to_optimum), in one pass over the data or, when ``A`` holds the covariance (shape (1, D, D):
    more samples than coordinates, :func:`prirfed.verified.trainers.arrays.problem_arrays`), from it:

    - data: per agent, sum_j a_j^2 and sum_j a_j z_j with a_j = z_j^T x; f = sum_i p_i (-c_i / N_i)
      sum_j a_j^2; grad f = P_x(sum_i p_i (-2 c_i / N_i) sum_j a_j z_j);
    - covariance: A = sum_i p_i (c_i / N_i) sum_j z_j z_j^T, so the same sums are f = -x^T A x and
      grad f = P_x(-2 A x): D^2 reads instead of n D.

    The angle is ``atan2(||x - (x^T x*) x*||, |x^T x*|)`` (NaN if x* is unknown: empty).

    The quantities Huang et al. (2024) plot in Section 6.

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
    g = np.zeros(D)
    f = 0.0
    if A.shape[0] == 1:
        A0 = A[0]
        for k in range(D):
            g[k] = -2.0 * dot_kernel(A0[k], x)
        f = 0.5 * dot_kernel(x, g)
    else:
        F = np.empty(N)
        G = np.empty((N, D))
        agent_sums(x, Z, offsets, sizes, F, G)
        # the reduction over agents in agent order: the same floating-point sums for every thread count
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
