"""Rényi-DP accountant (Mironov 2017) for the events of :mod:`.events`.

Conventions. RDP of order ``alpha > 1``: ``eps(alpha) = sup_{D ~ D'} D_alpha(M(D) || M(D'))``;
the cumulant ``K(alpha) = (alpha - 1) eps(alpha)`` (001 writes ``K_R(lambda)`` with
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
    check_probability,
)

__all__ = [
    "DEFAULT_ORDERS",
    "gaussian_rdp",
    "pure_dp_rdp",
    "wbk19_theorem9_log_a",
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
    "RdpAccountant",
]

#: Order grid: fine near 1 (small-eps and heavy-mixture regimes need alpha - 1 ~ 1e-2), quarter
#: steps to 10, every integer to 64, then a geometric-ish tail to 256 (large noise multipliers).
#: Every integer 2..256 needed by the without-replacement interpolation is computed internally.
DEFAULT_ORDERS = np.array(
    sorted(
        set([1.01, 1.02, 1.05, 1.1, 1.25, 1.5, 1.75] + [x / 4 for x in range(8, 41)] + list(range(11, 65)) + [80, 96, 112, 128, 160, 192, 224, 256])
    ),
    dtype=np.float64,
)


def _orders(where: str, orders) -> np.ndarray:
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{where}: orders must be a non-empty 1-d array")
    bad = ~np.isfinite(a) | (a <= 1)
    if bad.any():
        raise ValueError(f"{where}: every order must be finite and > 1 (got {a[bad][0]!r})")
    return a


def _positive(where: str, name: str, x) -> float:
    x = float(x)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{where}: {name} must be finite and > 0 (got {name} = {x:.6g})")
    return x


def gaussian_rdp(orders, noise_multiplier: float) -> np.ndarray:
    """Gaussian mechanism: ``eps(alpha) = alpha Delta^2 / (2 sigma^2) = alpha / (2 z^2)``.

    Mironov 2017 Prop. 7; 001 Lemma 2 (``K(lambda) = lambda (lambda + 1) Delta^2 / (2 sigma^2)``).
    ``z = sigma / Delta`` with ``Delta`` the sensitivity under the relation in use.
    """
    a = _orders("gaussian_rdp", orders)
    z = _positive("gaussian_rdp", "noise_multiplier (sigma)", noise_multiplier)
    return a / (2.0 * z * z)


def pure_dp_rdp(orders, eps: float) -> np.ndarray:
    """An eps-DP mechanism is ``(alpha, min(eps, alpha eps^2 / 2))``-RDP.

    ``D_alpha <= D_inf <= eps`` (Mironov 2017 Prop. 3) and eps-DP implies ``eps^2/2``-zCDP
    (Bun & Steinke 2016 Prop. 1.4), i.e. ``D_alpha <= alpha eps^2 / 2``.
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


def wbk19_theorem9_log_a(alphas, q: float, eps_int: np.ndarray, eps_inf: float = math.inf) -> np.ndarray:
    r"""``log A(alpha)`` of Theorem 9 of Wang, Balle, Kasiviswanathan (2019) at integer orders ``alphas >= 2``.

    Subsampling without replacement (sample of size ``m = q n``), replace-one relation: if the
    inner mechanism is ``(j, eps(j))``-RDP then the subsampled one is ``(alpha, log A / (alpha-1))``
    with

    .. math::
        A = 1 + q^2 \binom{\alpha}{2}\min\{4(e^{\epsilon(2)}-1),\ e^{\epsilon(2)}\min\{2,(e^{\epsilon(\infty)}-1)^2\}\}
              + \sum_{j=3}^{\alpha} q^j \binom{\alpha}{j} e^{(j-1)\epsilon(j)} \min\{2, (e^{\epsilon(\infty)}-1)^j\}.

    ``eps_int[j]`` must hold ``eps(j)`` for ``j = 0..max(alphas)`` (entries 0, 1 unused). For the
    Gaussian ``eps(inf) = inf`` and both inner minima select 2. (001's proof of Lemma 3 prints
    the sum without the binomial ``C(alpha, j)``: an extraction or transcription slip.)
    """
    q = check_probability("wbk19_theorem9_log_a", q)
    al = np.atleast_1d(np.asarray(alphas))
    if al.size == 0 or np.any(al < 2) or np.any(al != np.round(al)):
        raise ValueError(f"wbk19_theorem9_log_a: orders must be integers >= 2 (got {al!r})")
    al = al.astype(int)
    amax = int(al.max())
    eps_int = np.asarray(eps_int, dtype=np.float64)
    if eps_int.shape[0] < amax + 1:
        raise ValueError(f"wbk19_theorem9_log_a: eps_int must have length >= {amax + 1} (got {eps_int.shape[0]})")
    eps_int = eps_int[: amax + 1]
    L = _log_binom_table(amax)[al]
    j = np.arange(amax + 1, dtype=np.float64)
    if math.isinf(eps_inf):
        log_min_j = np.full(amax + 1, math.log(2.0))
    else:
        with np.errstate(divide="ignore"):
            log_min_j = np.minimum(math.log(2.0), j * math.log(math.expm1(eps_inf)))
    e2 = float(eps_int[2])
    log_t2 = min(math.log(4.0) + e2 + math.log(-math.expm1(-e2)), e2 + float(log_min_j[2]))
    row = j * math.log(q) + (j - 1) * eps_int + log_min_j
    row[2] = 2 * math.log(q) + log_t2
    row[:2] = -np.inf
    terms = L + row[None, :]
    terms[:, 0] = 0.0  # the leading 1 of A
    rest = terms[:, 1:]
    m = rest.max(axis=1)
    out = np.empty(len(al))
    small = m <= 0  # then A - 1 <= amax: log1p keeps the relative precision of tiny log A
    out[small] = np.log1p(np.exp(rest[small]).sum(axis=1))
    big = ~small
    if big.any():
        mb = terms[big].max(axis=1, keepdims=True)
        out[big] = (mb + np.log(np.exp(terms[big] - mb).sum(axis=1, keepdims=True)))[:, 0]
    return out


