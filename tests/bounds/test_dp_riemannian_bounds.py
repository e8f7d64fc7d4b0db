"""Bounds of 001 Section 4 (reference/bounds/dp_riemannian_bounds.py) checked against Algorithm 1.

Known answers: closed forms (Euclidean linear-Gaussian recursion), mpmath-free elementary
identities, and Monte Carlo runs of prirfed.reference.trainers.rgd.dp_rgd under exactly the
theorems' settings on instances that satisfy their assumptions. Every Monte Carlo assertion is
one-sided, ``mean - 4 se <= bound``: if the bound holds, a normal-approximation false alarm has
probability below 3.2e-5 per assertion (fixed seeds make each run deterministic anyway).
"""

import math

import numpy as np
import pytest

from prirfed.reference.bounds.dp_riemannian_bounds import (
    lemma_1_bound,
    lemma_4_bound,
    theorem_1_sigma,
    theorem_2_bound,
    theorem_2_step_size,
    theorem_3_bound,
    theorem_3_step_sizes,
    theorem_4_bound,
    theorem_4_bound_printed,
    theorem_4_T,
    theorem_5_bound,
)
from prirfed.reference.manifolds import SPD, Euclidean, Sphere
from prirfed.reference.manifolds.base import zeta
from prirfed.reference.mechanisms import sample_tangent_gaussian
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.trainers.rgd import dp_rgd

Z4 = 4.0  # one-sided normal quantile: false alarm < 3.2e-5


def mc_below(samples, bound, what):
    s = np.asarray(samples, dtype=float)
    mean, se = s.mean(), s.std(ddof=1) / math.sqrt(s.size)
    assert mean - Z4 * se <= bound, f"{what}: Monte Carlo mean {mean:.4g} (se {se:.2g}) exceeds the bound {bound:.4g}"
    return mean, se


# ----------------------------------------------------------------------------- instances
R_DATA, R_W = 0.25, 1.0  # data and x0 in the geodesic ball B(I, R_DATA); W = B(I, R_W)


def spd_ball_problem(seed, n_agents=3, per_agent=10):
    """Frechet mean f(w; a) = dist^2(w, a)/2 on SPD(2) (nonpositive curvature, kappa_min = -1/2).

    W = B(I, R_W) is geodesically convex and totally normal (Hadamard manifold), diameter
    D = 2 R_W; every gradient -Log_w(a) has norm dist(w, a) <= R_W + R_DATA =: L0 on W; f(.; a) is
    geodesically convex and 1-strongly convex (Hessian of dist^2/2 >= identity on a Hadamard
    manifold), hence F - F* <= ||grad F||^2 / 2 (PL with tau = 1/2); the Hessian is <= s coth s,
    s = sqrt(1/2) dist, so L1 = zeta(-1/2, L0).
    """
    M = SPD(2)
    rng = np.random.default_rng(seed)
    c = np.eye(2)

    def pt(r):
        v = M.random_tangent(c, rng)
        return M.exp(c, r * rng.uniform(0, 1) * v / M.norm(c, v))

    data = [np.array([pt(R_DATA) for _ in range(per_agent)]) for _ in range(n_agents)]
    P = FrechetMean(M, data)
    x0 = pt(R_DATA)
    return M, P, x0, c


def assert_iterates_in_W(M, c, res, what):
    assert res.history.rounds == list(range(len(res.history.rounds))), f"{what}: not every round recorded"
    r = max(M.dist(c, w) for w in res.history.iterates)
    assert r <= R_W, f"{what}: an iterate left W (radius {r:.3f} > {R_W}); the instance does not satisfy the assumption"


SPD_L0 = R_W + R_DATA
SPD_D = 2 * R_W
SPD_VS = zeta(-0.5, SPD_D)
SPD_d = 3


# ----------------------------------------------------------------------------- Lemma 1
@pytest.mark.parametrize("name", ["sphere", "spd", "euclidean"])
def test_lemma_1_on_random_triangles(name):
    """l1^2 <= varsigma l0^2 + l2^2 - 2 l0 l2 cos(theta) on 300 random small triangles per manifold
    (D = the largest side, the smallest diameter of a set holding the triangle), with equality on
    flat space; curvature from each manifold's curvature_bounds."""
    M = {"sphere": Sphere(3), "spd": SPD(3), "euclidean": Euclidean(3)}[name]
    rng = np.random.default_rng(11)
    worst = -np.inf
    for _ in range(300):
        x = M.random_point(rng)
        ys = []
        for _ in range(2):
            v = M.random_tangent(x, rng)
            ys.append(M.exp(x, rng.uniform(0.05, 1.2) * v / M.norm(x, v)))
        y, z = ys
        l0, l2, l1 = M.dist(x, y), M.dist(x, z), M.dist(y, z)
        cos = M.inner(x, M.log(x, y), M.log(x, z)) / (l0 * l2)
        theta = math.acos(min(1.0, max(-1.0, cos)))
        rhs = lemma_1_bound(l0, l2, theta, M.curvature_bounds[0], max(l0, l1, l2))
        assert l1 * l1 <= rhs + 1e-9 * (1 + rhs)
        if name == "euclidean":
            assert l1 * l1 == pytest.approx(rhs, rel=1e-9, abs=1e-12)
        worst = max(worst, l1 * l1 - rhs)
    assert worst <= 1e-9


