"""Stiefel(n, p) with the Euclidean metric: the contract, the verified twin, and Stiefel-specific checks.

Ground truths used here (none computed by the code under test):
- mpmath 50-digit evaluation of the literal geodesic formula (2.14) of Edelman, Arias & Smith;
- p = 1: the great circle of the unit sphere (closed forms, mpmath at 50 digits);
- the polar factor U W^T of the SVD X + V = U S W^T (for the polar retraction);
- the defining properties of QR (for the QR retraction) and of the tangent space / normal space;
- constructions: Y = Exp_X(V) with V known, planes with known curvature (rank-one sections).

Contract draws: points are drawn in the geodesic ball of radius R0 = 1.2 around a fixed centre
(the Euclidean metric is invariant under X -> Q X P, Q in O(n), P in O(p), so a fixed centre
loses no generality), so any two drawn points are closer than 2.4 < pi = injectivity radius,
where the Newton logarithm is certified (see proofs_notes/manifold_stiefel.md).
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import strategies as st

from prirfed.reference.manifolds import Stiefel as RefStiefel
from prirfed.reference.manifolds.stiefel import gauss_sectional_curvature
from prirfed.testing.manifold_contract import ManifoldContract, VerifiedEquivalence
from prirfed.verified.manifolds import Stiefel as VerStiefel

CENTER_SEED = 20261121
R0 = 1.2          # radius of the ball of drawn points (pairwise distances < 2 R0 = 2.4 < pi)
SMALL = 2.0       # small_radius: contract tangents have norm < 0.9 * SMALL = 1.8

SIZES = [(4, 2), (13, 3), (5, 3), (3, 2), (6, 1)]
TWINS = [RefStiefel, VerStiefel]
EPS_F = float(np.finfo(float).eps)


class _BallDraws:
    def draw_point(self, data):
        M = self.manifold if getattr(self, "manifold", None) is not None else self.reference
        c = M.random_point(np.random.default_rng(CENTER_SEED))
        v = M.random_tangent(c, self.rng(data))
        r = data.draw(st.floats(0.0, 1.0), label="radius fraction") * R0
        return M.exp(c, (r / np.linalg.norm(v)) * v)

    def small_radius(self, x):
        return SMALL

    def off_manifold(self, x):
        return 1.01 * np.asarray(x)  # X^T X = 1.0201 I


class TestStiefelContract(_BallDraws, ManifoldContract):
    manifold = RefStiefel(4, 2)


class TestVerifiedStiefelContract(_BallDraws, ManifoldContract):
    manifold = VerStiefel(4, 2)


class TestStiefelContractThinComplement(_BallDraws, ManifoldContract):
    """n - p < p: the reduced problem lives on St(p + k, p) with k = n - p < p."""
    manifold = VerStiefel(5, 3)


class TestVerifiedStiefelEqualsReference(_BallDraws, VerifiedEquivalence):
    reference = RefStiefel(4, 2)
    verified = VerStiefel(4, 2)


class TestVerifiedStiefelEqualsReferenceWine(_BallDraws, VerifiedEquivalence):
    reference = RefStiefel(13, 3)
    verified = VerStiefel(13, 3)


# ---------------------------------------------------------------------------- helpers
def _rand(M, seed, scale=None):
    rng = np.random.default_rng(seed)
    x = M.random_point(rng)
    v = M.random_tangent(x, rng)
    if scale is not None:
        v = v * (scale / np.linalg.norm(v))
    return x, v


def _sym(a):
    return 0.5 * (a + a.T)


def _mp_exp_eas(x, v, dps=50):
    """EAS (2.14) at 50 digits: [X, V] expm([[A, -S], [I, A]]) [expm(-A); 0]."""
    with mpmath.workdps(dps):
        X = mpmath.matrix(x.tolist())
        V = mpmath.matrix(v.tolist())
        n, p = x.shape
        A = X.T * V
        S = V.T * V
        B = mpmath.zeros(2 * p, 2 * p)
        for i in range(p):
            for j in range(p):
                B[i, j] = A[i, j]
                B[i, p + j] = -S[i, j]
                B[p + i, p + j] = A[i, j]
            B[p + i, i] = 1
        E = mpmath.expm(B)
        EA = mpmath.expm(-A)
        XV = mpmath.zeros(n, 2 * p)
        for i in range(n):
            for j in range(p):
                XV[i, j] = X[i, j]
                XV[i, p + j] = V[i, j]
        low = mpmath.zeros(2 * p, p)
        for i in range(p):
            for j in range(p):
                low[i, j] = EA[i, j]
        Y = XV * E * low
        return np.array([[float(Y[i, j]) for j in range(p)] for i in range(n)])


# ---------------------------------------------------------------------------- construction
def test_dimension_shapes_bounds_and_radius():
    M = RefStiefel(13, 3)
    assert M.dim == 13 * 3 - 6 and M.ambient_shape == (13, 3)
    assert M.curvature_bounds == (-0.5, 1.0)
    assert RefStiefel(6, 1).curvature_bounds == (1.0, 1.0)
    assert M.injectivity_radius() == math.pi
    assert M.exact_transport is False


@pytest.mark.parametrize("n,p", [(2, 2), (3, 4), (0, 1), (3, 0), (2.5, 1), (True, 1)])
def test_bad_sizes_raise(n, p):
    with pytest.raises(ValueError, match="Stiefel"):
        RefStiefel(n, p)


# ---------------------------------------------------------------------------- checks and proj
@pytest.mark.parametrize("cls", TWINS)
def test_check_point_and_tangent_tolerances(cls):
    M = cls(13, 3)
    x, v = _rand(M, 1)
    M.check_point(x + 1e-13)  # rounding-level defects are accepted
    with pytest.raises(ValueError, match=r"Stiefel\.check_point: X\^T X != I \(max \|X\^T X - I\| = 2\.0"):
        M.check_point(x * 1.01)
    M.check_tangent(x, v)
    bad = v + 1e-3 * x  # sym(X^T bad) = 1e-3 I
    with pytest.raises(ValueError, match=r"Stiefel\.check_tangent: v: not tangent \(max \|sym\(X\^T V\)\| = 1\.000e-03"):
        M.check_tangent(x, bad)
    with pytest.raises(ValueError, match=r"Stiefel\.exp: v: not tangent"):
        M.exp(x, bad)
    # the tangent tolerance is relative to ||V||: a huge tangent vector still passes
    M.check_tangent(x, 1e6 * v)


@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", SIZES)
def test_proj_is_the_orthogonal_projection_of_the_slides(cls, n, p):
    """004 slides: P_X W = X skew(X^T W) + (I - X X^T) W; W - P_X W = X S (S symmetric) is normal."""
    M = cls(n, p)
    rng = np.random.default_rng(7)
    for _ in range(5):
        x = M.random_point(rng)
        w = rng.standard_normal((n, p))
        P = M.proj(x, w)
        slides = x @ (0.5 * (x.T @ w - w.T @ x)) + (np.eye(n) - x @ x.T) @ w
        np.testing.assert_allclose(P, slides, atol=1e-13)
        S = x.T @ (w - P)  # normal part is X S with S symmetric
        np.testing.assert_allclose(S, S.T, atol=1e-13)
        np.testing.assert_allclose(x @ S, w - P, atol=1e-13)
        u = M.random_tangent(x, rng)
        assert abs(np.sum((w - P) * u)) < 1e-12 * (1 + np.linalg.norm(w)) * (1 + np.linalg.norm(u))
        np.testing.assert_allclose(M.egrad2rgrad(x, w), P, atol=0)


# ---------------------------------------------------------------------------- exp
@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", [(4, 2), (3, 2), (5, 3)])
def test_exp_matches_mpmath_eas_formula(cls, n, p):
    """Exp equals EAS (2.14) evaluated with mpmath at 50 digits (|V| up to 4, beyond pi)."""
    M = cls(n, p)
    for seed, s in [(1, 0.3), (2, 1.5), (3, 4.0)]:
        x, v = _rand(M, seed, s)
        np.testing.assert_allclose(M.exp(x, v), _mp_exp_eas(x, v), atol=2e-14 * (1 + s))


@pytest.mark.parametrize("n,p", SIZES)
def test_exp_agrees_with_literal_eas_and_stays_on_manifold_for_long_vectors(n, p):
    M = RefStiefel(n, p)
    V = VerStiefel(n, p)
    for seed in range(4):
        for s in (1e-9, 0.7, 5.0, 20.0):
            x, v = _rand(M, 100 + seed, s)
            y = M.exp(x, v)
            # expm of a skew matrix of norm ~ 2|V|: orthonormal to a few eps * |V|
            assert np.abs(y.T @ y - np.eye(p)).max() < 1e-13 + 2e-14 * s
            assert np.abs(V.exp(x, v) - y).max() < 1e-13 * (1 + s)
            # the literal (2.14) loses orthogonality like eps * ||V||^2; compare with that scale
            assert np.abs(M.exp_eas(x, v) - y).max() < 1e-13 * (1 + s) ** 2


@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", [(4, 2), (13, 3), (5, 3)])
def test_exp_is_a_geodesic_with_initial_velocity_v(cls, n, p):
    """Gamma(t) = Exp_X(tV): Gamma(0) = X, Gamma'(0) = V, Gamma'' + Gamma (Gamma'^T Gamma') = 0 (EAS (2.7))."""
    M = cls(n, p)
    x, v = _rand(M, 11, 1.3)
    h = 1e-3
    g = lambda t: M.exp(x, t * v)
    np.testing.assert_allclose((g(h) - g(-h)) / (2 * h), v, atol=1e-5)
    for t in (0.4, 1.0, 2.5):
        d1 = (g(t + h) - g(t - h)) / (2 * h)
        d2 = (g(t + h) - 2 * g(t) + g(t - h)) / h**2
        resid = d2 + g(t) @ (d1.T @ d1)
        assert np.abs(resid).max() < 1e-5, f"geodesic equation residual {np.abs(resid).max():.2e} at t={t}"
        # constant speed
        assert abs(np.linalg.norm(d1) - np.linalg.norm(v)) < 1e-5


