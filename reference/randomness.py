"""Random streams of a run: one Philox4x64-10 stream per (role, round, agent), keyed by the run.

Why streams and not one Generator consumed in order: the agents of a round must be able to run in
parallel (threads, processes, or the machines of a Flower deployment) and still give the output of
the in-process run, bit for bit. So no draw may depend on the order in which other agents drew:
every (round t, agent i) reads its own stream, derived from the run's key alone.

The policy (proofs_notes/randomness_streams.md):

- A trainer draws the run key ONCE from the caller's ``numpy.random.Generator``:
  :func:`run_key` = ``rng.integers(0, 2**64, size=2, dtype=np.uint64)`` (128 bits). That is the only
  use of ``rng``: the caller's Generator advances by exactly that call in both twins.
- The stream of (role, t, i) is the counter-based generator Philox4x64-10 (Salmon, Moraes, Dror,
  Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011) with the run key as its key and the
  256-bit counter laid out as four 64-bit words::

      (c0, c1, c2, c3) = (block index mod 2^64, block index div 2^64, t, role * 2^32 + i)

  Block j = 1, 2, 3, ... of the stream is Philox(key, (j mod 2^64, j div 2^64, t, role 2^32 + i)),
  four 64-bit words, consumed in order. This is exactly NumPy's ``np.random.Philox(key=key,
  counter=[0, 0, t, role * 2**32 + i])`` read by ``random_raw`` (NumPy increments the counter
  before each block, with carry from c0 into c1), which is what :class:`Stream` wraps.
- Streams cannot overlap: two streams differ in (c2, c3); a stream only ever changes (c0, c1),
  and reaches (c2, c3) of another stream only after 2^128 blocks (carry out of c1 would go into
  c2; NumPy's carry would, but 2^128 blocks is 2^135 bytes). Rounds t < 2^64, agents
  i < 2^32, roles < 2^32.
- Roles: :data:`ROLE_AGENT` (0): agent i's local work in round t (its batches, its noise, its
  local Option 2 draw); a single-dataset trainer (DP-RGD, DP-PGD, RSGD) is agent 0 and its step t
  is round t; a standalone local trainer (``dp_rsgd_local``) is agent i in round 0.
  :data:`ROLE_SERVER` (1): the server in round t (the agent set S_t); the server "round" T (one past
  the last round) holds the run's output draw (Option 2 / Output 2).

Transforms of the raw 64-bit words w (the same in :mod:`prirfed.verified.randomness`):

- uniform double in [0, 1): ``(w >> 11) * 2^-53`` (NumPy's own convention: the top 53 bits);
- bounded integer in [lo, hi): masked rejection. With n = hi - lo and m = 2^k - 1 the smallest
  all-ones mask >= n - 1, draw words until ``w & m < n`` and return ``lo + (w & m)``: exactly
  uniform (each accepted value has probability 1/(m + 1) per draw, conditioned on acceptance
  1/n); n = 1 returns lo and reads no word;
- standard normals by the Marsaglia polar method (Marsaglia and Bray 1964): u = 2 U1 - 1,
  v = 2 U2 - 1 from two uniforms, s = u^2 + v^2, reject s >= 1 or s = 0, else u f and v f with
  f = sqrt(-2 log(s) / s) are two independent N(0, 1) (exact, given exact uniforms: (u, v) is then
  uniform on the unit disc, s is uniform on (0, 1) and independent of the angle, and -2 log s is
  chi^2_2). ``standard_normal(n)`` produces pairs until it has n values; for odd n the last
  pair's second value is discarded (no state carries over between calls). Chosen over
  Box-Muller: measured 2x faster in Numba (no sin/cos), and it needs only log and sqrt, so the
  twins agree bit for bit whenever both call the same libm ``log`` (sqrt is correctly rounded).

The reference reads one word per ``random_raw()`` call of NumPy's own Philox (readable and slow);
the verified twin implements Philox4x64-10 in Numba and is tested word for word against NumPy.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ROLE_AGENT", "ROLE_SERVER", "Stream", "run_key", "agent_stream", "server_stream", "stream_counter",
           "uniform_from_word", "check_key"]

#: role of a stream: an agent's local work in a round (a single-dataset trainer is agent 0)
ROLE_AGENT = 0
#: role of a stream: the server in a round (the agent set); round T: the run's output draw
ROLE_SERVER = 1

_TWO53 = 2.0 ** -53
_MASK64 = (1 << 64) - 1


def run_key(rng) -> np.ndarray:
    """The run's 128-bit key: ONE call ``rng.integers(0, 2**64, size=2, dtype=np.uint64)`` on the
    caller's ``numpy.random.Generator`` (the only draw a trainer takes from it).

    Parameters
    ----------
    rng : numpy.random.Generator
        The caller's Generator.

    Returns
    -------
    numpy.ndarray
        ``uint64`` array of shape (2,).

    Raises
    ------
    ValueError
        If ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"run_key: rng must be a numpy.random.Generator (got {type(rng).__name__})")
    return rng.integers(0, 2**64, size=2, dtype=np.uint64)


def check_key(where: str, key) -> np.ndarray:
    """``key`` as a uint64 array of shape (2,), else ``ValueError`` naming ``where``.

    Parameters
    ----------
    where : str
        Function named in the error message.
    key : array_like
        The candidate key.

    Returns
    -------
    numpy.ndarray
        ``key`` as an array.

    Raises
    ------
    ValueError
        If ``key`` is not a ``uint64`` array of shape (2,).
    """
    k = np.asarray(key)
    if k.shape != (2,) or k.dtype != np.uint64:
        raise ValueError(f"{where}: the run key must be a uint64 array of shape (2,) (got dtype {k.dtype}, "
                         f"shape {k.shape})")
    return k


