"""prirfed.reference.checks: the argument checks shared by the reference and the twins.

Oracle: the rule written in the docstrings (integer in [low, high]; bools, None, strings,
non-integral and non-finite values refused), checked value by value, with the distance to the
missed bound in the message."""

import math

import numpy as np
import pytest

from prirfed.reference.checks import check_int, check_positive


@pytest.mark.parametrize("value, low, high, want", [(3, 1, None, 3), (np.int64(2), 1, 5, 2), (4.0, 1, None, 4),
                                                    (np.array(7), 0, None, 7), (0, 0, 0, 0)])
def test_check_int_accepts(value, low, high, want):
    got = check_int("f", "k", value, low, high)
    assert got == want and type(got) is int


@pytest.mark.parametrize("value, low, high, message", [
    (True, 1, None, "f: k must be an integer (got True)"),
    (None, 1, None, "f: k must be an integer (got None)"),
    ("3", 1, None, "f: k must be an integer (got '3')"),
    (2.5, 1, None, "f: k must be an integer (got 2.5)"),
    (math.nan, 1, None, "f: k must be an integer (got nan)"),
    (math.inf, 1, None, "f: k must be an integer (got inf)"),
    (0, 1, None, "f: k must be >= 1 (got k = 0, short by 1)"),
    (-2, 1, 5, "f: k must be in [1, 5] (got k = -2, short by 3)"),
    (9, 1, 5, "f: k must be in [1, 5] (got k = 9, over by 4)"),
])
def test_check_int_refuses(value, low, high, message):
    with pytest.raises(ValueError) as exc:
        check_int("f", "k", value, low, high)
    assert str(exc.value) == message


def test_check_positive():
    assert check_positive("f", "tol", 1e-3) == 1e-3
    for bad in (0.0, -1.0, math.inf, math.nan, True, None, "1"):
        with pytest.raises(ValueError, match="f: tol must be a positive finite number"):
            check_positive("f", "tol", bad)


def test_check_int_lower_bound_is_inclusive_without_an_upper_bound():
    """'must be >= low': low itself is accepted, low - 1 refused with the shortfall (a mutant refusing
    v <= low survived the listed cases, none of which sat on low without a high)."""
    from prirfed.reference.checks import check_int as ci

    assert ci("f", "T", 1) == 1 and ci("f", "T", 5, 5) == 5
    with pytest.raises(ValueError, match=r"^f: T must be >= 5 \(got T = 4, short by 1\)$"):
        ci("f", "T", 4, 5)


@pytest.mark.parametrize("value, want", [(3, 3.0), (-2.5, -2.5), (np.float32(0.5), 0.5), (np.array(7.0), 7.0),
                                         (True, math.nan), (np.bool_(False), math.nan), ("1", math.nan), (None, math.nan),
                                         (1j, math.nan), (10**400, math.inf), (-(10**400), -math.inf)])
def test_real_or_nan_is_the_float_of_a_real_number_and_nan_otherwise(value, want):
    """Its docstring's rule: float(value) for a real number (not a bool), +-inf for an integer beyond
    float64, NaN for anything else."""
    from prirfed.reference.checks import real_or_nan

    got = real_or_nan(value)
    assert (math.isnan(got) and math.isnan(want)) or got == want


@pytest.mark.parametrize("value", [None, "x", [1.0], object(), 1j])
def test_check_real_refuses_what_is_not_a_number(value):
    """check_real refuses non-numbers with a one-line message naming where and what (a mutant that
    deleted the raise returned from the except clause without a value)."""
    from prirfed.reference.checks import check_real

    with pytest.raises(ValueError, match=r"^g: L must be a real number \(got "):
        check_real("g", "L", value)
    assert check_real("g", "L", "2.5") == 2.5 and check_real("g", "L", 0.0, allow_zero=True) == 0.0


@pytest.mark.parametrize("value", [2**62 + 1, -(2**62) - 1, 2**200])
def test_check_int_refuses_magnitudes_beyond_2_to_the_62(value):
    """The documented cap INT_MAGNITUDE_MAX = 2^62: a count beyond it is refused before any
    comparison with the bounds (a mutant without the cap accepted 2^62 + 1 as a valid T)."""
    from prirfed.reference.checks import INT_MAGNITUDE_MAX

    assert INT_MAGNITUDE_MAX == 2**62 and check_int("f", "T", 2**62) == 2**62
    with pytest.raises(ValueError, match=r"^f: T must be an integer of magnitude <= 2\^62 \(got "):
        check_int("f", "T", value, -(2**70))


def test_check_real_with_allow_zero_takes_zero_and_fractions():
    """allow_zero: 0, a positive fraction and 3 are accepted as floats, a negative number (down to
    -1e-300) is refused; without it 0 is refused and 0.5 taken."""
    from prirfed.reference.checks import check_real

    for v in (0, 0.5, 3):
        assert check_real("g", "L", v, allow_zero=True) == float(v)
    assert check_real("g", "L", 0.5) == 0.5
    with pytest.raises(ValueError, match=r"^g: L must be finite and >= 0 \(got L = -0\.5\)$"):
        check_real("g", "L", -0.5, allow_zero=True)
    with pytest.raises(ValueError, match=r"^g: L must be finite and >= 0"):
        check_real("g", "L", -1e-300, allow_zero=True)
    with pytest.raises(ValueError, match=r"^g: L must be finite and > 0 \(got L = 0\.0\)$"):
        check_real("g", "L", 0.0)


def test_check_int_names_the_bound_it_misses_when_it_sits_on_the_other():
    """The message names the bound the value misses: 5 in [5, 3] meets the lower bound and is over the
    upper one by 2 (not 'short by 0'); an empty range refuses every value."""
    with pytest.raises(ValueError, match=r"^f: k must be in \[5, 3\] \(got k = 5, over by 2\)$"):
        check_int("f", "k", 5, 5, 3)
    with pytest.raises(ValueError, match=r"^f: k must be in \[5, 3\] \(got k = 3, short by 2\)$"):
        check_int("f", "k", 3, 5, 3)
