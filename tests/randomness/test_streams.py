"""Streams of a run (reference/randomness.py, verified/randomness.py).

Independent oracle for the generator: NumPy's own ``np.random.Philox(key, counter).random_raw``
(NumPy's C implementation of Philox4x64-10, which we did not write). The Numba Philox must give the
same words for every key and counter, carries included. The transforms (uniform doubles, bounded
integers, polar-method normals) are checked (a) against values computed here from NumPy's words
with Python integers and ``math`` (uniforms, bounded integers), (b) twin against twin (normals:
bitwise, since both evaluate the same libm ``log`` and a correctly rounded sqrt), and (c) by
statistical tests of the laws at fixed keys, each with its false-alarm probability stated.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from prirfed.reference.randomness import (
    ROLE_AGENT,
    ROLE_SERVER,
    Stream,
    agent_stream,
    run_key,
    server_stream,
    stream_counter,
)
from prirfed.verified import randomness as vr

U64 = st.integers(0, 2**64 - 1)


def key_of(k0, k1):
    return np.array([k0, k1], dtype=np.uint64)


def numpy_philox(k0, k1, counter):
    """NumPy's Philox at this key and counter (uint64 arrays: NumPy turns a list of Python ints
    above 2^63 into float64 and loses the low bits)."""
    return np.random.Philox(key=key_of(k0, k1), counter=np.array(counter, dtype=np.uint64))


@given(k0=U64, k1=U64, c2=U64, c3=U64, n=st.integers(1, 13))
def test_numba_philox_words_equal_numpy_philox(k0, k1, c2, c3, n):
    """The first n words of the stream at counter (0, 0, c2, c3) are NumPy's, for any key."""
    ours = vr.stream_words(key_of(k0, k1), np.uint64(c2), np.uint64(c3), n)
    numpy = numpy_philox(k0, k1, [0, 0, c2, c3]).random_raw(n)
    np.testing.assert_array_equal(ours, numpy)


@given(k0=U64, k1=U64, c0=st.sampled_from([2**64 - 1, 2**64 - 2, 0, 12345]), c1=st.sampled_from([0, 2**64 - 1, 7]),
       c2=U64, c3=U64)
def test_counter_carry_equals_numpy(k0, k1, c0, c1, c2, c3):
    """Started at any counter (carry from word 0 into word 1, and out of word 1), the words agree."""
    st_ = vr.new_stream(key_of(k0, k1), np.uint64(c2), np.uint64(c3))
    st_[2], st_[3] = np.uint64(c0), np.uint64(c1)
    ours = np.array([vr.raw(st_) for _ in range(9)], dtype=np.uint64)
    numpy = numpy_philox(k0, k1, [c0, c1, c2, c3]).random_raw(9)
    np.testing.assert_array_equal(ours, numpy)


def test_known_answer_of_random123():
    """Random123's published known-answer vector (kat_vectors, philox4x64 with 10 rounds, counter 0,
    key 0): 16554d9eca36314c db20fe9d672d0fdc d7e772cee186176b 7e68b68aec7ba23b. Our stream's first
    block uses the counter after the start, so start at counter 2^256 - 1 (all words 2^64 - 1)."""
    st_ = vr.new_stream(key_of(0, 0), np.uint64(2**64 - 1), np.uint64(2**64 - 1))
    st_[2], st_[3] = np.uint64(2**64 - 1), np.uint64(2**64 - 1)
    ours = [int(vr.raw(st_)) for _ in range(4)]
    assert ours == [0x16554D9ECA36314C, 0xDB20FE9D672D0FDC, 0xD7E772CEE186176B, 0x7E68B68AEC7BA23B]


def test_stream_counter_layout_and_reference_stream_is_numpy():
    key = key_of(11, 22)
    assert stream_counter(ROLE_SERVER, 5, 3) == [0, 0, 5, (1 << 32) | 3]
    s = Stream(key, ROLE_AGENT, 9, 4)
    ref = numpy_philox(11, 22, [0, 0, 9, 4]).random_raw(6)
    assert [s.random_raw() for _ in range(6)] == [int(w) for w in ref]
    assert agent_stream(key, 9, 4).random_raw() == int(ref[0])
    assert server_stream(key, 9).random_raw() == int(numpy_philox(11, 22, [0, 0, 9, 2**32])
                                                     .random_raw())


@given(k0=U64, k1=U64, t=st.integers(0, 2**40), i=st.integers(0, 2**32 - 1), role=st.sampled_from([0, 1]))
def test_uniforms_are_the_top_53_bits_of_numpy_words(k0, k1, t, i, role):
    key = key_of(k0, k1)
    words = numpy_philox(k0, k1, [0, 0, t, (role << 32) | i]).random_raw(8)
    expect = [(int(w) >> 11) / 2.0**53 for w in words]
    s = Stream(key, role, t, i)
    assert [s.random() for _ in range(8)] == expect
    assert list(vr.uniforms(key, role, t, i, 8)) == expect


def masked_rejection_by_hand(words, lo, hi, count):
    """Bounded integers from a list of raw words, computed here with Python integers."""
    n = hi - lo
    out, it = [], iter(int(w) for w in words)
    mask = 0
    while mask < n - 1:
        mask = 2 * mask + 1
    for _ in range(count):
        if n == 1:
            out.append(lo)
            continue
        while True:
            v = next(it) & mask
            if v < n:
                out.append(lo + v)
                break
    return out