def sampled_without_replacement_rdp(orders, q: float, inner_rdp_integer) -> np.ndarray:
    """RDP of a mechanism run on a without-replacement sample (ratio ``q``), replace-one relation.

    Integer orders: Theorem 9 of WBK19 (:func:`wbk19_theorem9_log_a`, the general upper bound,
    with ``eps(inf) = inf`` i.e. no assumption on the inner mechanism beyond its RDP curve).
    Fractional orders: linear interpolation of the cumulant ``K(alpha) = (alpha-1) eps(alpha)``
    between ``floor(alpha)`` and ``ceil(alpha)`` (with ``K(1) = 0``); sound because the true
    cumulant is convex in ``alpha`` (WBK19 Corollary 10; proof in accounting_subsampling.md).
    At every order the result is the minimum of that and :func:`coupling_subsampling_rdp`
    (both are upper bounds of the same quantity).
    ``inner_rdp_integer(int_orders)`` returns the inner RDP at integer orders ``2..``.
    At ``q = 1`` this returns the inner RDP itself (no subsampling).
    """
    a = _orders("sampled_without_replacement_rdp", orders)
    q = check_probability("sampled_without_replacement_rdp", q)
    if q == 1.0:
        return np.asarray(inner_rdp_integer(a), dtype=np.float64)
    lo = np.floor(a).astype(int)
    hi = np.ceil(a).astype(int)
    t = a - lo
    needed = np.unique(np.concatenate([lo, hi]))
    needed = needed[needed >= 2]
    amax = int(needed.max())
    eps_int = np.zeros(amax + 1)
    eps_int[2:] = inner_rdp_integer(np.arange(2, amax + 1, dtype=np.float64))
    log_a = np.zeros(amax + 1)
    log_a[needed] = wbk19_theorem9_log_a(needed, q, eps_int)
    K = (1 - t) * log_a[lo] + t * log_a[hi]
    K_coupling = (a - 1) * coupling_subsampling_rdp(a, q, inner_rdp_integer(a))
    return np.minimum(K, K_coupling) / (a - 1)


def coupling_subsampling_rdp(orders, q: float, inner_rdp) -> np.ndarray:
    """Without-replacement subsampling by the index coupling and joint convexity (replace-one).

    Run both neighbours on the same index set S: if the replaced index is not in S (probability
    ``1 - q``) the two laws coincide, otherwise the inputs are replace-one neighbours. Joint
    convexity of ``(p, q) -> p^alpha q^(1-alpha)`` gives
    ``eps'(alpha) <= log(1 + q (e^{(alpha-1) eps(alpha)} - 1)) / (alpha - 1)`` (the activation
    formula with ``rho = q``). Weaker than WBK19 Theorem 9 for small noise, but it tends to 0
    with the inner RDP, which Theorem 9 (general form, ``eps(inf) = inf``) does not: its
    ``j >= 3`` terms keep ``2 q^j C(alpha, j)``. :func:`sampled_without_replacement_rdp`
    takes the minimum of the two bounds at every order.
    """
    return activation_rdp(orders, q, inner_rdp)