@pytest.mark.parametrize("cls", TWINS)
def test_p1_is_the_unit_sphere(cls):
    """St(n, 1) = S^{n-1}: Exp = cos|v| x + sin|v| v/|v|, Log = theta (y - cos theta x)/sin theta (mpmath 50 digits)."""
    M = cls(6, 1)
    for seed, s in [(1, 1e-8), (2, 0.5), (3, 2.0), (4, 3.0)]:
        x, v = _rand(M, seed, s)
        with mpmath.workdps(50):
            nv = mpmath.sqrt(sum(mpmath.mpf(float(a)) ** 2 for a in v.ravel()))
            c, sn = mpmath.cos(nv), mpmath.sin(nv)
            ref = np.array([[float(c * mpmath.mpf(float(a)) + sn * mpmath.mpf(float(b)) / nv)]
                            for a, b in zip(x.ravel(), v.ravel())])
        y = M.exp(x, v)
        np.testing.assert_allclose(y, ref, atol=2e-16 * 8)
        lg = M.log(x, y)
        np.testing.assert_allclose(lg, v, atol=1e-13 * (1 + s), rtol=1e-9)
        # sphere distance 2 atan2(|x - y|, |x + y|)
        d = 2 * math.atan2(np.linalg.norm(x - y), np.linalg.norm(x + y))
        assert abs(M.dist(x, y) - d) < 1e-13 * (1 + d) + 1e-7 * d