def stream_counter(role: int, t: int, i: int) -> list:
    """The counter words (c0, c1, c2, c3) = (0, 0, t, role * 2^32 + i) before the stream's first block.

    Parameters
    ----------
    role : int
        Stream role, ``0 <= role < 2**32``.
    t : int
        Round, ``0 <= t < 2**64``.
    i : int
        Agent, ``0 <= i < 2**32``.

    Returns
    -------
    list of int
        ``[0, 0, t, role * 2**32 + i]``.

    Raises
    ------
    ValueError
        If an index is out of its range.
    """
    if not (0 <= role < 2**32 and 0 <= i < 2**32 and 0 <= t < 2**64):
        raise ValueError(f"stream_counter: need 0 <= role, i < 2^32 and 0 <= t < 2^64 (got role={role}, t={t}, i={i})")
    return [0, 0, int(t), (int(role) << 32) | int(i)]


def uniform_from_word(w: int) -> float:
    """The uniform double in [0, 1) of a raw word: (w >> 11) * 2^-53.

    Parameters
    ----------
    w : int
        A raw 64-bit word.

    Returns
    -------
    float
        The uniform double.
    """
    return (int(w) >> 11) * _TWO53


class Stream:
    """The stream of (role, t, i) under ``key`` (module docstring).

    Generator-like methods ``random``, ``integers``, ``standard_normal`` over NumPy's
    ``Philox(key, counter)`` (Salmon et al. (2011), Philox4x64-10).

    Parameters
    ----------
    key : numpy.ndarray
        The run key, ``uint64`` of shape (2,).
    role : int
        :data:`ROLE_AGENT` or :data:`ROLE_SERVER`.
    t : int
        Round.
    i : int
        Agent (0 for the server).

    Raises
    ------
    ValueError
        If ``key`` is not a ``uint64`` array of shape (2,) or an index is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from prirfed.reference.randomness import Stream
    >>> s = Stream(np.array([1, 2], dtype=np.uint64), 0, 5, 7)
    >>> s.random_raw() == int(np.random.Philox(key=[1, 2], counter=[0, 0, 5, 7]).random_raw())
    True
    """

    def __init__(self, key, role: int, t: int, i: int):
        key = check_key("Stream", key)
        self.key = key
        self.role, self.t, self.i = int(role), int(t), int(i)
        # uint64 arrays, not lists: NumPy converts a list of Python ints above 2^63 through float64
        # (Philox(key=[2**63 + 1, 0]) gets the key word 2^63; found by tests/randomness)
        self._bits = np.random.Philox(key=key, counter=np.array(stream_counter(role, t, i), dtype=np.uint64))
        self.words = 0  # raw words read so far

    def __repr__(self) -> str:
        return f"Stream(role={self.role}, t={self.t}, i={self.i}, words read={self.words})"

    def random_raw(self) -> int:
        """The next raw 64-bit word.

        Returns
        -------
        int
            The word.
        """
        self.words += 1
        return int(self._bits.random_raw())

    def random(self) -> float:
        """A uniform double in [0, 1): (w >> 11) * 2^-53, one word.

        Returns
        -------
        float
            The uniform.
        """
        return uniform_from_word(self.random_raw())

    def integers(self, lo: int, hi: int) -> int:
        """A uniform integer in [lo, hi) by masked rejection (module docstring); hi - lo = 1 reads nothing.

        Parameters
        ----------
        lo, hi : int
            The range, ``hi > lo``.

        Returns
        -------
        int
            The integer.

        Raises
        ------
        ValueError
            If the range is empty (``hi <= lo``).
        """
        n = int(hi) - int(lo)
        if n < 1:
            raise ValueError(f"Stream.integers: empty range [{lo}, {hi})")
        if n == 1:
            return int(lo)
        mask = (1 << (n - 1).bit_length()) - 1
        while True:
            v = self.random_raw() & mask
            if v < n:
                return int(lo) + v

    def standard_normal(self, size=None):
        """Standard normals by the polar method (Marsaglia and Bray (1964); module docstring).

        Parameters
        ----------
        size : int, tuple of int or None, optional
            ``None`` (default) for one float (one pair, second value discarded), else the shape of the
            array, filled in C order.

        Returns
        -------
        float or numpy.ndarray
            The normal(s).
        """
        shape = () if size is None else ((int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size))
        n = int(np.prod(shape)) if shape else 1
        out = np.empty(n)
        k = 0
        while k < n:
            u = 2.0 * self.random() - 1.0
            v = 2.0 * self.random() - 1.0
            s = u * u + v * v
            if s >= 1.0 or s == 0.0:
                continue
            f = math.sqrt(-2.0 * math.log(s) / s)
            out[k] = u * f
            if k + 1 < n:
                out[k + 1] = v * f
            k += 2
        return float(out[0]) if size is None else out.reshape(shape)


def agent_stream(key, t: int, i: int) -> Stream:
    """Agent i's stream in round t (role :data:`ROLE_AGENT`).

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    t : int
        Round.
    i : int
        Agent.

    Returns
    -------
    Stream
        The stream.

    Raises
    ------
    ValueError
        As :class:`Stream`.
    """
    return Stream(key, ROLE_AGENT, t, i)


def server_stream(key, t: int) -> Stream:
    """The server's stream in round t (role :data:`ROLE_SERVER`); t = T: the run's output draw.

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    t : int
        Round (``T`` for the output draw).

    Returns
    -------
    Stream
        The stream.

    Raises
    ------
    ValueError
        As :class:`Stream`.
    """
    return Stream(key, ROLE_SERVER, t, 0)
