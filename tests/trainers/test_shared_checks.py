"""The trainers' shared helpers of ``reference/trainers/base.py`` at their edges, with values worked
out by hand: the clipping threshold's floor 2^-1000 itself, the refusals no trainer test reached
(a per-agent setting of the wrong length, a switch that is not a bool, an unknown record_every
string), the values ``is_choice`` returns, the "auto" record period where a round reads fewer than
2 samples or more than 20 times the data, the error measure of each kind of problem, and
``History.as_arrays``."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA
from prirfed.reference.trainers.base import (
    History,
    check_flag,
    check_tau,
    error_to_optimum,
    is_choice,
    per_agent,
    record_schedule,
)
from prirfed.reference.trainers.prirfed import prirfed
from prirfed.reference.trainers.rgd import dp_rgd, rgd


def test_check_tau_takes_2_to_the_minus_1000_and_refuses_below_and_at_0():
    """The floor TAU_MIN = 2^-1000 is a valid threshold (the bound is inclusive); the next float
    below it is refused with the floor in the message; 0 and -0.5 are refused as "not > 0" (not by
    the floor's message, which is for positive numbers)."""
    assert check_tau("f", "tau", 2.0**-1000) == 2.0**-1000
    below = math.nextafter(2.0**-1000, 0.0)
    with pytest.raises(ValueError, match=r"^f: clipping threshold tau = .* is below 2\^-1000 = 9\.33e-302 "):
        check_tau("f", "tau", below)
    for bad in (0.0, -0.5):
        with pytest.raises(ValueError, match=r"^f: clipping threshold tau must be > 0 \(got "):
            check_tau("f", "tau", bad)
    assert check_tau("f", "tau", math.inf) == math.inf


def test_per_agent_settings_of_the_wrong_length_and_switches_that_are_not_bools_are_refused():
    """A per-agent setting is a scalar (repeated) or exactly N values: 3 sigmas for 2 agents are
    refused naming the shape; keep_iterates = "no" (a true string) is refused, np.True_ taken."""
    np.testing.assert_array_equal(per_agent("f", "sigma", 0.5, 2), [0.5, 0.5])
    np.testing.assert_array_equal(per_agent("f", "sigma", [0.5, 0.25], 2), [0.5, 0.25])
    with pytest.raises(ValueError, match=r"^f: sigma has shape \(3,\), expected a scalar or \(2,\)$"):
        per_agent("f", "sigma", [0.1, 0.2, 0.3], 2)
    with pytest.raises(ValueError, match=r"^f: sigma must be a real number or a sequence of them \(got 'big'\)$"):
        per_agent("f", "sigma", "big", 2)
    assert check_flag("f", "keep_iterates", np.True_) is True
    with pytest.raises(ValueError, match=r"^f: keep_iterates must be True or False \(got 'no'\)$"):
        check_flag("f", "keep_iterates", "no")
    P = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0]])])
    with pytest.raises(ValueError, match=r"^prirfed: keep_iterates must be True or False"):
        prirfed(P, np.array([1.0, 0.0, 0.0]), 2, 1, 0.1, np.random.default_rng(0), keep_iterates="no")


def test_is_choice_returns_booleans():
    """True and 1 + 0j equal 1 in Python but are not choices; 2.0 and np.int64(2) are; a choice
    list whose comparison raises (an array among the choices) gives False, not an error."""
    assert is_choice(2.0, (1, 2)) is True
    assert is_choice(np.int64(2), (1, 2)) is True
    assert is_choice(3, (1, 2)) is False
    assert is_choice(True, (1, 2)) is False
    assert is_choice(1 + 0j, (1, 2)) is False
    assert is_choice(1, (np.array([1, 2]),)) is False
    P = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0]])])
    with pytest.raises(ValueError, match=r"^prirfed: option must be 1 or 2 \(got True\)$"):
        prirfed(P, np.array([1.0, 0.0, 0.0]), 2, 1, 0.1, np.random.default_rng(0), option=True)


