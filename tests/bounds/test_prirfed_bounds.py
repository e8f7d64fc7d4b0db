"""Theorems 5.1-5.6 of 000 as code (prirfed.reference.bounds.prirfed_bounds).

Three kinds of tests:
- closed forms: each bound evaluated by hand on simple numbers (fractions worked out in the
  docstrings), and each precondition refused with a ValueError naming it;
- Monte Carlo: the algorithm each theorem is about (the reference PriRFed trainer with exactly the
  theorem's settings), run R times with fixed seeds; the left-hand side is estimated by the mean
  over runs and its one-sided upper confidence bound mean + 3.09 * s / sqrt(R) (normal
  approximation, level 1 - 1e-3) must not exceed the bound. The seeds are fixed, so the tests are
  deterministic; with fresh seeds such a test would fail only if the true mean lay within about
  3 standard errors of the bound (the margins reached are quoted in the notes);
- errata: the corrected statements (leads 9, 10, 12 of ERRATA_LEADS.md) with the instance that
  shows the printed one fails.
"""

import math

import numpy as np
import pytest

from prirfed.reference.bounds.prirfed_bounds import (
    theorem_5_1_bound,
    theorem_5_2_bound,
    theorem_5_2_step_sizes_ok,
    theorem_5_3_bound,
    theorem_5_4_bound,
    theorem_5_5_bound,
    theorem_5_6_bound,
    theorem_5_6_m,
)
from prirfed.reference.manifolds import Lorentz, SPD, zeta
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.trainers.prirfed import prirfed

Z_UCB = 3.090232306167813  # Phi^{-1}(1 - 1e-3)


def ucb(samples):
    s = np.asarray(samples, dtype=np.float64)
    return float(s.mean() + Z_UCB * s.std(ddof=1) / math.sqrt(s.size))


# ------------------------------------------------------------------------------ instances
def sphere_instance(seed=0, N=3, n_i=5, D=4, scale=0.5):
    """Sphere PCA with a clear eigengap; rows scaled so that L_g = 2 vartheta is of order 1."""
    rng = np.random.default_rng(seed)
    axes = np.array([2.0] + [1.0] * (D - 1))
    Z = [rng.standard_normal((n_i, D)) * axes * scale for _ in range(N)]
    return SpherePCA(Z)


def near(P, angle, seed=1):
    """A point at the given angle from the optimum x*."""
    rng = np.random.default_rng(seed)
    xs = P.x_star
    w = rng.standard_normal(xs.size)
    w -= (w @ xs) * xs
    w /= np.linalg.norm(w)
    return math.cos(angle) * xs + math.sin(angle) * w


def spd_instance(seed=0, N=3, n_i=3, radius=0.3):
    """SPD(2) Fréchet mean, f_ij = (1/2) dist^2(., Z_ij), data within `radius` of the identity."""
    rng = np.random.default_rng(seed)
    Z = []
    for _ in range(N):
        mats = []
        for _ in range(n_i):
            S = rng.standard_normal((2, 2))
            S = 0.5 * (S + S.T)
            S *= radius * rng.uniform(0.2, 1.0) / np.linalg.norm(S)
            w, V = np.linalg.eigh(S)
            mats.append((V * np.exp(w)) @ V.T)
        Z.append(np.array(mats))
    return SPDFrechetMean(Z, c=0.5)


# ------------------------------------------------------------------------------ closed forms
def test_theorem_5_1_closed_form_and_preconditions():
    """gap0 = 1, T = 10, alpha = 0.1, L_g = 2, d = 3, N_i = (5, 5), sigma = 0.1:
    2/(10*0.1) + 3*2*0.1*(25*0.01 + 25*0.01)/100 = 2 + 0.6*0.005 = 2.003."""
    assert theorem_5_1_bound(1.0, 10, 0.1, 2.0, 3, [5, 5], 0.1, s=2) == pytest.approx(2.003, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="s_t = N"):
        theorem_5_1_bound(1.0, 10, 0.1, 2.0, 3, [5, 5], 0.1, s=1)
    with pytest.raises(ValueError, match="K = 1"):
        theorem_5_1_bound(1.0, 10, 0.1, 2.0, 3, [5, 5], 0.1, s=2, K=2)
    with pytest.raises(ValueError, match="b_i = N_i"):
        theorem_5_1_bound(1.0, 10, 0.1, 2.0, 3, [5, 5], 0.1, s=2, b=[5, 4])
    with pytest.raises(ValueError, match=r"alpha <= 1/L_g"):
        theorem_5_1_bound(1.0, 10, 0.6, 2.0, 3, [5, 5], 0.1, s=2)
    with pytest.raises(ValueError, match="sigma"):
        theorem_5_1_bound(1.0, 10, 0.1, 2.0, 3, [5, 5], [0.1, -1.0], s=2)


def test_theorem_5_2_step_sizes_and_bound_closed_form():
    """(5.3) for alpha_t = a/(t+1)^p: p in (1/2, 1] and L_g a <= 2 delta. Finite-T bound (A.3) with
    alphas = (0.1, 0.05), L_g = 2, delta = 1/2, gap0 = 1, d = 1, one agent sigma = 1:
    1/(0.5*0.15) + 2*1*0.0125/(2*0.5*0.15) * 1 = 13.333... + 0.1666... = 13.5."""
    assert theorem_5_2_step_sizes_ok(0.5, 1.0, 2.0, 0.5)
    assert theorem_5_2_step_sizes_ok(0.5, 0.51, 2.0, 0.5)
    assert not theorem_5_2_step_sizes_ok(0.5, 0.5, 2.0, 0.5)  # sum alpha_t^2 diverges
    assert not theorem_5_2_step_sizes_ok(0.5, 1.2, 2.0, 0.5)  # sum alpha_t converges
    assert not theorem_5_2_step_sizes_ok(0.6, 1.0, 2.0, 0.5)  # L_g a > 2 delta
    with pytest.raises(ValueError, match="delta"):
        theorem_5_2_step_sizes_ok(0.5, 1.0, 2.0, 1.0)
    assert theorem_5_2_bound(1.0, [0.1, 0.05], 2.0, 0.5, 1, [4], 1.0, s=1) == pytest.approx(13.5, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="2 delta"):
        theorem_5_2_bound(1.0, [0.6, 0.05], 2.0, 0.5, 1, [4], 1.0, s=1)
    # restated conclusion: under (5.3) the bound tends to 0 (here like 1/log T for p = 1)
    vals = [theorem_5_2_bound(1.0, 0.5 / np.arange(1, T + 1), 2.0, 0.5, 3, [4, 4], 0.3, s=2) for T in (10, 10**3, 10**6)]
    assert vals[0] > vals[1] > vals[2] and vals[2] < 0.25 * vals[0]


