"""Noise calibration: sigma for a target (eps, delta), and the papers' noise formulas.

- :func:`paper_sigma_dp_rsgd`, :func:`paper_sigma_dp_rsvrg`: the formulas Huang et al. (2024)
  use in Sections 5 and 6 (from Han et al. (2024), Theorem 1, and Utpala et al. (2023), Claim 5)
  with the unspecified constants ``o``, ``o_tilde`` exposed (Huang et al. (2024) set them to 1 in
  every experiment; see the errata page).
- :func:`epsilon_dp_rsgd`, :func:`epsilon_dp_rsvrg`, :func:`epsilon_prirfed`: the eps a given
  sigma really gives, by the accountant chosen with ``accountant=`` (``"best"``, the default: the
  smallest valid upper bound of the PLD and RDP accountants; ``"pld"``, ``"rdp"``, or an
  accountant object; see :mod:`.accountants`).
- :func:`calibrate_sigma` and the three wrappers: the smallest sigma of a fixed grid
  ``exp(k h)`` (adjacent points less than a relative tolerance apart) whose eps is at most the
  target, by a bracketing search on the grid index (eps is non-increasing in sigma) accelerated by
  regula falsi (Illinois) on ``log eps``. The answer does not depend on the starting guesses. The tangent-Gaussian
  calibration of Han et al. (2024), Proposition 2, and the analytic Gaussian mechanism live in
  ``prirfed.reference.mechanisms`` (not duplicated here).

Examples
--------
The paper's DP-RSGD noise is ``sqrt(o K log(1/delta)) tau / (N_i eps)``; the calibrated sigma
is the smallest of the grid (spacing below rtol) whose accounted eps meets the target:

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

import numpy as np

from .accountants import epsilon as _epsilon_of_event
from .accountants import resolve_accountant
from .events import Event, check_delta, check_epsilon, check_int, check_positive
from .prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event
from .rdp import RdpAccountant

__all__ = [
    "paper_sigma_dp_rsgd",
    "paper_sigma_dp_rsvrg",
    "epsilon_dp_rsgd",
    "epsilon_dp_rsvrg",
    "epsilon_prirfed",
    "epsilon_of_event",
    "Calibration",
    "calibrate_sigma",
    "calibration_grid_step",
    "MIN_RTOL",
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
    r"""The noise of DP-RSGD as Huang et al. (2024) set it, Sections 5.1 and 6 (from Han et al. (2024), Theorem 1): :math:`\sigma_i^2 = o_i K\log(1/\delta)\tau^2/(N_i^2\epsilon^2)`.

    The constant :math:`o_i` is unspecified in the paper (1 in every experiment); the
    :math:`\sigma` it gives is not certified to reach :math:`(\epsilon, \delta)` (see
    :func:`noise_constants_table`).

    Parameters
    ----------
    eps : float
        Target :math:`\epsilon > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    K : int
        Local steps.
    tau : float
        Clipping threshold, > 0.
    N_i : int
        The agent's number of records.
    o : float, optional
        The paper's constant :math:`o_i` (default 1).

    Returns
    -------
    float
        :math:`\sigma_i`.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    eps = check_epsilon("paper_sigma_dp_rsgd", eps)
    delta = check_delta("paper_sigma_dp_rsgd", delta)
    K = check_int("paper_sigma_dp_rsgd", "K", K, 1)
    tau = _pos("paper_sigma_dp_rsgd", "tau", tau)
    N_i = check_int("paper_sigma_dp_rsgd", "N_i", N_i, 1)
    o = _pos("paper_sigma_dp_rsgd", "o", o)
    return math.sqrt(o * K * math.log(1 / delta)) * tau / (N_i * eps)


def paper_sigma_dp_rsvrg(eps: float, delta: float, m: int, K: int, tau: float, N_i: int, o_tilde: float = 1.0) -> float:
    r"""The noise of DP-RSVRG as Huang et al. (2024) set it, Sections 5.2 and 6 (from Utpala et al. (2023), Claim 5): :math:`\sigma_i^2 = \tilde o_i mK\log(1/\delta)\tau^2/(N_i^2\epsilon^2)`.

    Parameters
    ----------
    eps : float
        Target :math:`\epsilon > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    m : int
        Inner-loop length.
    K : int
        Outer iterations.
    tau : float
        Clipping threshold, > 0.
    N_i : int
        The agent's number of records.
    o_tilde : float, optional
        The paper's constant :math:`\tilde o_i` (default 1).

    Returns
    -------
    float
        :math:`\sigma_i`.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    eps = check_epsilon("paper_sigma_dp_rsvrg", eps)
    delta = check_delta("paper_sigma_dp_rsvrg", delta)
    m = check_int("paper_sigma_dp_rsvrg", "m", m, 1)
    K = check_int("paper_sigma_dp_rsvrg", "K", K, 1)
    tau = _pos("paper_sigma_dp_rsvrg", "tau", tau)
    N_i = check_int("paper_sigma_dp_rsvrg", "N_i", N_i, 1)
    o_tilde = _pos("paper_sigma_dp_rsvrg", "o_tilde", o_tilde)
    return math.sqrt(o_tilde * m * K * math.log(1 / delta)) * tau / (N_i * eps)


