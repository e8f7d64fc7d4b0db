"""Checks of experiment configurations (one place for every experiment's ``trial_specs``).

Each raises ``ValueError("<experiment>: <key> must ... (got <value>)")`` and returns the checked
value. Bools are refused where numbers are asked (JSON and TOML turn ``true`` into a bool, not 1).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_int", "check_positive", "check_nonnegative", "check_probability", "check_bool", "check_choice",
           "check_names", "check_scenarios"]


def _is_number(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))


def check_int(where: str, key: str, v, low: int) -> int:
    """An integer >= low (Python or NumPy integer; not a bool, not 3.0)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{where}: {key} must be an integer >= {low} (got {v!r})")
    return int(v)


def check_positive(where: str, key: str, v) -> float:
    """A finite number > 0."""
    if not _is_number(v) or not (math.isfinite(v) and v > 0):
        raise ValueError(f"{where}: {key} must be a positive finite number (got {v!r})")
    return float(v)


def check_nonnegative(where: str, key: str, v) -> float:
    """A finite number >= 0."""
    if not _is_number(v) or not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{where}: {key} must be a non-negative finite number (got {v!r})")
    return float(v)


def check_probability(where: str, key: str, v) -> float:
    """A number in the open interval (0, 1) (delta, delta_hat)."""
    if not _is_number(v) or not 0 < v < 1:
        raise ValueError(f"{where}: {key} must lie in (0, 1) (got {v!r})")
    return float(v)


def check_bool(where: str, key: str, v) -> bool:
    """``True`` or ``False`` (the ``calibrate`` setting)."""
    if not isinstance(v, bool):
        raise ValueError(f"{where}: {key} must be true or false (got {v!r})")
    return v


def check_choice(where: str, key: str, v, choices):
    """One of ``choices``."""
    if v not in choices:
        raise ValueError(f"{where}: {key} must be one of {tuple(choices)} (got {v!r})")
    return v


def check_names(where: str, key: str, v, allowed) -> list:
    """A non-empty list of distinct names from ``allowed`` (the algorithms or methods to run)."""
    if not isinstance(v, list) or not v or any(a not in allowed for a in v) or len(set(v)) != len(v):
        raise ValueError(f"{where}: {key} must be a non-empty list of distinct names from {list(allowed)} (got {v!r})")
    return v


def check_scenarios(where: str, scenarios, s: int, n_available: int | None = None, what: str = "samples") -> list:
    """A non-empty list of [N, N_i] pairs of positive integers with s <= N and, if ``n_available`` is
    given, N * N_i <= n_available (the scenarios of 000's Figures 2-4)."""
    if not isinstance(scenarios, list) or not scenarios:
        raise ValueError(f"{where}: scenarios must be a non-empty list of [N, N_i] pairs (got {scenarios!r})")
    for p in scenarios:
        if (not isinstance(p, list) or len(p) != 2
                or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in p)):
            raise ValueError(f"{where}: each scenario must be [N, N_i] with positive integers (got {p!r})")
        if s > p[0]:
            raise ValueError(f"{where}: s = {s} exceeds the number of agents N = {p[0]} of scenario {p}")
        if n_available is not None and p[0] * p[1] > n_available:
            raise ValueError(f"{where}: scenario {p} needs N * N_i = {p[0] * p[1]} {what}, only {n_available} available "
                             f"(too many by {p[0] * p[1] - n_available})")
    return scenarios
