"""Rényi-DP accountant (Mironov 2017) for the events of :mod:`.events`.

Conventions. RDP of order ``alpha > 1``: ``eps(alpha) = sup_{D ~ D'} D_alpha(M(D) || M(D'))``;
the cumulant ``K(alpha) = (alpha - 1) eps(alpha)`` (Han et al. (2024) writes ``K_R(lambda)`` with
``lambda = alpha - 1``). Orders live on a fixed grid :data:`DEFAULT_ORDERS`. All formulas are
vectorised over orders with NumPy (the calibration benchmark needs it) but each is one function
with its source in the docstring. Derivations: ``proofs_notes/accounting_rdp.md`` and
``proofs_notes/accounting_subsampling.md``.

Examples
--------
The Gaussian mechanism has RDP alpha / (2 z^2), so four compositions at z = 1 equal one at
z = 1/2; the activation bound is the identity at rho = 1 and
``log(1 + rho (e^{(alpha-1) eps} - 1)) / (alpha - 1)`` otherwise:

>>> import math
>>> import numpy as np
>>> from prirfed.reference.accounting.events import Gaussian
>>> from prirfed.reference.accounting.rdp import RdpAccountant, activation_rdp, gaussian_rdp
>>> gaussian_rdp([2.0, 4.0], 2.0)
array([0.25, 0.5 ])
>>> four = RdpAccountant().compose(Gaussian(1.0), 4).rdp_curve
>>> bool(np.allclose(four, RdpAccountant().compose(Gaussian(0.5)).rdp_curve, rtol=1e-14))
True
>>> activation_rdp([2.0], 1.0, [0.3])
array([0.3])
>>> bool(np.isclose(activation_rdp([2.0], 0.1, [0.3])[0], math.log(1 + 0.1 * math.expm1(0.3))))
True
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from .events import (
    ADD_REMOVE,
    REPLACE_ONE,
    Activation,
    Composed,
    EpsilonDelta,
    Event,
    Gaussian,
    MixtureOfGaussians,
    PoissonSampled,
    SampledWithoutReplacement,
    SelfComposed,
    WorstCase,
    check_delta,
    check_int,
    check_positive,
    check_probability,
    check_real,
)

__all__ = [
    "DEFAULT_ORDERS",
    "MAX_ORDER",
    "REFINE_RTOL",
    "canonical_order",
    "ORDER_FLOOR",
    "BRACKET_SCAN",
    "canonical_index",
    "gaussian_rdp",
    "pure_dp_rdp",
    "wbk19_theorem9_log_a",
    "wbk19_gaussian_log_a",
    "gaussian_chi_moments",
    "sampled_without_replacement_rdp",
    "coupling_subsampling_rdp",
    "poisson_gaussian_log_a",
    "poisson_gaussian_rdp",
    "activation_rdp",
    "mixture_of_gaussians_rdp",
    "mixture_triangle_rdp",
    "rdp_to_dp_classical",
    "rdp_to_dp_improved",
    "lemma_2_moments_bound",
    "lemma_3_moments_bound",
    "effective_gaussian",
    "RdpAccountant",
]

#: Order grid: fine near 1 (large eps and the heavy DP-RSVRG mixtures need alpha - 1 down to 1e-3),
#: quarter steps to 10, every integer to 64, then a geometric tail to 1024. The grid is only where
#: the search starts: where eps is smallest at an end of the grid,
#: :meth:`RdpAccountant.get_epsilon_and_order` searches on from there up to :data:`MAX_ORDER` (or
#: down to ``1 + 1e-6``), so there is no artificial floor on eps (the old grid stopped at 256:
#: eps >= 0.0195 at delta = 1e-5).
DEFAULT_ORDERS = np.array(
    sorted(
        set([1.001, 1.002, 1.005, 1.01, 1.02, 1.05, 1.1, 1.25, 1.5, 1.75] + [x / 4 for x in range(8, 41)] + list(range(11, 65))
            + [80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024])
    ),
    dtype=np.float64,
)
#: Largest order the adaptive search tries. It binds only for very large noise at small delta: for the
#: Gaussian at delta = 1e-10 the best order passes 2^19 near z = 2e5 (tested against the 50-digit minimum).
MAX_ORDER = float(2**20)
#: Resolution of the order search below order 64, relative to alpha - 1: adjacent canonical orders
#: (:func:`canonical_order`) are ``REFINE_RTOL (alpha - 1)`` apart (above 64, 1 apart: the orders
#: there are integers). Near a smooth minimum the eps lost is of order the square of it.
REFINE_RTOL = 1e-4
#: The lowest order the adaptive search goes to is ``1 + ORDER_FLOOR`` (the first canonical order).
ORDER_FLOOR = 1e-6
#: The order search scans the bracket of each local minimum of eps on the grid at this many equal
#: steps of the canonical index before its Fibonacci searches (:meth:`RdpAccountant._canonical_minimum`).
BRACKET_SCAN = 8
#: Step of the canonical orders below 64: ``1 + ORDER_FLOOR exp(k log(1 + REFINE_RTOL))``, k >= 0.
_CANON_STEP = math.log1p(REFINE_RTOL)
#: The last canonical index below 64; above it the canonical orders are the integers 65, 66, ...
_CANON_K64 = math.floor(math.log(63.0 / ORDER_FLOOR) / _CANON_STEP)


def canonical_order(k: int) -> float:
    r"""The ``k``-th canonical order: :math:`1 + 10^{-6} e^{k\rho}` with ``rho = log(1 + REFINE_RTOL)`` below 64, then the integers from 65 to :data:`MAX_ORDER`.

    Helper, not a paper formula. The adaptive :class:`RdpAccountant` reports the minimum of eps
    over these orders (near the best order its search finds), so its eps does not depend on the
    grid the search starts from. The first is the search's floor ``1 + ORDER_FLOOR`` (``k = 0``);
    adjacent canonical orders below 64 are ``REFINE_RTOL (alpha - 1)`` apart (the search's
    resolution), above 64 one apart (integer orders there).

    Parameters
    ----------
    k : int
        The index, >= 0 (above the index of :data:`MAX_ORDER` it is capped there).

    Returns
    -------
    float
        The order, > 1.

    Raises
    ------
    ValueError
        If ``k`` is negative.
    """
    if k < 0:
        raise ValueError(f"canonical_order: k must be >= 0 (got {k})")
    if k <= _CANON_K64:
        return 1.0 + ORDER_FLOOR * math.exp(k * _CANON_STEP)
    return float(min(64 + k - _CANON_K64, MAX_ORDER))


def canonical_index(alpha: float, up: bool) -> int:
    """The index of the canonical order at or below ``alpha`` (``up=False``) or at or above it (``up=True``).

    Helper, not a paper formula: the inverse of :func:`canonical_order`, rounded down or up
    (kept between 0, the floor ``1 + ORDER_FLOOR``, and the index of :data:`MAX_ORDER`).

    Parameters
    ----------
    alpha : float
        An order > 1.
    up : bool
        Round up instead of down.

    Returns
    -------
    int
        The index.
    """
    kmax = _CANON_K64 + int(MAX_ORDER) - 64
    if alpha <= canonical_order(0):
        return 0
    x = math.log((alpha - 1.0) / ORDER_FLOOR) / _CANON_STEP if alpha <= canonical_order(_CANON_K64) else _CANON_K64 + (alpha - 64.0)
    k = max(min(math.ceil(x) if up else math.floor(x), kmax), 0)
    # x is rounded (by about 2e-10 at most) and, between the last canonical order below 64 and 65,
    # up to 0.003 below the index: the exact neighbour is at most one index away. (x > 0 here: the
    # float just above 1 + ORDER_FLOOR has alpha - 1 above ORDER_FLOOR; so k >= 1 when rounding up,
    # and k = 0 when rounding down only with canonical_order(0) < alpha.)
    if up:
        if canonical_order(k - 1) >= alpha:
            k -= 1
        elif k < kmax and canonical_order(k) < alpha:
            k += 1
    else:
        if canonical_order(k) > alpha:
            k -= 1
        elif k < kmax and canonical_order(k + 1) <= alpha:
            k += 1
    return k


#: Integer orders up to which the WBK19 sums (Theorem 9, and the Gaussian-specific bound) are
#: evaluated; above it only the coupling bound is used at without-replacement events (also sound).
WBK19_MAX_ORDER = 256


def _orders(where: str, orders) -> np.ndarray:
    if orders is None or isinstance(orders, (str, bytes, bool)):
        raise ValueError(f"{where}: orders must be a non-empty 1-d array of numbers > 1 (got {orders!r})")
    try:
        a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{where}: orders must be a non-empty 1-d array of numbers > 1 (got {orders!r})") from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{where}: orders must be a non-empty 1-d array (got shape {a.shape})")
    bad = ~np.isfinite(a) | (a <= 1)
    if bad.any():
        raise ValueError(f"{where}: every order must be finite and > 1 (got {a[bad][0]!r})")
    return a


def _positive(where: str, name: str, x) -> float:
    return check_positive(where, name, x)


def gaussian_rdp(orders, noise_multiplier: float) -> np.ndarray:
    r"""Gaussian mechanism: ``eps(alpha) = alpha Delta^2 / (2 sigma^2) = alpha / (2 z^2)``.

    Mironov (2017), Proposition 7; Han et al. (2024), Lemma 2 (in cumulant form
    :math:`K(\lambda) = \lambda(\lambda + 1)\Delta^2/(2\sigma^2)`).

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1` (1-d, finite).
    noise_multiplier : float
        :math:`z = \sigma/\Delta > 0`, the noise standard deviation in units of the sensitivity
        :math:`\Delta` under the neighbouring relation in use.

    Returns
    -------
    numpy.ndarray
        :math:`\epsilon(\alpha) = \alpha/(2z^2)` at each order.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, or ``noise_multiplier`` is not finite and > 0.
    """
    a = _orders("gaussian_rdp", orders)
    z = _positive("gaussian_rdp", "noise_multiplier (sigma)", noise_multiplier)
    return a / (2.0 * z * z)


def pure_dp_rdp(orders, eps: float) -> np.ndarray:
    r"""An eps-DP mechanism is ``(alpha, min(eps, alpha eps^2 / 2))``-RDP.

    :math:`D_\alpha \le D_\infty \le \epsilon` (Mironov (2017), Proposition 3) and
    :math:`\epsilon`-DP implies :math:`\epsilon^2/2`-zCDP (Bun and Steinke (2016), Proposition 1.4),
    i.e. :math:`D_\alpha \le \alpha\epsilon^2/2`.

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    eps : float
        The pure-DP :math:`\epsilon > 0`.

    Returns
    -------
    numpy.ndarray
        :math:`\min(\epsilon, \alpha\epsilon^2/2)` at each order.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, or ``eps`` is not finite and > 0.
    """
    a = _orders("pure_dp_rdp", orders)
    eps = _positive("pure_dp_rdp", "eps", eps)
    return np.minimum(eps, a * eps * eps / 2.0)


@lru_cache(maxsize=8)
def _log_binom_table(amax: int) -> np.ndarray:
    """``log C(alpha, j)`` for integer ``0 <= j <= alpha <= amax`` (``-inf`` above the diagonal)."""
    al = np.arange(amax + 1, dtype=np.float64)[:, None]
    j = np.arange(amax + 1, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore"):
        t = special.gammaln(al + 1) - special.gammaln(j + 1) - special.gammaln(np.maximum(al - j, 0) + 1)
    t[j > al] = -np.inf
    t.setflags(write=False)
    return t


def _integer_orders(where: str, alphas) -> np.ndarray:
    al = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    if al.size == 0 or np.any(~np.isfinite(al)) or np.any(al < 2) or np.any(al != np.round(al)):
        raise ValueError(f"{where}: orders must be integers >= 2 (got {alphas!r})")
    if al.max() > WBK19_MAX_ORDER:
        raise ValueError(f"{where}: orders above {WBK19_MAX_ORDER} are not evaluated (got {al.max():g})")
    return al.astype(int)


def _log_a_from_terms(al: np.ndarray, log_terms: np.ndarray) -> np.ndarray:
    """``log(1 + sum_{j=2}^{alpha} exp(L[alpha, j] + log_terms[j]))`` per integer order (log1p when small)."""
    amax = int(al.max())
    L = _log_binom_table(amax)[al]
    terms = L + log_terms[None, : amax + 1]
    terms[:, :2] = -np.inf
    m = terms.max(axis=1)
    out = np.empty(len(al))
    small = m <= 0  # A - 1 <= amax: log1p keeps the relative precision of a tiny log A
    out[small] = np.log1p(np.exp(terms[small]).sum(axis=1))
    big = ~small
    if big.any():
        mb = m[big][:, None]
        out[big] = np.logaddexp(0.0, (mb + np.log(np.exp(terms[big] - mb).sum(axis=1, keepdims=True)))[:, 0])
    return out


def wbk19_theorem9_log_a(alphas, q: float, eps_int: np.ndarray, eps_inf: float = math.inf) -> np.ndarray:
    r"""``log A(alpha)`` of Theorem 9 of Wang, Balle, Kasiviswanathan (2019) at integer orders ``alphas >= 2``.

    Subsampling without replacement (sample of size ``m = q n``), replace-one relation: if the
    inner mechanism is ``(j, eps(j))``-RDP then the subsampled one is ``(alpha, log A / (alpha-1))``
    with

    .. math::
        A = 1 + q^2 \binom{\alpha}{2}\min\{4(e^{\epsilon(2)}-1),\ e^{\epsilon(2)}\min\{2,(e^{\epsilon(\infty)}-1)^2\}\}
              + \sum_{j=3}^{\alpha} q^j \binom{\alpha}{j} e^{(j-1)\epsilon(j)} \min\{2, (e^{\epsilon(\infty)}-1)^j\}.

    For the Gaussian :math:`\epsilon(\infty) = \infty` and both inner minima select 2. (Han et al.
    (2024), proof of Lemma 3, prints the sum without the binomial :math:`\binom{\alpha}{j}`: a
    transcription slip.)

    Parameters
    ----------
    alphas : array_like
        Integer orders, :math:`2 \le \alpha \le` :data:`WBK19_MAX_ORDER`.
    q : float
        Sampling ratio :math:`m/n \in (0, 1]`.
    eps_int : numpy.ndarray
        ``eps_int[j]`` holds the inner RDP :math:`\epsilon(j)` for ``j = 0..max(alphas)`` (entries 0
        and 1 unused).
    eps_inf : float, optional
        The inner mechanism's :math:`\epsilon(\infty)` (default ``inf``).

    Returns
    -------
    numpy.ndarray
        :math:`\log A(\alpha)` at each order, i.e. the cumulant :math:`(\alpha-1)\epsilon'(\alpha)`
        of the subsampled mechanism.

    Raises
    ------
    ValueError
        If ``q`` is not in (0, 1], an order is not an integer >= 2 or exceeds
        :data:`WBK19_MAX_ORDER`, or ``eps_int`` is shorter than ``max(alphas) + 1``.
    """
    q = check_probability("wbk19_theorem9_log_a", q)
    al = _integer_orders("wbk19_theorem9_log_a", alphas)
    amax = int(al.max())
    eps_int = np.asarray(eps_int, dtype=np.float64)
    if eps_int.ndim != 1 or eps_int.shape[0] < amax + 1:
        raise ValueError(f"wbk19_theorem9_log_a: eps_int must have length >= {amax + 1} (got shape {eps_int.shape})")
    eps_int = eps_int[: amax + 1]
    j = np.arange(amax + 1, dtype=np.float64)
    if math.isinf(eps_inf):
        log_min_j = np.full(amax + 1, math.log(2.0))
    else:
        with np.errstate(divide="ignore"):
            log_min_j = np.minimum(math.log(2.0), j * math.log(math.expm1(eps_inf)))
    e2 = float(eps_int[2])
    # log of 4 (e^{eps(2)} - 1); at eps(2) = 0 that term is 0 (log -inf): math.log(0) raised a bare
    # "math domain error" for every inner event with no privacy loss at order 2
    log_4 = math.log(4.0) + e2 + math.log(-math.expm1(-e2)) if e2 != 0.0 else -math.inf
    log_t2 = min(log_4, e2 + float(log_min_j[2]))
    row = j * math.log(q) + (j - 1) * eps_int + log_min_j
    row[2] = 2 * math.log(q) + log_t2
    return _log_a_from_terms(al, row)


@lru_cache(maxsize=64)
def _gaussian_chi_moments_cached(mu: float, jmax: int) -> np.ndarray:
    jmax += jmax % 2  # even
    js = np.arange(2, jmax + 1, 2, dtype=np.float64)
    out = np.full(jmax + 1, -np.inf)
    # Forward differences in closed form: B_j = Delta^j f(0) = sum_i C(j,i) (-1)^(j-i) f(i),
    # f(i) = exp(mu^2 i (i-1) / 2), all even j at once (rows), each row scaled by its largest term.
    jj = js.astype(int)
    i = np.arange(jmax + 1, dtype=np.float64)
    lc = _log_binom_table(jmax)[jj]  # -inf where i > j
    t = lc + (mu * mu * i * (i - 1) / 2.0)[None, :]
    tm = t.max(axis=1, keepdims=True)
    w = np.exp(t - tm)
    sgn = np.where((jj[:, None] - i[None, :]) % 2 == 0, 1.0, -1.0)
    val = (sgn * w).sum(axis=1)
    # rounding error of the signed sum, relative to it: each term carries ~|t| u from exp(t - tm), the
    # summation (jmax + 1) u; keep the sum where the bound is below 1e-10 and inflate B_j by it (sound)
    u = 2.0**-52
    with np.errstate(divide="ignore", invalid="ignore"):
        err = w.sum(axis=1) * (4.0 * u * np.abs(np.where(np.isfinite(t), t, 0.0)).max(axis=1) + (jmax + 3) * u) / val
    ok_rows = (val > 0) & (err <= 1e-10)
    ok = np.zeros(jmax + 1, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[jj[ok_rows]] = tm[ok_rows, 0] + np.log(val[ok_rows]) + np.log1p(err[ok_rows])
    ok[jj[ok_rows]] = True
    need = [int(jj) for jj in js if not ok[int(jj)]]
    if need:
        # E[(Y - 1)^j], Y = exp(mu x - mu^2/2), x ~ N(0, 1): the integrand is >= 0 (j even) and entire,
        # so the trapezoid rule in log space is accurate to ~1e-14 relative at step 0.25
        # (test_gaussian_chi_moments_match_mpmath).
        s = 0.25
        x = np.arange(-45.0, max(need) * mu + 45.0 + s, s)
        u = mu * x - mu * mu / 2.0
        with np.errstate(divide="ignore", over="ignore"):
            la = np.where(u > 0, u + np.log(-np.expm1(-np.abs(u))), np.log(-np.expm1(np.minimum(u, 0.0))))
        lphi = -x * x / 2.0 - 0.5 * math.log(2 * math.pi) + math.log(s)
        nj = np.array(need, dtype=np.float64)[:, None]
        out[need] = special.logsumexp(nj * la[None, :] + lphi[None, :], axis=1) + 1e-10  # inflated by 1e-10 relative
    out[3:jmax:2] = 0.5 * (out[2 : jmax - 1 : 2] + out[4 : jmax + 1 : 2])  # odd j: Cauchy-Schwarz, sqrt(B_{j-1} B_{j+1})
    # The logs are floats: each sum above may round down by half an ulp of log B_j, and above
    # log B_j ~ 1e6 an ulp (4.7e-10 at 2.2e6) outweighs the 1e-10 inflation, which then rounds away
    # (log B_212 at mu = 10 came out one ulp below the 400-digit value). Four ulps up keep every
    # entry above the exact moment.
    fin = np.isfinite(out)
    out[fin] += 4.0 * np.spacing(np.abs(out[fin]))
    out[:2] = -np.inf
    out.setflags(write=False)
    return out


def gaussian_chi_moments(mu: float, jmax: int) -> np.ndarray:
    r"""``log B_j`` for ``j = 0..jmax`` (``-inf`` at 0, 1): the moments used by WBK19's Gaussian bound.

    Wang, Balle, Kasiviswanathan (2019), Theorem 27 uses these moments. Even ``j``:
    :math:`B_j = E_{x\sim N(0,1)}[(e^{\mu x-\mu^2/2}-1)^j] = \Delta^j f(0)`,
    :math:`f(i)=e^{\mu^2 i(i-1)/2}` (the j-th Pearson-Vajda chi moment of the Gaussian pair at shift
    :math:`\mu`, expanded binomially). Odd ``j``: :math:`\sqrt{B_{j-1}B_{j+1}}`, an upper bound of
    :math:`E|e^{\mu x-\mu^2/2}-1|^j` by Cauchy-Schwarz. The alternating binomial sum is used where its
    rounding-error bound is below 1e-10 of it, otherwise log-space trapezoid quadrature (accurate to
    ~1e-14 relative); either way the value is inflated by its error allowance (1e-10 relative at
    most) and its log by four ulps (the log's own rounding), so it is an upper bound of the exact
    moment.

    Parameters
    ----------
    mu : float
        Shift :math:`\mu > 0` of the Gaussian pair (``1/z`` for noise multiplier ``z``).
    jmax : int
        Largest moment index, >= 2.

    Returns
    -------
    numpy.ndarray
        Read-only array of length ``jmax + 1``: :math:`\log B_j` (``-inf`` at ``j = 0, 1``).

    Raises
    ------
    ValueError
        If ``mu`` is not finite and > 0, or ``jmax`` is not an integer >= 2.
    """
    mu = _positive("gaussian_chi_moments", "mu", mu)
    jmax = check_int("gaussian_chi_moments", "jmax", jmax, 2)
    return _gaussian_chi_moments_cached(mu, jmax)[: jmax + 1]


@lru_cache(maxsize=64)
def _chi_moment_dominated(mu: float, jmax: int) -> np.ndarray:
    r"""Where ``4 B_j >= 2 f(j)`` is proven, ``f(j) = exp(mu^2 j (j-1) / 2)``, for ``j = 0..jmax`` (read-only; cached: an accountant asks for the same shift at every order it tries).

    There the ``j``-th term of WBK19's Gaussian bound, :math:`\min\{4B_j, 2e^{(j-1)\epsilon(j)}\}`
    with :math:`e^{(j-1)\epsilon(j)} = f(j)`, is its second entry whatever :math:`B_j` is, so
    :math:`B_j` need not be computed. Even ``j``: :math:`B_j = \sum_i \binom{j}{i}(-1)^{j-i} f(i)
    \ge f(j) - \sum_{j-i\ \mathrm{odd}} \binom{j}{i} f(i)` (the negative terms only), and the claim
    holds when that sum is at most :math:`f(j)/2` (checked in log space with a margin of
    :math:`10^{-9}(1+|\log f(j)|)` for rounding). Odd ``j`` (the Cauchy-Schwarz value
    :math:`\sqrt{B_{j-1}B_{j+1}}`): when both neighbours hold, :math:`4\sqrt{B_{j-1}B_{j+1}} \ge
    2\sqrt{f(j-1)f(j+1)} = 2f(j)e^{\mu^2/2} \ge 2f(j)`. This is what keeps the bound fast for a
    large shift (small noise): the quadrature of :func:`gaussian_chi_moments` spans
    :math:`j\mu` standard deviations (1.2 s at :math:`\mu = 100`, minutes beyond).
    """
    jmax += jmax % 2
    out = np.zeros(jmax + 1, dtype=bool)
    js = np.arange(2, jmax + 1, 2)
    i = np.arange(jmax + 1, dtype=np.float64)
    logf = mu * mu * i * (i - 1) / 2.0
    t = _log_binom_table(jmax)[js] + logf[None, :]
    neg = ((js[:, None] - i[None, :].astype(int)) % 2 == 1) & (i[None, :] < js[:, None])
    t = np.where(neg, t, -np.inf)
    lneg = special.logsumexp(t, axis=1)
    top = logf[js]
    out[js] = lneg <= top - math.log(2.0) - 1e-9 * (1.0 + np.abs(top))
    out[3:jmax:2] = out[2 : jmax - 1 : 2] & out[4 : jmax + 1 : 2]
    out.setflags(write=False)
    return out


def wbk19_gaussian_log_a(alphas, q: float, noise_multiplier: float) -> np.ndarray:
    r"""``log A(alpha)`` of WBK19's Gaussian-specific bound for sampling without replacement (replace-one).

    Wang, Balle, Kasiviswanathan (2019), arXiv:1808.00087, Theorem 27 (the strengthened bound for
    the subsampled Gaussian): the ``j``-th term of Theorem 9 is

    .. math:: q^j\binom{\alpha}{j}\min\{4B_j,\ 2e^{(j-1)\epsilon(j)}\},\qquad j\ge2,

    with :math:`\epsilon(j)=j/(2z^2)` and :math:`B_j` from :func:`gaussian_chi_moments` at
    :math:`\mu=1/z` (:math:`4B_j` bounds the ternary :math:`\chi^j` divergence of three Gaussians at
    pairwise distance at most :math:`\mu`; at ``j = 2`` the term equals Theorem 9's). Never above
    :func:`wbk19_theorem9_log_a` with :math:`\epsilon(\infty) = \infty`. Checked against
    dp-accounting's implementation (``test_wbk19_gaussian_bound_equals_the_peer``) and never below
    the exact RDP of an attained pair (``test_wbk19_gaussian_bound_is_above_an_attained_pair``).

    Parameters
    ----------
    alphas : array_like
        Integer orders, :math:`2 \le \alpha \le` :data:`WBK19_MAX_ORDER`.
    q : float
        Sampling ratio in (0, 1].
    noise_multiplier : float
        Noise multiplier :math:`z > 0` of the inner Gaussian.

    Returns
    -------
    numpy.ndarray
        :math:`\log A(\alpha)` at each order.

    Raises
    ------
    ValueError
        If ``q`` is not in (0, 1], ``noise_multiplier`` is not finite and > 0, or an order is not an
        integer in ``2..WBK19_MAX_ORDER``.
    """
    q = check_probability("wbk19_gaussian_log_a", q)
    z = _positive("wbk19_gaussian_log_a", "noise_multiplier (sigma)", noise_multiplier)
    al = _integer_orders("wbk19_gaussian_log_a", alphas)
    amax = int(al.max())
    j = np.arange(amax + 1, dtype=np.float64)
    second = math.log(2.0) + (j - 1) * j / (2.0 * z * z)
    # B_j only where 4 B_j >= 2 e^{(j-1) eps(j)} is not proven (small shifts: mu below ~1.2)
    settled = _chi_moment_dominated(1.0 / z, amax + 1)[: amax + 1].copy()
    settled[:2] = True
    term = second.copy()
    if not settled.all():
        jneed = int(np.flatnonzero(~settled).max())
        log_b = gaussian_chi_moments(1.0 / z, jneed + 1)[: jneed + 1]  # jneed >= 2: rows 0, 1 are settled
        term[: jneed + 1] = np.where(settled[: jneed + 1], second[: jneed + 1],
                                     np.minimum(math.log(4.0) + log_b, second[: jneed + 1]))
    row = j * math.log(q) + term
    return _log_a_from_terms(al, row)


def sampled_without_replacement_rdp(orders, q: float, inner_rdp_integer, gaussian_z: float | None = None) -> np.ndarray:
    r"""RDP of a mechanism run on a without-replacement sample (ratio ``q``), replace-one relation.

    At integer orders :math:`k \le` :data:`WBK19_MAX_ORDER` the cumulant
    :math:`K(k) = (k-1)\epsilon(k)` is bounded by the minimum of Wang, Balle,
    Kasiviswanathan (2019), Theorem 9 (:func:`wbk19_theorem9_log_a`, with :math:`\epsilon(\infty) = \infty`), the
    coupling bound (:func:`coupling_subsampling_rdp`) and, when the inner mechanism is a Gaussian of
    noise multiplier ``gaussian_z``, their Gaussian-specific Theorem 27
    (:func:`wbk19_gaussian_log_a`). Fractional orders: linear interpolation of that cumulant bound
    between :math:`\lfloor\alpha\rfloor` and :math:`\lceil\alpha\rceil` (:math:`K(1) = 0`), sound
    because the true cumulant is convex in :math:`\alpha` (their Corollary 10; derivation in
    ``proofs_notes/accounting_subsampling.md``), then the minimum with the coupling bound at
    :math:`\alpha` itself. Orders above :data:`WBK19_MAX_ORDER`: the coupling bound. At ``q = 1``
    this returns the inner RDP itself (no subsampling).

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    q : float
        Sampling ratio in (0, 1].
    inner_rdp_integer : callable
        ``inner_rdp_integer(orders)`` returns the inner mechanism's RDP at the given orders (called
        at ``orders`` and at the integers ``2..``).
    gaussian_z : float or None, optional
        Noise multiplier of the inner mechanism when it is a Gaussian (enables Theorem 27).

    Returns
    -------
    numpy.ndarray
        RDP of the subsampled mechanism at each order.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, or ``q`` is not in (0, 1].
    """
    a = _orders("sampled_without_replacement_rdp", orders)
    q = check_probability("sampled_without_replacement_rdp", q)
    if q == 1.0:
        return np.asarray(inner_rdp_integer(a), dtype=np.float64)
    K = (a - 1) * coupling_subsampling_rdp(a, q, inner_rdp_integer(a))
    lo = np.floor(a).astype(np.int64)
    hi = np.ceil(a).astype(np.int64)
    inside = hi <= WBK19_MAX_ORDER
    if inside.any():
        t = (a - lo)[inside]
        lo_i, hi_i = lo[inside], hi[inside]
        needed = np.unique(np.concatenate([lo_i, hi_i]))
        needed = needed[needed >= 2]
        amax = int(needed.max())
        ints = np.arange(2, amax + 1, dtype=np.float64)
        eps_int = np.zeros(amax + 1)
        eps_int[2:] = inner_rdp_integer(ints)
        log_a = np.zeros(amax + 1)  # K(1) = 0
        kk = needed.astype(np.float64)
        # WBK19's Gaussian-specific bound is never above Theorem 9, so it replaces it for a Gaussian
        bound = wbk19_gaussian_log_a(kk, q, gaussian_z) if gaussian_z is not None else wbk19_theorem9_log_a(kk, q, eps_int)
        bound = np.minimum(bound, (kk - 1) * coupling_subsampling_rdp(kk, q, eps_int[needed]))
        log_a[needed] = bound
        K[inside] = np.minimum(K[inside], (1 - t) * log_a[lo_i] + t * log_a[hi_i])
    return K / (a - 1)
def coupling_subsampling_rdp(orders, q: float, inner_rdp) -> np.ndarray:
    r"""Without-replacement subsampling by the index coupling and joint convexity (replace-one).

    Run both neighbours on the same index set S: if the replaced index is not in S (probability
    ``1 - q``) the two laws coincide, otherwise the inputs are replace-one neighbours. Joint
    convexity of :math:`(p, q) \mapsto p^\alpha q^{1-\alpha}` (Mironov (2017), the same argument as
    :func:`activation_rdp`) gives
    :math:`\epsilon'(\alpha) \le \log(1 + q(e^{(\alpha-1)\epsilon(\alpha)} - 1))/(\alpha - 1)`.
    Weaker than Wang, Balle, Kasiviswanathan (2019), Theorem 9 for small noise, but it tends to 0
    with the inner RDP, which Theorem 9 (general form, :math:`\epsilon(\infty) = \infty`) does not:
    its :math:`j \ge 3` terms keep :math:`2q^j\binom{\alpha}{j}`.
    :func:`sampled_without_replacement_rdp` takes the minimum of the two bounds at every order.

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    q : float
        Sampling ratio in (0, 1].
    inner_rdp : array_like
        The inner mechanism's RDP at ``orders`` (same shape).

    Returns
    -------
    numpy.ndarray
        RDP bound of the subsampled mechanism at each order.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, ``q`` is not in (0, 1], or ``inner_rdp`` has another
        shape than ``orders``.
    """
    return activation_rdp(orders, q, inner_rdp)


def poisson_gaussian_log_a(alpha: float, q: float, z: float) -> float:
    r"""``log A_alpha`` of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019, Sections 3.2-3.3).

    Mironov, Talwar and Zhang (2019):
    :math:`A_\alpha = E_{x \sim N(0, z^2)}[(1 - q + q e^{(2x-1)/(2z^2)})^\alpha]
    = \exp((\alpha-1) D_\alpha((1-q) N(0,z^2) + q N(1,z^2) \,\|\, N(0,z^2)))` (add/remove relation,
    sensitivity 1). Integer :math:`\alpha`: the binomial expansion (their (3.2)),
    :math:`A = \sum_k \binom{\alpha}{k} (1-q)^{\alpha-k} q^k e^{(k^2-k)/(2 z^2)}`. Fractional
    :math:`\alpha`: split the integral at :math:`x_0 = z^2 \log(1/q - 1) + 1/2` and expand each side
    in the convergent generalized-binomial series (their Section 3.3); every term is a Gaussian tail
    in closed form (derivation in ``proofs_notes/accounting_subsampling.md``); its negative terms are at
    most 0.614 of its positive ones, so it never cancels badly. When it converges slowly (more than
    2000 terms, q near 1/2), adaptive quadrature of the definition is used instead.

    Parameters
    ----------
    alpha : float
        Order, finite and > 1.
    q : float
        Poisson sampling probability in (0, 1].
    z : float
        Noise multiplier, > 0.

    Returns
    -------
    float
        :math:`\log A_\alpha`; at ``q = 1`` the Gaussian cumulant :math:`(\alpha-1)\alpha/(2z^2)`.

    Raises
    ------
    ValueError
        If ``q`` is not in (0, 1], ``z`` is not finite and > 0, ``alpha`` is not finite and > 1, or
        the fallback quadrature does not give a finite positive integral.
    """
    q = check_probability("poisson_gaussian_log_a", q)
    z = _positive("poisson_gaussian_log_a", "z (noise multiplier)", z)
    alpha = check_real("poisson_gaussian_log_a", "alpha", alpha)
    if not alpha > 1:
        raise ValueError(f"poisson_gaussian_log_a: alpha must be finite and > 1 (got {alpha})")
    if q == 1.0:
        return (alpha - 1) * alpha / (2 * z * z)
    if alpha.is_integer():
        k = np.arange(int(alpha) + 1, dtype=np.float64)
        logc = special.gammaln(alpha + 1) - special.gammaln(k + 1) - special.gammaln(alpha - k + 1)
        t = logc + (alpha - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * z * z)
        return float(special.logsumexp(t))
    x0 = z * z * math.log(1 / q - 1) + 0.5
    pos, neg = [], []  # log-magnitudes of positive / negative terms
    i = 0
    while True:
        c = special.binom(alpha, i)
        lc = math.log(abs(c))
        j = alpha - i
        # P(N(i, z^2) <= x0) = Phi((x0 - i)/z);  P(N(j, z^2) > x0) = Phi((j - x0)/z)
        s0 = lc + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * z * z) + float(special.log_ndtr((x0 - i) / z))
        s1 = lc + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * z * z) + float(special.log_ndtr((j - x0) / z))
        (pos if c > 0 else neg).extend([s0, s1])
        i += 1
        # beyond i > alpha + 1 the terms alternate in sign with decreasing magnitude, so the
        # truncation error is below the first omitted term: stop at relative 1e-16 of A >= 1
        if i > alpha + 2 and max(s0, s1) < -37:
            break
        if i > 2000:  # polynomial tail (q near 1/2): integrate the definition instead
            return _poisson_log_a_quad(alpha, q, z)
    # No cancellation to guard against (two guards were dead code and were removed): with
    # c = ceil(alpha) >= 2, the coefficients binom(alpha, i) are > 0 for i <= c and alternate from
    # i = c + 1 on (so ``neg`` holds at least the i = c + 1 terms: the loop runs past alpha + 2), with
    # ratio of magnitudes (i - alpha) r / (i + 1) < 1 on both sides of x0 (r <= 1 there). Pointwise, the
    # negative terms sum to at most t_c sum_{k odd} prod_{m<=k} (m-1+f)/(c+m) <= 2 (1 - log 2) t_c
    # = 0.614 t_c (f = c - alpha < 1), t_c a positive term: the negatives are at most 0.614 of the
    # positives (log ratio <= -0.49; -3.76 at worst over 56579 random (alpha, q, z)).
    lp = special.logsumexp(pos)
    ln = special.logsumexp(neg)
    return float(lp + math.log1p(-math.exp(ln - lp)))


def _poisson_log_a_quad(alpha: float, q: float, z: float) -> float:
    """``log A_alpha`` by adaptive quadrature of its definition (scaled by the integrand's peak)."""
    from scipy import integrate

    def log_f(x):
        return -x * x / (2 * z * z) - math.log(z * math.sqrt(2 * math.pi)) + alpha * float(
            np.logaddexp(math.log1p(-q), math.log(q) + (2 * x - 1) / (2 * z * z))
        )

    grid = np.linspace(-12 * z, alpha + 12 * z, 2001)
    peak = max(log_f(x) for x in grid)
    f = lambda x: math.exp(log_f(x) - peak)  # noqa: E731
    kw = dict(epsabs=0, epsrel=1e-12, limit=500)
    total = (
        integrate.quad(f, -np.inf, grid[0], **kw)[0]
        + integrate.quad(f, grid[0], grid[-1], points=list(grid[::50]), **kw)[0]
        + integrate.quad(f, grid[-1], np.inf, **kw)[0]
    )
    if not (total > 0 and math.isfinite(total)):
        raise ValueError(f"poisson_gaussian_log_a: quadrature failed at alpha={alpha}, q={q}, z={z}")
    return peak + math.log(total)


def poisson_gaussian_rdp(orders, q: float, noise_multiplier: float) -> np.ndarray:
    r"""RDP of the Poisson-subsampled Gaussian, add/remove relation: ``log A_alpha / (alpha - 1)``.

    Mironov, Talwar and Zhang (2019), Theorem 4 and Section 3: for this mechanism the divergence
    :math:`D_\alpha(\mu \| \mu_0)` (:math:`\mu = (1-q)\mu_0 + q\mu_1`) dominates the reverse one, so
    it is the RDP. Each order is evaluated by :func:`poisson_gaussian_log_a`.

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    q : float
        Poisson sampling probability in (0, 1].
    noise_multiplier : float
        Noise multiplier :math:`z > 0`.

    Returns
    -------
    numpy.ndarray
        :math:`\log A_\alpha/(\alpha - 1)` at each order.

    Raises
    ------
    ValueError
        As :func:`poisson_gaussian_log_a`, or if an order is not finite or not > 1.
    """
    a = _orders("poisson_gaussian_rdp", orders)
    return np.array([poisson_gaussian_log_a(x, q, noise_multiplier) / (x - 1) for x in a])


def _log_two_point(w: float, x, y):
    """``log((1 - w) e^x + w e^y)`` elementwise, accurate when the result is tiny (log1p/expm1 form)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    d = y - x
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        up = x + np.log1p(w * np.expm1(np.minimum(d, 700.0)))
        down = y + np.log1p((1 - w) * np.expm1(np.minimum(-d, 700.0)))
    lse = np.logaddexp(math.log1p(-w) + x, math.log(w) + y) if w < 1 else y
    out = np.where(d >= 0, up, down)
    return np.where(np.abs(d) > 700.0, lse, out)


def activation_rdp(orders, rho: float, inner_rdp) -> np.ndarray:
    r"""Activation ("my agent takes part with probability rho") by joint convexity.

    For :math:`P' = (1-\rho) U + \rho P` and :math:`Q' = (1-\rho) U + \rho Q`,
    :math:`e^{(\alpha-1) D_\alpha(P'\|Q')} \le (1-\rho) + \rho e^{(\alpha-1) D_\alpha(P\|Q)}`
    (joint convexity, as in Mironov (2017)), so
    :math:`\epsilon'(\alpha) \le \log(1 + \rho(e^{(\alpha-1)\epsilon(\alpha)} - 1))/(\alpha - 1)`
    (proof in ``proofs_notes/accounting_theorem_4_2.md``). Evaluated as a log-sum-exp (no overflow).

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    rho : float
        Activation probability in (0, 1].
    inner_rdp : array_like
        The inner mechanism's RDP at ``orders`` (same shape).

    Returns
    -------
    numpy.ndarray
        The activated mechanism's RDP bound at each order (a copy of ``inner_rdp`` at ``rho = 1``).

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, ``rho`` is not in (0, 1], or ``inner_rdp`` has another
        shape than ``orders``.
    """
    a = _orders("activation_rdp", orders)
    rho = check_probability("activation_rdp", rho, "rho")
    e = np.asarray(inner_rdp, dtype=np.float64)
    if e.shape != a.shape:
        raise ValueError(f"activation_rdp: inner_rdp has shape {e.shape}, orders {a.shape}")
    if rho == 1.0:
        return e.copy()
    return _log_two_point(rho, np.zeros_like(a), (a - 1) * e) / (a - 1)


def mixture_of_gaussians_rdp(orders, shift_common: float, shift_rare: float, p_rare: float) -> np.ndarray:
    r"""One DP-RSVRG inner step: pair the mixture components, use joint convexity.

    :math:`e^{(\alpha-1) D_\alpha} \le (1-p) e^{(\alpha-1) \alpha c^2 / 2} + p e^{(\alpha-1) \alpha d^2 / 2}`
    with :math:`c` = ``shift_common``, :math:`d` = ``shift_rare`` in units of the noise standard
    deviation (:math:`p = 1/N_i`): the Gaussian RDP of Mironov (2017), Proposition 7, of each paired
    component, combined by joint convexity. Derivation in ``proofs_notes/accounting_dp_rsvrg.md``.

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    shift_common : float
        Mean shift :math:`c \ge 0` of the common component.
    shift_rare : float
        Mean shift :math:`d \ge 0` of the rare component.
    p_rare : float
        Weight :math:`p \in (0, 1]` of the rare component.

    Returns
    -------
    numpy.ndarray
        The RDP bound at each order.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, a shift is not finite or negative, or ``p_rare`` is
        not in (0, 1].
    """
    a = _orders("mixture_of_gaussians_rdp", orders)
    c = check_real("mixture_of_gaussians_rdp", "shift_common", shift_common)
    d = check_real("mixture_of_gaussians_rdp", "shift_rare", shift_rare)
    p = check_probability("mixture_of_gaussians_rdp", p_rare, "p_rare")
    if not (c >= 0 and d >= 0):
        raise ValueError(f"mixture_of_gaussians_rdp: shifts must be finite and >= 0 (got {c}, {d})")
    g = (a - 1) * a / 2.0
    if p == 1.0:
        return g * d * d / (a - 1)
    return _log_two_point(p, g * c * c, g * d * d) / (a - 1)


def mixture_triangle_rdp(orders, shift_common: float, shift_sample: float, p_rare: float) -> np.ndarray:
    r"""Tighter bound for one DP-RSVRG inner step by the weak triangle inequality.

    Let :math:`P` (dataset D) and :math:`R` (neighbour D') be the step's laws and :math:`Q` the law
    on D' with the full gradient kept at its D value. :math:`P` vs :math:`Q`: one uniformly sampled
    index of :math:`N_i` (ratio :math:`p = 1/N_i`) fed to a Gaussian whose mean moves by at most
    ``shift_sample`` (:math:`4\tau_1/\sigma`): Wang, Balle, Kasiviswanathan (2019), Theorem 9 and the
    coupling bound (:func:`sampled_without_replacement_rdp`). :math:`Q` vs :math:`R`: every
    component moves by the same :math:`c` (``shift_common``): Gaussian RDP :math:`\alpha c^2/2` by
    joint convexity. Mironov (2017), Proposition 11 with :math:`p = q = 2`:
    :math:`D_\alpha(P\|R) \le \frac{\alpha - 1/2}{\alpha - 1} D_{2\alpha}(P\|Q) + D_{2\alpha - 1}(Q\|R)`.

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    shift_common : float
        Shift :math:`c \ge 0` every component shares.
    shift_sample : float
        Shift :math:`> 0` caused by the sampled record.
    p_rare : float
        Sampling ratio :math:`p \in (0, 1]`.

    Returns
    -------
    numpy.ndarray
        The RDP bound at each order.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, ``shift_common < 0``, ``shift_sample <= 0``, a shift
        is not finite, or ``p_rare`` is not in (0, 1].
    """
    a = _orders("mixture_triangle_rdp", orders)
    c = check_real("mixture_triangle_rdp", "shift_common", shift_common)
    s = check_real("mixture_triangle_rdp", "shift_sample", shift_sample)
    if not (c >= 0 and s > 0):
        raise ValueError(f"mixture_triangle_rdp: need shift_common >= 0 and shift_sample > 0 (got {c}, {s})")
    p = check_probability("mixture_triangle_rdp", p_rare, "p_rare")
    z = 1.0 / s
    d_pq = sampled_without_replacement_rdp(2 * a, p, lambda o: gaussian_rdp(o, z))
    d_qr = (2 * a - 1) * c * c / 2.0
    return (a - 0.5) / (a - 1) * d_pq + d_qr


def rdp_to_dp_classical(orders, rdp, delta: float) -> tuple[float, float]:
    r"""Classical conversion, Prop. 1 of Han et al. (2024) (Mironov 2017 Prop. 3): ``eps = rdp + log(1/delta)/(alpha-1)``.

    Han et al. (2024), Proposition 1 (Mironov (2017), Proposition 3), minimised over the orders.

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    rdp : array_like
        RDP at ``orders``.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    eps : float
        The smallest :math:`\epsilon` over the orders.
    best_order : float
        The order attaining it.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, or ``delta`` is not in (0, 1).
    """
    a = _orders("rdp_to_dp_classical", orders)
    delta = check_delta("rdp_to_dp_classical", delta)
    eps = _classical_eps(a, np.asarray(rdp, dtype=np.float64), delta)
    i = int(np.nanargmin(eps))
    return float(eps[i]), float(a[i])


def _classical_eps(a: np.ndarray, r: np.ndarray, delta: float) -> np.ndarray:
    """The classical conversion's eps at each order (checked inputs)."""
    return r + math.log(1 / delta) / (a - 1)


def rdp_to_dp_improved(orders, rdp, delta: float) -> tuple[float, float]:
    r"""Improved conversion (Canonne, Kamath, Steinke 2020 Prop. 12; Balle et al. 2020 Thm 21).

    Canonne, Kamath and Steinke (2020), Proposition 12; Balle et al. (2020), Theorem 21:
    :math:`\epsilon = \mathrm{rdp} + \log((\alpha-1)/\alpha) - (\log\delta + \log\alpha)/(\alpha - 1)`,
    minimised over the orders; a negative value means the mechanism is :math:`(0, \delta)`-DP, so
    the result is :math:`\max(0, \cdot)`. Never larger than :func:`rdp_to_dp_classical` (the
    difference is :math:`\log(1-1/\alpha) - \log(\alpha)/(\alpha-1) \le 0`).

    Parameters
    ----------
    orders : array_like
        RDP orders :math:`\alpha > 1`.
    rdp : array_like
        RDP at ``orders``.
    delta : float
        Target :math:`\delta \in (0, 1)`.

    Returns
    -------
    eps : float
        The smallest :math:`\epsilon \ge 0` over the orders.
    best_order : float
        The order attaining it.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, or ``delta`` is not in (0, 1).
    """
    a = _orders("rdp_to_dp_improved", orders)
    delta = check_delta("rdp_to_dp_improved", delta)
    eps = _improved_eps(a, np.asarray(rdp, dtype=np.float64), delta)
    i = int(np.nanargmin(eps))
    return max(0.0, float(eps[i])), float(a[i])


def _improved_eps(a: np.ndarray, r: np.ndarray, delta: float) -> np.ndarray:
    """The improved conversion's eps at each order, before the floor at 0 (checked inputs)."""
    return r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)


def lemma_2_moments_bound(lam: float, L0: float, n: int, sigma: float) -> float:
    r"""Lemma 2 of Han et al. (2024) as stated: ``K_R(lambda) <= 2 lambda (lambda+1) L0^2 / (n^2 sigma^2)``.

    This is exactly the Gaussian cumulant at :math:`\alpha = \lambda + 1` with replace-one
    sensitivity :math:`2L_0/n` of the full-batch mean of :math:`L_0`-Lipschitz terms (sound, tight).

    Parameters
    ----------
    lam : float
        :math:`\lambda > 0` (order minus one).
    L0 : float
        Lipschitz constant, > 0.
    n : int
        Number of records, > 0.
    sigma : float
        Noise standard deviation, > 0.

    Returns
    -------
    float
        :math:`2\lambda(\lambda+1)L_0^2/(n^2\sigma^2)`.

    Raises
    ------
    ValueError
        If an argument is not finite and > 0.
    """
    lam = _positive("lemma_2_moments_bound", "lambda", lam)
    L0 = _positive("lemma_2_moments_bound", "L0", L0)
    n = _positive("lemma_2_moments_bound", "n", n)
    sigma = _positive("lemma_2_moments_bound", "sigma", sigma)
    return 2 * lam * (lam + 1) * L0 * L0 / (n * n * sigma * sigma)


def lemma_3_moments_bound(lam: float, L0: float, n: int, b: int, sigma: float) -> float:
    r"""Lemma 3 of Han et al. (2024) as stated: ``K_R(lambda) <= 15 (lambda+1) L0^2 / (n^2 sigma^2)``.

    Han et al. (2024) give no constant-level proof (they point to their reference [51], Lemma 3.7);
    the tests compare it with the Wang, Balle, Kasiviswanathan (2019) bound it claims to simplify
    (``proofs_notes/accounting_rdp.md``).

    Parameters
    ----------
    lam : float
        :math:`\lambda > 0`.
    L0 : float
        Lipschitz constant, > 0.
    n : int
        Number of records, > 0.
    b : int
        Batch size, > 0.
    sigma : float
        Noise standard deviation, > 0.

    Returns
    -------
    float
        :math:`15(\lambda+1)L_0^2/(n^2\sigma^2)`.

    Raises
    ------
    ValueError
        If an argument is not finite and > 0, or a precondition of the lemma fails:
        :math:`\sigma^2 < 4L_0^2/b^2`, :math:`b \ge n`, or
        :math:`\lambda > 2\sigma^2\log(n/(b(\lambda+1)(1 + b^2\sigma^2/(4L_0^2))))/3`.
    """
    lam = _positive("lemma_3_moments_bound", "lambda", lam)
    L0 = _positive("lemma_3_moments_bound", "L0", L0)
    n = _positive("lemma_3_moments_bound", "n", n)
    b = _positive("lemma_3_moments_bound", "b", b)
    sigma = _positive("lemma_3_moments_bound", "sigma", sigma)
    if sigma * sigma < 4 * L0 * L0 / (b * b):
        raise ValueError(f"lemma_3_moments_bound: needs sigma^2 >= 4 L0^2 / b^2 (sigma^2 = {sigma**2:.4g} < {4 * L0 * L0 / b / b:.4g})")
    if b >= n:
        raise ValueError(f"lemma_3_moments_bound: needs b < n (b = {b:g}, n = {n:g})")
    arg = n / (b * (lam + 1) * (1 + b * b * sigma * sigma / (4 * L0 * L0)))
    lam_max = 2 * sigma * sigma * math.log(arg) / 3 if arg > 0 else -math.inf
    if lam > lam_max:
        raise ValueError(f"lemma_3_moments_bound: needs lambda <= {lam_max:.4g} (got lambda = {lam:g})")
    return 15 * (lam + 1) * L0 * L0 / (n * n * sigma * sigma)


def effective_gaussian(event: Event, full_gradient_only: bool = False) -> float | None:
    r"""Noise multiplier of the single Gaussian equivalent to ``event``, or ``None``.

    A ``Gaussian(z)``, or a ``Composed`` / ``SelfComposed`` nesting of Gaussians of one relation
    (also inside a ``SampledWithoutReplacement`` of all ``n`` records), is exactly a Gaussian
    mechanism with :math:`z_{\mathrm{eff}} = (\sum_i z_i^{-2})^{-1/2}` (the product of shifted
    isotropic Gaussians is one Gaussian of shift :math:`\sqrt{\sum_i\mu_i^2}`; Dong, Roth and
    Su (2022), Corollary 3.3). With ``full_gradient_only`` a ``MixtureOfGaussians`` counts as the
    Gaussian of shift ``shift_common`` (the pair DP-RSVRG produces on linear losses: an attainable
    lower bound, ``proofs_notes/accounting_pld_dp_rsvrg.md``, not an upper bound).

    Parameters
    ----------
    event : Event
        The event to reduce.
    full_gradient_only : bool, optional
        Treat a ``MixtureOfGaussians`` as its common Gaussian (default ``False``).

    Returns
    -------
    float or None
        :math:`z_{\mathrm{eff}}` (``inf`` when every shift is 0), or ``None`` when ``event`` is not
        such a Gaussian.
    """
    def inv_sq(e):
        if isinstance(e, Gaussian):
            if not e.noise_multiplier > 2.0 ** -511:  # z^-2 would overflow (** raised OverflowError)
                raise ValueError(f"effective_gaussian: noise multiplier z = {e.noise_multiplier:.3g} is below 2^-511 "
                                 "= 1.5e-154, so z^-2 overflows float64 (such an event has no finite privacy bound here)")
            return e.noise_multiplier ** -2.0
        if full_gradient_only and isinstance(e, MixtureOfGaussians):
            return e.shift_common ** 2
        if isinstance(e, SelfComposed):
            v = inv_sq(e.inner)
            return None if v is None else e.k * v
        if isinstance(e, Composed) and e.events:
            vs = [inv_sq(x) for x in e.events]
            return None if any(v is None for v in vs) else math.fsum(vs)
        if isinstance(e, SampledWithoutReplacement) and e.m == e.n:  # a "sample" of everything
            return inv_sq(e.inner)
        return None

    v = inv_sq(event)
    return None if v is None else (math.inf if v == 0 else v ** -0.5)


def _bad(where: str, why: str) -> ValueError:
    return ValueError(f"{where}: {why}")


def _local_minima(v) -> list[int]:
    """The indices ``j`` where ``v`` has a local minimum: ``v[j] < v[j - 1]`` (or ``j`` first) and
    ``v[j] <= v[j + 1]`` (or ``j`` last); of a plateau, its first point only."""
    n = len(v)
    return [j for j in range(n) if (j == 0 or v[j] < v[j - 1]) and (j == n - 1 or v[j] <= v[j + 1])]


def _has_switch(event: Event) -> bool:
    """Whether ``event`` holds a without-replacement sampling, whose RDP bound switches at :data:`WBK19_MAX_ORDER`."""
    if isinstance(event, SampledWithoutReplacement):
        return True
    return any(_has_switch(e) for e in getattr(event, "events", ())) or (hasattr(event, "inner") and _has_switch(event.inner))


class RdpAccountant:
    r"""Composes events in RDP and converts to (eps, delta).

    Rényi DP of Mironov (2017). Supports: ``Gaussian``; ``EpsilonDelta`` with ``delta = 0``;
    ``SampledWithoutReplacement`` of any supported replace-one event (Wang, Balle,
    Kasiviswanathan (2019), Theorem 9, and the coupling bound; for a Gaussian inner event also their Theorem 27);
    ``PoissonSampled(q, Gaussian(z, ADD_REMOVE))`` (Mironov, Talwar and Zhang (2019));
    ``Activation`` of a supported event; ``MixtureOfGaussians``; ``Composed`` / ``SelfComposed``
    (additivity, Mironov (2017), Proposition 1); ``WorstCase`` (pointwise maximum over orders).
    Anything else (an ``EpsilonDelta`` with ``delta > 0`` has no finite RDP; events of another
    neighbouring relation) raises ``ValueError``.

    Orders. With ``orders=None`` the accountant composes the events on :data:`DEFAULT_ORDERS` and
    reports the minimum over the canonical orders (:func:`canonical_order`:
    ``1 + 1e-6 exp(k log(1 + REFINE_RTOL))``, k >= 0, below 64, the integers above; adjacent ones
    :data:`REFINE_RTOL` ``(alpha - 1)`` or 1 apart) between the two neighbours of every local minimum
    of eps on the grid, by a Fibonacci search, each order computed on its own. A local minimum at an
    end of the grid is searched up to the end of the canonical orders (:data:`MAX_ORDER` above,
    ``1 + 1e-6`` below), so eps has no floor set by the grid. With without-replacement sampling
    the two sides of :data:`WBK19_MAX_ORDER`, where its bound switches and eps jumps, are searched
    apart. For an eps unimodal in the order between grid orders (on each side of that switch) this
    is the minimum over the whole canonical grid, so it does not depend on the grid the search
    starts from. Explicit ``orders`` are used as given.

    Parameters
    ----------
    orders : array_like or None, optional
        RDP orders :math:`\alpha > 1`; ``None`` (default) for the adaptive grid.
    relation : str, optional
        Neighbouring relation, ``REPLACE_ONE`` (default) or ``ADD_REMOVE``; every event must use it.

    Raises
    ------
    ValueError
        If an order is not finite or not > 1, or ``relation`` is unknown.
    """

    def __init__(self, orders=None, relation: str = REPLACE_ONE):
        self._adaptive = orders is None
        self.orders = _orders("RdpAccountant", DEFAULT_ORDERS if orders is None else orders)
        if not isinstance(relation, str) or relation not in (REPLACE_ONE, ADD_REMOVE):
            raise ValueError(f"RdpAccountant: unknown relation {relation!r} (use {REPLACE_ONE!r} or {ADD_REMOVE!r})")
        self.relation = relation
        self._rdp = np.zeros_like(self.orders)
        self._events: list[tuple[Event, int]] = []

    # ---------------------------------------------------------------- the one dispatch
    def _rdp_of(self, event: Event, a: np.ndarray | None) -> np.ndarray | None:
        """Validate ``event`` (raise ``ValueError`` if it cannot be bounded); with orders ``a`` also
        return its RDP curve there, with ``a = None`` only validate."""
        where = "RdpAccountant"
        if not isinstance(event, Event):
            raise _bad(where, f"not an event: {event!r}")
        if event.relation != self.relation:
            raise _bad(where, f"event relation {event.relation!r} differs from the accountant's {self.relation!r}")
        if isinstance(event, Gaussian):
            return None if a is None else gaussian_rdp(a, event.noise_multiplier)
        if isinstance(event, EpsilonDelta):
            if event.delta > 0:
                raise _bad(where, f"an (eps, delta) event with delta = {event.delta:g} > 0 has no finite RDP bound")
            return None if a is None else pure_dp_rdp(a, event.eps)
        if isinstance(event, MixtureOfGaussians):
            if a is None:
                return None
            out = mixture_of_gaussians_rdp(a, event.shift_common, event.shift_rare, event.p_rare)
            if event.shift_sample is not None and event.shift_sample > 0:
                out = np.minimum(out, mixture_triangle_rdp(a, event.shift_common, event.shift_sample, event.p_rare))
            return out
        if isinstance(event, SampledWithoutReplacement):
            self._rdp_of(event.inner, None)
            if a is None:
                return None
            return sampled_without_replacement_rdp(a, event.q, lambda o: self._rdp_of(event.inner, o), effective_gaussian(event.inner))
        if isinstance(event, PoissonSampled):
            if not isinstance(event.inner, Gaussian):
                raise _bad(where, "PoissonSampled is only bounded for a Gaussian inner event (MTZ19)")
            return None if a is None else poisson_gaussian_rdp(a, event.q, event.inner.noise_multiplier)
        if isinstance(event, Activation):
            inner = self._rdp_of(event.inner, a)
            return None if a is None else activation_rdp(a, event.rho, inner)
        if isinstance(event, SelfComposed):
            inner = self._rdp_of(event.inner, a)
            return None if a is None else event.k * inner
        if isinstance(event, Composed):
            parts = [self._rdp_of(e, a) for e in event.events]
            return None if a is None else np.sum(parts, axis=0) if parts else np.zeros_like(a)
        if isinstance(event, WorstCase):
            parts = [self._rdp_of(e, a) for e in event.events]
            return None if a is None else np.max(np.array(parts), axis=0)
        raise _bad(where, f"cannot bound {type(event).__name__}")

    # ---------------------------------------------------------------- public API
    def supports(self, event: Event) -> bool:
        """Whether this accountant can bound ``event`` (the same dispatch, without computing)."""
        try:
            self._rdp_of(event, None)
        except ValueError:
            return False
        return True

    def rdp(self, event: Event, orders=None) -> np.ndarray:
        """RDP curve of ``event`` at ``orders`` (default: the accountant's grid)."""
        a = self.orders if orders is None else _orders("RdpAccountant.rdp", orders)
        self._rdp_of(event, None)
        return self._rdp_of(event, a)

    def compose(self, event: Event, count: int = 1) -> "RdpAccountant":
        """Add ``count`` adaptive repetitions of ``event`` (RDP is additive)."""
        count = check_int("RdpAccountant.compose", "count", count, 1)
        self._rdp = self._rdp + count * self.rdp(event)
        self._events.append((event, count))
        return self

    @property
    def rdp_curve(self) -> np.ndarray:
        return self._rdp.copy()

    def _curve_at(self, a: np.ndarray) -> np.ndarray:
        out = np.zeros_like(a)
        for e, k in self._events:
            out = out + k * self._rdp_of(e, a)
        return out

    def get_epsilon(self, delta: float, method: str = "improved") -> float:
        """Smallest eps over the orders such that the composed events are (eps, delta)-DP."""
        return self.get_epsilon_and_order(delta, method)[0]

    def get_epsilon_and_order(self, delta: float, method: str = "improved") -> tuple[float, float]:
        r"""Smallest eps over the orders, and the order attaining it (with the default orders: over the canonical orders, see the class).

        Parameters
        ----------
        delta : float
            Target :math:`\delta \in (0, 1)`.
        method : str, optional
            ``"improved"`` (default, :func:`rdp_to_dp_improved`) or ``"classical"``
            (:func:`rdp_to_dp_classical`).

        Returns
        -------
        eps : float
            The smallest :math:`\epsilon` found.
        order : float
            The order attaining it.

        Raises
        ------
        ValueError
            If ``method`` is unknown or ``delta`` is not in (0, 1).
        """
        if method not in ("improved", "classical"):
            raise ValueError(f"RdpAccountant.get_epsilon: method must be 'improved' or 'classical' (got {method!r})")
        convert = rdp_to_dp_improved if method == "improved" else rdp_to_dp_classical
        delta = check_delta("RdpAccountant.get_epsilon", delta)
        a, r = self.orders, self._rdp
        if not self._adaptive or not self._events:
            return convert(a, r, delta)
        # the answer: the smallest eps over the canonical orders around every local minimum of eps on
        # the grid, not only around the grid's best order. A local minimum at an end of the grid is
        # searched up to the end of the canonical orders (MAX_ORDER above, 1 + ORDER_FLOOR below), so
        # the grid sets no floor on eps. With without-replacement sampling eps is not continuous in the
        # order: the bound switches at WBK19_MAX_ORDER, so each side of the switch is searched on its
        # own (its ends count as ends), and the best basin can lie above the switch while the grid's
        # best order is at it
        # (test_order_search_finds_the_global_minimum_on_either_side_of_the_without_replacement_switch)
        e = np.maximum(_improved_eps(a, r, delta), 0.0) if method == "improved" else _classical_eps(a, r, delta)
        floor, top = canonical_order(0), MAX_ORDER
        # the pieces of the order axis searched apart, each with the orders its brackets may reach
        if any(_has_switch(ev) for ev, _ in self._events):
            pieces = [(a <= WBK19_MAX_ORDER, floor, WBK19_MAX_ORDER), (a > WBK19_MAX_ORDER, WBK19_MAX_ORDER + 1, top)]
        else:
            pieces = [(np.ones(len(a), dtype=bool), floor, top)]
        found = (math.inf, math.inf)
        for inside, start, end in pieces:
            o = a[inside]
            for j in _local_minima(e[inside]):
                left = float(o[j - 1]) if j > 0 else float(start)
                right = float(o[j + 1]) if j < len(o) - 1 else float(end)
                found = min(found, self._canonical_minimum(left, right, float(o[j]), delta, convert))  # ties: the lower order
        return found

    def _canonical_minimum(self, left: float, right: float, best: float, delta: float, convert) -> tuple[float, float]:
        """Smallest eps over the canonical orders (:func:`canonical_order`) from the one at or below
        ``left`` to the one at or above ``right``, and its order (the first, if several tie); the two
        canonical orders around the grid order ``best`` are always among those compared.

        The bracket is first scanned at :data:`BRACKET_SCAN` + 1 evenly spaced canonical orders; then
        a Fibonacci search (the golden-section search on the integers: one new order per step) runs
        between the neighbours of every local minimum of the scan. Each order's RDP is computed on its
        own (so its value does not depend on which other orders an accountant happened to evaluate).
        For an eps that is unimodal in the order between scan points (the conversions are, in
        practice), this is the minimum over the whole canonical grid: one number, whatever grid the
        search started from. The scan finds a second basin (the DP-RSVRG triangle bound kinks at
        every half-integer order, and where two bounds cross) that a search of the whole bracket
        could end outside of."""
        memo = {}

        def f(k):  # eps at the k-th canonical order
            if k not in memo:
                al = np.array([canonical_order(k)])
                memo[k] = float(convert(al, self._curve_at(al), delta)[0])
            return memo[k]

        def fibonacci(lo: int, hi: int) -> range:
            """The last few indices of a Fibonacci search on [lo, hi] (one of them the minimiser of a unimodal f)."""
            fib = [1, 1]  # the Fibonacci numbers up to the first >= hi - lo: [lo, lo + fib[-1]], +inf past hi
            while fib[-1] < hi - lo:
                fib.append(fib[-1] + fib[-2])
            n = len(fib) - 1
            while n > 2:  # the minimum lies in [lo, lo + fib[n]]; probes at lo + fib[n - 2] < lo + fib[n - 1]
                m2 = lo + fib[n - 1]
                if m2 > hi or f(lo + fib[n - 2]) <= f(m2):
                    n -= 1  # keep [lo, lo + fib[n - 1]]
                else:
                    lo, n = lo + fib[n - 2], n - 1  # keep [lo + fib[n - 2], lo + fib[n]], of length fib[n - 1]
            return range(lo, min(lo + fib[n], hi) + 1)

        lo, hi = canonical_index(left, up=False), canonical_index(right, up=True)
        scan = sorted({lo + (hi - lo) * i // BRACKET_SCAN for i in range(BRACKET_SCAN + 1)})
        # the canonical orders next to the grid's local minimum are compared too: where eps has a cusp
        # there, a search can end beside it
        found = {canonical_index(best, up=False), canonical_index(best, up=True)}
        for j in _local_minima([f(k) for k in scan]):
            found.update(fibonacci(scan[max(j - 1, 0)], scan[min(j + 1, len(scan) - 1)]))
        k = min(sorted(found), key=f)
        return f(k), canonical_order(k)