def _eps_of(event, delta, orders=None, accountant="best", where: str = "epsilon"):
    """eps of ``event`` at ``delta`` by ``accountant`` (explicit RDP ``orders`` select the RDP accountant
    on those orders, the behaviour before the accountant choice existed)."""
    if orders is not None:
        return RdpAccountant(orders).compose(event).get_epsilon(delta)
    return _epsilon_of_event(event, delta, accountant, where)


def epsilon_of_event(event: Event, delta: float, accountant="best") -> float:
    r"""The :math:`\epsilon` of any event at ``delta`` by ``accountant`` (see :func:`.accountants.epsilon`; Zhu, Dong and Wang (2022) for the PLD, Mironov (2017) for RDP).

    Parameters
    ----------
    event : Event
        The privacy event.
    delta : float
        :math:`\delta \in (0, 1)`.
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    float
        An upper bound of :math:`\epsilon`.

    Raises
    ------
    ValueError
        If an argument is invalid or no accountant can bound the event.
    """
    return _eps_of(event, delta, accountant=accountant, where="epsilon_of_event")


def epsilon_dp_rsgd(sigma: float, delta: float, K: int, tau: float, N_i: int, b: int, orders=None, accountant="best") -> float:
    r"""The :math:`\epsilon` of DP-RSGD (Huang et al. (2024), Algorithm 2) with noise standard deviation ``sigma``, at ``delta``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    delta : float
        :math:`\delta \in (0, 1)`.
    K : int
        Local steps.
    tau : float
        Clipping threshold.
    N_i : int
        The agent's number of records.
    b : int
        Batch size (sampled without replacement).
    orders : sequence of float, optional
        RDP orders; when given, the RDP accountant on those orders is used (``accountant`` is ignored).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    float
        An upper bound of :math:`\epsilon`.

    Raises
    ------
    ValueError
        If an argument is invalid.
    """
    delta = check_delta("epsilon_dp_rsgd", delta)
    return _eps_of(dp_rsgd_event(sigma, tau, b, N_i, K), delta, orders, accountant, "epsilon_dp_rsgd")


def epsilon_dp_rsvrg(sigma: float, delta: float, m: int, K: int, tau0: float, tau1: float, N_i: int, orders=None, accountant="best") -> float:
    r"""The :math:`\epsilon` of DP-RSVRG (Huang et al. (2024), Algorithm 3; its inner step as a mixture of Gaussians) with noise standard deviation ``sigma``, at ``delta``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    delta : float
        :math:`\delta \in (0, 1)`.
    m : int
        Inner-loop length.
    K : int
        Outer iterations.
    tau0, tau1 : float
        Clipping thresholds of the full gradient and of the sampled gradients.
    N_i : int
        The agent's number of records.
    orders : sequence of float, optional
        RDP orders; when given, the RDP accountant on those orders is used (``accountant`` is ignored).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    float
        An upper bound of :math:`\epsilon`.

    Raises
    ------
    ValueError
        If an argument is invalid.
    """
    delta = check_delta("epsilon_dp_rsvrg", delta)
    return _eps_of(dp_rsvrg_event(sigma, tau0, tau1, N_i, m, K), delta, orders, accountant, "epsilon_dp_rsvrg")


