"""The rigorous record-level accountant of a whole PriRFed run (Huang et al. (2024) Algorithm 1).

Setting: N agents, s sampled per round without replacement, T rounds; record-level replace-one
adjacency. A record lives in one agent's data, so in a round only that agent's local training
reads it (parallel composition: ONE local training per round, not s), and that agent takes part
with probability ``rho = s / N``. When it does not, the round's output does not depend on the
record. So one round is the *activation* ``(1 - rho) U + rho P`` vs ``(1 - rho) U + rho Q``
(``P, Q``: outputs of the round given that the agent takes part, on the two neighbouring
datasets). Derivations, and why Theorem 4.2 of Huang et al. (2024) fails: ``proofs_notes/accounting_theorem_4_2.md``.

- Black-box (eps, delta) local trainer: per round ``(eps, rho delta)`` only (eps is NOT
  amplified: ``tests/accounting/test_counterexample.py``). Over T rounds: advanced composition
  (:func:`blackbox_advanced`), or the exact optimal composition of the round's dominating pair
  (:func:`blackbox_exact_epsilon`), which generalises Kairouz-Oh-Viswanath to the activated pair.
- RDP local trainers (DP-RSGD, DP-RSVRG): per round the activation RDP bound, T rounds compose.

Examples
--------
A round with a black-box (eps, delta) trainer keeps eps and scales delta by rho; with one agent
and one round the exact optimal accountant gives back eps; with full participation a run is plain
T-fold composition (five Gaussians at z = 2 are one Gaussian at z = 2/sqrt(5), exact in PLD):

>>> import numpy as np
>>> from prirfed.reference.accounting.events import Gaussian
>>> from prirfed.reference.accounting.rdp import RdpAccountant
>>> from prirfed.reference.accounting.prirfed_accountant import (blackbox_exact_epsilon,
...     blackbox_round, prirfed_epsilon)
>>> eps, delta = blackbox_round(0.15, 1e-4, rho=0.01)
>>> eps, bool(np.isclose(delta, 1e-6, rtol=1e-15))
(0.15, True)
>>> bool(np.isclose(blackbox_exact_epsilon(0.15, 1e-4, 1.0, 1, 1e-4), 0.15, rtol=1e-8))
True
>>> run = prirfed_epsilon(Gaussian(2.0), N=10, s=10, T=5, delta=1e-5, accountant="rdp")
>>> plain = RdpAccountant().compose(Gaussian(2.0), 5).get_epsilon(1e-5)
>>> bool(np.isclose(run, plain, rtol=1e-12))
True
>>> from prirfed.reference.accounting.pld import gaussian_delta
>>> exact = prirfed_epsilon(Gaussian(2.0), N=10, s=10, T=5, delta=1e-5)
>>> bool(abs(gaussian_delta(exact, 5 ** 0.5 / 2) - 1e-5) < 1e-15) and exact < plain
True
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from .events import (
    Activation,
    EpsilonDelta,
    Event,
    Gaussian,
    MixtureOfGaussians,
    SampledWithoutReplacement,
    SelfComposed,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_real,
)
from .paper import TABLE_1_DELTA, TABLE_1_DELTA_HAT, TABLE_1_EPS, advanced_composition, table_1
from .rdp import RdpAccountant

__all__ = [
    "dp_rsgd_event",
    "dp_rsvrg_event",
    "prirfed_event",
    "prirfed_epsilon",
    "blackbox_round",
    "blackbox_advanced",
    "blackbox_round_pair",
    "blackbox_exact_delta",
    "blackbox_exact_epsilon",
    "rigorous_table_1",
]


def _agents(where, N, s, T):
    N = check_int(where, "N", N, 1)
    s = check_int(where, "s", s, 1)
    if s > N:
        raise ValueError(f"{where}: the number of sampled agents s = {s} exceeds N = {N} (by {s - N})")
    T = check_int(where, "T", T, 1)
    return N, s, T


def _pos(where, name, x):
    return check_positive(where, name, x)


def dp_rsgd_event(sigma: float, tau: float, b: int, N_i: int, K: int) -> Event:
    """Event of DP-RSGD, Algorithm 2 of Huang et al. (2024): K steps, batch b of N_i without replacement.

    The clipped batch mean has replace-one sensitivity ``2 tau / b`` (one clipped term of norm
    ``<= tau`` replaced by another), noise std ``sigma`` (tangent Gaussian, isotropic in an
    orthonormal basis), so each step is ``Gaussian(sigma b / (2 tau))`` on a without-replacement
    sample of ratio ``b / N_i``; K steps compose adaptively.
    """
    sigma = _pos("dp_rsgd_event", "sigma", sigma)
    tau = _pos("dp_rsgd_event", "tau", tau)
    N_i = check_int("dp_rsgd_event", "N_i", N_i, 1)
    b = check_int("dp_rsgd_event", "b", b, 1)
    if b > N_i:
        raise ValueError(f"dp_rsgd_event: batch size b = {b} exceeds N_i = {N_i} (by {b - N_i})")
    K = check_int("dp_rsgd_event", "K", K, 1)
    g = Gaussian(sigma * b / (2.0 * tau))
    step = g if b == N_i else SampledWithoutReplacement(N_i, b, g)
    return SelfComposed(step, K)


def dp_rsvrg_event(sigma: float, tau0: float, tau1: float, N_i: int, m: int, K: int) -> Event:
    """Event of DP-RSVRG, Algorithm 3 of Huang et al. (2024) (lead 17): ``m K`` inner steps, each a Gaussian mixture.

    Under replace-one of record j the noiseless full gradient ``g`` (clip radius ``tau0``) moves by
    ``<= 2 tau0 / N_i`` and enters every inner step; when the sampled index is j (probability
    ``1/N_i``) the two clipped per-sample terms (radius ``tau1``) add ``<= 4 tau1``. Shifts in noise
    units: ``c = (2 tau0 / N_i) / sigma``, ``d = (2 tau0 / N_i + 4 tau1) / sigma``; the per-sample
    part ``4 tau1 / sigma`` is recorded too, so the accountant takes the minimum of the paired
    joint-convexity bound and the weak-triangle bound (accounting_dp_rsvrg.md).
    """
    sigma = _pos("dp_rsvrg_event", "sigma", sigma)
    tau0 = _pos("dp_rsvrg_event", "tau0", tau0)
    tau1 = _pos("dp_rsvrg_event", "tau1", tau1)
    N_i = check_int("dp_rsvrg_event", "N_i", N_i, 1)
    m = check_int("dp_rsvrg_event", "m", m, 1)
    K = check_int("dp_rsvrg_event", "K", K, 1)
    c = 2.0 * tau0 / N_i
    step = MixtureOfGaussians(c / sigma, (c + 4.0 * tau1) / sigma, 1.0 / N_i, shift_sample=4.0 * tau1 / sigma)
    return SelfComposed(step, m * K)


def prirfed_event(local_event: Event, N: int, s: int, T: int) -> Event:
    """Event of a PriRFed run: T rounds of ``Activation(s / N, local_event)`` (parallel composition)."""
    N, s, T = _agents("prirfed_event", N, s, T)
    return SelfComposed(Activation(s / N, local_event), T)


def prirfed_epsilon(local_event: Event, N: int, s: int, T: int, delta: float, orders=None, method: str = "improved",
                    accountant="best") -> float:
    """eps of a whole PriRFed run at ``delta`` (T activated rounds of ``local_event``).

    ``accountant``: ``"best"`` (default: the smallest valid upper bound of the PLD and RDP
    accountants), ``"pld"``, ``"rdp"`` or an accountant object (:mod:`.accountants`). Explicit RDP
    ``orders`` or ``method="classical"`` select the RDP accountant with those settings.
    """
    from .accountants import epsilon

    delta = check_delta("prirfed_epsilon", delta)
    N, s, T = _agents("prirfed_epsilon", N, s, T)
    event = prirfed_event(local_event, N, s, T)
    if orders is not None or method != "improved":
        return RdpAccountant(orders).compose(event).get_epsilon(delta, method)
    return epsilon(event, delta, accountant, "prirfed_epsilon")


def blackbox_round(eps: float, delta: float, rho: float) -> tuple[float, float]:
    """One PriRFed round with an (eps, delta)-DP local trainer: ``(eps, rho delta)``-DP.

    Joint convexity of the hockey-stick divergence ``E_{e^eps}`` on the shared component ``U``.
    eps is not reduced in general (the counterexample of lead 1 attains it).
    """
    eps = check_epsilon("blackbox_round", eps)
    delta = check_delta("blackbox_round", delta, allow_zero=True)
    rho = check_probability("blackbox_round", rho, "rho")
    return eps, rho * delta


def blackbox_advanced(eps: float, delta: float, N: int, s: int, T: int, delta_hat: float) -> tuple[float, float]:
    """Corrected Theorem 4.2 (Huang et al. (2024)): T-fold composition of ``(eps, rho delta)`` rounds, ``rho = s/N``.

    ``eps' = min(T eps, sqrt(2 T ln(1/delta_hat)) eps + T eps (e^eps - 1))``,
    ``delta' = delta_hat + T rho delta`` (``delta' = T rho delta`` for the first branch; we report
    the larger, as Huang et al. (2024) does).
    """
    N, s, T = _agents("blackbox_advanced", N, s, T)
    e, d = blackbox_round(eps, delta, s / N)
    e_adv, d_adv = advanced_composition(e, d, T, delta_hat)
    return min(T * e, e_adv), d_adv


@lru_cache(maxsize=256)
def blackbox_round_pair(eps: float, delta: float, rho: float) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Dominating pair ``(A_rho, B_rho)`` of one round with a black-box (eps, delta) trainer.

    Atoms ``(A-only, +, -, null, B-only)``. Every (eps, delta)-DP pair is a post-processing of
    Kairouz-Oh-Viswanath's canonical pair ``A = (delta, (1-delta) e^eps/(1+e^eps),
    (1-delta)/(1+e^eps), 0)``, ``B`` its mirror; the round ``((1-rho)U + rho P, (1-rho)U + rho Q)``
    is then the post-processing of ``((1-rho) null + rho A, (1-rho) null + rho B)`` that sends
    ``null`` to ``U``. Returns the probability vectors of A_rho and B_rho.
    """
    eps = check_epsilon("blackbox_round_pair", eps)
    delta = check_delta("blackbox_round_pair", delta, allow_zero=True)
    rho = check_probability("blackbox_round_pair", rho, "rho")
    hi = (1 - delta) / (1 + math.exp(-eps))  # (1-delta) e^eps / (1 + e^eps)
    lo = (1 - delta) / (1 + math.exp(eps))
    A = (rho * delta, rho * hi, rho * lo, 1 - rho, 0.0)
    B = (0.0, rho * lo, rho * hi, 1 - rho, rho * delta)
    return A, B


