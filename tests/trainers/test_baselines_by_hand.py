"""The baselines of Han et al. (2024) replayed by hand: DP-PGD (section 5.1) and DP-FM (section 5.2).

Each expected value is written out here in numpy from the paper's formulas and the draws the
module docstring of ``reference/trainers/baselines.py`` documents (the same streams, read in the
same order), never taken from the code under test: DP-PGD's steps w <- (w - eta_t zeta_t) /
||w - eta_t zeta_t|| with a step-size schedule, a batch smaller than n, clipping that cuts some
per-sample gradients and not others, and noise; DP-FM's output W^{1/2} U diag(e^lambda) U^T
W^{1/2} with the Frechet mean of commuting (diagonal) matrices in closed form and the
Metropolis chain of the eigenvalues run step by step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from prirfed.reference.accounting.events import EpsilonDelta, Gaussian, SampledWithoutReplacement, SelfComposed
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.randomness import agent_stream, run_key
from prirfed.reference.trainers.baselines import (
    dp_frechet_mean,
    dp_pgd,
    laplace_sigma_max,
    sample_spd_laplace_eigenvalues,
    spd_laplace_log_density,
)

# two agents of unequal sizes (2 and 3 samples in R^3): the pooled index runs over 5 rows
Z_PCA = [np.array([[1.0, 0.5, -0.2], [0.3, -1.2, 0.4]]),
         np.array([[-0.6, 0.2, 1.1], [0.9, 0.9, 0.1], [0.2, -0.4, -0.7]])]


def fisher_yates(stream, n, k):
    """k of range(n) by the partial Fisher-Yates shuffle, one integers(j, n) per element."""
    perm = list(range(n))
    for j in range(k):
        r = int(stream.integers(j, n))
        perm[j], perm[r] = perm[r], perm[j]
    return perm[:k]


def test_dp_pgd_three_steps_by_hand_with_a_schedule_a_batch_clipping_and_noise():
    """DP-PGD (Han et al. (2024) section 5.1, with the step size and the descent sign): w_{t+1} =
    y / ||y||, y = w_t - eta_t zeta_t, zeta_t = (1/b) sum_{k in B_t} clip_tau(egrad f_k(w_t)) +
    sigma g_t, egrad f_k(w) = -2 (z_k^T w) z_k (c_i = 1), clip_tau(v) = v min(1, tau / ||v||). The
    step sizes (0.3, 0.1, 0.2) differ at every step (an eta_{t-1} would read 0.2 at t = 0), b = 3
    of n = 5 samples, sigma = 0.4 and tau = 0.9 (which clips some gradients and keeps others:
    asserted). Draws: step t reads agent 0's stream of round t, the batch then 3 normals."""
    P = SpherePCA(Z_PCA)
    rows = np.concatenate(Z_PCA)
    x0 = np.array([0.6, 0.0, 0.8])
    etas, b, sigma, tau, seed = [0.3, 0.1, 0.2], 3, 0.4, 0.9, 21
    key = run_key(np.random.default_rng(seed))
    w, want, clipped, kept = x0, [x0], 0, 0
    for t, eta in enumerate(etas):
        stream = agent_stream(key, t, 0)
        g = np.zeros(3)
        for k in fisher_yates(stream, 5, b):
            e = -2.0 * (rows[k] @ w) * rows[k]
            ne = math.sqrt(e @ e)
            if ne > tau:
                e, clipped = e * (tau / ne), clipped + 1
            else:
                kept += 1
            g = g + e
        zeta = g / b + sigma * stream.standard_normal(3)
        y = w - eta * zeta
        w = y / math.sqrt(y @ y)
        want.append(w)
    assert clipped > 0 and kept > 0
    r = dp_pgd(P, x0, etas, 3, b, sigma, np.random.default_rng(seed), tau=tau, record_every=2, keep_iterates=True)
    np.testing.assert_allclose(r.x, want[3], rtol=0, atol=1e-14)
    assert r.history.rounds == [0, 2, 3]
    for got, t in zip(r.history.iterates, (0, 2, 3)):
        np.testing.assert_allclose(got, want[t], rtol=0, atol=1e-14)
    # the event of the paper's accounting: T steps, b of n without replacement, the clipped batch
    # mean's replace-one sensitivity 2 tau / b, so the Gaussian's noise multiplier sigma b / (2 tau)
    assert r.event == SelfComposed(SampledWithoutReplacement(5, 3, Gaussian(0.4 * 3 / (2 * 0.9))), 3)
    assert r.info == dict(T=3, b=3, sigma=0.4, tau=0.9, privacy="record-level, replace-one")


