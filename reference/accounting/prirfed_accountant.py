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
    r"""Event of DP-RSGD, Algorithm 2 of Huang et al. (2024): K steps, batch b of N_i without replacement.

    The clipped batch mean has replace-one sensitivity :math:`2\tau/b` (one clipped term of norm
    :math:`\le\tau` replaced by another), noise standard deviation :math:`\sigma` (tangent Gaussian,
    isotropic in an orthonormal basis), so each step is ``Gaussian(sigma b / (2 tau))`` on a
    without-replacement sample of ratio :math:`b/N_i` (the full batch when ``b == N_i``); K steps
    compose adaptively.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    tau : float
        Clipping threshold, > 0.
    b : int
        Batch size, ``1 <= b <= N_i``.
    N_i : int
        The agent's number of records, >= 1.
    K : int
        Local steps, >= 1.

    Returns
    -------
    Event
        ``SelfComposed(step, K)``.

    Raises
    ------
    ValueError
        If an argument is out of range or ``b > N_i``.
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
    r"""Event of DP-RSVRG, Algorithm 3 of Huang et al. (2024): ``m K`` inner steps, each a Gaussian mixture.

    Under replace-one of record :math:`j` the noiseless full gradient :math:`g` (clip radius
    :math:`\tau_0`) moves by at most :math:`2\tau_0/N_i` and enters every inner step; when the
    sampled index is :math:`j` (probability :math:`1/N_i`) the two clipped per-sample terms (radius
    :math:`\tau_1`) add at most :math:`4\tau_1`. Shifts in noise units:
    :math:`c = (2\tau_0/N_i)/\sigma`, :math:`d = (2\tau_0/N_i + 4\tau_1)/\sigma`; the per-sample part
    :math:`4\tau_1/\sigma` is recorded too, so the accountant takes the minimum of the paired
    joint-convexity bound and the weak-triangle bound (``proofs_notes/accounting_dp_rsvrg.md``).

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    tau0 : float
        Clipping threshold of the full gradient, > 0.
    tau1 : float
        Clipping threshold of the per-sample terms, > 0.
    N_i : int
        The agent's number of records, >= 1.
    m : int
        Inner-loop length, >= 1.
    K : int
        Outer local iterations, >= 1.

    Returns
    -------
    Event
        ``SelfComposed(MixtureOfGaussians(...), m * K)``.

    Raises
    ------
    ValueError
        If an argument is out of range.
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
    """Event of a PriRFed run: T rounds of ``Activation(s / N, local_event)`` (parallel composition).

    Huang et al. (2024), Algorithm 1, under record-level replace-one adjacency: in a round only the
    record's agent reads it, and it takes part with probability :math:`s/N`
    (``proofs_notes/accounting_theorem_4_2.md``).

    Parameters
    ----------
    local_event : Event
        One local training of one agent.
    N : int
        Number of agents, >= 1.
    s : int
        Agents sampled per round, ``1 <= s <= N``.
    T : int
        Rounds, >= 1.

    Returns
    -------
    Event
        ``SelfComposed(Activation(s / N, local_event), T)``.

    Raises
    ------
    ValueError
        If an argument is out of range or ``s > N``.
    """
    N, s, T = _agents("prirfed_event", N, s, T)
    return SelfComposed(Activation(s / N, local_event), T)


def prirfed_epsilon(local_event: Event, N: int, s: int, T: int, delta: float, orders=None, method: str = "improved",
                    accountant="best") -> float:
    r"""eps of a whole PriRFed run at ``delta`` (T activated rounds of ``local_event``).

    The run of Huang et al. (2024), Algorithm 1, accounted by :func:`prirfed_event`.

    Parameters
    ----------
    local_event : Event
        One local training of one agent.
    N : int
        Number of agents, >= 1.
    s : int
        Agents sampled per round, ``1 <= s <= N``.
    T : int
        Rounds, >= 1.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    orders : array_like or None, optional
        Explicit RDP orders; selects the RDP accountant with them.
    method : str, optional
        RDP conversion, ``"improved"`` (default) or ``"classical"`` (the latter selects the RDP
        accountant).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants),
        ``"pld"``, ``"rdp"`` or an accountant object (:mod:`.accountants`).

    Returns
    -------
    float
        The run's :math:`\epsilon` (an upper bound).

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1), an agent count is out of range, or the accountant cannot
        bound the event.
    """
    from .accountants import epsilon

    delta = check_delta("prirfed_epsilon", delta)
    N, s, T = _agents("prirfed_epsilon", N, s, T)
    event = prirfed_event(local_event, N, s, T)
    if orders is not None or method != "improved":
        return RdpAccountant(orders).compose(event).get_epsilon(delta, method)
    return epsilon(event, delta, accountant, "prirfed_epsilon")