def epsilon_prirfed(local_event, N: int, s: int, T: int, delta: float, orders=None, accountant="best") -> float:
    r"""The :math:`\epsilon` of a whole PriRFed run (Huang et al. (2024), Algorithm 1: ``T`` rounds, each activating the record's agent with probability :math:`s/N`), at ``delta``.

    Parameters
    ----------
    local_event : Event
        The event of the local trainer of one round (:func:`.prirfed_accountant.dp_rsgd_event`, ...).
    N : int
        Number of agents.
    s : int
        Agents per round.
    T : int
        Number of rounds.
    delta : float
        :math:`\delta \in (0, 1)`.
    orders : sequence of float, optional
        RDP orders; when given, the RDP accountant on those orders is used (``accountant`` is ignored).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    float
        An upper bound of :math:`\epsilon`.

    Raises
    ------
    ValueError
        If an argument is invalid.
    """
    delta = check_delta("epsilon_prirfed", delta)
    return _eps_of(prirfed_event(local_event, N, s, T), delta, orders, accountant, "epsilon_prirfed")


@dataclass(frozen=True)
class Calibration:
    r"""Result of :func:`calibrate_sigma`.

    Helper, not a paper formula: the result record of the calibration.

    Parameters
    ----------
    sigma : float
        The calibrated noise (the upper end of the final bracket, so ``eps(sigma) <= target``).
    bracket : tuple of float
        The final bracket ``(lo, hi)``, with ``eps(lo) > target``.
    rtol : float
        The relative width reached, ``hi / lo - 1``.
    eps_at_sigma : float
        The :math:`\epsilon` at ``sigma``.
    evaluations : int
        Number of calls of the accountant.
    """

    sigma: float
    bracket: tuple[float, float]
    rtol: float
    eps_at_sigma: float
    evaluations: int


#: Smallest ``rtol`` :func:`calibrate_sigma` takes: its grid ``exp(k h)`` must keep ``hi / lo - 1 <= rtol``
#: everywhere in float range, where ``k h`` (up to 709 in size) is rounded by up to 5.7e-14; the grid
#: step leaves a margin of 2^-7 rtol (7.8e-13 at this rtol) for that rounding.
MIN_RTOL = 1e-10


def calibration_grid_step(rtol: float) -> float:
    r"""The step :math:`h = (1 - 2^{-7})\log(1 + \mathrm{rtol})` of the grid :math:`\sigma_k = e^{kh}` of :func:`calibrate_sigma`.

    Helper, not a paper formula. Adjacent grid points are a factor :math:`e^h` apart, just below
    :math:`1 + \mathrm{rtol}`; the margin :math:`2^{-7}\mathrm{rtol}` absorbs the rounding of
    :math:`kh` and of the exponential, so the computed :math:`e^{kh}/e^{(k-1)h} - 1 \le \mathrm{rtol}`
    for every :math:`e^{kh}` in float range once :math:`\mathrm{rtol} \ge` ``MIN_RTOL``.

    Parameters
    ----------
    rtol : float
        The relative tolerance, in [``MIN_RTOL``, inf).

    Returns
    -------
    float
        :math:`h`.

    Raises
    ------
    ValueError
        If ``rtol`` is not a number at least ``MIN_RTOL``.
    """
    return _grid_step("calibration_grid_step", rtol)


def _grid_step(where: str, rtol) -> float:
    """:func:`calibration_grid_step`, with the refusal of a bad ``rtol`` under the caller's name."""
    rtol = _pos(where, "rtol", rtol)
    if not rtol >= MIN_RTOL:
        raise ValueError(f"{where}: rtol = {rtol:g} is below MIN_RTOL = {MIN_RTOL:g}: grid points that close are not "
                         "distinct after rounding everywhere in float range")
    return (1.0 - 2.0**-7) * math.log1p(rtol)


