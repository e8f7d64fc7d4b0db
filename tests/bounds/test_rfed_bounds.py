"""Bounds of 002 (reference/bounds/rfed_bounds.py): Lemma 6, Theorems 7 and 9, checked against
RFedSVRG (prirfed.reference.trainers.rfed.rfedsvrg) under the theorems' settings. All runs are
deterministic given the seed (no noise; agent sampling is irrelevant with tau_i = 1, since every
agent then uploads Exp_{x_t}(-eta grad f(x_t))), so no statistical tolerance is involved."""

import math

import numpy as np
import pytest

from prirfed.reference.bounds.rfed_bounds import (
    lemma_6_bound,
    theorem_7_bound,
    theorem_7_bound_printed,
    theorem_9_bound,
    theorem_9_bound_printed,
)
from prirfed.reference.manifolds import SPD, Euclidean, Sphere
from prirfed.reference.manifolds.base import zeta
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.trainers.aggregation import tangent_mean
from prirfed.reference.trainers.rfed import rfedsvrg


@pytest.mark.parametrize("name", ["sphere", "spd"])
def test_lemma_6_on_sphere_and_spd(name):
    """d(x_{t+1}, x_t) <= (1/k) sum_i d(x^(i), x_t) for the tangent space mean (8), 200 random
    configurations (k = 1..6; on the sphere the points are within pi/2 of x_t so that Log and the
    Exp of the mean are minimising)."""
    M = Sphere(3) if name == "sphere" else SPD(3)
    rng = np.random.default_rng(21)
    for _ in range(200):
        x = M.random_point(rng)
        k = int(rng.integers(1, 7))
        pts = []
        for _ in range(k):
            v = M.random_tangent(x, rng)
            r = rng.uniform(0.01, 1.5)
            pts.append(M.exp(x, r * v / M.norm(x, v)))
        xn = tangent_mean(M, x, pts)
        bound = lemma_6_bound([M.dist(p, x) for p in pts])
        assert M.dist(xn, x) <= bound * (1 + 1e-10) + 1e-12


def test_lemma_6_is_tight_for_collinear_points():
    """Equality when all Log_{x_t}(x^(i)) point the same way (the Cauchy-Schwarz step is then an
    equality), and the symmetric configuration of 002 Fig. 1 gives x_{t+1} = x_t."""
    M = Sphere(2)
    x = np.array([0.0, 0.0, 1.0])
    a = 1.2
    pts = [np.array([math.sin(a), 0.0, math.cos(a)]), np.array([-math.sin(a), 0.0, math.cos(a)])]
    assert M.dist(tangent_mean(M, x, pts), x) <= 1e-12
    same = [pts[0], M.exp(x, 0.5 * M.log(x, pts[0]))]
    assert M.dist(tangent_mean(M, x, same), x) == pytest.approx(lemma_6_bound([M.dist(p, x) for p in same]), rel=1e-12, abs=0)


def sphere_pca_instance():
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((24, 4)) * np.array([1.5, 1.0, 0.6, 0.2])
    P = SpherePCA([Z[:8], Z[8:16], Z[16:]])
    lam = np.linalg.eigvalsh(P.A)
    return P, lam, 2 * (lam[-1] - lam[0])  # L: |d^2/dt^2 F| along unit-speed great circles


@pytest.mark.parametrize("eta_frac", [1.0, 0.5, 0.1])
@pytest.mark.parametrize("k", [1, 3])
def test_theorem_7_rfedsvrg_on_sphere_pca(eta_frac, k):
    """Nonconvex sphere PCA f = -x^T A x (smooth with L = 2 (lambda_max - lambda_min)), Option 1,
    tau_i = 1, eta = eta_frac / L: min_{t<T} ||grad f(x_t)||^2 <= Delta0 / (T eta (1 - eta L / 2))."""
    P, lam, L = sphere_pca_instance()
    x0 = np.array([1.0, 1.0, 1.0, 1.0]) / 2
    Delta0 = P.f(x0) + lam[-1]
    T, eta = 12, eta_frac / L
    res = rfedsvrg(P, x0, T, k, eta, 1, np.random.default_rng(0), option=1, record_every=1)
    assert res.history.rounds == list(range(T + 1))
    g2 = np.asarray(res.history.grad_norm[:T]) ** 2
    assert g2.min() <= theorem_7_bound(Delta0, L, eta, T, option=1, tau=1)


