"""The geometry the fused loops see: one set of functions, two families chosen by the type of ``dims``.

Every loop of :mod:`prirfed.verified.trainers` is written once, in terms of the functions below, and
takes ``dims`` right after its codes:

- ``dims`` an integer ``n`` (the SPD side; 0 for the sphere and Lorentz): the family of
  :mod:`prirfed.verified.trainers.geometry_flat` (sphere, sphere retraction, SPD, Lorentz);
- ``dims`` a pair ``(d, r)``: the family of :mod:`prirfed.verified.trainers.geometry_stiefel`
  (St(d, r), Exp/Log or the polar retraction).

The two families define the same functions with the same arguments; the choice is made by Numba
while it types a loop (``numba.extending.overload`` on the type of ``dims``), so a loop compiles one specialisation per family, and each specialisation types only its
family's kernels; nothing is passed as a function argument (which would defeat the on-disk cache)
and nothing is decided per call in Python. The functions here are stubs for compiled code: called
from Python they raise ``TypeError``.

Written once, in terms of the dispatched functions: :func:`clip_or_identity` (clip_tau of 000
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

from . import geometry_flat as flat
from . import geometry_stiefel as stiefel
from .codes import AGG_TANGENT, KARCHER_MAX_ITER, KARCHER_TOL

__all__ = ["exp", "log", "transp", "norm", "noise", "grad_sample", "agent_grad", "full_grad", "clip_or_identity",
           "aggregate", "is_stiefel_dims"]


def is_stiefel_dims(dims) -> bool:
    """Whether a Numba type of ``dims`` selects the Stiefel family (a pair of integers)."""
    return isinstance(dims, types.UniTuple) and dims.count == 2 and isinstance(dims.dtype, types.Integer)


def _compiled_only(name):
    raise TypeError(f"prirfed.verified.trainers.geometry.{name}: a stub for compiled loops (call it inside @njit code)")


def exp(geom, dims, x, v):
    """Exp_x(v) (R_x(v) for the retraction codes)."""
    _compiled_only("exp")


def log(geom, dims, x, y):
    """Exp_x^{-1}(y) (R_x^{-1}(y) for the retraction codes)."""
    _compiled_only("log")


def transp(geom, dims, x, y, v):
    """The transport of v from T_x to T_y of the family (parallel, or Stiefel's projection)."""
    _compiled_only("transp")


def norm(geom, dims, x, v):
    """||v||_x."""
    _compiled_only("norm")


def noise(geom, dims, x, sigma, rng):
    """eps ~ N_x(0, sigma^2) from one rng.standard_normal(dim)."""
    _compiled_only("noise")


def grad_sample(prob, dims, x, Z, row, c):
    """grad f_ij(x) of the sample in row ``row`` of Z with scale c."""
    _compiled_only("grad_sample")


def agent_grad(prob, dims, x, Z, C, offsets, sizes, A, i):
    """grad f_i(x) of agent i."""
    _compiled_only("agent_grad")


def full_grad(prob, dims, x, Z, C, offsets, sizes, A, ps):
    """grad f(x) = sum_i p_i grad f_i(x)."""
    _compiled_only("full_grad")


def _family(name):
    """Register the overload of the stub ``name``: the function of the same name and arguments in
    the family that the Numba type of ``dims`` selects (its Python source, inlined by Numba)."""
    stub = globals()[name]
    flat_fn, stiefel_fn = getattr(flat, name).py_func, getattr(stiefel, name).py_func

    def choose(*args):
        return stiefel_fn if is_stiefel_dims(args[1]) else flat_fn

    choose.__signature__ = inspect.signature(stub)
    overload(stub)(choose)


for _name in ("exp", "log", "transp", "norm", "noise", "grad_sample", "agent_grad", "full_grad"):
    _family(_name)


@njit(cache=True, inline="always")
def clip_or_identity(geom, dims, x, v, tau):
    """clip_tau(v) = min(1, tau/||v||_x) v; identity for tau = inf (reference: local.clip_or_identity)."""
    if tau == math.inf:
        return v
    return clip_kernel(v, norm(geom, dims, x, v), tau)


@njit(cache=True, inline="always")
def aggregate(geom, dims, x, uploads, w, aggregation):
    """The server step from x: the tangent mean (3.2) of 000 / (8) of 002, Exp_x(sum_q w_q Log_x(x_q)),
    or the Karcher mean (3.1) / (7) by the iteration of reference karcher_mean (unit-step
    Riemannian gradient descent on (1/2) sum_q w_q dist^2(., x_q) from x, stopping at the first
    iterate with ||sum_q w_q Log(x_q)|| <= KARCHER_TOL, raising after KARCHER_MAX_ITER steps).
    w is normalised here (w / sum w), as the reference does."""
    w = w / np.sum(w)
    D = x.shape[0]
    if aggregation == AGG_TANGENT:
        v = np.zeros(D)
        for q in range(uploads.shape[0]):
            v = v + w[q] * log(geom, dims, x, uploads[q])
        return exp(geom, dims, x, v)
    y = x
    for it in range(KARCHER_MAX_ITER + 1):
        g = np.zeros(D)
        for q in range(uploads.shape[0]):
            g = g + w[q] * log(geom, dims, y, uploads[q])
        if norm(geom, dims, y, g) <= KARCHER_TOL:
            return y
        if it == KARCHER_MAX_ITER:
            break
        y = exp(geom, dims, y, g)
    raise ValueError("karcher_mean (verified): the gradient norm is still > tol 1e-10 after max_iter = 1000 iterations")
