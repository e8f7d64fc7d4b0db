"""Known answers for the shared Numba kernels (prirfed.verified.kernels).

These kernels sit inside the fused training loops (the sphere's per-sample passes use
dot_and_square_kernel and axpy_kernel), where a wrong lane of an unrolled sum would only show as a
slightly different trajectory. Here each is called directly, compiled, on small integer-valued
inputs, so every sum is exact in float64 and the expected value is computed with Python integers
(an independent oracle). Lengths 0 to 35 and 47, 48, 49, 64 cover the 16-entry SIMD blocks (four
vector accumulators of four lanes), every remainder, and one, two and four whole blocks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from prirfed.verified import kernels as K


def _int_vectors(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(-9, 10, size=n), rng.integers(-9, 10, size=n)


@pytest.mark.parametrize("n", [*range(36), 47, 48, 49, 64])
def test_dot_and_dot_and_square_are_exact_on_integers_for_every_length(n):
    """sum a_k b_k and sum z_k^2 of integers below 10 in magnitude: exact in float64; each lane of
    the unrolled loop gets its own weight (position k + 1 times the entry) so a lane dropped,
    negated or read from the wrong index changes the sum."""
    a, b = _int_vectors(n, n)
    w = np.arange(1, n + 1)
    a = a * w
    dot = sum(int(p) * int(q) for p, q in zip(a, b))
    sq = sum(int(p) * int(p) for p in a)
    assert K.dot_kernel(a.astype(float), b.astype(float)) == float(dot)
    zx, zz = K.dot_and_square_kernel(a.astype(float), b.astype(float))
    assert (zx, zz) == (float(dot), float(sq))
    # a strided (non-contiguous) view: the same sums
    a2, b2 = np.repeat(a.astype(float), 2)[::2], np.repeat(b.astype(float), 2)[::2]
    assert K.dot_kernel(a2, b2) == float(dot)
    assert K.dot_and_square_kernel(a2, b2) == (float(dot), float(sq))


@pytest.mark.parametrize("where, want", [
    # V0 + V1 first: 1e16 + 1 rounds to 1e16 (doubles at 1e16 are 2 apart, the tie goes to even)
    ((0, 4, 8), 0.0),
    # the 4-blocks after the 16-blocks (W) are added after (V0 + V1) + (V2 + V3) = 0: 1.0 survives
    ((0, 16, 8), 1.0),
    # lanes: (l0 + l1) + (l2 + l3): 1e16 in lane 0, 1.0 in lane 1, -1e16 in lane 2 of V0
    ((0, 1, 2), 0.0),
    # the last n mod 4 entries are added last: 1.0 in entry 20 survives
    ((0, 20, 8), 1.0),
])
def test_block_sums_add_in_the_documented_order(where, want):
    """The partial sums are reduced as U = ((V0 + V1) + (V2 + V3)) + W, then lanes ((u0 + u1) + (u2 +
    u3)), the last n mod 4 entries added last (n = 21 here: one 16-block, one 4-block, one entry).
    Entries 1e16, 1.0 and -1e16 placed where the order decides whether the 1.0 is rounded away."""
    a = np.zeros(21)
    a[where[0]], a[where[1]], a[where[2]] = 1e16, 1.0, -1e16
    assert K.dot_kernel(a, np.ones(21)) == want
    assert K.dot_and_square_kernel(np.ones(21), a)[0] == want


@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_axpy_updates_in_place(n):
    """y <- y + alpha x with alpha = 0.5 on integers: exact, y changed in place, x unchanged."""
    x, y = _int_vectors(n, 100 + n)
    xf, yf = x.astype(float), y.astype(float)
    K.axpy_kernel(0.5, xf, yf)
    np.testing.assert_array_equal(yf, y + 0.5 * x)
    np.testing.assert_array_equal(xf, x)


def test_matmul_and_sym_part_by_hand():
    """[[1, 2], [3, 4], [5, 6]] @ [[1, 0, 2], [-1, 3, 1]] = [[-1, 6, 4], [-1, 12, 10], [-1, 18, 16]];
    the symmetric part of [[1, 2], [4, 3]] is [[1, 3], [3, 3]]."""
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    b = np.array([[1.0, 0.0, 2.0], [-1.0, 3.0, 1.0]])
    np.testing.assert_array_equal(K.matmul_kernel(a, b), [[-1, 6, 4], [-1, 12, 10], [-1, 18, 16]])
    np.testing.assert_array_equal(K.sym_part_kernel(np.array([[1.0, 2.0], [4.0, 3.0]])), [[1, 3], [3, 3]])


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_all_finite_finds_one_bad_entry_anywhere(bad):
    """True on a finite array of any shape (and on an empty one), False as soon as one entry, first,
    middle or last, is NaN or +-inf."""
    a = np.arange(12.0).reshape(3, 4)
    assert K.all_finite_kernel(a) and K.all_finite_kernel(np.zeros(0))
    for idx in [(0, 0), (1, 2), (2, 3)]:
        c = a.copy()
        c[idx] = bad
        assert not K.all_finite_kernel(c)
