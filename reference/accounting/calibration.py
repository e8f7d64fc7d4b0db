"""Noise calibration: sigma for a target (eps, delta), and the papers' noise formulas.

- :func:`paper_sigma_dp_rsgd`, :func:`paper_sigma_dp_rsvrg`: the formulas 000 uses in Section 5
  and 6 (from HMJG24 Theorem 1 and UHJM23 Claim 5) with the unspecified constants ``o``,
  ``o_tilde`` exposed (000 sets them to 1 in every experiment: ERRATA lead 3).
- :func:`epsilon_dp_rsgd`, :func:`epsilon_dp_rsvrg`, :func:`epsilon_prirfed`: the eps a given
  sigma really gives (RDP accountant, improved conversion).
- :func:`calibrate_sigma` and the three wrappers: the smallest sigma (to a relative tolerance)
  whose eps is at most the target, by bisection on ``log sigma`` (eps is non-increasing in
  sigma: every RDP bound used is non-increasing in the noise multiplier). The tangent-Gaussian
  calibration of Prop. 2 of 001 and the analytic Gaussian mechanism live in
  ``prirfed.reference.mechanisms`` (not duplicated here).

Examples
--------
The paper's DP-RSGD noise is ``sqrt(o K log(1/delta)) tau / (N_i eps)``; the calibrated sigma
is the smallest (to rtol) whose accounted eps meets the target:

>>> import math
>>> from prirfed.reference.accounting.calibration import (calibrate_sigma_dp_rsgd,
...     epsilon_dp_rsgd, paper_sigma_dp_rsgd)
>>> s = paper_sigma_dp_rsgd(0.5, 1e-5, K=100, tau=1.0, N_i=500)
>>> math.isclose(s, math.sqrt(100 * math.log(1e5)) / (500 * 0.5), rel_tol=1e-15)
True
>>> cal = calibrate_sigma_dp_rsgd(1.0, 1e-5, K=20, tau=1.0, N_i=100, b=100)
>>> cal.eps_at_sigma <= 1.0 < epsilon_dp_rsgd(cal.bracket[0], 1e-5, K=20, tau=1.0, N_i=100, b=100)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .events import check_delta, check_epsilon, check_int, check_positive
from .prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event
from .rdp import RdpAccountant

__all__ = [
    "paper_sigma_dp_rsgd",
    "paper_sigma_dp_rsvrg",
    "epsilon_dp_rsgd",
    "epsilon_dp_rsvrg",
    "epsilon_prirfed",
    "Calibration",
    "calibrate_sigma",
    "calibrate_sigma_dp_rsgd",
    "calibrate_sigma_dp_rsvrg",
    "calibrate_sigma_prirfed",
    "SECTION_6_SETTINGS",
    "noise_constants_table",
    "gaussian_exact_epsilon",
]


def _pos(where, name, x):
    return check_positive(where, name, x)


def paper_sigma_dp_rsgd(eps: float, delta: float, K: int, tau: float, N_i: int, o: float = 1.0) -> float:
    """000 Section 5.1 / 6 (HMJG24 Thm 1): ``sigma_i^2 = o_i K log(1/delta) tau^2 / (N_i^2 eps^2)``."""
    eps = check_epsilon("paper_sigma_dp_rsgd", eps)
    delta = check_delta("paper_sigma_dp_rsgd", delta)
    K = check_int("paper_sigma_dp_rsgd", "K", K, 1)
    tau = _pos("paper_sigma_dp_rsgd", "tau", tau)
    N_i = check_int("paper_sigma_dp_rsgd", "N_i", N_i, 1)
    o = _pos("paper_sigma_dp_rsgd", "o", o)
    return math.sqrt(o * K * math.log(1 / delta)) * tau / (N_i * eps)


def paper_sigma_dp_rsvrg(eps: float, delta: float, m: int, K: int, tau: float, N_i: int, o_tilde: float = 1.0) -> float:
    """000 Section 5.2 / 6 (UHJM23 Claim 5): ``sigma_i^2 = o~_i m K log(1/delta) tau^2 / (N_i^2 eps^2)``."""
    eps = check_epsilon("paper_sigma_dp_rsvrg", eps)
    delta = check_delta("paper_sigma_dp_rsvrg", delta)
    m = check_int("paper_sigma_dp_rsvrg", "m", m, 1)
    K = check_int("paper_sigma_dp_rsvrg", "K", K, 1)
    tau = _pos("paper_sigma_dp_rsvrg", "tau", tau)
    N_i = check_int("paper_sigma_dp_rsvrg", "N_i", N_i, 1)
    o_tilde = _pos("paper_sigma_dp_rsvrg", "o_tilde", o_tilde)
    return math.sqrt(o_tilde * m * K * math.log(1 / delta)) * tau / (N_i * eps)


def _eps_of(event, delta, orders=None):
    acc = RdpAccountant(orders)
    acc.compose(event)
    return acc.get_epsilon(delta)


def epsilon_dp_rsgd(sigma: float, delta: float, K: int, tau: float, N_i: int, b: int, orders=None) -> float:
    """eps of DP-RSGD (000 Alg. 2) with noise std sigma, at delta (RDP, improved conversion)."""
    delta = check_delta("epsilon_dp_rsgd", delta)
    return _eps_of(dp_rsgd_event(sigma, tau, b, N_i, K), delta, orders)


def epsilon_dp_rsvrg(sigma: float, delta: float, m: int, K: int, tau0: float, tau1: float, N_i: int, orders=None) -> float:
    """eps of DP-RSVRG (000 Alg. 3, lead 17 mixture bound) with noise std sigma, at delta."""
    delta = check_delta("epsilon_dp_rsvrg", delta)
    return _eps_of(dp_rsvrg_event(sigma, tau0, tau1, N_i, m, K), delta, orders)


def epsilon_prirfed(local_event, N: int, s: int, T: int, delta: float, orders=None) -> float:
    """eps of a whole PriRFed run (activation per round, T rounds) at delta."""
    delta = check_delta("epsilon_prirfed", delta)
    return _eps_of(prirfed_event(local_event, N, s, T), delta, orders)


@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate_sigma`: ``sigma`` (= upper end of the final bracket, so
    ``eps(sigma) <= target``), the final bracket ``(lo, hi)`` with ``eps(lo) > target``, the
    relative tolerance reached, and ``eps_at_sigma``."""

    sigma: float
    bracket: tuple[float, float]
    rtol: float
    eps_at_sigma: float
    evaluations: int