def test_lemma_1_varsigma_is_needed_on_spd():
    """On SPD the law of cosines alone (varsigma = 1) fails for some triangle, so the curvature
    factor of Lemma 1 is not decorative: kappa_min = 0 in lemma_1_bound must be violated somewhere."""
    M = SPD(2)
    rng = np.random.default_rng(3)
    violated = 0
    for _ in range(200):
        x = M.random_point(rng)
        y, z = (M.exp(x, 2.0 * M.random_tangent(x, rng)) for _ in range(2))
        l0, l2, l1 = M.dist(x, y), M.dist(x, z), M.dist(y, z)
        cos = M.inner(x, M.log(x, y), M.log(x, z)) / (l0 * l2)
        theta = math.acos(min(1.0, max(-1.0, cos)))
        D = max(l0, l1, l2)
        violated += l1 * l1 > lemma_1_bound(l0, l2, theta, 0.0, D) * (1 + 1e-9)
        assert l1 * l1 <= lemma_1_bound(l0, l2, theta, -0.5, D) * (1 + 1e-9)
    assert violated > 0


# ----------------------------------------------------------------------------- Lemma 4
def test_lemma_4_monte_carlo_on_spd():
    """E||zeta||^2 <= L0^2 + d sigma^2 for the minibatch gradient plus tangent noise, and the noise
    part alone has E||eps||^2 = d sigma^2 exactly (c_l = 1 in orthonormal coordinates): two-sided
    4-se check (false alarm < 6.4e-5)."""
    M, P, _, c = spd_ball_problem(0)
    rng = np.random.default_rng(5)
    w = M.exp(c, 0.8 * R_W * M.random_tangent(c, rng) / math.sqrt(SPD_d) / 1.5)
    assert M.dist(c, w) <= R_W
    sigma, b, reps = 0.4, 5, 4000
    n = sum(P.sizes)
    pts = [(i, j) for i in range(P.N) for j in range(P.sizes[i])]
    norms2, noise2 = [], []
    for _ in range(reps):
        B = rng.choice(n, size=b, replace=False)
        g = sum(P.grad_sample(w, *pts[k]) for k in B) / b
        eps = sample_tangent_gaussian(M, w, sigma, rng)
        norms2.append(M.norm(w, g + eps) ** 2)
        noise2.append(M.norm(w, eps) ** 2)
    mc_below(norms2, lemma_4_bound(SPD_L0, SPD_d, sigma), "Lemma 4")
    m, se = np.mean(noise2), np.std(noise2, ddof=1) / math.sqrt(reps)
    assert abs(m - lemma_4_bound(0.0, SPD_d, sigma)) <= Z4 * se


def test_lemma_4_printed_c_l_term_understates_the_noise_when_c_l_exceeds_1():
    """E42. The proof of Lemma 4 writes E||eps||_w^2 = E||vec eps||_2^2 = sigma^2 tr(G_w^{-1}) <=
    d sigma^2 / c_l. For the density of Definition 3, exp(-xi^T G xi / (2 sigma^2)) in coordinates
    with metric G, the w-norm has E xi^T G xi = d sigma^2 for every G (only the Euclidean norm of the
    coordinates is sigma^2 tr(G^{-1})). With G = diag(2, 3, 4) (c_l = 2), 20000 draws: the mean
    of ||eps||_w^2 is d sigma^2 (two-sided 4 se) and exceeds the printed d sigma^2 / c_l by 40 se or
    more; lemma_4_bound refuses c_l > 1."""
    rng = np.random.default_rng(13)
    G = np.diag([2.0, 3.0, 4.0])
    d, sigma = 3, 0.5
    xi = sigma * rng.standard_normal((20000, d)) / np.sqrt(np.diag(G))  # covariance sigma^2 G^{-1}
    wnorm2 = np.einsum("ni,ij,nj->n", xi, G, xi)
    m, se = wnorm2.mean(), wnorm2.std(ddof=1) / math.sqrt(wnorm2.size)
    assert abs(m - d * sigma**2) <= Z4 * se
    assert np.mean(np.sum(xi**2, axis=1)) == pytest.approx(sigma**2 * np.trace(np.linalg.inv(G)), rel=0.05, abs=0)
    printed = d * sigma**2 / 2.0
    assert m - printed > 40 * se
    with pytest.raises(ValueError, match="lemma_4_bound: c_l must be <= 1"):
        lemma_4_bound(0.0, d, sigma, c_l=2.0)
    assert lemma_4_bound(0.0, d, sigma, c_l=1.0) == pytest.approx(d * sigma**2, rel=1e-14, abs=0)


# ----------------------------------------------------------------------------- Theorem 1
def test_theorem_1_sigma_formula():
    """sigma^2 = c T log(1/delta) L0^2 / (n^2 eps^2), by hand."""
    s = theorem_1_sigma(eps=0.5, delta=1e-3, T=40, L0=2.0, n=100, c=3.0)
    assert s * s == pytest.approx(3.0 * 40 * math.log(1e3) * 4.0 / (100**2 * 0.25), rel=1e-14, abs=0)


# ----------------------------------------------------------------------------- Theorems 2, 3
T23, EPS23, DELTA23, RUNS23 = 20, 2.0, 1e-3, 16


