"""Privacy events: small frozen descriptions of mechanisms (DESIGN.md section 4).

Written in the style of dp_accounting's ``dp_event.py`` (composition by nesting; an accountant
decides whether it can bound an event and raises if it cannot), but by this project. Every event
validates its parameters at construction and raises ``ValueError`` naming the event, the
parameter and by how much it is out of range.

Neighbouring relation. The papers (000 Section 2, 001 Section 2) use record-level
*replace-one* adjacency (``|D xor D'| <= 2``): :data:`REPLACE_ONE` is the default everywhere.
:data:`ADD_REMOVE` exists for formulas that are only proven for add/remove adjacency (the
Poisson-subsampled Gaussian of Mironov, Talwar, Zhang 2019); an accountant refuses to mix them.

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
    """Return ``value`` as a finite float, or raise ``ValueError`` naming ``where``, ``name`` and the value.

    Accepts Python and NumPy real numbers. Refuses ``None``, strings (also numeric ones such as
    ``"1e-5"``: a number that arrives as text is a bug upstream), bools, complex numbers, NaN,
    infinities and integers too large for a float.
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
    """Return ``value`` as a float, or raise ``ValueError`` unless it is a finite real number ``> 0``."""
    v = check_real(where, name, value)
    if v <= 0:
        raise ValueError(f"{where}: {name} must be finite and > 0 (got {name} = {v:.6g})")
    return v


def check_int(where: str, name: str, value, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise ``ValueError`` unless it is an integer ``>= minimum``.

    :func:`prirfed.reference.checks.check_int` (integral floats such as ``3.0`` accepted; ``None``,
    strings, bools, ``2.5`` and NaN refused), plus a cap: integers above ``2**53`` (not exactly
    representable as floats, far beyond any count) are refused too.
    """
    v = _shared_check_int(where, name, value, minimum)
    if v > 2**53:
        digits = str(v)
        raise ValueError(f"{where}: {name} must be <= 2**53 (got {name} = {digits[:12]}..., {len(digits)} digits)")
    return v


def check_epsilon(where: str, eps, name: str = "eps") -> float:
    """Return ``eps`` as a float or raise ``ValueError`` unless ``0 < eps < inf``."""
    eps = check_real(where, name, eps)
    if eps <= 0:
        raise ValueError(f"{where}: {name} must be > 0 (got {name} = {eps:.6g}, {abs(eps):.3g} at or below 0)")
    return eps


def check_delta(where: str, delta, name: str = "delta", allow_zero: bool = False) -> float:
    """Return ``delta`` as a float or raise ``ValueError`` unless ``0 < delta < 1`` (``0 <=`` if allowed)."""
    delta = check_real(where, name, delta)
    lo_ok = delta >= 0 if allow_zero else delta > 0
    if not lo_ok or delta >= 1:
        rng = "[0, 1)" if allow_zero else "(0, 1)"
        off = -delta if delta <= 0 else delta - 1
        raise ValueError(f"{where}: {name} must lie in {rng} (got {name} = {delta:.6g}, outside by {off:.3g})")
    return delta


def check_probability(where: str, q, name: str = "q") -> float:
    """Return ``q`` as a float or raise ``ValueError`` unless ``0 < q <= 1``."""
    q = check_real(where, name, q)
    if q <= 0 or q > 1:
        off = -q if q <= 0 else q - 1
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
    """Base class of privacy events (marker; every event is a frozen dataclass)."""

    relation: str = REPLACE_ONE


@dataclass(frozen=True)
class Gaussian(Event):
    """Gaussian mechanism with ``noise_multiplier`` = noise std / l2-sensitivity (001 Lemma 2)."""

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
    """A black-box (eps, delta)-DP mechanism (000 Definition 2.4); ``delta = 0`` means pure DP."""

    eps: float
    delta: float
    relation: str = REPLACE_ONE

    def __post_init__(self):
        object.__setattr__(self, "eps", check_epsilon("EpsilonDelta", self.eps))
        object.__setattr__(self, "delta", check_delta("EpsilonDelta", self.delta, allow_zero=True))
        _check_relation("EpsilonDelta", self.relation)


@dataclass(frozen=True)
class SampledWithoutReplacement(Event):
    """``inner`` run on a uniformly random subset of size ``m`` of ``n`` records (replace-one)."""

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
    """``inner`` run on a Poisson sample (each record kept with probability ``q``); add/remove."""

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
    """Adaptive composition of the listed events (000 Theorem 2.2 / RDP additivity)."""

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
    """``k``-fold adaptive composition of ``inner`` (``k >= 1``)."""

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
    """"My agent takes part with probability ``rho``": output ``(1-rho) U + rho inner``.

    ``U`` (the output when the agent holding the record is not selected) must not depend on the
    record; this is the structure of one PriRFed round with ``rho = s / N`` (lead 1, see
    ``proofs_notes/accounting_theorem_4_2.md``).
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
    """One DP-RSVRG inner step (000 Algorithm 3, lead 17), sensitivity already in noise units.

    Under replace-one of record ``j`` the step releases a mixture over the uniformly sampled index
    ``l`` of ``N(mu_l, sigma^2 I)``; the mean moves by at most ``shift_common`` (in units of
    sigma) when ``l != j`` and by at most ``shift_rare`` when ``l == j``, which happens with
    probability ``p_rare = 1 / N_i``. For DP-RSVRG ``shift_common = (2 tau0 / N_i) / sigma`` and
    ``shift_rare = (2 tau0 / N_i + 4 tau1) / sigma``. Optional ``shift_sample``: a bound on the
    part of the rare shift that comes from the sampled record alone (``4 tau1 / sigma``), which
    enables the tighter weak-triangle bound of ``proofs_notes/accounting_dp_rsvrg.md``.
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
    """The record belongs to exactly one of several parties, each running its own ``events[i]``.

    Neighbouring datasets differ in one record of one party ``i``; only ``events[i]`` sees it,
    so the guarantee is the worst over the listed events (for RDP: the pointwise maximum over
    orders). This is how a PriRFed run with heterogeneous agents (different N_i, b_i, sigma_i)
    is accounted: one ``Activation``-per-round event per agent.
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