def poisson_gaussian_log_a(alpha: float, q: float, z: float) -> float:
    r"""``log A_alpha`` of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019, Sections 3.2-3.3).

    ``A_alpha = E_{x ~ N(0, z^2)}[(1 - q + q e^{(2x-1)/(2z^2)})^alpha]`` =
    ``exp((alpha-1) D_alpha((1-q) N(0,z^2) + q N(1,z^2) || N(0,z^2)))`` (add/remove relation,
    sensitivity 1). Integer alpha: the binomial expansion (their (3.2)),
    ``A = sum_k C(alpha,k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 z^2)}``.
    Fractional alpha: split the integral at ``x0 = z^2 log(1/q - 1) + 1/2`` (where
    ``q r(x) = 1 - q``) and expand each side in the convergent generalized-binomial series
    (their Section 3.3); every term is a Gaussian tail in closed form (derivation in
    accounting_subsampling.md).
    """
    q = check_probability("poisson_gaussian_log_a", q)
    z = _positive("poisson_gaussian_log_a", "noise_multiplier (sigma)", z)
    alpha = float(alpha)
    if not (math.isfinite(alpha) and alpha > 1):
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
    lp = special.logsumexp(pos)
    if not neg:
        return float(lp)
    ln = special.logsumexp(neg)
    if ln >= lp - 1e-9:
        return _poisson_log_a_quad(alpha, q, z)
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
    """RDP of the Poisson-subsampled Gaussian, add/remove relation: ``log A_alpha / (alpha - 1)``.

    Mironov, Talwar, Zhang 2019, Theorem 4 / Section 3: for this mechanism the divergence
    ``D_alpha(mu || mu0)`` (``mu = (1-q) mu0 + q mu1``) dominates the reverse one, so it is the RDP.
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
    """Activation ("my agent takes part with probability rho") by joint convexity.

    For ``P' = (1-rho) U + rho P`` and ``Q' = (1-rho) U + rho Q``,
    ``e^{(alpha-1) D_alpha(P'||Q')} <= (1-rho) + rho e^{(alpha-1) D_alpha(P||Q)}``, so
    ``eps'(alpha) <= log(1 + rho (e^{(alpha-1) eps(alpha)} - 1)) / (alpha - 1)``
    (proof in accounting_theorem_4_2.md). Evaluated as a log-sum-exp (no overflow).
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
    """One DP-RSVRG inner step (lead 17): pair the mixture components, use joint convexity.

    ``e^{(alpha-1) D_alpha} <= (1-p) e^{(alpha-1) alpha c^2 / 2} + p e^{(alpha-1) alpha d^2 / 2}``
    with ``c = shift_common``, ``d = shift_rare`` in units of the noise std (``p = 1/N_i``).
    Derivation in accounting_dp_rsvrg.md.
    """
    a = _orders("mixture_of_gaussians_rdp", orders)
    c = float(shift_common)
    d = float(shift_rare)
    p = check_probability("mixture_of_gaussians_rdp", p_rare, "p_rare")
    if not (math.isfinite(c) and math.isfinite(d) and c >= 0 and d >= 0):
        raise ValueError(f"mixture_of_gaussians_rdp: shifts must be finite and >= 0 (got {c}, {d})")
    g = (a - 1) * a / 2.0
    if p == 1.0:
        return g * d * d / (a - 1)
    return _log_two_point(p, g * c * c, g * d * d) / (a - 1)


def mixture_triangle_rdp(orders, shift_common: float, shift_sample: float, p_rare: float) -> np.ndarray:
    """Tighter bound for one DP-RSVRG inner step by the weak triangle inequality (lead 17).

    Let ``P`` (dataset D) and ``R`` (neighbour D') be the step's laws and ``Q`` the law on D' with
    the full gradient ``g`` kept at its D value. ``P`` vs ``Q``: one uniformly sampled index of
    ``N_i`` (sample of size 1, ratio ``p = 1/N_i``) fed to a Gaussian whose mean moves by at most
    ``shift_sample`` (``4 tau1 / sigma``): WBK19 Theorem 9 / coupling
    (:func:`sampled_without_replacement_rdp`). ``Q`` vs ``R``: every component moves by the same
    ``c`` (``shift_common``): Gaussian RDP ``alpha c^2 / 2`` by joint convexity. Mironov 2017
    Prop. 11 with ``p = q = 2``:
    ``D_alpha(P||R) <= (alpha - 1/2)/(alpha - 1) D_{2 alpha}(P||Q) + D_{2 alpha - 1}(Q||R)``.
    """
    a = _orders("mixture_triangle_rdp", orders)
    c = float(shift_common)
    s = float(shift_sample)
    if not (math.isfinite(c) and math.isfinite(s) and c >= 0 and s > 0):
        raise ValueError(f"mixture_triangle_rdp: need shift_common >= 0 and shift_sample > 0 (got {c}, {s})")
    p = check_probability("mixture_triangle_rdp", p_rare, "p_rare")
    z = 1.0 / s
    d_pq = sampled_without_replacement_rdp(2 * a, p, lambda o: gaussian_rdp(o, z))
    d_qr = (2 * a - 1) * c * c / 2.0
    return (a - 0.5) / (a - 1) * d_pq + d_qr


