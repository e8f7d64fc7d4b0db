"""Argument checks shared across the reference (one place; the verified twins import them too).

Every check raises ``ValueError`` naming the function (``where``), the parameter and the value,
and, where a bound is missed, by how much:

    >>> from prirfed.reference.checks import check_int
    >>> check_int("prirfed", "s", 3, 1, 5)
    3
    >>> check_int("prirfed", "s", 7, 1, 5)
    Traceback (most recent call last):
    ...
    ValueError: prirfed: s must be in [1, 5] (got s = 7, over by 2)

Bools, ``None``, strings and non-integral floats are refused, not converted. Tested in
``tests/test_checks.py``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["check_int", "check_positive", "check_real", "real_or_nan", "INT_MAGNITUDE_MAX"]

#: the largest magnitude ``check_int`` accepts: counts, sizes and indices reach the fused loops as
#: int64 (a larger value would overflow there, and no count this large can be run)
INT_MAGNITUDE_MAX = 2**62


def _scalar(value):
    """A 0-d NumPy array as its Python scalar (a common way numbers reach the API), else ``value``."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def real_or_nan(value) -> float:
    """``value`` as a ``float`` if it is a real number, else NaN (for range checks).

    A real number is a Python or NumPy integer or float, or a 0-d array of one; a bool is not. For
    range checks written ``not (lo <= v <= hi)``: a ``None``, string, bool, complex number or
    sequence then fails the caller's test and is reported with the caller's message and the value
    as given. An integer beyond the float64 range becomes +-inf.

    Parameters
    ----------
    value : object
        The value to read.

    Returns
    -------
    float
        ``float(value)``, +-inf for an integer too large for a float, NaN for anything not real.

    Examples
    --------
    >>> from prirfed.reference.checks import real_or_nan
    >>> real_or_nan(3), real_or_nan(True), real_or_nan("1"), real_or_nan(10**400)
    (3.0, nan, nan, inf)
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return math.nan
    try:
        return float(value)
    except OverflowError:  # an int beyond float64
        return math.inf if value > 0 else -math.inf


def check_int(where: str, name: str, value, low: int = 1, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``[low, high]``.

    Accepts Python and NumPy integers and floats with an integral value (``3.0``); refuses bools,
    ``None``, strings, NaN, infinities and fractions with "must be an integer", magnitudes above
    :data:`INT_MAGNITUDE_MAX` = 2^62 (counts and indices reach the fused loops as int64, and no
    count that large can be run), and values out of range with the bound and the distance to it.

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The parameter's name.
    value : object
        The value to check.
    low : int, optional
        Smallest allowed value (default 1).
    high : int, optional
        Largest allowed value (default None: no upper bound).

    Returns
    -------
    int
        ``value`` as an int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer or is out of range.
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{where}: {name} must be an integer (got {value!r})")
    if not isinstance(value, numbers.Integral):
        v = float(value)
        if not (math.isfinite(v) and v.is_integer()):
            raise ValueError(f"{where}: {name} must be an integer (got {value!r})")
    v = int(value)
    if abs(v) > INT_MAGNITUDE_MAX:
        raise ValueError(f"{where}: {name} must be an integer of magnitude <= 2^62 (got {value!r})")
    if high is None:
        if v < low:
            raise ValueError(f"{where}: {name} must be >= {low} (got {name} = {v}, short by {low - v})")
    elif v < low or v > high:
        by = f"short by {low - v}" if v < low else f"over by {v - high}"
        raise ValueError(f"{where}: {name} must be in [{low}, {high}] (got {name} = {v}, {by})")
    return v


def check_positive(where: str, name: str, value) -> float:
    """``value`` as a ``float``, finite and > 0 (bools, ``None`` and strings refused).

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
        If ``value`` is not a finite real number greater than 0.
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{where}: {name} must be a positive finite number (got {value!r})")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{where}: {name} must be a positive finite number (got {value!r})")
    return v


def check_real(where: str, name: str, value, allow_zero: bool = False) -> float:
    """``value`` as a ``float``, finite and > 0 (>= 0 with ``allow_zero``): the check of the bound functions' constants (a string that parses as a number is read as that number).

    Parameters
    ----------
    where : str
        The public function being called, named in the error message.
    name : str
        The parameter's name.
    value : object
        The value to check.
    allow_zero : bool, optional
        Accept 0 (default False).

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    ValueError
        If ``value`` is not a finite real number in the allowed range.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {name} must be a real number (got {value!r})") from None
    if not (math.isfinite(v) and (v >= 0 if allow_zero else v > 0)):
        raise ValueError(f"{where}: {name} must be finite and {'>= 0' if allow_zero else '> 0'} (got {name} = {v!r})")
    return v