def test_theorem_5_3_closed_form_and_preconditions():
    """kappa_min = 0 (zeta = 1), dist0 = 1, T = 3, alpha = 0.25, L_g = 2, d = 2, N_i = (1, 1),
    sigma = 1: 1/(2*0.25*3) + 3*(6+2)*2/(16*2*3) * (1+1)/4 = 2/3 + 0.5*0.5 = 11/12."""
    assert theorem_5_3_bound(1.0, 3, 0.25, 2.0, 2, [1, 1], 1.0, 0.0, 5.0, s=2) == pytest.approx(11 / 12, rel=1e-14, abs=0)
    z = zeta(-0.5, 2.0)  # the bound uses zeta(kappa_min, M) of (5.1)
    expected = z / (2 * 0.25 * (z + 2)) + 3 * (6 * z + 2) * 2 / (16 * 2 * (z + 2)) * 0.5
    assert theorem_5_3_bound(1.0, 3, 0.25, 2.0, 2, [1, 1], 1.0, -0.5, 2.0, s=2) == pytest.approx(expected, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"1/\(2 L_g\)"):
        theorem_5_3_bound(1.0, 3, 0.3, 2.0, 2, [1, 1], 1.0, 0.0, 5.0, s=2)
    with pytest.raises(ValueError, match="s_t = N"):
        theorem_5_3_bound(1.0, 3, 0.25, 2.0, 2, [1, 1], 1.0, 0.0, 5.0, s=1)


def test_theorem_5_4_closed_form_and_preconditions():
    """gap0 = 1, T = 2, alpha = 0.5, L_g = 1, mu = 0.5, d = 2, v = 1, N = 3 agents of 4 samples,
    S = 1, sigma = 1: P = 1 - 0.5 + 0.125 = 0.625, kappa_0 = 0.5*2/(1*1.5) = 2/3, kappa_1 =
    0.5/1.5 = 1/3 (printed: v kappa_0 = 2/3); (N-S)/(S(N-1)) = 1.
    corrected: 0.390625 + 0.609375*(2/3 + 1/3) = 1; printed: 0.390625 + 0.609375*(4/3) = 1.203125."""
    args = (1.0, 2, 0.5, 1.0, 0.5, 2, 1.0, [4, 4, 4], 1.0)
    assert theorem_5_4_bound(*args, s=1) == pytest.approx(1.0, rel=1e-14, abs=0)
    assert theorem_5_4_bound(*args, s=1, printed_kappa_1=True) == pytest.approx(1.203125, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="S < N"):
        theorem_5_4_bound(*args, s=3)
    with pytest.raises(ValueError, match="N_i = N_j"):
        theorem_5_4_bound(1.0, 2, 0.5, 1.0, 0.5, 2, 1.0, [4, 4, 5], 1.0, s=1)
    with pytest.raises(ValueError, match="1/L_g"):
        theorem_5_4_bound(1.0, 2, 1.5, 1.0, 0.5, 2, 1.0, [4, 4, 4], 1.0, s=1)
    with pytest.raises(ValueError, match="K = 1"):
        theorem_5_4_bound(*args, s=1, K=2)


def test_theorem_5_5_closed_form_and_preconditions():
    """K = 2, beta = 2, alpha = 0.25 (< (2 - 1)/2 = 0.5): c_1 = 1.5, delta_min = 0.25*(1 - 0.75)
    = 1/16, q_0 = 0.5*(1 + 3)/(2*0.5) = 2 (L_g = 1, zeta = 1), q = 1 + 2*1 = 3 (L_f = 1, d = 2,
    sigma = 1); gap0 = 1, T = 4: 1/(2*4/16) + 6 = 8."""
    assert theorem_5_5_bound(1.0, 4, 2, 0.25, 2.0, 1.0, 1.0, 2, [0.5, 1.0], 0.0, 1.0) == pytest.approx(8.0, rel=1e-14, abs=0)
    # beta = 3 (2 (beta - c_1) = 2.5, not 1, so q_0's denominator is seen): c_1 = 1.75, delta_min =
    # 0.25 (1 - 1.75/3) = 5/48, q_0 = 0.25*3*(1 + 3.5)/2.5 = 1.35; 1/(8 * 5/48) + 1.35*3 = 1.2 + 4.05
    assert theorem_5_5_bound(1.0, 4, 2, 0.25, 3.0, 1.0, 1.0, 2, [0.5, 1.0], 0.0, 1.0) == pytest.approx(5.25, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="beta\\^\\(1/\\(K-1\\)\\) - 1\\)/beta"):
        theorem_5_5_bound(1.0, 4, 2, 0.5, 2.0, 1.0, 1.0, 2, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="beta > 1"):
        theorem_5_5_bound(1.0, 4, 2, 0.01, 1.0, 1.0, 1.0, 2, 1.0, 0.0, 1.0)
    # alpha one float below its bound (beta = 2, K = 2: 0.5 - 2^-54): admissible, but 1 + alpha beta
    # rounds to beta, so delta_min = alpha (1 - c_1/beta) is 0 and the bound (gap0 / (K T delta_min))
    # is not finite: refused, naming delta_min
    with pytest.raises(ValueError, match="delta_min = 0.0 is not > 0"):
        theorem_5_5_bound(1.0, 4, 2, math.nextafter(0.5, 0.0), 2.0, 1.0, 1.0, 2, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="K > 1"):
        theorem_5_5_bound(1.0, 4, 1, 0.01, 2.0, 1.0, 1.0, 2, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="s_t = 1"):
        theorem_5_5_bound(1.0, 4, 2, 0.25, 2.0, 1.0, 1.0, 2, 1.0, 0.0, 1.0, s=2)


