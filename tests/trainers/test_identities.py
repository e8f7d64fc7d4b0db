"""Identities the papers' proofs rely on, checked on the trainers (issue 4).

- one PriRFed round with sigma = 0, s = N, K = 1, b_i = N_i is one RGD step (proof of Thm 5.1 of 000);
- DP-RSVRG with m = 1 is DP-RSGD with b_i = N_i (remark after Algorithm 3 of 000);
- RFedSVRG with tau = 1 and full participation is RGD (002, proof of Theorem 7);
- tangent mean of one point is the point; of points symmetric about x it is x; Lemma 6 of 002.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean as FrechetMeanProblem
from prirfed.reference.trainers.aggregation import tangent_mean
from prirfed.reference.trainers.local import dp_rsgd_local, dp_rsvrg_local
from prirfed.reference.trainers.prirfed import prirfed
from prirfed.reference.trainers.rfed import rfedsvrg
from prirfed.reference.trainers.rgd import rgd

seeds = st.integers(0, 2**32 - 1)


def euclidean_problem(seed, N=4, d=3, sizes=None):
    rng = np.random.default_rng(seed)
    M = Euclidean(d)
    sizes = sizes or [int(s) for s in rng.integers(2, 6, size=N)]
    data = [rng.standard_normal((n, d)) + rng.standard_normal(d) for n in sizes]
    allx = np.concatenate(data)
    return FrechetMeanProblem(M, data, x_star=allx.mean(axis=0)), rng


@given(seed=seeds, alpha=st.floats(0.01, 0.9))
def test_one_prirfed_round_is_one_rgd_step(seed, alpha):
    P, rng = euclidean_problem(seed)
    x0 = rng.standard_normal(3)
    r = prirfed(P, x0, T=1, s=P.N, alpha=alpha, rng=np.random.default_rng(0), K=1, sigma=0.0)
    g = rgd(P, x0, alpha, T=1)
    np.testing.assert_allclose(r.x, g.x, rtol=1e-12, atol=1e-12)
    # and that step is x - alpha grad f(x) with grad f(x) = x - mean(data)
    np.testing.assert_allclose(r.x, x0 - alpha * (x0 - P.x_star), rtol=1e-12, atol=1e-12)


@given(seed=seeds, K=st.integers(1, 4), alpha=st.floats(0.01, 0.5))
def test_dp_rsvrg_with_m_1_is_dp_rsgd_full_batch(seed, K, alpha):
    P, rng = euclidean_problem(seed)
    x0 = rng.standard_normal(3)
    tau = 1.5
    a = dp_rsgd_local(P, 0, x0, K, P.sizes[0], 0.0, tau, alpha, np.random.default_rng(1))
    b = dp_rsvrg_local(P, 0, x0, K, 1, 0.0, tau, 0.7, alpha, np.random.default_rng(1))
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@given(seed=seeds, eta=st.floats(0.01, 0.9), T=st.integers(1, 4))
def test_rfedsvrg_tau_1_full_participation_is_rgd(seed, eta, T):
    P, rng = euclidean_problem(seed)
    x0 = rng.standard_normal(3)
    r = rfedsvrg(P, x0, T=T, k=P.N, eta=eta, tau=1, rng=np.random.default_rng(0))
    g = rgd(P, x0, eta, T=T)
    np.testing.assert_allclose(r.x, g.x, rtol=1e-11, atol=1e-11)


def test_tangent_mean_of_one_point_and_of_symmetric_points():
    M = Euclidean(2)
    x = np.array([1.0, -2.0])
    y = np.array([3.0, 0.5])
    np.testing.assert_allclose(tangent_mean(M, x, [y]), y)
    np.testing.assert_allclose(tangent_mean(M, x, [x + y, x - y]), x)


@given(seed=seeds, k=st.integers(1, 6))
def test_lemma_6_of_002_on_euclidean(seed, k):
    """d(x_{t+1}, x_t) <= (1/k) sum_i d(x_i, x_t) for the tangent mean (8)."""
    M = Euclidean(3)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(3)
    pts = [rng.standard_normal(3) * 3 for _ in range(k)]
    xn = tangent_mean(M, x, pts)
    assert M.dist(xn, x) <= np.mean([M.dist(p, x) for p in pts]) + 1e-12


def test_bad_input():
    P, rng = euclidean_problem(0)
    x0 = np.zeros(3)
    with pytest.raises(ValueError, match="prirfed: s must be"):
        prirfed(P, x0, T=1, s=P.N + 1, alpha=0.1, rng=rng)
    with pytest.raises(ValueError, match="prirfed: step sizes"):
        prirfed(P, x0, T=2, s=1, alpha=-0.1, rng=rng)
    with pytest.raises(ValueError, match="prirfed: T must be"):
        prirfed(P, x0, T=0, s=1, alpha=0.1, rng=rng)
    with pytest.raises(ValueError, match="dp_rsgd_local: b must be"):
        dp_rsgd_local(P, 0, x0, 1, P.sizes[0] + 1, 0.0, math.inf, 0.1, rng)
    with pytest.raises(ValueError, match="shape"):
        prirfed(P, np.zeros(4), T=1, s=1, alpha=0.1, rng=rng)
    with pytest.raises(ValueError, match="FrechetMean: agents_data\\[1\\] has no samples"):
        FrechetMeanProblem(Euclidean(2), [np.zeros((2, 2)), np.zeros((0, 2))])


@given(seed=seeds, T=st.integers(1, 6))
def test_dp_rgd_output_3_is_the_running_mean_on_euclidean(seed, T):
    """Geodesic averaging with c_t = 1/(t+1) is the arithmetic mean of w_1..w_T on flat space.

    With c_t = 2/(t+1) as printed in Theorem 3 of 001, the recurrence wbar_{t+1} = wbar_t +
    2/(t+1) (w_{t+1} - wbar_t) gives wbar_T = sum_t (t-1) w_t / sum_t (t-1) for T >= 2 (w_1 gets
    weight 0; weights proportional to t would need 2/(t+2)). Closed form derived by induction."""
    from prirfed.reference.trainers.rgd import dp_rgd

    P, rng = euclidean_problem(seed)
    x0 = rng.standard_normal(3)
    r = dp_rgd(P, x0, 0.3, T, b=2, sigma=0.5, rng=np.random.default_rng(seed), output=3, keep_iterates=True,
               record_every=1)
    W = np.array(r.history.iterates[1:])
    np.testing.assert_allclose(r.x, W.mean(axis=0), rtol=1e-10, atol=1e-10)
    s = dp_rgd(P, x0, 0.3, T, b=2, sigma=0.5, rng=np.random.default_rng(seed), output=3, averaging="strongly_convex",
               keep_iterates=True)
    if T == 1:
        np.testing.assert_allclose(s.x, W[0], rtol=1e-10, atol=1e-10)
    else:
        wt = np.arange(T, dtype=float)  # t - 1 for t = 1..T
        np.testing.assert_allclose(s.x, (wt[:, None] * W).sum(axis=0) / wt.sum(), rtol=1e-10, atol=1e-10)