def test_skew_expm_and_its_frechet_derivative_match_independent_oracles():
    """expm_skew against mpmath.expm (50 digits); frechet_expm_skew (Daleckii-Krein) against
    scipy.linalg.expm_frechet (Al-Mohy & Higham), including a repeated eigenvalue (B = 0) and a
    large norm."""
    import scipy.linalg

    from prirfed.reference.manifolds.stiefel import expm_skew, frechet_expm_skew, skew_eig

    rng = np.random.default_rng(5)
    for m, sc in [(1, 1.0), (2, 1e-9), (4, 1.0), (6, 3.0), (10, 10.0)]:
        B = rng.standard_normal((m, m))
        B = sc * (B - B.T)
        E = rng.standard_normal((m, m))
        with mpmath.workdps(50):
            ref = np.array(mpmath.expm(mpmath.matrix(B.tolist())).tolist(), dtype=float)
        assert np.abs(expm_skew(B) - ref).max() < 1e-14 * (1 + sc * m)
        L = frechet_expm_skew(skew_eig(B), E)
        assert np.abs(L - scipy.linalg.expm_frechet(B, E, compute_expm=False)).max() < 1e-13 * (1 + sc * m)
    Z = np.zeros((3, 3))
    E = rng.standard_normal((3, 3))
    np.testing.assert_allclose(frechet_expm_skew(skew_eig(Z), E), E, atol=1e-15)  # L(0, E) = E


@pytest.mark.parametrize("cls", TWINS)
def test_exp_stays_orthonormal_at_steps_up_to_the_exp_domain_limit(cls):
    """Exp_X(V) with ||V|| from 1e12 up to 4.5e15 (below EXP_MAX_STEP = 2^52 = 4.5036e15) is on St(n, p):
    max |Y^T Y - I| <= 64 eps, in 300 draws. The spectral exponential alone leaves a defect of about
    (eps ||B|| / gap)^2 there (up to 0.99 at 4e15), and each Newton-Schulz step only squares a small
    one: the reference must iterate until the defect is at 16 eps. Its cap of 12 steps was too few
    for one draw here ((5, 2) at 4e15, which needs 17): Exp refused a valid input with "not on
    St(5, 2) ... 1.989e-01". A stop test of 16 / eps (after one step) survived the manifolds run
    before this test; it left up to 2.4e-5 at 1e14 in nine draws. The verified twin uses its own expm
    (scaling and squaring), checked here alike."""
    rng = np.random.default_rng(1)
    for n, p in [(6, 3), (5, 2), (9, 4), (20, 5), (4, 1)]:
        M = cls(n, p)
        for _ in range(60):
            x = M.random_point(rng)
            v = M.proj(x, rng.standard_normal((n, p)))
            for size in (1e12, 1e14, 1e15, 4e15, 4.5e15):
                y = M.exp(x, v * (size / np.linalg.norm(v)))
                defect = float(np.max(np.abs(y.T @ y - np.eye(p))))
                assert defect <= 64 * EPS_F, (n, p, size, defect)


# ---------------------------------------------------------------------------- log
@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", SIZES)
def test_log_recovers_known_tangent_vectors(cls, n, p):
    """Y = Exp_X(V) with |V| < pi built first; Log_X(Y) = V, dist = |V| (also at 1e-9)."""
    M = cls(n, p)
    for seed, s in [(1, 1e-9), (2, 1e-4), (3, 0.8), (4, 2.0), (5, 2.8)]:
        x, v = _rand(M, 300 + seed, s)
        y = M.exp(x, v)
        lg = M.log(x, y)
        assert np.abs(lg - v).max() <= 1e-11 * (1 + s) + 1e-9 * s, f"|V| = {s}: error {np.abs(lg - v).max():.2e}"
        assert abs(M.dist(x, y) - s) <= 1e-11 * (1 + s) + 1e-9 * s


@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", [(6, 1), (4, 2), (13, 3)])
def test_log_raises_instead_of_guessing_far_away(cls, n, p):
    """Y = -X is farther than the injectivity radius pi: log and dist raise ValueError."""
    M = cls(n, p)
    x, _ = _rand(M, 5)
    for meth in ("log", "dist"):
        with pytest.raises(ValueError, match=rf"Stiefel\.{meth}: .*(did not converge|injectivity radius)"):
            getattr(M, meth)(x, -x)


