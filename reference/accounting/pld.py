"""Privacy loss distribution (PLD) accountant for the events of :mod:`.events`.

A *dominating pair* ``(P, Q)`` of a mechanism ``M`` (Zhu, Dong, Wang 2022, Def. 7) satisfies
``H_g(M(D) || M(D')) <= H_g(P || Q)`` for every ``g >= 0`` and every ordered pair of neighbours,
where ``H_g(P || Q) = sup_S P(S) - g Q(S)`` is the hockey-stick divergence; then
``delta(eps) = H_{e^eps}(P || Q)`` is a valid privacy profile, and the product of dominating pairs
dominates an adaptive composition (ZDW22 Thm 10). The *privacy loss distribution* of the pair is
the law of ``L = log(dP/dQ)`` under ``P``; ``H_{e^eps}(P || Q) = E_P[(1 - e^{eps - L})_+] +
P(L = +inf)`` and composition is convolution of PLDs. This module:

- derives, for every event, a dominating pair under the event's neighbouring relation (derivations
  in ``proofs_notes/accounting_pld.md``): the Gaussian; ``EpsilonDelta`` (Kairouz-Oh-Viswanath's
  canonical pair); the Poisson-subsampled Gaussian under add/remove (ZDW22 Thm 11);
  **sampling without replacement under replace-one** (a new symmetric pair from Balle, Barthe,
  Gaboardi 2018's advanced joint convexity); the activation ``(1 - rho) U + rho P`` with ``U``
  disjoint; DP-RSVRG's mixture step (``accounting_pld_dp_rsvrg.md``); composition;
- discretises pessimistically by *connect-the-dots* (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi
  2022): the privacy curve is replaced by its piecewise-linear interpolation in ``e^eps`` on the
  grid ``eps_i = i h`` (lower convex hull), which lies above the true curve, so every reported
  ``delta(eps)`` (and eps) is an upper bound; the excess has a stated bound
  (:meth:`DiscretePLD.error_bound`, ``accounting_pld_discretisation.md``);
- composes by FFT with Chernoff-chosen windows; tails beyond the window and the FFT's rounding
  error are added to delta (pessimistic) with rigorous bounds;
- gives an *attainable lower bound* for every event: the same algebra on a pair a real mechanism
  produces (e.g. DP-RSGD on linear losses), discretised optimistically (losses rounded down,
  tail and rounding allowances subtracted), so ``lower <= true eps <= upper``.

Exact closed forms are used where they exist: compositions of Gaussians are one Gaussian, and
``T`` activated Gaussian rounds are a binomial mixture of Gaussians (no discretisation at all).

Examples
--------
A composition of Gaussians is exact (the Balle-Wang curve); the activated Gaussian over T rounds
is a binomial mixture, also exact, and never above the RDP bound:

>>> import math
>>> from prirfed.reference.accounting.events import Activation, Gaussian, SelfComposed
>>> from prirfed.reference.accounting.pld import PldAccountant, gaussian_delta
>>> acc = PldAccountant().compose(Gaussian(2.0), 4)          # = Gaussian(1.0)
>>> eps = acc.get_epsilon(1e-5)
>>> bool(abs(gaussian_delta(eps, 1.0) - 1e-5) < 1e-12)
True
>>> from prirfed.reference.accounting.rdp import RdpAccountant
>>> run = SelfComposed(Activation(0.05, Gaussian(1.5)), 500)
>>> PldAccountant().compose(run).get_epsilon(1e-5) <= RdpAccountant().compose(run).get_epsilon(1e-5)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import fft as sfft
from scipy import signal, special

from .events import ADD_REMOVE, REPLACE_ONE, Activation, Composed, EpsilonDelta, Event, Gaussian, MixtureOfGaussians, PoissonSampled
from .events import SampledWithoutReplacement, SelfComposed, WorstCase, check_delta, check_int, check_positive, check_probability
from .events import check_real
from .rdp import effective_gaussian

__all__ = [
    "DEFAULT_VALUE_DISCRETIZATION",
    "TAIL_MASS",
    "gaussian_delta",
    "kov_delta",
    "subsampled_delta",
    "poisson_add_delta",
    "binomial_gaussian_delta",
    "PrivacyCurve",
    "DiscretePLD",
    "PldPair",
    "connect_the_dots",
    "FFT_ESCALATE",
    "fft_convolve",
    "fft_error_bound",
    "mixture_split_lambdas",
    "PldAccountant",
]

#: Default grid step ``h`` of the privacy loss (nats). The connect-the-dots error is second order
#: in ``h`` (accounting_pld_discretisation.md); 1e-3 keeps whole-run eps within 0.1% of the exact
#: value in every benchmark case while a 500-round run composes in a few milliseconds.
DEFAULT_VALUE_DISCRETIZATION = 1e-3
#: Probability mass allowed outside a window (each tail, each truncation); it is added to delta
#: in the pessimistic direction, subtracted in the optimistic one.
TAIL_MASS = 1e-18
_U = 2.0**-53  # unit roundoff of float64
_U_EXT = float(np.finfo(np.longdouble).eps) / 2  # unit roundoff of numpy.longdouble (2^-64 on x86-64; 2^-53 where it is float64)
FFT_ESCALATE = 1e-13  # fft_convolve redoes a convolution in extended precision when its float64 error bound exceeds this
_VALUE_INFLATION = 1e-12  # relative inflation of curve values before connect-the-dots
#: Largest array a PLD may use; beyond it the accountant retries on a 4x coarser grid (the result
#: stays sound, only less tight: very wide PLDs belong to eps of tens or hundreds).
MAX_GRID = 2**16


class _GridTooLarge(Exception):
    """Raised when a PLD would exceed :data:`MAX_GRID` points at the current grid step."""


# =============================================================================================
# exact privacy curves (eps >= 0, vectorised)
# =============================================================================================


def _as_eps(where, eps):
    if eps is None or isinstance(eps, (str, bytes, bool)):
        raise ValueError(f"{where}: eps must be finite and >= 0 (got {eps!r})")
    try:
        e = np.asarray(eps, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: eps must be finite and >= 0 (got {str(eps)[:12]!r})") from None
    if np.any(~np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"{where}: eps must be finite and >= 0 (got {eps!r})")
    return e


def gaussian_delta(eps, mu: float):
    r"""Exact privacy curve of the Gaussian pair ``(N(mu, 1), N(0, 1))`` (Balle & Wang 2018, Thm 8).

    Balle and Wang (2018), Theorem 8:
    :math:`\delta(\epsilon) = \Phi(\mu/2 - \epsilon/\mu) - e^\epsilon\Phi(-\mu/2 - \epsilon/\mu)`,
    evaluated as :math:`\Phi(a)(1 - \exp(\epsilon + \log\Phi(b) - \log\Phi(a)))` with ``log_ndtr``
    (no cancellation when both terms are tiny). Symmetric: the same for
    :math:`(N(0,1), N(\mu,1))`.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon \ge 0` (finite).
    mu : float
        Shift :math:`\mu > 0` (sensitivity over noise standard deviation).

    Returns
    -------
    float or numpy.ndarray
        :math:`\delta(\epsilon)`, a float for scalar ``eps``.

    Raises
    ------
    ValueError
        If ``mu`` is not finite and > 0, or an ``eps`` is not finite and >= 0.
    """
    mu = check_positive("gaussian_delta", "mu", mu)
    e = _as_eps("gaussian_delta", eps)
    a = mu / 2 - e / mu
    b = -mu / 2 - e / mu
    la, lb = special.log_ndtr(a), special.log_ndtr(b)
    out = np.exp(la) * -np.expm1(np.minimum(e + lb - la, 0.0))
    return out if out.ndim else float(out)


def kov_delta(eps, eps0: float, delta0: float):
    r"""Privacy curve of Kairouz-Oh-Viswanath's canonical ``(eps0, delta0)`` pair (KOV17 Thm 2.1).

    Kairouz, Oh and Viswanath (2017), Theorem 2.1:
    :math:`\delta(\epsilon) = \delta_0 + (1 - \delta_0)(e^{\epsilon_0} - e^{\epsilon})_+/(1 + e^{\epsilon_0})`
    (atoms: P-only :math:`\delta_0`, losses :math:`+\epsilon_0` and :math:`-\epsilon_0`). Every
    :math:`(\epsilon_0, \delta_0)`-DP mechanism is dominated by it.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon \ge 0`.
    eps0 : float
        :math:`\epsilon_0 > 0`.
    delta0 : float
        :math:`\delta_0 \in [0, 1)`.

    Returns
    -------
    float or numpy.ndarray
        :math:`\delta(\epsilon)`, a float for scalar ``eps``.

    Raises
    ------
    ValueError
        If an ``eps`` is not finite and >= 0, ``eps0`` is not finite and > 0, or ``delta0`` is not
        in [0, 1).
    """
    e = _as_eps("kov_delta", eps)
    eps0 = check_positive("kov_delta", "eps0", eps0)
    delta0 = check_delta("kov_delta", delta0, "delta0", allow_zero=True)
    out = delta0 + (1 - delta0) * np.maximum(-np.expm1(np.minimum(e - eps0, 1.0)), 0.0) / (1 + math.exp(-eps0))
    return out if out.ndim else float(out)


def subsampled_delta(eps, q: float, inner):
    r"""Sampling without replacement, replace-one, ratio ``q``: ``q h(log(1 + (e^eps - 1)/q))``.

    Balle, Barthe and Gaboardi (2018), Theorem 2 (advanced joint convexity) with the coupling of
    their Theorem 10 (derivation in ``proofs_notes/accounting_pld.md``): if ``inner`` bounds the
    inner mechanism's curve for both orders of every neighbouring pair, this bounds the subsampled
    mechanism's, for both orders.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon \ge 0`.
    q : float
        Sampling ratio in (0, 1].
    inner : callable
        The inner curve :math:`h`, vectorised over :math:`\epsilon`.

    Returns
    -------
    numpy.ndarray or float
        :math:`q\,h(\log(1 + (e^\epsilon - 1)/q))` (``inner(eps)`` itself at ``q = 1``).

    Raises
    ------
    ValueError
        If an ``eps`` is not finite and >= 0, or ``q`` is not in (0, 1].
    """
    e = _as_eps("subsampled_delta", eps)
    q = check_probability("subsampled_delta", q)
    if q == 1.0:
        return inner(e)
    with np.errstate(over="ignore"):
        # log(1 + (e^eps - 1)/q), = eps - log q + log1p((q - 1) e^{-eps}) where e^eps would overflow
        x = np.where(e < 30.0, np.log1p(np.expm1(np.minimum(e, 30.0)) / q), e - math.log(q) + np.log1p((q - 1) * np.exp(-e)))
    return q * np.asarray(inner(x))


def poisson_add_delta(eps, q: float, mu: float):
    r"""The add direction of the Poisson-subsampled Gaussian: ``H_{e^eps}(N(0,1) || (1-q) N(0,1) + q N(mu,1))``.

    Zhu, Dong and Wang (2022), Theorem 11. Non-zero only for :math:`\epsilon < -\log(1-q)`; the
    set where the loss exceeds :math:`\epsilon` is :math:`x < x_\epsilon` with
    :math:`(1-q) + q e^{\mu x - \mu^2/2} = e^{-\epsilon}`. Within an ulp or two below
    :math:`-\log(1-q)`, where :math:`e^{-\epsilon} - (1-q)` rounds to 0 or below, the bound
    :math:`1 - e^\epsilon(1-q)` (itself a few ulps) is returned.

    Parameters
    ----------
    eps : array_like
        :math:`\epsilon \ge 0`.
    q : float
        Poisson sampling probability in (0, 1].
    mu : float
        Gaussian shift :math:`\mu > 0`.

    Returns
    -------
    numpy.ndarray
        The hockey-stick divergence at each ``eps`` (:func:`gaussian_delta` at ``q = 1``).

    Raises
    ------
    ValueError
        If an ``eps`` is not finite and >= 0, ``q`` is not in (0, 1], or ``mu`` is not finite and > 0.
    """
    e = _as_eps("poisson_add_delta", eps)
    q = check_probability("poisson_add_delta", q)
    mu = check_positive("poisson_add_delta", "mu", mu)
    out = np.zeros_like(e)
    if q == 1.0:
        return gaussian_delta(e, mu)
    ok = e < -math.log1p(-q)
    if ok.any():
        eo = e[ok]
        one_minus = -np.expm1(eo + math.log1p(-q))  # 1 - g (1 - q) >= 0
        # e^{-eps} - (1 - q) = q e^{mu x_eps - mu^2/2} > 0 exactly; within an ulp or two of the end
        # -log(1 - q) it rounds to 0 or below (then x_eps was -inf or NaN and delta NaN). There
        # delta = integral over S of (p - g q_mix) <= P(S) (1 - g (1 - q)) <= 1 - g (1 - q), which is
        # itself a few ulps: that bound is returned.
        r = np.exp(-eo) - (1 - q)
        vals = np.maximum(one_minus, 0.0)
        pos = r > 0
        if pos.any():
            g = np.exp(eo[pos])
            x = (np.log(r[pos] / q) + mu * mu / 2) / mu
            lx, lxm = special.log_ndtr(x), special.log_ndtr(x - mu)
            om = one_minus[pos]
            vals[pos] = np.exp(lx) * om * -np.expm1(np.minimum(np.log(g * q) + lxm - lx - np.log(om), 0.0))
        out[ok] = vals
    return out


def binomial_gaussian_delta(eps, rho: float, mu: float, T: int):
    r"""Exact curve of ``T`` activated Gaussian rounds: ``sum_j Bin(j; T, rho) delta_G(eps; sqrt(j) mu)``.

    Given :math:`j` active rounds the loss is that of :math:`j` Gaussians, i.e. of one at shift
    :math:`\sqrt{j}\mu` (Dong, Roth and Su (2022), Corollary 3.3; each term by Balle and Wang (2018), Theorem 8);
    inactive rounds have loss 0. Weights below :math:`10^{-40}` of the total are dropped and their
    mass (at most :math:`T \cdot 10^{-40}`) added (pessimistic); the result is capped at 1.

    Parameters
    ----------
    eps : float or array_like
        :math:`\epsilon \ge 0`.
    rho : float
        Activation probability in (0, 1].
    mu : float
        Per-round Gaussian shift :math:`\mu > 0`.
    T : int
        Rounds, >= 1.

    Returns
    -------
    float or numpy.ndarray
        :math:`\delta(\epsilon)`, a float for scalar ``eps``.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    e = _as_eps("binomial_gaussian_delta", eps)
    rho = check_probability("binomial_gaussian_delta", rho, "rho")
    mu = check_positive("binomial_gaussian_delta", "mu", mu)
    T = check_int("binomial_gaussian_delta", "T", T, 1)
    j = np.arange(T + 1)
    lw = special.gammaln(T + 1) - special.gammaln(j + 1) - special.gammaln(T - j + 1)
    with np.errstate(divide="ignore"):
        lw = lw + j * math.log(rho) + ((T - j) * math.log1p(-rho) if rho < 1 else 0.0)
    if rho == 1.0:
        lw = np.where(j == T, 0.0, -np.inf)
    keep = (lw > -92.0) & (j > 0)  # e^-92 = 1e-40
    dropped = float(np.exp(lw[(~keep) & (j > 0)]).sum())
    jj, w = j[keep], np.exp(lw[keep])
    flat = np.atleast_1d(e)
    vals = np.array([float(np.dot(w, _gauss_vec(x, np.sqrt(jj) * mu))) for x in flat]) + dropped
    vals = np.minimum(vals, 1.0)
    return vals.reshape(e.shape) if e.ndim else float(vals[0])