def test_theorem_2_dp_rgd_output_3_on_spd_frechet_mean():
    """Geodesically convex, L0-Lipschitz, W totally normal of diameter D: Algorithm 1 (full batch),
    output 3 with c_t = 1/(t+1), eta of Theorem 2, sigma of Theorem 1 (c = 1): E[F(w_priv)] - F*
    <= D sqrt((L0^2 + d sigma^2) varsigma / T), Monte Carlo over 16 noise seeds."""
    M, P, x0, c = spd_ball_problem(1)
    n = sum(P.sizes)
    Fs = P.f(P.x_star)
    sigma = theorem_1_sigma(EPS23, DELTA23, T23, SPD_L0, n)
    eta = theorem_2_step_size(SPD_D, SPD_L0, SPD_d, sigma, SPD_VS, T23)
    bound = theorem_2_bound(SPD_D, SPD_L0, SPD_d, sigma, SPD_VS, T23, eta=eta, output=3)
    ex = []
    for s in range(RUNS23):
        res = dp_rgd(P, x0, eta, T23, n, sigma, np.random.default_rng(s), output=3, keep_iterates=True, record_every=1)
        assert_iterates_in_W(M, c, res, "Theorem 2")
        ex.append(P.f(res.x) - Fs)
    mc_below(ex, bound, "Theorem 2")


def test_theorem_3_dp_rgd_output_3_on_spd_frechet_mean():
    """Geodesically 1-strongly convex (dist^2/2 on a Hadamard manifold; 001 Theorem 7 states 2 for
    dist^2): output 3 with c_t = 2/(t+1), eta_t = 1/(beta (t+1)): E[F(w_priv)] - F* <=
    2 varsigma (L0^2 + d sigma^2) / (beta T), Monte Carlo over 16 seeds."""
    M, P, x0, c = spd_ball_problem(2)
    n = sum(P.sizes)
    Fs = P.f(P.x_star)
    sigma = theorem_1_sigma(EPS23, DELTA23, T23, SPD_L0, n)
    etas = theorem_3_step_sizes(1.0, T23)
    bound = theorem_3_bound(1.0, SPD_L0, SPD_d, sigma, SPD_VS, T23, eta=etas, output=3)
    ex = []
    for s in range(RUNS23):
        res = dp_rgd(P, x0, etas, T23, n, sigma, np.random.default_rng(100 + s), output=3,
                     averaging="strongly_convex", keep_iterates=True, record_every=1)
        assert_iterates_in_W(M, c, res, "Theorem 3")
        ex.append(P.f(res.x) - Fs)
    mc_below(ex, bound, "Theorem 3")


# ----------------------------------------------------------------------------- Theorem 4
class ScaledEuclideanMean(FrechetMean):
    """mu * ||x - a||^2 / 2 on R^d: F - F* = mu ||x - abar||^2 / 2, ||grad F||^2 = 2 mu (F - F*),
    so 001's PL holds with tau = 1/(2 mu) exactly, and L1 = mu."""

    def __init__(self, mu, data):
        super().__init__(Euclidean(data[0].shape[1]), data)
        self.mu = float(mu)

    def _f_ij(self, x, i, j):
        return self.mu * super()._f_ij(x, i, j)

    def _rgrad_ij(self, x, i, j):
        return self.mu * super()._rgrad_ij(x, i, j)


def euclidean_excess_closed_form(mu, eta, sigma, d, T, Delta0):
    """E F(w_T) - F* of w' - abar = (1 - eta mu)(w - abar) - eta eps, eps ~ N(0, sigma^2 I_d)."""
    q = (1 - eta * mu) ** 2
    return q**T * Delta0 + 0.5 * mu * eta**2 * d * sigma**2 * (1 - q**T) / (1 - q)


def test_theorem_4_dp_rgd_output_1_on_spd_frechet_mean():
    """Riemannian PL (tau = 1/2 from 1-strong convexity), L1 = zeta(-1/2, L0), eta = 0.5 < 1/L1,
    full batch, output 1: E F(w_T) - F* <= (1 - eta/(2 tau))^T Delta0 + tau L1 eta d sigma^2
    (the corrected explicit bound, E40), Monte Carlo over 16 seeds."""
    M, P, x0, c = spd_ball_problem(3)
    n = sum(P.sizes)
    Fs = P.f(P.x_star)
    L1 = zeta(-0.5, SPD_L0)
    eta, tau, T, sigma = 0.5, 0.5, 12, 0.15
    Delta0 = P.f(x0) - Fs
    bound = theorem_4_bound(Delta0, tau, L1, eta, SPD_d, sigma, T, output=1, b=n, n=n)
    ex = []
    for s in range(16):
        res = dp_rgd(P, x0, eta, T, n, sigma, np.random.default_rng(200 + s), output=1, keep_iterates=True, record_every=1)
        assert_iterates_in_W(M, c, res, "Theorem 4")
        ex.append(P.f(res.x) - Fs)
    mc_below(ex, bound, "Theorem 4")


