"""What the fused loops record: the iterates at the recorded rounds (0, and t + 1 when
(t + 1) % record_every == 0 or t + 1 == T, as the reference trainers' ``History``).

One rule, used by the compiled loops (:func:`is_recorded`, :func:`new_records`) and by the wrappers
that rebuild the history (:func:`recorded_rounds`). Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["is_recorded", "new_records", "start_rounds", "keep_round", "option_output", "recorded_rounds"]


@njit(cache=True, inline="always")
def is_recorded(t, T, record_every):
    """Whether the iterate after round t (that is x^(t+1)) is recorded."""
    return (t + 1) % record_every == 0 or t + 1 == T


@njit(cache=True, inline="always")
def new_records(T, record_every, x0):
    """The array of recorded iterates: one row per recorded round, row 0 = x0 (the rest filled by the loop)."""
    n_rec = 1
    for t in range(T):
        if is_recorded(t, T, record_every):
            n_rec += 1
    R = np.empty((n_rec, x0.shape[0]))
    R[0] = x0
    return R


@njit(cache=True, inline="always")
def start_rounds(T, record_every, keep_all, x0):
    """(R, r, kept, x) at the start of a run: the recorded iterates (row 0 = x0), the next free row
    of R (1), an array for the iterate of every round if ``keep_all`` (an output drawn among them
    needs it; else empty), and the running iterate, a copy of x0."""
    return new_records(T, record_every, x0), 1, np.empty((T if keep_all else 0, x0.shape[0])), x0.copy()


@njit(cache=True, inline="always")
def keep_round(R, r, kept, t, T, record_every, x):
    """After round t: x into ``kept[t]`` (if every round is kept) and into row r of R if the round is
    recorded. Returns the next free row of R."""
    if kept.shape[0] > 0:
        kept[t] = x
    if is_recorded(t, T, record_every):
        R[r] = x
        return r + 1
    return r


@njit(cache=True, inline="always")
def option_output(option, x, kept, rng, T):
    """The output of Option 1 (x^(T)) or Option 2 (x^(t), t = rng.integers(1, T + 1): one draw)."""
    if option == 1:
        return x
    return kept[rng.integers(1, T + 1) - 1].copy()


def recorded_rounds(T: int, record_every: int) -> list:
    """The rounds a loop records: 0 and every t + 1 with (t + 1) % record_every == 0 or t + 1 == T."""
    return [0] + [t + 1 for t in range(T) if (t + 1) % record_every == 0 or t + 1 == T]
