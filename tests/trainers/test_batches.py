"""The batch of a gradient step (reference ``trainers.base.batch_indices``, verified
``randomness.batch_into``): a full batch is the rows in order and reads nothing from the stream; a
smaller batch is the partial Fisher-Yates shuffle. Known answers: the definition (a full batch is
the whole index set), NumPy's own Philox words (the stream), and DP-RSGD's step written out by hand
with the Exp map's closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.randomness import Stream, agent_stream, run_key
from prirfed.reference.trainers.base import batch_indices, sample_without_replacement
from prirfed.reference.trainers.local import dp_rsgd_local

KEY = np.array([0x243F6A8885A308D3, 0x13198A2E03707344], dtype=np.uint64)


def next_word(stream):
    """The stream's next raw 64-bit word, through the smallest draw that reads exactly one word."""
    return stream.integers(0, 2**62)


@given(n=st.integers(1, 40), t=st.integers(0, 5))
def test_a_full_batch_is_every_row_in_order_and_reads_nothing(n, t):
    st_used = Stream(KEY, 0, t, 3)
    np.testing.assert_array_equal(batch_indices(st_used, n, n), np.arange(n))
    # nothing was read: the next word is the first word of an untouched stream
    assert next_word(st_used) == next_word(Stream(KEY, 0, t, 3))


@given(n=st.integers(2, 40), data=st.data())
def test_a_smaller_batch_is_the_partial_fisher_yates_shuffle(n, data):
    b = data.draw(st.integers(0, n - 1))
    got = batch_indices(Stream(KEY, 0, 1, 2), n, b)
    np.testing.assert_array_equal(got, sample_without_replacement(Stream(KEY, 0, 1, 2), n, b))
    assert len(set(got.tolist())) == b and all(0 <= v < n for v in got)


@pytest.mark.parametrize("b", [-1, 6])
def test_batch_indices_refuses_a_batch_outside_0_to_n(b):
    with pytest.raises(ValueError, match=rf"^batch_indices: need 0 <= b <= n \(got b={b}, n=5\)$"):
        batch_indices(Stream(KEY, 0, 0, 0), 5, b)


def test_full_batch_dp_rsgd_step_reads_the_noise_first():
    """One DP-RSGD step with b = N_i, no clipping: x1 = Exp_x(-alpha (grad f_i(x) + P_x(sigma g))),
    g the FIRST D normals of agent i's stream of round 0 (no batch draw before them). Written out:
    grad f_i(x) = -(2 / N_i) P_x(Z_i^T Z_i x) (c_i = 1), P_x v = v - (x^T v) x, and on the sphere
    Exp_x(v) = cos(|v|) x + sin(|v|) v / |v|."""
    rng = np.random.default_rng(7)
    Z = [rng.standard_normal((6, 4)), rng.standard_normal((5, 4))]
    P = SpherePCA(Z)
    x = np.array([0.5, -0.5, 0.5, 0.5])
    i, sigma, alpha = 1, 0.3, 0.2
    key = run_key(np.random.default_rng(11))
    g = agent_stream(key, 0, i).standard_normal(4)

    def proj(v):
        return v - (x @ v) * x

    eta = proj(-(2.0 / 5) * (Z[i].T @ (Z[i] @ x))) + proj(sigma * g)
    v = -alpha * eta
    nv = math.sqrt(v @ v)
    want = math.cos(nv) * x + math.sin(nv) * v / nv
    got = dp_rsgd_local(P, i, x, 1, 5, sigma, math.inf, alpha, np.random.default_rng(11))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
