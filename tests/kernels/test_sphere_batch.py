"""The sphere family's minibatch sum (``geometry_sphere.add_clipped_batch``: four samples per pass,
sum_r g_r z_r - (sum_r g_r a_r) x) against the reference, sample by sample: the reference problem's
gradient grad f_ij(x) = -2 c (z^T x)(z - (z^T x) x) clipped by ``reference.mechanisms.clip``, summed
in float64 and, as the oracle for the rounding, in mpmath at 40 digits."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from numba import njit

from prirfed.reference.manifolds import Sphere
from prirfed.reference.mechanisms import clip
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.verified.trainers import geometry_sphere as g
from prirfed.verified.trainers.families import SphereDims


def reference_sum(P, x, rows, tau):
    """1 + sum over the rows of clip_tau(grad f(x)) by the reference problem and mechanism (float64),
    and the same sum in mpmath of the unrounded clipped gradients' float64 values (the oracle of the
    summation)."""
    M = Sphere(x.shape[0] - 1)
    vs = [clip(M, x, P.grad_sample(x, 0, int(r)), tau) if tau != math.inf else P.grad_sample(x, 0, int(r))
          for r in rows]
    with mpmath.workdps(40):
        exact = [float(1 + mpmath.fsum(mpmath.mpf(float(v[k])) for v in vs)) for k in range(x.shape[0])]
    return np.array(exact), sum(float(np.abs(v).sum()) for v in vs)


@pytest.mark.parametrize("b", range(11))
@pytest.mark.parametrize("tau", [0.3, math.inf])
def test_batch_sum_equals_the_reference_clipped_gradients(b, tau):
    """Every batch size 0..10 (the four-sample body, every remainder), a permuted batch, clipped
    (tau = 0.3: most gradients here are longer) and not (tau = inf), c_i = N_i / 2 (paper 002's scale,
    so that a lost factor c shows)."""
    rng = np.random.default_rng(100 + b)
    Z = rng.standard_normal((12, 7))
    P = SpherePCA([Z], paper="002")
    x = rng.standard_normal(7)
    x /= np.linalg.norm(x)
    perm = rng.permutation(12)
    want, scale = reference_sum(P, x, perm[:b], tau)
    acc = np.ones(7)
    C = np.full(12, 6.0)  # c = N_i / 2 for N_i = 12 (paper 002)
    g.add_clipped_batch(SphereDims(7), x, Z, C, perm, 0, b, tau, acc, np.empty(7))
    np.testing.assert_allclose(acc, want, rtol=0, atol=1e-14 * max(scale, 1.0))


def test_batch_sum_with_an_offset_reads_the_agents_rows():
    """off = 5: the batch rows are 5 + perm[q] (a second agent's rows in the stacked array)."""
    rng = np.random.default_rng(7)
    Z = rng.standard_normal((11, 4))
    x = np.array([0.5, 0.5, 0.5, 0.5])
    perm = np.array([3, 0, 5, 1, 4, 2])
    P = SpherePCA([Z[5:]])
    want, scale = reference_sum(P, x, perm, 0.7)
    acc = np.ones(4)
    g.add_clipped_batch(SphereDims(4), x, Z, np.ones(11), perm, 5, 6, 0.7, acc, np.empty(4))
    np.testing.assert_allclose(acc, want, rtol=0, atol=1e-14 * scale)


def branch_form(s, r2, tau):
    """The clip factor as the reference mechanism states it, with branches: g = f s, f = min(1, tau / nrm),
    nrm = |s| sqrt(r2), f = 1 at nrm = 0 (a NaN square root of a negative r2 as NumPy gives it)."""
    with np.errstate(invalid="ignore"):
        nrm = abs(s) * float(np.sqrt(r2))
    f = 1.0
    if nrm != 0.0 and tau / nrm < 1.0:
        f = tau / nrm
    return f * s


def same_float(u, v):
    """Equal as float64 bit patterns up to NaN payloads (signed zeros differ)."""
    if math.isnan(u) or math.isnan(v):
        return math.isnan(u) and math.isnan(v)
    return np.float64(u).tobytes() == np.float64(v).tobytes()


def test_clip_factor_is_the_branch_form():
    """clip_factor's two selects return, bit for bit, what the branch form returns, on a grid of the
    awkward values: zero and signed zero scales, zero, tiny, negative (cancelled), infinite and NaN
    squared norms, tau = 0, tiny, clipping, not clipping, infinite."""
    scales = [0.0, -0.0, 1.5, -2.0, 1e-300, -1e300, math.inf, -math.inf, math.nan]
    squares = [0.0, 1e-310, 1e-12, 0.25, 4.0, 1e300, math.inf, math.nan, -1e-17]
    taus = [0.0, 1e-300, 0.3, 1.0, 7.0, math.inf]
    bad = [(s, r2, tau) for s in scales for r2 in squares for tau in taus
           if not same_float(g.clip_factor(s, r2, tau), branch_form(s, r2, tau))]
    assert bad == []


@njit
def factors4(s0, s1, s2, s3, e0, e1, e2, e3, tau):
    """clip_factors4 called from compiled code (an intrinsic cannot be called from Python)."""
    return g.clip_factors4(s0, s1, s2, s3, e0, e1, e2, e3, tau)


def test_clip_factors4_is_clip_factor():
    """The vector form, lane by lane, is the scalar form bit for bit: on the grid of awkward values
    (each lane a different pair, so a lane mix-up shows) and on 2000 random clipping cases."""
    scales = [0.0, -0.0, 1.5, -2.0, 1e-300, -1e300, math.inf, -math.inf, math.nan]
    squares = [0.0, 1e-310, 1e-12, 0.25, 4.0, 1e300, math.inf, math.nan, -1e-17]
    rng = np.random.default_rng(3)
    cases = [(s, r2) for s in scales for r2 in squares]
    cases += list(zip(rng.standard_normal(2000) * 3.0, rng.random(2000) * 2.0))
    for tau in [0.0, 1e-300, 0.3, 1.0, 7.0, math.inf]:
        for q in range(0, len(cases) - 3, 4):
            (s0, e0), (s1, e1), (s2, e2), (s3, e3) = cases[q:q + 4]
            got = factors4(s0, s1, s2, s3, e0, e1, e2, e3, tau)
            want = [g.clip_factor(s, e, tau) for s, e in cases[q:q + 4]]
            assert all(same_float(u, v) for u, v in zip(got, want)), (cases[q:q + 4], tau, got, want)


@pytest.mark.parametrize("position", range(4))
def test_the_exact_pass_at_every_position_of_a_group(position):
    """A sample almost parallel to x (z = 3x + 1e-6 w, w orthogonal to x) at each of the four positions
    of the first group of eight: ||z||^2 - a^2 = 1e-12 cancels (about 2e-3 relative error), so only the
    exact second pass gives the norm that tau = 1e-6 clips by; a group that skipped it for that position
    would be off by far more than the summation's rounding."""
    rng = np.random.default_rng(40 + position)
    D = 6
    x = rng.standard_normal(D)
    x /= np.linalg.norm(x)
    Z = rng.standard_normal((8, D)) * 1e-3
    w = rng.standard_normal(D)
    w -= (w @ x) * x
    Z[position] = 3.0 * x + 1e-6 * w / np.linalg.norm(w)
    perm = np.arange(8)
    tau = 1e-6
    P = SpherePCA([Z])
    want, scale = reference_sum(P, x, perm, tau)
    acc = np.ones(D)
    g.add_clipped_batch(SphereDims(D), x, Z, np.ones(8), perm, 0, 8, tau, acc, np.empty(D))
    # the sums sit beside the 1 the accumulator starts from: a few of its ulps (2.2e-16 each) of
    # rounding, against an error of about 1e-3 x tau = 1e-9 from a cancelled norm
    np.testing.assert_allclose(acc, want, rtol=0, atol=1e-15)
