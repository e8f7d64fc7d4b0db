"""The *paper accountant*: the privacy statements of Huang et al. (2024) (PriRFed) exactly as printed.

Every function here reproduces a statement of Huang et al. (2024) Sections 2 and 4 faithfully, including
Theorem 4.2, which is NOT a valid privacy guarantee for PriRFed (see the errata page: it amplifies by
agent sampling, which needs user-level DP, and it composes the s parallel agents sequentially).
Use :mod:`prirfed.reference.accounting.prirfed_accountant` for a sound bound. The derivations
and the counterexample are in ``proofs_notes/accounting_theorem_4_2.md`` and
``proofs_notes/accounting_composition.md``.

Examples
--------
Theorem 4.2 as printed reproduces Table 1 of Huang et al. (2024) (row N = 100, s = 1, column T = 50; local
(0.15, 1e-4)-DP, delta_hat = 1e-3):

>>> from prirfed.reference.accounting.paper import advanced_composition, theorem_4_2
>>> eps, delta = theorem_4_2(0.15, 1e-4, N=100, s=1, T=50, delta_hat=1e-3)
>>> print(f"{eps:.3g} {delta:.3g}")
0.0426 0.00105
>>> advanced_composition(0.1, 0.0, 1, 0.5)[1]   # delta' + k delta
0.5
"""

from __future__ import annotations

import math
from typing import Sequence

from .events import (
    Composed,
    EpsilonDelta,
    Event,
    SampledWithoutReplacement,
    SelfComposed,
    check_delta,
    check_epsilon,
    check_int,
    check_probability,
)

__all__ = [
    "sequential_composition",
    "advanced_composition",
    "subsampling_lemma_4_1",
    "preprocessing_theorem_4_1",
    "group_privacy",
    "theorem_4_2",
    "TABLE_1_ROWS",
    "TABLE_1_T",
    "TABLE_1_EPS",
    "TABLE_1_DELTA",
    "TABLE_1_DELTA_HAT",
    "table_1",
    "PaperAccountant",
]


def _expm1(x: float) -> float:
    """``e^x - 1``, ``inf`` instead of OverflowError (large s eps, T eps_tilde: the bound is then vacuous)."""
    return math.expm1(x) if x < 709.0 else math.inf


def _log1p_rho_expm1(rho: float, x: float) -> float:
    """``log(1 + rho (e^x - 1))`` without overflow: ``x + log(rho + (1 - rho) e^{-x})`` for large x."""
    if x < 700.0:
        return math.log1p(rho * math.expm1(x))
    return x + math.log(rho + (1.0 - rho) * math.exp(-x))


def sequential_composition(eps: Sequence[float], delta: Sequence[float]) -> tuple[float, float]:
    r"""Sequential composition, Theorem 2.2 of Huang et al. (2024) (DR14 Thm 3.16): ``(sum eps_i, sum delta_i)``.

    Paper accountant (Huang et al. (2024), faithful; Dwork and Roth (2014), Theorem 3.16). Valid
    for adaptive composition.

    Parameters
    ----------
    eps : sequence of float
        The :math:`\epsilon_i > 0` of the composed mechanisms.
    delta : sequence of float
        Their :math:`\delta_i \in [0, 1)`, as many as ``eps``.

    Returns
    -------
    eps_total, delta_total : float
        :math:`(\sum_i\epsilon_i, \sum_i\delta_i)`.

    Raises
    ------
    ValueError
        If an :math:`\epsilon_i` is not > 0, a :math:`\delta_i` is not in [0, 1), or the two
        sequences are empty or of different lengths.
    """
    eps = [check_epsilon("sequential_composition", e, "eps_i") for e in eps]
    delta = [check_delta("sequential_composition", d, "delta_i", allow_zero=True) for d in delta]
    if len(eps) != len(delta) or not eps:
        raise ValueError(f"sequential_composition: need as many eps as delta, at least one (got {len(eps)} and {len(delta)})")
    return math.fsum(eps), math.fsum(delta)


