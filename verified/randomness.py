"""Verified twin of :mod:`prirfed.reference.randomness`: Philox4x64-10 streams in Numba.

Mirrors ``reference/randomness.py`` (the policy, the counter layout and the transforms are
documented there; proofs_notes/randomness_streams.md). The reference reads NumPy's own Philox; this
module implements the generator (Salmon et al. 2011, Philox4x64 with 10 rounds, the Random123
constants) so that the fused loops can open a stream per (role, round, agent) in compiled code,
for a few nanoseconds instead of the ~15 us of a NumPy Generator. ``tests/randomness/`` checks the
raw words against ``np.random.Philox(key, counter).random_raw`` for many keys and counters (NumPy
is the independent oracle), and every transform against the reference ``Stream``.

A stream is a uint64 array of :data:`STATE_SIZE` words: key (2), counter (4), buffer (4), the
buffer position (1). The high half of the 64 x 64-bit products is taken from LLVM's 128-bit
multiply (:func:`mulhi`, one machine instruction on x86-64 and AArch64): measured 3.8 ns per word
against 17 ns for the same product assembled from 32-bit halves (``benchmarks/bench_streams.py``);
both give the exact product, and the words equal NumPy's. No fastmath (privacy path).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from prirfed.reference.randomness import ROLE_AGENT, ROLE_SERVER  # noqa: F401 - the same role numbers

__all__ = ["STATE_SIZE", "mulhi", "philox_block", "new_stream", "open_stream", "raw", "uniform", "integers",
           "normals_into", "normals", "standard_normal", "fisher_yates_into", "batch_into", "sample_without_replacement",
           "stream_words", "uniforms", "bounded_integers"]

STATE_SIZE = 11
_PHILOX_M0 = np.uint64(0xD2E7470EE14C6C93)
_PHILOX_M1 = np.uint64(0xCA5A826395121157)
_PHILOX_W0 = np.uint64(0x9E3779B97F4A7C15)
_PHILOX_W1 = np.uint64(0xBB67AE8584CAA73B)
_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U4 = np.uint64(4)
_U11 = np.uint64(11)
_U32 = np.uint64(32)
_TWO53 = 2.0 ** -53


@intrinsic
def mulhi(typingctx, a, b):
    """The high 64 bits of the exact 128-bit product of two uint64 (LLVM i128 multiply)."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(p, ir.Constant(i128, 64)), ir.IntType(64))

    return sig, codegen


@njit(cache=True, inline="always")
def philox_block(k0, k1, c0, c1, c2, c3):
    """Philox4x64-10 of the counter (c0..c3) under the key (k0, k1): four words. Round:
    (c0, c1, c2, c3) <- (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0)); the key
    is bumped by the Weyl constants (W0, W1) between rounds.

    Parameters
    ----------
    k0, k1 : numpy.uint64
        The key words.
    c0, c1, c2, c3 : numpy.uint64
        The counter words.

    Returns
    -------
    tuple of numpy.uint64
        The four output words.
    """
    for r in range(10):
        if r > 0:
            k0 = k0 + _PHILOX_W0
            k1 = k1 + _PHILOX_W1
        hi0 = mulhi(_PHILOX_M0, c0)
        lo0 = _PHILOX_M0 * c0
        hi1 = mulhi(_PHILOX_M1, c2)
        lo1 = _PHILOX_M1 * c2
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


@njit(cache=True, inline="always")
def new_stream(key, c2, c3):
    """A stream at counter (0, 0, c2, c3), nothing read yet (NumPy's Philox(key, counter)).

    Parameters
    ----------
    key : numpy.ndarray
        The run key, ``uint64`` of length 2.
    c2, c3 : numpy.uint64
        The fixed counter words.

    Returns
    -------
    numpy.ndarray
        The stream state, ``uint64`` of length :data:`STATE_SIZE`.
    """
    st = np.empty(STATE_SIZE, dtype=np.uint64)
    st[0] = key[0]
    st[1] = key[1]
    st[2] = _U0
    st[3] = _U0
    st[4] = c2
    st[5] = c3
    st[10] = _U4  # buffer empty
    return st