def _gauss_vec(eps: float, mus: np.ndarray) -> np.ndarray:
    a = mus / 2 - eps / mus
    b = -mus / 2 - eps / mus
    la, lb = special.log_ndtr(a), special.log_ndtr(b)
    return np.exp(la) * -np.expm1(np.minimum(eps + lb - la, 0.0))


@dataclass(frozen=True)
class PrivacyCurve:
    r"""A pair given by its privacy curves for ``eps >= 0``.

    ``fwd(eps)`` :math:`= H_{e^\epsilon}(P\|Q)` and ``rev(eps)`` :math:`= H_{e^\epsilon}(Q\|P)`: the
    privacy profiles of a dominating pair in the sense of Zhu, Dong and Wang (2022), Definition 7.

    Parameters
    ----------
    fwd : callable
        Vectorised forward curve.
    rev : callable or None, optional
        Vectorised reverse curve; ``None`` (default) means symmetric.
    inf_f : float, optional
        :math:`P(L = +\infty)`, the limit of ``fwd`` (default 0).
    inf_r : float, optional
        :math:`Q(L = -\infty)`, the limit of ``rev`` (default 0).
    exact : bool, optional
        Whether the curves are exact (``True``, default) or an upper bound.
    label : str, optional
        Name shown in reports.
    tight : bool, optional
        Whether this is the exact curve of a pair some real mechanism attains (default ``False``).
    """

    fwd: object
    rev: object = None
    inf_f: float = 0.0
    inf_r: float = 0.0
    exact: bool = True
    label: str = ""
    tight: bool = False  # exact curve of a pair some real mechanism attains (nothing can be tighter)

    @property
    def symmetric(self) -> bool:
        return self.rev is None

    def delta(self, eps) -> float:
        r"""``max`` over both orders (the relation's neighbours come in both orders).

        Parameters
        ----------
        eps : float
            :math:`\epsilon \ge 0`.

        Returns
        -------
        float
            :math:`\max(\mathrm{fwd}(\epsilon), \mathrm{rev}(\epsilon))`.
        """
        d = float(np.asarray(self.fwd(np.atleast_1d(float(eps))))[0])
        if self.rev is not None:
            d = max(d, float(np.asarray(self.rev(np.atleast_1d(float(eps))))[0]))
        return d

    def epsilon(self, delta: float) -> float:
        r"""Smallest float64 eps >= 0 with ``delta(eps) <= delta``, by bisecting float64 bit patterns.

        The bracket is doubled from 1 until its upper end meets the target. Its float64 bit patterns
        (positive floats are ordered like their patterns) are then bisected down to two adjacent
        floats, the lower with ``delta(eps) > delta`` and the upper with ``delta(eps) <= delta``,
        and the upper one is returned: never below the computed root, and a function of the curve
        and the target alone (at most 19 + 62 evaluations). Where the computed curve is monotone in
        eps it is the smallest float that meets the target. The computed Gaussian curve, for one,
        is not monotone at the scale of an ulp (at mu = 0.05 it crosses 1e-5 several times within
        40 ulps of the root); the answer is then one of those crossings. Measured on 391 random
        (mu, delta), mu from 0.01 to 30: within 1.9e-14 relative of the 50-digit root for mu >= 0.05,
        within 7.3e-14 for smaller mu (where the curve's two terms cancel most).

        Parameters
        ----------
        delta : float
            Target :math:`\delta`.

        Returns
        -------
        float
            :math:`\epsilon` (0 if already ``delta(0) <= delta``; ``inf`` if the curve's limit is
            above ``delta`` or no root lies below :math:`2^{19}`: the bracket, doubled from 1, stops
            past 1e6).
        """
        from prirfed.reference.mechanisms import bisect_float_bits

        def ok(e):
            return self.delta(e) <= delta

        if ok(0.0):
            return 0.0
        if max(self.inf_f, self.inf_r) > delta:  # at equality a curve that reaches its limit has a root
            return math.inf
        lo, hi = 0.0, 1.0
        while not ok(hi):
            lo, hi = hi, 2 * hi
            if hi > 1e6:
                return math.inf
        return bisect_float_bits(ok, lo, hi)