def calibrate_sigma(eps_of_sigma: Callable[[float], float], eps: float, sigma0: float = 1.0, rtol: float = 1e-6, max_iter: int = 200) -> Calibration:
    """Smallest sigma (within ``rtol``) with ``eps_of_sigma(sigma) <= eps``, by bisection on ``log sigma``.

    Requires ``eps_of_sigma`` non-increasing. The bracket is found by doubling/halving from
    ``sigma0``; raises ``ValueError`` if no bracket is found within ``max_iter`` steps.
    """
    eps = check_epsilon("calibrate_sigma", eps)
    sigma0 = _pos("calibrate_sigma", "sigma0", sigma0)
    rtol = _pos("calibrate_sigma", "rtol", rtol)
    n = 0
    lo = hi = sigma0
    e_hi = eps_of_sigma(hi)
    n += 1
    if e_hi <= eps:
        while True:
            lo = hi / 2
            e_lo = eps_of_sigma(lo)
            n += 1
            if e_lo > eps:
                break
            hi, e_hi = lo, e_lo
            if n > max_iter:
                raise ValueError(f"calibrate_sigma: eps({lo:.3g}) = {e_lo:.3g} still <= target {eps:g}; no lower bracket")
    else:
        while e_hi > eps:
            lo = hi
            hi = hi * 2
            e_hi = eps_of_sigma(hi)
            n += 1
            if n > max_iter:
                raise ValueError(f"calibrate_sigma: eps({hi:.3g}) = {e_hi:.3g} still > target {eps:g}; no upper bracket")
    while hi / lo - 1 > rtol:
        mid = math.sqrt(lo * hi)
        e_mid = eps_of_sigma(mid)
        n += 1
        if e_mid <= eps:
            hi, e_hi = mid, e_mid
        else:
            lo = mid
    return Calibration(sigma=hi, bracket=(lo, hi), rtol=hi / lo - 1, eps_at_sigma=e_hi, evaluations=n)