def _scaled_cases(M, base):
    """(s, x, v) for step scales s = 0.1, 1, 5: a point and a tangent vector of norm about s (seeds base + 1..3)."""
    for seed, s in [(1, 0.1), (2, 1.0), (3, 5.0)]:
        x, v = _rand(M, base + seed, s)
        yield s, x, v


# ---------------------------------------------------------------------------- retractions
@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", SIZES)
def test_polar_retraction_is_the_polar_factor_and_inverts(cls, n, p):
    M = cls(n, p)
    for s, x, v in _scaled_cases(M, 400):
        y = M.retr_polar(x, v)
        U, _, Wt = np.linalg.svd(x + v, full_matrices=False)
        np.testing.assert_allclose(y, U @ Wt, atol=1e-13 * (1 + s) ** 2)
        np.testing.assert_allclose(M.retr(x, v), y, atol=0)
        np.testing.assert_allclose(M.inv_retr_polar(x, y), v, atol=1e-12 * (1 + s) ** 3)
        np.testing.assert_allclose(M.inv_retr(x, y), v, atol=1e-12 * (1 + s) ** 3)


@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("n,p", SIZES)
def test_qr_retraction_is_qf_with_positive_diagonal_and_inverts(cls, n, p):
    M = cls(n, p)
    for s, x, v in _scaled_cases(M, 500):
        y = M.retr_qr(x, v)
        assert np.abs(y.T @ y - np.eye(p)).max() < 1e-14 * (1 + s)
        Rm = y.T @ (x + v)
        assert np.abs(np.tril(Rm, -1)).max() < 1e-13 * (1 + s)
        assert np.all(np.diag(Rm) > 0)
        np.testing.assert_allclose(y @ Rm, x + v, atol=1e-13 * (1 + s))
        np.testing.assert_allclose(M.inv_retr_qr(x, y), v, atol=1e-12 * (1 + s) ** 3)


@pytest.mark.parametrize("cls", TWINS)
def test_inverse_retractions_raise_where_they_do_not_exist(cls):
    M = cls(6, 2)
    x, _ = _rand(M, 9)
    # Y = -X: M = X^T Y = -I, P = -I (not positive definite), R = -I (negative diagonal)
    with pytest.raises(ValueError, match=r"Stiefel\.inv_retr_polar: .*lambda_min\(P\) = -1\.000e\+00"):
        M.inv_retr_polar(x, -x)
    with pytest.raises(ValueError, match=r"Stiefel\.inv_retr_qr: .*R\[0,0\] = -1\.000e\+00"):
        M.inv_retr_qr(x, -x)
    # Y orthogonal to X: X^T Y = 0, both linear systems are singular
    xp = np.linalg.qr(x, mode="complete")[0][:, 2:4]
    with pytest.raises(ValueError, match=r"Stiefel\.inv_retr_polar: .*is singular \(sep = sigma_min\(I kron M \+ M kron I\) = [0-9.]+e-1[4-9]"):
        M.inv_retr_polar(x, xp)
    with pytest.raises(ValueError, match=r"Stiefel\.inv_retr_qr: the leading 1x1 block of X\^T Y is singular"):
        M.inv_retr_qr(x, xp)
    with pytest.raises(ValueError, match=r"Stiefel\.inv_retr: "):
        M.inv_retr(x, -x)


def test_retractions_approximate_exp_to_the_documented_order():
    """|R_X(tV) - Exp_X(tV)| = O(t^3) for the polar (second-order) retraction, O(t^2) for QR
    (the pair Li & Ma used as approximate exp/log). Ratios e(t)/e(t/2) -> 8 and 4."""
    M = RefStiefel(13, 3)
    x, v = _rand(M, 21, 1.0)
    err = lambda r, t: np.linalg.norm(r(x, t * v) - M.exp(x, t * v))
    t = 0.02
    rp = err(M.retr_polar, t) / err(M.retr_polar, t / 2)
    rq = err(M.retr_qr, t) / err(M.retr_qr, t / 2)
    assert 7.5 < rp < 8.5, rp
    assert 3.8 < rq < 4.2, rq


# ---------------------------------------------------------------------------- transport
@pytest.mark.parametrize("cls", TWINS)
def test_projection_transport_is_not_an_isometry(cls):
    """transp = P_Y(V): in T_Y, linear, and (documented) not norm preserving."""
    M = cls(4, 2)
    x, v = _rand(M, 31, 1.0)
    y = M.exp(x, M.random_tangent(x, np.random.default_rng(32)))
    tv = M.transp(x, y, v)
    M.check_tangent(y, tv)
    np.testing.assert_allclose(tv, v - y @ _sym(y.T @ v), atol=1e-15)
    assert np.linalg.norm(tv) < np.linalg.norm(v) - 1e-3  # strictly shrinks here


