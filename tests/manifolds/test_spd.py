"""SPD(n), affine-invariant metric: the contract (reference and verified), equivalence of the twins,
and SPD-specific ground truth (proofs_notes/manifold_spd.md).

Points for the contract are drawn as Q diag(lambda) Q^T with log10(lambda) uniform on a drawn
interval [-r/2, r/2], r in [0, 6] (both ends present, so cond(X) = 10^r up to 1e6), and
tolerances scale with cond(X). Ground truth comes from constructions (commuting matrices,
X = I against scipy.linalg.expm/logm, congruence invariance, the hyperbolic law of cosines in the
totally geodesic plane of curvature -1/2, a Runge-Kutta solution of the parallel-transport ODE)
and from 50-digit mpmath oracles.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from prirfed.reference.manifolds import SPD as RefSPD
from prirfed.testing.manifold_contract import ManifoldContract, VerifiedEquivalence, contract_case, seeds
from prirfed.verified.manifolds import SPD as VerSPD
from prirfed.verified.manifolds import spd as vspd

mpmath.mp.dps = 50
EPS = 2.0**-52


# ---------------------------------------------------------------------------- helpers
def random_orthogonal(n, rng):
    """Haar orthogonal matrix (QR of a Gaussian with the sign of diag(R) fixed)."""
    Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))


def spd_with_spectrum(Q, lam):
    X = (Q * lam) @ Q.T
    return 0.5 * (X + X.T)


def spd_with_condition(n, rng, log10_cond):
    """Q diag(lambda) Q^T with log10(lambda) uniform in [-r/2, r/2] and both ends present."""
    u = rng.uniform(-0.5 * log10_cond, 0.5 * log10_cond, size=n)
    if n >= 2:
        u[0], u[1] = -0.5 * log10_cond, 0.5 * log10_cond
    return spd_with_spectrum(random_orthogonal(n, rng), 10.0**u)


def cond(X):
    w = np.linalg.eigvalsh(X)
    return float(w[-1] / w[0])


def sym(A):
    return 0.5 * (A + A.T)


def maxabs(A):
    return float(np.max(np.abs(A)))


# 50-digit oracles (mpmath only: no numpy linear algebra inside)
def mp_matrix(A):
    return mpmath.matrix([[mpmath.mpf(float(a)) for a in row] for row in np.asarray(A)])


def mp_symfun(S, f):
    """f(S) = Q diag(f(lambda)) Q^T for a symmetric mpmath matrix S (mpmath.eigsy)."""
    lam, Q = mpmath.eigsy(S)
    n = S.rows
    D = mpmath.zeros(n, n)
    for i in range(n):
        D[i, i] = f(lam[i])
    return Q * D * Q.T


def mp_dist(X, Y):
    """dist(X, Y) = ||logm(X^{-1/2} Y X^{-1/2})||_F at 50 digits."""
    L = mp_symfun(mp_matrix(X), lambda t: 1 / mpmath.sqrt(t))
    M = L * mp_matrix(Y) * L
    M = (M + M.T) / 2
    mu, _ = mpmath.eigsy(M)
    return mpmath.sqrt(sum(mpmath.log(m) ** 2 for m in mu))


def mp_log(X, Y):
    """Log_X(Y) = X^{1/2} logm(X^{-1/2} Y X^{-1/2}) X^{1/2} at 50 digits."""
    Xm = mp_matrix(X)
    R = mp_symfun(Xm, mpmath.sqrt)
    L = mp_symfun(Xm, lambda t: 1 / mpmath.sqrt(t))
    M = L * mp_matrix(Y) * L
    return R * mp_symfun((M + M.T) / 2, mpmath.log) * R


def mp_dist_2x2_quadratic(X, Y):
    """2 x 2: the generalised eigenvalues solve det(Y - mu X) = 0, a quadratic a mu^2 - b mu + c."""
    x11, x12, x22 = (mpmath.mpf(float(t)) for t in (X[0, 0], X[0, 1], X[1, 1]))
    y11, y12, y22 = (mpmath.mpf(float(t)) for t in (Y[0, 0], Y[0, 1], Y[1, 1]))
    a = x11 * x22 - x12 * x12
    b = x11 * y22 + x22 * y11 - 2 * x12 * y12
    c = y11 * y22 - y12 * y12
    disc = mpmath.sqrt(b * b - 4 * a * c)
    mu1, mu2 = (b + disc) / (2 * a), (b - disc) / (2 * a)
    return mpmath.sqrt(mpmath.log(mu1) ** 2 + mpmath.log(mu2) ** 2)


# ---------------------------------------------------------------------------- contract
class _SPDStrategies:
    """Points with cond(X) up to 1e6; tolerances proportional to eps * cond(X)."""

    max_log10_cond = 6.0

    def draw_point(self, data):
        rng = self.rng(data)
        if data.draw(st.booleans(), label="use random_point"):
            return self.manifold.random_point(rng)
        r = data.draw(st.floats(0.0, self.max_log10_cond), label="log10 cond")
        return spd_with_condition(self.manifold.n, rng, r)

    def tol(self, x):
        return 1e-9 + 2e-12 * cond(x)

    @given(data=st.data())
    def test_dist_is_a_metric(self, data):
        """The contract's identity (symmetry, positivity, triangle inequality) with a tolerance that
        sees every point: for two independent points the computed generalised eigenvalues of (Y, X)
        carry relative error ~ eps cond(M) <= eps cond(X) cond(Y), so dist(x, y) - dist(y, x) reaches
        about 1.6 eps cond(X) cond(Y) (1 + d) (measured over 3000 pairs with cond up to 1e6 each);
        the contract's tol(x) sees only x and failed in the thorough profile (verified twin,
        cond(X) = 1.6e5, cond(Y) = 9.6e5, |d(x,y) - d(y,x)| = 9e-6). The bound used is
        1e-14 cond(x) max(cond(y), cond(z)) (1 + d) on top of the contract's tol(x)."""
        M = self.manifold
        x, y, z = (self.draw_point(data) for _ in range(3))
        t = self.tol(x) + 1e-14 * cond(x) * max(cond(y), cond(z)) + 1e-14 * cond(y) * cond(z)
        dxy, dyx = M.dist(x, y), M.dist(y, x)
        assert abs(dxy - dyx) <= t * (1 + dxy)
        if maxabs(np.asarray(x) - np.asarray(y)) > 1e-6:
            assert dxy > 0
        assert M.dist(x, z) <= dxy + M.dist(y, z) + t * (1 + dxy + M.dist(y, z))

    def off_manifold(self, x):
        bad = np.array(x, dtype=float)
        bad[0, -1] += 1.0 + maxabs(x)  # not symmetric (for n = 1: shift below zero instead)
        if bad.shape == (1, 1):
            bad[0, 0] = -1.0
        return bad


TestSPDContract = contract_case("TestSPDContract", RefSPD(3), _SPDStrategies)


TestVerifiedSPDContract = contract_case("TestVerifiedSPDContract", VerSPD(3), _SPDStrategies)


class TestSPD1Contract(_SPDStrategies, ManifoldContract):
    """n = 1: SPD(1) = (0, inf) with metric u v / x^2, flat (isometric to R by log)."""

    manifold = RefSPD(1)


class _SPDEquivalence(VerifiedEquivalence):
    """Points of condition number 10^0..10^6; errors scale with cond(X)."""

    def draw_point(self, data):
        r = data.draw(st.floats(0.0, 6.0), label="log10 cond")
        return spd_with_condition(self.reference.n, self.rng(data), r)

    def scale(self, x):
        return cond(x)


class TestVerifiedSPDEqualsReference(_SPDEquivalence):
    reference = RefSPD(3)
    verified = VerSPD(3)


class TestVerifiedSPD6EqualsReference(_SPDEquivalence):
    """n = 6: the verified twin switches from its Jacobi eigensolver to LAPACK above n = 4."""

    reference = RefSPD(6)
    verified = VerSPD(6)


