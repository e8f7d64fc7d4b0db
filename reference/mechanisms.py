r"""Tangent-space Gaussian law and samplers, clipping, and Gaussian-mechanism calibration.

Sources (derivations in the proofs notes ``mechanism_*.md``):

- Huang et al. (2024), Definition 2.5 and the paragraph after it (the tangent space Gaussian and
  its normalising constant), Algorithm 2 lines 4-6 (clipping, noise);
- Han et al. (2024), Definition 3, Remark 1, Proposition 2 (the tangent space Gaussian
  mechanism), Section 5.1 (sampling through an orthonormal basis), Section 5.2 (the random-walk
  Metropolis-Hastings sampler on SPD, the papers' baseline);
- Balle and Wang (2018), Theorem 8 (the exact :math:`\delta(\varepsilon)` of the Gaussian
  mechanism, the analytic calibration);
- Dwork and Roth (2014), Theorem A.1 (the classical :math:`\sigma`, valid for
  :math:`\varepsilon < 1`).

Conventions
-----------
``M`` is a :class:`prirfed.reference.manifolds.base.Manifold`, ``x`` a point; tangent vectors
are ambient arrays of shape ``M.ambient_shape``. The tangent Gaussian :math:`N_x(\mu, \sigma^2)`
is the law of :math:`\mu + \sum_k z_k e_k` with :math:`(e_k)` an orthonormal basis of
:math:`T_x` in the metric and :math:`z \sim N(0, \sigma^2 I_d)`, ``d = M.dim``; its density is
taken with respect to the Lebesgue measure of :math:`T_x` induced by the metric (the measure that
gives the unit cube of an orthonormal basis volume 1).

Random draws (the contract with :mod:`prirfed.verified.mechanisms`): every sampler consumes
the caller's ``numpy.random.Generator`` only, in the order documented in its docstring, so
that the verified twin fed a Generator in the same state returns the same sample. Randomness
never comes from the global ``np.random`` state.

Examples
--------
A tangent Gaussian draw lies in the tangent space; clipping scales to metric norm tau; the
normalising constant and the Gaussian-mechanism calibrations are the closed forms cited above:

>>> import math
>>> import numpy as np
>>> from scipy.stats import norm
>>> from prirfed.reference.manifolds.sphere import Sphere
>>> from prirfed.reference.mechanisms import (analytic_gaussian_sigma, clip, gaussian_delta,
...     gaussian_mechanism_sigma_classical, sample_tangent_gaussian, tangent_gaussian_log_normalizer)
>>> M, x = Sphere(2), np.array([0.0, 0.0, 1.0])
>>> xi = sample_tangent_gaussian(M, x, 0.5, np.random.default_rng(0))
>>> abs(float(x @ xi)) < 1e-15              # T_x S^2 is the plane orthogonal to x
True
>>> clip(M, x, np.array([3.0, 4.0, 0.0]), 1.0)
array([0.6, 0.8, 0. ])
>>> bool(np.isclose(tangent_gaussian_log_normalizer(2, 0.5), math.log(2 * math.pi * 0.5**2)))  # (d/2) log(2 pi sigma^2)
True
>>> s = gaussian_mechanism_sigma_classical(0.5, 1e-5, 1.0)
>>> bool(np.isclose(s, math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rtol=1e-15))
True
>>> eps, sigma = 1.0, 2.0                   # Balle and Wang (2018), Theorem 8, sensitivity 1
>>> exact = norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * norm.cdf(-1 / (2 * sigma) - eps * sigma)
>>> bool(np.isclose(gaussian_delta(eps, sigma, 1.0), exact, rtol=1e-10))
True
>>> s = analytic_gaussian_sigma(1.0, 1e-5, 1.0)   # the smallest sigma reaching delta = 1e-5
>>> gaussian_delta(1.0, s, 1.0) <= 1e-5 < gaussian_delta(1.0, s * (1 - 1e-9), 1.0)
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from prirfed.reference.manifolds.base import Manifold

__all__ = [
    "tangent_gaussian_log_normalizer",
    "tangent_gaussian_logpdf",
    "sample_tangent_gaussian",
    "spd_symmetric_noise",
    "sample_tangent_gaussian_spd",
    "sample_tangent_gaussian_closed_form",
    "closed_form_normals",
    "sample_tangent_gaussian_mh",
    "symmetric_matrix_chart",
    "clip",
    "tangent_gaussian_mechanism",
    "gaussian_mechanism_sigma_classical",
    "gaussian_delta",
    "analytic_gaussian_sigma",
    "TAU_MIN",
]

# ---------------------------------------------------------------------------- input checks
def check_positive_number(where: str, name: str, value) -> float:
    """A number as a finite float greater than 0.

    Not a formula: the input check shared by the reference and the verified twins.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The argument's name, named in the error message.
    value : object
        The value to check.

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    ValueError
        If ``value`` is not a real number, not finite, or not greater than 0.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {name} must be a real number (got {value!r})") from None
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{where}: {name} must be finite and > 0 (got {name}={v!r})")
    return v