# ---------------------------------------------------------------------------- basis and draws
@pytest.mark.parametrize("n,p", SIZES + [(784, 5)])
def test_tangent_basis_twins_are_identical_and_structured(n, p):
    R, V = RefStiefel(n, p), VerStiefel(n, p)
    x, _ = _rand(R, 41)
    Er, Ev = R.tangent_basis(x), V.tangent_basis(x)
    assert Er.shape == (R.dim, n, p)
    assert np.abs(Er - Ev).max() < 1e-13
    if n * p <= 100:
        G = np.einsum("aij,bij->ab", Er, Er)
        assert np.abs(G - np.eye(R.dim)).max() < 1e-13
    ns = p * (p - 1) // 2
    for m in range(ns):  # X Omega with Omega skew
        Om = x.T @ Er[m]
        np.testing.assert_allclose(Om, -Om.T, atol=1e-14)
    assert np.abs(x.T @ Er[ns:].transpose(1, 0, 2).reshape(n, -1)).max() < 1e-13  # X_perp K part


@pytest.mark.parametrize("cls", TWINS)
def test_random_tangent_is_sum_of_basis_with_the_same_draws(cls):
    M = cls(5, 3)
    x, _ = _rand(M, 51)
    v = M.random_tangent(x, np.random.default_rng(52))
    z = np.random.default_rng(52).standard_normal(M.dim)
    np.testing.assert_allclose(v, np.tensordot(z, M.tangent_basis(x), axes=1), atol=1e-14)


def test_random_point_is_haar_sign_fixed():
    """A Haar point X of St(4, 2) has E X = 0 (X and -X, and X with one column negated, have the same
    law) and its first column is uniform on S^3: E x11^2 = 1/n.

    N = 20000: sd(mean x_ij) = 0.5/sqrt(N) = 0.0035 (Var x_ij = 1/n) and sd(mean x11^2) = 0.25/sqrt(N) =
    0.0018 (Var x11^2 = 3/(n(n+2)) - 1/n^2 = 1/16); thresholds at 5 sd, false-alarm
    probability < 6e-7 each, < 6e-6 for all nine (fixed seed). An unsigned LAPACK QR gives x11 =
    -|g1|/|g| < 0 always (mean about -0.42); fixing the signs by diag(R) < 1 instead of < 0 depends on
    the reflectors and biases E x11 to 0.042 and E x22 to 0.081 (measured, 40000 draws; with the first
    entry alone and N = 4000 that mutant survived the manifolds run)."""
    M = RefStiefel(4, 2)
    rng = np.random.default_rng(61)
    xs = np.array([M.random_point(rng) for _ in range(20000)])
    sd = 0.5 / math.sqrt(len(xs))
    assert np.max(np.abs(xs.mean(axis=0))) < 5 * sd
    assert abs((xs[:, 0, 0] ** 2).mean() - 0.25) < 5 * 0.25 / math.sqrt(len(xs))


# ---------------------------------------------------------------------------- curvature
@pytest.mark.parametrize("n,p", SIZES + [(9, 4)])
def test_sampled_sectional_curvatures_lie_in_the_bounds(n, p):
    """Gauss-formula curvature of random planes, and of low-rank planes, is within curvature_bounds."""
    M = RefStiefel(n, p)
    lo, hi = M.curvature_bounds
    rng = np.random.default_rng(71)
    ks = []
    for _ in range(200):
        x = M.random_point(rng)
        E = M.tangent_basis(x)
        if M.dim < 2:
            continue
        u = np.tensordot(rng.standard_normal(M.dim), E, axes=1)
        # low-rank planes reach the extremes: mix random with rank-one directions
        if rng.random() < 0.5:
            a, b = rng.standard_normal(n), rng.standard_normal(p)
            u = M.proj(x, np.outer(a, b))
        w = M.proj(x, np.outer(rng.standard_normal(n), rng.standard_normal(p)))
        ks.append(gauss_sectional_curvature(x, u, w))
    ks = np.array(ks)
    assert ks.min() >= lo - 1e-12 and ks.max() <= hi + 1e-12, (ks.min(), ks.max())
    if p == 1:
        np.testing.assert_allclose(ks, 1.0, atol=1e-12)


def test_curvature_extremes_are_attained():
    """K = 1 on rank-one planes u e1^T, v e1^T with u, v orthogonal to X (needs n - p >= 2);
    K = -1/2 on X_perp a^T, X_perp b^T with a orthogonal to b when n - p = 1 (p >= 2)."""
    M = RefStiefel(6, 2)
    x, _ = _rand(M, 81)
    xp = np.linalg.qr(x, mode="complete")[0][:, 2:]
    e1 = np.array([1.0, 0.0])
    assert abs(gauss_sectional_curvature(x, np.outer(xp[:, 0], e1), np.outer(xp[:, 1], e1)) - 1.0) < 1e-13
    M = RefStiefel(4, 3)
    x, _ = _rand(M, 82)
    xp = np.linalg.qr(x, mode="complete")[0][:, 3:]
    a, b = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    assert abs(gauss_sectional_curvature(x, np.outer(xp[:, 0], a), np.outer(xp[:, 0], b)) + 0.5) < 1e-13