def test_theorem_4_printed_bound_fails_under_the_stated_pl_definition():
    """E40. 001 defines PL as F - F* <= tau ||grad F||^2, but its proof contracts by (1 - tau eta/2),
    which is the reciprocal convention. On F = mu ||x - abar||^2/2 with mu = 1/4 (tau = 2, L1 = 1/4),
    eta = 0.45 < min(1/L1, 1/tau), sigma = 0, T = 10, the run (dp_rgd, deterministic) has
    F(w_T) - F* = (1 - eta mu)^(2T) Delta0 = 0.0916 Delta0 > printed 0.55^10 Delta0 = 0.0025 Delta0;
    the corrected bound (1 - eta/(2 tau))^T Delta0 = 0.30 Delta0 holds. Also checks dp_rgd against the
    closed form with noise (Monte Carlo, 400 runs)."""
    mu, eta, tau, T, d = 0.25, 0.45, 2.0, 10, 2
    rng = np.random.default_rng(7)
    data = [rng.standard_normal((4, d)) for _ in range(2)]
    P = ScaledEuclideanMean(mu, data)
    abar = np.concatenate(data).mean(axis=0)
    x0 = abar + np.array([3.0, -2.0])
    Delta0 = P.f(x0) - P.f(abar)
    assert Delta0 == pytest.approx(0.5 * mu * 13.0, rel=1e-12, abs=0)
    res = dp_rgd(P, x0, eta, T, 8, 0.0, np.random.default_rng(0), output=1)
    lhs = P.f(res.x) - P.f(abar)
    assert lhs == pytest.approx(euclidean_excess_closed_form(mu, eta, 0.0, d, T, Delta0), rel=1e-9, abs=0)
    printed = theorem_4_bound_printed(Delta0, tau, mu, eta, d, 0.0, T)
    corrected = theorem_4_bound(Delta0, tau, mu, eta, d, 0.0, T, b=8, n=8)
    assert lhs > 30 * printed
    assert lhs <= corrected
    # with noise the closed form is the run's expectation (two-sided 4 se) and stays below the corrected bound
    sigma = 0.3
    ex = [P.f(dp_rgd(P, x0, eta, T, 8, sigma, np.random.default_rng(s)).x) - P.f(abar) for s in range(400)]
    exact = euclidean_excess_closed_form(mu, eta, sigma, d, T, Delta0)
    m, se = np.mean(ex), np.std(ex, ddof=1) / math.sqrt(len(ex))
    assert abs(m - exact) <= Z4 * se
    assert exact <= theorem_4_bound(Delta0, tau, mu, eta, d, sigma, T, b=8, n=8)


def test_theorem_4_corrected_noise_term_is_attained_in_the_limit():
    """On the quadratic (tau = 1/(2 mu), L1 = mu) the exact stationary excess is
    eta d sigma^2 / (2 (2 - eta mu)) and the corrected noise term tau L1 eta d sigma^2 = eta d sigma^2 / 2:
    their ratio 1/(2 - eta mu) tends to 1 as eta -> 1/L1, so the corrected term cannot be halved
    (as the printed d sigma^2/(2 tau) would, read in the proof's convention). Closed forms only."""
    mu, d, sigma = 1.0, 3, 0.7
    for eta in (0.5, 0.9, 0.999):
        floor = euclidean_excess_closed_form(mu, eta, sigma, d, 10**6, 0.0)
        bound = theorem_4_bound(0.0, 1 / (2 * mu), mu, eta, d, sigma, 10**6)
        assert floor <= bound
        assert floor / bound == pytest.approx(1 / (2 - eta * mu), rel=1e-9, abs=0)


def test_theorem_4_T_choice():
    assert theorem_4_T(n=1000, eps=1.0, delta=1e-3, d=3, L0=1.0) == pytest.approx(math.log(1e6 / (3 * math.log(1e3))), rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="theorem_4_T: T = .* is not positive"):
        theorem_4_T(n=2, eps=0.1, delta=1e-3, d=3, L0=1.0)


# ----------------------------------------------------------------------------- Theorem 5
def test_theorem_5_dp_rgd_output_2_on_sphere_pca():
    """Nonconvex sphere PCA F(x) = -x^T A x, L1 = 2 (lambda_max - lambda_min) (second derivative of
    F along a unit-speed great circle), eta = 1/L1, full batch, output 2: E||grad F(w_priv)||^2 <=
    2 L1 Delta0 / T + d sigma^2, Delta0 = F(w_0) + lambda_max. Monte Carlo over 40 seeds; also the
    stochastic case b < n with L0 = max ||grad f(.; z)|| <= max ||z||^2 (E14)."""
    rng = np.random.default_rng(9)
    Z = rng.standard_normal((20, 4)) * np.array([2.0, 1.0, 0.7, 0.3])
    P = SpherePCA([Z[:10], Z[10:]])
    lam = np.linalg.eigvalsh(P.A)
    L1 = 2 * (lam[-1] - lam[0])
    d, n, T = 3, 20, 15
    x0 = np.ones(4) / 2.0
    Delta0 = P.f(x0) + lam[-1]
    L0 = float(max(np.sum(Z**2, axis=1)))
    for b, sigma in ((n, 0.3), (5, 0.3)):
        bound = theorem_5_bound(Delta0, L1, d, sigma, T, eta=1 / L1, L0=L0, b=b, n=n, output=2)
        g2 = []
        for s in range(40):
            res = dp_rgd(P, x0, 1 / L1, T, b, sigma, np.random.default_rng(300 + s), output=2)
            g2.append(P.rgrad_norm(res.x) ** 2)
        mc_below(g2, bound, f"Theorem 5 (b = {b})")