# ---------------------------------------------------------------------------- construction
@given(seed=seeds, n=st.integers(1, 5), r=st.floats(0.0, 6.0))
def test_basic_attributes_and_random_point(seed, n, r):
    """dim = n(n+1)/2, ambient (n, n), curvature (-1/2, 0) for n >= 2 and (0, 0) for n = 1,
    infinite injectivity radius; random_point is SPD and reproducible from the Generator."""
    M = RefSPD(n)
    assert M.dim == n * (n + 1) // 2 and M.ambient_shape == (n, n)
    assert M.curvature_bounds == ((-0.5, 0.0) if n >= 2 else (0.0, 0.0))
    x = M.random_point(np.random.default_rng(seed))
    M.check_point(x)
    np.testing.assert_array_equal(x, M.random_point(np.random.default_rng(seed)))
    assert M.injectivity_radius(x) == math.inf


@pytest.mark.parametrize("n", [0, -2, 2.5, True, "3"])
def test_bad_size_refused(n):
    with pytest.raises((ValueError, TypeError)):
        RefSPD(n)


# ---------------------------------------------------------------------------- closed forms
@given(seed=seeds, n=st.integers(1, 5), ra=st.floats(0.0, 6.0), rb=st.floats(0.0, 6.0))
def test_commuting_case_closed_forms(seed, n, ra, rb):
    """X = Q diag(a) Q^T, Y = Q diag(b) Q^T: dist = ||log(b/a)||_2, Log_X Y = Q diag(a log(b/a)) Q^T,
    Exp_X(Q diag(a s) Q^T) = Q diag(a e^s) Q^T, transport = Q diag(sqrt(b/a)) U diag(sqrt(b/a)) Q^T."""
    rng = np.random.default_rng(seed)
    Q = random_orthogonal(n, rng)
    a = 10.0 ** rng.uniform(-ra / 2, ra / 2, n)
    b = 10.0 ** rng.uniform(-rb / 2, rb / 2, n)
    X, Y = spd_with_spectrum(Q, a), spd_with_spectrum(Q, b)
    k = cond(X) * cond(Y)
    for M in (RefSPD(n), VerSPD(n)):
        d_true = float(np.linalg.norm(np.log(b / a)))
        assert abs(M.dist(X, Y) - d_true) <= 1e-13 * k + 1e-14 * d_true
        L_true = spd_with_spectrum(Q, a * np.log(b / a))
        assert maxabs(M.log(X, Y) - L_true) <= 1e-13 * k * (1 + maxabs(L_true))
        s = rng.uniform(-3, 3, n)
        assert maxabs(M.exp(X, spd_with_spectrum(Q, a * s)) - spd_with_spectrum(Q, a * np.exp(s))) <= 1e-13 * cond(X) * maxabs(a * np.exp(s))
        S = sym(rng.standard_normal((n, n)))
        U = Q @ np.diag(np.sqrt(a)) @ S @ np.diag(np.sqrt(a)) @ Q.T
        g = np.sqrt(b / a)
        T_true = Q @ np.diag(g) @ Q.T @ U @ Q @ np.diag(g) @ Q.T
        assert maxabs(M.transp(X, Y, sym(U)) - T_true) <= 1e-12 * k * (1 + maxabs(T_true))


@given(seed=seeds, n=st.integers(1, 5), scale=st.floats(0.01, 3.0))
def test_identity_base_point_reduces_to_scipy_expm_logm(seed, n, scale):
    """Exp_I(V) = expm(V) and Log_I(Y) = logm(Y): scipy.linalg.expm (Pade) / logm (Schur) as oracle."""
    rng = np.random.default_rng(seed)
    V = scale * sym(rng.standard_normal((n, n)))
    Y = RefSPD(n).random_point(rng)
    I = np.eye(n)
    E = scipy.linalg.expm(V)
    Lg = np.real(scipy.linalg.logm(Y))
    for M in (RefSPD(n), VerSPD(n)):
        assert maxabs(M.exp(I, V) - E) <= 1e-13 * cond(E) * maxabs(E)
        assert maxabs(M.log(I, Y) - Lg) <= 1e-12 * cond(Y) * (1 + maxabs(Lg))


@given(seed=seeds, r=st.floats(0.0, 4.0))
def test_affine_invariance_under_congruence(seed, r):
    """For invertible A: dist(AXA^T, AYA^T) = dist(X, Y), Exp/Log/transport are equivariant
    (A Exp_X(V) A^T = Exp_{AXA^T}(AVA^T), ...) and the metric is invariant."""
    rng = np.random.default_rng(seed)
    n = 3
    A = random_orthogonal(n, rng) @ np.diag(2.0 ** rng.uniform(-1, 1, n)) @ random_orthogonal(n, rng)
    X = spd_with_condition(n, rng, r)
    Y = spd_with_condition(n, rng, r)
    w, Q = np.linalg.eigh(X)
    Rh = (Q * np.sqrt(w)) @ Q.T
    V = sym(Rh @ sym(rng.standard_normal((n, n))) @ Rh)  # ||V||_X of order 1
    U = sym(Rh @ sym(rng.standard_normal((n, n))) @ Rh)

    def cg(B):
        return sym(A @ B @ A.T)

    k = cond(X) * cond(Y) * np.linalg.cond(A) ** 2
    for M in (RefSPD(n), VerSPD(n)):
        d = M.dist(X, Y)
        assert abs(M.dist(cg(X), cg(Y)) - d) <= 1e-13 * k * (1 + d)
        assert abs(M.inner(cg(X), cg(U), cg(V)) - M.inner(X, U, V)) <= 1e-13 * k * (1 + M.norm(X, U) * M.norm(X, V))
        Ev = M.exp(X, V)
        assert maxabs(M.exp(cg(X), cg(V)) - cg(Ev)) <= 1e-13 * k * maxabs(cg(Ev)) * math.exp(M.norm(X, V))
        Lxy = M.log(X, Y)
        assert maxabs(M.log(cg(X), cg(Y)) - cg(Lxy)) <= 1e-13 * k * (1 + maxabs(cg(Lxy)))
        T = M.transp(X, Y, U)
        assert maxabs(M.transp(cg(X), cg(Y), cg(U)) - cg(T)) <= 1e-13 * k * (1 + maxabs(cg(T)))


# ---------------------------------------------------------------------------- mpmath oracles
@settings(max_examples=25)
@given(seed=seeds, rx=st.floats(0.0, 6.0), ry=st.floats(0.0, 6.0))
def test_dist_matches_mpmath_2x2(seed, rx, ry):
    """2 x 2 dist against the roots of det(Y - mu X) = 0 at 50 digits. An eigh-based generalised
    eigenvalue mu_i has absolute error ~ eps * mu_max, so log mu_i has error ~ eps * cond(M) <=
    eps * cond(X) cond(Y): the bound is 1e-15 * cond(X) cond(Y) * (1 + dist)."""
    rng = np.random.default_rng(seed)
    X, Y = spd_with_condition(2, rng, rx), spd_with_condition(2, rng, ry)
    ref = mp_dist_2x2_quadratic(X, Y)
    for M in (RefSPD(2), VerSPD(2)):
        d = M.dist(X, Y)
        assert abs(mpmath.mpf(d) - ref) <= 1e-15 * cond(X) * cond(Y) * (1 + ref), (d, ref)


@settings(max_examples=15)
@given(seed=seeds, rx=st.floats(0.0, 4.0))
def test_dist_and_log_match_mpmath_3x3(seed, rx):
    """3 x 3 dist and Log against mpmath.eigsy-based matrix functions at 50 digits."""
    rng = np.random.default_rng(seed)
    X = spd_with_condition(3, rng, rx)
    Y = spd_with_condition(3, rng, rx)
    ref_d = mp_dist(X, Y)
    ref_L = np.array(mp_log(X, Y).tolist(), dtype=float)
    for M in (RefSPD(3), VerSPD(3)):
        assert abs(mpmath.mpf(M.dist(X, Y)) - ref_d) <= 1e-14 * cond(X) * cond(Y) * (1 + ref_d)
        assert maxabs(M.log(X, Y) - ref_L) <= 1e-14 * cond(X) * cond(Y) * (1 + maxabs(ref_L))


