"""What the fused loops record, in compiled code: f, ||grad f|| and the error to the optimum at the
recorded rounds (0, and t + 1 when (t + 1) % record_every == 0 or t + 1 == T, as the reference
trainers' ``History``), the iterates there if asked, and the iterate of every round when an
output drawn among them needs it.

One rule, used by the compiled loops (:func:`is_recorded`, :func:`start_rounds`, :func:`keep_round`)
and by the wrappers that rebuild the history (:func:`recorded_rounds`). The values come from the
geometry's ``record`` (:mod:`prirfed.verified.trainers.geometry`): one pass over the data for
f and grad f. Proofs note: ``proofs_notes/verified_trainers.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from prirfed.reference.randomness import ROLE_SERVER
from prirfed.verified.randomness import integers, open_stream

from .geometry import record

__all__ = ["is_recorded", "count_records", "start_rounds", "write_record", "keep_round", "option_output",
           "recorded_rounds"]


@njit(cache=True, inline="always")
def is_recorded(t, T, record_every):
    """Whether the iterate after round t (that is x^(t+1)) is recorded.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    t : int
        Round.
    T : int
        Rounds (steps for the single-dataset trainers).
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).

    Returns
    -------
    bool
        Whether it is recorded.
    """
    return (t + 1) % record_every == 0 or t + 1 == T


@njit(cache=True, inline="always")
def count_records(T, record_every):
    """1 (round 0) + the number of recorded rounds t + 1.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    T : int
        Rounds (steps for the single-dataset trainers).
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).

    Returns
    -------
    int
        Number of history rows.
    """
    n_rec = 1
    for t in range(T):
        if is_recorded(t, T, record_every):
            n_rec += 1
    return n_rec


@njit(cache=True, inline="always")
def write_record(dims, Z, C, offsets, sizes, A, ps, xstar, x, H, R, r):
    """Row r of the history: H[r] = (f(x), ||grad f(x)||, error to x*), R[r] = x if iterates are kept.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    A : numpy.ndarray
        Per-agent matrices where the family uses them (Stiefel kPCA's :math:`A_i`), else a placeholder.
    ps : numpy.ndarray
        Agent weights :math:`p_i`.
    xstar : numpy.ndarray
        The optimum, flat, or an empty array when it is unknown.
    x : numpy.ndarray
        The point recorded.
    H : numpy.ndarray
        History array (rows: f, gradient norm, error), written in place.
    R : numpy.ndarray
        Recorded iterates, written in place.
    r : int
        Index of the record.
    """
    f, g, e = record(dims, x, Z, C, offsets, sizes, A, ps, xstar)
    H[r, 0] = f
    H[r, 1] = g
    H[r, 2] = e
    if R.shape[0] > 0:
        R[r] = x


@njit(cache=True, inline="always")
def start_rounds(dims, Z, C, offsets, sizes, A, ps, xstar, T, record_every, keep_iterates, keep_all, x0):
    """(H, R, r, kept, x) at the start of a run: the history (row 0 recorded at x0), the kept iterates
    (empty unless ``keep_iterates``), the next free row (1), an array for the iterate of every round if
    ``keep_all`` (an output drawn among them needs it; else empty), and the running iterate, a copy of x0.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    A : numpy.ndarray
        Per-agent matrices where the family uses them (Stiefel kPCA's :math:`A_i`), else a placeholder.
    ps : numpy.ndarray
        Agent weights :math:`p_i`.
    xstar : numpy.ndarray
        The optimum, flat, or an empty array when it is unknown.
    T : int
        Rounds (steps for the single-dataset trainers).
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).
    keep_iterates : bool
        Keep the recorded iterates.
    keep_all : bool
        Keep every iterate (Option 2 needs them).
    x0 : numpy.ndarray
        Start point, flat.

    Returns
    -------
    H, R : numpy.ndarray
        History and kept iterates.
    r : int
        Next free row (1).
    kept : numpy.ndarray
        Buffer of every round's iterate (or empty).
    x : numpy.ndarray
        Copy of ``x0``.
    """
    n_rec = count_records(T, record_every)
    H = np.empty((n_rec, 3))
    R = np.empty((n_rec if keep_iterates else 0, x0.shape[0]))
    write_record(dims, Z, C, offsets, sizes, A, ps, xstar, x0, H, R, 0)
    return H, R, 1, np.empty((T if keep_all else 0, x0.shape[0])), x0.copy()


@njit(cache=True, inline="always")
def keep_round(dims, Z, C, offsets, sizes, A, ps, xstar, H, R, r, kept, t, T, record_every, x):
    """After round t: x into ``kept[t]`` (if every round is kept) and the record of x into row r if the
    round is recorded. Returns the next free row.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    dims : named tuple
        Geometry family, an instance of a class of :mod:`prirfed.verified.trainers.families` (selects the kernels when the loop compiles).
    Z : numpy.ndarray
        The samples of all agents, stacked (agent ``i``'s rows start at ``offsets[i]``).
    C : numpy.ndarray
        Per-sample scale of the loss, aligned with the rows of ``Z``.
    offsets : numpy.ndarray
        First row of each agent in ``Z``.
    sizes : numpy.ndarray
        Samples per agent, :math:`N_i`.
    A : numpy.ndarray
        Per-agent matrices where the family uses them (Stiefel kPCA's :math:`A_i`), else a placeholder.
    ps : numpy.ndarray
        Agent weights :math:`p_i`.
    xstar : numpy.ndarray
        The optimum, flat, or an empty array when it is unknown.
    H : numpy.ndarray
        History array (rows: f, gradient norm, error), written in place.
    R : numpy.ndarray
        Recorded iterates, written in place.
    r : int
        Index of the record.
    kept : numpy.ndarray
        Kept iterates (Option 2), written in place.
    t : int
        Round.
    T : int
        Rounds (steps for the single-dataset trainers).
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).
    x : numpy.ndarray
        Current point, flat float64 array.

    Returns
    -------
    int
        The next free row.
    """
    if kept.shape[0] > 0:
        kept[t] = x
    if is_recorded(t, T, record_every):
        write_record(dims, Z, C, offsets, sizes, A, ps, xstar, x, H, R, r)
        return r + 1
    return r


@njit(cache=True, inline="always")
def option_output(option, x, kept, key, T):
    """The output of Option 1 (x^(T)) or Option 2 (x^(t), t = integers(1, T + 1) drawn from the server's
    stream of round T).

    Option 1 or 2 of Huang et al. (2024), Algorithm 1, lines 12-13.

    Parameters
    ----------
    option : int
        Option 1 (last iterate) or 2 (uniformly drawn iterate).
    x : numpy.ndarray
        The last iterate.
    kept : numpy.ndarray
        Every round's iterate (Option 2).
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    T : int
        Rounds (steps for the single-dataset trainers).

    Returns
    -------
    numpy.ndarray
        The output point.
    """
    if option == 1:
        return x
    st = open_stream(key, ROLE_SERVER, T, 0)
    return kept[integers(st, 1, T + 1) - 1].copy()


def recorded_rounds(T: int, record_every: int) -> list:
    """The rounds a loop records: 0 and every t + 1 with (t + 1) % record_every == 0 or t + 1 == T.

    Helper, not a paper formula: bookkeeping.

    Parameters
    ----------
    T : int
        Rounds (steps for the single-dataset trainers).
    record_every : int
        Recording period (rounds 0 and ``T`` are always recorded).

    Returns
    -------
    list of int
        The rounds.
    """
    return [0] + [t + 1 for t in range(T) if (t + 1) % record_every == 0 or t + 1 == T]
