"""The sphere family's minibatch sum (``geometry_sphere.add_clipped_batch``: four samples per pass,
sum_r g_r z_r - (sum_r g_r a_r) x) against the reference, sample by sample: the reference problem's
gradient grad f_ij(x) = -2 c (z^T x)(z - (z^T x) x) clipped by ``reference.mechanisms.clip``, summed
in float64 and, as the oracle for the rounding, in mpmath at 40 digits."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

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
