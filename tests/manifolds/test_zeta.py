"""zeta(kappa_min, D) of (5.1) in 000 against a 50-digit mpmath oracle, and its bad input."""

import math

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import zeta

mpmath.mp.dps = 50


def zeta_mp(kappa, D):
    if kappa >= 0:
        return mpmath.mpf(1)
    x = mpmath.sqrt(-mpmath.mpf(kappa)) * mpmath.mpf(D)
    return mpmath.mpf(1) if x == 0 else x / mpmath.tanh(x)


@given(kappa=st.floats(-100.0, -1e-12), D=st.floats(0.0, 50.0))
def test_zeta_matches_mpmath(kappa, D):
    """Relative error below 4 ulp across the range, including the series branch near 0."""
    z = zeta(kappa, D)
    ref = zeta_mp(kappa, D)
    assert abs(mpmath.mpf(z) - ref) <= 4 * 2.0**-52 * ref


@pytest.mark.parametrize("x", [0.0, 5e-324, 1e-300, 1e-12, 1e-6, 9.9e-5, 1.01e-4, 1e-2, 1.0, 30.0])
def test_zeta_on_both_sides_of_the_old_series_threshold(x):
    """x / tanh x as written is within 2 ulp of the 50-digit value on both sides of 1e-4 (where a series
    branch used to start) and down to the least subnormal; at 0 it is the limit 1."""
    # kappa = -1 so the argument is D itself
    assert zeta(-1.0, x) == pytest.approx(float(zeta_mp(-1.0, x)), rel=4.5e-16, abs=0)


def test_zeta_nonnegative_curvature_is_one():
    """zeta = 1 for every kappa_min >= 0, not only 0 and 1 (a rule kappa_min >= 1 took the square root
    of -0.5 and survived the manifolds run while only those two were tested)."""
    for kappa in (0.0, 1e-300, 0.5, 1.0, 7.0):
        assert zeta(kappa, 3.0) == 1.0


def test_zeta_grows_like_sqrt_kappa_D():
    # x / tanh x -> x for large x: zeta(-4, 10) = 20 / tanh(20)
    assert zeta(-4.0, 10.0) == pytest.approx(20.0 / math.tanh(20.0), rel=1e-15, abs=0)


@pytest.mark.parametrize("args", [(-1.0, -0.1), (float("nan"), 1.0), (-1.0, float("inf"))])
def test_zeta_bad_input(args):
    with pytest.raises(ValueError, match="zeta"):
        zeta(*args)