def _epsilon(where: str, eps, *, allow_zero: bool = False) -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: eps must be a real number (got {eps!r})") from None
    if not math.isfinite(e) or e < 0.0 or (e == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{where}: eps must be finite and {bound} (got eps={e!r})")
    return e


def _delta(where: str, delta) -> float:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: delta must be a real number (got {delta!r})") from None
    if not (0.0 < d < 1.0):
        raise ValueError(f"{where}: delta must lie in the open interval (0, 1) (got delta={d!r})")
    return d


def check_manifold(where: str, M) -> Manifold:
    """``M`` if it is a prirfed manifold (shared with the verified twins).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    M : object
        The value to check.

    Returns
    -------
    Manifold
        ``M`` itself.

    Raises
    ------
    ValueError
        If ``M`` is not an instance of :class:`prirfed.reference.manifolds.base.Manifold`.
    """
    if not isinstance(M, Manifold):
        raise ValueError(f"{where}: M must be a prirfed Manifold (got {type(M).__name__})")
    return M


def check_generator(where: str, rng) -> np.random.Generator:
    """``rng`` if it is a ``numpy.random.Generator`` (never the global state).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    rng : object
        The value to check.

    Returns
    -------
    numpy.random.Generator
        ``rng`` itself.

    Raises
    ------
    ValueError
        If ``rng`` is not a ``numpy.random.Generator`` (a legacy ``RandomState``, a seed or ``None``
        are refused: randomness comes from the caller's Generator only).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{where}: rng must be a numpy.random.Generator passed by the caller "
            f"(got {type(rng).__name__}); global or legacy random state is not accepted"
        )
    return rng


def check_steps(where: str, name: str, n) -> int:
    """A positive integer (a number of sampler steps or draws).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The argument's name, named in the error message.
    n : int
        The value to check.

    Returns
    -------
    int
        ``int(n)``.

    Raises
    ------
    ValueError
        If ``n`` is a bool, not an integer, or smaller than 1.
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"{where}: {name} must be a positive integer (got {n!r})")
    return int(n)


def _metric_norm(where: str, M, x, v) -> float:
    """||v||_x by the manifold's own (overflow-free) norm; inf when the norm itself is not a float64."""
    try:
        return float(M.norm(x, v))
    except ValueError as exc:
        if "overflows float64" in str(exc):
            return math.inf
        raise


def finite_sample_or_raise(where: str, xi, sigma):
    """Refuse to return a draw that overflows float64 (sigma near the float64 range)."""
    if not np.all(np.isfinite(xi)):
        raise ValueError(f"{where}: the draw overflows float64 (sigma = {sigma:.3e} times the tangent basis "
                         "exceeds the float64 range)")
    return xi


# ---------------------------------------------------------------------------- the law
def tangent_gaussian_log_normalizer(d: int, sigma: float) -> float:
    r"""Logarithm of the normalising constant of the tangent Gaussian, Huang et al. (2024), Definition 2.5.

    .. math::

        \log C_{x,\sigma} = \frac d2 \log(2\pi\sigma^2), \qquad
        C_{x,\sigma} = \int_{T_x} e^{-\lVert\xi\rVert_x^2/(2\sigma^2)}\,d\xi = (2\pi\sigma^2)^{d/2}

    for the metric Lebesgue measure (a product of :math:`d` one-dimensional Gaussian integrals in
    orthonormal coordinates). Erratum: Huang et al. (2024) print
    :math:`C^{-1} = \sqrt{(2\pi)^d\sigma^2}` and Han et al. (2024), Remark 1, print
    :math:`C = \sqrt{(2\pi)^d\sigma^2\lvert G^{-1}\rvert}`; the power of :math:`\sigma` must be
    :math:`d` (proofs note ``mechanism_tangent_gaussian``, errata page).

    Parameters
    ----------
    d : int
        Dimension of the tangent space, at least 1.
    sigma : float
        Standard deviation, > 0.

    Returns
    -------
    float
        :math:`\frac d2 \log(2\pi\sigma^2)`.

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer or ``sigma`` is not finite and > 0.
    """
    where = "tangent_gaussian_log_normalizer"
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"{where}: d must be a positive integer (got {d!r})")
    sigma = check_positive_number(where, "sigma", sigma)
    # d (log sqrt(2 pi) + log sigma): the printed log(2 pi sigma^2) underflows (log 0) for sigma < 1e-154
    # and overflows for sigma > 1e154; the sum of logs is finite for every float64 sigma > 0
    return int(d) * (0.5 * math.log(2.0 * math.pi) + math.log(sigma))


def tangent_gaussian_logpdf(M, x, xi, sigma, mu=None) -> float:
    r"""Log-density of the tangent Gaussian :math:`N_x(\mu, \sigma^2)`, Huang et al. (2024), Definition 2.5; Han et al. (2024), Definition 3.

    .. math::

        \log p_x(\xi) = -\frac{\lVert\xi - \mu\rVert_x^2}{2\sigma^2} - \frac d2 \log(2\pi\sigma^2),

    with respect to the Lebesgue measure of :math:`T_x` induced by the metric, ``d = M.dim`` (the
    constant is :func:`tangent_gaussian_log_normalizer`, with its erratum).

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : array_like
        Base point, shape ``M.ambient_shape``.
    xi : array_like
        Tangent vector at ``x`` where the density is evaluated.
    sigma : float
        Standard deviation, > 0.
    mu : array_like, optional
        Mean, a tangent vector at ``x``; default 0.

    Returns
    -------
    float
        :math:`\log p_x(\xi)`.

    Raises
    ------
    ValueError
        If ``M`` is not a manifold, ``x`` not a point, ``xi`` or ``mu`` not tangent at ``x``, or
        ``sigma`` not finite and > 0.

    Notes
    -----
    Evaluated as ``-(||xi - mu||_x / sigma)^2 / 2`` from the overflow-free metric norm; a
    log-density below -1.8e308 raises ``ValueError``.
    """
    where = "tangent_gaussian_logpdf"
    M = check_manifold(where, M)
    sigma = check_positive_number(where, "sigma", sigma)
    x = M.check_point(x, where=where)
    xi = M.check_tangent(x, xi, where=where, name="xi")
    if mu is not None:
        mu = M.check_tangent(x, mu, where=where, name="mu")
        with np.errstate(over="ignore", invalid="ignore"):
            r = xi - mu
        if not np.all(np.isfinite(r)):
            raise ValueError(f"{where}: xi - mu overflows float64")
    else:
        r = xi
    q = _metric_norm(where, M, x, r) / sigma  # ||xi - mu||_x / sigma, overflow-free
    val = -0.5 * q * q - tangent_gaussian_log_normalizer(M.dim, sigma)
    if not math.isfinite(val):
        raise ValueError(f"{where}: the log-density is below the float64 range (||xi - mu||_x / sigma = {q:.3e})")
    return val