def calibrate_sigma_dp_rsgd(eps: float, delta: float, K: int, tau: float, N_i: int, b: int, rtol: float = 1e-6) -> Calibration:
    """sigma making DP-RSGD (eps, delta)-DP by the RDP accountant."""
    delta = check_delta("calibrate_sigma_dp_rsgd", delta)
    return calibrate_sigma(lambda s: epsilon_dp_rsgd(s, delta, K, tau, N_i, b), eps, sigma0=paper_sigma_dp_rsgd(eps, delta, K, tau, N_i), rtol=rtol)


def calibrate_sigma_dp_rsvrg(eps: float, delta: float, m: int, K: int, tau0: float, tau1: float, N_i: int, rtol: float = 1e-6) -> Calibration:
    """sigma making DP-RSVRG (eps, delta)-DP by the RDP accountant (mixture bound, lead 17)."""
    delta = check_delta("calibrate_sigma_dp_rsvrg", delta)
    return calibrate_sigma(
        lambda s: epsilon_dp_rsvrg(s, delta, m, K, tau0, tau1, N_i), eps, sigma0=paper_sigma_dp_rsvrg(eps, delta, m, K, max(tau0, tau1), N_i), rtol=rtol
    )


def calibrate_sigma_prirfed(eps: float, delta: float, N: int, s: int, T: int, trainer: str = "dp_rsgd", rtol: float = 1e-6, **kw) -> Calibration:
    """sigma of the local trainer making a whole PriRFed run (eps, delta)-DP (record level).

    ``trainer="dp_rsgd"`` needs ``K, tau, N_i, b``; ``trainer="dp_rsvrg"`` needs
    ``m, K, tau0, tau1, N_i``.
    """
    delta = check_delta("calibrate_sigma_prirfed", delta)
    if trainer == "dp_rsgd":
        make = lambda sg: dp_rsgd_event(sg, kw["tau"], kw["b"], kw["N_i"], kw["K"])  # noqa: E731
        s0 = paper_sigma_dp_rsgd(eps, delta, kw["K"], kw["tau"], kw["N_i"])
    elif trainer == "dp_rsvrg":
        make = lambda sg: dp_rsvrg_event(sg, kw["tau0"], kw["tau1"], kw["N_i"], kw["m"], kw["K"])  # noqa: E731
        s0 = paper_sigma_dp_rsvrg(eps, delta, kw["m"], kw["K"], max(kw["tau0"], kw["tau1"]), kw["N_i"])
    else:
        raise ValueError(f"calibrate_sigma_prirfed: trainer must be 'dp_rsgd' or 'dp_rsvrg' (got {trainer!r})")
    return calibrate_sigma(lambda sg: epsilon_prirfed(make(sg), N, s, T, delta), eps, sigma0=s0, rtol=rtol)