@pytest.mark.parametrize("n,p", [(4, 3), (6, 2), (5, 1)])
def test_gauss_formula_matches_geodesic_distance_expansion(n, p):
    """Independent check of the Gauss formula: for orthonormal U, V,
    d(Exp(tU), Exp(tV))^2 = 2 t^2 - K t^4 / 3 + O(t^5); Richardson in t removes the O(t^5) term."""
    M = VerStiefel(n, p)
    rng = np.random.default_rng(91)
    for _ in range(3):
        x = M.random_point(rng)
        u = M.random_tangent(x, rng)
        if rng.random() < 0.5:  # include a low-rank (extreme-curvature) plane
            u = M.proj(x, np.outer(rng.standard_normal(n), rng.standard_normal(p)))
        w = M.random_tangent(x, rng)
        u = u / np.linalg.norm(u)
        w = w - np.sum(w * u) * u
        w = w / np.linalg.norm(w)
        K = gauss_sectional_curvature(x, u, w)
        est = lambda t: 3 * (2 * t * t - M.dist(M.exp(x, t * u), M.exp(x, t * w)) ** 2) / t**4
        t = 0.02
        Kr = 2 * est(t / 2) - est(t)
        assert abs(Kr - K) < 5e-3, (Kr, K)


# ---------------------------------------------------------------------------- batches and bad input
def test_batched_kernels_validate_and_refuse_bad_stacks():
    V = VerStiefel(4, 2)
    x, v = _rand(V, 95, 0.5)
    X = np.stack([x, x])
    with pytest.raises(ValueError, match=r"Stiefel\.exp_batch: X has shape"):
        V.exp_batch(X[0], np.stack([v, v]))
    with pytest.raises(ValueError, match=r"Stiefel\.exp_batch: stacks have different lengths"):
        V.exp_batch(X, np.stack([v]))
    with pytest.raises(ValueError, match=r"Stiefel\.log_batch: row 1: y: X\^T X != I"):
        V.log_batch(X, np.stack([x, 2 * x]))
    with pytest.raises(ValueError, match=r"Stiefel\.dist_batch: row 0: y has 8 non-finite"):
        V.dist_batch(X, np.full_like(X, np.nan))
    with pytest.raises(ValueError, match=r"Stiefel\.transp_batch: row 0: v: not tangent"):
        V.transp_batch(X, X, np.stack([x, v]))


def test_numba_kernels_raise_on_failure_inside_njit_code():
    from prirfed.verified.manifolds import stiefel as S

    V = VerStiefel(4, 2)
    x, _ = _rand(V, 97)
    with pytest.raises(ValueError, match="Stiefel.log"):
        S.log_kernel(x, -x)
    with pytest.raises(ValueError, match="Stiefel.inv_retr_polar"):
        S.inv_retr_kernel(x, -x)
    with pytest.raises(ValueError, match="Stiefel.inv_retr_qr"):
        S.inv_retr_qr_kernel(x, -x)


@pytest.mark.parametrize("n,p", [(4, 2), (3, 1), (6, 3)])
def test_verified_dist_single_and_batched_are_equal_to_the_last_bit(n, p):
    """dist and dist_batch of the verified twin share one Frobenius sum: equal bit for bit, also at
    distances of 1e-12 where numpy's pairwise sum and a loop differed by an ulp (thorough fuzz run)."""
    V = VerStiefel(n, p)
    rng = np.random.default_rng(39)
    for _ in range(20):
        x = V.random_point(rng)
        for scale in (1e-12, 1e-6, 0.5):
            v = V.random_tangent(x, rng)
            y = V.exp(x, scale * v / V.norm(x, v))
            assert V.dist(x, y) == V.dist_batch(x[None], y[None])[0]


def test_polar_inverse_refuses_a_rotation_by_a_quarter_turn():
    """X = [e1 e2], Y = [e2 -e1]: M = X^T Y = [[0, -1], [1, 0]] has eigenvalues +-i, so
    lambda_1 + lambda_2 = 0 and M P + P M^T = 2I has no unique solution, although M is not 0: the
    Kronecker sum's singular values are (2, 2, 0, 0) and the smallest decides (a mutant reading the
    largest survived the test with X^T Y = 0, where all four are 0)."""
    x = np.eye(3)[:, :2]
    y = np.stack([np.eye(3)[1], -np.eye(3)[0]], axis=1)
    for S in (RefStiefel(3, 2), VerStiefel(3, 2)):
        with pytest.raises(ValueError, match=r"the Lyapunov equation M P \+ P M\^T = 2I, M = X\^T Y, is singular"):
            S.inv_retr(x, y)