def rdp_to_dp_classical(orders, rdp, delta: float) -> tuple[float, float]:
    """Classical conversion, Prop. 1 of 001 (Mironov 2017 Prop. 3): ``eps = rdp + log(1/delta)/(alpha-1)``.

    Returns ``(eps, best_order)`` minimised over the orders.
    """
    a = _orders("rdp_to_dp_classical", orders)
    delta = check_delta("rdp_to_dp_classical", delta)
    r = np.asarray(rdp, dtype=np.float64)
    eps = r + math.log(1 / delta) / (a - 1)
    i = int(np.nanargmin(eps))
    return float(eps[i]), float(a[i])


def rdp_to_dp_improved(orders, rdp, delta: float) -> tuple[float, float]:
    """Improved conversion (Canonne, Kamath, Steinke 2020 Prop. 12; Balle et al. 2020 Thm 21).

    ``eps = rdp + log((alpha-1)/alpha) - (log delta + log alpha)/(alpha - 1)``, minimised over the
    orders; a negative value means the mechanism is (0, delta)-DP, so the result is ``max(0, .)``.
    Never larger than :func:`rdp_to_dp_classical` (the difference is
    ``log(1-1/alpha) - log(alpha)/(alpha-1) <= 0``).
    """
    a = _orders("rdp_to_dp_improved", orders)
    delta = check_delta("rdp_to_dp_improved", delta)
    r = np.asarray(rdp, dtype=np.float64)
    eps = r + np.log1p(-1 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    i = int(np.nanargmin(eps))
    return max(0.0, float(eps[i])), float(a[i])


def lemma_2_moments_bound(lam: float, L0: float, n: int, sigma: float) -> float:
    """Lemma 2 of 001 as stated: ``K_R(lambda) <= 2 lambda (lambda+1) L0^2 / (n^2 sigma^2)``.

    This is exactly the Gaussian cumulant at ``alpha = lambda + 1`` with replace-one sensitivity
    ``2 L0 / n`` of the full-batch mean of ``L0``-Lipschitz terms (sound, tight).
    """
    lam = _positive("lemma_2_moments_bound", "lambda", lam)
    L0 = _positive("lemma_2_moments_bound", "L0", L0)
    n = _positive("lemma_2_moments_bound", "n", n)
    sigma = _positive("lemma_2_moments_bound", "sigma", sigma)
    return 2 * lam * (lam + 1) * L0 * L0 / (n * n * sigma * sigma)


def lemma_3_moments_bound(lam: float, L0: float, n: int, b: int, sigma: float) -> float:
    """Lemma 3 of 001 as stated: ``K_R(lambda) <= 15 (lambda+1) L0^2 / (n^2 sigma^2)``.

    Preconditions checked (ValueError if violated): ``sigma^2 >= 4 L0^2 / b^2``, ``b < n``,
    ``lambda <= 2 sigma^2 log(n / (b (lambda+1) (1 + b^2 sigma^2 / (4 L0^2)))) / 3``.
    001 gives no constant-level proof (it points to [51, Lemma 3.7]); the tests compare it with
    the WBK19 bound it claims to simplify (accounting_rdp.md).
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


class RdpAccountant:
    """Composes events in RDP on a fixed order grid and converts to (eps, delta).

    Supports: ``Gaussian``; ``EpsilonDelta`` with ``delta = 0``; ``SampledWithoutReplacement``
    of any supported replace-one event (WBK19 Thm 9); ``PoissonSampled(q, Gaussian(z,
    ADD_REMOVE))`` (MTZ19); ``Activation`` of a supported event; ``MixtureOfGaussians``;
    ``Composed`` / ``SelfComposed`` (additivity, Mironov 2017 Prop. 1); ``WorstCase`` (pointwise
    maximum over orders). Anything else (an
    ``EpsilonDelta`` with ``delta > 0`` has no finite RDP; events of another neighbouring
    relation) raises ``ValueError``.
    """

    def __init__(self, orders=None, relation: str = REPLACE_ONE):
        self.orders = _orders("RdpAccountant", DEFAULT_ORDERS if orders is None else orders)
        if relation not in (REPLACE_ONE, ADD_REMOVE):
            raise ValueError(f"RdpAccountant: unknown relation {relation!r}")
        self.relation = relation
        self._rdp = np.zeros_like(self.orders)

    def supports(self, event: Event) -> bool:
        try:
            self._check(event)
        except ValueError:
            return False
        return True

    def _check(self, event: Event) -> None:
        if not isinstance(event, Event):
            raise ValueError(f"RdpAccountant: not an event: {event!r}")
        if event.relation != self.relation:
            raise ValueError(f"RdpAccountant: event relation {event.relation!r} differs from the accountant's {self.relation!r}")
        if isinstance(event, (Gaussian, MixtureOfGaussians)):
            return
        if isinstance(event, EpsilonDelta):
            if event.delta > 0:
                raise ValueError(f"RdpAccountant: an (eps, delta) event with delta = {event.delta:g} > 0 has no finite RDP bound")
            return
        if isinstance(event, SampledWithoutReplacement):
            return self._check(event.inner)
        if isinstance(event, PoissonSampled):
            if not isinstance(event.inner, Gaussian):
                raise ValueError("RdpAccountant: PoissonSampled is only bounded for a Gaussian inner event (MTZ19)")
            return
        if isinstance(event, (Activation, SelfComposed)):
            return self._check(event.inner)
        if isinstance(event, (Composed, WorstCase)):
            for e in event.events:
                self._check(e)
            return
        raise ValueError(f"RdpAccountant: cannot bound {type(event).__name__}")

    def rdp(self, event: Event, orders=None) -> np.ndarray:
        """RDP curve of ``event`` at ``orders`` (default: the accountant's grid)."""
        self._check(event)
        a = self.orders if orders is None else _orders("RdpAccountant.rdp", orders)
        return self._rdp_of(event, a)

    def _rdp_of(self, event: Event, a: np.ndarray) -> np.ndarray:
        if isinstance(event, Gaussian):
            return gaussian_rdp(a, event.noise_multiplier)
        if isinstance(event, EpsilonDelta):
            return pure_dp_rdp(a, event.eps)
        if isinstance(event, MixtureOfGaussians):
            out = mixture_of_gaussians_rdp(a, event.shift_common, event.shift_rare, event.p_rare)
            if event.shift_sample is not None and event.shift_sample > 0:
                out = np.minimum(out, mixture_triangle_rdp(a, event.shift_common, event.shift_sample, event.p_rare))
            return out
        if isinstance(event, SampledWithoutReplacement):
            return sampled_without_replacement_rdp(a, event.q, lambda o: self._rdp_of(event.inner, o))
        if isinstance(event, PoissonSampled):
            return poisson_gaussian_rdp(a, event.q, event.inner.noise_multiplier)
        if isinstance(event, Activation):
            return activation_rdp(a, event.rho, self._rdp_of(event.inner, a))
        if isinstance(event, SelfComposed):
            return event.k * self._rdp_of(event.inner, a)
        if isinstance(event, Composed):
            out = np.zeros_like(a)
            for e in event.events:
                out = out + self._rdp_of(e, a)
            return out
        if isinstance(event, WorstCase):
            return np.max(np.array([self._rdp_of(e, a) for e in event.events]), axis=0)
        raise ValueError(f"RdpAccountant: cannot bound {type(event).__name__}")  # pragma: no cover

    def compose(self, event: Event, count: int = 1) -> "RdpAccountant":
        """Add ``count`` adaptive repetitions of ``event`` (RDP is additive)."""
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise ValueError(f"RdpAccountant.compose: count must be an integer >= 1 (got {count!r})")
        self._rdp = self._rdp + int(count) * self.rdp(event)
        return self

    @property
    def rdp_curve(self) -> np.ndarray:
        return self._rdp.copy()

    def get_epsilon(self, delta: float, method: str = "improved") -> float:
        """Smallest eps over the grid such that the composed events are (eps, delta)-DP."""
        return self.get_epsilon_and_order(delta, method)[0]

    def get_epsilon_and_order(self, delta: float, method: str = "improved") -> tuple[float, float]:
        if method == "improved":
            return rdp_to_dp_improved(self.orders, self._rdp, delta)
        if method == "classical":
            return rdp_to_dp_classical(self.orders, self._rdp, delta)
        raise ValueError(f"RdpAccountant.get_epsilon: method must be 'improved' or 'classical' (got {method!r})")
