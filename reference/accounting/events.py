"""Privacy events: small frozen descriptions of mechanisms.

Written in the style of dp-accounting's ``dp_event.py`` (composition by nesting; an accountant
decides whether it can bound an event and raises if it cannot), but by this project. Every event
validates its parameters at construction and raises ``ValueError`` naming the event, the
parameter and by how much it is out of range.

Neighbouring relation. The papers (Huang et al. (2024), Section 2; Han et al. (2024), Section 2)
use record-level *replace-one* adjacency (datasets differing in one record): :data:`REPLACE_ONE`
is the default everywhere. :data:`ADD_REMOVE` exists for formulas that are only proven for
add/remove adjacency (the Poisson-subsampled Gaussian of Mironov, Talwar and Zhang (2019)); an
accountant refuses to mix them.

Sensitivity normalisation. ``Gaussian(z)`` is the Gaussian mechanism whose noise standard
deviation is ``z`` times the l2-sensitivity of the query *under the event's relation* (for a
clipped batch mean under replace-one the sensitivity is ``2 tau / b``, so ``z = sigma b / (2 tau)``).

Examples
--------
Events are frozen descriptions; bad parameters raise at construction:

>>> from prirfed.reference.accounting.events import Activation, Gaussian, SelfComposed
>>> run = SelfComposed(Activation(0.1, Gaussian(2.0)), 50)     # 50 PriRFed rounds, rho = 0.1
>>> run.k, run.inner.rho, run.inner.inner.noise_multiplier
(50, 0.1, 2.0)
>>> Gaussian(-1.0)
Traceback (most recent call last):
...
ValueError: Gaussian: noise_multiplier (sigma) must be > 0 ...
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Tuple

import numpy as np

from prirfed.reference.checks import check_int as _shared_check_int

__all__ = [
    "REPLACE_ONE",
    "ADD_REMOVE",
    "Event",
    "Gaussian",
    "EpsilonDelta",
    "SampledWithoutReplacement",
    "PoissonSampled",
    "Composed",
    "SelfComposed",
    "Activation",
    "MixtureOfGaussians",
    "WorstCase",
    "check_real",
    "check_positive",
    "check_int",
    "check_epsilon",
    "check_delta",
    "check_probability",
]

REPLACE_ONE = "replace_one"
ADD_REMOVE = "add_remove"
_RELATIONS = (REPLACE_ONE, ADD_REMOVE)


def check_real(where: str, name: str, value) -> float:
    """A finite real number (not a bool, string or None).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The parameter's name.
    value : object
        The value to check.

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    ValueError
        If the value is out of range (the message names ``where``, the parameter and by how much).
    """
    if value is None or isinstance(value, (bool, np.bool_, str, bytes)) or isinstance(value, complex):
        raise ValueError(f"{where}: {name} must be a real number (got {value!r})")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: {name} must be a real number (got {value!r})") from None
    if not math.isfinite(v):
        raise ValueError(f"{where}: {name} must be finite (got {name} = {v})")
    return v


def check_positive(where: str, name: str, value) -> float:
    """A finite real number greater than 0.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The parameter's name.
    value : object
        The value to check.

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    ValueError
        If the value is out of range (the message names ``where``, the parameter and by how much).
    """
    v = check_real(where, name, value)
    if v <= 0:
        raise ValueError(f"{where}: {name} must be finite and > 0 (got {name} = {v:.6g})")
    return v


def check_int(where: str, name: str, value, minimum: int = 1) -> int:
    """An integer at least ``minimum`` and at most :math:`2^{53}` (:func:`prirfed.reference.checks.check_int` plus that cap; integral floats such as ``3.0`` accepted).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The parameter's name.
    value : object
        The value to check.
    minimum : int, optional
        The smallest allowed value (default 1).

    Returns
    -------
    int
        ``value`` as an int.

    Raises
    ------
    ValueError
        If the value is out of range (the message names ``where``, the parameter and by how much).
    """
    v = _shared_check_int(where, name, value, minimum)
    if v > 2**53:
        digits = str(v)
        raise ValueError(f"{where}: {name} must be <= 2**53 (got {name} = {digits[:12]}..., {len(digits)} digits)")
    return v


def check_epsilon(where: str, eps, name: str = "eps") -> float:
    r"""An :math:`\epsilon` with :math:`0 < \epsilon < \infty`.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    eps : object
        The value to check.
    name : str, optional
        The parameter's name (default ``"eps"``).

    Returns
    -------
    float
        ``float(eps)``.

    Raises
    ------
    ValueError
        If the value is out of range (the message names ``where``, the parameter and by how much).
    """
    eps = check_real(where, name, eps)
    if eps <= 0:
        raise ValueError(f"{where}: {name} must be > 0 (got {name} = {eps:.6g}, {abs(eps):.3g} at or below 0)")
    return eps


def check_delta(where: str, delta, name: str = "delta", allow_zero: bool = False) -> float:
    r"""A :math:`\delta` with :math:`0 < \delta < 1` (:math:`0 \le \delta` if ``allow_zero``).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    delta : object
        The value to check.
    name : str, optional
        The parameter's name (default ``"delta"``).
    allow_zero : bool, optional
        Accept 0 (pure DP; default False).

    Returns
    -------
    float
        ``float(delta)``.

    Raises
    ------
    ValueError
        If the value is out of range (the message names ``where``, the parameter and by how much).
    """
    delta = check_real(where, name, delta)
    lo_ok = delta >= 0 if allow_zero else delta > 0
    if not lo_ok or delta >= 1:
        rng = "[0, 1)" if allow_zero else "(0, 1)"
        off = abs(delta) if delta <= 0 else delta - 1  # abs: delta = 0 printed "outside by -0"
        raise ValueError(f"{where}: {name} must lie in {rng} (got {name} = {delta:.6g}, outside by {off:.3g})")
    return delta


def check_probability(where: str, q, name: str = "q") -> float:
    r"""A probability :math:`q` with :math:`0 < q \le 1`.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    q : object
        The value to check.
    name : str, optional
        The parameter's name (default ``"q"``).

    Returns
    -------
    float
        ``float(q)``.

    Raises
    ------
    ValueError
        If the value is out of range (the message names ``where``, the parameter and by how much).
    """
    q = check_real(where, name, q)
    if q <= 0 or q > 1:
        off = abs(q) if q <= 0 else q - 1  # abs: q = 0 printed "outside by -0"
        raise ValueError(f"{where}: {name} must lie in (0, 1] (got {name} = {q:.6g}, outside by {off:.3g})")
    return q


def _event_tuple(where: str, events) -> tuple:
    """``events`` as a tuple of Events, or ``ValueError`` naming the first element that is not one."""
    if isinstance(events, Event) or isinstance(events, (str, bytes)) or not hasattr(events, "__iter__"):
        raise ValueError(f"{where}: events must be a sequence of Events (got {events!r})")
    evs = tuple(events)
    for e in evs:
        if not isinstance(e, Event):
            raise ValueError(f"{where}: every element must be an Event (got {type(e).__name__} {e!r})")
    return evs


def _check_relation(where: str, relation: str) -> str:
    if not isinstance(relation, str) or relation not in _RELATIONS:
        raise ValueError(f"{where}: unknown neighbouring relation {relation!r} (use {REPLACE_ONE!r} or {ADD_REMOVE!r})")
    return relation


class Event:
    """Base class of privacy events (a marker; every event is a frozen dataclass with a ``relation``).

    Helper, not a paper formula: the common type the accountants dispatch on.
    """

    relation: str = REPLACE_ONE


@dataclass(frozen=True)
class Gaussian(Event):
    """Gaussian mechanism, noise standard deviation ``noise_multiplier`` times the l2-sensitivity (Han et al. (2024), Lemma 2; its RDP curve: Mironov (2017)).

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the sensitivity under ``relation``, > 0.
    relation : str, optional
        :data:`REPLACE_ONE` (default) or :data:`ADD_REMOVE`.

    Raises
    ------
    ValueError
        If ``noise_multiplier`` is not finite and > 0, or the relation is unknown.
    """

    noise_multiplier: float
    relation: str = REPLACE_ONE

    def __post_init__(self):
        z = check_real("Gaussian", "noise_multiplier", self.noise_multiplier)
        if z <= 0:
            raise ValueError(f"Gaussian: noise_multiplier (sigma) must be > 0 (got {z:.6g}, {abs(z):.3g} at or below 0)")
        object.__setattr__(self, "noise_multiplier", z)
        _check_relation("Gaussian", self.relation)


@dataclass(frozen=True)
class EpsilonDelta(Event):
    r"""A black-box :math:`(\epsilon, \delta)`-DP mechanism (Huang et al. (2024), Definition 2.4); ``delta = 0`` means pure DP.

    Parameters
    ----------
    eps : float
        :math:`\epsilon > 0`.
    delta : float
        :math:`\delta \in [0, 1)`.
    relation : str, optional
        :data:`REPLACE_ONE` (default) or :data:`ADD_REMOVE`.

    Raises
    ------
    ValueError
        If a parameter is out of range.
    """

    eps: float
    delta: float
    relation: str = REPLACE_ONE

    def __post_init__(self):
        object.__setattr__(self, "eps", check_epsilon("EpsilonDelta", self.eps))
        object.__setattr__(self, "delta", check_delta("EpsilonDelta", self.delta, allow_zero=True))
        _check_relation("EpsilonDelta", self.relation)


@dataclass(frozen=True)
class SampledWithoutReplacement(Event):
    r"""``inner`` run on a uniformly random subset of size ``m`` of ``n`` records, replace-one (Balle, Barthe and Gaboardi (2018); Wang, Balle and Kasiviswanathan (2019)).

    Parameters
    ----------
    n : int
        Number of records, at least 1.
    m : int
        Sample size, :math:`1 \le m \le n`.
    inner : Event
        The mechanism run on the sample (replace-one).

    Raises
    ------
    ValueError
        If ``m > n``, a count is not a positive integer, or ``inner`` is not a replace-one event.
    """

    n: int
    m: int
    inner: Event

    def __post_init__(self):
        n = check_int("SampledWithoutReplacement", "n", self.n, 1)
        m = check_int("SampledWithoutReplacement", "m", self.m, 1)
        if m > n:
            raise ValueError(f"SampledWithoutReplacement: sample size m = {m} exceeds n = {n} (by {m - n})")
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "m", m)
        if not isinstance(self.inner, Event):
            raise ValueError(f"SampledWithoutReplacement: inner must be an Event (got {type(self.inner).__name__})")
        if self.inner.relation != REPLACE_ONE:
            raise ValueError("SampledWithoutReplacement: the inner event must use the replace-one relation")

    @property
    def relation(self) -> str:
        return REPLACE_ONE

    @property
    def q(self) -> float:
        return self.m / self.n


@dataclass(frozen=True)
class PoissonSampled(Event):
    r"""``inner`` run on a Poisson sample (each record kept with probability ``q``), add/remove (Mironov, Talwar and Zhang (2019)).

    Parameters
    ----------
    q : float
        Sampling probability, :math:`0 < q \le 1`.
    inner : Event
        The mechanism run on the sample, built with ``relation=ADD_REMOVE``.

    Raises
    ------
    ValueError
        If ``q`` is out of range or ``inner`` is not an add/remove event.
    """

    q: float
    inner: Event

    def __post_init__(self):
        object.__setattr__(self, "q", check_probability("PoissonSampled", self.q))
        if not isinstance(self.inner, Event):
            raise ValueError(f"PoissonSampled: inner must be an Event (got {type(self.inner).__name__})")
        if self.inner.relation != ADD_REMOVE:
            raise ValueError(
                "PoissonSampled: the Mironov-Talwar-Zhang bound is proven for add/remove adjacency; "
                f"the inner event has relation {self.inner.relation!r} (build it with relation=ADD_REMOVE)"
            )

    @property
    def relation(self) -> str:
        return ADD_REMOVE


@dataclass(frozen=True)
class Composed(Event):
    """Adaptive composition of the listed events (Huang et al. (2024), Theorem 2.2; additivity of RDP, Mironov (2017), Proposition 1).

    Parameters
    ----------
    events : sequence of Event
        The events, all with the same relation.

    Raises
    ------
    ValueError
        If an element is not an event or the relations differ.
    """

    events: Tuple[Event, ...] = field(default_factory=tuple)

    def __post_init__(self):
        evs = _event_tuple("Composed", self.events)
        rels = {e.relation for e in evs}
        if len(rels) > 1:
            raise ValueError(f"Composed: events mix neighbouring relations {sorted(rels)}")
        object.__setattr__(self, "events", evs)

    @property
    def relation(self) -> str:
        return self.events[0].relation if self.events else REPLACE_ONE


@dataclass(frozen=True)
class SelfComposed(Event):
    """``k``-fold adaptive composition of ``inner`` (Dwork and Roth (2014), Section 3.5; Mironov (2017), Proposition 1).

    Parameters
    ----------
    inner : Event
        The composed event.
    k : int
        Number of compositions, at least 1.

    Raises
    ------
    ValueError
        If ``inner`` is not an event or ``k`` is not a positive integer.
    """

    inner: Event
    k: int

    def __post_init__(self):
        if not isinstance(self.inner, Event):
            raise ValueError(f"SelfComposed: inner must be an Event (got {type(self.inner).__name__})")
        object.__setattr__(self, "k", check_int("SelfComposed", "k (T)", self.k, 1))

    @property
    def relation(self) -> str:
        return self.inner.relation


@dataclass(frozen=True)
class Activation(Event):
    r""""My agent takes part with probability ``rho``": output :math:`(1-\rho)U + \rho\,\mathrm{inner}`, one PriRFed round with :math:`\rho = s/N` (Huang et al. (2024), Algorithm 1; proofs note ``accounting_theorem_4_2``).

    ``U`` (the output when the agent holding the record is not selected) must not depend on the
    record.

    Parameters
    ----------
    rho : float
        Activation probability, :math:`0 < \rho \le 1`.
    inner : Event
        The mechanism run when the agent is activated.

    Raises
    ------
    ValueError
        If ``rho`` is out of range or ``inner`` is not an event.
    """

    rho: float
    inner: Event

    def __post_init__(self):
        object.__setattr__(self, "rho", check_probability("Activation", self.rho, "rho"))
        if not isinstance(self.inner, Event):
            raise ValueError(f"Activation: inner must be an Event (got {type(self.inner).__name__})")

    @property
    def relation(self) -> str:
        return self.inner.relation


@dataclass(frozen=True)
class MixtureOfGaussians(Event):
    r"""One DP-RSVRG inner step (Huang et al. (2024), Algorithm 3), sensitivity already in noise units.

    Under replace-one of record :math:`j` the step releases a mixture over the uniformly sampled
    index :math:`l` of :math:`N(\mu_l, \sigma^2 I)`; the mean moves by at most ``shift_common`` (in
    units of :math:`\sigma`) when :math:`l \ne j` and by at most ``shift_rare`` when :math:`l = j`,
    which happens with probability ``p_rare`` :math:`= 1/N_i`. For DP-RSVRG
    ``shift_common`` :math:`= (2\tau_0/N_i)/\sigma` and ``shift_rare``
    :math:`= (2\tau_0/N_i + 4\tau_1)/\sigma` (proofs note ``accounting_dp_rsvrg``).

    Parameters
    ----------
    shift_common : float
        Shift of the mean when the sampled index is not the changed record, >= 0.
    shift_rare : float
        Shift when it is, >= 0.
    p_rare : float
        Probability of the rare case, in :math:`(0, 1]`.
    shift_sample : float, optional
        Bound on the part of the rare shift that comes from the sampled record alone
        (:math:`4\tau_1/\sigma`); enables the tighter weak-triangle bound.

    Raises
    ------
    ValueError
        If a shift is negative or ``p_rare`` is out of range.
    """

    shift_common: float
    shift_rare: float
    p_rare: float
    shift_sample: float | None = None

    def __post_init__(self):
        if self.shift_sample is not None:
            v = check_real("MixtureOfGaussians", "shift_sample", self.shift_sample)
            if v < 0:
                raise ValueError(f"MixtureOfGaussians: shift_sample must be >= 0 (got {v})")
            object.__setattr__(self, "shift_sample", v)
        c = check_real("MixtureOfGaussians", "shift_common", self.shift_common)
        d = check_real("MixtureOfGaussians", "shift_rare", self.shift_rare)
        if c < 0 or d < 0:
            raise ValueError(f"MixtureOfGaussians: shifts must be >= 0 (got shift_common = {c}, shift_rare = {d})")
        object.__setattr__(self, "shift_common", c)
        object.__setattr__(self, "shift_rare", d)
        object.__setattr__(self, "p_rare", check_probability("MixtureOfGaussians", self.p_rare, "p_rare"))

    @property
    def relation(self) -> str:
        return REPLACE_ONE


@dataclass(frozen=True)
class WorstCase(Event):
    r"""The record belongs to exactly one of several parties, each running its own event (parallel composition; McSherry (2009)).

    Neighbouring datasets differ in one record of one party :math:`i`; only ``events[i]`` sees it,
    so the guarantee is the worst over the listed events (for RDP: the pointwise maximum over
    orders). A PriRFed run with heterogeneous agents (different :math:`N_i, b_i, \sigma_i`) is
    accounted this way, one event per agent.

    Parameters
    ----------
    events : sequence of Event
        The parties' events, at least one, all with the same relation.

    Raises
    ------
    ValueError
        If the sequence is empty, holds a non-event, or mixes relations.
    """

    events: Tuple[Event, ...] = field(default_factory=tuple)

    def __post_init__(self):
        evs = _event_tuple("WorstCase", self.events)
        if not evs:
            raise ValueError("WorstCase: needs at least one event")
        rels = {e.relation for e in evs}
        if len(rels) > 1:
            raise ValueError(f"WorstCase: events mix neighbouring relations {sorted(rels)}")
        object.__setattr__(self, "events", evs)

    @property
    def relation(self) -> str:
        return self.events[0].relation