@lru_cache(maxsize=64)
def _blackbox_delta_terms(eps: float, delta: float, rho: float, T: int):
    """Weights and parameters of the exact black-box curve, O(T) memory (see :func:`blackbox_exact_delta`).

    Returns ``(n, log_w, p, p_inf)``: active-round counts ``n`` with non-negligible log weights
    ``log_w[n] = log P[n rounds active, the other T - n inactive, no A-only atom]``, the plus-atom
    probability ``p = e^eps / (1 + e^eps)`` of an active round, and ``p_inf = 1 - (1 - rho delta)^T``.
    """
    from scipy import stats

    a_act = rho * (1.0 - delta)  # an active round without its A-only atom
    keep = 1.0 - rho * delta
    n = np.arange(T + 1)
    log_w = T * math.log1p(-rho * delta) + (stats.binom.logpmf(n, T, a_act / keep) if a_act < keep else np.where(n == T, 0.0, -np.inf))
    sel = log_w > log_w.max() - 80.0  # weights below e^-80 of the largest: < 1e-34 relative, dropped (optimistic by < T e^-80)
    p = 1.0 / (1.0 + math.exp(-eps))
    p_inf = -math.expm1(T * math.log1p(-rho * delta)) if delta > 0 else 0.0
    n, log_w = n[sel], log_w[sel]
    n.setflags(write=False)
    log_w.setflags(write=False)
    return n, log_w, p, p_inf