@njit(cache=True, inline="always")
def open_stream(key, role, t, i):
    """The stream of (role, t, i): counter (0, 0, t, role * 2^32 + i) (reference: randomness.Stream).

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    role : int
        Stream role (:data:`ROLE_AGENT` or :data:`ROLE_SERVER`).
    t : int
        Round.
    i : int
        Agent.

    Returns
    -------
    numpy.ndarray
        The stream state.
    """
    return new_stream(key, np.uint64(t), (np.uint64(role) << _U32) | np.uint64(i))


@njit(cache=True, inline="always")
def raw(st):
    """The next raw 64-bit word (NumPy's philox_next: the 256-bit counter is incremented, with carry,
    before each new block).

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.

    Returns
    -------
    numpy.uint64
        The word.
    """
    pos = st[10]
    if pos < _U4:
        st[10] = pos + _U1
        return st[6 + np.int64(pos)]
    c0 = st[2] + _U1
    st[2] = c0
    if c0 == _U0:  # carry, as NumPy (word 1 wraps only after 2^128 blocks, never within a stream)
        st[3] = st[3] + _U1
        if st[3] == _U0:
            st[4] = st[4] + _U1
            if st[4] == _U0:
                st[5] = st[5] + _U1
    b0, b1, b2, b3 = philox_block(st[0], st[1], c0, st[3], st[4], st[5])
    st[6] = b0
    st[7] = b1
    st[8] = b2
    st[9] = b3
    st[10] = _U1
    return b0


@njit(cache=True, inline="always")
def uniform(st):
    """A uniform double in [0, 1): (w >> 11) * 2^-53.

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.

    Returns
    -------
    float
        The uniform.
    """
    return np.float64(raw(st) >> _U11) * _TWO53


@njit(cache=True, inline="always")
def integers(st, lo, hi):
    """A uniform integer in [lo, hi) by masked rejection; hi - lo = 1 reads no word.

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.
    lo, hi : int
        The range, ``hi > lo``.

    Returns
    -------
    int
        The integer.

    Raises
    ------
    ValueError
        If the range is empty.
    """
    n = hi - lo
    if n < 1:
        raise ValueError("randomness.integers (verified): empty range")
    if n == 1:
        return lo
    m = np.uint64(n - 1)
    m |= m >> _U1
    m |= m >> np.uint64(2)
    m |= m >> _U4
    m |= m >> np.uint64(8)
    m |= m >> np.uint64(16)
    m |= m >> _U32
    un = np.uint64(n)
    while True:
        v = raw(st) & m
        if v < un:
            return lo + np.int64(v)


@njit(cache=True, inline="always")
def normals_into(st, out, scale):
    """out[k] = scale * z_k for the standard normals z_0, z_1, ... of the polar method (reference:
    Stream.standard_normal(len(out)); for an odd length the last pair's second value is discarded).

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.
    out : numpy.ndarray
        1-D float64 output, overwritten.
    scale : float
        Factor applied to every normal.
    """
    n = out.shape[0]
    k = 0
    while k < n:
        u = 2.0 * uniform(st) - 1.0
        v = 2.0 * uniform(st) - 1.0
        s = u * u + v * v
        if s >= 1.0 or s == 0.0:
            continue
        f = math.sqrt(-2.0 * math.log(s) / s)
        out[k] = scale * (u * f)
        if k + 1 < n:
            out[k + 1] = scale * (v * f)
        k += 2


@njit(cache=True)
def normals(st, n):
    """n standard normals (a new array), as Stream.standard_normal(n).

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.
    n : int
        Number of normals.

    Returns
    -------
    numpy.ndarray
        ``n`` standard normals.
    """
    out = np.empty(n)
    normals_into(st, out, 1.0)
    return out