def test_auto_record_period_at_its_two_ends():
    """ceil(20 n / max(w, 1)) capped at T and at least 1 (w = 0.5 counts as 1). DP-RGD with b = 1 of n = 5 reads w = 1
    sample a round: period ceil(100 / 1) = 100, so T = 250 records rounds 0, 100, 200, 250. PriRFed
    with one agent of 2 samples, K = 40 full-batch steps reads w = 80 >= 20 n = 40: period
    ceil(40 / 80) = 1, every round. An unknown string is refused."""
    assert record_schedule("f", "auto", 250, 5, 1) == 100
    assert record_schedule("f", "auto", 250, 5, 1.5) == 67  # ceil(100 / 1.5)
    assert record_schedule("f", "auto", 3, 2, 80) == 1
    assert record_schedule("f", "auto", 30, 5, 1) == 30  # capped at T
    assert record_schedule("f", "auto", 1, 5, 1) == 1  # capped at T = 1
    assert record_schedule("f", "auto", 1000, 5, 0.5) == 100  # a round reading under one sample counts as one
    P = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0], [0.0, 0.5, 1.0], [0.2, 0.1, 0.9], [1.0, 1.0, 1.0]])])
    x0 = np.array([1.0, 0.0, 0.0])
    r = dp_rgd(P, x0, 0.01, 250, 1, 0.0, np.random.default_rng(0))
    assert r.history.rounds == [0, 100, 200, 250]
    Q = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]])])
    r = prirfed(Q, x0, 3, 1, 0.01, np.random.default_rng(0), K=40)
    assert r.history.rounds == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"^f: record_every must be an integer >= 1 or 'auto' \(got 'never'\)$"):
        record_schedule("f", "never", 10, 5, 1)


def test_error_to_optimum_of_each_kind_of_problem_and_history_as_arrays():
    """The error the papers plot: dist(x, x*) = ||x - x*|| on Euclidean space, NaN without a known
    optimum; for Stiefel kPCA the sum of the principal angles to the optimal subspace. With rows on
    the axes, sum_i p_i Z_i^T Z_i / N_i = (2/3) diag(5, 2, 0) + (1/3) diag(0, 0, 1) and the optimal
    2-plane is span(e1, e2), and for X = [[1, 0], [0, c], [0, s]] the angles are 0 and the angle
    between (0, c, s) and the plane, arccos c. History.as_arrays gives the recorded lists as
    arrays, and the iterates only when they were kept."""
    M = Euclidean(2)
    data = [np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 3.0]])]
    x_star = np.array([2.0 / 3.0, 1.0])
    with_opt = FrechetMean(M, data, x_star=x_star)
    x = np.array([3.0, -3.0])
    assert error_to_optimum(with_opt, x) == pytest.approx(math.hypot(3.0 - 2.0 / 3.0, -4.0), rel=1e-15, abs=0)
    assert math.isnan(error_to_optimum(SimpleNamespace(manifold=M, x_star=None), x))
    c, s = math.cos(0.3), math.sin(0.3)
    Z = [np.array([[math.sqrt(10.0), 0.0, 0.0], [0.0, 2.0, 0.0]]), np.array([[0.0, 0.0, 1.0]])]
    K = StiefelKPCA(Z, 2, weights="samples")  # p = (2/3, 1/3)
    assert error_to_optimum(K, np.array([[1.0, 0.0], [0.0, c], [0.0, s]])) == pytest.approx(0.3, rel=1e-12, abs=0)
    r = rgd(with_opt, np.array([0.0, 0.0]), 0.5, 2, record_every=1)
    arrays = r.history.as_arrays()
    assert sorted(arrays) == ["dist_to_opt", "f", "grad_norm", "rounds"]
    np.testing.assert_array_equal(arrays["rounds"], [0, 1, 2])
    # grad f(x) = x - x*, so x_{t+1} - x* = (1 - 0.5)(x_t - x*): distances |x*|, |x*| / 2, |x*| / 4
    np.testing.assert_allclose(arrays["dist_to_opt"], np.hypot(2.0 / 3.0, 1.0) * np.array([1.0, 0.5, 0.25]),
                               rtol=1e-14)
    kept = rgd(with_opt, np.array([0.0, 0.0]), 0.5, 2, record_every=1, keep_iterates=True).history.as_arrays()
    np.testing.assert_allclose(kept["iterates"], [[0.0, 0.0], x_star / 2, 0.75 * x_star], rtol=1e-14, atol=0)
    h = History()
    assert h.as_arrays()["rounds"].shape == (0,)