def blackbox_exact_delta(eps: float, delta: float, rho: float, T: int, eps_prime: float) -> float:
    """Exact ``delta(eps')`` of T adaptive rounds with a black-box (eps, delta) local trainer.

    Tight over all (eps, delta)-DP local trainers: the hockey-stick divergence of the T-fold
    product of the dominating pair of :func:`blackbox_round_pair`::

        delta(eps') = 1 - (1 - rho delta)^T + sum_d P_A[d] (1 - e^{eps' - d eps})_+

    where ``d`` = #plus - #minus atoms (privacy loss ``d eps``) among outcomes with no A-only
    atom. At ``rho = 1`` this is Kairouz-Oh-Viswanath's optimal composition (tested against
    their closed form). Evaluated in O(T) time and memory: conditioned on ``n`` active rounds
    (binomial weight), the ``n`` plus/minus atoms are randomized response, and its inner sum is
    ``P[Bin(n,p) > i*] - e^{eps'} P[Bin(n,p) < n - i*]`` with ``p = e^eps / (1 + e^eps)`` and
    ``i*`` the largest ``i`` with ``(2i - n) eps <= eps'`` (because
    ``p^i (1-p)^{n-i} e^{-(2i-n) eps} = p^{n-i} (1-p)^i``); both tails from the regularized
    incomplete beta function, combined in log space.
    """
    eps = check_epsilon("blackbox_exact_delta", eps)
    delta = check_delta("blackbox_exact_delta", delta, allow_zero=True)
    rho = check_probability("blackbox_exact_delta", rho, "rho")
    T = check_int("blackbox_exact_delta", "T", T, 1)
    eps_prime = check_real("blackbox_exact_delta", "eps_prime", eps_prime)
    if eps_prime < 0:
        raise ValueError(f"blackbox_exact_delta: eps_prime must be >= 0 (got eps_prime = {eps_prime:g})")
    return _blackbox_delta(eps, delta, rho, T, eps_prime)


