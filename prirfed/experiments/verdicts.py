"""Verdicts of comparisons over trials, with a stated false-alarm rate.

An ordering claim such as "method A ends below method B" is decided from the paired differences
d_r = a_r - b_r of the R trials (common random numbers: the methods of a trial share data and x^(0)):
with mean m and standard error se = sd / sqrt(R), the claim "A below B" is

- shown (True) when m + z se < 0,
- contradicted (False) when m - z se > 0,
- inconclusive (None) otherwise, and always with fewer than 2 trials (no spread, no margin),

with z = t_{0.99}(R - 1), the one-sided 1% quantile of Student's t with R - 1 degrees of freedom
(for independent samples: Welch's standard error and Welch-Satterthwaite degrees of freedom): for
normal trial values each
decided verdict is wrong with probability at most 1% (our choice of level, stated in every evidence
string). A chain of orderings (a1 < a2 < ... ) is shown when every link is shown, contradicted when
some link is contradicted, and inconclusive otherwise.
Proofs note: ``proofs_notes/experiment_frontier.md`` (section "Verdicts").
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ALPHA", "Z_ONE_SIDED", "LEVEL", "t_quantile", "less", "chain_less", "chain_both", "describe"]

#: one-sided false-alarm probability of a decided comparison (ours)
ALPHA = 0.01
#: scipy.stats.norm.ppf(0.99), the large-sample limit of the t quantile
Z_ONE_SIDED = 2.3263478740408408
LEVEL = "one-sided 1% per comparison (Student t quantile on the trials' standard error)"


def t_quantile(dof: float) -> float:
    """The one-sided ``1 - ALPHA`` quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(1.0 - ALPHA, dof))


def less(a, b, z: float | None = None, paired: bool = True) -> tuple[bool | None, float, float]:
    """(verdict of "a below b", mean difference, standard error) over trial values: paired (the same
    trials, common random numbers) or, with ``paired=False``, independent samples (Welch's standard
    error sqrt(s_a^2 / n_a + s_b^2 / n_b)); ``z`` defaults to the t quantile of :func:`t_quantile`."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or a.size == 0 or b.size == 0 or (paired and a.size != b.size):
        raise ValueError(f"less: a and b must be non-empty 1-D sequences of trial values, of equal length when paired "
                         f"(got shapes {a.shape} and {b.shape})")
    if paired:
        d = a - b
        m = float(d.mean())
        if d.size < 2 or not np.all(np.isfinite(d)):
            return None, m, math.inf
        se = float(d.std(ddof=1) / math.sqrt(d.size))
        dof = d.size - 1
    else:
        m = float(a.mean() - b.mean())
        if min(a.size, b.size) < 2 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            return None, m, math.inf
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = float(math.sqrt(va + vb))
        dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if va + vb > 0 else a.size + b.size - 2
    if z is None:
        z = t_quantile(dof)
    if m + z * se < 0:
        return True, m, se
    if m - z * se > 0:
        return False, m, se
    return None, m, se


def chain_less(series, z: float | None = None, paired: bool = True) -> tuple[bool | None, list]:
    """Verdict of series[0] < series[1] < ... (each a sequence of trial values), and the links'
    (verdict, mean, se)."""
    links = [less(a, b, z, paired) for a, b in zip(series, series[1:])]
    vs = [v for v, _, _ in links]
    if any(v is False for v in vs):
        return False, links
    if all(v is True for v in vs):
        return True, links
    return None, links


def chain_both(*links) -> tuple[bool | None, list]:
    """Verdict of several claims that must all hold (each a :func:`less` result), and the links."""
    vs = [v for v, _, _ in links]
    if any(v is False for v in vs):
        return False, list(links)
    return (True if all(v is True for v in vs) else None), list(links)


def describe(links) -> str:
    """The links of :func:`chain_less` as evidence text."""
    word = {True: "yes", False: "no", None: "undecided"}
    return "; ".join(f"diff {m:.3g} +- {se:.2g} ({word[v]})" for v, m, se in links) + f" [{LEVEL}]"
