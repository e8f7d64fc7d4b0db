"""Choosing an accountant, and privacy reports with an upper and an attainable lower bound.

Every function of the package that computes an epsilon takes ``accountant=``:

- ``"pld"``: :class:`.pld.PldAccountant` (dominating pairs, pessimistic discretisation);
- ``"rdp"``: :class:`.rdp.RdpAccountant` (Renyi DP, improved conversion);
- ``"best"`` (the default everywhere): the smallest of the valid upper bounds the accountants give
  for the event (each is sound, so their minimum is), i.e. the tightest valid one; the RDP bound is
  skipped when the PLD result is an exact curve of an attained pair (nothing can be tighter);
- an accountant *object* (e.g. ``PldAccountant(1e-4)`` or ``RdpAccountant(orders=...)``): used as a
  template; a deep copy composes the event, the object itself is left unchanged.

:func:`privacy_report` gives ``[lower, upper]`` for an event: ``upper`` from the chosen accountant,
``lower`` from :meth:`.pld.PldAccountant.get_epsilon_lower` (the eps of a pair a real mechanism
matching the event produces), and their ratio (``proofs_notes/accounting_pld.md``).

Examples
--------
>>> from prirfed.reference.accounting.accountants import epsilon, privacy_report
>>> from prirfed.reference.accounting.events import Gaussian, SampledWithoutReplacement, SelfComposed
>>> ev = SelfComposed(SampledWithoutReplacement(600, 60, Gaussian(1.0)), 100)
>>> epsilon(ev, 1e-5, "best") <= min(epsilon(ev, 1e-5, "pld"), epsilon(ev, 1e-5, "rdp"))
True
>>> r = privacy_report(ev, 1e-5)
>>> r.lower <= r.upper and r.ratio < 1.2
True
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from .events import Event, check_delta
from .pld import PldAccountant
from .rdp import RdpAccountant

__all__ = ["ACCOUNTANT_CHOICES", "resolve_accountant", "epsilon", "lower_epsilon", "PrivacyReport", "privacy_report"]

#: The accountant names accepted everywhere (besides accountant objects).
ACCOUNTANT_CHOICES = ("best", "pld", "rdp")


def resolve_accountant(where: str, accountant) -> str | object:
    """Validate an ``accountant=`` argument.

    Helper, not a paper formula: argument validation.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    accountant : str or object
        One of :data:`ACCOUNTANT_CHOICES`, or an object with ``compose`` and ``get_epsilon``.

    Returns
    -------
    str or object
        ``accountant`` itself.

    Raises
    ------
    ValueError
        If it is neither.
    """
    if isinstance(accountant, str):
        if accountant not in ACCOUNTANT_CHOICES:
            raise ValueError(f"{where}: accountant must be one of {ACCOUNTANT_CHOICES} or an accountant object (got {accountant!r})")
        return accountant
    if callable(getattr(accountant, "compose", None)) and callable(getattr(accountant, "get_epsilon", None)):
        return accountant
    raise ValueError(f"{where}: accountant must be one of {ACCOUNTANT_CHOICES} or an accountant object (got {accountant!r})")


def _one(acc, event: Event, delta: float) -> float:
    return acc.compose(event).get_epsilon(delta)


def epsilon(event: Event, delta: float, accountant="best", where: str = "epsilon") -> float:
    r"""An upper bound of the :math:`\epsilon` of ``event`` at ``delta`` from the chosen accountant (PLD: dominating pairs, Zhu, Dong and Wang (2022), with connect-the-dots discretisation, Doroshenko et al. (2022), see :mod:`.pld`; RDP: Mironov (2017)).

    ``"best"`` returns the smallest of the valid bounds (each is sound, so their minimum is), and
    skips the RDP bound when the PLD result is an exact curve of an attained pair.

    Parameters
    ----------
    event : Event
        The mechanism's privacy event.
    delta : float
        :math:`\delta \in (0, 1)`.
    accountant : str or object, optional
        ``"best"`` (default), ``"pld"``, ``"rdp"`` or an accountant object used as a template (a deep
        copy composes the event).
    where : str, optional
        Name used in error messages.

    Returns
    -------
    float
        The upper bound of :math:`\epsilon`.

    Raises
    ------
    ValueError
        If ``event`` is not an event, ``delta`` is out of range, or no accountant can bound it.
    """
    if not isinstance(event, Event):
        raise ValueError(f"{where}: not an event: {event!r}")
    delta = check_delta(where, delta)
    acc = resolve_accountant(where, accountant)
    if not isinstance(acc, str):
        return _one(copy.deepcopy(acc), event, delta)
    if acc == "rdp":
        return _one(RdpAccountant(relation=event.relation), event, delta)
    pld = PldAccountant(relation=event.relation)
    if acc == "pld":
        return _one(pld, event, delta)
    candidates, errors = [], []
    if pld.supports(event):
        try:
            pld.compose(event)
            candidates.append(pld.get_epsilon(delta))
            if pld.is_exact_and_tight():
                return candidates[0]
        except ValueError as exc:  # e.g. a PLD too wide for any grid: the RDP bound may still exist
            errors.append(exc)
    rdp = RdpAccountant(relation=event.relation)
    if rdp.supports(event):
        candidates.append(_one(rdp, event, delta))
    if not candidates:  # neither gave a bound: say why
        if errors:
            raise errors[0]
        pld.compose(event)
    return min(candidates)


def lower_epsilon(event: Event, delta: float, where: str = "lower_epsilon") -> float:
    r"""An attainable lower bound of the :math:`\epsilon` of ``event``: the :math:`\epsilon` of a pair of output distributions that a real mechanism matching the event produces (:meth:`.pld.PldAccountant.get_epsilon_lower`: the pair's PLD discretised optimistically; proofs note ``accounting_pld``, Zhu, Dong and Wang (2022)).

    Parameters
    ----------
    event : Event
        The mechanism's privacy event.
    delta : float
        :math:`\delta \in (0, 1)`.
    where : str, optional
        Name used in error messages.

    Returns
    -------
    float
        The lower bound of :math:`\epsilon`.

    Raises
    ------
    ValueError
        If ``event`` is not an event or ``delta`` is out of range.
    """
    if not isinstance(event, Event):
        raise ValueError(f"{where}: not an event: {event!r}")
    delta = check_delta(where, delta)
    return PldAccountant(relation=event.relation).compose(event).get_epsilon_lower(delta)


@dataclass(frozen=True)
class PrivacyReport:
    r"""``lower <= true eps <= upper`` at ``delta``, with the source of the upper bound.

    Helper, not a paper formula: the result record of :func:`privacy_report`.

    Parameters
    ----------
    delta : float
        The :math:`\delta` of the report.
    lower : float
        Attainable lower bound of :math:`\epsilon`.
    upper : float
        Upper bound of :math:`\epsilon`.
    accountant : str
        Source of ``upper``: ``"pld"``, ``"rdp"`` or the accountant object's class name.
    pld, rdp : float, optional
        The two upper bounds when computed.
    """

    delta: float
    lower: float
    upper: float
    accountant: str
    pld: float | None = None
    rdp: float | None = None

    @property
    def ratio(self) -> float:
        """``upper / lower`` (``inf`` when the lower bound is 0)."""
        if self.lower <= 0:
            return math.inf if self.upper > 0 else 1.0
        return self.upper / self.lower

    @property
    def gap(self) -> float:
        return self.upper - self.lower

    def __str__(self) -> str:
        return f"eps in [{self.lower:.6g}, {self.upper:.6g}] at delta = {self.delta:g} (upper/lower = {self.ratio:.4g}; upper by {self.accountant})"


def privacy_report(event: Event, delta: float, accountant="best") -> PrivacyReport:
    r"""``[lower, upper]`` of the :math:`\epsilon` of ``event`` at ``delta``: the upper bound by ``accountant`` (:func:`epsilon`), the attainable lower bound (:func:`lower_epsilon`; Zhu, Dong and Wang (2022); proofs note ``accounting_pld``).

    Parameters
    ----------
    event : Event
        The mechanism's privacy event.
    delta : float
        :math:`\delta \in (0, 1)`.
    accountant : str or object, optional
        ``"best"`` (default), ``"pld"``, ``"rdp"`` or an accountant object.

    Returns
    -------
    PrivacyReport
        The bounds, their source and both upper bounds where computed.

    Raises
    ------
    ValueError
        If an argument is invalid, no accountant can bound the event, or the lower bound exceeds the
        upper bound (never reported as a bound).
    """
    where = "privacy_report"
    delta = check_delta(where, delta)
    acc = resolve_accountant(where, accountant)
    low = lower_epsilon(event, delta, where)
    pld_e = rdp_e = None
    if isinstance(acc, str):
        # the PLD accountant supports every event that reaches here: lower_epsilon above composed the
        # event with it, which refuses exactly what supports() refuses (a guard there was dead code)
        pld_e = PldAccountant(relation=event.relation).compose(event).get_epsilon(delta)
        rdp = RdpAccountant(relation=event.relation)
        if rdp.supports(event):
            rdp_e = rdp.compose(event).get_epsilon(delta)
        if acc == "pld":
            up, name = pld_e, "pld"
        elif acc == "rdp":
            up, name = rdp_e, "rdp"
        else:
            vals = [(v, n) for v, n in ((pld_e, "pld"), (rdp_e, "rdp")) if v is not None]
            up, name = min(vals)
        if up is None:
            up = epsilon(event, delta, acc, where)
    else:
        up, name = epsilon(event, delta, acc, where), type(acc).__name__
    if low > up * (1.0 + 1e-9):
        # a contradiction: one bound is wrong. Seen at eps near 1300 (noise multiplier 0.05, privacy
        # losses far beyond the 709 nats where e^loss overflows); proofs note accounting_pld, open.
        raise ValueError(f"{where}: the attainable lower bound eps = {low:.6g} exceeds the {name} upper bound "
                         f"{up:.6g} (by {low - up:.3g}): this event is outside the range where prirfed's accountants "
                         "agree (typically eps in the hundreds or more); no bound is reported")
    return PrivacyReport(delta=delta, lower=low, upper=up, accountant=name, pld=pld_e, rdp=rdp_e)