@pytest.mark.parametrize("delta", [1e-6, 1e-9, 1e-12, 1e-15])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearby_points_keep_full_relative_accuracy(delta, seed):
    """Y = X + delta * W: dist and Log have relative error ~ eps * cond(X), independent of delta
    (the log1p difference form). The naive sqrt(sum log^2 eigvalsh(X^-1/2 Y X^-1/2)) loses
    about log10(1/delta) digits; at delta = 1e-12 its relative error exceeds 1e-6 (shown below,
    so this test can fail if the implementation regresses to the naive form)."""
    rng = np.random.default_rng(seed)
    n = 3
    X = spd_with_condition(n, rng, 2.0)
    W = sym(rng.standard_normal((n, n)))
    Y = X + delta * W
    Y = sym(Y)
    D = Y - X  # exact: Sterbenz
    ref_d = mp_dist(X, Y)
    ref_L = mp_log(X, Y)
    ref_L = np.array(ref_L.tolist(), dtype=float)
    for M in (RefSPD(n), VerSPD(n)):
        d = M.dist(X, Y)
        assert abs(mpmath.mpf(d) - ref_d) <= 1e-13 * cond(X) * ref_d, (delta, d, ref_d)
        assert maxabs(M.log(X, Y) - ref_L) <= 1e-13 * cond(X) * maxabs(ref_L)
        # Log_X(X + D) = D - 1/2 D X^{-1} D + ...: first order term is D itself
        assert maxabs(M.log(X, Y) - D) <= 3 * maxabs(D) ** 2 * np.linalg.norm(np.linalg.inv(X), 2) + 1e-13 * cond(X) * maxabs(D)
    if delta == 1e-12:
        w, Q = np.linalg.eigh(X)
        L = (Q / np.sqrt(w)) @ Q.T
        naive = float(np.linalg.norm(np.log(np.linalg.eigvalsh(sym(L @ Y @ L)))))
        assert abs(mpmath.mpf(naive) - ref_d) > 1e-6 * ref_d


# ---------------------------------------------------------------------------- transport
def _geodesic_and_velocity(X, V, t):
    """gamma(t) = X^{1/2} expm(t A) X^{1/2}, gamma'(t) = X^{1/2} A expm(t A) X^{1/2}, A = X^{-1/2} V X^{-1/2}."""
    w, Q = np.linalg.eigh(X)
    R, L = (Q * np.sqrt(w)) @ Q.T, (Q / np.sqrt(w)) @ Q.T
    s, P = np.linalg.eigh(sym(L @ V @ L))
    g = R @ (P * np.exp(t * s)) @ P.T @ R
    dg = R @ (P * (s * np.exp(t * s))) @ P.T @ R
    return sym(g), sym(dg)


@settings(max_examples=10)
@given(seed=seeds, r=st.floats(0.0, 3.0))
def test_transport_solves_the_parallel_transport_ode(seed, r):
    """Parallel transport along gamma(t) = Exp_X(t Log_X Y) solves
    U' = 1/2 (gamma' gamma^{-1} U + U gamma^{-1} gamma') (the Levi-Civita connection of the
    affine-invariant metric, proofs note). Classical RK4 with 200 steps (error ~ h^4 ~ 1e-9)
    must agree with E U E^T."""
    rng = np.random.default_rng(seed)
    n = 3
    M = RefSPD(n)
    X = spd_with_condition(n, rng, r)
    Y = spd_with_condition(n, rng, r)
    V = M.log(X, Y)
    U0 = sym(rng.standard_normal((n, n)))

    def rhs(t, U):
        g, dg = _geodesic_and_velocity(X, V, t)
        B = np.linalg.solve(g, U)  # gamma^{-1} U
        return 0.5 * (dg @ B + B.T @ dg)

    steps = 200
    h = 1.0 / steps
    U = U0.copy()
    for i in range(steps):
        t = i * h
        k1 = rhs(t, U)
        k2 = rhs(t + h / 2, U + h / 2 * k1)
        k3 = rhs(t + h / 2, U + h / 2 * k2)
        k4 = rhs(t + h, U + h * k3)
        U = U + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    for Mm in (M, VerSPD(n)):
        T = Mm.transp(X, Y, U0)
        assert maxabs(T - U) <= 1e-6 * (1 + maxabs(U)), maxabs(T - U)


# ---------------------------------------------------------------------------- curvature
def _traceless_orthonormal_pair(theta):
    """Orthonormal (Frobenius) traceless symmetric 2 x 2 matrices U, V at angle theta apart."""
    H = np.diag([1.0, -1.0]) / math.sqrt(2)
    K = np.array([[0.0, 1.0], [1.0, 0.0]]) / math.sqrt(2)
    return H, math.cos(theta) * H + math.sin(theta) * K


@pytest.mark.parametrize("a,b,theta", [(0.3, 0.5, 0.7), (1.0, 2.0, 2.0), (3.0, 0.2, 1.2), (2.5, 2.5, math.pi / 2)])
def test_curvature_minus_half_attained_hyperbolic_law_of_cosines(a, b, theta):
    """The traceless directions at I span a totally geodesic plane of constant curvature -1/2
    (SL(2)/SO(2) = H^2 of radius sqrt 2): the triangle I, Exp_I(a U), Exp_I(b V) with angle theta
    obeys cosh(c/sqrt2) = cosh(a/sqrt2) cosh(b/sqrt2) - sinh(a/sqrt2) sinh(b/sqrt2) cos(theta)
    (mpmath oracle), so kappa_min = -1/2 is attained and a bound above -1/2 would be wrong."""
    U, V = _traceless_orthonormal_pair(theta)
    I = np.eye(2)
    for M in (RefSPD(2), VerSPD(2)):
        y, z = M.exp(I, a * U), M.exp(I, b * V)
        s2 = mpmath.sqrt(2)
        rhs = mpmath.cosh(a / s2) * mpmath.cosh(b / s2) - mpmath.sinh(a / s2) * mpmath.sinh(b / s2) * mpmath.cos(theta)
        c_true = s2 * mpmath.acosh(rhs)
        assert abs(mpmath.mpf(M.dist(y, z)) - c_true) <= 1e-13 * (1 + c_true)
        # and the comparison bound of Lemma A.2 with kappa_min = -1/2 holds (tight case)
        from prirfed.reference.manifolds import zeta
        c = M.dist(y, z)
        assert c * c <= zeta(-0.5, a) * b * b + a * a - 2 * a * b * math.cos(theta) + 1e-12


@pytest.mark.parametrize("a,b,theta", [(0.3, 0.5, 0.7), (1.0, 2.0, 2.0)])
def test_curvature_zero_attained_in_commuting_plane(a, b, theta):
    """Diagonal directions commute: the plane is flat and the Euclidean law of cosines holds exactly."""
    U = np.diag([1.0, 0.0, 0.0])
    V = math.cos(theta) * U + math.sin(theta) * np.diag([0.0, 1.0, 0.0])
    I = np.eye(3)
    M = RefSPD(3)
    c = M.dist(M.exp(I, a * U), M.exp(I, b * V))
    assert abs(c * c - (a * a + b * b - 2 * a * b * math.cos(theta))) <= 1e-13