def test_theorem_7_printed_rate_fails_for_small_steps():
    """E41. The proof of Theorem 7 of 002 uses f(x_{t+1}) - f(x_t) <= -||grad f||^2/(2L) "by taking
    eta <= 1/L", true only at eta = 1/L. On f = ||x - abar||^2/2 on R^2 (L = 1), tau_i = 1,
    eta = 0.01, T = 20: min_t ||grad f(x_t)||^2 = (1 - eta)^(2(T-1)) 2 Delta0 = 1.37 Delta0, above
    the printed 2 L Delta0 / T = 0.1 Delta0 (for any fixed C, C L Delta0 / T fails once eta is small enough);
    the corrected Delta0 / (T eta (1 - eta L/2)) = 5.03 Delta0 holds."""
    rng = np.random.default_rng(2)
    data = [rng.standard_normal((3, 2)) for _ in range(2)]
    P = FrechetMean(Euclidean(2), data)
    abar = np.concatenate(data).mean(axis=0)
    x0 = abar + np.array([1.0, 2.0])
    Delta0 = P.f(x0) - P.f(abar)
    T, eta, L = 20, 0.01, 1.0
    res = rfedsvrg(P, x0, T, 2, eta, 1, np.random.default_rng(0), option=1, record_every=1)
    assert res.history.rounds == list(range(T + 1))
    g2 = np.asarray(res.history.grad_norm[:T]) ** 2
    assert g2.min() == pytest.approx((1 - eta) ** (2 * (T - 1)) * 2 * Delta0, rel=1e-9, abs=0)
    assert g2.min() > 10 * theorem_7_bound_printed(Delta0, L, eta, T)
    assert g2.min() <= theorem_7_bound(Delta0, L, eta, T)


def test_theorem_9_rfedsvrg_on_spd_frechet_mean():
    """Geodesically convex f_i (dist^2/2 on SPD(2)), tau_i = 1, S_t = [n], Option 1, eta = 1/(2L) with
    L = zeta(-1/2, R_W + R_DATA) (Hessian of dist^2/2 <= s coth s): f(x_T) - f* <= the corrected
    explicit bound <= (24). Assumption 2's set is B(I, R_W), diameter D = 2 R_W, checked on every iterate."""
    M = SPD(2)
    rng = np.random.default_rng(8)
    c = np.eye(2)
    R_DATA, R_W = 0.4, 1.0

    def pt(r):
        v = M.random_tangent(c, rng)
        return M.exp(c, r * rng.uniform(0, 1) * v / M.norm(c, v))

    data = [np.array([pt(R_DATA) for _ in range(4)]) for _ in range(3)]
    P = FrechetMean(M, data)
    x0 = pt(R_DATA)
    xs = P.x_star
    fs = P.f(xs)
    L = zeta(-0.5, R_W + R_DATA)
    D = 2 * R_W
    eta = 1 / (2 * L)
    for T in (1, 3, 10):
        res = rfedsvrg(P, x0, T, 3, eta, 1, np.random.default_rng(0), option=1, keep_iterates=True, record_every=1)
        assert max(M.dist(c, w) for w in res.history.iterates) <= R_W
        lhs = P.f(res.x) - fs
        b = theorem_9_bound(P.f(x0) - fs, M.dist(x0, xs), L, eta, T, -0.5, D, k=3, n=3)
        assert lhs <= b
        if T > 1:
            assert b <= theorem_9_bound_printed(L, eta, T, -0.5, D, k=3, n=3)