# ---------------------------------------------------------------------------- exact samplers
def sample_tangent_gaussian(M, x, sigma, rng, mu=None, size=None):
    r"""Exact draw of :math:`\xi \sim N_x(\mu, \sigma^2)` through an orthonormal basis, Han et al. (2024), Section 5.1.

    :math:`\xi = \mu + \sum_k z_k e_k` with :math:`(e_k)` = ``M.tangent_basis(x)`` (orthonormal in
    the metric) and :math:`z = \sigma\,` ``rng.standard_normal(d)``. In orthonormal coordinates the
    density of Huang et al. (2024), Definition 2.5, is exactly that of :math:`N(0, \sigma^2 I_d)`,
    so the sampler is exact.

    Draw order (the contract with the verified twin): one call ``rng.standard_normal(d)``, whose
    entry ``k`` multiplies :math:`e_k`. With ``size=n`` the call is ``rng.standard_normal((n, d))``,
    which consumes the stream exactly like ``n`` successive unbatched calls (row ``i`` is the
    ``i``-th draw).

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : array_like
        Base point, shape ``M.ambient_shape``.
    sigma : float
        Standard deviation, > 0.
    rng : numpy.random.Generator
        The caller's random generator.
    mu : array_like, optional
        Mean, a tangent vector at ``x``; default 0.
    size : int, optional
        Number of independent draws; default one draw without a leading axis.

    Returns
    -------
    numpy.ndarray
        A tangent vector at ``x``, shape ``M.ambient_shape``; with ``size=n``, shape
        ``(n, *M.ambient_shape)``.

    Raises
    ------
    ValueError
        If an argument is invalid (not a manifold, not a point, not tangent, ``sigma`` not > 0,
        ``rng`` not a Generator, ``size`` not a positive integer).

    Notes
    -----
    A draw that overflows float64 (sigma near 1e308) raises ``ValueError`` after the draws.
    """
    where = "sample_tangent_gaussian"
    M = check_manifold(where, M)
    sigma = check_positive_number(where, "sigma", sigma)
    rng = check_generator(where, rng)
    x = M.check_point(x, where=where)
    if mu is not None:
        mu = M.check_tangent(x, mu, where=where, name="mu")
    E = M.tangent_basis(x)
    d = M.dim
    with np.errstate(over="ignore", invalid="ignore"):
        if size is None:
            z = sigma * rng.standard_normal(d)
            xi = np.zeros(M.ambient_shape)
            for k in range(d):
                xi = xi + z[k] * E[k]
        else:
            n = check_steps(where, "size", size)
            Z = sigma * rng.standard_normal((n, d))
            xi = (Z @ E.reshape(d, -1)).reshape((n, *M.ambient_shape))
        out = xi if mu is None else xi + mu
    return finite_sample_or_raise(where, out, sigma)