def test_theorem_5_6_closed_form_and_preconditions():
    """N = 8, zeta = 1: m = floor(80/3) = 26; alpha <= 1/(10*1*4) = 0.025; c > 80/78.
    c = 2, gap0 = 1, K = 2, T = 1, d = 1, sigma = 1: 2*1/(2*2*1) + (1/4 + 1/8)/100 = 0.50375."""
    assert theorem_5_6_m(8, 0.0, 1.0) == 26
    assert theorem_5_6_m(8, -1.0, 3.0) == math.floor(80 / (3 * math.sqrt(3 / math.tanh(3))))
    assert theorem_5_6_bound(1.0, 1, 2, 26, 0.025, 2.0, 1.0, 8, 1, 1.0, 0.0, 1.0) == pytest.approx(0.50375, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="m = floor"):
        theorem_5_6_bound(1.0, 1, 2, 25, 0.025, 2.0, 1.0, 8, 1, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="alpha <= 1/\\(10 L_g"):
        theorem_5_6_bound(1.0, 1, 2, 26, 0.03, 2.0, 1.0, 8, 1, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="c > 10 N"):
        theorem_5_6_bound(1.0, 1, 2, 26, 0.025, 1.0, 1.0, 8, 1, 1.0, 0.0, 1.0)
    # N = 2, zeta(-1, 30) = 30 (to 1e-20): m = floor(20/(3 sqrt(30))) = 1, refused as m > 1 fails
    with pytest.raises(ValueError, match="m > 1"):
        theorem_5_6_bound(1.0, 1, 2, 1, 1e-3, 100.0, 1.0, 2, 1, 1.0, -1.0, 30.0)


# ------------------------------------------------------------------------------ Monte Carlo
R = 100  # runs per Monte Carlo estimate


def test_theorem_5_1_monte_carlo_sphere_pca():
    """Thm 5.1 on sphere PCA (N = 3, N_i = 5, d = 3), s = N, K = 1, full batch, alpha = 1/L_g,
    sigma = 0.05, T = 5, no clipping (tau = inf, so eta = grad f_i + eps as the proof assumes).
    The proof bounds the average over t < T of E||grad f(x^(t))||^2 (hence the minimum): its
    upper confidence bound (level 1 - 1e-3, see the module docstring) must not exceed (5.2)."""
    P = sphere_instance()
    x0, T, sig = near(P, 1.0), 5, 0.05
    alpha = 1.0 / P.L_g
    vals = []
    for r in range(R):
        res = prirfed(P, x0, T, P.N, alpha, np.random.default_rng(1000 + r), sigma=sig, record_every=1)
        assert res.history.rounds == list(range(T + 1))
        vals.append(np.mean(np.array(res.history.grad_norm[:T]) ** 2))
    B = theorem_5_1_bound(P.f(x0) - P.f(P.x_star), T, alpha, P.L_g, P.d, P.N_i, sig, s=P.N)
    assert ucb(vals) <= B


def test_theorem_5_2_monte_carlo_decaying_steps():
    """Thm 5.2 (finite-T form (A.3)) on the same instance with alpha_t = a/(t+1), L_g a = 2 delta,
    delta = 0.9 (conditions (5.3) hold), T = 8: the weighted average of E||grad f(x^(t))||^2 with
    weights alpha_t / sum alpha has upper confidence bound (level 1 - 1e-3) below the bound."""
    P = sphere_instance()
    x0, T, sig, delta = near(P, 1.0), 8, 0.05, 0.9
    a = 2 * delta / P.L_g
    assert theorem_5_2_step_sizes_ok(a, 1.0, P.L_g, delta)
    alphas = a / np.arange(1, T + 1)
    w = alphas / alphas.sum()
    vals = []
    for r in range(R):
        res = prirfed(P, x0, T, P.N, alphas, np.random.default_rng(3000 + r), sigma=sig, record_every=1)
        assert res.history.rounds == list(range(T + 1))
        vals.append(float(w @ (np.array(res.history.grad_norm[:T]) ** 2)))
    B = theorem_5_2_bound(P.f(x0) - P.f(P.x_star), alphas, P.L_g, delta, P.d, P.N_i, sig, s=P.N)
    assert ucb(vals) <= B


def test_theorem_5_3_monte_carlo_spd_frechet_mean():
    """Thm 5.3 on the geodesically convex SPD(2) Fréchet mean (c = 1/2, d = 3, N = 3, N_i = 3,
    data within 0.3 of I), x^(0) at distance 0.4 from x*, alpha = 1/(2 L_g), sigma = 0.05, T = 5.
    W = ball of radius 0.6 around x* (diameter M = 1.2): every iterate of every run is checked to
    lie in it, so dist(X, Z_ij) <= 0.6 + max_ij dist(x*, Z_ij) =: D there and L_g = L_g(D) of the
    problem (2 c zeta(-1/2, D)). E[f(x^(T)) - f*] has upper confidence bound (level 1 - 1e-3)
    below (5.4) with zeta = zeta(-1/2, 1.2)."""
    Q = spd_instance()
    MS, Xs = Q.manifold, Q.x_star
    u = MS.random_tangent(Xs, np.random.default_rng(5))
    x0 = MS.exp(Xs, 0.4 * u / MS.norm(Xs, u))
    r_W = 0.6
    D = r_W + max(MS.dist(Xs, Q.Z[i][j]) for i in range(Q.N) for j in range(Q.N_i[i]))
    L_g = Q.L_g(D)
    alpha, sig, T = 1.0 / (2.0 * L_g), 0.05, 5
    fs = Q.f(Xs)
    vals = []
    for r in range(R):
        res = prirfed(Q, x0, T, Q.N, alpha, np.random.default_rng(2000 + r), sigma=sig, keep_iterates=True, record_every=1)
        assert max(MS.dist(X, Xs) for X in res.history.iterates) <= r_W
        vals.append(Q.f(res.x) - fs)
    B = theorem_5_3_bound(MS.dist(x0, Xs), T, alpha, L_g, 3, Q.N_i, sig, MS.curvature_bounds[0], 2 * r_W, s=Q.N)
    assert ucb(vals) <= B


def sphere_rpl_constants(P, theta0):
    """mu and v of Assumption 5.4 for sphere PCA on the cap {angle(x, +-x*) <= theta0}.

    RPL: with x = cos(t) v1 + sin(t) w, f - f* = sin^2(t) g(w), g(w) = sum_k w_k^2 (l1 - l_k) >=
    l1 - l2 and ||grad f||^2 >= 4 sin^2 cos^2 g(w)^2 (theorem_000_5_4.md), so
    mu = 2 cos^2(theta0) (l1 - l2). Divergence: grad f_i - grad f = -2 P_x (A_i - A) x, so
    v_i = 4 ||A_i - A||_2^2 bounds it everywhere; v = mean of v_i."""
    lam = P.eigenvalues()
    mu = 2 * math.cos(theta0) ** 2 * (lam[0] - lam[1])
    v = float(np.mean([4 * np.linalg.norm(P.covariance_i(i) - P.A, 2) ** 2 for i in range(P.N)]))
    return mu, v