# ----------------------------------------------------------------------------- preconditions
def test_preconditions_raise_naming_the_violated_one():
    with pytest.raises(ValueError, match="theorem_2_bound: the theorem is about Algorithm 1 with output 3"):
        theorem_2_bound(1.0, 1.0, 3, 0.1, 1.0, 10, output=1)
    with pytest.raises(ValueError, match="theorem_2_bound: the theorem's step size"):
        theorem_2_bound(1.0, 1.0, 3, 0.1, 1.0, 10, eta=0.5)
    with pytest.raises(ValueError, match="theorem_2_bound: Theorem 2 averages with c_t = 1/\\(t\\+1\\)"):
        theorem_2_bound(1.0, 1.0, 3, 0.1, 1.0, 10, averaging="strongly_convex")
    with pytest.raises(ValueError, match="varsigma is >= 1"):
        theorem_2_bound(1.0, 1.0, 3, 0.1, 0.5, 10)
    with pytest.raises(ValueError, match="theorem_3_bound: the theorem's step size"):
        theorem_3_bound(1.0, 1.0, 3, 0.1, 1.0, 4, eta=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="theorem_3_bound: Theorem 3 averages"):
        theorem_3_bound(1.0, 1.0, 3, 0.1, 1.0, 4, averaging="convex")
    with pytest.raises(ValueError, match="theorem_4_bound: Theorem 4 needs eta < 1/L1"):
        theorem_4_bound(1.0, 1.0, 2.0, 0.5, 3, 0.1, 5)
    with pytest.raises(ValueError, match="theorem_4_bound: the theorem is about Algorithm 1 with output 1"):
        theorem_4_bound(1.0, 1.0, 2.0, 0.1, 3, 0.1, 5, output=3)
    with pytest.raises(ValueError, match="tau >= 1/\\(2 L1\\)"):
        theorem_4_bound(1.0, 0.1, 2.0, 0.1, 3, 0.1, 5)
    with pytest.raises(ValueError, match="theorem_4_bound_printed: the printed Theorem 4 needs eta < 1/tau"):
        theorem_4_bound_printed(1.0, 4.0, 1.0, 0.5, 3, 0.1, 5)
    with pytest.raises(ValueError, match="theorem_5_bound: the theorem is about Algorithm 1 with output 2"):
        theorem_5_bound(1.0, 1.0, 3, 0.1, 5, output=1)
    with pytest.raises(ValueError, match="theorem_5_bound: the theorem's step size"):
        theorem_5_bound(1.0, 2.0, 3, 0.1, 5, eta=1.0)
    with pytest.raises(ValueError, match="theorem_5_bound: batch size b must be <= n"):
        theorem_5_bound(1.0, 2.0, 3, 0.1, 5, b=3, n=2)
    with pytest.raises(ValueError, match="lemma_1_bound: the sides must not exceed the diameter D"):
        lemma_1_bound(2.0, 1.0, 0.3, -1.0, 1.0)
    with pytest.raises(ValueError, match="lemma_1_bound: the angle A must lie in"):
        lemma_1_bound(0.5, 0.5, 4.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="lemma_4_bound: sigma must be finite"):
        lemma_4_bound(1.0, 3, float("nan"))
    with pytest.raises(ValueError, match="lemma_4_bound: d must be >= 1"):
        lemma_4_bound(1.0, 0, 0.1)


def test_theorem_5_minibatch_bound_by_hand():
    """b < n: L1 Delta0 / T + (L0^2 + d sigma^2 / c_l) / 2, at L0 = 2, d = 3 where swapping L0 and d
    changes it: 2 * 1 / 10 + (4 + 3 * 0.25) / 2 = 2.575; the swapped form gives (9 + 2 * 0.25) / 2."""
    assert theorem_5_bound(1.0, 2.0, 3, 0.5, 10, L0=2.0, b=1, n=10) == pytest.approx(0.2 + (4.0 + 0.75) / 2, rel=1e-15, abs=0)
    assert theorem_5_bound(1.0, 2.0, 3, 0.5, 10, c_l=0.5, L0=2.0, b=1, n=10) == pytest.approx(0.2 + (4.0 + 1.5) / 2, rel=1e-15, abs=0)
    # full batch: 2 L1 Delta0 / T + d sigma^2 / c_l
    assert theorem_5_bound(1.0, 2.0, 3, 0.5, 10, L0=2.0, b=10, n=10) == pytest.approx(0.4 + 0.75, rel=1e-15, abs=0)


def test_lemma_1_at_a_zero_angle_by_hand():
    """A = 0 is inside the lemma's [0, pi]: the bound is zeta(kappa_min, D) b^2 + c^2 - 2 b c, here
    zeta(-1, 3) + 1 - 2 with zeta(-1, 3) = 3 / tanh(3) (a mutant refusing A = 0 survived)."""
    from prirfed.reference.bounds.dp_riemannian_bounds import lemma_1_bound

    assert lemma_1_bound(1.0, 1.0, 0.0, -1.0, 3.0) == pytest.approx(3.0 / math.tanh(3.0) - 1.0, rel=1e-14, abs=0)


def test_theorem_4_printed_bound_by_hand_and_its_strict_precondition():
    """The printed bound (1 - tau eta / 2)^T Delta0 + d sigma^2 / (2 tau c_l) at Delta0 = 2, tau = 0.5,
    L1 = 0.5, eta = 1, d = 3, sigma = 0.2, T = 2, c_l = 0.5: 2 * 0.75^2 + 3 * 0.04 / 0.5 = 1.125 + 0.24
    (Delta0, c_l != 1 and tau != 1/2 c_l keep each factor visible). The printed
    precondition eta < 1/tau is strict: eta = 1/tau = 2 is refused, the float just below is taken."""
    assert theorem_4_bound_printed(2.0, 0.5, 0.5, 1.0, 3, 0.2, 2, 0.5) == pytest.approx(2 * 0.5625 + 0.24, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match="the printed Theorem 4 needs eta < 1/tau"):
        theorem_4_bound_printed(1.0, 0.5, 0.25, 2.0, 3, 0.2, 2, 0.5)
    below = math.nextafter(2.0, 0.0)
    assert theorem_4_bound_printed(1.0, 0.5, 0.25, below, 3, 0.2, 2, 0.5) == pytest.approx(0.0 + 0.49, abs=1e-15)