def spd_symmetric_noise(z, n: int) -> np.ndarray:
    r"""The symmetric matrix :math:`S = \sum_k z_k B_k` of the closed-form SPD sampler, Han et al. (2024), Section 5.1.

    ``z`` has :math:`n(n+1)/2` entries indexed by the upper triangle in row-major order
    (0,0), (0,1), ..., (0,n-1), (1,1), ...; :math:`S_{ii} = z_k` and
    :math:`S_{ij} = S_{ji} = z_k/\sqrt 2`: :math:`B_k` is :math:`e_i e_i^\top` or
    :math:`(e_i e_j^\top + e_j e_i^\top)/\sqrt 2`, the Frobenius-orthonormal basis of
    :math:`\mathrm{Sym}(n)`. With :math:`z \sim N(0, \sigma^2 I)`, :math:`S_{ii} \sim N(0, \sigma^2)`
    and :math:`S_{ij} \sim N(0, \sigma^2/2)`, all independent.

    Parameters
    ----------
    z : array_like
        Coordinates, shape ``(n (n + 1) / 2,)``.
    n : int
        Matrix size.

    Returns
    -------
    numpy.ndarray
        The symmetric matrix :math:`S`, shape ``(n, n)``.

    Raises
    ------
    ValueError
        If ``z`` does not have :math:`n(n+1)/2` entries.
    """
    z = np.asarray(z, dtype=np.float64)
    n = int(n)
    if z.shape != (n * (n + 1) // 2,):
        raise ValueError(f"spd_symmetric_noise: z has shape {z.shape}, expected ({n * (n + 1) // 2},)")
    S = np.empty((n, n))
    c = 1.0 / math.sqrt(2.0)
    k = 0
    for i in range(n):
        for j in range(i, n):
            if i == j:
                S[i, i] = z[k]
            else:
                S[i, j] = S[j, i] = c * z[k]
            k += 1
    return S


def sample_tangent_gaussian_spd(M, X, sigma, rng, mu=None):
    r"""Closed-form exact draw of :math:`N_X(\mu, \sigma^2)` on SPD(n) with the affine-invariant metric, Han et al. (2024), Section 5.1.

    :math:`\xi = \mu + X^{1/2} S X^{1/2}` with ``S = spd_symmetric_noise(sigma * rng.standard_normal(d), n)``,
    :math:`d = n(n+1)/2`. It is :math:`N_X(0, \sigma^2)` because :math:`U \mapsto X^{1/2} U X^{1/2}`
    is an isometry from :math:`(\mathrm{Sym}(n), \text{Frobenius})` onto
    :math:`(T_X\mathrm{SPD}, \langle\cdot,\cdot\rangle_X)`
    (:math:`\langle X^{1/2}UX^{1/2}, X^{1/2}VX^{1/2}\rangle_X = \operatorname{tr}(UV)`) and
    :math:`S` is :math:`N(0, \sigma^2)` in the Frobenius-orthonormal basis.

    The product is formed at :math:`\hat\sigma = 2^{-k}\sigma \in [1/2, 1)` and scaled back by
    :math:`2^k` (exact in the normal range), so a draw near the top of float64 overflows only when
    its entries do, alike in both twins (the thorough fuzz run found :math:`\sigma = 1.7\times
    10^{308}`, whose product the twins' summation orders overflowed differently).

    Draw order: one call ``rng.standard_normal(d)``, entries in the upper-triangle row-major order
    of :func:`spd_symmetric_noise`, which is also the order of ``SPD.tangent_basis``; so this sampler
    and :func:`sample_tangent_gaussian` return the same matrix (to rounding) from the same Generator
    state (``tests/mechanisms/test_mech_tangent_gaussian.py``).

    Parameters
    ----------
    M : SPD
        The SPD manifold.
    X : array_like
        Base point, an SPD matrix of shape ``(n, n)``.
    sigma : float
        Standard deviation, > 0.
    rng : numpy.random.Generator
        The caller's random generator.
    mu : array_like, optional
        Mean, a symmetric matrix (tangent at ``X``); default 0.

    Returns
    -------
    numpy.ndarray
        A symmetric matrix, shape ``(n, n)``.

    Raises
    ------
    ValueError
        If ``M`` is not an SPD manifold or another argument is invalid.
    """
    where = "sample_tangent_gaussian_spd"
    from prirfed.reference.manifolds.spd import SPD, sqrtm_and_invsqrtm, sym

    M = check_manifold(where, M)
    if not isinstance(M, SPD):
        raise ValueError(f"{where}: M must be an SPD manifold (got {type(M).__name__})")
    sigma = check_positive_number(where, "sigma", sigma)
    rng = check_generator(where, rng)
    X = M.check_point(X, where=where)
    if mu is not None:
        mu = M.check_tangent(X, mu, where=where, name="mu")
    X_half, _ = sqrtm_and_invsqrtm(X)
    # sigma = 2^k sigma_hat (exact): the product is formed at sigma_hat and scaled back at the end,
    # so it overflows only where the draw itself does (bit for bit the same draw in the normal range)
    k = math.frexp(sigma)[1]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        S = spd_symmetric_noise(math.ldexp(sigma, -k) * rng.standard_normal(M.dim), M.n)
        xi = np.ldexp(sym(X_half @ S @ X_half), k)
        out = xi if mu is None else xi + mu
    return finite_sample_or_raise(where, out, sigma)


# ---------------------------------------------------------------------------- O(dim) closed forms
def _base_manifold(M):
    """The manifold whose tangent spaces ``M`` uses (a ``Retracted`` wrapper keeps its base's)."""
    from prirfed.reference.manifolds.retracted import Retracted

    return M.base if isinstance(M, Retracted) else M


def closed_form_normals(M) -> int:
    """How many standard normals :func:`sample_tangent_gaussian_closed_form` reads on ``M``:
    d + 1 on S^d (the ambient Gaussian), n p on St(n, p), d on H^d, n(n+1)/2 on SPD(n), the
    ambient size on Euclidean, and ``M.dim`` elsewhere (the basis route).

    Helper, not a paper formula: the draw contract of the sampler.

    Parameters
    ----------
    M : Manifold
        The manifold (a retracted view counts as its base).

    Returns
    -------
    int
        The number of normals one draw reads.

    Raises
    ------
    ValueError
        If ``M`` is not a prirfed manifold.
    """
    from prirfed.reference.manifolds.euclidean import Euclidean
    from prirfed.reference.manifolds.sphere import Sphere
    from prirfed.reference.manifolds.stiefel import Stiefel

    B = _base_manifold(check_manifold("closed_form_normals", M))
    if isinstance(B, (Sphere, Stiefel, Euclidean)):
        return int(np.prod(B.ambient_shape))
    return int(B.dim)


def sample_tangent_gaussian_closed_form(M, x, sigma, rng):
    r"""Exact draw of xi ~ N_x(0, sigma^2) in O(dim) work, without forming a tangent basis.

    The trainers' noise (Huang et al. (2024) Algorithm 2 line 4, Algorithm 3 line 7; Han et al. (2024) Algorithm 1 line 4). ``rng``
    is a ``numpy.random.Generator`` or a :class:`prirfed.reference.randomness.Stream`; ONE call
    ``rng.standard_normal(shape)`` with :func:`closed_form_normals` values (C order):

    - S^d (unit sphere in R^{d+1}): g = sigma N(0, I_{d+1}), xi = g - (x^T g) x, the orthogonal
      projection P_x = I - x x^T of an ambient Gaussian;
    - St(n, p), Euclidean metric: G = sigma N(0, I_{n p}) (n x p, row-major), xi = G - X sym(X^T G),
      the orthogonal (Frobenius) projection onto T_X;
    - H^d (Lorentz): z = sigma N(0, I_d), xi = PT_{o -> x}((0, z)) = (x_bar^T z, z + (x_bar^T z)/(1 + x_0) x_bar),
      the origin's tangent Gaussian transported to x (the same linear map as ``Lorentz.tangent_basis``,
      so the same z give the same xi as :func:`sample_tangent_gaussian`);
    - SPD(n), affine-invariant: X^{1/2} S X^{1/2} with S = :func:`spd_symmetric_noise` (z) (S_ii ~
      N(0, sigma^2), S_ij ~ N(0, sigma^2/2)); the same z give the same xi as the basis route;
    - Euclidean: sigma N(0, I); any other manifold: the basis route ``sum_k z_k e_k``.

    Why the projections draw N_x(0, sigma^2): if P is the orthogonal projector onto T_x (in an
    inner product that is the ambient one restricted to T_x, as on S^d and St(n, p) with the
    Euclidean metric) and (e_k) is an orthonormal basis of T_x, then P = sum_k e_k e_k^T and the
    coordinates <e_k, P g> = <e_k, g> of P g are jointly N(0, sigma^2 I_dim) (an orthonormal
    family of linear functionals of an isotropic Gaussian); that is Definition 2.5 of Huang et al. (2024).
    Derivations: ``proofs_notes/mechanism_tangent_gaussian.md`` (section "O(dim) samplers"); the
    law is tested against the basis route in ``tests/mechanisms/test_mech_closed_form.py``.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : array_like
        Base point.
    sigma : float
        Standard deviation, > 0.
    rng : numpy.random.Generator or prirfed.reference.randomness.Stream
        The caller's random generator or stream.

    Returns
    -------
    numpy.ndarray
        A tangent vector at ``x``.

    Raises
    ------
    ValueError
        If an argument is invalid.
    """
    from prirfed.reference.manifolds.euclidean import Euclidean
    from prirfed.reference.manifolds.lorentz import Lorentz
    from prirfed.reference.manifolds.spd import SPD, sqrtm_and_invsqrtm, sym
    from prirfed.reference.manifolds.sphere import Sphere
    from prirfed.reference.manifolds.stiefel import Stiefel
    from prirfed.reference.randomness import Stream

    where = "sample_tangent_gaussian_closed_form"
    M = check_manifold(where, M)
    sigma = check_positive_number(where, "sigma", sigma)
    if not isinstance(rng, Stream):
        rng = check_generator(where, rng)
    x = M.check_point(x, where=where) if M.validate else np.asarray(x, dtype=np.float64)
    B = _base_manifold(M)
    if isinstance(B, Sphere):
        g = sigma * rng.standard_normal(B.d + 1)
        return g - float(x @ g) * x
    if isinstance(B, Stiefel):
        G = sigma * rng.standard_normal((B.n, B.p))
        return G - x @ sym(x.T @ G)
    if isinstance(B, Lorentz):
        z = sigma * rng.standard_normal(B.d)
        a = float(x[1:] @ z)
        xi = np.empty(B.d + 1)
        xi[0] = a
        xi[1:] = z + (a / (1.0 + x[0])) * x[1:]
        return xi
    if isinstance(B, SPD):
        X_half, _ = sqrtm_and_invsqrtm(x)
        return sym(X_half @ spd_symmetric_noise(sigma * rng.standard_normal(B.dim), B.n) @ X_half)
    if isinstance(B, Euclidean):
        return sigma * rng.standard_normal(B.ambient_shape)
    z = sigma * rng.standard_normal(B.dim)
    E = B.tangent_basis(x)
    return np.tensordot(z, E, axes=1)


# ---------------------------------------------------------------------------- MH baseline
def symmetric_matrix_chart(n: int) -> np.ndarray:
    r"""The coordinates of Han et al. (2024), Section 5.2, for :math:`T_W\mathrm{SPD} = \mathrm{Sym}(n)`.

    The :math:`n(n+1)/2` upper-triangular entries, i.e. the (non-orthonormal) basis
    :math:`F_k = e_i e_i^\top` (:math:`i = j`) and :math:`e_i e_j^\top + e_j e_i^\top` (:math:`i < j`),
    upper triangle in row-major order.

    Parameters
    ----------
    n : int
        Matrix size.

    Returns
    -------
    numpy.ndarray
        The basis, shape ``(n (n + 1) / 2, n, n)``.
    """
    n = int(n)
    F = np.zeros((n * (n + 1) // 2, n, n))
    k = 0
    for i in range(n):
        for j in range(i, n):
            F[k, i, j] = 1.0
            F[k, j, i] = 1.0
            k += 1
    return F


def sample_tangent_gaussian_mh(M, x, sigma, rng, n_steps, *, step_size=None, chart=None,
                               xi0=None, return_acceptance=False, return_chain=False):
    r"""Random-walk Metropolis-Hastings chain targeting :math:`N_x(0, \sigma^2)`, Han et al. (2024), Section 5.2 (the papers' baseline).

    Kept only as the papers' baseline: :func:`sample_tangent_gaussian` is exact and cheaper. The
    state is a coordinate vector :math:`c \in \mathbb R^d` with :math:`\xi = \sum_k c_k F_k`,
    :math:`F` = ``chart`` any basis of :math:`T_x` (default ``M.tangent_basis(x)``;
    :func:`symmetric_matrix_chart` gives the paper's coordinates on SPD). A linear chart has a
    constant Jacobian, so the target in :math:`c` is
    :math:`\pi(c) \propto \exp(-c^\top G c / (2\sigma^2))` with the Gram matrix
    :math:`G_{kl} = \langle F_k, F_l\rangle_x` (computed once with ``M.inner``).

    Each step (draw order, the contract): ``z = rng.standard_normal(d)``, proposal
    :math:`c' = c + s z` (symmetric, so the Hastings ratio is :math:`\pi(c')/\pi(c)`); then
    ``u = rng.random()``; accept iff :math:`\log u < \log\pi(c') - \log\pi(c)`.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : array_like
        Base point.
    sigma : float
        Standard deviation of the target, > 0.
    rng : numpy.random.Generator
        The caller's random generator.
    n_steps : int
        Number of Metropolis-Hastings steps, at least 1.
    step_size : float, optional
        Proposal scale :math:`s`; default :math:`2.38\,\sigma/\sqrt{\operatorname{tr} G}` (the
        optimal random-walk scaling for Gaussian targets, Roberts, Gelman and Gilks (1997)).
    chart : array_like, optional
        A basis of :math:`T_x`, shape ``(M.dim, *M.ambient_shape)``; default ``M.tangent_basis(x)``.
    xi0 : array_like, optional
        Starting tangent vector; default 0 (the mode).
    return_acceptance : bool, optional
        Also return the fraction of accepted proposals.
    return_chain : bool, optional
        Return every state after steps 1, ..., ``n_steps`` instead of the last one.

    Returns
    -------
    xi : numpy.ndarray
        The state after ``n_steps`` steps, shape ``M.ambient_shape``; with ``return_chain``, all
        states, shape ``(n_steps, *M.ambient_shape)``.
    acceptance : float
        Fraction of accepted proposals (only with ``return_acceptance=True``).

    Raises
    ------
    ValueError
        If an argument is invalid, or ``chart`` is not a basis of :math:`T_x`.
    """
    where = "sample_tangent_gaussian_mh"
    M = check_manifold(where, M)
    sigma = check_positive_number(where, "sigma", sigma)
    rng = check_generator(where, rng)
    n_steps = check_steps(where, "n_steps", n_steps)
    x = M.check_point(x, where=where)
    d = M.dim
    if chart is None:
        F = M.tangent_basis(x)
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
    s = 2.38 * sigma / math.sqrt(float(np.trace(G))) if step_size is None else check_positive_number(where, "step_size", step_size)

    def log_target(c):
        # -(c^T G c)/(2 sigma^2), divided by sigma twice: sigma^2 underflows (division by 0) for sigma < 1e-162
        return -0.5 * (float(c @ G @ c) / sigma) / sigma

    if xi0 is None:
        c = np.zeros(d)
    else:
        xi0 = M.check_tangent(x, xi0, where=where, name="xi0")
        c = np.linalg.solve(G, np.array([M.inner(x, F[k], xi0) for k in range(d)]))
    lp = log_target(c)
    accepted = 0
    states = np.empty((n_steps, d)) if return_chain else None
    for step in range(n_steps):
        c_new = c + s * rng.standard_normal(d)
        lp_new = log_target(c_new)
        u = rng.random()
        if u == 0.0 or math.log(u) < lp_new - lp:
            c, lp = c_new, lp_new
            accepted += 1
        if return_chain:
            states[step] = c
    with np.errstate(over="ignore", invalid="ignore"):
        xi = finite_sample_or_raise(where, np.tensordot(states if return_chain else c, F, axes=1), sigma)
    return (xi, accepted / n_steps) if return_acceptance else xi


# ---------------------------------------------------------------------------- clipping
#: Smallest clipping threshold: 2^-1000 (9.3e-302). Below it the entries of tau v / ||v||_x are
#: subnormal, their absolute rounding error (up to 2^-1075 each) is no longer small relative to
#: tau, and the clipped vector can exceed tau (by a factor 2 at tau = 5e-324; found by the fuzz
#: suite), breaking the bound the sensitivity analysis needs (proofs_notes/mechanism_clipping.md).
TAU_MIN = 2.0**-1000
#: the smallest normal float64, 2^-1022: below it a clipping factor tau / ||v|| loses precision
FACTOR_NORMAL_MIN = 2.0**-1022


def check_clip_threshold(where: str, tau) -> float:
    tau = check_positive_number(where, "tau", tau)
    if not tau >= TAU_MIN:
        raise ValueError(f"{where}: tau = {tau!r} is below 2^-1000 = {TAU_MIN:.2e}: the clipped entries would be "
                         "subnormal and their rounding could exceed tau")
    return tau

def clip(M, x, v, tau):
    r"""Clipping :math:`\operatorname{clip}_\tau(v) = \min\{1, \tau/\lVert v\rVert_x\}\,v`, Huang et al. (2024), Algorithm 2, line 4.

    The norm is the metric norm at ``x``. Inside the closed ball (:math:`\lVert v\rVert_x \le \tau`)
    the factor is exactly 1 and ``v`` is returned unchanged (a copy); outside, ``v`` is scaled to
    metric norm :math:`\tau` (up to one rounding of the product) keeping its direction. ``v = 0`` is
    returned as is.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : array_like
        Base point.
    v : array_like
        Tangent vector at ``x``.
    tau : float
        Clipping threshold, > 0.

    Returns
    -------
    numpy.ndarray
        The clipped tangent vector, metric norm at most ``tau``.

    Raises
    ------
    ValueError
        If ``x`` is not a point, ``v`` is not tangent at ``x`` or ``tau`` is not finite and > 0.

    Notes
    -----
    Inside the closed ball (``||v||_x <= tau``) the factor is exactly 1 and ``v`` is returned
    unchanged (a copy); outside, ``v`` is scaled to metric norm tau (up to one rounding of the
    product, relative 1e-16) keeping its direction. ``v = 0`` is returned as is.

    When tau / ||v||_x is below the smallest normal float64 (subnormal, or 0 once it underflows:
    e.g. tau = 1e-170 against ||v|| = 1e304) the result is (v / ||v||_x) tau instead, so it keeps
    length tau (the product with a subnormal factor lost up to 1e-8 relative, or returned 0).

    Domain: every tangent vector whose metric norm is a float64 (below 1.8e308). The norm is the
    manifold's overflow-free one, so a long v is scaled to length tau (it used to become 0 once
    the squared norm overflowed at 1.3e154); a v whose norm exceeds the float64 range raises
    ``ValueError``. Why scaling and not refusing is what privacy needs, and why 0 was safe but
    wrong: ``proofs_notes/mechanism_clipping.md``.
    """
    where = "clip"
    M = check_manifold(where, M)
    tau = check_clip_threshold(where, tau)
    x = M.check_point(x, where=where)
    v = M.check_tangent(x, v, where=where)
    nv = _metric_norm(where, M, x, v)
    if not nv < math.inf:
        raise ValueError(f"{where}: ||v||_x overflows float64 (the metric norm of v exceeds 1.8e308), so "
                         "tau / ||v||_x cannot be formed; clip_tau is defined here for every v with a float64 norm")
    factor = 1.0 if nv == 0.0 else min(1.0, tau / nv)
    if factor < FACTOR_NORMAL_MIN:
        # tau / ||v|| is subnormal or 0 (a tiny tau against a huge v): the factor would lose bits or
        # vanish, so the unit direction v / ||v|| (entries <= 1) is scaled by tau instead
        return (v / nv) * tau
    return factor * v


# ---------------------------------------------------------------------------- the mechanism
def tangent_gaussian_mechanism(M, x, value, sigma, rng, size=None):
    r"""Tangent space Gaussian mechanism :math:`R(D) = H(D) + \xi`, :math:`\xi \sim N_x(0, \sigma^2)`, Han et al. (2024), Proposition 2.

    The mechanism perturbs a tangent vector at ``x`` (in the papers: the clipped mean gradient,
    Huang et al. (2024), Algorithm 2, lines 5-6); it does not release a point: a trainer then moves
    with :math:`\operatorname{Exp}_x(-\alpha(\text{value} + \xi))`, which is post-processing. Draws
    as :func:`sample_tangent_gaussian`. It is :math:`(\varepsilon, \delta)`-DP when
    :math:`\lVert H(D) - H(D')\rVert_x \le \Delta` and :math:`\sigma` is calibrated by
    :func:`gaussian_mechanism_sigma_classical` (:math:`\varepsilon < 1`) or
    :func:`analytic_gaussian_sigma`.

    Parameters
    ----------
    M : Manifold
        The manifold.
    x : array_like
        Base point.
    value : array_like
        The query's value :math:`H(D)`, a tangent vector at ``x``.
    sigma : float
        Noise standard deviation, > 0.
    rng : numpy.random.Generator
        The caller's random generator.
    size : int, optional
        Number of independent releases of the same value (a leading axis of that length).

    Returns
    -------
    numpy.ndarray
        The released tangent vector(s).

    Raises
    ------
    ValueError
        If an argument is invalid.
    """
    where = "tangent_gaussian_mechanism"
    M = check_manifold(where, M)
    x = M.check_point(x, where=where)
    value = M.check_tangent(x, value, where=where, name="value")
    xi = sample_tangent_gaussian(M, x, sigma, rng, size=size)
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_sample_or_raise(where, value + xi, sigma)


# ---------------------------------------------------------------------------- calibration
def gaussian_mechanism_sigma_classical(eps, delta, sensitivity) -> float:
    r"""Classical calibration :math:`\sigma = \Delta\sqrt{2\log(1.25/\delta)}/\varepsilon`, Han et al. (2024), Proposition 2; Dwork and Roth (2014), Theorem A.1.

    The smallest :math:`\sigma` allowed by :math:`\sigma^2 \ge 2\log(1.25/\delta)\Delta^2/\varepsilon^2`.
    The proof (Dwork and Roth (2014), Appendix A) bounds the privacy-loss tail and uses
    :math:`\varepsilon < 1`; the precondition is enforced: above it the bound can fail (proofs note
    ``mechanism_calibration``). Use :func:`analytic_gaussian_sigma` otherwise.

    Parameters
    ----------
    eps : float
        Target :math:`\varepsilon`, in :math:`(0, 1)`.
    delta : float
        Target :math:`\delta`, in :math:`(0, 1)`.
    sensitivity : float
        The query's sensitivity :math:`\Delta`, > 0.

    Returns
    -------
    float
        The noise standard deviation :math:`\sigma`.

    Raises
    ------
    ValueError
        If ``eps`` is not in :math:`(0, 1)`, ``delta`` not in :math:`(0, 1)` or ``sensitivity`` not > 0.
    """
    where = "gaussian_mechanism_sigma_classical"
    eps = _epsilon(where, eps)
    if not eps < 1.0:
        raise ValueError(
            f"{where}: Proposition 2 of 001 (Dwork & Roth Thm A.1) requires 0 < eps < 1 "
            f"(got eps={eps!r}); use analytic_gaussian_sigma for eps >= 1"
        )
    delta = _delta(where, delta)
    sensitivity = check_positive_number(where, "sensitivity", sensitivity)
    sigma = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / eps
    if not math.isfinite(sigma):
        raise ValueError(f"{where}: the calibrated sigma overflows float64 (sensitivity={sensitivity!r}, eps={eps!r}, "
                         f"delta={delta!r})")
    return sigma


def gaussian_delta(eps, sigma, sensitivity) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of the Gaussian mechanism, Balle and Wang (2018), Theorem 8.

    .. math::

        \delta(\varepsilon) = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big),

    the hockey-stick divergence between :math:`N(0, \sigma^2)` and :math:`N(\Delta, \sigma^2)`. It
    holds unchanged for the tangent Gaussian because the privacy loss only sees the component of
    :math:`\xi` along :math:`H(D) - H(D')`, a :math:`N(0, \sigma^2)` variable (Han et al. (2024),
    proof of Proposition 2). Evaluated with ``log_ndtr`` so that neither term underflows and the
    difference keeps its relative accuracy.

    Parameters
    ----------
    eps : float
        :math:`\varepsilon \ge 0` (0 gives the total variation distance).
    sigma : float
        Noise standard deviation, > 0.
    sensitivity : float
        Sensitivity :math:`\Delta`, > 0.

    Returns
    -------
    float
        :math:`\delta(\varepsilon)`.

    Raises
    ------
    ValueError
        If ``eps`` is negative or not finite, or ``sigma`` or ``sensitivity`` is not finite and > 0,
        or where float64 cannot determine delta (the rounding of the privacy-loss exponent reaches
        its size, so not even its sign is known).
    """
    where = "gaussian_delta"
    eps = _epsilon(where, eps, allow_zero=True)
    sigma = check_positive_number(where, "sigma", sigma)
    sensitivity = check_positive_number(where, "sensitivity", sensitivity)
    # Delta / (2 sigma) as (Delta / sigma) / 2: 2 sigma overflows for sigma > 9e307 (delta came out
    # -0.0 instead of Delta / (sigma sqrt(2 pi)) at sigma = 1.3e308, Delta = 1e300); halving is exact
    half_mu = 0.5 * (sensitivity / sigma)
    a = half_mu - eps * sigma / sensitivity
    b = -half_mu - eps * sigma / sensitivity
    log_first = float(log_ndtr(a))
    first = math.exp(log_first)
    if first == 0.0:  # Phi(a) rounds to 0 (a < -38.5): 0 <= delta <= Phi(a), so delta is 0 to double precision
        # (checked before the exponent below: for eps / mu >= 2.6e9 that exponent loses all its digits
        # while the answer is this 0; it used to be refused, and analytic_gaussian_sigma with it)
        return 0.0
    log_phi_b = float(log_ndtr(b))
    log_second = eps + log_phi_b
    e = log_second - log_first  # <= 0 in exact arithmetic (delta >= 0)
    # e's rounding error is a few units in the last place of the terms (eps and log Phi(b) cancel when
    # eps is large); where it reaches |e| not even the sign of delta is known (e came out > 0 and delta
    # -1.0 at eps = 5e17 + 5e9, sigma = 1e-9, Delta = 1, whose delta is 2.9e-7)
    err = 4.0 * 2.0**-53 * (abs(log_phi_b) + abs(log_first) + abs(log_second))
    if not e < -err:
        raise ValueError(f"{where}: delta cannot be evaluated in float64 at eps={eps!r}, sigma={sigma!r}, "
                         f"sensitivity={sensitivity!r}: the privacy-loss exponent eps + log Phi(b) - log Phi(a), "
                         f"which is <= 0, loses all its digits (computed {e:.3e})")
    return first * -math.expm1(e)


def analytic_gaussian_sigma(eps, delta, sensitivity) -> float:
    r"""Smallest :math:`\sigma` with ``gaussian_delta(eps, sigma, sensitivity) <= delta``, Balle and Wang (2018), Theorem 8.

    :math:`\delta(\varepsilon; \sigma)` decreases strictly in :math:`\sigma`, so the answer is found
    by bracketing (doubling or halving from :math:`\Delta`) and then bisecting the bracket's float64
    bit patterns (positive floats are ordered like their patterns) down to two adjacent floats.
    The upper one is returned: a float64 :math:`\sigma` whose computed delta meets the target
    while the float below it does not. Where the computed delta is monotone in :math:`\sigma` this
    is the smallest such float, a number that does not depend on the search; at large
    :math:`\varepsilon` (above about 20) rounding can make the computed delta cross the target
    more than once within a few ulps, and the answer is then one of those crossings (at most 5 ulps
    apart in 3000 random cases). It satisfies ``gaussian_delta(eps, sigma, sensitivity) <= delta``
    as computed, and :math:`\sigma` is within the rounding of the computed delta of
    :math:`\sigma^*` (the exact delta at it can exceed the target by about 1e-15 relative:
    1.7e-15 measured at eps = 0.5). Valid for every :math:`\varepsilon > 0`; the bisection takes
    at most 63 evaluations.

    Parameters
    ----------
    eps : float
        Target :math:`\varepsilon`, > 0.
    delta : float
        Target :math:`\delta`, in :math:`(0, 1)`.
    sensitivity : float
        Sensitivity :math:`\Delta`, > 0.

    Returns
    -------
    float
        The calibrated :math:`\sigma`.

    Raises
    ------
    ValueError
        If an argument is out of range, or no float64 :math:`\sigma` meets the target.
    """
    where = "analytic_gaussian_sigma"
    eps = _epsilon(where, eps)
    delta = _delta(where, delta)
    sensitivity = check_positive_number(where, "sensitivity", sensitivity)

    def ok(s):
        if not 0.0 < s < math.inf:
            raise ValueError(f"{where}: no float64 sigma calibrates eps={eps!r}, delta={delta!r}, "
                             f"sensitivity={sensitivity!r} (the bracket left (0, 1.8e308) at sigma = {s!r})")
        try:
            return gaussian_delta(eps, s, sensitivity) <= delta
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    hi = sensitivity
    while not ok(hi):
        hi *= 2.0
    lo = hi
    while ok(lo):
        lo *= 0.5
    return bisect_float_bits(ok, lo, hi)


def bisect_float_bits(ok, lo: float, hi: float) -> float:
    """The upper of two adjacent float64s in ``[lo, hi]`` where ``ok`` turns from false to true.

    Requires ``0 <= lo < hi``, ``not ok(lo)`` and ``ok(hi)``; bisects the bit patterns (positive
    floats are ordered like their patterns) until they are adjacent, keeping that invariant, so at
    most 63 calls of ``ok``. Where ``ok`` is monotone this is the smallest float with ``ok``, a
    number that does not depend on the bracket.
    """
    lo_bits, hi_bits = _float_bits(lo), _float_bits(hi)
    while hi_bits - lo_bits > 1:
        mid_bits = (lo_bits + hi_bits) // 2
        if ok(_bits_float(mid_bits)):
            hi_bits = mid_bits
        else:
            lo_bits = mid_bits
    return _bits_float(hi_bits)


def _float_bits(x: float) -> int:
    """The IEEE-754 bit pattern of a float64 as a Python int (increasing with ``x`` for ``x >= 0``)."""
    return int(np.float64(x).view(np.int64))


def _bits_float(k: int) -> float:
    """The float64 whose bit pattern is ``k`` (inverse of :func:`_float_bits`)."""
    return float(np.int64(k).view(np.float64))