def test_sphere_rpl_constants_are_valid():
    """The mu and v used for Thm 5.4 hold at 2000 random points of the cap (checked directly)."""
    P = sphere_instance(N=4, n_i=6)
    theta0 = 0.6
    mu, v = sphere_rpl_constants(P, theta0)
    rng = np.random.default_rng(7)
    fs = P.f(P.x_star)
    for _ in range(2000):
        x = near(P, theta0 * math.sqrt(rng.uniform()), seed=int(rng.integers(1 << 30)))
        g = P.rgrad(x)
        assert P.f(x) - fs <= (g @ g) / (2 * mu) * (1 + 1e-12) + 1e-15
        for i in range(P.N):
            gi = P.rgrad_i(x, i)
            assert (gi - g) @ (gi - g) <= 4 * np.linalg.norm(P.covariance_i(i) - P.A, 2) ** 2 * (1 + 1e-12)


def test_theorem_5_4_monte_carlo_sphere_pca_rpl():
    """Thm 5.4 on sphere PCA near its optimum: N = 4 agents of 6 samples, S = 2, K = 1, full batch,
    alpha = 1/L_g, sigma = 0.05, T = 6, x^(0) at angle 0.3 from x*; RPL on the cap of angle 0.6
    (every iterate of every run is checked to stay in it), mu and v from sphere_rpl_constants.
    E f(x^(T)) - f* has upper confidence bound (level 1 - 1e-3) below the corrected (5.5)."""
    P = sphere_instance(N=4, n_i=6)
    theta0, T, sig, S = 0.6, 6, 0.05, 2
    mu, v = sphere_rpl_constants(P, theta0)
    x0 = near(P, 0.3)
    alpha = 1.0 / P.L_g
    fs = P.f(P.x_star)
    vals = []
    for r in range(R):
        res = prirfed(P, x0, T, S, alpha, np.random.default_rng(4000 + r), sigma=sig, keep_iterates=True, record_every=1)
        assert max(P.angle_to_optimum(x) for x in res.history.iterates) <= theta0
        vals.append(P.f(res.x) - fs)
    B = theorem_5_4_bound(P.f(x0) - fs, T, alpha, P.L_g, mu, P.d, v, P.N_i, sig, s=S)
    assert ucb(vals) <= B


def test_theorem_5_5_monte_carlo_sphere_pca_option_2():
    """Thm 5.5 on sphere PCA (N = 3, N_i = 5, d = 3): s = 1, K = 3, full-batch DP-RSGD local steps,
    Option 2, beta = 2, alpha = 0.9 (sqrt(2) - 1)/2, sigma = 0.05, T = 6, L_f and L_g of the problem
    (zeta = 1 on the sphere). E||grad f(x~)||^2 of the output has upper confidence bound (level
    1 - 1e-3) below the bound."""
    P = sphere_instance()
    x0, T, K, beta, sig = near(P, 1.0), 6, 3, 2.0, 0.05
    alpha = 0.9 * (math.sqrt(beta) - 1) / beta
    vals = []
    for r in range(R):
        res = prirfed(P, x0, T, 1, alpha, np.random.default_rng(5000 + r), K=K, sigma=sig, option=2)
        g = P.rgrad(res.x)
        vals.append(g @ g)
    B = theorem_5_5_bound(P.f(x0) - P.f(P.x_star), T, K, alpha, beta, P.L_g, P.L_f, P.d, sig, 0.0, math.pi)
    assert ucb(vals) <= B


# ------------------------------------------------------------------------------ errata (leads 9, 10, 12)
def test_lead_9_lemma_A2_zeta_needs_the_same_diameter_above_and_below():
    """Lemma A.2 of 000 prints zeta = sqrt|k| D_W / tanh(sqrt|k| D_M). On the hyperbolic plane
    (k = -1, D_M = infinity, tanh -> 1) with D_W = 0.5 that is 0.5 < 1, and a right-angled
    triangle with legs 0.2 at the origin violates l2^2 <= zeta l1^2 + l3^2 - 2 l1 l3 cos A;
    zeta(-1, D_W) = D_W / tanh(D_W) (ZS16 Lemma 5, (5.1)) satisfies it."""
    H = Lorentz(2)
    o = H.origin()
    e1, e2 = H.tangent_basis(o)
    l1 = l3 = 0.2
    x2, x3 = H.exp(o, l1 * e1), H.exp(o, l3 * e2)
    l2 = H.dist(x2, x3)
    cosA = H.inner(o, H.log(o, x2), H.log(o, x3)) / (l1 * l3)
    assert abs(cosA) < 1e-12
    D_W = 0.5
    printed = math.sqrt(1.0) * D_W / 1.0  # tanh(sqrt|k| D_M) = 1 for D_M = infinity
    assert l2**2 > printed * l1**2 + l3**2 - 2 * l1 * l3 * cosA + 1e-3
    assert l2**2 <= zeta(-1.0, D_W) * l1**2 + l3**2 - 2 * l1 * l3 * cosA


def test_lead_10_initial_gap_is_bounded_by_half_L_g_dist_squared_not_L_g_dist():
    """Proof of Thm 5.3, after (A.9): Delta^0 <= L_g dist(x0, x*) is printed. On SPD(1) (flat,
    zeta = 1) with one sample Z = 1, f = (1/2) dist^2(., Z): L_g = 1, x* = 1 and x0 = e^3 give
    Delta^0 = 4.5 > L_g dist = 3. What holds (and suffices, as alpha <= 1/(2 L_g)) is
    Delta^0 <= (L_g/2) dist^2 <= dist^2/(2 alpha); checked on SPD(1) and on the SPD(2) instance of
    the Monte Carlo test at 50 points of W."""
    P = SPDFrechetMean([np.array([[[1.0]]])], c=0.5)
    x0 = np.array([[math.exp(3.0)]])
    L_g = P.L_g(3.0)
    gap0, d0 = P.f(x0) - P.f(np.array([[1.0]])), P.manifold.dist(x0, np.array([[1.0]]))
    assert L_g == pytest.approx(1.0, rel=1e-14, abs=0) and gap0 == pytest.approx(4.5, rel=1e-14, abs=0)
    assert d0 == pytest.approx(3.0, rel=1e-14, abs=0)
    assert gap0 > L_g * d0
    assert gap0 <= 0.5 * L_g * d0**2 * (1 + 1e-12)
    Q = spd_instance()
    MS, Xs = Q.manifold, Q.x_star
    D = 0.6 + max(MS.dist(Xs, Q.Z[i][j]) for i in range(Q.N) for j in range(Q.N_i[i]))
    L_g, fs = Q.L_g(D), Q.f(Xs)
    rng = np.random.default_rng(11)
    for _ in range(50):
        u = MS.random_tangent(Xs, rng)
        x = MS.exp(Xs, rng.uniform(0, 0.6) * u / MS.norm(Xs, u))
        assert Q.f(x) - fs <= 0.5 * L_g * MS.dist(x, Xs) ** 2 * (1 + 1e-9)