def _blackbox_delta(eps: float, delta: float, rho: float, T: int, eps_prime: float) -> float:
    from scipy import special as sp

    n, log_w, p, p_inf = _blackbox_delta_terms(eps, delta, rho, T)
    i_star = np.floor((n + eps_prime / eps) / 2.0 + 1e-12).astype(np.int64)  # largest i with (2i - n) eps <= eps'
    k_lo = n - i_star - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        log_sf = np.log(sp.bdtrc(i_star, n, p))  # P[Bin(n,p) > i*]
        log_cdf = np.where(k_lo >= 0, np.log(sp.bdtr(np.maximum(k_lo, 0), n, p)), -np.inf)  # P[Bin(n,p) <= n - i* - 1]
        ratio = eps_prime + log_cdf - log_sf  # <= 0: every term (1 - e^{eps' - (2i-n) eps}) is >= 0
        g = np.where(np.isfinite(log_sf), np.exp(log_sf + log_w) * -np.expm1(np.minimum(ratio, 0.0)), 0.0)
    return p_inf + math.fsum(g)


def blackbox_exact_epsilon(eps: float, delta: float, rho: float, T: int, delta_prime: float, tol: float = 1e-10) -> float:
    """Smallest eps' with ``blackbox_exact_delta(...) <= delta_prime`` (bisection; ``math.inf`` if none).

    ``delta(eps')`` is continuous and non-increasing; it reaches its floor ``1 - (1 - rho delta)^T``
    at ``eps' = T eps``, so ``math.inf`` is returned when ``delta_prime`` is below that floor.
    Returns the upper end of the final bracket (so the result is sound) once the bracket is
    narrower than ``tol`` (absolute, ``0 < tol < inf``) or cannot be split further in floating
    point. O(T) memory, T = 10^5 in well under a second (benchmarks/RESULTS.md).
    """
    eps = check_epsilon("blackbox_exact_epsilon", eps)
    delta = check_delta("blackbox_exact_epsilon", delta, allow_zero=True)
    rho = check_probability("blackbox_exact_epsilon", rho, "rho")
    T = check_int("blackbox_exact_epsilon", "T", T, 1)
    delta_prime = check_delta("blackbox_exact_epsilon", delta_prime, "delta_prime")
    tol = check_positive("blackbox_exact_epsilon", "tol", tol)
    f = lambda e: _blackbox_delta(eps, delta, rho, T, e)  # noqa: E731
    hi = T * eps
    if f(hi) > delta_prime:
        return math.inf
    lo = 0.0
    if f(lo) <= delta_prime:
        return 0.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # the bracket is one ulp wide
            break
        if f(mid) <= delta_prime:
            hi = mid
        else:
            lo = mid
    return hi


def rigorous_table_1() -> list[dict]:
    """Table 1 of Huang et al. (2024) beside sound values for the same settings (black-box (0.15, 1e-4) trainer).

    Per cell: the paper's ``eps_prime, delta_prime`` (Theorem 4.2 as printed), ``eps_exact``:
    the exact optimal eps' at the same delta' (:func:`blackbox_exact_epsilon`) and ``eps_advanced``
    with its own ``delta_advanced`` (:func:`blackbox_advanced`, delta_hat = 1e-3).
    """
    out = []
    for c in table_1():
        rho = c["s"] / c["N"]
        e_exact = blackbox_exact_epsilon(TABLE_1_EPS, TABLE_1_DELTA, rho, c["T"], c["delta_prime"])
        e_adv, d_adv = blackbox_advanced(TABLE_1_EPS, TABLE_1_DELTA, c["N"], c["s"], c["T"], TABLE_1_DELTA_HAT)
        out.append(dict(c, eps_exact=e_exact, eps_advanced=e_adv, delta_advanced=d_adv))
    return out