@settings(max_examples=20)
@given(seed=seeds)
def test_sectional_curvature_from_small_triangles_lies_in_bounds(seed):
    """Sectional curvature of a random plane span(U, V) at a random X, from
    d^2(Exp tU, Exp tV) = 2 t^2 - (K/3) t^4 + O(t^6) (U, V orthonormal), equals the closed form
    K = -1/4 ||[A, B]||_F^2 (A, B = X^{-1/2} U X^{-1/2}, X^{-1/2} V X^{-1/2}) and lies in [-1/2, 0]."""
    rng = np.random.default_rng(seed)
    n = 3
    M = RefSPD(n)
    X = M.random_point(rng)
    w, Q = np.linalg.eigh(X)
    R = (Q * np.sqrt(w)) @ Q.T
    A = sym(rng.standard_normal((n, n)))
    A /= np.linalg.norm(A)
    B = sym(rng.standard_normal((n, n)))
    B -= np.sum(A * B) * A
    B /= np.linalg.norm(B)
    U, V = sym(R @ A @ R), sym(R @ B @ R)
    K_closed = -0.25 * np.linalg.norm(A @ B - B @ A) ** 2
    t = 2e-2
    d = M.dist(M.exp(X, t * U), M.exp(X, t * V))
    K_fd = 3 * (2 * t * t - d * d) / t**4
    assert abs(K_fd - K_closed) <= 2e-3
    lo, hi = M.curvature_bounds
    assert lo - 1e-12 <= K_closed <= hi + 1e-12


# ---------------------------------------------------------------------------- retraction
@given(seed=seeds, r=st.floats(0.0, 3.0))
def test_retraction_is_second_order_and_inverse_has_its_domain(seed, r):
    """||R_X(tV) - Exp_X(tV)|| = O(t^3) (halving t divides the gap by about 8); inv_retr refuses Y
    with 2Y - X not positive definite, naming the method and the eigenvalue."""
    rng = np.random.default_rng(seed)
    for M in (RefSPD(3), VerSPD(3)):
        X = spd_with_condition(3, np.random.default_rng(seed), r)
        V = M.random_tangent(X, rng)
        V = V / M.norm(X, V)
        gaps = [maxabs(M.retr(X, t * V) - M.exp(X, t * V)) / maxabs(X) for t in (1e-2, 5e-3)]
        assert gaps[1] <= gaps[0] / 8 * 1.3 + 1e-13 * cond(X), gaps
        # gap = ||X^{1/2}(expm(tA) - I - tA - t^2 A^2/2)X^{1/2}|| <= (t^3/6) e^t ||A||_2^3 ||X||_2, ||A||_F = 1
        assert gaps[0] <= 2e-6 * 3
        Y = 0.4 * X  # 2Y - X = -0.2 X: not positive definite
        with pytest.raises(ValueError, match=r"SPD\.inv_retr: .*2Y - X is not positive definite.*-2\.000e-01"):
            M.inv_retr(X, Y)