def test_lead_12_printed_rpl_with_f_i_fails_at_the_optimum():
    """Assumption 5.4 prints f_i(x) - f(x*) <= ||grad f(x)||^2 / (2 mu). At x = x* the right side is
    0, so it forces f_i(x*) <= f(x*) for every i, and (as f = sum p_i f_i) f_i(x*) = f(x*): false
    for heterogeneous agents. On the sphere-PCA instance of the Thm 5.4 test some agent has
    f_i(x*) - f(x*) > 0.05 while ||grad f(x*)|| ~ 0. The proof (A.14) uses f(x) - f* <= ||grad f||^2/(2 mu)
    (the form 001 Theorem 4 writes with tau = 1/(2 mu)), which test_sphere_rpl_constants_are_valid checks."""
    P = sphere_instance(N=4, n_i=6)
    xs = P.x_star
    g = P.rgrad(xs)
    assert g @ g < 1e-20
    assert max(P.f_i(xs, i) - P.f(xs) for i in range(P.N)) > 0.05


def test_lead_8_smoothness_upper_bound_with_the_inner_product_at_x():
    """Definition 2.2 of 000 prints <grad f(x), Exp_x^{-1}(y)>_y: both vectors lie in T_x, so the
    metric is the one at x (ZS16; the proofs (A.1), (A.10), (A.16), (B.3) use it so). The x-form
    f(y) <= f(x) + <grad f(x), Log_x y>_x + (L_g/2) dist^2(x, y) holds at 200 random pairs of the
    ball W of radius 0.6 around x* of the SPD(2) instance (L_g = L_g(D) as in the Thm 5.3 test)."""
    Q = spd_instance()
    MS, Xs = Q.manifold, Q.x_star
    D = 0.6 + max(MS.dist(Xs, Q.Z[i][j]) for i in range(Q.N) for j in range(Q.N_i[i]))
    L_g = Q.L_g(D)
    rng = np.random.default_rng(13)

    def in_W():
        u = MS.random_tangent(Xs, rng)
        return MS.exp(Xs, rng.uniform(0, 0.3) * u / MS.norm(Xs, u))  # radius 0.3: pairs at distance <= 0.6

    for _ in range(200):
        x, y = in_W(), in_W()
        rhs = Q.f(x) + MS.inner(x, Q.rgrad(x), MS.log(x, y)) + 0.5 * L_g * MS.dist(x, y) ** 2
        assert Q.f(y) <= rhs + 1e-12


def test_theorem_5_6_monte_carlo_printed_constant_c_is_not_sufficient():
    """Thm 5.6 as printed, with c at its stated lower limit (c = 1.0001 * 10 N/(3 m)), fails.
    Sphere PCA with N = 2 agents holding the same 5 samples (f_i = f, so no client drift; zeta = 1),
    m = floor(10 N / 3) = 6, alpha = 1/(10 L_g N^(2/3)), K = 2, T = 5, sigma = 0.05, DP-RSVRG
    without clipping, Option 2, x^(0) at angle 0.3 from x*. The lower confidence bound
    mean - 3.09 s/sqrt(R) of E||grad f(x~)||^2 exceeds the printed bound (by a factor about 2.9):
    if the printed bound held, this would happen with probability <= 1e-3 (normal approximation);
    the seeds are fixed. The proof's c is N/(nu m) with the universal constant nu of ZJRS16
    Theorem 2, which 000 does not give (theorem_000_5_6.md)."""
    P0 = sphere_instance(N=1, n_i=5)
    P = SpherePCA([P0.Z[0]] * 2)
    N, K, T, sig = 2, 2, 5, 0.05
    m = theorem_5_6_m(N, 0.0, math.pi)
    assert m == 6
    alpha = 1.0 / (10.0 * P.L_g * N ** (2.0 / 3.0))
    c = 1.0001 * 10.0 * N / (3.0 * m)
    x0 = near(P, 0.3)
    vals = []
    for r in range(R):
        res = prirfed(P, x0, T, 1, alpha, np.random.default_rng(6000 + r), local="dp_rsvrg", K=K, m=m, sigma=sig,
                      option=2)
        g = P.rgrad(res.x)
        vals.append(g @ g)
    vals = np.asarray(vals)
    B = theorem_5_6_bound(P.f(x0) - P.f(P.x_star), T, K, m, alpha, c, P.L_g, N, P.d, sig, 0.0, math.pi)
    lcb = vals.mean() - Z_UCB * vals.std(ddof=1) / math.sqrt(R)
    assert lcb > 2.0 * B


def test_bounds_package_exports_every_bound_of_000_including_4_2_and_zeta():
    import prirfed.reference.bounds as B
    from prirfed.reference.accounting.paper import theorem_4_2
    from prirfed.reference.manifolds.base import zeta

    assert B.theorem_4_2 is theorem_4_2 and B.zeta is zeta
    for name in ("theorem_5_1_bound", "theorem_5_2_step_sizes_ok", "theorem_5_3_bound", "theorem_5_4_bound",
                 "theorem_5_5_bound", "theorem_5_6_bound", "theorem_1_sigma", "lemma_6_bound", "theorem_7_bound"):
        assert callable(getattr(B, name)), name
        assert name in dir(B)


def test_theorem_5_6_refuses_more_than_one_agent_per_round():
    """Theorem 5.6 is stated for s_t = 1: s = 2 is refused, naming the precondition (a mutant that
    dropped the check survived; the closed-form case above uses s = 1)."""
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: precondition s_t = 1 violated \(s = 2\)$"):
        theorem_5_6_bound(1.0, 1, 2, 26, 0.025, 2.0, 1.0, 8, 1, 1.0, 0.0, 1.0, s=2)


def test_theorem_5_4_refuses_a_minibatch():
    """Theorem 5.4 is stated for full-batch local steps (b_i = N_i): b = 2 of N_i = 4 is refused, b = 4
    (or none given) is the closed form of the test above (a mutant that dropped the check survived)."""
    args = (1.0, 2, 0.5, 1.0, 0.5, 2, 1.0, [4, 4, 4], 1.0)
    assert theorem_5_4_bound(*args, s=1, b=4) == pytest.approx(1.0, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"precondition b_i = N_i \(full batch\) violated \(b = 2, N_i = 4\)"):
        theorem_5_4_bound(*args, s=1, b=2)