def advanced_composition(eps: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    r"""Advanced composition, Theorem 2.3 of Huang et al. (2024) (DRV10): k-fold adaptive composition of (eps, delta)-DP.

    It is :math:`(\sqrt{2k\log(1/\delta')}\,\epsilon + k\epsilon(e^\epsilon - 1),\ \delta' + k\delta)`-DP.
    Paper accountant (Huang et al. (2024), faithful); the statement is the theorem of Dwork,
    Rothblum and Vadhan (2010) and is correct.

    Parameters
    ----------
    eps : float
        Per-mechanism :math:`\epsilon > 0`.
    delta : float
        Per-mechanism :math:`\delta \in [0, 1)`.
    k : int
        Number of compositions, >= 1.
    delta_prime : float
        The slack :math:`\delta' \in (0, 1)`.

    Returns
    -------
    eps_total, delta_total : float
        The composed :math:`(\epsilon, \delta)`; :math:`\epsilon` is ``inf`` when
        :math:`e^\epsilon` overflows.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    eps = check_epsilon("advanced_composition", eps)
    delta = check_delta("advanced_composition", delta, allow_zero=True)
    k = check_int("advanced_composition", "k", k, 1)
    delta_prime = check_delta("advanced_composition", delta_prime, "delta_prime")
    eps_p = math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) * eps + k * eps * _expm1(eps)  # inf when e^eps overflows
    return eps_p, delta_prime + k * delta


def subsampling_lemma_4_1(eps: float, delta: float, rho: float) -> tuple[float, float]:
    r"""Subsampling without replacement, Lemma 4.1 of Huang et al. (2024): ``(log(1 + rho (e^eps - 1)), rho delta)``.

    Paper accountant (Huang et al. (2024), faithful). Correct when the subsampled *units* are the
    units of the neighbouring relation (records sampled from a dataset under replace-one; Balle,
    Barthe and Gaboardi (2018)); Huang et al. (2024) apply it to agents while adjacency is
    record-level, which is the flaw of Theorem 4.2 (see the errata page).

    Parameters
    ----------
    eps : float
        :math:`\epsilon > 0` of the mechanism on the subsample.
    delta : float
        Its :math:`\delta \in [0, 1)`.
    rho : float
        Sampling ratio in (0, 1].

    Returns
    -------
    eps_sub, delta_sub : float
        :math:`(\log(1 + \rho(e^\epsilon - 1)), \rho\delta)`.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    eps = check_epsilon("subsampling_lemma_4_1", eps)
    delta = check_delta("subsampling_lemma_4_1", delta, allow_zero=True)
    rho = check_probability("subsampling_lemma_4_1", rho, "rho")
    return _log1p_rho_expm1(rho, eps), rho * delta


def group_privacy(eps: float, delta: float, c: int) -> tuple[float, float]:
    r"""Group privacy (DR14 p. 20, as quoted in the proof of Huang et al. (2024) Thm 4.1): ``(c eps, c e^{(c-1) eps} delta)``.

    Paper accountant (Huang et al. (2024), faithful). Dwork and Roth (2014) state the delta term as
    :math:`c e^{(c-1)\epsilon}\delta`; the tight value
    :math:`\delta(e^{c\epsilon} - 1)/(e^\epsilon - 1)` is never larger.

    Parameters
    ----------
    eps : float
        :math:`\epsilon > 0` for one individual.
    delta : float
        :math:`\delta \in [0, 1)`.
    c : int
        Group size, >= 1.

    Returns
    -------
    eps_group, delta_group : float
        :math:`(c\epsilon, c e^{(c-1)\epsilon}\delta)` (``inf`` on overflow).

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    eps = check_epsilon("group_privacy", eps)
    delta = check_delta("group_privacy", delta, allow_zero=True)
    c = check_int("group_privacy", "c", c, 1)
    if delta == 0:
        return c * eps, 0.0
    x = (c - 1) * eps
    try:
        return c * eps, math.exp(x) * (c * delta)
    except OverflowError:  # e^x overflows, the product need not (delta far below 1): in logs
        pass
    try:
        return c * eps, math.exp(x + math.log(c * delta))
    except OverflowError:
        return c * eps, math.inf


def preprocessing_theorem_4_1(eps: float, delta: float, c: int) -> tuple[float, float]:
    r"""Pre-processing by a c-stable transformation, Theorem 4.1 of Huang et al. (2024): ``(c eps, c e^{(c-1) eps} delta)``.

    Paper accountant (Huang et al. (2024), faithful): group privacy of size ``c`` applied to
    :math:`A \circ T` (:func:`group_privacy`).

    Parameters
    ----------
    eps : float
        :math:`\epsilon > 0` of the mechanism.
    delta : float
        Its :math:`\delta \in [0, 1)`.
    c : int
        Stability constant of the transformation, >= 1.

    Returns
    -------
    eps_pre, delta_pre : float
        :math:`(c\epsilon, c e^{(c-1)\epsilon}\delta)`.

    Raises
    ------
    ValueError
        If an argument is out of range.
    """
    return group_privacy(eps, delta, c)


def _theorem_4_2_inputs(where, eps, delta, N, s, T, delta_hat):
    eps = check_epsilon(where, eps)
    delta = check_delta(where, delta, allow_zero=True)
    N = check_int(where, "N", N, 1)
    s = check_int(where, "s", s, 1)
    if s > N:
        raise ValueError(f"{where}: the number of sampled agents s = {s} exceeds N = {N} (by {s - N})")
    T = check_int(where, "T", T, 1)
    delta_hat = check_delta(where, delta_hat, "delta_hat")
    return eps, delta, N, s, T, delta_hat


def theorem_4_2(eps: float, delta: float, N: int, s: int, T: int, delta_hat: float) -> tuple[float, float]:
    r"""Theorem 4.2 of Huang et al. (2024) ("privacy guarantee of Algorithm 1") exactly as printed. NOT SOUND.

    Paper accountant (Huang et al. (2024), faithful)::

        rho       = s / N
        eps_tilde = log(1 + rho (exp(s eps) - 1))            # Lemma 4.1 on s-fold sequential comp.
        delta_til = rho s delta
        eps'      = min(T eps_tilde, sqrt(2 T ln(1/delta_hat)) eps_tilde + T eps_tilde (exp(eps_tilde) - 1))
        delta'    = delta_hat + T delta_til

    The extracted text places ``eps_tilde`` inside the square root; Table 1 of Huang et al. (2024)
    is reproduced (all 48 cells, ``tests/accounting/test_paper.py::test_table_1_all_cells``) only
    with ``eps_tilde`` outside it, as in the proof's last line and in Theorem 2.3. The guarantee
    itself is violated by an explicit mechanism (``tests/accounting/test_counterexample.py``; see
    the errata page).

    Parameters
    ----------
    eps : float
        Local-training :math:`\epsilon > 0` of one agent.
    delta : float
        Local-training :math:`\delta \in [0, 1)`.
    N : int
        Number of agents, >= 1.
    s : int
        Agents sampled per round, ``1 <= s <= N``.
    T : int
        Rounds, >= 1.
    delta_hat : float
        The :math:`\hat\delta \in (0, 1)` of advanced composition.

    Returns
    -------
    eps_prime, delta_prime : float
        The theorem's :math:`(\epsilon', \delta')`.

    Raises
    ------
    ValueError
        If an argument is out of range or ``s > N``.
    """
    eps, delta, N, s, T, delta_hat = _theorem_4_2_inputs("theorem_4_2", eps, delta, N, s, T, delta_hat)
    rho = s / N
    eps_tilde = _log1p_rho_expm1(rho, s * eps)
    delta_tilde = rho * s * delta
    eps_seq = T * eps_tilde
    eps_adv = math.sqrt(2.0 * T * math.log(1.0 / delta_hat)) * eps_tilde + T * eps_tilde * _expm1(eps_tilde)
    return min(eps_seq, eps_adv), delta_hat + T * delta_tilde


#: (N, s) rows of Table 1 of Huang et al. (2024), in the printed order.
TABLE_1_ROWS = ((100, 1), (100, 5), (200, 1), (500, 5), (300, 5), (300, 10), (400, 5), (400, 10))
#: The outer-iteration columns of Table 1.
TABLE_1_T = (50, 100, 200, 300, 400, 500)
#: Local-training privacy and delta_hat used in Table 1 (its caption).
TABLE_1_EPS = 0.15
TABLE_1_DELTA = 1e-4
TABLE_1_DELTA_HAT = 1e-3


def table_1() -> list[dict]:
    """All 48 cells of Table 1 of Huang et al. (2024), recomputed from :func:`theorem_4_2` (paper accountant).

    Returns
    -------
    list of dict
        One dict per cell with keys ``N, s, rho, T, eps_prime, delta_prime``, rows in the printed
        order, ``T`` increasing within a row.
    """
    cells = []
    for N, s in TABLE_1_ROWS:
        for T in TABLE_1_T:
            e, d = theorem_4_2(TABLE_1_EPS, TABLE_1_DELTA, N, s, T, TABLE_1_DELTA_HAT)
            cells.append(dict(N=N, s=s, rho=s / N, T=T, eps_prime=e, delta_prime=d))
    return cells


class PaperAccountant:
    r"""Accountant that applies Huang et al.'s (2024) theorems to black-box events (paper accountant, faithful).

    Supports ``EpsilonDelta``, ``SampledWithoutReplacement`` of a supported event (Huang
    et al. (2024), Lemma 4.1, valid for records), ``Composed`` and ``SelfComposed`` (their Theorem 2.2, or
    Theorem 2.3 for ``SelfComposed`` when ``delta_prime`` is given and it is smaller). Anything else
    (Gaussian, Activation, ...) is refused by :meth:`epsilon_delta` with ``ValueError``:
    Huang et al. (2024) give no theorem for it.

    Parameters
    ----------
    delta_prime : float or None, optional
        Slack :math:`\delta' \in (0, 1)` that enables advanced composition; ``None`` (default) for
        sequential composition only.

    Raises
    ------
    ValueError
        If ``delta_prime`` is not in (0, 1).
    """

    def __init__(self, delta_prime: float | None = None):
        self.delta_prime = None if delta_prime is None else check_delta("PaperAccountant", delta_prime, "delta_prime")

    def supports(self, event: Event) -> bool:
        """Whether the paper's theorems cover ``event``.

        Parameters
        ----------
        event : Event
            The event to check.

        Returns
        -------
        bool
            ``True`` for ``EpsilonDelta`` and for subsampling and compositions built from supported events.
        """
        if isinstance(event, EpsilonDelta):
            return True
        if isinstance(event, SampledWithoutReplacement):
            return self.supports(event.inner)
        if isinstance(event, SelfComposed):
            return self.supports(event.inner)
        if isinstance(event, Composed):
            return bool(event.events) and all(self.supports(e) for e in event.events)
        return False

    def epsilon_delta(self, event: Event) -> tuple[float, float]:
        r"""The :math:`(\epsilon, \delta)` the paper's theorems give ``event``.

        Parameters
        ----------
        event : Event
            A supported event (:meth:`supports`).

        Returns
        -------
        eps, delta : float
            The guarantee.

        Raises
        ------
        ValueError
            If the paper states no theorem for ``event``.
        """
        if not self.supports(event):
            raise ValueError(f"PaperAccountant.epsilon_delta: 000 states no theorem for {event!r}")
        if isinstance(event, EpsilonDelta):
            return event.eps, event.delta
        if isinstance(event, SampledWithoutReplacement):
            e, d = self.epsilon_delta(event.inner)
            return subsampling_lemma_4_1(e, d, event.q)
        if isinstance(event, SelfComposed):
            e, d = self.epsilon_delta(event.inner)
            best = (event.k * e, event.k * d)
            if self.delta_prime is not None:
                adv = advanced_composition(e, d, event.k, self.delta_prime)
                if adv[0] < best[0]:
                    best = adv
            return best
        parts = [self.epsilon_delta(e) for e in event.events]
        return sequential_composition([p[0] for p in parts], [p[1] for p in parts])