def test_dp_pgd_fixed_point_vanishing_step_and_setting_edges():
    """At a point orthogonal to every sample each egrad -2 (z^T w) z is 0, so without noise y = w
    and DP-PGD stays there (||y|| = 1 exactly: not the vanished step). A gradient equal to w / eta
    sends y = w - eta zeta to the origin, where no projection exists: refused. b = 1 is a batch,
    b = 0 is not; sigma = 0 is taken, sigma < 0, NaN and inf are refused."""
    Z = [np.array([[0.0, 1.0, 0.5], [0.0, -0.3, 2.0]])]
    P = SpherePCA(Z)
    x0 = np.array([1.0, 0.0, 0.0])
    r = dp_pgd(P, x0, 0.5, 2, 1, 0.0, np.random.default_rng(0))
    np.testing.assert_array_equal(r.x, x0)

    class Pull(SpherePCA):
        """egrad f_ij(w) = 2 w: with eta = 0.5, w - eta zeta = 0 exactly."""

        def egrad_ij(self, x, i, j):
            return 2.0 * x

    with pytest.raises(ValueError, match=r"^dp_pgd: the projected step vanished at iteration 0 \(w - eta zeta = 0\)$"):
        dp_pgd(Pull(Z), x0, 0.5, 1, 2, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^dp_pgd: b must be in \[1, 2\]"):
        dp_pgd(P, x0, 0.5, 1, 0, 0.0, np.random.default_rng(0))
    for bad in (-0.5, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"^dp_pgd: sigma must be finite and >= 0"):
            dp_pgd(P, x0, 0.5, 1, 1, bad, np.random.default_rng(0))


def spd_log_density(lam, sigma):
    """log of exp(-||lambda|| / sigma) sinh(|lambda_1 - lambda_2| / 2) (n = 2), directly."""
    return -math.hypot(lam[0], lam[1]) / sigma + math.log(math.sinh(abs(lam[0] - lam[1]) / 2.0))


def test_dp_frechet_mean_replayed_by_hand_on_diagonal_data():
    """DP-FM on SPD(2) with commuting data: the Frechet mean of diagonal matrices diag(a_k, b_k) is
    diag(geometric means) (the affine-invariant log map at diagonal points is entrywise); the
    output is W^{1/2} U diag(e^lambda) U^T W^{1/2} with U the sign-fixed Q of the QR of 2x2 normals
    (Mezzadri 2007) and lambda the random-walk Metropolis chain of 40 steps on exp(-||l|| / sigma)
    sinh(|l_1 - l_2| / 2): start sigma (-1e-3, 1e-3), proposal step 2.4 sigma / sqrt 2, per step 2
    normals then one uniform, accepted when log u < log-ratio. sigma = 2 D / (n eps) with D = 0.8,
    n = 5 (agents of 2 and 3 points), eps = 2: 0.16 (neither D nor eps is 1)."""
    diag = [(1.0, 2.0), (3.0, 0.5), (2.0, 2.0), (0.5, 4.0), (1.5, 1.0)]
    pts = np.array([np.diag(d) for d in diag])
    P = SPDFrechetMean([pts[:2], pts[2:]])
    W = np.diag(np.exp(np.log(np.array(diag)).mean(axis=0)))
    sigma, n_steps, seed = 2 * 0.8 / (5 * 2.0), 40, 9
    stream = agent_stream(run_key(np.random.default_rng(seed)), 0, 0)
    Q, R = np.linalg.qr(stream.standard_normal((2, 2)))
    U = Q @ np.diag(np.sign(np.diag(R)))
    lam = np.array([-1e-3, 1e-3]) * sigma
    lp, step, accepted = spd_log_density(lam, sigma), 2.4 * sigma / math.sqrt(2.0), 0
    for _ in range(n_steps):
        prop = lam + step * stream.standard_normal(2)
        lq = spd_log_density(prop, sigma)
        if math.log(stream.random()) < lq - lp:
            lam, lp, accepted = prop, lq, accepted + 1
    assert 0 < accepted < n_steps
    Wh = np.sqrt(W)  # W is diagonal
    want = Wh @ U @ np.diag(np.exp(lam)) @ U.T @ Wh
    r = dp_frechet_mean(P, eps=2.0, D=0.8, rng=np.random.default_rng(seed), n_steps=n_steps)
    np.testing.assert_allclose(r.info["W_hat"], W, rtol=1e-10, atol=0)
    np.testing.assert_allclose(r.x, want, rtol=1e-9, atol=0)
    assert r.info["Delta"] == pytest.approx(2 * 0.8 / 5, rel=1e-15, abs=0)
    assert r.info["sigma"] == pytest.approx(0.16, rel=1e-15, abs=0)
    assert r.info["eps"] == 2.0
    assert r.event == EpsilonDelta(2.0, 0.0)


def test_dp_frechet_mean_uses_a_given_w_hat_and_refuses_other_manifolds():
    """A given W_hat is the centre of the release (no Frechet mean computed): the run centred at I
    releases Z = U diag(e^lambda) U^T itself, and with the same draws the run centred at W_hat =
    [[2, 1], [1, 2]] releases S Z S, S = W_hat^{1/2} = [[c, s], [s, c]], c = (sqrt 3 + 1) / 2,
    s = (sqrt 3 - 1) / 2 (eigenvalues 3 and 1 on (1, 1) and (1, -1)): a W_hat that is not
    diagonal, so its square root is not entrywise. DP-FM is defined on SPD only."""
    pts = np.array([np.eye(2), np.diag([2.0, 0.5])])
    P = SPDFrechetMean([pts[:1], pts[1:]])
    W = np.array([[2.0, 1.0], [1.0, 2.0]])
    a = dp_frechet_mean(P, eps=2.0, D=0.5, rng=np.random.default_rng(3), n_steps=30, W_hat=np.eye(2))
    b = dp_frechet_mean(P, eps=2.0, D=0.5, rng=np.random.default_rng(3), n_steps=30, W_hat=W)
    c, s = (math.sqrt(3.0) + 1) / 2, (math.sqrt(3.0) - 1) / 2
    S = np.array([[c, s], [s, c]])
    np.testing.assert_allclose(S @ S, W, rtol=1e-15, atol=0)
    np.testing.assert_allclose(b.x, S @ a.x @ S, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(b.info["W_hat"], W)
    with pytest.raises(ValueError, match=r"^dp_frechet_mean: DP-FM samples the Riemannian Laplace law on SPD, got Sphere$"):
        dp_frechet_mean(SpherePCA(Z_PCA), eps=1.0, D=1.0, rng=np.random.default_rng(0))


def test_the_laplace_law_is_refused_at_sigma_max_itself():
    """The Riemannian Laplace law on SPD(2) exists only for sigma < sqrt 2 (laplace_sigma_max): at
    sigma equal to the bound both the sampler and DP-FM refuse. DP-FM's sigma = 2 D / (n eps) is
    the bound exactly with n = 2, eps = 1 and D = laplace_sigma_max(2) (2 D / 2 is D in floats)."""
    smax = laplace_sigma_max(2)
    assert smax == pytest.approx(math.sqrt(2.0), rel=1e-15, abs=0)
    with pytest.raises(ValueError, match=r"^sample_spd_laplace_eigenvalues: sigma = 1\.41421 is not below 1\.41421"):
        sample_spd_laplace_eigenvalues(2, smax, np.random.default_rng(0), n_steps=5)
    P = SPDFrechetMean([np.array([np.eye(2)]), np.array([np.eye(2)])])
    with pytest.raises(ValueError, match=r"^dp_frechet_mean: sigma = 2 D / \(n eps\) = 1\.41421 .* is not below 1\.41421"):
        dp_frechet_mean(P, eps=1.0, D=smax, rng=np.random.default_rng(0), W_hat=np.eye(2))


def test_laplace_log_density_at_a_gap_of_two():
    """Eigenvalues 2 apart: the sinh factor is sinh(1) (a gap of exactly 2 is no tie), so the log
    density at (2, 0) is -2 / sigma + log sinh 1."""
    assert spd_laplace_log_density([2.0, 0.0], 0.5) == pytest.approx(-4.0 + math.log(math.sinh(1.0)), rel=1e-15, abs=0)