def test_preconditions_raise_naming_the_violated_one():
    with pytest.raises(ValueError, match="theorem_7_bound: Theorem 7 needs eta <= 1/L"):
        theorem_7_bound(1.0, 2.0, 0.6, 5)
    with pytest.raises(ValueError, match="theorem_7_bound: the theorem is about Algorithm 1 with Option 1"):
        theorem_7_bound(1.0, 2.0, 0.1, 5, option=2)
    with pytest.raises(ValueError, match="theorem_7_bound: the theorem needs tau_i = 1"):
        theorem_7_bound(1.0, 2.0, 0.1, 5, tau=[1, 2])
    with pytest.raises(ValueError, match="theorem_9_bound: Theorem 9 needs full participation"):
        theorem_9_bound(1.0, 0.5, 1.0, 0.1, 5, -1.0, 1.0, k=2, n=3)
    with pytest.raises(ValueError, match="theorem_9_bound: Theorem 9 needs eta <= 1/\\(2L\\)"):
        theorem_9_bound(1.0, 0.5, 1.0, 0.6, 5, -1.0, 1.0)
    with pytest.raises(ValueError, match="theorem_9_bound: d\\(x_0, x\\*\\) must not exceed"):
        theorem_9_bound(1.0, 2.0, 1.0, 0.1, 5, -1.0, 1.0)
    with pytest.raises(ValueError, match="theorem_9_bound_printed: \\(24\\) divides by zeta"):
        theorem_9_bound_printed(1.0, 0.1, 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="lemma_6_bound: distances must be finite and >= 0"):
        lemma_6_bound([0.1, -1.0])
    with pytest.raises(ValueError, match="lemma_6_bound: distances must be a non-empty 1-D array"):
        lemma_6_bound([])


def test_theorem_7_step_size_limit_is_inclusive_up_to_its_rounding_allowance():
    """eta <= 1/L is checked with a relative allowance of 1e-12 for rounding, inclusive: eta = 1/L and
    eta = (1/L)(1 + 1e-12) are accepted (at eta = 1/L the bound is 2 L Delta0 / T), a larger eta
    is refused."""
    L = 3.0
    assert theorem_7_bound(1.5, L, 1.0 / L, 10) == pytest.approx(2 * L * 1.5 / 10, rel=1e-15, abs=0)
    assert math.isfinite(theorem_7_bound(1.5, L, 1.0 / L * (1 + 1e-12), 10))
    with pytest.raises(ValueError, match="Theorem 7 needs eta <= 1/L"):
        theorem_7_bound(1.5, L, 1.0 / L * (1 + 1e-9), 10)


# ----------------------------------------------------------------------------- every constant visible (issue 18)
def test_theorem_9_and_24_by_hand_with_curvature():
    """zeta = zeta(-1, 2) = 2 / tanh 2 (by hand), Delta0 = 0.7, dist0 = 1.5, L = 0.5, eta = 0.8 (<= 1/(2L) = 1),
    T = 4, D = 2: corrected ((zeta - 1) Delta0 + dist0^2 / (2 eta)) / (zeta + T - 1)
    = ((zeta - 1) 0.7 + 2.25 / 1.6) / (zeta + 3); printed (24) zeta D^2 / (2 eta (zeta + T - 2)) = 4 zeta / (1.6 (zeta + 2))."""
    z = 2.0 / math.tanh(2.0)
    assert theorem_9_bound(0.7, 1.5, 0.5, 0.8, 4, -1.0, 2.0) == pytest.approx(((z - 1) * 0.7 + 2.25 / 1.6) / (z + 3), rel=1e-14, abs=0)
    assert theorem_9_bound_printed(0.5, 0.8, 4, -1.0, 2.0) == pytest.approx(4 * z / (1.6 * (z + 2)), rel=1e-14, abs=0)