# =============================================================================================
# discrete PLDs
# =============================================================================================


@dataclass
class DiscretePLD:
    r"""Law of the privacy loss under ``P`` on the grid ``l_i = (lo + i) h``, plus the P-mass ``inf`` at ``+inf``.

    The privacy loss distribution of Koskela, Jälkö and Honkela (2020), on the
    connect-the-dots grid of Doroshenko et al. (2022); :math:`\delta(\epsilon) =
    E_P[(1 - e^{\epsilon - L})_+] + P(L = +\infty)`. Bookkeeping for the stated error bounds:

    - ``slack``: a bound on the l1 error of ``masses`` from floating point (FFT, hulls);
      pessimistic PLDs add it to every delta, optimistic ones subtract it;
    - ``tails``: probability moved by window truncations (added to ``inf`` when pessimistic,
      dropped when optimistic), recorded for :meth:`error_bound`;
    - ``n_round``: number of discretised base losses along a composition (multiplicities counted);
    - ``pessimistic``: the direction of every rounding.

    Parameters
    ----------
    h : float
        Grid step (nats).
    lo : int
        Index of the first grid point.
    masses : numpy.ndarray
        P-masses at the losses :math:`(lo + i)h`.
    inf : float, optional
        P-mass at :math:`+\infty` (default 0).
    slack : float, optional
        l1 rounding-error bound of ``masses`` (default 0).
    tails : float, optional
        Mass moved by truncations (default 0).
    n_round : int, optional
        Number of discretised base losses, >= 0 (default 0).
    pessimistic : bool, optional
        Rounding direction (default ``True``).
    """

    h: float
    lo: int
    masses: np.ndarray
    inf: float = 0.0
    slack: float = 0.0
    tails: float = 0.0
    n_round: int = 0
    pessimistic: bool = True
    _gc: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        # a NaN mass made delta() return 0 (Python's max(0.0, nan) is 0.0): refuse non-finite input
        self.h = check_positive("DiscretePLD", "h", self.h)
        for name in ("inf", "slack", "tails"):
            setattr(self, name, check_real("DiscretePLD", name, getattr(self, name)))
        for name in ("slack", "tails"):  # bounds on a size: a negative one lowered a pessimistic delta
            if getattr(self, name) < 0:
                raise ValueError(f"DiscretePLD: {name} must be >= 0 (got {getattr(self, name)!r}, "
                                 f"short by {-getattr(self, name):.3g})")
        # a count: a negative one made error_bound take the square root of a negative number
        self.n_round = check_int("DiscretePLD", "n_round", self.n_round, minimum=0)
        m = np.asarray(self.masses, dtype=np.float64)
        if m.ndim != 1:
            raise ValueError(f"DiscretePLD: masses must be one-dimensional (got shape {m.shape})")
        bad = np.flatnonzero(~np.isfinite(m))
        if bad.size:
            raise ValueError(f"DiscretePLD: masses must be finite (got {float(m[bad[0]])!r} at index {int(bad[0])}, "
                             f"{bad.size} non-finite in all)")
        self.masses = m

    # ---------------------------------------------------------------- queries
    @property
    def hi(self) -> int:
        return self.lo + len(self.masses) - 1

    def losses(self) -> np.ndarray:
        return (self.lo + np.arange(len(self.masses))) * self.h

    def _sign_slack(self) -> float:
        return self.slack if self.pessimistic else -self.slack

    def delta(self, eps) -> float:
        """``sum_{l > eps} m_l (1 - e^{eps - l}) + inf`` (+ slack when pessimistic, - when optimistic)."""
        eps = float(eps)
        l = self.losses()
        sel = l > eps
        d = math.fsum(self.masses[sel] * -np.expm1(eps - l[sel])) + self.inf + self._sign_slack()
        return min(1.0, max(0.0, d))

    def curve_at(self, eps) -> np.ndarray:
        """:meth:`delta` at many ``eps >= 0`` at once (O(n + len(eps)) through the grid recurrences)."""
        e = np.atleast_1d(np.asarray(eps, dtype=np.float64))
        k, D, E = self._grid_curve()
        kk = np.minimum(np.floor(e / self.h + 1e-12).astype(np.int64), len(k) - 1)
        u = np.clip(e - kk * self.h, 0.0, self.h)  # beyond the last loss the value is the limit (below)
        out = D[kk] - np.expm1(u) * E[kk] + self.inf + self._sign_slack()
        out = np.where(kk >= len(k) - 1, self.inf + self._sign_slack(), out)
        return np.clip(out, 0.0, 1.0)

    def _grid_curve(self):
        if self._gc is None:
            self._gc = self._grid_curve_compute()
        return self._gc

    def _grid_curve_compute(self):
        """``(k, D, E)`` for grid points ``eps_k = k h``, ``k = 0 .. max(hi, 0)``:
        ``D_k = sum_{j>k} m_j (1 - e^{-(j-k) h})`` and ``E_k = sum_{j>k} m_j e^{-(j-k) h}``, by the
        stable recurrences ``D_k = e^{-h} D_{k+1} + (1 - e^{-h}) W_k`` (``W_k = sum_{j>k} m_j``) and
        ``E_k = e^{-h} (m_{k+1} + E_{k+1})``: sums of non-negative terms, no cancellation."""
        top = max(self.hi, 0)
        m = np.zeros(top + 1)
        if self.hi >= 0:
            src = self.masses[max(0, -self.lo):]
            m[max(self.lo, 0): max(self.lo, 0) + len(src)] = src
        k = np.arange(top + 1)
        W = np.concatenate([np.cumsum(m[::-1])[::-1][1:], [0.0]])
        a = math.exp(-self.h)
        D = signal.lfilter([-math.expm1(-self.h)], [1.0, -a], W[::-1])[::-1]
        nxt = np.concatenate([m[1:], [0.0]])
        E = signal.lfilter([a], [1.0, -a], nxt[::-1])[::-1]
        return k, D, E

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with :meth:`delta` ``(eps) <= delta``; ``inf`` if none.

        Bracketed on the grid by the recurrences of :meth:`_grid_curve`, then solved exactly on the
        bracketing step: for ``eps = k h + u``, ``0 <= u < h``, ``delta(eps) = D_k - (e^u - 1) E_k``."""
        base = self.inf + self._sign_slack()
        if base >= delta:
            return math.inf
        k, D, E = self._grid_curve()
        ok = np.nonzero(D + base <= delta)[0]
        i = int(ok[0])  # the last grid point has D = 0 < delta - base
        if i == 0:
            return 0.0
        j = i - 1
        u = math.log1p((D[j] + base - delta) / E[j]) if E[j] > 0 else self.h
        return float(k[j] * self.h + min(max(u, 0.0), self.h))

    def error_bound(self, delta: float, eta: float | None = None) -> tuple[float, float]:
        """A priori bound on the discretisation excess of a pessimistic PLD (accounting_pld_discretisation.md).

        Connect-the-dots is a randomised rounding of each base loss to its neighbouring grid points
        that preserves ``E[e^{-L}]``; increments lie in an interval of length ``h`` with mean in
        ``[0, h^2/8]``. By Hoeffding, with probability ``>= 1 - eta`` their sum over ``n_round``
        losses is at most ``s = n h^2/8 + h sqrt(n log(1/eta) / 2)``, so
        ``delta_reported(eps) <= delta_exact(eps - s) + eta + tails + 2 slack`` and
        ``eps_reported(delta) <= eps_exact(delta - eta - tails - 2 slack) + s``. Returns ``(s, eta')``
        with ``eta' = eta + tails + 2 slack`` (default ``eta = delta / 100``).
        """
        eta = delta / 100 if eta is None else eta
        n = self.n_round  # >= 0, checked where the PLD is built
        s = n * self.h * self.h / 8 + self.h * math.sqrt(n * math.log(1 / eta) / 2)
        return s, eta + self.tails + 2 * self.slack

    # ---------------------------------------------------------------- algebra
    def _like(self, **kw) -> "DiscretePLD":
        return replace(self, **kw)

    def activate(self, rho: float) -> "DiscretePLD":
        """``(1 - rho) delta_0 + rho * self``: the activation with a disjoint ``U`` (exact on the grid)."""
        lo, hi = min(self.lo, 0), max(self.hi, 0)
        m = np.zeros(hi - lo + 1)
        m[self.lo - lo: self.lo - lo + len(self.masses)] = rho * self.masses
        m[-lo] += 1.0 - rho
        return self._like(lo=lo, masses=m, inf=rho * self.inf, slack=rho * self.slack, tails=rho * self.tails)

    def mix(self, other: "DiscretePLD", w: float) -> "DiscretePLD":
        """``w * self + (1 - w) * other`` (the PLD of a labelled mixture of two pairs)."""
        _same_grid(self, other)
        lo, hi = min(self.lo, other.lo), max(self.hi, other.hi)
        m = np.zeros(hi - lo + 1)
        m[self.lo - lo: self.lo - lo + len(self.masses)] += w * self.masses
        m[other.lo - lo: other.lo - lo + len(other.masses)] += (1 - w) * other.masses
        return self._like(lo=lo, masses=m, inf=w * self.inf + (1 - w) * other.inf, slack=w * self.slack + (1 - w) * other.slack,
                          tails=w * self.tails + (1 - w) * other.tails, n_round=max(self.n_round, other.n_round))

    def compose(self, other: "DiscretePLD") -> "DiscretePLD":
        """Convolution by FFT (the PLD of the product pair), then tails truncated."""
        _same_grid(self, other)
        n = len(self.masses) + len(other.masses) - 1
        if n > 4 * MAX_GRID:
            raise _GridTooLarge(n)
        nfft = sfft.next_fast_len(n, real=True)
        y, err = fft_convolve([self.masses, other.masses], nfft, power=None)
        y = y[:n]
        out = self._like(lo=self.lo + other.lo, masses=np.maximum(y, 0.0), inf=1 - (1 - self.inf) * (1 - other.inf),
                         slack=self.slack + other.slack + err, tails=self.tails + other.tails, n_round=self.n_round + other.n_round)
        return out.truncate()

    def self_compose(self, k: int) -> "DiscretePLD":
        """k-fold convolution: FFT of the PMF on a window chosen by Chernoff bounds, raised to the power k.

        The window ``[lo, hi]`` holds the k-fold sum up to ``TAIL_MASS`` per side
        (``P(S >= a) <= min_{lambda>0} M(lambda)^k e^{-lambda a}``, ``M`` the moment generating function of
        the finite masses); the circular convolution folds the mass outside onto the window, which
        changes delta by at most that mass: added to ``inf`` (pessimistic) or to the slack (optimistic).
        """
        if k == 1:
            return self
        lo_b, hi_b = self._chernoff_window(k)
        W = hi_b - lo_b + 1
        if max(W, len(self.masses)) > 4 * MAX_GRID:
            raise _GridTooLarge(W)
        nfft = sfft.next_fast_len(max(W, len(self.masses)), real=True)
        # place the PMF with its first loss at index 0: the k-fold sum then starts at k*lo
        y, err = fft_convolve([self.masses], nfft, power=k)
        # residues: index r holds the mass of sums s = k*lo + r (mod nfft); the window [lo_b, hi_b]
        # maps one-to-one onto residues when W <= nfft
        start = lo_b - k * self.lo
        idx = (start + np.arange(W)) % nfft
        m = np.maximum(y[idx], 0.0)
        out_tail = 2 * TAIL_MASS
        inf = 1 - (1 - self.inf) ** k
        if self.pessimistic:
            inf = min(1.0, inf + out_tail)
            slack = k * self.slack + err
        else:
            slack = k * self.slack + err + out_tail
        out = self._like(lo=lo_b, masses=m, inf=inf, slack=slack, tails=k * self.tails + out_tail, n_round=k * self.n_round)
        return out.truncate()

    def _chernoff_window(self, k: int) -> tuple[int, int]:
        """Index range holding the k-fold sum up to ``TAIL_MASS`` per side: for every ``lambda > 0``,
        ``P(S >= a) <= M(lambda)^k e^{-lambda a}`` and ``P(S <= a) <= M(-lambda)^k e^{lambda a}`` (Chernoff),
        ``M`` the moment generating function of the finite masses; the best of 13 lambdas is used.
        Without finite mass (every loss beyond the grid, at ``+inf``: e.g. an ``(eps0, delta0)`` event
        with eps0 beyond the 2048 nats a side covers) the k-fold sum has none either: one point."""
        pos = self.masses > 0
        if not pos.any():
            return k * self.lo, k * self.lo
        lm, ll = np.log(self.masses[pos]), self.losses()[pos]
        lt = math.log(TAIL_MASS)
        lams = 2.0 ** np.arange(-6, 7)
        terms = lm[None, :] + np.concatenate([lams, -lams])[:, None] * ll[None, :]
        mx = terms.max(axis=1)
        log_m = mx + np.log(np.exp(terms - mx[:, None]).sum(axis=1))
        n = len(lams)
        hi_c = float(np.min((k * log_m[:n] - lt) / lams))
        lo_c = float(np.max((k * log_m[n:] - lt) / -lams))
        hi_i = min(int(math.ceil(hi_c / self.h)), k * self.hi)
        lo_i = max(int(math.floor(lo_c / self.h)), k * self.lo)
        return lo_i, max(hi_i, lo_i)

    def truncate(self) -> "DiscretePLD":
        """Remove negligible tails (each at most ``TAIL_MASS``): the upper tail goes to ``+inf`` and the
        lower tail to the first kept loss (both move P-mass up: pessimistic), or are dropped (optimistic)."""
        m = self.masses
        if len(m) < 3:
            return self
        c_lo = np.cumsum(m)
        c_hi = np.cumsum(m[::-1])[::-1]
        i0 = int(np.searchsorted(c_lo, TAIL_MASS, side="right"))
        i1 = len(m) - 1 - int(np.searchsorted(c_hi[::-1], TAIL_MASS, side="right"))
        if i0 == 0 and i1 == len(m) - 1 or i1 < i0:
            return self
        lower, upper = float(c_lo[i0 - 1]) if i0 > 0 else 0.0, float(c_hi[i1 + 1]) if i1 + 1 < len(m) else 0.0
        kept = m[i0:i1 + 1].copy()
        if self.pessimistic:
            kept[0] += lower
            inf = min(1.0, self.inf + upper)
        else:
            inf = self.inf
        return self._like(lo=self.lo + i0, masses=kept, inf=inf, tails=self.tails + lower + upper)


def _same_grid(a: DiscretePLD, b: DiscretePLD) -> None:
    if a.h != b.h or a.pessimistic != b.pessimistic:
        raise ValueError(f"DiscretePLD: cannot combine grids h = {a.h:g} and {b.h:g} (pessimistic {a.pessimistic}, {b.pessimistic})")


def fft_convolve(xs, nfft: int, power: int | None, extended: bool | None = None):
    r"""``irfft(prod_i rfft(x_i))`` (``power`` None) or ``irfft(rfft(x)^k)``, and the l1 bound of its error.

    Computed in float64 first. If :func:`fft_error_bound` (Higham (2002), Section 24.1) then exceeds
    :data:`FFT_ESCALATE` (1e-13: the bound grows like the transform length times the power, and
    reached 4e-9 on a 20-fold Poisson-subsampled Gaussian, where it alone made eps at delta = 1e-10
    infinite), the convolution is redone in the
    platform's extended precision (``numpy.longdouble``; x87 80-bit on x86-64, unit roundoff
    :math:`2^{-64}`), whose bound is the same formula with that unit roundoff, plus
    :math:`u_{64}\|y\|_1` for rounding the result back to float64 (:math:`\|y\|_1 \le \prod\|x_i\|_1`
    plus the error). Where ``longdouble`` is float64 (some platforms) nothing is redone.

    Parameters
    ----------
    xs : sequence of numpy.ndarray
        The two vectors (``power`` None) or the one vector (``power`` = k), float64.
    nfft : int
        Transform length (at least the length of the full convolution).
    power : int or None
        k, or ``None`` for the product of two transforms.
    extended : bool or None, optional
        Force (``True``) or forbid (``False``) the extended-precision pass; ``None`` (default): only
        when the float64 bound exceeds :data:`FFT_ESCALATE`.

    Returns
    -------
    y : numpy.ndarray
        The ``nfft`` outputs, float64.
    err : float
        A bound on their l1 error.
    """
    def run(dtype, u):
        spectra = [sfft.rfft(np.asarray(x, dtype=dtype), nfft) for x in xs]
        Y = spectra[0] ** power if power is not None else spectra[0] * spectra[1]
        y = sfft.irfft(Y, nfft)
        err = fft_error_bound([np.abs(S).astype(np.float64) for S in spectra], [float(np.sum(x)) for x in xs], nfft, power=power, u=u)
        return y, err

    have_ext = _U_EXT < _U
    if not extended or not have_ext:
        y, err = run(np.float64, _U)
        if extended is False or not have_ext or err <= FFT_ESCALATE:
            return y, err
    y, err = run(np.longdouble, _U_EXT)
    l1 = math.prod(float(np.sum(x)) for x in xs) ** (power or 1)
    return y.astype(np.float64), err + _U * (l1 + err)  # each output rounded to float64


def fft_error_bound(abs_spectra, l1_norms, nfft: int, power: int | None, u: float = _U) -> float:
    r"""l1 bound of the rounding error of ``irfft(prod_i rfft(x_i))`` (or ``irfft(rfft(x)^k)``), a posteriori.

    Componentwise FFT error (Higham (2002), Section 24.1: each of the :math:`\log_2 n` butterfly
    stages adds a relative error :math:`\le \eta \approx 7u` to partial sums bounded by
    :math:`\|x\|_1`): every computed :math:`X_j` is within :math:`e = c u\log_2(n)\|x\|_1` of the
    exact one, :math:`c = 8`. Then the power's error is at most
    :math:`k e(|X_j| + e)^{k-1} + 2ku|X_j|^k` per frequency (a product of two spectra:
    :math:`e_a(|B_j| + e_b) + e_b|A_j| + u|A_jB_j|`), and the inverse FFT adds
    :math:`c u\log_2(n)|Y_j|/n` per output and frequency; summing over the :math:`n` outputs, the l1
    error is at most :math:`\sum_j(|dY_j| + c u\log_2(n)|Y_j|)` over the full spectrum (rfft stores
    half of it). ``test_fft_error_bound_holds`` compares it with a long-double direct convolution.

    Parameters
    ----------
    abs_spectra : sequence of numpy.ndarray
        :math:`|X|` of the one transform (``power`` given) or :math:`|A|, |B|` of the two.
    l1_norms : sequence of float
        :math:`\|x_i\|_1` of the transformed vectors.
    nfft : int
        Transform length.
    power : int or None
        :math:`k` for ``irfft(rfft(x)^k)``; ``None`` for a product of two spectra.
    u : float, optional
        Unit roundoff of the arithmetic the transforms ran in (default float64's, :math:`2^{-53}`).

    Returns
    -------
    float
        The l1 error bound of the computed convolution.
    """
    n = nfft
    c = 8.0 * u * math.log2(max(n, 2))
    es = [c * nrm for nrm in l1_norms]
    w = np.full(len(abs_spectra[0]), 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    if power is not None:
        X, e, k = abs_spectra[0], es[0], power
        with np.errstate(over="ignore", under="ignore"):
            Y = np.power(X, k)
            dY = k * e * np.power(X + e, k - 1) + 2 * k * u * Y
    else:
        A, B = abs_spectra
        Y = A * B
        dY = es[0] * (B + es[1]) + es[1] * A + u * Y
    return float(np.dot(w, dY + c * Y))


# =============================================================================================
# discretisation: connect-the-dots (pessimistic) and rounding down (optimistic)
# =============================================================================================


def _scaled_slope(dv: float, dx: float) -> float:
    """``dv / (e^dx - 1)`` without overflow."""
    return dv / math.expm1(dx) if dx < 700.0 else dv * math.exp(-dx)


def _side_hull(v: np.ndarray, h: float):
    """Lower convex hull, in ``t = e^{i h}``, of the grid values ``v_0..v_n`` continued flat after ``v_n``.

    Works with slopes scaled by ``t`` at their left end, ``sigma_ab = (v_b - v_a) / expm1((b - a) h)``
    (= slope times ``t_a``), so nothing overflows for losses beyond 709 nats. Concave vertices (where
    the slope decreases by more than rounding) lie above the chord of their neighbours and are not on
    the lower hull: they are removed in vectorised sweeps; if the chain is still not convex after 20
    (a minimum of crossing curves), Andrew's monotone chain finishes the job. Returns ``(m, s0)``:
    ``m[i-1]`` for ``i = 1..n`` is the slope jump at ``t_i`` times ``t_i`` (the side's masses, 0 off the
    hull) and ``s0`` the hull's slope at ``t_0 = 1``. Needs ``n >= 1``: its one caller,
    :func:`_ctd_direction` from :func:`connect_the_dots`, passes ``n`` = :func:`_side_length` ``>=
    ceil(0.5 / h) + 1 >= 2`` (a guard for ``n <= 0`` was dead code and was removed).
    """
    n = len(v) - 1
    keep = np.ones(n + 1, dtype=bool)

    def scaled(idx):
        """Chord slopes times t at their left end, and times t at their right end (no overflow)."""
        g = np.diff(idx) * h
        dv = np.diff(v[idx])
        with np.errstate(over="ignore", under="ignore"):
            left = np.where(g < 700.0, dv / np.expm1(np.minimum(g, 700.0)), dv * np.exp(-np.minimum(g, 1400.0)))
        right = dv / -np.expm1(-g)
        return left, right

    def concave(idx):
        left, right = scaled(idx)
        # at vertex idx[k+1] the slope decreases iff left[k+1] < right[k] (both scaled by t at that vertex);
        # slopes of piecewise-linear inputs (curves of discrete PLDs) agree to ~1e-15 relative between
        # grid knots: a difference below 1e-13 relative is rounding, absorbed by the 1e-12 value margin
        lhs, rhs = left[1:], right[:-1]
        return np.nonzero(lhs < rhs - 1e-13 * (np.abs(lhs) + np.abs(rhs)))[0] + 1

    for _ in range(20):
        idx = np.nonzero(keep)[0]
        bad = concave(idx)
        if bad.size == 0:
            break
        keep[idx[bad]] = False
    else:
        idx = np.nonzero(keep)[0]
        if concave(idx).size:
            hull: list[int] = []
            for c in idx.tolist():
                while len(hull) >= 2:
                    a_, b_ = hull[-2], hull[-1]
                    # drop b_ unless it is strictly below the chord a_-c (slopes scaled by t_a)
                    if _scaled_slope(v[b_] - v[a_], (b_ - a_) * h) >= _scaled_slope(v[c] - v[a_], (c - a_) * h):
                        hull.pop()
                    else:
                        break
                hull.append(c)
            keep[:] = False
            keep[hull] = True
    idx = np.nonzero(keep)[0]
    left, right = scaled(idx)
    m = np.zeros(n)
    # jump at every hull vertex after the first: outgoing slope minus incoming, both scaled by t there
    m[idx[1:] - 1] = np.concatenate([left[1:], [0.0]]) - right
    return m, float(left[0]), idx, left


def connect_the_dots(curve: PrivacyCurve, h: float, tail: float = TAIL_MASS, optimistic: bool = False) -> "PldPair":
    r"""Discretisation of a pair given by its curves (Doroshenko et al. 2022, generalised to both orders).

    Doroshenko et al. (2022), connect-the-dots. Grid :math:`\epsilon_i = ih` on both sides; the
    curve of the pair for :math:`g = e^\epsilon \ge 1` is ``fwd`` and for :math:`g < 1` it is
    :math:`1 - g + g\,\mathrm{rev}(\log 1/g)` (the identity
    :math:`H_g(P\|Q) = 1 - g + gH_{1/g}(Q\|P)`). Each side is replaced by the lower convex hull of
    its grid values (in :math:`t = e^\epsilon`; flat after the last point), the two sides are joined
    at :math:`g = 1` (with a bridge if the junction is not convex), and the masses are the slope
    jumps: P-mass :math:`(s_i - s_{i-1})e^{\epsilon_i}` at loss :math:`\epsilon_i`,
    :math:`e^{-\epsilon_i}` times the reverse side's jump at :math:`-\epsilon_i`, the last value at
    :math:`+\infty`.

    Pessimistic (default): the piecewise-linear interpolation of a convex curve lies above it, so
    the result is a genuine pair dominating the given one. Optimistic: every grid value is first
    lowered by a bound on the interpolation error of the two adjacent steps,
    :math:`(t_{i+1} - t_i)(s_{i+1} - s_{i-1})/4` with :math:`s` the chord slopes, the last value is
    set to the curve's limit and the mass beyond the grid is dropped: the result's curve is below
    the given one everywhere (``proofs_notes/accounting_pld_discretisation.md``).

    Parameters
    ----------
    curve : PrivacyCurve
        The pair's curves.
    h : float
        Grid step (nats).
    tail : float, optional
        Curve value at which each side's grid stops (default :data:`TAIL_MASS`).
    optimistic : bool, optional
        Round down (attainable lower bound) instead of up (default ``False``).

    Returns
    -------
    PldPair
        Both orders (one if ``curve`` is symmetric).

    Raises
    ------
    ValueError
        If the curve's hull has a vertex the grid cannot represent (raised by the bridge between
        the two sides).
    """
    nf = _side_length(curve.fwd, curve.inf_f, h, tail)
    nr = nf if curve.symmetric else _side_length(curve.rev, curve.inf_r, h, tail)
    if max(nf, nr) > MAX_GRID:
        raise _GridTooLarge(max(nf, nr))
    vf = np.asarray(curve.fwd(np.arange(nf + 1) * h), dtype=np.float64)
    vr = vf if curve.symmetric else np.asarray(curve.rev(np.arange(nr + 1) * h), dtype=np.float64)
    for side, v in (("fwd", vf), ("rev", vr)):
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:  # a NaN at eps = 0 was silently replaced by the other side's value below
            raise ValueError(f"connect_the_dots: the curve's {side} returned {float(v[bad[0]])!r} at eps = {bad[0] * h:.6g} "
                             "(a privacy curve delta(eps) takes values in [0, 1])")
    # the curve values carry ~1e-14 relative error (log_ndtr, expm1); moving them by 1e-12 relative
    # keeps the hull on the right side of the exact curve, and the masses reproduce the hull to ~4u
    # relative (the slopes telescope)
    f = (1 - _VALUE_INFLATION) if optimistic else (1 + _VALUE_INFLATION)
    vf = np.minimum(vf * f, 1.0)
    vr = np.minimum(vr * f, 1.0)
    v0 = min(vf[0], vr[0])
    vf = np.minimum.accumulate(np.concatenate([[v0], vf[1:]]))
    vr = np.minimum.accumulate(np.concatenate([[v0], vr[1:]]))
    if optimistic:
        vf, vr = _lower_by_chord_error(vf, vr, h, curve.inf_f, curve.inf_r)
    fwd = _ctd_direction(vf, vr, h, optimistic)
    rev = None if curve.symmetric else _ctd_direction(vr, vf, h, optimistic)
    return PldPair(fwd, rev)


def _lower_by_chord_error(vf, vr, h, inf_f, inf_r):
    """Lower the grid values of both sides so that their piecewise-linear interpolation (in t, and in
    the reverse side's own coordinate) is below the convex curve they sample: on ``[t_i, t_{i+1}]`` the
    curve's derivative lies between the neighbouring chord slopes ``alpha = s_{i-1}`` and
    ``beta = s_{i+1}``, so the chord (slope ``s = s_i``) exceeds the curve by at most the height of the
    triangle under it, ``(t_{i+1} - t_i)(s - alpha)(beta - s)/(beta - alpha)`` (slopes scaled by ``t_i``)."""
    eh = math.exp(h)

    def side(v, s_left_of_first, limit):
        sig = np.diff(v) / math.expm1(h)  # sigma_i = s_i t_i: chord slope on [t_i, t_{i+1}] times t_i
        A = np.concatenate([[s_left_of_first], sig[:-1] * eh])  # <= g'(t_i+) t_i
        B = np.concatenate([sig[1:] / eh, [0.0]])  # >= g'(t_{i+1}-) t_i (g' <= 0)
        # largest gap between the chord and a convex curve with those end slopes: the triangle's height
        # (t_{i+1} - t_i)(s - alpha)(beta - s)/(beta - alpha); zero when the curve is linear on the step
        num = np.maximum(sig - A, 0.0) * np.maximum(B - sig, 0.0)
        den = B - A
        err = math.expm1(h) * np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        # per step, either the chord lowered by err (if that stays >= 0) or both ends at the step's
        # right value (the curve is decreasing, so its minimum on the step is there); each knot takes
        # the smaller of the constraints of its two steps
        chord_ok = v[1:] - err >= 0
        left_c = np.where(chord_ok, v[:-1] - err, v[1:])
        right_c = np.where(chord_ok, v[1:] - err, v[1:])
        out = np.empty_like(v)
        out[0] = left_c[0]
        out[1:-1] = np.minimum(right_c[:-1], left_c[1:])
        out[-1] = min(right_c[-1], limit)
        return np.maximum(out, 0.0)

    # slope left of g = 1 (in t, at t = 1) from the reverse side, and symmetrically. Both sides have
    # at least three values (connect_the_dots takes _side_length >= ceil(0.5 / h) + 1 >= 2 steps), so
    # vr[1] and vf[1] exist; a fallback slope of -1 for a one-value side was dead code and is gone
    sL_f = -1.0 + vr[0] - (vr[1] - vr[0]) / math.expm1(h)
    sL_r = -1.0 + vf[0] - (vf[1] - vf[0]) / math.expm1(h)
    vf2, vr2 = side(vf, sL_f, inf_f), side(vr, sL_r, inf_r)
    v0 = min(vf2[0], vr2[0])
    vf2[0] = vr2[0] = v0
    return np.minimum.accumulate(vf2), np.minimum.accumulate(vr2)


def _side_length(fn, inf_mass: float, h: float, tail: float) -> int:
    """Number of grid steps after which the curve is within ``tail`` of its limit (at most 2e6 steps):
    the first of the points ``0.5 * 2^k`` (up to 2048 nats) where it is, refined on 64 points below it
    (two vectorised evaluations; rounded up, so the range is never short)."""
    xs = 0.5 * 2.0 ** np.arange(13)
    vals = np.asarray(fn(xs), dtype=np.float64) - inf_mass
    ok = np.nonzero(vals <= tail)[0]
    if ok.size == 0:
        return int(min(math.ceil(xs[-1] / h) + 1, 2_000_000))
    k = int(ok[0])
    if k == 0:
        hi = xs[0]
    else:
        fine = np.linspace(xs[k - 1], xs[k], 65)
        fv = np.asarray(fn(fine), dtype=np.float64) - inf_mass
        hi = fine[int(np.nonzero(fv <= tail)[0][0])]
    return int(min(math.ceil(hi / h) + 1, 2_000_000))


def _ctd_direction(vf: np.ndarray, vr: np.ndarray, h: float, optimistic: bool = False) -> DiscretePLD:
    """Masses of the connect-the-dots pair with forward values ``vf`` and reverse values ``vr``."""
    nr = len(vr) - 1
    hf = _side_hull(vf, h)  # P-masses at eps_i, i = 1..nf; slope at g = 1 from the right; hull vertices
    hr = _side_hull(vr, h)  # Q-masses at loss -eps_i (the reverse pair's P-masses)
    wf, sf0, wr, sr0 = hf[0], hf[1], hr[0], hr[1]
    v0 = vf[0]
    # junction at g = 1: the left slope (in t) is -1 + v0 - sr0 (H_g = 1 - g + g H_{1/g}(Q||P)). Both
    # sides have at least two steps (connect_the_dots takes _side_length >= ceil(0.5 / h) + 1 >= 2), so
    # both slopes exist; a guard for an empty side was dead and is gone
    w0 = sf0 - (-1.0 + v0 - sr0)
    if w0 < -1e-12:
        wf, wr, w0 = _bridge(vf, vr, h, hf, hr)
    w0 = max(w0, 0.0)
    masses = np.concatenate([(wr * np.exp(-np.arange(1, nr + 1) * h))[::-1], [w0], wf])
    masses = np.maximum(masses, 0.0)
    return DiscretePLD(h=h, lo=-nr, masses=masses, inf=float(vf[-1]), slack=0.0, n_round=1, pessimistic=not optimistic).truncate()


def _bridge(vf, vr, h, hf, hr):
    """Lower common tangent of the two convex sides when the junction at g = 1 is concave.

    Works on the two sides' hull vertices near the junction, in t = g coordinates (values there are
    O(1)): left vertices ``L = (e^{-ih}, 1 - e^{-ih} + e^{-ih} vr_i)``, right vertices ``R = (e^{ih}, vf_i)``.
    The bridge ``L(a)-R(b)`` replaces the hull vertices strictly between; only the masses at its two
    ends change. In the reverse side's coordinate ``u = 1/t`` the line ``g = c + s t`` is
    ``r(u) = (s + 1) + (c - 1) u``: its u-slope is ``c - 1``.
    """
    wf, _, idx_f, left_f = hf
    wr, _, idx_r, left_r = hr

    def L(k):
        i = int(idx_r[k])
        t = math.exp(-i * h)
        return t, 1 - t + t * vr[i]

    def R(k):
        i = int(idx_f[k])
        if not i * h < 709.0:  # e^{i h} is not a float64: the hull cannot be bridged in this coordinate
            raise ValueError(f"PLD discretisation: the curve's hull has a vertex at privacy loss {i * h:.4g} nats "
                             "beyond the junction (e^loss overflows float64), so the concave junction cannot be "
                             "bridged; this event's PLD (typically a noise multiplier far below 1) is not available "
                             "on this grid (an upper bound: accountant='rdp' still applies)")
        return math.exp(i * h), vf[i]

    def below(p, q, r):  # is q strictly below the segment p-r ?
        (x1, y1), (x2, y2), (x3, y3) = p, q, r
        return (y2 - y1) * (x3 - x1) < (y3 - y1) * (x2 - x1)

    a, b = 1, 1  # the junction (vertex 0 of both sides) is dropped
    changed = True
    while changed:
        changed = False
        while b + 1 < len(idx_f) and idx_f[b] * h < 30 and not below(L(a), R(b), R(b + 1)):
            b += 1
            changed = True
        while a + 1 < len(idx_r) and idx_r[a] * h < 30 and not below(L(a + 1), L(a), R(b)):
            a += 1
            changed = True
    (xl, yl), (xr, yr) = L(a), R(b)
    s_br = (yr - yl) / (xr - xl)
    c_br = yl - s_br * xl
    wf, wr = wf.copy(), wr.copy()
    ib, ia = int(idx_f[b]), int(idx_r[a])
    out_f = left_f[b] if b < len(left_f) else 0.0  # outgoing slope at R(b), times t_b (0: flat after)
    out_r = left_r[a] if a < len(left_r) else 0.0
    wf[: ib - 1] = 0.0
    wf[ib - 1] = out_f - s_br * math.exp(ib * h)
    wr[: ia - 1] = 0.0
    wr[ia - 1] = out_r - (c_br - 1) * math.exp(ia * h)
    return wf, wr, 0.0


@dataclass
class PldPair:
    """Discrete PLDs of a pair in both orders: ``fwd`` for ``(P, Q)``, ``rev`` for ``(Q, P)``.

    delta and eps are the maxima over the two orders (dominating pairs of Zhu, Dong and Wang (2022),
    Definition 7, hold for both orders of the neighbours).

    Parameters
    ----------
    fwd : DiscretePLD
        PLD of :math:`(P, Q)`.
    rev : DiscretePLD or None, optional
        PLD of :math:`(Q, P)`; ``None`` (default): symmetric, the same law.
    """

    fwd: DiscretePLD
    rev: DiscretePLD | None = None

    @property
    def symmetric(self) -> bool:
        return self.rev is None

    def _both(self):
        return (self.fwd,) if self.rev is None else (self.fwd, self.rev)

    def delta(self, eps: float) -> float:
        return max(p.delta(eps) for p in self._both())

    def epsilon(self, delta: float) -> float:
        return max(p.epsilon(delta) for p in self._both())

    def map(self, fn) -> "PldPair":
        return PldPair(fn(self.fwd), None if self.rev is None else fn(self.rev))

    def zip(self, other: "PldPair", fn) -> "PldPair":
        if self.symmetric and other.symmetric:
            return PldPair(fn(self.fwd, other.fwd))
        a_r = self.fwd if self.rev is None else self.rev
        b_r = other.fwd if other.rev is None else other.rev
        return PldPair(fn(self.fwd, other.fwd), fn(a_r, b_r))

    def curve(self) -> PrivacyCurve:
        """The pair's curves (used to re-discretise after a max or min over pairs)."""
        f = self.fwd
        r = self.rev
        return PrivacyCurve(_discrete_curve(f), None if r is None else _discrete_curve(r), f.inf, 0.0 if r is None else r.inf, exact=False)


