"""Verified twin of :mod:`prirfed.reference.mechanisms` (Numba kernels).

Mirrors ``reference/mechanisms.py``: same names, same signatures, same order of random draws
(documented there), so that both twins fed a ``numpy.random.Generator`` in the same state
return the same sample (Numba's ``Generator`` support replays NumPy's algorithms on the same
bit generator; ``tests/mechanisms/test_mech_verified.py`` checks draw-for-draw equality).
No fastmath anywhere (this is a privacy path).

Kernels, callable from other njit code (fused trainer loops):

- ``sample_tangent_gaussian_kernel(rng, E, sigma)``: ``sum_k z_k E[k]``, ``z = sigma *
  rng.standard_normal(d)``, for a basis ``E`` of shape ``(d, *ambient)`` produced by a verified
  manifold's ``tangent_basis_kernel(x)``;
- ``sample_tangent_gaussian_batch_kernel(rng, E, sigma, n)``: ``n`` such draws (same stream);
- ``spd_sample_kernel(rng, x, sigma)``: the SPD closed form ``X^{1/2} S X^{1/2}``;
- ``mh_chain_kernel(rng, G, step, sigma, c0, n_steps)``: the random-walk Metropolis-Hastings
  chain in chart coordinates (Gram matrix ``G``);
- ``clip_kernel(v, norm_v, tau)``: ``min(1, tau / norm_v) v``.

The calibration functions are scalar closed forms with no loop to fuse; they are re-exported
from the reference unchanged.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

from prirfed.reference import mechanisms as _ref
from prirfed.reference.mechanisms import (  # noqa: F401  (re-exported, same objects)
    analytic_gaussian_sigma,
    gaussian_delta,
    gaussian_mechanism_sigma_classical,
    spd_symmetric_noise,
    symmetric_matrix_chart,
    tangent_gaussian_log_normalizer,
    tangent_gaussian_logpdf,
)
from prirfed.verified.kernels import sym_part_kernel as _sym

#: the reference's clipping constants, frozen into the kernels when they compile
_TAU_MIN = _ref.TAU_MIN
_FACTOR_NORMAL_MIN = _ref.FACTOR_NORMAL_MIN

__all__ = list(_ref.__all__) + [
    "sample_tangent_gaussian_kernel",
    "sample_tangent_gaussian_batch_kernel",
    "spd_sample_kernel",
    "sym_from_upper_kernel",
    "mh_chain_kernel",
    "clip_kernel",
    "clip_factor_kernel",
]


# ---------------------------------------------------------------------------- kernels
@njit(cache=True)
def _refuse_draw():
    raise ValueError("sample_tangent_gaussian: the draw overflows float64 (sigma times the tangent basis "
                     "exceeds the float64 range)")


@njit(cache=True)
def sample_tangent_gaussian_kernel(rng, E, sigma):
    r"""Tangent Gaussian draw ``xi = sum_k z_k E[k]``, ``z = sigma * rng.standard_normal(d)``.

    The draw of Han et al. (2024), Section 5.1, as in
    :func:`prirfed.reference.mechanisms.sample_tangent_gaussian` (without the mean and the argument
    checks, which the callers do).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the normals (Numba replays NumPy's algorithm on the same bit generator).
    E : numpy.ndarray
        Orthonormal basis of the tangent space, shape ``(d, *ambient)``.
    sigma : float
        Noise standard deviation, > 0.

    Returns
    -------
    numpy.ndarray
        :math:`\xi`, shape ``ambient``.

    Raises
    ------
    ValueError
        If the draw overflows float64 (raised after the draws).
    """
    d = E.shape[0]
    z = sigma * rng.standard_normal(d)
    Ef = E.reshape((d, -1))
    m = Ef.shape[1]
    out = np.zeros(m)
    for k in range(d):
        for a in range(m):
            out[a] += z[k] * Ef[k, a]
    for a in range(m):
        if not np.isfinite(out[a]):
            _refuse_draw()
    return out.reshape(E.shape[1:])


@njit(cache=True)
def sample_tangent_gaussian_batch_kernel(rng, E, sigma, n):
    """``n`` tangent Gaussian draws, row i = the i-th call of :func:`sample_tangent_gaussian_kernel` (same stream).

    Han et al. (2024), Section 5.1, ``n`` times.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the normals.
    E : numpy.ndarray
        Orthonormal tangent basis, shape ``(d, *ambient)``.
    sigma : float
        Noise standard deviation, > 0.
    n : int
        Number of draws.

    Returns
    -------
    numpy.ndarray
        ``(n, prod(ambient))`` draws, flat ambient.

    Raises
    ------
    ValueError
        If a draw overflows float64.
    """
    d = E.shape[0]
    Ef = E.reshape((d, -1))
    m = Ef.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        z = sigma * rng.standard_normal(d)
        for k in range(d):
            for a in range(m):
                out[i, a] += z[k] * Ef[k, a]
    for t in out.flat:
        if not np.isfinite(t):
            _refuse_draw()
    return out


@njit(cache=True)
def spd_sample_kernel(rng, x, sigma):
    r"""Closed-form SPD draw ``X^{1/2} S X^{1/2}`` (Han et al. (2024), Section 5.1).

    ``S`` from ``sigma * rng.standard_normal(n(n+1)/2)`` in upper-triangle row-major order, with
    :math:`S_{ij} = z/\sqrt2` off the diagonal (:func:`sym_from_upper_kernel`); the kernel of
    :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_spd`.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the normals.
    x : numpy.ndarray
        SPD base point, ``(n, n)``.
    sigma : float
        Noise standard deviation, > 0.

    Returns
    -------
    numpy.ndarray
        The symmetric ``(n, n)`` tangent vector.
    """
    n = x.shape[0]
    w, q = np.linalg.eigh(_sym(x))
    r = np.sqrt(w)
    xh = _sym((q * r) @ q.T)
    k = math.frexp(sigma)[1]  # formed at sigma 2^-k and scaled back: overflows only where the draw does
    z = math.ldexp(sigma, -k) * rng.standard_normal(n * (n + 1) // 2)
    out = _sym(xh @ sym_from_upper_kernel(z, n) @ xh)
    for i in range(n):
        for j in range(n):
            out[i, j] = math.ldexp(out[i, j], k)
    return out


@njit(cache=True, inline="always")
def sym_from_upper_kernel(z, n):
    """The symmetric n x n matrix S with S_ii = z_k, S_ij = S_ji = z_k / sqrt(2) (i < j).

    ``k`` runs over the upper triangle row by row: the coordinates of the SPD noise of Han et al. (2024), Section 5.1
    (:func:`prirfed.reference.mechanisms.spd_symmetric_noise`).

    Parameters
    ----------
    z : numpy.ndarray
        ``n(n+1)/2`` coordinates.
    n : int
        Matrix size.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` symmetric matrix.
    """
    s = np.empty((n, n))
    c = 1.0 / math.sqrt(2.0)
    k = 0
    for i in range(n):
        for j in range(i, n):
            if i == j:
                s[i, i] = z[k]
            else:
                s[i, j] = c * z[k]
                s[j, i] = s[i, j]
            k += 1
    return s


@njit(cache=True)
def _quad(G, c):
    return c @ (G @ c)


@njit(cache=True)
def mh_chain_kernel(rng, G, step, sigma, c0, n_steps):
    r"""Random-walk MH on R^d targeting exp(-c^T G c / (2 sigma^2)).

    The chain of Han et al. (2024), Section 5.2, as in
    :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_mh`: the log target is evaluated as
    ``-((c^T G c)/sigma)/sigma/2`` (so :math:`\sigma^2` cannot underflow); per step it draws
    ``rng.standard_normal(d)`` then ``rng.random()``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the proposals and acceptances.
    G : numpy.ndarray
        ``(d, d)`` Gram matrix of the chart.
    step : float
        Proposal standard deviation.
    sigma : float
        Target standard deviation, > 0.
    c0 : numpy.ndarray
        Start, ``(d,)`` chart coordinates.
    n_steps : int
        Number of steps.

    Returns
    -------
    states : numpy.ndarray
        ``(n_steps, d)`` states after steps 1..n_steps.
    accepted : int
        Number of accepted proposals.
    """
    d = c0.shape[0]
    c = c0.copy()
    lp = -0.5 * (_quad(G, c) / sigma) / sigma
    accepted = 0
    states = np.empty((n_steps, d))
    for t in range(n_steps):
        c_new = c + step * rng.standard_normal(d)
        lp_new = -0.5 * (_quad(G, c_new) / sigma) / sigma
        u = rng.random()
        if u == 0.0 or math.log(u) < lp_new - lp:
            c = c_new
            lp = lp_new
            accepted += 1
        states[t] = c
    return states, accepted


@njit(cache=True)
def _refuse_clip():
    raise ValueError("clip: ||v||_x overflows float64 (the metric norm of v exceeds 1.8e308), so tau / ||v||_x "
                     "cannot be formed")


@njit(cache=True)
def _refuse_clip_tau():
    raise ValueError("clip: tau is below 2^-1000 (TAU_MIN): the clipped entries would be subnormal")


@njit(cache=True)
def clip_kernel(v, norm_v, tau):
    r"""Clipping ``min{1, tau/||v||_x} v`` (Huang et al. (2024), Algorithm 2, line 4).

    The kernel of :func:`prirfed.reference.mechanisms.clip`; ``norm_v`` is computed by the
    manifold's norm kernel (overflow-free: ``inf`` only when the norm exceeds the float64 range, and
    then this raises instead of returning 0; see ``proofs_notes/mechanism_clipping.md``). Domain:
    ``tau >= 2**-1000`` (the reference's ``TAU_MIN``; ``tau = inf`` is the caller's "no clipping"
    and never reaches here).

    Parameters
    ----------
    v : numpy.ndarray
        Tangent vector.
    norm_v : float
        Its metric norm :math:`\lVert v\rVert_x`.
    tau : float
        Clipping threshold.

    Returns
    -------
    numpy.ndarray
        The clipped vector (a new array).

    Raises
    ------
    ValueError
        If ``tau < 2**-1000`` or ``norm_v`` is infinite.
    """
    if not tau >= _TAU_MIN:
        _refuse_clip_tau()
    if norm_v == 0.0:
        return v * 1.0
    if not norm_v < math.inf:
        _refuse_clip()
    f = tau / norm_v
    if f > 1.0:
        f = 1.0
    if f < _FACTOR_NORMAL_MIN:  # the factor is subnormal or 0: scale the direction (reference)
        return (v / norm_v) * tau
    return f * v


@njit(cache=True, inline="always")
def clip_factor_kernel(norm_v, tau):
    r"""The clipping factor ``min{1, tau/||v||_x}`` (Huang et al. (2024), Algorithm 2, line 4).

    1 at a zero gradient and for ``tau = inf``; the factor of :func:`clip_kernel`, for the fused
    loops that scale in place.

    Parameters
    ----------
    norm_v : float
        :math:`\lVert v\rVert_x`.
    tau : float
        Clipping threshold (``inf`` for none).

    Returns
    -------
    float
        The factor in (0, 1].
    """
    if tau != math.inf and norm_v != 0.0 and tau / norm_v < 1.0:
        return tau / norm_v
    return 1.0


# ---------------------------------------------------------------------------- wrappers
def _c(a):
    return np.ascontiguousarray(a, dtype=np.float64)


def _module_kernel(M, name):
    """The njit kernel ``name`` of the module defining type(M), if it has one (verified manifolds)."""
    return getattr(sys.modules.get(type(M).__module__), name, None)


def _basis(M, x):
    k = _module_kernel(M, "tangent_basis_kernel")
    return _c(k(_c(x))) if k is not None else _c(M.tangent_basis(x))


def _norm(M, x, v):
    k = _module_kernel(M, "norm_kernel")
    if k is not None:
        return float(k(_c(x), _c(v)))
    k = _module_kernel(M, "inner_kernel")
    if k is not None:
        return math.sqrt(max(float(k(_c(x), _c(v), _c(v))), 0.0))
    return float(M.norm(x, v))


def sample_tangent_gaussian(M, x, sigma, rng, mu=None, size=None):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian` (same draws)."""
    where = "sample_tangent_gaussian"
    M = _ref.check_manifold(where, M)
    sigma = _ref.check_positive_number(where, "sigma", sigma)
    rng = _ref.check_generator(where, rng)
    x = M.check_point(x, where=where)
    if mu is not None:
        mu = M.check_tangent(x, mu, where=where, name="mu")
    E = _basis(M, x)
    n = None if size is None else _ref.check_steps(where, "size", size)
    try:
        if n is None:
            xi = sample_tangent_gaussian_kernel(rng, E, sigma)
        else:
            xi = sample_tangent_gaussian_batch_kernel(rng, E, sigma, n).reshape((n, *M.ambient_shape))
    except ValueError:
        xi = np.full(M.ambient_shape, np.inf)  # the kernel drew and refused: the reference's message below
    with np.errstate(over="ignore", invalid="ignore"):
        out = xi if mu is None else xi + mu
    return _ref.finite_sample_or_raise(where, out, sigma)


def sample_tangent_gaussian_spd(M, X, sigma, rng, mu=None):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_spd` (same draws)."""
    where = "sample_tangent_gaussian_spd"
    from prirfed.reference.manifolds.spd import SPD

    M = _ref.check_manifold(where, M)
    if not isinstance(M, SPD):
        raise ValueError(f"{where}: M must be an SPD manifold (got {type(M).__name__})")
    sigma = _ref.check_positive_number(where, "sigma", sigma)
    rng = _ref.check_generator(where, rng)
    X = M.check_point(X, where=where)
    if mu is not None:
        mu = M.check_tangent(X, mu, where=where, name="mu")
    xi = spd_sample_kernel(rng, _c(X), sigma)
    with np.errstate(over="ignore", invalid="ignore"):
        out = xi if mu is None else xi + mu
    return _ref.finite_sample_or_raise(where, out, sigma)


def sample_tangent_gaussian_mh(M, x, sigma, rng, n_steps, *, step_size=None, chart=None,
                               xi0=None, return_acceptance=False, return_chain=False):
    """Verified twin of :func:`prirfed.reference.mechanisms.sample_tangent_gaussian_mh`: the
    same set-up (Gram matrix, default step, start) and the chain in :func:`mh_chain_kernel`."""
    where = "sample_tangent_gaussian_mh"
    M = _ref.check_manifold(where, M)
    sigma = _ref.check_positive_number(where, "sigma", sigma)
    rng = _ref.check_generator(where, rng)
    n_steps = _ref.check_steps(where, "n_steps", n_steps)
    x = M.check_point(x, where=where)
    d = M.dim
    if chart is None:
        F = _basis(M, x)
    else:
        F = np.asarray(chart, dtype=np.float64)
        if F.shape != (d, *M.ambient_shape):
            raise ValueError(f"{where}: chart has shape {F.shape}, expected {(d, *M.ambient_shape)}")
        for k in range(d):
            M.check_tangent(x, F[k], where=where, name=f"chart[{k}]")
    G = np.array([[M.inner(x, F[k], F[l]) for l in range(d)] for k in range(d)])
    lam_min = float(np.linalg.eigvalsh(G)[0])
    if not lam_min > 1e-12 * float(np.trace(G)):
        raise ValueError(f"{where}: chart is not a basis of T_x (smallest Gram eigenvalue {lam_min:.3e})")
    s = 2.38 * sigma / math.sqrt(float(np.trace(G))) if step_size is None else _ref.check_positive_number(where, "step_size", step_size)
    if xi0 is None:
        c0 = np.zeros(d)
    else:
        xi0 = M.check_tangent(x, xi0, where=where, name="xi0")
        c0 = np.linalg.solve(G, np.array([M.inner(x, F[k], xi0) for k in range(d)]))
    states, accepted = mh_chain_kernel(rng, _c(G), s, sigma, _c(c0), n_steps)
    with np.errstate(over="ignore", invalid="ignore"):
        xi = _ref.finite_sample_or_raise(where, np.tensordot(states if return_chain else states[-1], F, axes=1), sigma)
    return (xi, accepted / n_steps) if return_acceptance else xi


def clip(M, x, v, tau):
    """Verified twin of :func:`prirfed.reference.mechanisms.clip`."""
    where = "clip"
    M = _ref.check_manifold(where, M)
    tau = _ref.check_clip_threshold(where, tau)
    x = M.check_point(x, where=where)
    v = M.check_tangent(x, v, where=where)
    try:
        return clip_kernel(_c(v), _norm(M, x, v), tau)
    except ValueError:
        return _ref.clip(M, x, v, tau)  # refuses with the reference's message


def tangent_gaussian_mechanism(M, x, value, sigma, rng, size=None):
    """Verified twin of :func:`prirfed.reference.mechanisms.tangent_gaussian_mechanism`."""
    where = "tangent_gaussian_mechanism"
    M = _ref.check_manifold(where, M)
    x = M.check_point(x, where=where)
    value = M.check_tangent(x, value, where=where, name="value")
    xi = sample_tangent_gaussian(M, x, sigma, rng, size=size)
    with np.errstate(over="ignore", invalid="ignore"):
        return _ref.finite_sample_or_raise(where, value + xi, sigma)