@pytest.mark.parametrize("cls", TWINS)
def test_tolerances_are_1e_10_plus_64_n_eps_and_scale_with_1_plus_the_norm(cls):
    """The documented bounds, written here: max |X^T X - I| <= b = 1e-10 + 64 n eps and
    max |sym(X^T V)| <= b (1 + ||V||_F). At n = 1000 the n eps part is 14% of b, so defects at
    b (1 -+ 1e-3) sit on either side of the bound and of every other constant in it (the tests had
    used n = 13, where 64 n eps is 0.02% of 1e-10, and V of norm 1 and 1e6). X = a e_1 (p = 1) has
    defect a^2 - 1; V = c e_1 + 3 e_2 has sym(X^T V) = c and ||V||_F = sqrt(9 + c^2) = 3 to 1e-21
    (exactly 3.0 in floating point, so c = 4 b sits exactly on the tangent bound, which is accepted)."""
    n = 1000
    M = cls(n, 1)
    b = 1e-10 + 64.0 * n * 2.0**-52  # eps = 2^-52
    x = np.zeros((n, 1))
    for frac, ok in ((1 - 1e-3, True), (1 + 1e-3, False)):
        x[0, 0] = math.sqrt(1.0 + frac * b)
        if ok:
            M.check_point(x)
        else:
            with pytest.raises(ValueError, match=r"X\^T X != I \(max \|X\^T X - I\| = 1\.143e-10, tolerance 1\.1e-10\)"):
                M.check_point(x)
    e1 = np.zeros((n, 1))
    e1[0, 0] = 1.0
    # frac = 1: the defect 4 b equals the tolerance b (1 + 3) exactly in floating point, and the
    # bound is inclusive (<=)
    for frac, ok in ((1 - 1e-3, True), (1.0, True), (1 + 1e-3, False)):
        v = np.zeros((n, 1))
        v[0, 0], v[1, 0] = frac * 4.0 * b, 3.0
        if ok:
            M.check_tangent(e1, v)
        else:
            with pytest.raises(ValueError, match=r"not tangent \(max \|sym\(X\^T V\)\| = 4\.573e-10, tolerance 4\.6e-10\)"):
                M.check_tangent(e1, v)


def test_repr_names_both_sizes():
    """repr(Stiefel(n, p)) is the constructor call, n before p."""
    assert repr(RefStiefel(5, 2)) == "Stiefel(5, 2)" and repr(RefStiefel(3, 1)) == "Stiefel(3, 1)"


@pytest.mark.parametrize("cls", TWINS)
def test_log_newton_tolerance_on_both_sides(cls):
    """Log accepts a Newton residual ||Exp_X(V) - Y||_F <= LOG_TOL = 1e-11 and refuses a larger one. Y'
    = (1 + d) Y, Y = Exp_X(V) on St(5, 2), passes the point check (|Y'^T Y' - I| = 2d) but is off the
    manifold by ||Y' - Y||_F = d sqrt 2 (Y is its nearest point, its polar factor), so Newton stalls
    at that residual: at 0.9e-11 Log returns V (to rounding), at 1.1e-11 it raises naming the residual
    (the tests had only met residuals of 1e-16 or O(1), so 2e-11 and 5e-12 in place of 1e-11 passed)."""
    M = cls(5, 2)
    rng = np.random.default_rng(3)
    x = M.random_point(rng)
    t = M.random_tangent(x, rng)
    v = 1.2 * t / np.linalg.norm(t)
    y = M.exp(x, v)
    np.testing.assert_allclose(M.log(x, (1.0 + 0.9e-11 / math.sqrt(2.0)) * y), v, rtol=0, atol=1e-13)
    with pytest.raises(ValueError, match=r"^Stiefel\.log: Newton iteration on Exp did not converge \(residual "
                                         r"\|\|Exp_x\(v\) - y\|\|_F = 1\.100e-11 after \d+ iterations, tolerance 1e-11\)"):
        M.log(x, (1.0 + 1.1e-11 / math.sqrt(2.0)) * y)


# ---------------------------------------------------------------------------- refusals and helpers
def test_pow2_at_least_is_the_documented_power_of_two():
    """_pow2_at_least(m) = 2^e with 2^(e-1) <= m < 2^e for m > 1/2, capped at 2^1023, else 1 (its
    docstring), at hand-checked points: 0.3 and 0.5 -> 1, 0.75 -> 1, 1 -> 2, 3 -> 4, 2^600 -> 2^601,
    1e308 -> 2^1023 (not 2^1024, which overflows). Ten mutants of its constants survived the
    manifolds run: the retractions that use it are scale-invariant, so only this contract pins it."""
    from prirfed.reference.manifolds.stiefel import _pow2_at_least

    for m, want in ((0.0, 1.0), (0.3, 1.0), (0.5, 1.0), (0.75, 1.0), (1.0, 2.0), (3.0, 4.0),
                    (2.0**600, 2.0**601), (1e308, 2.0**1023)):
        assert _pow2_at_least(m) == want, m


def test_gauss_curvature_refuses_linearly_dependent_directions():
    """K(U, V) divides by ||U||^2 ||V||^2 - <U, V>^2, exactly 0 for V = U and V = 2U: refused with the
    reason, not returned as a NaN or inf (the refusal's deletion survived the manifolds run)."""
    M = RefStiefel(5, 2)
    rng = np.random.default_rng(3)
    x = M.random_point(rng)
    u = M.proj(x, rng.standard_normal((5, 2)))
    for v in (u, 2.0 * u):
        with pytest.raises(ValueError, match="U and V are linearly dependent"):
            gauss_sectional_curvature(x, u, v)


@pytest.mark.parametrize("cls", TWINS)
def test_exp_refuses_steps_from_2_to_the_52_on(cls):
    """Stiefel.exp's domain is ||V||_F < 2^52 (EXP_MAX_STEP): at exactly 2^52 and above it refuses and
    says so; just below it returns a point (X = [I; 0], V = [0; t e_1 e_1^T], ||V||_F = t exactly)."""
    M = cls(5, 2)
    x = np.eye(5)[:, :2]
    v = np.zeros((5, 2))
    for t, ok in ((2.0**52 * (1 - 2.0**-52), True), (2.0**52, False), (2.0**60, False)):
        v[2, 0] = t
        if ok:
            y = M.exp(x, v)
            assert np.max(np.abs(y.T @ y - np.eye(2))) <= 64 * EPS_F
        else:
            with pytest.raises(ValueError, match=r"is not below 2\^52"):
                M.exp(x, v)