def test_retraction_formula_by_hand():
    """R_X(V) = X + V + 1/2 V X^{-1} V on a 2 x 2 example computed by hand."""
    X = np.diag([2.0, 4.0])
    V = np.array([[2.0, 2.0], [2.0, 0.0]])
    # V X^{-1} V = [[2,2],[2,0]] diag(1/2,1/4) [[2,2],[2,0]] = [[1, .5],[1, 0]] [[2,2],[2,0]] = [[3, 2],[2, 2]]
    expected = X + V + 0.5 * np.array([[3.0, 2.0], [2.0, 2.0]])
    for M in (RefSPD(2), VerSPD(2)):
        np.testing.assert_allclose(M.retr(X, V), expected, rtol=1e-15)
        np.testing.assert_allclose(M.inv_retr(X, expected), V, rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------- basis and sampling
@given(seed=seeds, n=st.integers(1, 4), r=st.floats(0.0, 6.0))
def test_tangent_basis_order_signs_and_sampler_law(seed, n, r):
    """E_k = X^{1/2} B_k X^{1/2} in row-major upper-triangle order, identical in both twins, so
    sum_k z_k E_k = X^{1/2} S X^{1/2} with S_ii = z_k and S_ij = S_ji = z_k / sqrt 2 (DESIGN.md
    section 3: S_ii ~ N(0, 1), S_ij ~ N(0, 1/2)); random_tangent is this sum in both twins."""
    rng = np.random.default_rng(seed)
    X = spd_with_condition(n, rng, r)
    w, Q = np.linalg.eigh(X)
    Rh = (Q * np.sqrt(w)) @ Q.T
    Er, Ev = RefSPD(n).tangent_basis(X), VerSPD(n).tangent_basis(X)
    assert Er.shape == Ev.shape == (n * (n + 1) // 2, n, n)
    assert maxabs(Er - Ev) <= 1e-12 * cond(X) * maxabs(Er)
    z = rng.standard_normal(n * (n + 1) // 2)
    S = np.zeros((n, n))
    k = 0
    for i in range(n):
        for j in range(i, n):
            if i == j:
                S[i, i] = z[k]
            else:
                S[i, j] = S[j, i] = z[k] / math.sqrt(2)
            k += 1
    target = Rh @ S @ Rh
    assert maxabs(np.tensordot(z, Er, axes=1) - target) <= 1e-12 * cond(X) * (1 + maxabs(target))
    tr = RefSPD(n).random_tangent(X, np.random.default_rng(seed + 1))
    tv = VerSPD(n).random_tangent(X, np.random.default_rng(seed + 1))
    assert maxabs(tr - tv) <= 1e-12 * cond(X) * (1 + maxabs(tr))


# ---------------------------------------------------------------------------- gradients and errata
@settings(max_examples=20)
@given(seed=seeds)
def test_frechet_gradient_of_000_and_erratum_of_001(seed):
    """f(X) = dist^2(X, Z): grad f(X) = -2 Log_X(Z) = -2 X^{1/2} logm(X^{-1/2} Z X^{-1/2}) X^{1/2}
    (000 section 6.2, correct; finite difference along Exp). 001 section 5.2 prints
    grad f(W; X_i) = W logm(W^{-1} X_i) = +Log_W(X_i): wrong sign and a lost factor 2, so its
    norm is dist, not 2 dist (the Lipschitz constant L_0 = D_W of 001 should be 2 D_W)."""
    rng = np.random.default_rng(seed)
    M = RefSPD(3)
    X, Z = M.random_point(rng), M.random_point(rng)
    V = M.random_tangent(X, rng)
    V /= M.norm(X, V)
    h = 1e-5
    fd = (M.dist(M.exp(X, h * V), Z) ** 2 - M.dist(M.exp(X, -h * V), Z) ** 2) / (2 * h)
    g000 = -2 * M.log(X, Z)
    assert abs(M.inner(X, g000, V) - fd) <= 1e-6 * (1 + abs(fd))
    g001 = np.real(X @ scipy.linalg.logm(np.linalg.solve(X, Z)))
    g001 = sym(g001)
    assert maxabs(g001 - M.log(X, Z)) <= 1e-10 * (1 + maxabs(g001))  # it is +Log_X(Z) ...
    assert abs(M.norm(X, g000) - 2 * M.dist(X, Z)) <= 1e-10 * (1 + M.dist(X, Z))  # ... and ||grad f|| = 2 dist
    assert abs(M.inner(X, g001, V) - fd) > 1e-3 * abs(fd) or abs(fd) < 1e-8


@given(seed=seeds, r=st.floats(0.0, 6.0))
def test_egrad2rgrad_is_X_symG_X_and_proj_is_sym(seed, r):
    """<egrad2rgrad(X, G), V>_X = <G, V>_Frobenius for every symmetric V (definition of the
    Riemannian gradient), checked on the whole tangent basis; proj(X, W) = sym(W)."""
    rng = np.random.default_rng(seed)
    n = 3
    X = spd_with_condition(n, rng, r)
    G = rng.standard_normal((n, n))
    for M in (RefSPD(n), VerSPD(n)):
        g = M.egrad2rgrad(X, G)
        for E in M.tangent_basis(X):
            assert abs(M.inner(X, g, E) - np.sum(G * E)) <= 1e-12 * cond(X) * (1 + maxabs(G)) * (1 + maxabs(E)) * (1 + maxabs(X))
        np.testing.assert_array_equal(M.proj(X, G), 0.5 * (G + G.T))


# ---------------------------------------------------------------------------- SPD(1)
@given(x=st.floats(1e-6, 1e6), y=st.floats(1e-6, 1e6), t=st.floats(-50, 50))
def test_spd1_is_the_log_line(x, y, t):
    """SPD(1): dist = |log(y/x)|, Exp_x(v) = x e^{v/x} (here v = t x; the relative condition number
    of e^t is |t|, hence the tolerance), Log_x(y) = x log(y/x) (flat, isometric to R by log)."""
    v = t * x
    for M in (RefSPD(1), VerSPD(1)):
        X, Y = np.array([[x]]), np.array([[y]])
        assert math.isclose(M.dist(X, Y), abs(math.log(y / x)), rel_tol=1e-14, abs_tol=1e-15)
        assert math.isclose(M.exp(X, np.array([[v]]))[0, 0], x * math.exp(v / x), rel_tol=4e-16 * (4 + abs(t)))
        assert math.isclose(M.log(X, Y)[0, 0], x * math.log(y / x), rel_tol=1e-13, abs_tol=1e-15 * x)


@pytest.mark.parametrize("cls", [RefSPD, VerSPD])
def test_exp_refuses_underflow_and_overflow(cls):
    """Exp_x(v) = x e^{v/x} with v/x = -16384 underflows to 0 (not a point) and with v/x = +16384
    overflows: both raise a ValueError naming SPD.exp instead of returning 0 or inf (found by the
    thorough profile of test_spd1_is_the_log_line)."""
    M = cls(1)
    X = np.array([[6.103515625e-05]])
    with pytest.raises(ValueError, match=r"SPD\.exp: .*eigenvalue -1\.638e\+04 < -708.*underflows"):
        M.exp(X, np.array([[-1.0]]))
    with pytest.raises(ValueError, match=r"SPD\.exp: the result overflows float64"):
        M.exp(X, np.array([[1.0]]))


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("cls", [RefSPD, VerSPD])
def test_bad_input_messages(cls):
    """Non-symmetric, indefinite, NaN, wrong shape: ValueError naming the method and the defect size."""
    M = cls(2)
    X = np.array([[2.0, 0.5], [0.5, 1.0]])
    with pytest.raises(ValueError, match=r"SPD\.check_point: matrix is not symmetric \(max \|X-X\^T\| = 1\.000e-02"):
        M.check_point(np.array([[2.0, 0.5], [0.49, 1.0]]))
    with pytest.raises(ValueError, match=r"SPD\.exp: x: matrix is not positive definite \(smallest eigenvalue -1\.000e\+00"):
        M.exp(np.diag([1.0, -1.0]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"SPD\.check_point: matrix is not positive definite \(smallest eigenvalue 0\.000e\+00"):
        M.check_point(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"SPD\.log: y has 1 non-finite entry"):
        M.log(X, np.array([[np.nan, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"SPD\.dist: y has shape \(3, 3\), expected \(2, 2\)"):
        M.dist(X, np.eye(3))
    with pytest.raises(ValueError, match=r"SPD\.exp: v: not a symmetric matrix.*max \|V-V\^T\| = 2\.000e\+00"):
        M.exp(X, np.array([[0.0, 1.0], [-1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"SPD\.check_tangent: v: not a symmetric"):
        M.check_tangent(X, np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"SPD\.transp: v: not a symmetric"):
        M.transp(X, X, np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"SPD\.inner: u"):
        M.inner(X, np.array([[0.0, 1.0], [0.0, 0.0]]), X)


@pytest.mark.parametrize("cls", [RefSPD, VerSPD])
def test_symmetry_tolerance_is_relative(cls):
    """The symmetry check scales with max|X|: a 1e-13 relative defect passes at every scale, 1e-8 fails."""
    M = cls(2)
    for s in (1e-8, 1.0, 1e8):
        X = s * np.array([[2.0, 0.5], [0.5, 1.0]])
        ok = X.copy()
        ok[0, 1] += 1e-13 * s
        M.check_point(ok)
        bad = X.copy()
        bad[0, 1] += 1e-8 * s
        with pytest.raises(ValueError, match="not symmetric"):
            M.check_point(bad)


@pytest.mark.parametrize("cls", [RefSPD, VerSPD])
def test_float64_breakdown_raises_instead_of_nan(cls):
    """Y = diag(1, 1e-320) is SPD (subnormal eigenvalue) but mu = 1 + nu rounds to 0: Log, dist and
    transport raise a ValueError with the eigenvalue instead of returning -inf or NaN."""
    M = cls(2)
    I, Y = np.eye(2), np.diag([1.0, 1e-320])
    for name, args in (("log", (I, Y)), ("dist", (I, Y)), ("transp", (I, Y, np.eye(2)))):
        with pytest.raises(ValueError, match=rf"SPD\.{name}: .*eigenvalue mu_min = 0\.000e\+00 <= 0"):
            getattr(M, name)(*args)


def test_batched_input_checked_per_matrix():
    """Stacks are validated matrix by matrix; the message names the index."""
    M = VerSPD(2)
    X = np.stack([np.eye(2), np.diag([1.0, -1.0])])
    with pytest.raises(ValueError, match=r"SPD\.dist_batch: row 1: y: matrix is not positive definite"):
        M.dist_batch(np.stack([np.eye(2)] * 2), X)
    with pytest.raises(ValueError, match=r"SPD\.exp_batch: V has shape \(2, 3, 3\)"):
        M.exp_batch(np.stack([np.eye(2)] * 2), np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match=r"SPD\.log_batch: stacks have different lengths"):
        M.log_batch(np.stack([np.eye(2)] * 2), np.stack([np.eye(2)] * 3))


# ---------------------------------------------------------------------------- kernels from njit code
@njit(cache=False)
def _sample_in_numba(x, z):
    E = vspd.tangent_basis_kernel(x)
    v = np.zeros_like(x)
    for k in range(z.shape[0]):
        v += z[k] * E[k]
    y = vspd.exp_kernel(x, v)
    return (vspd.inner_kernel(x, v, v), vspd.dist_kernel(x, y), vspd.log_kernel(x, y), vspd.proj_kernel(x, v),
            vspd.egrad2rgrad_kernel(x, v), vspd.transp_kernel(x, y, v), vspd.inv_retr_kernel(x, vspd.retr_kernel(x, 0.1 * v)))


def test_kernels_are_callable_from_njit_code():
    """Samplers and trainers call the kernels inside njit functions (no Python objects)."""
    rng = np.random.default_rng(7)
    M = RefSPD(3)
    x = M.random_point(rng)
    z = rng.standard_normal(6)
    nv2, d, lg, pv, eg, tv, ir = _sample_in_numba(x, z)
    v = np.tensordot(z, M.tangent_basis(x), axes=1)
    assert math.isclose(nv2, M.inner(x, v, v), rel_tol=1e-12)
    assert math.isclose(d, math.sqrt(nv2), rel_tol=1e-12)
    np.testing.assert_allclose(lg, v, atol=1e-12 * (1 + maxabs(v)))
    np.testing.assert_allclose(ir, 0.1 * v, atol=1e-12 * (1 + maxabs(v)))
    with pytest.raises(ValueError, match=r"SPD\.log"):
        vspd.log_kernel(np.eye(2), np.diag([1.0, 1e-320]))


@given(seed=seeds, n=st.integers(1, 4), r=st.floats(0.0, 12.0), indefinite=st.booleans())
def test_jacobi_eigensolver_of_the_verified_twin(seed, n, r, indefinite):
    """_jacobi_eigh (used by the verified twin for n <= 4): ascending eigenvalues equal to LAPACK's
    within 8 eps * max|lambda|, orthonormal eigenvectors, and V diag(w) V^T reproduces A, on graded
    spectra spanning up to 12 decades, definite or not; the zero matrix gives (0, I)."""
    rng = np.random.default_rng(seed)
    lam = 10.0 ** rng.uniform(-r / 2, r / 2, n)
    if indefinite:
        lam *= rng.choice([-1.0, 1.0], n)
    A = spd_with_spectrum(random_orthogonal(n, rng), lam)
    w, V = vspd._jacobi_eigh(A)
    big = maxabs(lam)
    assert np.all(np.diff(w) >= 0)
    assert maxabs(w - np.linalg.eigvalsh(A)) <= 8 * EPS * big * n
    assert maxabs(V.T @ V - np.eye(n)) <= 8 * EPS * n
    assert maxabs((V * w) @ V.T - A) <= 8 * EPS * big * n
    w0, V0 = vspd._jacobi_eigh(np.zeros((n, n)))
    assert np.all(w0 == 0) and np.all(V0 == np.eye(n))


def test_points_near_the_top_of_float64_are_checked_not_crashed():
    """A point with entries in [2^1023, 1.8e308) is refused or accepted with a ValueError at most, in
    both twins alike, never an OverflowError: the eigenvalue solvers scale by 2^k <= max|X| (2^(k+1)
    overflowed math.ldexp; found by the thorough fuzz run). Known answer: X = 1.5e308 I is a point
    (smallest eigenvalue 1.5e308), and Exp_X(0) = X."""
    X = 1.5e308 * np.eye(3)
    for M in (RefSPD(3), VerSPD(3)):
        np.testing.assert_array_equal(M.exp(X, np.zeros((3, 3))), X)
    D = np.diag([1.5e308, 1.0, 1.0]) + 1.0e308 * (np.ones((3, 3)) - np.eye(3))
    out = []
    for M in (RefSPD(3), VerSPD(3)):
        try:
            M.exp(D, np.zeros((3, 3)))
            out.append("ok")
        except ValueError as exc:
            out.append(str(exc))
    assert out[0] == out[1] and out[0] != "ok"  # not positive definite (smallest eigenvalue < 0)


def test_inv_retr_refuses_an_overflowing_congruence_in_both_twins():
    """X = 1e-310 X0 (subnormal entries) against a normal Y: X^(-1/2)(Y - X)X^(-1/2) is about 1e310,
    beyond float64. The reference refused with a NaN in an 'outside the image' message and the
    verified twin returned the zero matrix (its 2 x 2 eigen-solver gives 0 on inf entries); both now
    raise the same overflow message (thorough fuzz run, 2026-11-25)."""
    R = RefSPD(2)
    x = R.random_point(np.random.default_rng(1))
    y = R.exp(x, 1e-12 * np.eye(2))
    msgs = []
    for M in (R, VerSPD(2)):
        with pytest.raises(ValueError, match=r"SPD.inv_retr: 2 X\^\(-1/2\)\(Y - X\)X\^\(-1/2\) is not finite") as e:
            M.inv_retr(1e-310 * x, y)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    # at 1e-300 the congruence (about 1e300) is finite: both twins agree on a finite result
    a, b = R.inv_retr(1e-300 * x, y), VerSPD(2).inv_retr(1e-300 * x, y)
    assert np.all(np.isfinite(a))
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=0)


def _rotated_pair():
    """X = Q diag(1/16, 16) Q^T and P = q2 q2^T, q2 the second column of Q = [[3/5, 4/5], [4/5, -3/5]]:
    X^(-1/2) (c P) X^(-1/2) = (c/16) P, so ||c P||_X = c/16 and <c P, c' P>_X = c c' / 256 (closed
    forms), while X^(-1/2) has entries near 2.6 along the other direction."""
    Q = np.array([[0.6, 0.8], [0.8, -0.6]])
    return Q @ np.diag([1.0 / 16.0, 16.0]) @ Q.T, np.outer(Q[:, 1], Q[:, 1])


def test_norm_and_inner_near_the_top_of_float64_have_their_closed_forms_in_both_twins():
    """||U||_F = 1.7e308: the congruence X^(-1/2) U X^(-1/2) formed directly overflows in a partial
    sum (checked below, both routes) although ||U||_X = 1.06e307 is finite; the reference returned it and the
    verified twin refused (thorough fuzz run). Both now scale by powers of two first
    (``scaled_congruence``) and agree with the closed form; an inner product that itself overflows
    is refused alike in both twins, and one that does not is returned."""
    X, P = _rotated_pair()
    c = 1.7e308
    U = c * P
    _, L = vspd.sqrtm_and_invsqrtm_kernel(X)
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(L @ U @ L))  # the unscaled routes overflow
        assert not np.all(np.isfinite(vspd.lal_kernel(L, U)))
    for M in (RefSPD(2), VerSPD(2)):
        assert M.norm(X, U) == pytest.approx(c / 16, rel=1e-13, abs=0)
        with pytest.raises(ValueError, match=r"^SPD\.inner: the result overflows float64 \(got inf\)$"):
            M.inner(X, U, U)  # c^2 / 256 = 1.1e614
        small = math.ldexp(c, -1100) * P  # 1.3e-23 along the same direction
        assert M.inner(X, U, small) == pytest.approx(c / 256 * math.ldexp(c, -1100), rel=1e-13, abs=0)
        assert M.norm(X, math.ldexp(1.0, -1060) * P) == pytest.approx(math.ldexp(1.0, -1064), rel=1e-13, abs=0)


def test_scaled_congruence_equals_the_direct_product_in_the_normal_range():
    """In the normal range the power-of-two scaling is exact: 2^k A equals L U L bit for bit in the
    reference (so no published number moves), and the verified twin's A and k equal the reference's
    to rounding."""
    from prirfed.reference.manifolds.spd import scaled_congruence

    rng = np.random.default_rng(7)
    for n in (1, 2, 5):
        for _ in range(20):
            L = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-3, 3)
            L = L + L.T
            U = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-30, 30)
            U = U + U.T
            A, k = scaled_congruence(L, U)
            np.testing.assert_array_equal(np.ldexp(A, k), L @ U @ L)
            Av, kv = vspd.scaled_congruence_kernel(L, U)
            assert kv == k
            np.testing.assert_allclose(Av, A, rtol=1e-12, atol=1e-12 * np.max(np.abs(A)))
    A, k = scaled_congruence(np.eye(2), np.zeros((2, 2)))
    assert k == 0 and not np.any(A)


def test_twins_agree_outside_the_kernel_domain_and_batches_equal_single_calls():
    """X = I, Y = diag(1, 1e-10): mu_min / mu_max = 1e-10 < KERNEL_MU_RATIO, so the verified class
    methods and batches take the reference's answer (bit-identical), which has the closed forms
    Log_I(Y) = diag(0, log 1e-10), dist = |log 1e-10|, transport E V E^T = Y^(1/2) V Y^(1/2). A
    nearly singular X (an integer matrix of rank 4 whose float64 smallest eigenvalue is 1.9e-16)
    against a normal Y gets the same outcome from both twins (the verified kernel's eigen-solver
    accepted what the reference refuses: fuzz suite). Log's tolerance is the float64 bound of its
    difference form, eps / mu_min = 2e-6 absolute in log mu_min (proofs note)."""
    assert 1e-10 < vspd.KERNEL_MU_RATIO
    R, V = RefSPD(2), VerSPD(2)
    X, Y = np.eye(2), np.diag([1.0, 1e-10])
    W = np.array([[1.0, 2.0], [2.0, 3.0]])
    for M in (R, V):
        np.testing.assert_allclose(M.log(X, Y), np.diag([0.0, math.log(1e-10)]), rtol=0, atol=2.3e-6)
        assert M.dist(X, Y) == pytest.approx(-math.log(1e-10), abs=2.3e-6)
        s = np.sqrt(np.diag(Y))
        np.testing.assert_allclose(M.transp(X, Y, W), W * np.outer(s, s), rtol=1.2e-6, atol=0)  # sqrt(mu): eps / (2 mu)
    np.testing.assert_array_equal(V.log(X, Y), R.log(X, Y))
    np.testing.assert_array_equal(V.transp(X, Y, W), R.transp(X, Y, W))
    Xs, Ys, Ws = np.stack([X, X]), np.stack([Y, 2 * X]), np.stack([W, W])
    np.testing.assert_array_equal(V.log_batch(Xs, Ys), np.stack([V.log(X, Y), V.log(X, 2 * X)]))
    np.testing.assert_array_equal(V.dist_batch(Xs, Ys), [V.dist(X, Y), V.dist(X, 2 * X)])
    np.testing.assert_array_equal(V.transp_batch(Xs, Ys, Ws), np.stack([V.transp(X, Y, W), V.transp(X, 2 * X, W)]))
    Z = np.array([[1, 0, 1, 1, -1], [0, 1, 0, -1, 0], [1, 0, 2, 1, -1], [1, -1, 1, 2, -1], [-1, 0, -1, -1, 3]])
    Y5 = RefSPD(5).random_point(np.random.default_rng(924676))
    outcomes = []
    for M in (RefSPD(5), VerSPD(5)):
        try:
            outcomes.append(("ok", M.log(Z, Y5)))
        except ValueError as exc:
            outcomes.append(("error", str(exc)))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        np.testing.assert_array_equal(outcomes[0][1], outcomes[1][1])
    else:
        assert outcomes[0][1] == outcomes[1][1]


def test_batch_screen_sends_points_scaled_into_the_subnormals_to_the_single_check():
    """A point times 1e-318 has a relative smallest eigenvalue well above the screen's margin, but the
    single check's lambda_min underflows to 0 and refuses it: the screen passed such rows and the
    batch returned a result where the single call refuses (fuzz suite). The batch now refuses with
    the single call's message."""
    R, V = RefSPD(5), VerSPD(5)
    x = R.random_point(np.random.default_rng(3))
    y = 1e-318 * np.diag([1.0, 1e-7, 1.0, 1.0, 1.0])  # lambda_min 1e-325 underflows to 0
    with pytest.raises(ValueError) as single:
        V.log(x, y)
    with pytest.raises(ValueError) as batch:
        V.log_batch(x[None], y[None])
    assert str(batch.value) == "SPD.log_batch: row 0: " + str(single.value)[len("SPD.log: "):]


# ---------------------------------------------------------------------------- limits and defaults
def test_spd_random_point_is_the_matrix_exponential_of_the_scaled_symmetric_gaussian():
    """spd_random_point(n, rng, scale) = expm(scale sym(G)) for the generator's G (scipy's expm, a
    Pade approximant, is the independent oracle), at the default scale 1/2 and at 0.3."""
    from prirfed.reference.manifolds.spd import spd_random_point

    for kw, scale in (({}, 0.5), ({"scale": 0.3}, 0.3)):
        G = np.random.default_rng(11).standard_normal((3, 3))
        want = scipy.linalg.expm(scale * 0.5 * (G + G.T))
        got = spd_random_point(3, np.random.default_rng(11), **kw)
        np.testing.assert_allclose(got, want, rtol=0, atol=16 * EPS * np.max(np.abs(want)))


@pytest.mark.parametrize("cls", [RefSPD, VerSPD])
def test_exp_underflow_limit_at_minus_708_on_both_sides(cls):
    """Exp refuses X^(-1/2) V X^(-1/2) with an eigenvalue below -708 (exp underflows to a non-normal
    number there): on SPD(1) at X = 1, Exp(-708) = exp(-708) (mpmath) is returned, the limit itself
    included, as is Exp(-700); the next double below -708 is refused (the tests had never come near
    the limit)."""
    M = cls(1)
    one = np.array([[1.0]])
    for s in (-708.0, -700.0):
        want = float(mpmath.exp(s))
        got = M.exp(one, np.array([[s]]))
        assert abs(got[0, 0] - want) <= 4 * EPS * want, s
    with pytest.raises(ValueError, match=r"SPD\.exp: X\^\(-1/2\) V X\^\(-1/2\) has eigenvalue -7\.080e\+02 < -708\.0"):
        M.exp(one, np.array([[math.nextafter(-708.0, -math.inf)]]))


def test_repr_names_the_size():
    """repr(SPD(n)) is the constructor call."""
    assert repr(RefSPD(2)) == "SPD(2)" and repr(RefSPD(5)) == "SPD(5)"


@pytest.mark.parametrize("cls", [RefSPD, VerSPD])
def test_log_and_dist_at_the_switch_to_the_direct_form_on_both_sides(cls):
    """_generalised_eigh switches from log1p(nu) to log(mu) where the largest nu = mu - 1 passes -1/2:
    at X = diag(4, 1), Y = diag(4 m, 1/4) (so X^(-1/2) Y X^(-1/2) = diag(m, 1/4)) with m = 1/2 and
    1/2 (1 -+ 1e-12), Log_X(Y) = diag(4 log m, log(1/4)) and dist = sqrt(log^2 m + log^2 4) (50 digits,
    diagonal matrices by hand) to a few eps on both sides."""
    M = cls(2)
    X = np.diag([4.0, 1.0])
    for m in (0.5, 0.5 * (1 - 1e-12), 0.5 * (1 + 1e-12)):
        Y = np.diag([4.0 * m, 0.25])
        lm, l4 = mpmath.log(mpmath.mpf(4.0 * m) / 4), mpmath.log(mpmath.mpf(0.25))
        np.testing.assert_allclose(M.log(X, Y), np.diag([float(4 * lm), float(l4)]), rtol=0, atol=16 * EPS)
        want = float(mpmath.sqrt(lm**2 + l4**2))
        assert abs(M.dist(X, Y) - want) <= 4 * EPS * want


def test_eigh_is_exact_under_power_of_two_scaling_down_to_subnormal_entries():
    """_eigh divides by a power of two near max |A| before LAPACK and scales the eigenvalues back, so a
    matrix 2^e A' has exactly the eigenvectors of A' and the eigenvalues 2^e w' (rounded once), from
    the top of the float64 range (e = 1000) down to subnormal entries (e = -1040, -1060, -1074). Without the
    scaling LAPACK's own eigenvalues of the subnormal matrix are off by 5.7e-10 (e = -1040) and 8e-4
    (e = -1060), relative (200 random 4 x 4 matrices, a throwaway check); a mutant that skipped the
    scaling for max |A| <= 1 survived the full manifolds run before this test."""
    from prirfed.reference.manifolds.spd import _eigh

    rng = np.random.default_rng(5)
    for _ in range(20):
        G = rng.normal(size=(4, 4))
        A = G @ G.T + 0.1 * np.eye(4)
        for e in (1000, -1040, -1060):
            As = np.ldexp(A, e)
            A1 = np.ldexp(As, -e)  # the stored matrix, back in the normal range: exact
            w, Q = _eigh(As)
            w1, Q1 = _eigh(A1)
            assert np.array_equal(Q, Q1), e
            assert np.array_equal(w, np.ldexp(w1, e)), e
    # entries at the very bottom: 2^-1074 (the least subnormal) and its multiples, exact. The scale is
    # 2^k <= max < 2^(k+1); for max = 2^-1074 half of it rounds to 0 (a division by zero)
    for A in (np.array([[2.0, 1.0], [1.0, 3.0]]), np.eye(2)):  # max |A| 2^-1072.4 and 2^-1074: scales 2^-1073, 2^-1074
        w, Q = _eigh(np.ldexp(A, -1074))
        w1, Q1 = _eigh(A)
        assert np.array_equal(Q, Q1) and np.array_equal(w, np.ldexp(w1, -1074))


@pytest.mark.parametrize("twin", ["reference", "verified"])
def test_sqrtm_is_exactly_homogeneous_under_powers_of_four(twin):
    """(4^j X)^{1/2} = 2^j X^{1/2} and (4^j X)^{-1/2} = 2^-j X^{-1/2} bit for bit, from entries near the
    top of the float64 range (j = 510) down to subnormal ones (j = -520, -530: entries about 1e-319;
    compared with the stored matrix scaled back, which is exact), and X^{1/2} of the subnormal matrix
    against mpmath (40 digits) to 1e-14. Before, the eigenvalues were scaled back before the square root and rounded into the subnormals: X^{1/2} was off by 1.3e-5
    relative at j = -530 (reference; 2.4e-5 verified), and a matrix with an eigenvalue beyond float64
    but entries inside had an infinite square root."""
    from prirfed.reference.manifolds.spd import sqrtm_and_invsqrtm

    f = sqrtm_and_invsqrtm if twin == "reference" else vspd.sqrtm_and_invsqrtm_kernel
    rng = np.random.default_rng(11)
    mpmath.mp.dps = 40
    for _ in range(5):
        G = rng.normal(size=(4, 4))
        A = G @ G.T + 0.1 * np.eye(4)
        A = A / np.max(np.abs(A))  # entries in (0, 1]: its own scale is 4^-1 or 4^0
        for j in (510, 100, -100, -520, -530):
            X = np.ldexp(A, 2 * j)
            A1 = np.ldexp(X, -2 * j)  # the stored matrix back at unit scale (exact; = A unless X rounded)
            H, Hi = f(A1)
            Hj, Hij = f(X)
            assert np.array_equal(Hj, np.ldexp(H, j)), j
            assert np.array_equal(Hij, np.ldexp(Hi, -j)), j
        X = np.ldexp(A, -1060)  # subnormal entries (about 14 significant bits): the oracle uses X as stored
        Xm = mpmath.matrix([[mpmath.mpf(float(t)) for t in row] for row in X])
        E, Q = mpmath.eigsy(Xm)
        Sm = Q * mpmath.diag([mpmath.sqrt(e) for e in E]) * Q.T
        want = np.array([[float(Sm[i, k]) for k in range(4)] for i in range(4)])
        got, _ = f(X)
        assert np.max(np.abs(got - want)) <= 1e-14 * np.max(np.abs(want))
    # entries inside float64, eigenvalue 1.9 * 2^1023 beyond it: the square roots are finite
    X = np.array([[1.0, 0.9], [0.9, 1.0]]) * 2.0**1023
    H, Hi = f(X)
    assert np.all(np.isfinite(H)) and np.all(np.isfinite(Hi))
    assert abs(H[0, 0] - (math.sqrt(1.9) + math.sqrt(0.1)) / 2 * 2.0**511.5) <= 1e-14 * H[0, 0]


def test_the_symmetry_tolerance_is_1e_10_of_the_largest_entry_on_both_sides():
    """check_point and check_tangent accept max |X - X^T| <= 1e-10 max |X| (the documented relative
    symmetry tolerance, SYMMETRY_RTOL) and refuse anything above it, for points and tangent vectors
    at scales 1 and 2^600: a defect of 0.9e-10 of the largest entry passes, 1.1e-10 is refused with
    the defect and the tolerance in the message (a tolerance of 2e-10 or 5e-11 survived the full
    manifolds run before this test)."""
    M = RefSPD(3)
    base = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    for scale in (1.0, 2.0**600):
        X = base * scale
        for frac, ok in ((0.9e-10, True), (1.1e-10, False)):
            Y = X.copy()
            Y[0, 1] += frac * 4.0 * scale  # the largest entry is 4 * scale
            V = Y - np.diag(np.diag(Y)) + np.eye(3) * scale  # a tangent vector with the same defect
            V[0, 0] = 4.0 * scale
            if ok:
                M.check_point(Y)
                M.check_tangent(X, V)
            else:
                with pytest.raises(ValueError, match=r"^SPD\.check_point: .*matrix is not symmetric \(max \|X-X\^T\| = "
                                                     r".*, tolerance .* = 1e-10 \* max\|X\|\)"):
                    M.check_point(Y)
                with pytest.raises(ValueError, match=r"not a symmetric matrix, so not in T_X SPD .*1e-10 \* max\|V\|\)"):
                    M.check_tangent(X, V)


def test_exp_refuses_by_its_two_documented_rules_on_both_sides():
    """Exp_I(diag(s_1, s_2)) = diag(e^s_1, e^s_2). Two documented refusals:
    the smallest eigenvalue of X^(-1/2) V X^(-1/2) below EXP_ARG_MIN = -708 (e^s would underflow):
    diag(-710, 1) is refused by that rule even though the largest is fine; and a result with
    lambda_min <= PD_MARGIN n eps lambda_max (64 * 2 * 2.2e-16 = 2.84e-14 for n = 2): e^-31 = 3.4e-14
    of lambda_max passes, e^-31.4 = 2.3e-14 is refused with the rule in the message. (A check of the
    largest eigenvalue instead of the smallest, and margins of 32 or 128, survived the full manifolds
    run before this test.)"""
    M = RefSPD(2)
    eye = np.eye(2)
    with pytest.raises(ValueError, match=r"^SPD\.exp: X\^\(-1/2\) V X\^\(-1/2\) has eigenvalue -7\.100e\+02 < -708\.0: "):
        M.exp(eye, np.diag([-710.0, 1.0]))
    Y = M.exp(eye, np.diag([-31.0, 0.0]))
    assert Y[0, 0] == pytest.approx(math.exp(-31.0), rel=1e-13, abs=0) and Y[1, 1] == pytest.approx(1.0, rel=1e-15, abs=0)
    with pytest.raises(ValueError, match=r"^SPD\.exp: the result is not positive definite to working accuracy in float64 "
                                         r"\(eigenvalues in \[2\.3\d\de-14, 1\.000e\+00\], lambda_min <= 64 n eps lambda_max; "
                                         r"X\^\(-1/2\) V X\^\(-1/2\) has eigenvalues in \[-31\.4, 0\], so cond\(result\) is about "
                                         r"cond\(X\) e\^31\.4\): its condition number is beyond float64$"):
        M.exp(eye, np.diag([-31.4, 0.0]))


def test_a_matrix_that_is_not_positive_definite_is_refused_with_its_smallest_eigenvalue_at_any_scale():
    """check_point names the smallest eigenvalue of a symmetric matrix that is not positive definite,
    computed on the matrix divided by a power of two near its largest entry and scaled back: diag(-3, 5)
    times 2^k has smallest eigenvalue -3 * 2^k, shown to 4 digits, for k = 0, 100, -100 and 1000 (a
    result divided by the scale instead of multiplied survived the manifolds run: the tests had only
    checked the verdict)."""
    M = RefSPD(2)
    for k in (0, 100, -100, 1000):
        want = -3.0 * 2.0**k
        with pytest.raises(ValueError, match=rf"^SPD\.check_point: .*matrix is not positive definite \(smallest eigenvalue "
                                             rf"{want:.3e} <= 0\)".replace("+", "\\+")):
            M.check_point(np.diag([-3.0, 5.0]) * 2.0**k)
    for n in (1, 2):  # the zero matrix takes the unscaled branch; its smallest eigenvalue is 0
        with pytest.raises(ValueError, match=r"^SPD\.check_point: matrix is not positive definite \(smallest eigenvalue 0\.000e\+00 <= 0\)$"):
            RefSPD(n).check_point(np.zeros((n, n)))


def test_retraction_maps_refuse_with_their_own_messages():
    """Three refusals, each by its own check and message (deleting or weakening any of them survived the
    manifolds run, another check downstream refusing the same input with another message):
    inv_retr's image check reads the smallest eigenvalue of X^(-1/2)(2Y - X)X^(-1/2): at X = I,
    Y = diag(0.25, 1) it is 2 * 0.25 - 1 = -0.5 while the largest is 1; retr's overflow check at
    X = V = 1e308 I (X + V overflows); proj validates its base point (diag(1, -1) is not positive
    definite, smallest eigenvalue -1)."""
    M = RefSPD(2)
    with pytest.raises(ValueError, match=r"^SPD\.inv_retr: y is outside the image of the retraction: 2Y - X is not positive "
                                         r"definite \(smallest eigenvalue of X\^\(-1/2\)\(2Y - X\)X\^\(-1/2\) = -5\.000e-01 <= 0\)$"):
        M.inv_retr(np.eye(2), np.diag([0.25, 1.0]))
    with pytest.raises(ValueError, match=r"^SPD\.retr: the result overflows float64 \(max finite entry 0\.000e\+00; 2 entries are inf or NaN\)$"):
        M.retr(np.eye(2) * 1e308, np.eye(2) * 1e308)
    with pytest.raises(ValueError, match=r"^SPD\.proj: x: matrix is not positive definite \(smallest eigenvalue -1\.000e\+00 <= 0\)$"):
        M.proj(np.diag([1.0, -1.0]), np.ones((2, 2)))