def test_theorem_4_stochastic_case_and_T_choice_by_hand():
    """Theorem 4 with b < n: (1 - eta/tau)^T Delta0 + tau L1 eta G^2 / 2, G^2 = L0^2 + d sigma^2 / c_l
    (Lemma 4). At Delta0 = 1, tau = 1, L1 = 0.5, eta = 0.5, d = 3, sigma = 0.2, T = 2, c_l = 0.5,
    L0 = 2, b = 1, n = 4: 0.25 + 0.125 (4 + 0.24) = 0.78. The paper's T = log(n^2 eps^2 c_l / (d L0^2
    log(1/delta))) at n = 1000, eps = 1, delta = 1e-3, d = 3, L0 = 2, c_l = 0.5: log(1e6 * 0.5 / (12
    log 1000)), every constant away from 1."""
    assert theorem_4_bound(1.0, 1.0, 0.5, 0.5, 3, 0.2, 2, 0.5, L0=2.0, b=1, n=4) == pytest.approx(0.78, rel=1e-14, abs=0)
    want = math.log(1e6 * 0.5 / (3 * 4 * math.log(1e3)))
    assert theorem_4_T(n=1000, eps=1.0, delta=1e-3, d=3, L0=2.0, c_l=0.5) == pytest.approx(want, rel=1e-14, abs=0)


# ----------------------------------------------------------------------------- every constant visible (issue 18)
def zeta_hyperbolic(kappa_min, D):
    """zeta(kappa, D) = sqrt|kappa| D / tanh(sqrt|kappa| D) for kappa < 0 (Zhang & Sra 2016, Lemma 5), by hand."""
    x = math.sqrt(-kappa_min) * D
    return x / math.tanh(x)


def test_lemma_1_by_hand_away_from_unit_sides_and_at_the_ends_of_its_ranges():
    """varsigma b^2 + c^2 - 2 b c cos A with varsigma = zeta(-1, 2) = 2 / tanh 2:
    - b = 0.5, c = 1.5, A = pi/3: varsigma / 4 + 2.25 - 0.75 (b != c, b, c != 1, cos A != 1, so a wrong
      power, a swapped side or the curvature factor on the wrong side shows);
    - A = pi (inside the lemma's [0, pi]) with b = c = D = 2 (sides equal to the diameter are allowed):
      4 varsigma + 4 + 8;
    - at D = 1e6 a side above D by rounding (relative 1e-13) is accepted, one above D by 1e-11 relative
      is refused, with the message naming the function, both sides and D."""
    vs = zeta_hyperbolic(-1.0, 2.0)
    assert lemma_1_bound(0.5, 1.5, math.pi / 3, -1.0, 2.0) == pytest.approx(vs / 4 + 2.25 - 0.75, rel=1e-14, abs=0)
    assert lemma_1_bound(2.0, 2.0, math.pi, -1.0, 2.0) == pytest.approx(4 * vs + 12.0, rel=1e-14, abs=0)
    D = 1e6
    assert lemma_1_bound(D * (1 + 1e-13), D, 0.0, 0.0, D) == pytest.approx(0.0, abs=1e-3)  # (b - c)^2, flat
    assert lemma_1_bound(D, D * (1 + 1e-13), 0.0, 0.0, D) == pytest.approx(0.0, abs=1e-3)
    with pytest.raises(ValueError, match=r"^lemma_1_bound: the sides must not exceed the diameter D \(got b = 1e\+06, "
                                         r"c = 1e\+06, D = 1e\+06\)$"):
        lemma_1_bound(D, D * (1 + 1e-11), 0.0, 0.0, D)
    with pytest.raises(ValueError, match=r"^lemma_1_bound: the angle A must lie in \[0, pi\] \(got A = -0.1\)$"):
        lemma_1_bound(0.5, 0.5, -0.1, -1.0, 1.0)


# G^2 = L0^2 + d sigma^2 / c_l at L0 = 3, d = 5, sigma = 0.4, c_l = 0.5: 9 + 5 * 0.16 / 0.5 = 10.6
G2_ARGS = dict(L0=3.0, d=5, sigma=0.4, c_l=0.5)
G2_BY_HAND = 10.6