def test_exp_eas_refuses_its_own_loss_of_orthogonality():
    """The literal EAS formula loses orthogonality like eps ||V||^2: at ||V|| = 3.6e5 its result is
    off St(5, 2) by 4.5e-10 > 1e-10, and it refuses instead of returning it (measured; the check's
    deletion survived the manifolds run). At ||V|| = 3.6e3 it returns a point."""
    M = RefStiefel(5, 2)
    x = np.eye(5)[:, :2]
    v = np.zeros((5, 2))
    v[2, 0], v[3, 1] = 3.0, 2.0
    y = M.exp_eas(x, 1e3 * v)
    assert np.max(np.abs(y.T @ y - np.eye(2))) <= 1e-10
    with pytest.raises(ValueError, match=r"^Stiefel\.exp_eas: the result is not on St\(5, 2\)"):
        M.exp_eas(x, 1e5 * v)


def test_inverse_retractions_of_the_base_point_are_zero():
    """R_X(0) = X for both retractions, so their inverses at Y = X are exactly 0: for the polar one
    P = (I + V^T V)^(1/2) = I has lambda_min = 1, and for the QR one R = I has R_jj = 1. (Mutants that
    refused lambda_min <= 1 or R_jj <= 1 survived the manifolds run: no test took Y = X.)"""
    M = RefStiefel(6, 3)
    x = M.random_point(np.random.default_rng(8))
    for f in (M.inv_retr, M.inv_retr_polar, M.inv_retr_qr):
        assert np.max(np.abs(f(x, x))) <= 4 * EPS_F, f.__name__


def test_inv_retr_qr_refuses_a_singular_leading_block():
    """X = [e1, e2], Y = [e1, e3]: X^T Y = diag(1, 0), whose leading 1 x 1 block is fine and whose 2 x 2
    block is singular (sigma_min = 0, sigma_max = 1): refused at j = 1 with the reason (a mutant that
    read sigma_max survived the manifolds run)."""
    M = RefStiefel(4, 2)
    x = np.eye(4)[:, :2]
    y = np.eye(4)[:, [0, 2]]
    with pytest.raises(ValueError, match=r"the leading 2x2 block of X\^T Y is singular \(sigma_min = 0"):
        M.inv_retr_qr(x, y)


def test_retractions_of_huge_steps_follow_their_definitions():
    """At max |V| = 1e300: retr_qr returns qf(X + V), i.e. Q with Q^T Q = I and Q^T (X + V) upper
    triangular with a positive diagonal (the definition, checked on the output; the input is scaled by a
    power of two before LAPACK, and a mutant that multiplied by it overflowed); retr_polar refuses with
    the reason when V^T V has eigenvalues beyond float64's range (a rank-one V: 1 and 1e600)."""
    M = RefStiefel(5, 2)
    x = np.eye(5)[:, :2]
    v = np.zeros((5, 2))
    v[2, 0], v[3, 1], v[4, 0] = 1e300, -3e299, 2e299
    q = M.retr_qr(x, v)
    a = x + v
    assert np.max(np.abs(q.T @ q - np.eye(2))) <= 64 * EPS_F
    r = q.T @ a
    assert abs(r[1, 0]) <= 1e-15 * np.max(np.abs(a)) and r[0, 0] > 0 and r[1, 1] > 0
    w = np.zeros((5, 2))
    w[2, 0] = 1e300
    with pytest.raises(ValueError, match=r"^Stiefel\.retr_polar: \(I \+ V\^T V\)\^\(-1/2\) is not representable"):
        M.retr_polar(x, w)


def test_orth_complement_is_an_orthonormal_basis_of_the_complement():
    """X_perp has n - p orthonormal columns orthogonal to X, so [X, X_perp] is orthogonal (St(7, 3)
    and St(4, 1); the method had no test: returning None survived the manifolds run)."""
    rng = np.random.default_rng(4)
    for n, p in ((7, 3), (4, 1)):
        M = RefStiefel(n, p)
        x = M.random_point(rng)
        c = M.orth_complement(x)
        assert c.shape == (n, n - p)
        full = np.hstack([x, c])
        assert np.max(np.abs(full.T @ full - np.eye(n))) <= 16 * n * EPS_F


def test_log_refuses_a_geodesic_longer_than_pi():
    """Y = Exp_X(4 V), ||V|| = 1 on St(4, 2): Newton on Exp converges to a geodesic of length >= pi,
    which is not certified minimising, and log refuses it with the length instead of returning it (in
    60 such draws with lengths 3 to 4.5, 36 ended so; the refusal's deletion survived the manifolds run)."""
    M = RefStiefel(4, 2)
    rng = np.random.default_rng(0)
    x = M.random_point(rng)
    v = M.proj(x, rng.standard_normal((4, 2)))
    v /= np.linalg.norm(v)
    y = M.exp(x, 4.0 * v)
    with pytest.raises(ValueError, match=r"^Stiefel\.log: the geodesic found has length \d\.\d+ "
                                         r">= injectivity radius pi"):
        M.log(x, y)