def test_theorem_9_limits_are_inclusive_up_to_their_rounding_allowance():
    """eta <= 1/(2L) and dist0 <= D are checked with a relative allowance of 1e-12, inclusive: at L = 0.5
    (1/(2L) = 1), eta = 1 + 1e-12 and dist0 = D (1 + 1e-12) are accepted, 1e-9 above is refused; the
    flat bound is then dist0^2 / (2 eta T)."""
    assert theorem_9_bound(1.0, 1.0, 0.5, 1.0 + 1e-12, 2, 0.0, 1.0) == pytest.approx(0.25, rel=1e-11, abs=0)
    assert theorem_9_bound(1.0, 1.0 + 1e-12, 0.5, 1.0, 2, 0.0, 1.0) == pytest.approx(0.25, rel=1e-11, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_9_bound: Theorem 9 needs eta <= 1/\(2L\) \(got eta = 1, 1/\(2L\) = 1\)$"):
        theorem_9_bound(1.0, 1.0, 0.5, 1.0 + 1e-9, 2, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"^theorem_9_bound: d\(x_0, x\*\) must not exceed the diameter D \(got 1 > 1\)$"):
        theorem_9_bound(1.0, 1.0 + 1e-9, 0.5, 1.0, 2, 0.0, 1.0)


def test_theorem_7_printed_bound_by_hand_and_the_tau_and_distance_checks():
    """The printed 2 L Delta0 / T at L = 3, Delta0 = 1.5, T = 10: 0.9 (any eta <= 1/L). tau_i = 1 for every
    agent may be given as a list; an empty tau is refused. lemma_6_bound takes a 1-D array only and
    refuses NaN, naming the function."""
    assert theorem_7_bound_printed(1.5, 3.0, 0.2, 10) == pytest.approx(0.9, rel=1e-15, abs=0)
    assert theorem_7_bound(1.5, 3.0, 0.2, 10, tau=[1, 1, 1]) == pytest.approx(1.5 / (10 * 0.2 * 0.7), rel=1e-14, abs=0)
    with pytest.raises(ValueError, match=r"^theorem_7_bound: the theorem needs tau_i = 1 local step for every agent \(got tau=\[\]\)$"):
        theorem_7_bound(1.5, 3.0, 0.2, 10, tau=[])
    assert lemma_6_bound([0.5, 1.0, 3.0]) == pytest.approx(1.5, rel=1e-15, abs=0)
    assert lemma_6_bound([0.0, 1.0]) == 0.5  # an uploaded point equal to x_t (distance 0) is allowed
    with pytest.raises(ValueError, match=r"^lemma_6_bound: distances must be a non-empty 1-D array \(got shape \(1, 2\)\)$"):
        lemma_6_bound([[0.1, 0.2]])
    with pytest.raises(ValueError, match=r"^lemma_6_bound: distances must be finite and >= 0 \(min = 0\.1\)$"):
        lemma_6_bound([0.1, math.nan])


# ----------------------------------------------------------------------------- survivors of the bounds mutation run
def test_theorem_9_refuses_option_2_and_more_than_one_local_step():
    """Theorem 9 of 002 is about Algorithm 1 with Option 1 and tau_i = 1 (like Theorem 7): option = 2 and
    tau = (1, 2) are refused by both theorem_9_bound and theorem_9_bound_printed, naming the function
    (the same arguments with the defaults are accepted: flat, ((zeta - 1) Delta0 + dist0^2/(2 eta))/(zeta + T - 1)
    = (0.25 / 0.2) / 5 = 0.25 at dist0 = 0.5, eta = 0.1, T = 5)."""
    assert theorem_9_bound(1.0, 0.5, 1.0, 0.1, 5, 0.0, 1.0) == pytest.approx(0.25, rel=1e-14, abs=0)
    for f, args in ((theorem_9_bound, (1.0, 0.5, 1.0, 0.1, 5, 0.0, 1.0)), (theorem_9_bound_printed, (1.0, 0.1, 5, 0.0, 1.0))):
        name = f.__name__
        with pytest.raises(ValueError, match=rf"^{name}: the theorem is about Algorithm 1 with Option 1 \(got option=2\)$"):
            f(*args, option=2)
        with pytest.raises(ValueError, match=rf"^{name}: the theorem needs tau_i = 1 local step for every agent "
                                             rf"\(got tau=\[1, 2\]\)$"):
            f(*args, tau=[1, 2])


def test_24_is_defined_at_zeta_1_and_T_2():
    """(24) zeta D^2 / (2 eta (zeta + T - 2)) divides by zeta + T - 2, which is 0 only at zeta = 1, T = 1.
    At zeta = 1 (kappa_min = 0) and T = 2 the divisor is 1 and the bound is D^2 / (2 eta): D = 2,
    eta = 0.5 = 1/(2L) at L = 1 gives 4 / 1 = 4."""
    assert theorem_9_bound_printed(1.0, 0.5, 2, 0.0, 2.0) == pytest.approx(4.0, rel=1e-15, abs=0)