def test_theorems_2_and_3_by_hand_where_every_constant_shows():
    """Theorem 2 at D = 2, varsigma = 1.5, T = 7: eta = D / sqrt(G^2 varsigma T) = 2 / sqrt(111.3) and
    bound = D sqrt(G^2 varsigma / T) = 2 sqrt(15.9 / 7); their product is D^2 / T = 4/7.
    Theorem 3 at beta = 2.5: eta_t = 1 / (beta (t+1)) = (0.4, 0.2, 0.1333...) and
    bound = 2 varsigma G^2 / (beta T) = 2 * 1.5 * 10.6 / 17.5 = 31.8 / 17.5.
    Lemma 4 alone: G^2 = 10.6. Each given step size is accepted; a step-size array of the wrong
    length is refused with the theorem's message (not a broadcasting error)."""
    assert lemma_4_bound(**G2_ARGS) == pytest.approx(G2_BY_HAND, rel=1e-15, abs=0)
    eta = theorem_2_step_size(2.0, 3.0, 5, 0.4, 1.5, 7, c_l=0.5)
    assert eta == pytest.approx(2.0 / math.sqrt(111.3), rel=1e-14, abs=0)
    bound = theorem_2_bound(2.0, 3.0, 5, 0.4, 1.5, 7, c_l=0.5, eta=2.0 / math.sqrt(111.3))
    assert bound == pytest.approx(2.0 * math.sqrt(15.9 / 7.0), rel=1e-14, abs=0)
    assert eta * bound == pytest.approx(4.0 / 7.0, rel=1e-14, abs=0)
    etas = theorem_3_step_sizes(2.5, 3)
    assert etas.shape == (3,) and etas == pytest.approx([0.4, 0.2, 0.4 / 3], rel=1e-15, abs=0)
    b3 = theorem_3_bound(2.5, 3.0, 5, 0.4, 1.5, 3, c_l=0.5, eta=[0.4, 0.2, 0.4 / 3])
    assert b3 == pytest.approx(2 * 1.5 * 10.6 / (2.5 * 3), rel=1e-14, abs=0)
    assert theorem_3_bound(2.5, 3.0, 5, 0.4, 1.5, 7, c_l=0.5) == pytest.approx(31.8 / 17.5, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_3_bound: the theorem's step size is \[0\.4 +0\.2 +0\.133333\]; got eta"):
        theorem_3_bound(2.5, 3.0, 5, 0.4, 1.5, 3, c_l=0.5, eta=[0.4, 0.2])


def test_theorem_2_step_size_refuses_a_zero_gradient_bound_and_takes_a_small_one():
    """L0 = sigma = 0 makes G^2 = 0 and eta = D / 0: refused, naming the function and both values.
    G^2 = 0.25 (L0 = 1/2, no noise) is valid: eta = 1 / sqrt(0.25 * 1 * 4) = 1 at D = 1, varsigma = 1, T = 4."""
    with pytest.raises(ValueError, match=r"^theorem_2_step_size: L0\^2 \+ d sigma\^2 / c_l must be > 0 "
                                         r"\(got L0 = 0\.0, sigma = 0\.0\)$"):
        theorem_2_step_size(1.0, 0.0, 3, 0.0, 1.0, 10)
    assert theorem_2_step_size(1.0, 0.5, 3, 0.0, 1.0, 4) == pytest.approx(1.0, rel=1e-15, abs=0)


def test_theorem_4_full_batch_by_hand_its_T_range_and_the_stochastic_step_limit():
    """Full batch, Delta0 = 2, tau = 1.5, L1 = 0.5, eta = 1.2 (< 1/L1 = 2), d = 3, sigma = 0.2, c_l = 0.5:
    (1 - eta/(2 tau))^T Delta0 + tau L1 eta d sigma^2 / c_l = 0.6^3 * 2 + 0.9 * 0.24 = 0.432 + 0.216 at T = 3,
    and Delta0 + 0.216 at T = 0 (no step taken; T >= 0 is the theorem's range, T = -1 is refused).
    Stochastic (b < n): eta <= tau is inclusive. At tau = eta = 2, L1 = 0.25 (1/L1 = 4, 1/(2 L1) = 2)
    the contraction (1 - eta/tau)^T is 0 and the bound is tau L1 eta G^2 / 2 = 0.5 G^2 with
    G^2 = 4 + 0.24 (L0 = 2); eta = 3 > tau is refused, naming eta and tau."""
    full = dict(d=3, sigma=0.2, c_l=0.5, b=4, n=4)
    assert theorem_4_bound(2.0, 1.5, 0.5, 1.2, T=3, **full) == pytest.approx(0.432 + 0.216, rel=1e-14, abs=0)
    assert theorem_4_bound(2.0, 1.5, 0.5, 1.2, T=0, **full) == pytest.approx(2.216, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_4_bound: T must be >= 0 \(got T = -1, short by 1\)$"):
        theorem_4_bound(2.0, 1.5, 0.5, 1.2, T=-1, **full)
    stoch = dict(d=3, sigma=0.2, c_l=0.5, L0=2.0, b=1, n=4)
    assert theorem_4_bound(5.0, 2.0, 0.25, 2.0, T=3, **stoch) == pytest.approx(0.5 * 4.24, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_4_bound: the stochastic case \(b < n\) needs eta <= tau "
                                         r"\(got eta = 3, tau = 2\)$"):
        theorem_4_bound(5.0, 2.0, 0.25, 3.0, T=3, **stoch)


def test_theorem_4_T_at_the_edges_of_its_range():
    """T = log(n^2 eps^2 c_l / (d L0^2 log(1/delta))), refused unless > 0:
    - n = eps = d = L0 = c_l = 1, delta = 1/2: T = log(1 / log 2) = 0.3665 (in (0, 1): accepted);
    - delta = 1/4: T = log(1 / log 4) = -0.3266 (in (-1, 0): refused);
    - n = 2, d = 4, delta = exp(-1) (log(1/delta) = 1 exactly in floats): T = log(4 / 4) = 0, refused
      as not positive;
    - delta = 1 is outside (0, 1): refused, naming delta."""
    assert theorem_4_T(n=1, eps=1.0, delta=0.5, d=1, L0=1.0) == pytest.approx(-math.log(math.log(2.0)), rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_4_T: T = log\(.*\) = -0\.326634 is not positive$"):
        theorem_4_T(n=1, eps=1.0, delta=0.25, d=1, L0=1.0)
    with pytest.raises(ValueError, match=r"^theorem_4_T: T = log\(.*\) = 0 is not positive$"):
        theorem_4_T(n=2, eps=1.0, delta=math.exp(-1.0), d=4, L0=1.0)
    with pytest.raises(ValueError, match=r"^theorem_4_T: delta must be in \(0, 1\) \(got 1\.0\)$"):
        theorem_4_T(n=1000, eps=1.0, delta=1.0, d=3, L0=1.0)


def test_theorem_5_by_hand_with_an_initial_gap_other_than_1():
    """Delta0 = 3, L1 = 2, d = 3, sigma = 0.5, T = 10, c_l = 0.5: full batch 2 L1 Delta0 / T + d sigma^2 / c_l
    = 1.2 + 1.5; b < n (L0 = 2): L1 Delta0 / T + (L0^2 + d sigma^2 / c_l) / 2 = 0.6 + 5.5 / 2."""
    assert theorem_5_bound(3.0, 2.0, 3, 0.5, 10, c_l=0.5, L0=2.0, b=10, n=10) == pytest.approx(2.7, rel=1e-14, abs=0)
    assert theorem_5_bound(3.0, 2.0, 3, 0.5, 10, c_l=0.5, L0=2.0, b=2, n=10) == pytest.approx(3.35, rel=1e-14, abs=0)


# ----------------------------------------------------------------------------- survivors of the bounds mutation run
def test_lemma_1_accepts_rounding_noise_at_diameter_zero():
    """D = 0 (all three points equal) is inside the lemma's range (0 <= b, c <= D). Sides computed as
    distances between equal points can come out as rounding noise, e.g. 1e-13; the rounding allowance
    is 1e-12 max(1, D), absolute below D = 1, so such a side is accepted at D = 0. The bound is then
    zeta(kappa_min, 0) b^2 + c^2 - 2 b c cos A with zeta(-1, 0) = lim x/tanh x = 1, c = 0:
    (1e-13)^2 = 1e-26. A side of 1e-9 at D = 0 is well beyond rounding and refused."""
    assert lemma_1_bound(1e-13, 0.0, 0.0, -1.0, 0.0) == pytest.approx(1e-26, rel=1e-12, abs=0)
    assert lemma_1_bound(0.0, 1e-13, 0.0, -1.0, 0.0) == pytest.approx(1e-26, rel=1e-12, abs=0)
    with pytest.raises(ValueError, match=r"^lemma_1_bound: the sides must not exceed the diameter D \(got b = 1e-09, "):
        lemma_1_bound(1e-9, 0.0, 0.0, -1.0, 0.0)


def test_theorem_3_refuses_an_output_other_than_3():
    """Theorem 3 of 001 is about output 3 of Algorithm 1 (the 2/(t+1)-weighted average); outputs 1
    and 2 are refused, naming the function and the output (the same settings with output 3 give
    31.8 / 17.5, test_theorems_2_and_3_by_hand_where_every_constant_shows)."""
    assert theorem_3_bound(2.5, 3.0, 5, 0.4, 1.5, 7, c_l=0.5, output=3) == pytest.approx(31.8 / 17.5, rel=1e-14, abs=0)
    for out in (1, 2):
        with pytest.raises(ValueError, match=rf"^theorem_3_bound: the theorem is about Algorithm 1 with output 3 "
                                             rf"\(got output={out}\)$"):
            theorem_3_bound(2.5, 3.0, 5, 0.4, 1.5, 7, c_l=0.5, output=out)


def test_theorem_4_pl_constant_limit_is_inclusive_and_refuses_below():
    """Theorem 4 needs tau >= 1/(2 L1) (an L1-smooth F with F - F* <= tau ||grad F||^2 has it). At L1 = 2,
    1/(2 L1) = 0.25: tau = 0.25 is accepted; full batch, Delta0 = 2, eta = 0.25 (< 1/L1 = 0.5), T = 2,
    d = 3, sigma = 0.2, c_l = 0.5: (1 - eta/(2 tau))^T Delta0 + tau L1 eta d sigma^2 / c_l
    = 0.5^2 * 2 + 0.25 * 2 * 0.25 * 0.24 = 0.5 + 0.03 = 0.53.
    tau = 0.2 lies below 1/(2 L1) (but above 1/(4 L1) = 0.125) and is refused, naming tau and 1/(2 L1)."""
    full = dict(d=3, sigma=0.2, T=2, c_l=0.5, b=4, n=4)
    assert theorem_4_bound(2.0, 0.25, 2.0, 0.25, **full) == pytest.approx(0.53, rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_4_bound: an L1-smooth F with F - F\* <= tau \|\|grad F\|\|\^2 has "
                                         r"tau >= 1/\(2 L1\) \(got tau = 0\.2, 1/\(2 L1\) = 0\.25\)$"):
        theorem_4_bound(2.0, 0.2, 2.0, 0.25, **full)


def test_theorem_4_stochastic_contraction_multiplies_the_initial_gap():
    """Theorem 4, b < n: (1 - eta/tau)^T Delta0 + (tau L1 eta / 2)(L0^2 + d sigma^2 / c_l) with a
    contraction that is neither 0 nor 1 and Delta0 != 1: Delta0 = 4, tau = 2, L1 = 0.5, eta = 1
    (< 1/L1 = 2, <= tau, tau >= 1/(2 L1) = 1), T = 2, L0 = 2, d = 3, sigma = 0.2, c_l = 0.5:
    (1/2)^2 * 4 + 0.5 * 2 * 0.5 * 1 * (4 + 0.24) = 1 + 2.12 = 3.12."""
    got = theorem_4_bound(4.0, 2.0, 0.5, 1.0, 3, 0.2, 2, 0.5, L0=2.0, b=1, n=4)
    assert got == pytest.approx(3.12, rel=1e-14, abs=0)


def test_theorem_4_T_with_eps_other_than_1():
    """The paper's T = log(n^2 eps^2 c_l / (d L0^2 log(1/delta))) with eps = 0.5 (so eps^2 = 0.25 differs
    from eps and from 1): n = 1000, delta = 1e-3, d = 3, L0 = 2, c_l = 0.5:
    log(1e6 * 0.25 * 0.5 / (3 * 4 * log 1000)) = log(125000 / (12 log 1000)) = log(1507.96...) = 7.3184..."""
    want = math.log(125000.0 / (12.0 * math.log(1000.0)))
    assert 7.318 < want < 7.319
    assert theorem_4_T(n=1000, eps=0.5, delta=1e-3, d=3, L0=2.0, c_l=0.5) == pytest.approx(want, rel=1e-14, abs=0)