#: Experiment settings of 000 Section 6 (local-trainer level; T is not stated in the text).
#: ``b = None`` means the batch size is not stated: we use the full batch b = N_i (assumption).
#: Figure 1's sphere runs do not print N, N_i in the extracted text; DP-RSGD's eps depends only on
#: b / N_i there, so N_i = 100 stands in; its DP-RSVRG column (needs N, N_i) is omitted.
SECTION_6_SETTINGS = (
    [dict(experiment="sphere synthetic, Fig. 1 col. 1", trainer="dp_rsgd", eps=e, delta=1e-5, K=1, N_i=100, b=100) for e in (0.08, 0.15, 0.3)]
    + [dict(experiment="sphere synthetic, Fig. 1 col. 2", trainer="dp_rsgd", eps=e, delta=1e-5, K=5, N_i=100, b=50) for e in (0.08, 0.15, 0.3)]
    + [dict(experiment=f"sphere MNIST N={N}", trainer="dp_rsgd", eps=0.15, delta=1e-4, K=3, N_i=Ni, b=None) for N, Ni in ((50, 1200), (60, 1000), (80, 750), (100, 600))]
    + [dict(experiment=f"sphere MNIST N={N}", trainer="dp_rsvrg", eps=0.15, delta=1e-4, K=3, N_i=Ni, m=(10 * N) // 3) for N, Ni in ((50, 1200), (60, 1000), (80, 750), (100, 600))]
    + [dict(experiment=f"SPD {name} N={N}", trainer=t, eps=0.15, delta=1e-4, K=3, N_i=Ni, **({"m": 10} if t == "dp_rsvrg" else {"b": None}))
       for name, N, Ni in (("synthetic", 20, 250), ("synthetic", 50, 100), ("PATHMNIST", 50, 400), ("PATHMNIST", 100, 200)) for t in ("dp_rsgd", "dp_rsvrg")]
    + [dict(experiment="HSP WordNet N=9", trainer=t, eps=0.15, delta=1e-4, K=3, N_i=131, **({"m": 5} if t == "dp_rsvrg" else {"b": None})) for t in ("dp_rsgd", "dp_rsvrg")]
)


def gaussian_exact_epsilon(mu: float, delta: float, tol: float = 1e-12) -> float:
    """Exact eps at ``delta`` of the Gaussian mechanism with shift ``mu = Delta / sigma`` (Balle & Wang 2018).

    Bisection on :func:`prirfed.reference.mechanisms.gaussian_delta` (decreasing in eps); returns the
    upper end of the final bracket. A K-fold (adaptive) composition of Gaussian mechanisms with
    shifts ``mu`` is exactly a Gaussian mechanism with shift ``sqrt(K) mu`` (Dong, Roth, Su 2022,
    Cor. 3.3), attained by full-batch DP-RSGD on linear losses whose clipped gradients are fixed.
    """
    from prirfed.reference.mechanisms import gaussian_delta

    mu = check_positive("gaussian_exact_epsilon", "mu", mu)
    delta = check_delta("gaussian_exact_epsilon", delta)
    tol = check_positive("gaussian_exact_epsilon", "tol", tol)
    f = lambda e: gaussian_delta(e, 1.0, mu)  # noqa: E731
    if f(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) > delta:
        lo, hi = hi, 2 * hi
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if f(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def noise_constants_table() -> list[dict]:
    """ERRATA lead 3: for every Section 6 setting of 000, the eps the paper's sigma (o = o~ = 1,
    tau = tau0 = tau1 = 1; eps scales out of tau) really gives at the stated delta, and the sigma
    the stated eps really needs, with the constant ``o_needed = (sigma_needed / sigma_paper)^2``.
    ``eps_true`` and ``sigma_needed`` come from the RDP accountant (sound upper bounds);
    ``eps_exact`` and ``sigma_needed_exact`` (full-batch DP-RSGD only) are exact worst cases over
    all losses (analytic Gaussian mechanism of ``prirfed.reference.mechanisms``).
    """
    rows = []
    for st in SECTION_6_SETTINGS:
        eps, delta, K, N_i = st["eps"], st["delta"], st["K"], st["N_i"]
        if st["trainer"] == "dp_rsgd":
            b = N_i if st.get("b") is None else st["b"]
            sp = paper_sigma_dp_rsgd(eps, delta, K, 1.0, N_i)
            e_true = epsilon_dp_rsgd(sp, delta, K, 1.0, N_i, b)
            need = calibrate_sigma_dp_rsgd(eps, delta, K, 1.0, N_i, b).sigma
            # full batch: exact worst-case eps (K Gaussians with shift 2 tau / (N_i sigma) compose to sqrt(K) mu)
            e_exact = s_exact = None
            if b == N_i:
                from prirfed.reference.mechanisms import analytic_gaussian_sigma

                e_exact = gaussian_exact_epsilon(math.sqrt(K) * 2.0 / (N_i * sp), delta)
                s_exact = analytic_gaussian_sigma(eps, delta, math.sqrt(K) * 2.0 / N_i)
            extra = dict(b=b, b_stated=st.get("b") is not None, eps_exact=e_exact, sigma_needed_exact=s_exact)
        else:
            m = st["m"]
            sp = paper_sigma_dp_rsvrg(eps, delta, m, K, 1.0, N_i)
            e_true = epsilon_dp_rsvrg(sp, delta, m, K, 1.0, 1.0, N_i)
            need = calibrate_sigma_dp_rsvrg(eps, delta, m, K, 1.0, 1.0, N_i).sigma
            extra = dict(m=m, eps_exact=None, sigma_needed_exact=None)
        rows.append(dict(st, **extra, sigma_paper=sp, eps_true=e_true, sigma_needed=need, o_needed=(need / sp) ** 2))
    return rows