def blackbox_round(eps: float, delta: float, rho: float) -> tuple[float, float]:
    r"""One PriRFed round with an (eps, delta)-DP local trainer: ``(eps, rho delta)``-DP.

    Joint convexity of the hockey-stick divergence :math:`E_{e^\epsilon}` on the shared component
    :math:`U` (the round of Huang et al. (2024), Algorithm 1; ``proofs_notes/accounting_theorem_4_2.md``).
    :math:`\epsilon` is not reduced in general (the counterexample of the errata page attains it).

    Parameters
    ----------
    eps : float
        Local :math:`\epsilon > 0`.
    delta : float
        Local :math:`\delta \in [0, 1)`.
    rho : float
        Activation probability in (0, 1].

    Returns
    -------
    eps_round, delta_round : float
        :math:`(\epsilon, \rho\delta)`.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    eps = check_epsilon("blackbox_round", eps)
    delta = check_delta("blackbox_round", delta, allow_zero=True)
    rho = check_probability("blackbox_round", rho, "rho")
    return eps, rho * delta


def blackbox_advanced(eps: float, delta: float, N: int, s: int, T: int, delta_hat: float) -> tuple[float, float]:
    r"""Corrected Theorem 4.2 (Huang et al. (2024)): T-fold composition of ``(eps, rho delta)`` rounds, ``rho = s/N``.

    :math:`\epsilon' = \min(T\epsilon, \sqrt{2T\ln(1/\hat\delta)}\,\epsilon + T\epsilon(e^\epsilon - 1))`,
    :math:`\delta' = \hat\delta + T\rho\delta` (:math:`\delta' = T\rho\delta` would do for the first
    branch; the larger is reported, as Huang et al. (2024) do).

    Parameters
    ----------
    eps : float
        Local :math:`\epsilon > 0`.
    delta : float
        Local :math:`\delta \in [0, 1)`.
    N : int
        Number of agents, >= 1.
    s : int
        Agents sampled per round, ``1 <= s <= N``.
    T : int
        Rounds, >= 1.
    delta_hat : float
        Slack :math:`\hat\delta \in (0, 1)` of advanced composition.

    Returns
    -------
    eps_prime, delta_prime : float
        The run's :math:`(\epsilon', \delta')`.

    Raises
    ------
    ValueError
        If an argument is out of range or ``s > N``.
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
    r"""Exact ``delta(eps')`` of T adaptive rounds with a black-box (eps, delta) local trainer.

    Tight over all :math:`(\epsilon, \delta)`-DP local trainers: the hockey-stick divergence of the
    T-fold product of the dominating pair of :func:`blackbox_round_pair`::

        delta(eps') = 1 - (1 - rho delta)^T + sum_d P_A[d] (1 - e^{eps' - d eps})_+

    where ``d`` = #plus - #minus atoms (privacy loss ``d eps``) among outcomes with no A-only atom.
    At ``rho = 1`` this is the optimal composition of Kairouz, Oh and Viswanath (2017), Theorem 3.3
    (tested against their closed form). Evaluated in O(T) time and memory: conditioned on ``n``
    active rounds (binomial weight), the ``n`` plus/minus atoms are randomized response, and its
    inner sum is ``P[Bin(n,p) > i*] - e^{eps'} P[Bin(n,p) < n - i*]`` with
    ``p = e^eps / (1 + e^eps)`` and ``i*`` the largest ``i`` with ``(2i - n) eps <= eps'``; both
    tails from the regularized incomplete beta function, combined in log space.

    Parameters
    ----------
    eps : float
        Local :math:`\epsilon > 0`.
    delta : float
        Local :math:`\delta \in [0, 1)`.
    rho : float
        Activation probability in (0, 1].
    T : int
        Rounds, >= 1.
    eps_prime : float
        :math:`\epsilon' \ge 0` at which the run's :math:`\delta` is evaluated.

    Returns
    -------
    float
        :math:`\delta(\epsilon')`.

    Raises
    ------
    ValueError
        If an argument is out of range or ``eps_prime < 0``.
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
    # i* = the largest i with (2i - n) eps <= eps': the quotient eps' / eps is off by an ulp at most,
    # so the floor is off by one at most, at the boundaries; one step each way against the comparison
    # itself settles it. (A guard of + 1e-12 inside the floor instead dropped the positive terms
    # of the losses within 2e-12 eps above eps': delta(T eps (1 - 1e-13)) came out 0, not 7.3e-14.)
    i_star = np.floor((n + eps_prime / eps) / 2.0).astype(np.int64)
    i_star = np.where((2 * i_star - n) * eps > eps_prime, i_star - 1, i_star)
    i_star = np.where((2 * (i_star + 1) - n) * eps <= eps_prime, i_star + 1, i_star)
    k_lo = n - i_star - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        log_sf = np.log(sp.bdtrc(i_star, n, p))  # P[Bin(n,p) > i*]
        log_cdf = np.where(k_lo >= 0, np.log(sp.bdtr(np.maximum(k_lo, 0), n, p)), -np.inf)  # P[Bin(n,p) <= n - i* - 1]
        ratio = eps_prime + log_cdf - log_sf  # <= 0: every term (1 - e^{eps' - (2i-n) eps}) is >= 0
        g = np.where(np.isfinite(log_sf), np.exp(log_sf + log_w) * -np.expm1(np.minimum(ratio, 0.0)), 0.0)
    return p_inf + math.fsum(g)


def blackbox_exact_epsilon(eps: float, delta: float, rho: float, T: int, delta_prime: float, tol: float = 1e-10) -> float:
    r"""Smallest eps' with ``blackbox_exact_delta(...) <= delta_prime`` (bisection; ``math.inf`` if none).

    :math:`\delta(\epsilon')` (:func:`blackbox_exact_delta`, generalising Kairouz, Oh and Viswanath (2017)
    to the activated pair) is continuous and non-increasing; it reaches its floor
    :math:`1 - (1 - \rho\delta)^T` at :math:`\epsilon' = T\epsilon`, so ``math.inf`` is returned
    when ``delta_prime`` is below that floor. Returns the upper end of the final bracket (so the
    result is sound) once the bracket is narrower than ``tol`` or cannot be split further in
    floating point. O(T) memory.

    Parameters
    ----------
    eps : float
        Local :math:`\epsilon > 0`.
    delta : float
        Local :math:`\delta \in [0, 1)`.
    rho : float
        Activation probability in (0, 1].
    T : int
        Rounds, >= 1.
    delta_prime : float
        Target :math:`\delta' \in (0, 1)`.
    tol : float, optional
        Absolute bracket width, > 0 (default 1e-10).

    Returns
    -------
    float
        :math:`\epsilon'` (0 if ``delta(0) <= delta_prime``, ``inf`` if unreachable).

    Raises
    ------
    ValueError
        If an argument is out of range.
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
    r"""Table 1 of Huang et al. (2024) beside sound values for the same settings (black-box (0.15, 1e-4) trainer).

    Returns
    -------
    list of dict
        Per cell: the paper's ``N, s, rho, T, eps_prime, delta_prime`` (Theorem 4.2 as printed),
        ``eps_exact``: the exact optimal :math:`\epsilon'` at the same :math:`\delta'`
        (:func:`blackbox_exact_epsilon`) and ``eps_advanced`` with its own ``delta_advanced``
        (:func:`blackbox_advanced`, :math:`\hat\delta` = 1e-3).
    """
    out = []
    for c in table_1():
        rho = c["s"] / c["N"]
        e_exact = blackbox_exact_epsilon(TABLE_1_EPS, TABLE_1_DELTA, rho, c["T"], c["delta_prime"])
        e_adv, d_adv = blackbox_advanced(TABLE_1_EPS, TABLE_1_DELTA, c["N"], c["s"], c["T"], TABLE_1_DELTA_HAT)
        out.append(dict(c, eps_exact=e_exact, eps_advanced=e_adv, delta_advanced=d_adv))
    return out