def test_theorem_5_6_with_L_g_visible_and_theorem_5_2_refuses_each_bad_step():
    """Theorem 5.6 at L_g = 2 (alpha = 0.0125 = 1/(10 L_g N^(2/3)), N = 8, m = 26, c = 2, K = 2, T = 1,
    d = 1, sigma = 1, zeta = 1): c L_g / (N^(1/3) K T) gap0 + d sigma^2 / 100 (N^(-2/3) + 1/N)
    = 4/4 + 0.01 * 0.375 = 1.00375. Theorem 5.2's step sizes must all be positive and finite: one
    bad entry among good ones (0, -0.1, nan, inf) is refused."""
    assert theorem_5_6_bound(1.0, 1, 2, 26, 0.0125, 2.0, 2.0, 8, 1, 1.0, 0.0, 1.0) == pytest.approx(1.00375, rel=1e-14, abs=0)
    for bad in (0.0, -0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="step sizes must be a non-empty sequence of positive numbers"):
            theorem_5_2_bound(1.0, [0.1, bad], 2.0, 0.5, 1, [4], 1.0, s=1)
    with pytest.raises(ValueError, match="step sizes must be a non-empty sequence"):
        theorem_5_2_bound(1.0, [], 2.0, 0.5, 1, [4], 1.0, s=1)


def test_theorem_5_6_takes_zero_noise():
    """sigma = 0 (no privacy noise) is in Theorem 5.6's range: only the optimisation term is left,
    c L_g / (N^(1/3) K T) gap0 = 2 / (2 * 2) = 0.5 at the settings of the closed-form test."""
    assert theorem_5_6_bound(1.0, 1, 2, 26, 0.025, 2.0, 1.0, 8, 1, 0.0, 0.0, 1.0) == pytest.approx(0.5, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="sigma must be finite and >= 0"):
        theorem_5_6_bound(1.0, 1, 2, 26, 0.025, 2.0, 1.0, 8, 1, -1e-300, 0.0, 1.0)


# ------------------------------------------------------------------------------ every constant visible (issue 18)
# Two agents of unequal size and noise: p = (1/4, 3/4), sum_i p_i^2 sigma_i^2 = (1 * 0.04 + 9 * 0.01) / 16 = 0.008125
AGENTS = dict(N_i=[1, 3], sigma=[0.2, 0.1])
NOISE_SUM = 0.13 / 16


def zeta_hyperbolic(kappa_min, M):
    """zeta of (5.1) for kappa_min < 0, by hand: sqrt|kappa| M / tanh(sqrt|kappa| M)."""
    x = math.sqrt(-kappa_min) * M
    return x / math.tanh(x)