def calibrate_sigma(eps_of_sigma: Callable[[float], float], eps: float, sigma0: float = 1.0, rtol: float = 1e-6, max_iter: int = 200,
                    lower0: float | None = None, factor: float = 2.0) -> Calibration:
    r"""Smallest :math:`\sigma` of the grid :math:`\{e^{kh}: k \in \mathbb Z\}` (step :math:`h` of :func:`calibration_grid_step`, adjacent points less than ``rtol`` apart) with ``eps_of_sigma(sigma) <= eps``, for a non-increasing ``eps_of_sigma``.

    Helper, not a paper formula: a root-finding method (regula falsi with the Illinois
    modification, on :math:`(k, \log\epsilon(e^{kh}) - \log\epsilon)`, rounded to the grid).

    The answer is a property of ``eps_of_sigma``, ``eps`` and ``rtol`` alone: for a non-increasing
    ``eps_of_sigma`` it is the same whatever ``sigma0``, ``lower0``, ``factor`` and the search path
    (a caller's starting guesses change only how many evaluations it takes). Every evaluation is at
    a grid point. A bracket of grid points ``lo = e^{(k-1)h}`` and ``hi = e^{kh}`` with
    ``eps(lo) > eps >= eps(hi)`` is found by stepping down or up from the grid point nearest
    ``sigma0`` by ``factor``, then narrowed (every step keeps a bracket, so the result is sound whatever
    the interpolation does) until the two ends are adjacent; ``hi`` is returned, and
    ``hi / lo - 1 <= rtol``. The search stops at the evaluation that makes the ends adjacent: no call
    of ``eps_of_sigma`` is spent after that (each can be a whole PLD accounting). A step is a
    bisection of the grid interval when the bracket has not halved over the last two steps, so the
    narrowing takes at most about twice as many evaluations as a bisection. If eps stops decreasing
    as sigma grows (a floor no noise removes, such as an (eps, delta) part of the event) the target
    is refused as unreachable: at the first step up, from the twelfth on, at which eps is still
    above the target and has fallen by at most 1e-9 relative (of its new value) over the last ten
    steps up. If no bracket is found within ``max_iter`` evaluations, the ``ValueError`` says so.

    Parameters
    ----------
    eps_of_sigma : callable
        :math:`\sigma \mapsto \epsilon(\sigma)`, non-increasing.
    eps : float
        Target :math:`\epsilon > 0`.
    sigma0 : float, optional
        Starting point of the bracket search (default 1; the grid point nearest it is evaluated).
    rtol : float, optional
        Relative spacing of the grid, hence of the final bracket, at least ``MIN_RTOL`` = 1e-10
        (default 1e-6).
    max_iter : int, optional
        Maximum number of evaluations of the bracket search, >= 2 (a bracket takes two; default 200).
    lower0 : float, optional
        A hint for the lower end, tried first (the grid point at or below it) when ``eps(sigma0) <= eps``.
    factor : float, optional
        Growth of the bracket per step, > 1 (default 2; at least one grid step).

    Returns
    -------
    Calibration
        ``sigma`` (the upper end of the final bracket, so its eps meets the target), the bracket, the tolerance reached, the eps at ``sigma`` and the number of accountant calls.

    Raises
    ------
    ValueError
        If an argument is invalid, the search leaves float range, or no bracket is found (the message gives the numbers).
    """
    if not callable(eps_of_sigma):
        raise ValueError(f"calibrate_sigma: eps_of_sigma must be callable (got {eps_of_sigma!r})")
    eps = check_epsilon("calibrate_sigma", eps)
    sigma0 = _pos("calibrate_sigma", "sigma0", sigma0)
    h = _grid_step("calibrate_sigma", rtol)
    max_iter = check_int("calibrate_sigma", "max_iter", max_iter, 2)
    factor = _pos("calibrate_sigma", "factor", factor)
    if factor <= 1:
        raise ValueError(f"calibrate_sigma: factor must be > 1 (got {factor:g})")
    n = 0

    def f(k):
        nonlocal n
        sg = math.exp(k * h) if k * h < 709.7 else math.inf
        if not 0.0 < sg < math.inf:
            raise ValueError(f"calibrate_sigma: the search left float range at sigma = exp({k * h:.6g}) after {n} evaluations "
                             f"(target eps = {eps:g}); no bracket")
        n += 1
        v = float(eps_of_sigma(sg))
        if math.isnan(v):
            raise ValueError(f"calibrate_sigma: eps_of_sigma({sg:.6g}) returned NaN")
        return v

    step = max(1, round(math.log(factor) / h))
    kb = round(math.log(sigma0) / h)
    e_hi = f(kb)
    if e_hi <= eps:
        down = step
        if lower0 is not None:
            lower0 = _pos("calibrate_sigma", "lower0", lower0)
            k_hint = math.floor(math.log(lower0) / h)
            if k_hint < kb:
                down = kb - k_hint
        while True:
            ka = kb - down
            e_lo = f(ka)
            if e_lo > eps:
                break
            kb, e_hi = ka, e_lo
            down = min(step, 2 * down)  # a hint that was too high: widen the steps again
            if n > max_iter:
                raise ValueError(f"calibrate_sigma: eps({math.exp(ka * h):.3g}) = {e_lo:.3g} still <= target {eps:g} after {n} evaluations; "
                                 "no lower bracket")
    else:
        history = [(kb, e_hi)]
        while e_hi > eps:
            ka, e_lo = kb, e_hi
            kb = kb + step
            e_hi = f(kb)
            history.append((kb, e_hi))
            if len(history) > 12 and e_hi > eps:
                k_old, e_old = history[-11]
                if e_old - e_hi <= 1e-9 * e_hi:
                    raise ValueError(
                        f"calibrate_sigma: eps = {eps:g} is unreachable: eps(sigma) stopped decreasing at {e_hi:.6g} "
                        f"(eps({math.exp(k_old * h):.3g}) = {e_old:.6g}, eps({math.exp(kb * h):.3g}) = {e_hi:.6g}); the event has a floor "
                        "no noise removes (e.g. an (eps, delta) part, or a delta target below its delta floor)"
                    )
            if n > max_iter and e_hi > eps:  # (an evaluation that met the target found the bracket)
                raise ValueError(f"calibrate_sigma: eps({math.exp(kb * h):.3g}) = {e_hi:.3g} still > target {eps:g} after {n} evaluations; "
                                 "no upper bracket")
    # regula falsi (Illinois) on g(k) = log eps(e^{kh}) - log eps over the bracket [ka, kb] of grid indices
    target = math.log(eps)

    def g_of(e):
        return (math.log(e) if e > 0 else -745.0) - target

    ga, gb = g_of(e_lo), g_of(e_hi)  # ga > 0 >= gb
    widths = [kb - ka]
    side = 0
    while kb - ka > 1:
        if not math.isfinite(ga) or (len(widths) >= 3 and widths[-1] > widths[-3] // 2):
            k = (ka + kb) // 2  # the bracket did not halve over two steps (or the secant is undefined): bisect
        else:
            k = min(max(round(kb - gb * (kb - ka) / (gb - ga)), ka + 1), kb - 1)
        e = f(k)
        if e <= eps:
            kb, gb, e_hi = k, g_of(e), e
            if side == -1:
                ga /= 2
            side = -1
        else:
            ka, ga = k, g_of(e)
            if side == 1:
                gb /= 2
            side = 1
        widths.append(kb - ka)
    lo, hi = math.exp(ka * h), math.exp(kb * h)
    return Calibration(sigma=hi, bracket=(lo, hi), rtol=hi / lo - 1, eps_at_sigma=e_hi, evaluations=n)


#: Grid step of the first, coarse stage of PLD calibrations (sound, 10x cheaper; it only places sigma0).
_COARSE_H = 2e-2


#: RDP orders of the zeroth stage (cheap: the WBK19 sums stay short); it only brackets sigma.
_STAGE0_ORDERS = np.array([1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0])


def _calibrate_event(make_event: Callable[[float], Event], eps: float, delta: float, accountant, sigma0: float, rtol: float) -> Calibration:
    """Calibrate ``sigma`` for the event ``make_event(sigma)``.

    With the PLD accountant (``"pld"``, ``"best"``) two cheap stages place the search first, so that no
    PLD is built at a tiny sigma (where the loss spans thousands of nats): (0) RDP on a short order
    grid to 10% (its sigma is where the PLD's eps is typically already below the target);
    (1) the PLD on a coarse grid to 1% (still an upper bound, so its sigma is at least the final
    one). The final search then only evaluates near the answer. The stages change only where that
    search starts, not its answer (:func:`calibrate_sigma` returns the smallest point of its grid
    whatever the start)."""
    lower0 = None
    if accountant in ("pld", "best"):
        from .pld import PldAccountant

        def rdp0(sg):
            ev = make_event(sg)
            acc = RdpAccountant(_STAGE0_ORDERS, relation=ev.relation)
            return acc.compose(ev).get_epsilon(delta) if acc.supports(ev) else PldAccountant(_COARSE_H, relation=ev.relation).compose(ev).get_epsilon(delta)

        def coarse(sg):
            ev = make_event(sg)
            return PldAccountant(_COARSE_H, relation=ev.relation).compose(ev).get_epsilon(delta)

        try:
            sigma0 = calibrate_sigma(rdp0, eps, sigma0=sigma0, rtol=0.1, factor=4.0).sigma
            sigma0 = calibrate_sigma(coarse, eps, sigma0=sigma0, rtol=1e-2, factor=2.0).sigma
            lower0 = sigma0 * 0.95  # the fine grid's sigma is a few percent below the coarse one
        except ValueError:
            lower0 = None  # the final stage reports the problem with the requested accountant
    return calibrate_sigma(lambda sg: _eps_of(make_event(sg), delta, accountant=accountant), eps, sigma0=sigma0, rtol=rtol, lower0=lower0)


def calibrate_sigma_dp_rsgd(eps: float, delta: float, K: int, tau: float, N_i: int, b: int, rtol: float = 1e-6, accountant="best") -> Calibration:
    r"""Smallest :math:`\sigma` making DP-RSGD (Huang et al. (2024), Algorithm 2) :math:`(\epsilon, \delta)`-DP by ``accountant``.

    Parameters
    ----------
    eps : float
        Target :math:`\epsilon > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    K : int
        Local steps.
    tau : float
        Clipping threshold.
    N_i : int
        The agent's number of records.
    b : int
        Batch size.
    rtol : float, optional
        Relative width of the final bracket (default 1e-6).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    Calibration
        ``sigma`` (the upper end of the final bracket, so its eps meets the target), the bracket, the tolerance reached, the eps at ``sigma`` and the number of accountant calls.

    Raises
    ------
    ValueError
        If an argument is invalid or no bracket is found (the message gives the numbers).
    """
    delta = check_delta("calibrate_sigma_dp_rsgd", delta)
    resolve_accountant("calibrate_sigma_dp_rsgd", accountant)
    dp_rsgd_event(1.0, tau, b, N_i, K)  # validate the settings before searching
    return _calibrate_event(lambda s: dp_rsgd_event(s, tau, b, N_i, K), eps, delta, accountant,
                            paper_sigma_dp_rsgd(eps, delta, K, tau, N_i), rtol)


def calibrate_sigma_dp_rsvrg(eps: float, delta: float, m: int, K: int, tau0: float, tau1: float, N_i: int, rtol: float = 1e-6, accountant="best") -> Calibration:
    r"""Smallest :math:`\sigma` making DP-RSVRG (Huang et al. (2024), Algorithm 3) :math:`(\epsilon, \delta)`-DP by ``accountant``.

    Parameters
    ----------
    eps : float
        Target :math:`\epsilon > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    m : int
        Inner-loop length.
    K : int
        Outer iterations.
    tau0, tau1 : float
        Clipping thresholds.
    N_i : int
        The agent's number of records.
    rtol : float, optional
        Relative width of the final bracket (default 1e-6).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    Calibration
        ``sigma`` (the upper end of the final bracket, so its eps meets the target), the bracket, the tolerance reached, the eps at ``sigma`` and the number of accountant calls.

    Raises
    ------
    ValueError
        If an argument is invalid or no bracket is found (the message gives the numbers).
    """
    delta = check_delta("calibrate_sigma_dp_rsvrg", delta)
    resolve_accountant("calibrate_sigma_dp_rsvrg", accountant)
    dp_rsvrg_event(1.0, tau0, tau1, N_i, m, K)
    return _calibrate_event(lambda s: dp_rsvrg_event(s, tau0, tau1, N_i, m, K), eps, delta, accountant,
                            paper_sigma_dp_rsvrg(eps, delta, m, K, max(tau0, tau1), N_i), rtol)


_PRIRFED_KEYWORDS = {"dp_rsgd": ("K", "tau", "N_i", "b"), "dp_rsvrg": ("m", "K", "tau0", "tau1", "N_i")}


def calibrate_sigma_prirfed(eps: float, delta: float, N: int, s: int, T: int, trainer: str = "dp_rsgd", rtol: float = 1e-6,
                            accountant="best", **kw) -> Calibration:
    r"""Smallest :math:`\sigma` of the local trainer making a whole PriRFed run (Huang et al. (2024), Algorithm 1) :math:`(\epsilon, \delta)`-DP at the record level, by ``accountant``.

    All agents share the settings given (``N_i``, ``b``); for agents of different sizes, calibrate on
    the run's own event (:func:`prirfed.reference.trainers.privacy.prirfed_run_event` with
    :func:`calibrate_sigma`; the tutorial "Bring your own problem and data" does it).

    Parameters
    ----------
    eps : float
        Target :math:`\epsilon > 0`.
    delta : float
        Target :math:`\delta \in (0, 1)`.
    N : int
        Number of agents.
    s : int
        Agents per round.
    T : int
        Number of rounds.
    trainer : {'dp_rsgd', 'dp_rsvrg'}, optional
        The local trainer (default ``'dp_rsgd'``).
    rtol : float, optional
        Relative width of the final bracket (default 1e-6).
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.
    kw
        Keyword arguments: the local trainer's settings: ``K, tau, N_i, b`` for DP-RSGD, ``m, K, tau0, tau1, N_i`` for
        DP-RSVRG (a missing or unknown keyword is a ``ValueError`` naming it).

    Returns
    -------
    Calibration
        ``sigma`` (the upper end of the final bracket, so its eps meets the target), the bracket, the tolerance reached, the eps at ``sigma`` and the number of accountant calls.

    Raises
    ------
    ValueError
        If an argument is invalid or no bracket is found (the message gives the numbers).
    """
    where = "calibrate_sigma_prirfed"
    delta = check_delta(where, delta)
    resolve_accountant(where, accountant)
    if trainer not in _PRIRFED_KEYWORDS:
        raise ValueError(f"{where}: trainer must be 'dp_rsgd' or 'dp_rsvrg' (got {trainer!r})")
    need = _PRIRFED_KEYWORDS[trainer]
    missing = [k for k in need if k not in kw]
    if missing:
        raise ValueError(f"{where}: trainer={trainer!r} needs keyword(s) {', '.join(missing)} (missing)")
    extra = sorted(set(kw) - set(need))
    if extra:
        raise ValueError(f"{where}: unknown keyword(s) {', '.join(extra)} for trainer={trainer!r} (expected {', '.join(need)})")
    if trainer == "dp_rsgd":
        make = lambda sg: dp_rsgd_event(sg, kw["tau"], kw["b"], kw["N_i"], kw["K"])  # noqa: E731
        make(1.0)
        s0 = paper_sigma_dp_rsgd(eps, delta, kw["K"], kw["tau"], kw["N_i"])
    else:
        make = lambda sg: dp_rsvrg_event(sg, kw["tau0"], kw["tau1"], kw["N_i"], kw["m"], kw["K"])  # noqa: E731
        make(1.0)
        s0 = paper_sigma_dp_rsvrg(eps, delta, kw["m"], kw["K"], max(kw["tau0"], kw["tau1"]), kw["N_i"])
    prirfed_event(make(1.0), N, s, T)
    return _calibrate_event(lambda sg: prirfed_event(make(sg), N, s, T), eps, delta, accountant, s0, rtol)


#: Experiment settings of Huang et al. (2024), Section 6 (local-trainer level; T is not stated in the text).
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
    r"""Exact :math:`\epsilon` at ``delta`` of the Gaussian mechanism with shift :math:`\mu = \Delta/\sigma` (Balle and Wang (2018), Theorem 8).

    Bisection on :func:`prirfed.reference.mechanisms.gaussian_delta` (decreasing in
    :math:`\epsilon`): the bracket starts at :math:`[0, 1]` and doubles until its upper end meets
    ``delta``, then is halved until its width is at most ``tol * max(1, hi)``; returns the upper end
    of the final bracket. A :math:`K`-fold adaptive
    composition of Gaussian mechanisms with shift :math:`\mu` is exactly a Gaussian mechanism with
    shift :math:`\sqrt K\mu` (Dong, Roth and Su (2022), Corollary 3.3).

    Parameters
    ----------
    mu : float
        The shift :math:`\mu > 0`.
    delta : float
        :math:`\delta \in (0, 1)`.
    tol : float, optional
        Relative width of the final bracket (default 1e-12).

    Returns
    -------
    float
        :math:`\epsilon` (0 when :math:`\delta(0) \le` ``delta``).

    Raises
    ------
    ValueError
        If an argument is out of range.
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


def noise_constants_table(accountant="best") -> list[dict]:
    r"""The papers' noise constants put to the test, for every Section 6 setting of Huang et al. (2024).

    For each setting: the :math:`\epsilon` the paper's :math:`\sigma` (:math:`o = \tilde o = 1`,
    :math:`\tau = \tau_0 = \tau_1 = 1`; eps scales out of tau) really gives at the stated
    :math:`\delta`, the :math:`\sigma` the stated :math:`\epsilon` really needs, and the constant
    ``o_needed = (sigma_needed / sigma_paper)^2``. ``eps_true`` and ``sigma_needed`` come from
    ``accountant``; ``eps_exact`` and ``sigma_needed_exact`` (full-batch DP-RSGD only) are exact worst
    cases over all losses (the analytic Gaussian mechanism).

    Parameters
    ----------
    accountant : str or object, optional
        ``"best"`` (default: the smallest valid upper bound of the PLD and RDP accountants), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    list of dict
        One row per setting of :data:`SECTION_6_SETTINGS`.
    """
    rows = []
    for st in SECTION_6_SETTINGS:
        eps, delta, K, N_i = st["eps"], st["delta"], st["K"], st["N_i"]
        if st["trainer"] == "dp_rsgd":
            b = N_i if st.get("b") is None else st["b"]
            sp = paper_sigma_dp_rsgd(eps, delta, K, 1.0, N_i)
            e_true = epsilon_dp_rsgd(sp, delta, K, 1.0, N_i, b, accountant=accountant)
            need = calibrate_sigma_dp_rsgd(eps, delta, K, 1.0, N_i, b, accountant=accountant).sigma
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
            e_true = epsilon_dp_rsvrg(sp, delta, m, K, 1.0, 1.0, N_i, accountant=accountant)
            need = calibrate_sigma_dp_rsvrg(eps, delta, m, K, 1.0, 1.0, N_i, accountant=accountant).sigma
            extra = dict(m=m, eps_exact=None, sigma_needed_exact=None)
        rows.append(dict(st, **extra, sigma_paper=sp, eps_true=e_true, sigma_needed=need, o_needed=(need / sp) ** 2))
    return rows