def _discrete_curve(p: DiscretePLD):
    return p.curve_at


def mixture_split_lambdas() -> np.ndarray:
    """Fractions ``lambda`` of the noise variance given to the full-gradient part in the split bound of a DP-RSVRG step.

    Helper, not a paper formula: the grid of splits of ``proofs_notes/accounting_pld_dp_rsvrg.md``;
    the step's curve is the minimum over them.

    Returns
    -------
    numpy.ndarray
        The eight fractions in (0, 1).
    """
    return np.array([0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9])


# =============================================================================================
# the accountant
# =============================================================================================


@dataclass(frozen=True)
class _Value:
    """What the dispatch returns for an event: an analytic curve (exact, or an upper bound) or a
    discrete PLD pair, plus, for the closed forms, the Gaussian shift (``mu``) or the binomial
    Gaussian parameters, so that compositions of them stay exact."""

    curve: PrivacyCurve | None = None
    pair: PldPair | None = None
    mu: float | None = None  # exactly a Gaussian pair at this shift


class PldAccountant:
    """Privacy loss distribution accountant (upper bounds by dominating pairs, pessimistic grid; lower bounds by attained pairs).

    Dominating pairs of Zhu, Dong and Wang (2022), discretised by connect-the-dots of Doroshenko et
    al. (2022); attainable lower bounds by concrete pairs on an optimistic grid. Supports every
    event of :mod:`.events` under its relation: ``Gaussian``, ``EpsilonDelta``,
    ``SampledWithoutReplacement`` of any supported event (replace-one), ``PoissonSampled`` of a
    Gaussian (add/remove), ``Activation``, ``MixtureOfGaussians`` (DP-RSVRG step), ``Composed``,
    ``SelfComposed``, ``WorstCase``. Composed events are stored; the PLD is built when eps or delta
    is asked (on a coarser grid, up to 0.1, if the PLD would need more than :data:`MAX_GRID`
    points).

    Parameters
    ----------
    value_discretization_interval : float, optional
        The grid step :math:`h` in nats, in (0, 0.1] (default :data:`DEFAULT_VALUE_DISCRETIZATION`).
    relation : str, optional
        Neighbouring relation, ``REPLACE_ONE`` (default) or ``ADD_REMOVE``.

    Raises
    ------
    ValueError
        If ``value_discretization_interval`` is not in (0, 0.1] or ``relation`` is unknown.
    """

    def __init__(self, value_discretization_interval: float = DEFAULT_VALUE_DISCRETIZATION, relation: str = REPLACE_ONE):
        self.h = check_positive("PldAccountant", "value_discretization_interval", value_discretization_interval)
        if not self.h <= 0.1:
            raise ValueError(f"PldAccountant: value_discretization_interval must be <= 0.1 (got {self.h:g})")
        if not isinstance(relation, str) or relation not in (REPLACE_ONE, ADD_REMOVE):
            raise ValueError(f"PldAccountant: unknown relation {relation!r} (use {REPLACE_ONE!r} or {ADD_REMOVE!r})")
        self.relation = relation
        self._events: list[tuple[Event, int]] = []
        self._cache: dict = {}
        self.grid_used = self.h  # the grid step of the last computation (coarser if the PLD was too wide)

    # ---------------------------------------------------------------- the one dispatch
    def _value(self, event: Event, lower: bool, compute: bool = True) -> _Value | None:
        """Validate ``event`` (``ValueError`` if unsupported) and, if ``compute``, return its dominating
        pair (``lower=False``) or an attained pair (``lower=True``)."""
        where = "PldAccountant"
        if not isinstance(event, Event):
            raise ValueError(f"{where}: not an event: {event!r}")
        if event.relation != self.relation:
            raise ValueError(f"{where}: event relation {event.relation!r} differs from the accountant's {self.relation!r}")
        h = self.h
        mu = _gaussian_shift(event, lower)
        if mu is not None:  # a Gaussian, or a nest of compositions of Gaussians: one Gaussian, exact
            if not compute:
                return None
            return _Value(mu=mu) if mu > 0 else _Value(pair=PldPair(DiscretePLD(h, 0, np.ones(1), pessimistic=not lower)))
        if isinstance(event, EpsilonDelta):
            if not compute:
                return None
            e0, d0 = event.eps, event.delta
            return _Value(curve=PrivacyCurve(lambda e: kov_delta(e, e0, d0), inf_f=d0, inf_r=d0, label="KOV"))
        if isinstance(event, PoissonSampled):
            if not isinstance(event.inner, Gaussian):
                raise ValueError(f"{where}: PoissonSampled is only bounded for a Gaussian inner event (ZDW22 Thm 11)")
            if not compute:
                return None
            q, mu = event.q, 1.0 / event.inner.noise_multiplier
            return _Value(curve=PrivacyCurve(lambda e: subsampled_delta(e, q, lambda x: gaussian_delta(x, mu)),
                                             lambda e: poisson_add_delta(e, q, mu), label="Poisson"))
        if isinstance(event, SampledWithoutReplacement):
            inner = self._value(event.inner, lower, compute)
            if not compute:
                return None
            q = event.q
            if q == 1.0:
                return inner
            if lower:
                # attained: ((1-q) Q + q P, Q) for the inner attained pair (P, Q) (accounting_pld.md)
                return _Value(curve=_mixture_pair_curve(self._as_curve(inner), q))
            hcurve = self._max_curve(inner)
            return _Value(curve=PrivacyCurve(lambda e: subsampled_delta(e, q, hcurve), exact=False, label="WOR"))
        if isinstance(event, Activation):
            return self._each_order(event.inner, lower, compute, lambda p: p.activate(event.rho))
        if isinstance(event, SelfComposed):
            if isinstance(event.inner, Activation) and (_gaussian_shift(event.inner.inner, lower) or 0) > 0:
                # nothing more to validate: the inner event is a Gaussian (its shift exists) and the
                # relation, that of every nested event, was checked above
                if not compute:
                    return None
                rho, mu, T = event.inner.rho, _gaussian_shift(event.inner.inner, lower), event.k
                return _Value(curve=PrivacyCurve(lambda e: binomial_gaussian_delta(e, rho, mu, T), label="binomial Gaussian", tight=True))
            return self._each_order(event.inner, lower, compute, lambda p: p.self_compose(event.k))
        if isinstance(event, Composed):
            parts = [self._value(e, lower, compute) for e in event.events]
            if not compute:
                return None
            if not parts:
                return _Value(pair=PldPair(DiscretePLD(h, 0, np.ones(1), pessimistic=not lower)))
            acc = self._pair(parts[0], lower)
            for v in parts[1:]:
                acc = acc.zip(self._pair(v, lower), lambda a, b: a.compose(b))
            return _Value(pair=acc)
        if isinstance(event, WorstCase):
            parts = [self._value(e, lower, compute) for e in event.events]
            if not compute:
                return None
            if lower:  # any one party's pair is attained; the first one (top level: see get_epsilon_lower)
                return parts[0]
            return _Value(curve=_max_of_curves([self._as_curve(v) for v in parts]))
        if isinstance(event, MixtureOfGaussians):
            if not compute:
                return None
            return self._mixture_step(event, lower)
        raise ValueError(f"{where}: cannot bound {type(event).__name__}")

    # ---------------------------------------------------------------- helpers of the dispatch
    def _each_order(self, inner: Event, lower: bool, compute: bool, op) -> _Value | None:
        """The inner event's discrete pair with ``op`` applied to the PLD of each order."""
        v = self._value(inner, lower, compute)
        return None if not compute else _Value(pair=self._pair(v, lower).map(op))

    def _as_curve(self, v: _Value) -> PrivacyCurve:
        if v.mu is not None:
            mu = v.mu
            return PrivacyCurve(lambda e: gaussian_delta(e, mu), label="Gaussian")
        if v.curve is not None:
            return v.curve
        return v.pair.curve()

    def _max_curve(self, v: _Value):
        c = self._as_curve(v)
        if c.rev is None:
            return c.fwd
        # not reached through the event algebra today: a SampledWithoutReplacement's inner event is
        # replace-one, and every replace-one upper-bound value is symmetric (Gaussian, KOV, WOR,
        # binomial Gaussian, DP-RSVRG step; Activation, compositions and WorstCase keep symmetry).
        # Kept so that an asymmetric pair added later is bounded in both orders (BBG18 needs the
        # inner curve to bound both); tested on a hand-made asymmetric value in test_pld_accountant
        return lambda e: np.maximum(c.fwd(e), c.rev(e))

    def _pair(self, v: _Value, lower: bool) -> PldPair:
        if v.pair is not None:
            return v.pair
        key = (id(v), lower)
        c = self._as_curve(v)
        return connect_the_dots(c, self.h, optimistic=lower)

    def _mixture_step(self, ev: MixtureOfGaussians, lower: bool) -> _Value:
        c, d, p = ev.shift_common, ev.shift_rare, ev.p_rare
        cands = []
        slack = 0.0

        def gd(mu):
            return (lambda e: gaussian_delta(e, mu)) if mu > 0 else (lambda e: np.zeros_like(np.asarray(e, dtype=float)))
        # labelled mixture: reveal the sampled index; PLD = (1-p) PLD_G(c) + p PLD_G(d)
        cands.append(lambda e: (1 - p) * np.asarray(gd(c)(e)) + p * np.asarray(gd(d)(e)))
        if ev.shift_sample is not None:  # (valid for c = 0 or a null sample part too: a factor is then the null mechanism)
            s_ = ev.shift_sample
            for lam in mixture_split_lambdas():
                mu1 = c / math.sqrt(lam)
                mu2 = s_ / math.sqrt(1 - lam)
                g1 = connect_the_dots(PrivacyCurve(gd(mu1)), self.h)
                g2 = connect_the_dots(PrivacyCurve(lambda e, mu2=mu2: subsampled_delta(e, p, gd(mu2)), exact=False), self.h)
                comp = g1.zip(g2, lambda a, b: a.compose(b)).fwd
                slack = max(slack, comp.slack)
                cands.append(replace(comp, slack=0.0).curve_at)  # raw masses; the slack is added back below
        curve = PrivacyCurve(lambda e: np.min(np.array([np.asarray(f(e), dtype=float) for f in cands]), axis=0), exact=False, label="DP-RSVRG step")
        pair = connect_the_dots(curve, self.h)
        return _Value(pair=pair.map(lambda q_: replace(q_, slack=q_.slack + slack)))

    # ---------------------------------------------------------------- public API
    def supports(self, event: Event) -> bool:
        """Whether this accountant can bound ``event``.

        Parameters
        ----------
        event : Event
            The event to check.

        Returns
        -------
        bool
            ``True`` if the dispatch accepts it.
        """
        try:
            self._value(event, False, compute=False)
        except ValueError:
            return False
        return True

    def compose(self, event: Event, count: int = 1) -> "PldAccountant":
        """Add ``count`` adaptive repetitions of ``event``.

        Parameters
        ----------
        event : Event
            A supported event.
        count : int, optional
            Repetitions, >= 1 (default 1).

        Returns
        -------
        PldAccountant
            ``self``, for chaining.

        Raises
        ------
        ValueError
            If ``count`` is not an integer >= 1 or the event is not supported.
        """
        count = check_int("PldAccountant.compose", "count", count, 1)
        self._value(event, False, compute=False)
        self._events.append((event, count))
        self._cache.clear()
        return self

    def _total_event(self) -> Event:
        evs = [e if k == 1 else SelfComposed(e, k) for e, k in self._events]
        return evs[0] if len(evs) == 1 else Composed(tuple(evs))

    def _result(self, lower: bool):
        if lower not in self._cache:
            if not self._events:
                raise ValueError("PldAccountant: nothing composed yet")
            ev = self._total_event()
            h0 = self.h
            try:
                while True:  # wide PLDs (eps of tens or more): retry on a coarser grid, still sound
                    try:
                        if lower and isinstance(ev, WorstCase):
                            res = [self._finish(self._value(e, True)) for e in ev.events]
                        else:
                            res = [self._finish(self._value(ev, lower))]
                        res = [_materialise(r, self.h, lower) for r in res]
                        break
                    except _GridTooLarge:
                        if self.h >= 0.1:
                            raise ValueError(f"PldAccountant: the privacy loss distribution needs more than {MAX_GRID} points "
                                             f"even at grid step {self.h:g}; eps is far beyond any useful range here") from None
                        self.h = min(0.1, self.h * 4)
            finally:
                self.grid_used = self.h
                self.h = h0
            self._cache[lower] = res
        return self._cache[lower]

    def _finish(self, v: _Value):
        """The object eps and delta are read from: an exact curve, a discrete pair, or an inexact curve
        (a bound given as a curve, discretised when read)."""
        if v.mu is not None:
            mu = v.mu
            return PrivacyCurve(lambda e: gaussian_delta(e, mu), label="Gaussian", tight=True)
        return v.pair if v.pair is not None else v.curve

    def is_exact_and_tight(self) -> bool:
        """Whether the upper bound is the exact curve of an attained pair (a Gaussian, activated Gaussian
        rounds): then no accountant can report less."""
        return all(isinstance(r, PrivacyCurve) and r.tight for r in self._result(False))

    def get_epsilon(self, delta: float) -> float:
        r"""Smallest eps with delta(eps) <= delta for the composed events: an upper bound of the true eps.

        Parameters
        ----------
        delta : float
            Target :math:`\delta \in (0, 1)`.

        Returns
        -------
        float
            :math:`\epsilon` (``inf`` if unreachable).

        Raises
        ------
        ValueError
            If ``delta`` is not in (0, 1), nothing was composed, or the PLD is too wide even at grid
            step 0.1.
        """
        delta = check_delta("PldAccountant.get_epsilon", delta)
        return max(r.epsilon(delta) for r in self._result(False))

    def get_delta(self, eps: float) -> float:
        r"""delta at ``eps`` (an upper bound).

        Parameters
        ----------
        eps : float
            :math:`\epsilon \ge 0`.

        Returns
        -------
        float
            :math:`\delta(\epsilon)`.

        Raises
        ------
        ValueError
            If ``eps`` is not finite or < 0, nothing was composed, or the PLD is too wide.
        """
        eps = check_real("PldAccountant.get_delta", "eps", eps)
        if eps < 0:
            raise ValueError(f"PldAccountant.get_delta: eps must be >= 0 (got {eps:g})")
        return max(r.delta(eps) for r in self._result(False))

    def get_epsilon_lower(self, delta: float) -> float:
        r"""An attainable lower bound: eps of a pair some real mechanism matching the events produces.

        Computed on an optimistic grid, so the true eps of the worst case is at least this.

        Parameters
        ----------
        delta : float
            Target :math:`\delta \in (0, 1)`.

        Returns
        -------
        float
            The lower bound of :math:`\epsilon`.

        Raises
        ------
        ValueError
            If ``delta`` is not in (0, 1), nothing was composed, or the PLD is too wide.
        """
        delta = check_delta("PldAccountant.get_epsilon_lower", delta)
        return max(r.epsilon(delta) for r in self._result(True))


