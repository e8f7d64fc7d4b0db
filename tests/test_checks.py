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
