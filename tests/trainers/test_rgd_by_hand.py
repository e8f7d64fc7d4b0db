"""RGD, DP-RGD and RSGD on Euclidean space, where every step is written out by hand.

The federated Frechet mean on R^d (1/2 convention) has f(x) = 1/2 ||x - m||^2 + const with m the
mean of the data, grad f(x) = x - m and per-sample gradients x - a_j; Exp_x(v) = x + v and the
tangent noise is sigma times d standard normals. So a DP-RGD step is w - alpha_t (clipped batch
mean + sigma g_t), Armijo's test f(x - a g) <= f(x) - c a ||g||^2 reads (a / 2 - 1) <= -c, and
geodesic averaging is a convex combination. The expected values below are these formulas, with
the draws the module docstring of ``reference/trainers/rgd.py`` documents (step t: agent 0's
stream of round t, a full batch draws nothing, then d normals; Output 2: one integers(0, T) from
the server's stream of round T).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from prirfed.reference.accounting.events import Gaussian, SelfComposed
from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.randomness import agent_stream, run_key, server_stream
from prirfed.reference.trainers.rgd import dp_rgd, pooled_index, rgd, rsgd

# agents of 2 and 1 points in R^2: m = (2/3, 1)
DATA = [np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 3.0]])]
M_MEAN = np.array([2.0 / 3.0, 1.0])
EPS = np.finfo(float).eps


def frechet():
    return FrechetMean(Euclidean(2), DATA)


def line(delta2):
    """Data -1, 1 on the line (m = 0, f(x) = (x^2 + 1) / 2) and the point x = sqrt(delta2)."""
    return FrechetMean(Euclidean(1), [np.array([[-1.0], [1.0]])]), np.array([math.sqrt(delta2)])


def test_armijo_steps_by_hand():
    """Armijo backtracking with alpha = 3, shrink = 0.7, c = 0.4: on f = 1/2 ||x - m||^2 + const
    the trial a is accepted iff a / 2 - 1 <= -c, i.e. a <= 1.2, so 3, 2.1 and 1.47 are refused and
    a = 3 * 0.7^3 = 1.029 is taken at every step: x_{t+1} - m = (1 - a)(x_t - m). (With c / a in
    place of c a the trial 1.47 would pass, with +c a the trial 2.1.)"""
    x0 = np.array([3.0, -2.0])
    a = 3.0 * 0.7 * 0.7 * 0.7
    r = rgd(frechet(), x0, 3.0, 2, armijo=True, c=0.4, shrink=0.7, record_every=1, keep_iterates=True)
    want = [x0, M_MEAN + (1 - a) * (x0 - M_MEAN), M_MEAN + (1 - a) ** 2 * (x0 - M_MEAN)]
    for got, w in zip(r.history.iterates, want, strict=True):
        np.testing.assert_allclose(got, w, rtol=0, atol=1e-14)
    assert r.info == dict(stopped=None)


def test_armijo_stationarity_threshold_is_4_eps_times_1_plus_abs_f():
    """Armijo stops when alpha ||grad f||^2 <= 4 eps (1 + |f(x)|). On the line with data -1, 1 at
    x = sqrt(delta2): f = (delta2 + 1) / 2 ~ 1/2, ||grad||^2 = delta2, so with alpha = 1 the
    threshold is 6 eps: delta2 = 5 eps stops at iteration 0 (one record, round 0), delta2 = 7 eps
    takes a step (2 eps or 12 eps in place of 6 eps would swap the two)."""
    P, x = line(5 * EPS)
    r = rgd(P, x, 1.0, 3, armijo=True, record_every=1)
    assert r.info["stopped"] == "stationary to working precision at iteration 0 (alpha ||grad||^2 below f's rounding)"
    assert r.history.rounds == [0]
    np.testing.assert_array_equal(r.x, x)
    P, x = line(7 * EPS)
    r = rgd(P, x, 1.0, 1, armijo=True, record_every=1)
    assert r.info["stopped"] is None and r.history.rounds == [0, 1]
    assert abs(r.x[0]) < 1e-16  # the step a = 1 lands on m = 0 (up to the rounding of the gradient)


def test_gtol_0_stops_at_an_exact_stationary_point_and_t_0_runs_nothing():
    """gtol = 0 (default) stops when ||grad f|| <= 0, i.e. at a zero gradient: at x = 0 on the line
    with data -1, 1 the gradient ((0 + 1) + (0 - 1)) / 2 is exactly 0. T = 0 returns x0 after
    recording round 0; T = -1 and gtol < 0 are refused."""
    P, _ = line(0.0)
    r = rgd(P, np.array([0.0]), 0.5, 4, record_every=1)
    assert r.info["stopped"] == "||grad f|| <= gtol at iteration 0"
    assert r.history.rounds == [0]
    r = rgd(frechet(), np.array([1.0, 1.0]), 0.5, 0)
    np.testing.assert_array_equal(r.x, [1.0, 1.0])
    assert r.history.rounds == [0] and r.info == dict(stopped=None)
    with pytest.raises(ValueError, match=r"^rgd: T must be"):
        rgd(frechet(), np.array([1.0, 1.0]), 0.5, -1)
    for bad in (-0.5, math.nan):
        with pytest.raises(ValueError, match=r"^rgd: gtol must be >= 0"):
            rgd(frechet(), np.array([1.0, 1.0]), 0.5, 2, gtol=bad)
    for c in (0.0, -0.5):
        with pytest.raises(ValueError, match=r"^rgd: the Armijo parameter c must be in \(0, 1\)"):
            rgd(frechet(), np.array([1.0, 1.0]), 0.5, 2, armijo=True, c=c)
    with pytest.raises(ValueError, match=r"^rgd: keep_iterates must be True or False"):
        rgd(frechet(), np.array([1.0, 1.0]), 0.5, 2, keep_iterates="yes")


def test_gtol_stop_between_records_is_recorded_and_steps_follow_the_schedule():
    """On the line with data -1, 1 the gradient at x is x, so from x_0 = 1 with alpha = 0.5 the
    iterates are x_t = 2^-t exactly and ||grad f(x_t)|| = 2^-t: gtol = 0.25 stops at iteration 2
    (2^-2 <= 0.25, the bound inclusive), a round that record_every = 5 would not record, so it is
    recorded on stopping: rounds 0 and 2. With the schedule (0.5, 0.25): x_1 = 0.5, x_2 = 0.375."""
    P, _ = line(0.0)
    r = rgd(P, np.array([1.0]), 0.5, 10, gtol=0.25, record_every=5, keep_iterates=True)
    assert r.info["stopped"] == "||grad f|| <= gtol at iteration 2"
    assert r.history.rounds == [0, 2]
    np.testing.assert_array_equal(r.history.iterates[1], [0.25])
    np.testing.assert_array_equal(r.x, [0.25])
    r = rgd(P, np.array([1.0]), [0.5, 0.25], 2, record_every=1, keep_iterates=True)
    np.testing.assert_array_equal(np.ravel(r.history.iterates), [1.0, 0.5, 0.375])


def hand_dp_rgd(key, x0, alphas, sigma, tau):
    """Full-batch DP-RGD on DATA by hand: the iterates w_0..w_T."""
    rows = np.concatenate(DATA)
    w, out = x0, [x0]
    for t, alpha in enumerate(alphas):
        g = np.zeros(2)
        for a in rows:
            e = w - a
            ne = math.sqrt(e @ e)
            g = g + (e * (tau / ne) if ne > tau else e)
        w = w - alpha * (g / 3 + sigma * agent_stream(key, t, 0).standard_normal(2))
        out.append(w)
    return out


def test_dp_rgd_outputs_by_hand():
    """Output 1: w_T; Output 2: w_j with j = integers(0, T) of the server's stream of round T;
    Output 3: geodesic averaging wbar_1 = w_1, wbar_{t+1} = wbar_t + c_t (w_{t+1} - wbar_t), c_t =
    1 / (t + 1) ("convex": the mean of w_1..w_T) or 2 / (t + 1) ("strongly_convex"; t the index of
    the new iterate minus 1). Step sizes (0.4, 0.1, 0.3, 0.2), sigma = 0.3, tau = 1.5 (at w_0 it clips
    the gradient of (0, 3) and keeps that of (2, 0): asserted), full batch b = n = 3."""
    x0 = np.array([2.5, -1.0])
    alphas, sigma, tau, seed = [0.4, 0.1, 0.3, 0.2], 0.3, 1.5, 17
    key = run_key(np.random.default_rng(seed))
    W = hand_dp_rgd(key, x0, alphas, sigma, tau)
    assert np.linalg.norm(x0 - DATA[1][0]) > tau > np.linalg.norm(x0 - DATA[0][1])  # both branches of clip
    T = 4
    j = int(server_stream(key, T).integers(0, T))
    convex = np.mean(W[1:], axis=0)
    strong = W[1]
    for t in range(1, T):
        strong = strong + (2.0 / (t + 1)) * (W[t + 1] - strong)
    kw = dict(tau=tau, record_every=3, keep_iterates=True)
    for output, averaging, want in ((1, "convex", W[T]), (2, "convex", W[j]), (3, "convex", convex),
                                    (3, "strongly_convex", strong)):
        r = dp_rgd(frechet(), x0, alphas, T, 3, sigma, np.random.default_rng(seed), output=output,
                   averaging=averaging, **kw)
        np.testing.assert_allclose(r.x, want, rtol=0, atol=1e-14, err_msg=f"output {output} {averaging}")
        assert r.history.rounds == [0, 3, 4]
        for got, t in zip(r.history.iterates, (0, 3, 4), strict=True):
            np.testing.assert_allclose(got, W[t], rtol=0, atol=1e-14)
        assert r.info == dict(T=4, b=3, sigma=0.3, tau=1.5, n=3, output=output, privacy="record-level, replace-one")
        assert r.event == SelfComposed(Gaussian(0.3 * 3 / (2 * 1.5)), 4)


def test_rsgd_is_noiseless_and_dp_rgd_settings_refuse_their_edges():
    """RSGD is DP-RGD with sigma = 0: full batch on DATA it is gradient descent, x_{t+1} - m =
    (1 - alpha)(x_t - m), and it carries no privacy event. DP-RGD's settings: a seed instead of a Generator and b = 0 are refused,
    L_0 = 0.5 is a Lipschitz bound (sensitivity radius min(tau, L_0) = 0.5), L_0 = 0 and -0.5 are
    refused with the setting's own message, keep_iterates must be a bool, output is 1, 2 or 3 and
    averaging 'convex' or 'strongly_convex'."""
    x0 = np.array([2.5, -1.0])
    r = rsgd(frechet(), x0, 0.25, 3, 3, np.random.default_rng(0))
    np.testing.assert_allclose(r.x, M_MEAN + 0.75**3 * (x0 - M_MEAN), rtol=0, atol=1e-14)
    assert r.event is None and r.info["sigma"] == 0.0
    r = dp_rgd(frechet(), x0, 0.25, 2, 3, 0.8, np.random.default_rng(0), lipschitz=0.5)
    assert r.event == SelfComposed(Gaussian(0.8 * 3 / (2 * 0.5)), 2)
    with pytest.raises(ValueError, match=r"^dp_rgd: rng must be a numpy.random.Generator \(got int\)$"):
        dp_rgd(frechet(), x0, 0.25, 2, 3, 0.8, 0)
    with pytest.raises(ValueError, match=r"^dp_rgd: b must be in \[1, 3\]"):
        dp_rgd(frechet(), x0, 0.25, 2, 0, 0.8, np.random.default_rng(0))
    for bad in (0.0, -0.5):
        with pytest.raises(ValueError, match=r"^dp_rgd: lipschitz \(L_0\) must be None or a number > 0"):
            dp_rgd(frechet(), x0, 0.25, 2, 3, 0.8, np.random.default_rng(0), lipschitz=bad)
    with pytest.raises(ValueError, match=r"^dp_rgd: keep_iterates must be True or False"):
        dp_rgd(frechet(), x0, 0.25, 2, 3, 0.8, np.random.default_rng(0), keep_iterates=1)
    with pytest.raises(ValueError, match=r"^dp_rgd: output must be 1, 2 or 3 \(got 4\)$"):
        dp_rgd(frechet(), x0, 0.25, 2, 3, 0.8, np.random.default_rng(0), output=4)
    with pytest.raises(ValueError, match=r"^dp_rgd: averaging must be 'convex' or 'strongly_convex'"):
        dp_rgd(frechet(), x0, 0.25, 2, 3, 0.8, np.random.default_rng(0), averaging="concave")


def test_pooled_index_walks_the_agents_in_order():
    """Sample number g of the pooled data (agents of sizes 2 and 1): 0, 1 are agent 0's rows 0, 1;
    2 is agent 1's row 0; 3 = n is past the end and refused."""
    P = frechet()
    assert [pooled_index(P, g) for g in range(3)] == [(0, 0), (0, 1), (1, 0)]
    with pytest.raises(ValueError, match=r"^pooled_index: sample number out of range \(n = 3\)$"):
        pooled_index(P, 3)