@given(k0=U64, k1=U64, t=st.integers(0, 1000), lo=st.integers(-5, 5), n=st.integers(1, 2**40))
def test_bounded_integers_equal_masked_rejection_by_hand(k0, k1, t, lo, n):
    key = key_of(k0, k1)
    hi = lo + n
    words = numpy_philox(k0, k1, [0, 0, t, 7]).random_raw(400)
    expect = masked_rejection_by_hand(words, lo, hi, 20)
    s = Stream(key, 0, t, 7)
    assert [s.integers(lo, hi) for _ in range(20)] == expect
    assert list(vr.bounded_integers(key, 0, t, 7, lo, hi, 20)) == expect


def test_integers_of_a_one_point_range_read_no_word_and_empty_ranges_raise():
    s = Stream(key_of(1, 2), 0, 0, 0)
    assert s.integers(4, 5) == 4 and s.words == 0
    with pytest.raises(ValueError, match="empty range"):
        s.integers(3, 3)
    with pytest.raises(ValueError, match="empty range"):
        vr.bounded_integers(key_of(1, 2), 0, 0, 0, 3, 3, 1)


@given(k0=U64, k1=U64, t=st.integers(0, 2**20), i=st.integers(0, 2**20), n=st.integers(1, 40))
def test_normals_equal_between_twins_bitwise(k0, k1, t, i, n):
    """Same words, same polar method, same libm log and IEEE sqrt: bit-identical normals."""
    key = key_of(k0, k1)
    a = Stream(key, ROLE_AGENT, t, i).standard_normal(n)
    b = vr.standard_normal(key, ROLE_AGENT, t, i, n)
    np.testing.assert_array_equal(a, b)


def test_polar_method_against_hand_computation_from_numpy_words():
    """The first pair of normals of a stream, computed here from NumPy's words (accept/reject by hand)."""
    key = key_of(5, 6)
    words = iter(numpy_philox(5, 6, [0, 0, 0, 0]).random_raw(100))
    while True:
        u = 2.0 * ((int(next(words)) >> 11) / 2.0**53) - 1.0
        v = 2.0 * ((int(next(words)) >> 11) / 2.0**53) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            break
    f = math.sqrt(-2.0 * math.log(s) / s)
    np.testing.assert_array_equal(Stream(key, 0, 0, 0).standard_normal(2), [u * f, v * f])
    # odd n discards the second value of the last pair: n = 1 and n = 2 read the same words
    s1, s2 = Stream(key, 0, 0, 0), Stream(key, 0, 0, 0)
    assert s1.standard_normal(1)[0] == s2.standard_normal(2)[0] and s1.words == s2.words


# ---------------------------------------------------------------------------- laws (statistical)
# Each test below computes one p-value at a fixed key and fails below ALPHA: with a fresh random key
# the false-alarm probability of each test would be ALPHA = 1e-4 (the fixed key makes it
# deterministic: the test either always passes or always fails).
ALPHA = 1e-4


def test_normals_law_kolmogorov_smirnov_and_moments():
    z = vr.standard_normal(key_of(2024, 11), ROLE_AGENT, 3, 17, 200_000)
    assert stats.kstest(z, "norm").pvalue > ALPHA
    # variance: (n - 1) s^2 ~ chi^2_{n-1}; two-sided p-value
    n = z.size
    q = (n - 1) * np.var(z, ddof=1)
    p = 2 * min(stats.chi2.cdf(q, n - 1), stats.chi2.sf(q, n - 1))
    assert p > ALPHA


def test_pairs_of_normals_are_uncorrelated_and_streams_independent():
    """Consecutive normals of one stream, and the same positions of neighbouring streams (agents i and
    i + 1, rounds t and t + 1), have sample correlation consistent with 0 (|r| sqrt(n) ~ N(0, 1))."""
    key = key_of(77, 88)
    n = 100_000
    a = vr.standard_normal(key, ROLE_AGENT, 4, 9, n)
    b = vr.standard_normal(key, ROLE_AGENT, 4, 10, n)
    c = vr.standard_normal(key, ROLE_AGENT, 5, 9, n)
    d = vr.standard_normal(key, ROLE_SERVER, 4, 9, n)
    for x, y in ((a[0::2], a[1::2]), (a, b), (a, c), (a, d)):
        r = np.corrcoef(x, y)[0, 1]
        assert 2 * stats.norm.sf(abs(r) * math.sqrt(x.size)) > ALPHA


def test_uniforms_law_kolmogorov_smirnov():
    u = vr.uniforms(key_of(3, 4), ROLE_SERVER, 0, 0, 200_000)
    assert stats.kstest(u, "uniform").pvalue > ALPHA


@pytest.mark.parametrize("lo, hi", [(0, 7), (3, 4 + 2**5), (0, 1000), (-3, 2)])
def test_bounded_integers_law_chi_square(lo, hi):
    n = hi - lo
    draws = vr.bounded_integers(key_of(hi, lo & 0xFFFF), ROLE_AGENT, 1, 2, lo, hi, 200 * n)
    assert draws.min() >= lo and draws.max() < hi
    counts = np.bincount(draws - lo, minlength=n)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_run_key_takes_one_draw_from_the_generator():
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    k = run_key(a)
    assert k.dtype == np.uint64 and k.shape == (2,)
    np.testing.assert_array_equal(k, b.integers(0, 2**64, size=2, dtype=np.uint64))
    assert a.bit_generator.state == b.bit_generator.state
    with pytest.raises(ValueError, match="run_key: rng must be a numpy.random.Generator"):
        run_key(5)
