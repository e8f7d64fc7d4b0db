"""The geometry the fused loops see: one set of functions, one family per geometry, chosen by TYPE.

Every loop of :mod:`prirfed.verified.trainers` is written once, in terms of the functions below, and
takes ``dims``, an instance of a class of :mod:`prirfed.verified.trainers.families`, after its data
arrays. While Numba types a loop it resolves each function here by the class of ``dims``
(``numba.extending.overload``) to the function of the same name in that geometry's module:

=====================================  =================================================================
``SphereDims`` / ``SphereRetrDims``    :mod:`prirfed.verified.trainers.geometry_sphere` (sphere PCA)
``SPDDims``                            :mod:`prirfed.verified.trainers.geometry_spd` (Frechet mean)
``LorentzDims``                        :mod:`prirfed.verified.trainers.geometry_lorentz` (HSP)
``StiefelDims`` / ``StiefelRetrDims``  :mod:`prirfed.verified.trainers.geometry_stiefel` (kPCA)
=====================================  =================================================================

(a ``*RetrDims`` class picks the module's ``exp_retr`` / ``log_retr`` for ``exp`` / ``log``). So a loop
compiles one specialisation per geometry, typing only that geometry's kernels: a run compiles (or
loads) only what it uses. Nothing is passed as a function argument (which would defeat the on-disk
cache) and nothing is decided per call in Python. The functions here are stubs for compiled code:
called from Python they raise ``TypeError``.

Written once, on top of the dispatched functions: :func:`full_grad`, the generic
:func:`agent_grad_by_samples` and :func:`record_by_samples` (for a family without its own
``agent_grad`` / ``record``: it gives ``f_sample`` and ``dist`` instead), :func:`clip_or_identity` (clip_tau of Huang et al. (2024)
Algorithm 2 line 4) and :func:`aggregate` (the server step: tangent mean (3.2) / (8), or the Karcher
mean (3.1) / (7) by the iteration of the reference ``karcher_mean``).
Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from prirfed.verified.mechanisms import clip_kernel

from . import geometry_lorentz, geometry_spd, geometry_sphere, geometry_stiefel
from .codes import AGG_TANGENT, KARCHER_MAX_ITER, KARCHER_TOL
from .families import LorentzDims, SPDDims, SphereDims, SphereRetrDims, StiefelDims, StiefelRetrDims

__all__ = ["exp", "log", "transp", "norm", "noise_into", "add_clipped_grad", "add_clipped_batch", "grad_sample", "agent_grad",
           "record", "f_sample", "dist", "full_grad", "agent_grad_by_samples", "record_by_samples",
           "add_clipped_batch_by_samples", "clip_or_identity",
           "aggregate", "noisy_clipped_mean_into", "FAMILIES", "FAMILY_FUNCTIONS", "GENERIC", "family_of", "kernel_call"]

#: dims class -> (module, suffix of the maps variant)
FAMILIES = {
    SphereDims: (geometry_sphere, ""),
    SphereRetrDims: (geometry_sphere, "_retr"),
    SPDDims: (geometry_spd, ""),
    LorentzDims: (geometry_lorentz, ""),
    StiefelDims: (geometry_stiefel, ""),
    StiefelRetrDims: (geometry_stiefel, "_retr"),
}


def family_of(dims_type):
    """(module, suffix) for a Numba type of ``dims`` (a named tuple of a class of FAMILIES), else TypeError.

    Helper, not a paper formula: dispatch by type.

    Parameters
    ----------
    dims_type : numba type
        Numba type of a ``dims`` argument.

    Returns
    -------
    tuple
        ``(module, suffix)``.
    """
    cls = getattr(dims_type, "instance_class", None)
    if isinstance(dims_type, (types.NamedUniTuple, types.NamedTuple)) and cls in FAMILIES:
        return FAMILIES[cls]
    raise TypeError(f"prirfed.verified.trainers.geometry: dims must be an instance of a class of "
                    f"verified.trainers.families (got the Numba type {dims_type})")


def _compiled_only(name):
    raise TypeError(f"prirfed.verified.trainers.geometry.{name}: a stub for compiled loops (call it inside @njit code)")


def exp(dims, x, v):
    """Exp_x(v) (R_x(v) for the retraction classes).

    Helper, not a paper formula: a stub resolved by the family of ``dims`` (a twin of the reference map).

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    v : numpy.ndarray
        Tangent vector at ``x``, flat.

    Returns
    -------
    numpy.ndarray
        The point, flat.
    """
    _compiled_only("exp")


def log(dims, x, y):
    """Exp_x^{-1}(y) (R_x^{-1}(y) for the retraction classes).

    Helper, not a paper formula: a stub resolved by the family of ``dims`` (a twin of the reference map).

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    y : numpy.ndarray
        Second point, flat.

    Returns
    -------
    numpy.ndarray
        The tangent vector, flat.
    """
    _compiled_only("log")


def transp(dims, x, y, v):
    """The transport of v from T_x to T_y of the family (parallel, or Stiefel's projection).

    Helper, not a paper formula: a stub resolved by the family of ``dims`` (a twin of the reference map).

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    y : numpy.ndarray
        Second point, flat.
    v : numpy.ndarray
        Tangent vector at ``x``, flat.

    Returns
    -------
    numpy.ndarray
        The transported vector, flat.
    """
    _compiled_only("transp")


def norm(dims, x, v):
    """||v||_x.

    Helper, not a paper formula: a stub resolved by the family of ``dims`` (a twin of the reference map).

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    v : numpy.ndarray
        Tangent vector at ``x``, flat.

    Returns
    -------
    float
        The norm.
    """
    _compiled_only("norm")


def noise_into(dims, x, sigma, st, out):
    """out = eps ~ N_x(0, sigma^2), read from the stream ``st`` (the O(dim) closed form).

    A stub resolved by the family of ``dims``. The tangent Gaussian of Huang et al. (2024), Definition 2.5.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    sigma : float
        Noise standard deviation (0: no noise).
    st : numpy.ndarray
        Random stream state (:mod:`prirfed.verified.randomness`), advanced in place.
    out : numpy.ndarray
        Output buffer, overwritten.
    """
    _compiled_only("noise_into")


def add_clipped_grad(dims, x, Z, C, row, tau, acc, work):
    """acc += clip_tau(grad f_row(x)) in place (``work``: a scratch vector of the point's length).

    A stub resolved by the family of ``dims``. The clipping of Huang et al. (2024), Algorithm 2, line 4.

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
    _compiled_only("add_clipped_grad")


def add_clipped_batch(dims, x, Z, C, perm, off, b, tau, acc, work):
    """acc += sum_{q < b} clip_tau(grad f_{off + perm[q]}(x)) in place (``work``: a scratch vector of
    the point's length).

    A stub resolved by the family of ``dims`` (the generic form: :func:`add_clipped_batch_by_samples`).
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
        Scratch vector of the point's length.
    """
    _compiled_only("add_clipped_batch")


def grad_sample(dims, x, Z, row, c):
    """grad f_ij(x) of the sample in row ``row`` of Z with scale c (a new array).

    A stub resolved by the family of ``dims``. The per-sample gradients of Huang et al. (2024), Section 6.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    row : int
        Row of ``Z``.
    c : float
        The sample's scale.

    Returns
    -------
    numpy.ndarray
        The gradient, flat.
    """
    _compiled_only("grad_sample")


def agent_grad(dims, x, Z, C, offsets, sizes, A, i):
    """grad f_i(x) of agent i.

    A stub resolved by the family of ``dims``. The agent gradient of Huang et al. (2024), Problem (2.1).

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
    i : int
        Agent index.

    Returns
    -------
    numpy.ndarray
        The gradient, flat.
    """
    _compiled_only("agent_grad")


def record(dims, x, Z, C, offsets, sizes, A, ps, xstar):
    """(f(x), ||grad f(x)||_x, error to the optimum) for the history (NaN error if xstar is empty).

    A stub resolved by the family of ``dims``. The quantities plotted by Huang et al. (2024), Section 6.

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
    _compiled_only("record")


def f_sample(dims, x, Z, row, c):
    """f_ij(x) of the sample in row ``row`` with scale c (families without their own ``record``).

    A stub resolved by the family of ``dims``. The per-sample losses of Huang et al. (2024), Section 6.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    row : int
        Row of ``Z``.
    c : float
        The sample's scale.

    Returns
    -------
    float
        The loss.
    """
    _compiled_only("f_sample")


def dist(dims, x, y):
    """dist(x, y), the error to the optimum (families without their own ``record``).

    Helper, not a paper formula: a stub resolved by the family of ``dims`` (a twin of the reference map).

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    y : numpy.ndarray
        Second point, flat.

    Returns
    -------
    float
        The distance.
    """
    _compiled_only("dist")


FAMILY_FUNCTIONS = ("exp", "log", "transp", "norm", "noise_into", "add_clipped_grad", "add_clipped_batch",
                    "grad_sample", "agent_grad", "record", "f_sample", "dist")

#: functions a family may leave out: the generic form below (written on the family's other functions)
#: is compiled instead
GENERIC = ("agent_grad", "record", "add_clipped_batch")


def kernel_call(name, kernel):
    """The implementation of the map ``name`` (exp, log, transp, norm) that calls a manifold kernel
    with the loop's arguments but ``dims`` (for a family's ``KERNELS``: no wrapper written per family).

    Helper, not a paper formula: dispatch glue.

    Parameters
    ----------
    name : str
        Map name: ``exp``, ``log``, ``transp`` or ``norm``.
    kernel : callable
        The manifold kernel.

    Returns
    -------
    callable
        A function of the loop's arguments.
    """
    if name in ("exp", "norm"):
        def call(dims, x, v):
            return kernel(x, v)
    elif name == "log":
        def call(dims, x, y):
            return kernel(x, y)
    elif name == "transp":
        def call(dims, x, y, v):
            return kernel(x, y, v)
    else:
        raise TypeError(f"prirfed.verified.trainers.geometry.kernel_call: {name!r} is not a map of KERNELS "
                        f"(exp, log, transp, norm)")
    return call


def _register(name):
    """The overload of the stub ``name``: the function of the same name (or ``name + suffix``) in the
    module that the class of ``dims`` selects (its Python source, compiled inside the loop), the
    module's kernel of that name in its ``KERNELS`` (:func:`kernel_call`), or the generic form of
    :data:`GENERIC` when the module has none."""
    stub = globals()[name]

    def choose(*args):
        module, suffix = family_of(args[0])
        kernels = getattr(module, "KERNELS", {})
        for key in (name + suffix, name):
            if key in kernels:
                return kernel_call(name, kernels[key])
            fn = getattr(module, key, None)
            if fn is not None:
                return fn.py_func
        if name not in GENERIC:
            raise TypeError(f"prirfed.verified.trainers.geometry: the family {module.__name__} has no {name!r}")
        return globals()[name + "_by_samples"].py_func

    choose.__signature__ = inspect.signature(stub)
    overload(stub)(choose)


for _name in FAMILY_FUNCTIONS:
    _register(_name)


@njit(cache=True, inline="always")
def add_clipped_batch_by_samples(dims, x, Z, C, perm, off, b, tau, acc, work):
    """acc += sum_{q < b} clip_tau(grad f_{off + perm[q]}(x)), one :func:`add_clipped_grad` per sample
    in batch order (for a family without its own ``add_clipped_batch``).

    Huang et al. (2024), Algorithm 2, line 4.

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
        Scratch vector of the point's length.
    """
    for q in range(b):
        add_clipped_grad(dims, x, Z, C, off + perm[q], tau, acc, work)


@njit(cache=True, inline="always")
def agent_grad_by_samples(dims, x, Z, C, offsets, sizes, A, i):
    """grad f_i(x) = (1/N_i) sum_j grad f_ij(x), summed in order (reference: FederatedProblem._rgrad_i).

    Huang et al. (2024), Problem (2.1).

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
    i : int
        Agent index.

    Returns
    -------
    numpy.ndarray
        The gradient, flat.
    """
    off = offsets[i]
    g = np.zeros(x.shape[0])
    for j in range(sizes[i]):
        g += grad_sample(dims, x, Z, off + j, C[off + j])
    return g / sizes[i]


@njit(cache=True, inline="always")
def full_grad(dims, x, Z, C, offsets, sizes, A, ps):
    """grad f(x) = sum_i p_i grad f_i(x) (Huang et al. (2024) (2.1)).

    Huang et al. (2024), Problem (2.1).

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

    Returns
    -------
    numpy.ndarray
        The gradient, flat.
    """
    g = np.zeros(x.shape[0])
    for i in range(sizes.shape[0]):
        g += ps[i] * agent_grad(dims, x, Z, C, offsets, sizes, A, i)
    return g


@njit(cache=True)
def record_by_samples(dims, x, Z, C, offsets, sizes, A, ps, xstar):
    """(f(x), ||grad f(x)||_x, dist(x, x*)) in one pass over the samples (reference: History.record;
    f = sum_i p_i (1/N_i) sum_j f_ij(x), grad f summed as :func:`full_grad` sums it; NaN error if x*
    is unknown: empty).

    Huang et al. (2024), Problem (2.1), evaluated for the history.

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
    f = 0.0
    g = np.zeros(x.shape[0])
    for i in range(sizes.shape[0]):
        off = offsets[i]
        fi = 0.0
        gi = np.zeros(x.shape[0])
        for j in range(off, off + sizes[i]):
            fi += f_sample(dims, x, Z, j, C[j])
            gi += grad_sample(dims, x, Z, j, C[j])
        f += ps[i] * (fi / sizes[i])
        g += ps[i] * (gi / sizes[i])
    err = math.nan
    if xstar.shape[0] == x.shape[0]:
        err = dist(dims, x, xstar)
    return f, norm(dims, x, g), err


@njit(cache=True, inline="always")
def noisy_clipped_mean_into(dims, x, Z, C, perm, off, b, tau, sigma, st, mean, work, eps):
    """mean <- (1/b) sum_{q < b} clip_tau(grad f_{off + perm[q]}(x)) + eps, eps ~ N_x(0, sigma^2) read
    from the stream ``st`` after the batch (none for sigma = 0): the private gradient of one step of
    DP-RSGD (Huang et al. (2024) Algorithm 2 lines 3-5) and of DP-RGD (Han et al. (2024) Algorithm 1), in place.

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
        Index buffer of the agent's sample order (the batch is its first ``b`` entries).
    off : int
        First row of the agent in ``Z``.
    b : int
        Batch size.
    tau : float
        Clipping threshold (``inf``: no clipping).
    sigma : float
        Noise standard deviation (0: no noise).
    st : numpy.ndarray
        Random stream state (:mod:`prirfed.verified.randomness`), advanced in place.
    mean : numpy.ndarray
        Output: the private mean gradient, overwritten.
    work : numpy.ndarray
        Scratch vector of the point's length.
    eps : numpy.ndarray
        Scratch buffer for the noise.
    """
    D = mean.shape[0]
    mean[:] = 0.0
    add_clipped_batch(dims, x, Z, C, perm, off, b, tau, mean, work)
    for j in range(D):
        mean[j] = mean[j] / b
    if sigma != 0.0:
        noise_into(dims, x, sigma, st, eps)
        for j in range(D):
            mean[j] = mean[j] + eps[j]


@njit(cache=True, inline="always")
def clip_or_identity(dims, x, v, tau):
    """Verified twin of :func:`prirfed.reference.trainers.local.clip_or_identity`.

    clip_tau(v) = min(1, tau/||v||_x) v; identity for tau = inf (reference: local.clip_or_identity).
    """
    if tau == math.inf:
        return v
    return clip_kernel(v, norm(dims, x, v), tau)


@njit(cache=True, inline="always")
def aggregate(dims, x, uploads, w, aggregation):
    """The server step from x: the tangent mean (3.2) of Huang et al. (2024) / (8) of Li and Ma (2023), Exp_x(sum_q w_q Log_x(x_q)),
    or the Karcher mean (3.1) / (7) by the iteration of reference karcher_mean (unit-step
    Riemannian gradient descent on (1/2) sum_q w_q dist^2(., x_q) from x, stopping at the first
    iterate with ||sum_q w_q Log(x_q)|| <= KARCHER_TOL, raising after KARCHER_MAX_ITER steps).
    w is normalised here (w / sum w), as the reference does.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    x : numpy.ndarray
        Current point, flat float64 array.
    uploads : numpy.ndarray
        The agents' points, one per row.
    w : numpy.ndarray
        Upload weights (normalised here).
    aggregation : int
        ``AGG_TANGENT`` or the Karcher code (:mod:`prirfed.verified.trainers.codes`).

    Returns
    -------
    numpy.ndarray
        The new server point, flat.

    Raises
    ------
    ValueError
        If the Karcher iteration does not converge within ``KARCHER_MAX_ITER`` steps.
    """
    w = w / np.sum(w)
    D = x.shape[0]
    if aggregation == AGG_TANGENT:
        v = np.zeros(D)
        for q in range(uploads.shape[0]):
            v = v + w[q] * log(dims, x, uploads[q])
        return exp(dims, x, v)
    y = x
    for it in range(KARCHER_MAX_ITER + 1):
        g = np.zeros(D)
        for q in range(uploads.shape[0]):
            g = g + w[q] * log(dims, y, uploads[q])
        if norm(dims, y, g) <= KARCHER_TOL:
            return y
        if it == KARCHER_MAX_ITER:
            break
        y = exp(dims, y, g)
    raise ValueError("karcher_mean (verified): the gradient norm is still > tol 1e-10 after max_iter = 1000 iterations")