def _materialise(r, h, lower):
    """Discretise an inexact curve now (inside the retry loop), keep exact curves and pairs.

    Every element of :meth:`PldAccountant._result` passes through here, so eps and delta are read
    from a :class:`PldPair` or an exact :class:`PrivacyCurve` only (the readers' fallback that
    discretised an inexact curve once more, on the original grid instead of the one used, was
    dead code and was removed)."""
    if isinstance(r, PldPair) or (isinstance(r, PrivacyCurve) and r.exact):
        return r
    return connect_the_dots(r, h, optimistic=lower)


def _gaussian_shift(event: Event, lower: bool) -> float | None:
    """Shift ``mu`` of the one Gaussian pair ``event`` amounts to, or ``None`` (:func:`.rdp.effective_gaussian`;
    for the attained lower-bound pair DP-RSVRG's step counts as its full-gradient Gaussian)."""
    z = effective_gaussian(event, full_gradient_only=lower)
    return None if z is None else 1.0 / z


def _mixture_pair_curve(c: PrivacyCurve, q: float) -> PrivacyCurve:
    """Curves of ``(P', Q) = ((1-q) Q + q P, Q)`` from those of ``(P, Q)`` (accounting_pld.md):
    ``H_g(P'||Q) = q H_{1 + (g-1)/q}(P||Q)`` and, for ``g (1-q) < 1``,
    ``H_g(Q||P') = (1 - g(1-q)) H_{g q / (1 - g(1-q))}(Q||P)`` (0 otherwise); both monotone in the inner
    curves, so lower inner curves give lower outer ones."""
    f = c.fwd
    r = c.rev if c.rev is not None else c.fwd

    def fwd(e):
        return subsampled_delta(e, q, f)

    def rev(e):
        e = np.asarray(e, dtype=np.float64)
        out = np.zeros_like(e)
        one_minus = -np.expm1(np.minimum(e + math.log1p(-q), 1.0)) if q < 1 else np.ones_like(e)
        ok = one_minus > 0
        if ok.any():
            gq = np.log(q) + e[ok] - np.log(one_minus[ok])  # log of g q / (1 - g (1 - q)) >= 0
            out[ok] = one_minus[ok] * np.asarray(r(np.maximum(gq, 0.0)))
        return out

    return PrivacyCurve(fwd, rev, q * c.inf_f, 0.0, exact=c.exact, label="mixture pair")


def _max_of_curves(curves: list[PrivacyCurve]) -> PrivacyCurve:
    def fwd(e):
        return np.max(np.array([np.asarray(c.fwd(e), dtype=float) for c in curves]), axis=0)

    def rev(e):
        return np.max(np.array([np.asarray((c.rev or c.fwd)(e), dtype=float) for c in curves]), axis=0)

    sym = all(c.rev is None for c in curves)
    return PrivacyCurve(fwd, None if sym else rev, max(c.inf_f for c in curves), max(c.inf_r for c in curves), exact=False, label="max")