@njit(cache=True, inline="always")
def fisher_yates_into(st, perm, n, k):
    """perm[:k] = k distinct indices of range(n), uniformly, by a partial Fisher-Yates shuffle with one
    integers(j, n) per j = 0..k-1 (reference: trainers.base.sample_without_replacement); ``perm``
    has length >= n and is overwritten (no allocation).

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.
    perm : numpy.ndarray
        ``int64`` buffer of length at least ``n``.
    n : int
        Population size.
    k : int
        Sample size, ``0 <= k <= n``.
    """
    for j in range(n):
        perm[j] = j
    for j in range(k):
        r = integers(st, j, n)
        tmp = perm[j]
        perm[j] = perm[r]
        perm[r] = tmp


@njit(cache=True, inline="always")
def batch_into(st, perm, n, b):
    """perm[:b] = the batch of one gradient step (reference: trainers.base.batch_indices): range(n) in
    order when b = n (no draw), else :func:`fisher_yates_into` (b draws); ``perm`` has length >= n.

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place (not read when ``b == n``).
    perm : numpy.ndarray
        ``int64`` buffer of length at least ``n``.
    n : int
        Population size.
    b : int
        Batch size, ``0 <= b <= n``.
    """
    if b == n:
        for j in range(n):
            perm[j] = j
    else:
        fisher_yates_into(st, perm, n, b)


@njit(cache=True, inline="always")
def sample_without_replacement(st, n, k):
    """k distinct indices of range(n) (a new array), as :func:`fisher_yates_into`.

    Parameters
    ----------
    st : numpy.ndarray
        Stream state, advanced in place.
    n : int
        Population size.
    k : int
        Sample size, ``0 <= k <= n``.

    Returns
    -------
    numpy.ndarray
        ``k`` distinct ``int64`` indices.
    """
    perm = np.empty(n, dtype=np.int64)
    fisher_yates_into(st, perm, n, k)
    return perm[:k].copy()


# ------------------------------------------------------------------ called from Python (tests, benchmarks)
@njit(cache=True)
def stream_words(key, c2, c3, n):
    """The first n raw words of the stream at counter (0, 0, c2, c3) (the test against NumPy).

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    c2, c3 : numpy.uint64
        The fixed counter words.
    n : int
        Number of words.

    Returns
    -------
    numpy.ndarray
        ``n`` ``uint64`` words.
    """
    st = new_stream(key, c2, c3)
    out = np.empty(n, dtype=np.uint64)
    for j in range(n):
        out[j] = raw(st)
    return out


@njit(cache=True)
def standard_normal(key, role, t, i, n):
    """n standard normals of the stream (role, t, i) (the test against the reference Stream).

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    role, t, i : int
        The stream's role, round and agent.
    n : int
        Number of normals.

    Returns
    -------
    numpy.ndarray
        ``n`` standard normals.
    """
    st = open_stream(key, role, t, i)
    return normals(st, n)


@njit(cache=True)
def uniforms(key, role, t, i, n):
    """n uniforms in [0, 1) of the stream (role, t, i) (tests).

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    role, t, i : int
        The stream's role, round and agent.
    n : int
        Number of uniforms.

    Returns
    -------
    numpy.ndarray
        ``n`` uniforms in [0, 1).
    """
    st = open_stream(key, role, t, i)
    out = np.empty(n)
    for j in range(n):
        out[j] = uniform(st)
    return out


@njit(cache=True)
def bounded_integers(key, role, t, i, lo, hi, n):
    """n draws integers(lo, hi) of the stream (role, t, i) (tests).

    Parameters
    ----------
    key : numpy.ndarray
        The run key.
    role, t, i : int
        The stream's role, round and agent.
    lo, hi : int
        The range, ``hi > lo``.
    n : int
        Number of draws.

    Returns
    -------
    numpy.ndarray
        ``n`` ``int64`` integers.

    Raises
    ------
    ValueError
        If the range is empty.
    """
    st = open_stream(key, role, t, i)
    out = np.empty(n, dtype=np.int64)
    for j in range(n):
        out[j] = integers(st, lo, hi)
    return out