def test_theorem_5_1_by_hand_with_unequal_agents_and_its_agent_checks():
    """(5.2) at gap0 = 3, T = 4, alpha = 1/L_g = 0.5 (the inclusive limit), L_g = 2, d = 3:
    2 gap0 / (T alpha) + d L_g alpha sum p_i^2 sigma_i^2 = 3 + 3 * 0.008125; without noise 3.
    The agents' checks name the function and the bad value: no agent, an agent with 0 or 1.5
    samples, a sigma per agent of the wrong length, a NaN sigma; a scalar b equal to every N_i is
    the full batch, another scalar is refused."""
    args = (3.0, 4, 0.5, 2.0, 3)
    assert theorem_5_1_bound(*args, s=2, **AGENTS) == pytest.approx(3.0 + 3 * NOISE_SUM, rel=1e-14, abs=0)
    assert theorem_5_1_bound(*args, [1, 3], 0.0, s=2) == pytest.approx(3.0, rel=1e-15, abs=0)
    for bad in ([], [0, 3], [1.5, 3], [math.nan, 3]):
        with pytest.raises(ValueError, match=r"^theorem_5_1_bound: N_i must be a non-empty sequence of positive integers"):
            theorem_5_1_bound(*args, bad, 0.1, s=max(len(bad), 1))
    with pytest.raises(ValueError, match=r"^theorem_5_1_bound: sigma has 3 entries, expected a scalar or one per agent \(2\)$"):
        theorem_5_1_bound(*args, [1, 3], [0.1, 0.1, 0.1], s=2)
    with pytest.raises(ValueError, match=r"^theorem_5_1_bound: sigma must be finite and >= 0 \(got \[0\.1, nan\]\)$"):
        theorem_5_1_bound(*args, [1, 3], [0.1, math.nan], s=2)
    assert theorem_5_1_bound(*args, [5, 5], 0.0, s=2, b=5) == pytest.approx(3.0, rel=1e-15, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_1_bound: precondition b_i = N_i \(full batch\) violated \(b = 4, "
                                         r"N_i = \[5, 5\]\)$"):
        theorem_5_1_bound(*args, [5, 5], 0.0, s=2, b=4)


def test_theorem_5_2_by_hand_at_its_step_limit():
    """(A.3) at gap0 = 2, alphas = (0.75, 0.5), L_g = 2, delta = 0.75 (L_g alpha_0 = 1.5 = 2 delta: the
    inclusive limit), d = 3, the two unequal agents: A1 = 1.25, A2 = 0.8125,
    gap0 / ((1 - delta) A1) = 6.4, L_g d A2 / (2 (1 - delta) A1) = 7.8, bound = 6.4 + 7.8 * 0.008125.
    delta = 1 is refused, naming the precondition."""
    assert theorem_5_2_bound(2.0, [0.75, 0.5], 2.0, 0.75, 3, s=2, **AGENTS) == pytest.approx(6.4 + 7.8 * NOISE_SUM,
                                                                                              rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_2_bound: precondition 0 < delta < 1 violated \(delta = 1\.0\)$"):
        theorem_5_2_bound(2.0, [0.1, 0.05], 2.0, 1.0, 3, s=2, **AGENTS)


def test_theorem_5_3_by_hand_with_curvature_and_a_distance_other_than_1():
    """(5.4) at dist0 = 0.5, T = 4, alpha = 0.2, L_g = 2, d = 3, the two unequal agents, zeta(-1, 2):
    zeta dist0^2 / (2 alpha (zeta + 3)) + T (6 zeta + 3) d / (16 L_g (zeta + 3)) * 0.008125."""
    z = zeta_hyperbolic(-1.0, 2.0)
    want = z * 0.25 / (0.4 * (z + 3)) + 4 * (6 * z + 3) * 3 / (32 * (z + 3)) * NOISE_SUM
    assert theorem_5_3_bound(0.5, 4, 0.2, 2.0, 3, kappa_min=-1.0, M=2.0, s=2, **AGENTS) == pytest.approx(want, rel=1e-14, abs=0)


def test_theorem_5_4_by_hand_with_L_g_2_and_its_rpl_limit():
    """(5.5) corrected, gap0 = 3, T = 3, alpha = 0.4, L_g = 2, mu = 0.5, d = 3, v = 0.6, N = 4 agents of 5,
    S = 2, sigma = (0.1, 0.2, 0.3, 0.4) (mean sigma^2 = 0.075):
    P = 1 - 2 mu alpha + mu alpha^2 L_g = 0.76, P^T = 0.438976, 2 - L_g alpha = 1.2,
    kappa_0 = L_g alpha d / (2 mu 1.2) = 2, kappa_1 = L_g alpha v / (2 mu 1.2) = 0.4 (printed v kappa_0 = 1.2),
    (N - S)/(S (N - 1)) = 1/3: bound = 3 P^T + (1 - P^T)(2 * 0.075 / 2 + 0.4 / 3); printed: 1.2 / 3 in place of 0.4 / 3.
    mu = L_g is allowed (P = 0 at alpha = 1/L_g = 0.5: kappa_0 = 0.75, kappa_1 = 0.15, bound = 0.75 * 0.075 / 2
    + 0.15 / 3 = 5/64); mu > L_g is refused, naming both."""
    sig = [0.1, 0.2, 0.3, 0.4]
    PT = 0.76**3
    got = theorem_5_4_bound(3.0, 3, 0.4, 2.0, 0.5, 3, 0.6, [5] * 4, sig, s=2)
    assert got == pytest.approx(3 * PT + (1 - PT) * (0.075 + 0.4 / 3), rel=1e-13, abs=0)
    printed = theorem_5_4_bound(3.0, 3, 0.4, 2.0, 0.5, 3, 0.6, [5] * 4, sig, s=2, printed_kappa_1=True)
    assert printed == pytest.approx(3 * PT + (1 - PT) * (0.075 + 1.2 / 3), rel=1e-13, abs=0)
    assert theorem_5_4_bound(3.0, 3, 0.5, 2.0, 2.0, 3, 0.6, [5] * 4, sig, s=2) == pytest.approx(5 / 64, rel=1e-13, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_4_bound: RPL constant mu = 2\.5 exceeds L_g = 2\.0"):
        theorem_5_4_bound(3.0, 3, 0.4, 2.0, 2.5, 3, 0.6, [5] * 4, sig, s=2)


def test_theorem_5_5_by_hand_with_K_3_curvature_and_L_f_3():
    """K = 3, beta = 2, alpha = 0.1 (< (sqrt 2 - 1)/2 = 0.2071): c_1 = 1.2^2 = 1.44,
    delta_min = 0.1 (1 - 0.72) = 0.028, zeta = zeta(-1, 2), L_g = 2:
    q_0 = 0.1 * 2 (2 + 2 * 1.44 zeta) / (2 (2 - 1.44)); q = L_f^2 + d max sigma^2 = 9 + 2 * 0.25;
    gap0 = 2, T = 3: 2 / (3 * 3 * 0.028) + q_0 q. At K = 3, alpha = 0.25 is above (sqrt 2 - 1)/2 and
    refused (at K = 2 the limit would be 0.5). sigma = 0 is allowed; a negative, NaN or empty sigma is refused."""
    z = zeta_hyperbolic(-1.0, 2.0)
    q0 = 0.2 * (2 + 2.88 * z) / 1.12
    args = (2.0, 3, 3, 0.1, 2.0, 2.0, 3.0, 2)
    assert theorem_5_5_bound(*args, [0.3, 0.5], -1.0, 2.0) == pytest.approx(2 / 0.252 + q0 * 9.5, rel=1e-13, abs=0)
    assert theorem_5_5_bound(*args, 0.0, -1.0, 2.0) == pytest.approx(2 / 0.252 + q0 * 9.0, rel=1e-13, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_5_bound: precondition alpha < \(beta\^\(1/\(K-1\)\) - 1\)/beta violated "
                                         r"\(alpha = 0\.25, bound = 0\.2071"):
        theorem_5_5_bound(2.0, 3, 3, 0.25, 2.0, 2.0, 3.0, 2, 0.3, -1.0, 2.0)
    for bad in (-0.1, math.nan, []):
        with pytest.raises(ValueError, match=r"^theorem_5_5_bound: sigma must be finite and >= 0"):
            theorem_5_5_bound(*args, bad, -1.0, 2.0)


def test_theorem_5_6_by_hand_with_curvature_and_at_its_step_limit():
    """N = 8, zeta = zeta(-1, 1) = 1/tanh 1 = 1.3130: m = floor(80 / (3 sqrt zeta)) = floor(23.27) = 23
    (the flat m = 26 is refused); alpha = 0.01 <= 1/(80 sqrt zeta) = 0.0109, c = 2 > 80/69, gap0 = 3,
    K = 2, T = 3, L_g = 2, d = 2, sigma = (0.5, 0.3):
    c L_g sqrt(zeta) gap0 / (N^(1/3) K T) + d max sigma^2 / (100 sqrt zeta) (N^(-2/3) + 1/N)
    = sqrt(zeta) + 0.005 * 0.375 / sqrt(zeta).
    At N = 1, zeta = 1, L_g = 2 the step limit 1/(10 L_g N^(2/3) zeta^(1/2)) = 0.05 is inclusive
    (m = 3, c = 2, gap0 = K - 1 = T = d = sigma = 1: 2 * 2 / 2 + (1 + 1) / 100 = 2.02), 0.05 (1 + 1e-9)
    is refused; K = 1 is refused, and so is c = 10 N / (3 m) exactly (the precondition is strict)."""
    sz = math.sqrt(1.0 / math.tanh(1.0))
    assert theorem_5_6_m(8, -1.0, 1.0) == 23
    args = (3.0, 3, 2, 23, 0.01, 2.0, 2.0, 8, 2, [0.5, 0.3], -1.0, 1.0)
    assert theorem_5_6_bound(*args) == pytest.approx(sz + 0.005 * 0.375 / sz, rel=1e-13, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: precondition m = floor\(10 N / \(3 zeta\^\(1/2\)\)\) violated "
                                         r"\(m = 26, required 23\)$"):
        theorem_5_6_bound(3.0, 3, 2, 26, 0.01, 2.0, 2.0, 8, 2, 0.5, -1.0, 1.0)
    assert theorem_5_6_bound(1.0, 1, 2, 3, 0.05, 2.0, 2.0, 1, 1, 1.0, 0.0, 1.0) == pytest.approx(2.02, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: precondition alpha <= 1/\(10 L_g N\^\(2/3\) zeta\^\(1/2\)\) violated"):
        theorem_5_6_bound(1.0, 1, 2, 3, 0.05 * (1 + 1e-9), 2.0, 2.0, 1, 1, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: precondition K > 1 violated \(K = 1\)$"):
        theorem_5_6_bound(1.0, 1, 1, 3, 0.05, 2.0, 2.0, 1, 1, 1.0, 0.0, 1.0)
    # c > 10 N / (3 m) is strict: at N = 8, m = 26, c = 80/78 itself is refused
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: precondition c > 10 N / \(3 m\) violated"):
        theorem_5_6_bound(1.0, 1, 2, 26, 0.025, 80 / 78, 1.0, 8, 1, 1.0, 0.0, 1.0)


# ------------------------------------------------------------------------------ survivors of the bounds mutation run
def test_theorem_5_2_refuses_each_full_participation_precondition_violated():
    """Theorem 5.2 (like 5.1) is stated for s_t = N, K = 1, b_i = N_i. With the two unequal agents
    (N = 2, N_i = (1, 3)) at the settings of test_theorem_5_2_by_hand_at_its_step_limit (bound
    6.4 + 7.8 * 0.008125 with s = 2): s = 1, K = 2 and b = (1, 2) are each refused, naming the
    violated precondition."""
    args = (2.0, [0.75, 0.5], 2.0, 0.75, 3)
    assert theorem_5_2_bound(*args, s=2, K=1, b=[1, 3], **AGENTS) == pytest.approx(6.4 + 7.8 * NOISE_SUM, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_2_bound: precondition s_t = N violated \(s = 1, N = 2\)$"):
        theorem_5_2_bound(*args, s=1, **AGENTS)
    with pytest.raises(ValueError, match=r"^theorem_5_2_bound: precondition K = 1 violated \(K = 2\)$"):
        theorem_5_2_bound(*args, s=2, K=2, **AGENTS)
    with pytest.raises(ValueError, match=r"^theorem_5_2_bound: precondition b_i = N_i \(full batch\) violated "
                                         r"\(b = \[1, 2\], N_i = \[1, 3\]\)$"):
        theorem_5_2_bound(*args, s=2, b=[1, 2], **AGENTS)


def test_theorem_5_4_refuses_a_step_above_1_over_L_g():
    """Theorem 5.4 needs alpha <= 1/L_g. At L_g = 2 (1/L_g = 0.5, so 1/L_g and L_g differ) alpha = 0.5 is
    the inclusive limit (test_theorem_5_4_by_hand_with_L_g_2_and_its_rpl_limit: 5/64 at mu = 2) and
    alpha = 0.6 is refused, naming alpha and 1/L_g."""
    sig = [0.1, 0.2, 0.3, 0.4]
    assert theorem_5_4_bound(3.0, 3, 0.5, 2.0, 2.0, 3, 0.6, [5] * 4, sig, s=2) == pytest.approx(5 / 64, rel=1e-13, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_4_bound: precondition alpha <= 1/L_g violated "
                                         r"\(alpha = 0\.6, 1/L_g = 0\.5\)$"):
        theorem_5_4_bound(3.0, 3, 0.6, 2.0, 0.5, 3, 0.6, [5] * 4, sig, s=2)


def test_theorem_5_6_at_m_2_with_curvature_and_its_step_limit():
    """N = 1, zeta = zeta(-1, 2) = 2 / tanh 2 = 2.0747 (sqrt zeta = 1.4404): m = floor(10 / (3 sqrt zeta))
    = floor(2.314) = 2, which satisfies the precondition m > 1 and is accepted.
    Step limit 1/(10 L_g N^(2/3) zeta^(1/2)) = 1/(10 sqrt zeta) = 0.0694 at L_g = 1: alpha = 0.06 is
    accepted, alpha = 0.1 is refused (0.1 < sqrt(zeta)/10 = 0.144, so the factor zeta^(1/2) must divide).
    c = 2 > 10 N / (3 m) = 5/3; gap0 = 3, K = 2, T = 1, d = 2, sigma = 0.5:
    c L_g sqrt(zeta) gap0 / (N^(1/3) K T) + d sigma^2 / (100 sqrt zeta) (N^(-2/3) + 1/N)
    = 3 sqrt(zeta) + 0.01 / sqrt(zeta)."""
    sz = math.sqrt(2.0 / math.tanh(2.0))
    assert 1.44 < sz < 1.441 and math.floor(10 / (3 * sz)) == 2
    assert theorem_5_6_m(1, -1.0, 2.0) == 2
    got = theorem_5_6_bound(3.0, 1, 2, 2, 0.06, 2.0, 1.0, 1, 2, 0.5, -1.0, 2.0)
    assert got == pytest.approx(3 * sz + 0.01 / sz, rel=1e-13, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: precondition alpha <= 1/\(10 L_g N\^\(2/3\) zeta\^\(1/2\)\) "
                                         r"violated \(alpha = 0\.1, bound = 0\.0694"):
        theorem_5_6_bound(3.0, 1, 2, 2, 0.1, 2.0, 1.0, 1, 2, 0.5, -1.0, 2.0)


def test_theorem_5_6_argument_checks_name_the_function_and_the_argument():
    """Each count is checked with the function's name first and the count's name second: T = 0 gives
    'theorem_5_6_bound: T must be >= 1 (got T = 0, short by 1)'; an empty sigma (no agent's noise, so
    no max_i sigma_i) is refused by the function's own sigma check, not by a NumPy reduction error."""
    args = (1.0, 1, 2, 3, 0.05, 2.0, 2.0, 1, 1, 1.0, 0.0, 1.0)  # 2.02 (test_theorem_5_6_by_hand_...)
    assert theorem_5_6_bound(*args) == pytest.approx(2.02, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: T must be >= 1 \(got T = 0, short by 1\)$"):
        theorem_5_6_bound(1.0, 0, 2, 3, 0.05, 2.0, 2.0, 1, 1, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^theorem_5_6_bound: sigma must be finite and >= 0 \(got \[\]\)$"):
        theorem_5_6_bound(1.0, 1, 2, 3, 0.05, 2.0, 2.0, 1, 1, [], 0.0, 1.0)
