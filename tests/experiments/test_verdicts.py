"""Verdicts over trials (prirfed.experiments.verdicts): hand-made samples with known orderings, the
inconclusive cases, and the false-alarm rate under the null measured on Gaussian samples.
Proofs note: proofs_notes/experiment_frontier.md (section "Verdict rule").
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from prirfed.experiments.core import Check
from prirfed.experiments.verdicts import Z_ONE_SIDED, chain_both, chain_less, describe, less


def test_paired_verdicts():
    assert less([1.0, 2.0, 3.0], [2.0, 3.1, 4.0])[0] is True
    assert less([2.0, 3.1, 4.0], [1.0, 2.0, 3.0])[0] is False
    assert less([1.0, 2.0, 3.0], [1.5, 1.5, 3.2])[0] is None  # differences -0.5, 0.5, -0.2: undecided
    assert less([1.0], [2.0])[0] is None  # one trial: no spread, no verdict
    v, m, se = less([0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0])
    d = np.array([-1.0, -1.0, -1.0, 0.0])
    assert math.isclose(m, d.mean()) and math.isclose(se, d.std(ddof=1) / 2.0)
    assert v is (True if m + stats.t.ppf(0.99, 3) * se < 0 else None)
    # unpaired: Welch's standard error
    v, m, se = less([1.0, 1.2, 0.8], [3.0, 3.5, 2.5], paired=False)
    assert v is True and math.isclose(se, math.sqrt(np.var([1.0, 1.2, 0.8], ddof=1) / 3 + np.var([3.0, 3.5, 2.5], ddof=1) / 3))
    assert chain_less([[1, 2, 3], [2, 3, 4.1], [5, 6, 7]])[0] is True
    assert chain_less([[1, 2, 3], [2, 3, 4.1], [0, 1, 2]])[0] is False
    assert chain_both(less([1, 2, 3], [2, 3, 4.1]), less([1.0], [2.0]))[0] is None
    assert "one-sided 1%" in describe(chain_less([[1, 2, 3], [2, 3, 4.1]])[1])
    assert math.isclose(stats.norm.ppf(0.99), Z_ONE_SIDED, rel_tol=1e-12)
    with pytest.raises(ValueError, match="less: a and b must be"):
        less([1.0, 2.0], [1.0])


def test_false_alarm_rate_under_the_null():
    """Equal means, 10 paired Gaussian trials: a decided verdict ("yes" or "no") happens with
    probability exactly 2% (1% per side: the t quantile with 9 degrees of freedom). 4000 replications,
    seed 0; the bounds are 2% -+ 4 binomial standard deviations (false-alarm probability of this
    test < 1e-4)."""
    rng = np.random.default_rng(0)
    decided = sum(less(rng.standard_normal(10), rng.standard_normal(10))[0] is not None for _ in range(4000))
    sd = math.sqrt(0.02 * 0.98 / 4000)
    assert 0.02 - 4 * sd <= decided / 4000 <= 0.02 + 4 * sd
    # with the normal quantile instead (z = 2.33), 10 trials decide far more often: P(|t_9| > 2.33) = 4.5%
    assert 2 * stats.t.sf(Z_ONE_SIDED, 9) > 0.04
    # power: a real difference of 2 (paired differences of sd sqrt(2)) is found with the probability the
    # noncentral t gives (ncp = 2 / sqrt(2 / 10)), within 4 binomial standard deviations
    found = sum(less(rng.standard_normal(10) - 2.0, rng.standard_normal(10))[0] is True for _ in range(400))
    power = stats.nct.sf(stats.t.ppf(0.99, 9), 9, 2.0 / math.sqrt(0.2))
    assert abs(found / 400 - power) <= 4 * math.sqrt(power * (1 - power) / 400)


def test_check_kinds_and_inconclusive():
    assert Check("c", None, "e").verdict == "inconclusive"
    assert Check("c", True, "e", kind="ours").verdict == "yes"
    with pytest.raises(ValueError, match="Check: kind must be"):
        Check("c", True, "e", kind="theirs")
    with pytest.raises(ValueError, match="Check: shown must be"):
        Check("c", 1, "e")
