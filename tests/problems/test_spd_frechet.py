"""SPD Fréchet mean (000 (6.2), 001 (3)): gradients, optimum, constants, errata, bad input.

Known answers: the geodesic point A^{1/2}(A^{-1/2} B A^{-1/2})^t A^{1/2} (two matrices, weights
1-t and t), the weighted geometric mean of commuting matrices, finite differences along the
SPD manifold's Exp, an mpmath 50-digit oracle for dist^2, and the exact Hessian eigenvalue
2 (s/sqrt 2) coth(s/sqrt 2) in a direction of curvature -1/2.
"""

import math

import mpmath
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from prirfed.reference.manifolds import SPD
from prirfed.reference.manifolds.base import zeta
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from problem_probes import point_and_direction

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def random_problem(seed, c=1.0):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    M = SPD(n)
    N = int(rng.integers(1, 4))
    Z = [np.stack([M.random_point(rng) for _ in range(int(rng.integers(1, 4)))]) for _ in range(N)]
    return SPDFrechetMean(Z, c=c), rng


def mpow(A, t):
    lam, U = np.linalg.eigh(A)
    return (U * lam**t) @ U.T


def geodesic_point(A, B, t):
    """A^{1/2} (A^{-1/2} B A^{-1/2})^t A^{1/2}: the point at fraction t from A to B (closed form)."""
    Ah, Amh = mpow(A, 0.5), mpow(A, -0.5)
    return Ah @ mpow(Amh @ B @ Amh, t) @ Ah


@given(seed=seeds, c=st.sampled_from([1.0, 0.5]))
def test_per_sample_gradient_matches_finite_difference_along_exp(seed, c):
    """d/dt f_ij(Exp_X(t V)) = <grad f_ij(X), V>_X; grad = -2c Log_X(Z_ij); ||grad|| = 2c dist;
    egrad2rgrad(egrad) = grad; f_ij = c dist^2 (the manifold's dist: a separate implementation)."""
    P, rng = random_problem(seed, c)
    M, X, V = point_and_direction(P, rng)
    h = 1e-5
    for i, j in P.samples():
        Zij = P.Z[i][j]
        G = P.rgrad_ij(X, i, j)
        fd = (P.f_ij(M.exp(X, h * V), i, j) - P.f_ij(M.exp(X, -h * V), i, j)) / (2 * h)
        scale = 1 + P.f_ij(X, i, j)
        assert abs(fd - M.inner(X, G, V)) <= 1e-6 * scale * (1 + M.norm(X, V))
        np.testing.assert_allclose(G, -2 * c * M.log(X, Zij), atol=1e-10 * scale)
        assert math.isclose(P.f_ij(X, i, j), c * M.dist(X, Zij) ** 2, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(M.norm(X, G), P.rgrad_norm_ij(X, i, j), rel_tol=1e-9, abs_tol=1e-12)
        np.testing.assert_allclose(M.egrad2rgrad(X, P.egrad_ij(X, i, j)), G, atol=1e-10 * scale)


@given(seed=seeds)
def test_euclidean_gradient_matches_ambient_finite_difference(seed):
    """d/dt f_ij(X + t E) = tr(egrad_ij(X) E) for symmetric E (the Euclidean gradient)."""
    P, rng = random_problem(seed)
    X = P.manifold.random_point(rng)
    E = rng.standard_normal((P.n, P.n))
    E = 0.5 * (E + E.T) / np.linalg.norm(E)
    h = 1e-6 * np.linalg.eigvalsh(X)[0]
    for i, j in P.samples():
        fd = (P.f_ij(X + h * E, i, j) - P.f_ij(X - h * E, i, j)) / (2 * h)
        assert abs(fd - np.sum(P.egrad_ij(X, i, j) * E)) <= 1e-5 * (1 + abs(fd))


@given(seed=seeds)
def test_agent_and_global_gradients_are_weighted_means_of_per_sample_ones(seed):
    P, rng = random_problem(seed)
    X = P.manifold.random_point(rng)
    tot, totf = 0.0, 0.0
    for i in range(P.N):
        B = P.rgrad_batch(X, i, range(P.N_i[i]))
        np.testing.assert_allclose(P.rgrad_i(X, i), B.mean(axis=0), atol=1e-12 * (1 + np.abs(B).max()))
        tot = tot + P.p[i] * B.mean(axis=0)
        totf += P.p[i] * np.mean([P.f_ij(X, i, j) for j in range(P.N_i[i])])
    np.testing.assert_allclose(P.rgrad(X), tot, atol=1e-12 * (1 + np.abs(tot).max()))
    assert math.isclose(P.f(X), totf, rel_tol=1e-12)
    np.testing.assert_allclose(P.p, np.array(P.N_i) / sum(P.N_i))


def test_000_printed_global_gradient():
    """000 section 6.2: grad f(X) = -2 sum_i (p_i/N_i) sum_j X^{1/2} log(X^{-1/2} Z_ij X^{-1/2}) X^{1/2} (scipy logm/sqrtm)."""
    rng = np.random.default_rng(5)
    M = SPD(3)
    Z = [np.stack([M.random_point(rng) for _ in range(k)]) for k in (2, 3)]
    P = SPDFrechetMean(Z)
    X = M.random_point(rng)
    Xh = np.real(scipy.linalg.sqrtm(X))
    Xmh = np.linalg.inv(Xh)
    G = -2 * sum(P.p[i] / P.N_i[i] * Xh @ np.real(scipy.linalg.logm(Xmh @ Z[i][j] @ Xmh)) @ Xh for i in range(2) for j in range(P.N_i[i]))
    np.testing.assert_allclose(P.rgrad(X), G, atol=1e-10)


def test_001_printed_gradient_lacks_the_factor_minus_two():
    """001 section 5.2 prints grad f(W; X_i) = W log_m(W^{-1} X_i) with norm dist(W, X_i); the
    gradient of dist^2 (checked by finite differences above) is -2 W log_m(W^{-1} X_i)."""
    rng = np.random.default_rng(6)
    M = SPD(2)
    Z = M.random_point(rng)
    P = SPDFrechetMean(Z[None])
    W = M.random_point(rng)
    printed = W @ np.real(scipy.linalg.logm(np.linalg.solve(W, Z)))
    np.testing.assert_allclose(P.rgrad_ij(W, 0, 0), -2 * printed, atol=1e-10)
    assert math.isclose(M.norm(W, printed), M.dist(W, Z), rel_tol=1e-9)


@given(seed=seeds)
@settings(max_examples=20)
def test_dist_squared_matches_mpmath_at_50_digits(seed):
    """f_ij(X) = sum log^2 of the eigenvalues of X^{-1/2} Z X^{-1/2}, recomputed with mpmath at 50 digits."""
    P, rng = random_problem(seed)
    X = P.manifold.random_point(rng)
    Zij = P.Z[0][0]
    with mpmath.workdps(50):
        Xm = mpmath.matrix(X.tolist())
        E, Q = mpmath.eigsy(Xm)
        Xmh = Q * mpmath.diag([1 / mpmath.sqrt(e) for e in E]) * Q.T
        L, _ = mpmath.eigsy(Xmh * mpmath.matrix(Zij.tolist()) * Xmh)
        ref = float(sum(mpmath.log(l) ** 2 for l in L))
    assert math.isclose(P.f_ij(X, 0, 0), ref, rel_tol=1e-12, abs_tol=1e-14)


# ---------------------------------------------------------------------- optimum
@given(seed=seeds)
def test_two_point_mean_is_the_geodesic_point(seed):
    """Agent 0 holds A once, agent 1 holds B k times: p = (1/(k+1), k/(k+1)), so X* is the point at
    fraction t = k/(k+1) of the geodesic from A to B (k = 1: the midpoint A # B)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    M = SPD(n)
    A, B = M.random_point(rng), M.random_point(rng)
    k = int(rng.integers(1, 4))
    P = SPDFrechetMean([A[None], np.stack([B] * k)])
    X = P.optimum()
    G = geodesic_point(A, B, k / (k + 1))
    assert M.dist(X, G) <= 1e-10
    assert P.rgrad_norm(X) <= 1e-10


@given(seed=seeds)
def test_commuting_matrices_give_the_weighted_geometric_mean(seed):
    """Z_ij = U diag(lam_ij) U^T: X* = U diag(prod lam_ij^{p_i/N_i}) U^T."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lams = [np.exp(rng.uniform(-1.5, 1.5, (int(rng.integers(1, 4)), n))) for _ in range(int(rng.integers(1, 4)))]
    Z = [np.stack([(U * l) @ U.T for l in L]) for L in lams]
    P = SPDFrechetMean(Z)
    w = [P.p[i] / P.N_i[i] for i in range(P.N)]
    g = np.exp(sum(w[i] * np.log(lams[i]).sum(axis=0) for i in range(P.N)))
    X = P.optimum()
    assert P.manifold.dist(X, (U * g) @ U.T) <= 1e-10


@given(seed=seeds)
def test_optimum_has_zero_gradient_and_is_a_minimum(seed):
    """||grad f(X*)|| <= 1e-10 and f(X*) <= f at random points, at data points and at nearby points."""
    P, rng = random_problem(seed)
    M = P.manifold
    X, info = P.optimum(return_info=True)
    assert info["grad_norm"] <= 1e-12
    assert P.rgrad_norm(X) <= 1e-10
    fX = P.f(X)
    for _ in range(5):
        assert fX <= P.f(M.random_point(rng)) + 1e-12
        V = M.random_tangent(X, rng)
        assert fX <= P.f(M.exp(X, 1e-3 * V)) + 1e-12
    for i, j in P.samples():
        assert fX <= P.f(P.Z[i][j]) + 1e-12


def test_optimum_raises_when_the_tolerance_is_not_reached():
    rng = np.random.default_rng(1)
    M = SPD(3)
    P = SPDFrechetMean(np.stack([M.random_point(rng) for _ in range(4)]))
    with pytest.raises(ValueError, match=r"SPDFrechetMean.optimum: gradient norm .* after 1 iterations, tolerance 1.0e-30"):
        P.optimum(tol=1e-30, max_iter=1)
    with pytest.raises(ValueError, match="need tol > 0"):
        P.optimum(tol=0.0)


def test_log_euclidean_mean_of_commuting_data_is_the_optimum_at_once():
    """Diagonal (commuting) samples, agents of sizes 1 and 2, so every sample has weight (p_i / N_i) = 1/3:
    log Z = diag(1, 0); diag(0, 2), diag(3, -1): the log-Euclidean mean is expm(diag(4/3, 1/3)), by hand.
    For commuting data it is the Fréchet mean (the whitened logs log Z - log X sum to 0), so optimum
    starts there and returns after 0 iterations with a gradient norm 2 c ||T||_F at rounding level."""
    e = math.e
    P = SPDFrechetMean([np.diag([e, 1.0])[None], np.stack([np.diag([1.0, e**2]), np.diag([e**3, 1 / e])])], c=0.5)
    want = np.diag([math.exp(4 / 3), math.exp(1 / 3)])
    np.testing.assert_allclose(P.log_euclidean_mean(), want, rtol=1e-14, atol=1e-15)
    X, info = P.optimum(return_info=True)
    np.testing.assert_allclose(X, want, rtol=1e-13, atol=1e-14)
    assert info["iterations"] == 0 and 0.0 <= info["grad_norm"] <= 1e-12
    with pytest.raises(ValueError, match=r"^SPDFrechetMean.optimum: need tol > 0 and max_iter >= 1 \(got tol=1e-12, max_iter=0\)$"):
        P.optimum(max_iter=0)
    assert P.paper_L_f(1.5) == 1.5  # 001 section 5.2: L_0 = D_W


# ---------------------------------------------------------------------- constants
def hull_points(P, rng, k=6):
    """Points of the geodesic convex hull of the data: points on geodesics between data points."""
    flat = [P.Z[i][j] for i, j in P.samples()]
    out = []
    for _ in range(k):
        a, b = rng.integers(0, len(flat), 2)
        out.append(geodesic_point(flat[a], flat[b], rng.uniform()))
    return out


@given(seed=seeds)
def test_gradient_norms_are_below_L_f_on_the_hull(seed):
    """||grad f_ij(X)|| = 2c dist(X, Z_ij) <= L_f(D) = 2c D for X in the convex hull, D = data diameter."""
    P, rng = random_problem(seed)
    D = P.data_diameter()
    for X in hull_points(P, rng):
        X = 0.5 * (X + X.T)
        for i, j in P.samples():
            assert P.manifold.norm(X, P.rgrad_ij(X, i, j)) <= P.L_f(D) * (1 + 1e-9) + 1e-12


def test_001_lipschitz_constant_is_half_the_true_one():
    """001 section 5.2 sets L_0 = D_W; at X = A, sample B with dist(A, B) = D_W the gradient norm
    is 2 D_W = L_f(D_W) > paper_L_f(D_W)."""
    A = np.diag([1.0, 1.0])
    B = np.diag([math.e, 1.0 / math.e])  # dist = sqrt(2)
    P = SPDFrechetMean(np.stack([A, B]))
    D = P.data_diameter()
    assert math.isclose(D, math.sqrt(2), rel_tol=1e-14)
    g = P.manifold.norm(A, P.rgrad_ij(A, 0, 1))
    assert math.isclose(g, 2 * math.sqrt(2), rel_tol=1e-12)
    assert math.isclose(g, P.L_f(D), rel_tol=1e-12)
    assert g > 1.9 * P.paper_L_f(D)


@pytest.mark.parametrize("c", [0.5, 3.0])
def test_lipschitz_constant_is_attained_with_the_loss_scale(c):
    """f_ij = c dist^2(X, Z_ij): at X = A and the sample B at distance D = sqrt(2) the gradient norm
    2 c D is L_f(D) exactly (c != 1, where 2 c and 2 / c differ)."""
    A, B = np.eye(2), np.diag([math.e, 1.0 / math.e])
    P = SPDFrechetMean(np.stack([A, B]), c=c)
    g = P.manifold.norm(A, P.rgrad_ij(A, 0, 1))
    assert math.isclose(g, 2 * c * math.sqrt(2), rel_tol=1e-12)
    assert math.isclose(P.L_f(math.sqrt(2)), g, rel_tol=1e-12)


@pytest.mark.parametrize("s,c", [(0.3, 1.0), (1.0, 1.0), (2.5, 1.0), (1.0, 0.5), (2.5, 3.0)])
def test_L_g_is_attained_in_a_direction_of_curvature_minus_half(s, c):
    """X = I, Z = expm(s H), H = diag(1, -1)/sqrt 2 (dist = s), V = offdiag unit: the plane (H, V) has
    curvature -1/2 and d^2/dt^2 c dist^2(Exp_I(t V), Z) = 2 c (s/sqrt 2) coth(s/sqrt 2) = 2 c zeta(-1/2, s) = L_g(s);
    the bound with kappa_min = -1/4 would be violated, so kappa_min = -1/2 is needed. The loss scale
    c = 1/2 and 3 (where 2 c, 2 / c and 2 differ) is in both L_g and the gradient norm 2 c dist (rgrad_norm_ij)."""
    Z = np.diag([math.exp(s / math.sqrt(2)), math.exp(-s / math.sqrt(2))])
    P = SPDFrechetMean(Z[None], c=c)
    M = P.manifold
    I = np.eye(2)
    V = np.array([[0.0, 1.0], [1.0, 0.0]]) / math.sqrt(2)
    h = 1e-4
    second = (P.f_ij(M.exp(I, h * V), 0, 0) - 2 * P.f_ij(I, 0, 0) + P.f_ij(M.exp(I, -h * V), 0, 0)) / h**2
    exact = 2 * c * (s / math.sqrt(2)) / math.tanh(s / math.sqrt(2))
    assert math.isclose(second, exact, rel_tol=1e-6)
    assert math.isclose(P.L_g(s), exact, rel_tol=1e-14)
    assert second > 2 * c * zeta(-0.25, s) * (1 + 1e-4)
    assert math.isclose(P.rgrad_norm_ij(I, 0, 0), 2 * c * s, rel_tol=1e-12)


@given(seed=seeds)
def test_sampled_gradient_lipschitz_quotients_are_below_L_g(seed):
    """||Gamma_Y^X grad f_ij(Y) - grad f_ij(X)||_X <= L_g(D) dist(X, Y), D bounding dist(., Z_ij) on the geodesic."""
    P, rng = random_problem(seed)
    M, X, V = point_and_direction(P, rng)
    Y = M.exp(X, rng.uniform(0.01, 1.0) * V / max(M.norm(X, V), 1e-12))
    for i, j in P.samples():
        D = max(M.dist(X, P.Z[i][j]), M.dist(Y, P.Z[i][j]))  # dist to Z is convex along geodesics
        lhs = M.norm(X, M.transp(Y, X, P.rgrad_ij(Y, i, j)) - P.rgrad_ij(X, i, j))
        assert lhs <= P.L_g(D) * M.dist(X, Y) * (1 + 1e-7) + 1e-10


# ---------------------------------------------------------------------- bad input
def test_bad_input_raises():
    good = np.eye(2)[None]
    with pytest.raises(ValueError, match="SPDFrechetMean: Z is empty"):
        SPDFrechetMean([])
    with pytest.raises(ValueError, match="no samples"):
        SPDFrechetMean([np.zeros((0, 2, 2))])
    with pytest.raises(ValueError, match=r"shape \(N_i, n, n\)"):
        SPDFrechetMean([np.ones((1, 2, 3))])
    with pytest.raises(ValueError, match=r"expected \(2, 2\)"):
        SPDFrechetMean([good, np.eye(3)[None]])
    with pytest.raises(ValueError, match=r"SPDFrechetMean: Z\[0\]\[0\]"):
        SPDFrechetMean([np.array([[[1.0, 0.5], [0.0, 1.0]]])])  # not symmetric
    with pytest.raises(ValueError, match=r"SPDFrechetMean: Z\[1\]\[0\]"):
        SPDFrechetMean([good, np.diag([1.0, -1.0])[None]])  # not positive definite
    with pytest.raises(ValueError, match="non-finite"):
        SPDFrechetMean([np.full((1, 2, 2), np.inf)])
    with pytest.raises(ValueError, match="scale c"):
        SPDFrechetMean(good, c=0.0)
    P = SPDFrechetMean([good, 2 * good])
    with pytest.raises(ValueError, match="SPDFrechetMean.f_ij"):
        P.f_ij(np.diag([1.0, -1.0]), 0, 0)
    with pytest.raises(ValueError, match="SPDFrechetMean.rgrad_batch"):
        P.rgrad_batch(np.eye(2), 1, [1])
    with pytest.raises(ValueError, match="diameter bound D"):
        P.L_f(-1.0)
    with pytest.raises(ValueError, match="diameter bound D"):
        P.L_g(np.nan)


def test_data_diameter_by_hand_below_one_with_three_points():
    """Diagonal (commuting) samples: dist(A, B) = ||log diag A - log diag B||_2. log-diagonals (0, 0),
    (0.3, -0.3), (-0.1, 0.2): pairwise distances sqrt(0.18), sqrt(0.05), sqrt(0.41); the diameter is
    sqrt(0.41) < 1 (so a wrong starting value 1 would show), reached by the pair (1, 2), which belong to
    different agents; skipping the pairs of neighbouring indices would leave sqrt(0.05)."""
    logs = [(0.0, 0.0), (0.3, -0.3), (-0.1, 0.2)]
    P = SPDFrechetMean([np.stack([np.diag(np.exp(v)) for v in logs[:2]]), np.diag(np.exp(logs[2]))[None]])
    assert P.data_diameter() == pytest.approx(math.sqrt(0.41), rel=1e-13, abs=0)


def test_optimum_max_iter_is_inclusive_and_reports_the_true_gradient_norm():
    """Non-commuting data at loss scale c = 1/2: optimum(tol = 1e-6) reports after k iterations a gradient
    norm that is the norm of grad f = sum p_i/N_i (-2 c Log_X Z_ij) at the returned point (the gradient
    checked against finite differences above), at most tol; and max_iter = k is enough (the k-th
    iterate is tested before giving up), max_iter = k - 1 is not."""
    rng = np.random.default_rng(4)
    M = SPD(2)
    P = SPDFrechetMean([np.stack([M.random_point(rng) for _ in range(2)]), M.random_point(rng)[None]], c=0.5)
    X, info = P.optimum(tol=1e-6, return_info=True)
    k = info["iterations"]
    assert k >= 2
    assert info["grad_norm"] == pytest.approx(P.rgrad_norm(X), rel=1e-6, abs=0) and info["grad_norm"] <= 1e-6
    X2, info2 = P.optimum(tol=1e-6, max_iter=k, return_info=True)
    assert info2["iterations"] == k and np.array_equal(X2, X)
    with pytest.raises(ValueError, match=rf"^SPDFrechetMean.optimum: gradient norm .* after {k - 1} iterations, tolerance 1.0e-06 not reached$"):
        P.optimum(tol=1e-6, max_iter=k - 1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_verified_gradients_answer_inside_the_domain_without_the_reference(seed, monkeypatch):
    """The verified problem hands a sample to the reference only when its kernel refuses it (a whitened
    sample not positive definite in floating point). On random data (well inside the domain) no call
    may take that path: the reference's per-sample gradients are replaced by ones that fail, and the
    verified gradients must still equal what the reference gave before (rtol 1e-12). Without this
    check a kernel that always refused would pass every equality test, the reference standing in."""
    from prirfed.verified.problems import SPDFrechetMean as VerifiedSPDFrechetMean

    P, rng = random_problem(seed, c=0.7)
    V = VerifiedSPDFrechetMean([np.array(z) for z in P.Z], c=0.7)
    x = P.manifold.random_point(rng)
    want = {
        "ij": [[P.rgrad_ij(x, i, j) for j in range(len(P.Z[i]))] for i in range(P.N)],
        "i": [P.rgrad_i(x, i) for i in range(P.N)],
        "all": P.rgrad(x),
    }

    def refuse(*args, **kwargs):
        raise AssertionError("the verified SPDFrechetMean fell back to the reference inside the domain")

    monkeypatch.setattr(SPDFrechetMean, "_rgrad_ij", refuse)
    monkeypatch.setattr(SPDFrechetMean, "_rgrad_i", refuse)

    def close(a, b):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * (1.0 + float(np.max(np.abs(b)))))

    for i in range(P.N):
        J = np.arange(len(P.Z[i]))
        for j in J:
            close(V.rgrad_ij(x, i, int(j)), want["ij"][i][j])
        close(V.rgrad_batch(x, i, J), np.stack(want["ij"][i]))
        close(V.rgrad_i(x, i), want["i"][i])
    close(V.rgrad(x), want["all"])


@pytest.mark.parametrize("backend", ["reference", "verified"])
def test_a_whitened_sample_not_positive_definite_in_floating_point_is_refused_by_name(backend):
    """Z and X are both SPD points (eigenvalues 1 and 1e-16, rotated by 0.3 and 1.2 rad), but
    cond(X) cond(Z) = 1e32 is beyond float64: the pencil (Z, X) has a computed eigenvalue <= 0 (the
    precondition, checked first: exactly 0 with this machine's LAPACK), where log, hence f and
    its gradients, are not defined. Every method refuses with the eigenvalue, not with a NaN or
    an inf that the generic 'result overflows' check would catch later (f would be +inf). The
    verified twin says the same."""
    from prirfed.verified.problems import SPDFrechetMean as VerifiedSPDFrechetMean

    def rot(t, e):
        R = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
        A = R @ np.diag([1.0, e]) @ R.T
        return 0.5 * (A + A.T)

    Z, X = rot(0.3, 1e-16), rot(1.2, 1e-16)
    P = (SPDFrechetMean if backend == "reference" else VerifiedSPDFrechetMean)([Z[None]])
    P.manifold.check_point(X)
    assert float(np.min(scipy.linalg.eigh(Z, X, eigvals_only=True))) <= 0.0
    for name in ("f", "rgrad", "egrad", "rgrad_norm"):
        with pytest.raises(ValueError, match=rf"^SPDFrechetMean\.{name}: X\^\(-1/2\) Z X\^\(-1/2\) has eigenvalue "
                                             r"\S+ <= 0 in floating point \(cond\(X\) cond\(Z\) is beyond float64\)$"):
            getattr(P, name)(X)


def test_agent_euclidean_gradient_matches_finite_differences_of_the_agent_loss():
    """egrad_i(X) is the Euclidean gradient of f_i = (1/N_i) sum_j f_ij on symmetric matrices:
    d/dt f_i(X + t E) = tr(egrad_i(X) E), by central differences (h = 1e-6 lambda_min(X), error
    O(h^2)). Agents of 1, 3 and 2 samples, so a sum or a divisor taken from another agent's count
    shows; every agent is checked."""
    rng = np.random.default_rng(11)
    M = SPD(2)
    P = SPDFrechetMean([np.stack([M.random_point(rng) for _ in range(n)]) for n in (1, 3, 2)])
    X = M.random_point(rng)
    h = 1e-6 * np.linalg.eigvalsh(X)[0]
    for i in range(P.N):
        for _ in range(3):
            E = rng.standard_normal((2, 2))
            E = 0.5 * (E + E.T) / np.linalg.norm(E)
            fd = (P.f_i(X + h * E, i) - P.f_i(X - h * E, i)) / (2 * h)
            assert np.sum(P.egrad_i(X, i) * E) == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_a_loss_or_gradient_beyond_float64_is_refused_by_the_method_name():
    """The module promise (base.py): a result that overflows float64 is an error naming
    <Problem>.<method>, never a returned inf. With c = 5e307, Z = diag(e^2, 1) and X = I:
    f_ij = c (2^2 + 0^2) = 2e308 and grad f_ij = -2c Log_I(Z) = diag(-2e308, 0) (1 of its 4 entries)
    exceed float64 (whose largest value is 1.8e308); the agent and global gradients, means of such,
    are refused before the projection to T_X (which would otherwise refuse them under the manifold's
    name, SPD.proj). With c = 1 the same loss is 4."""
    Z = np.diag([math.exp(2.0), 1.0])[None]
    P = SPDFrechetMean([Z], c=5e307)
    X = np.eye(2)
    with pytest.raises(ValueError, match=r"^SPDFrechetMean\.f_ij: the result overflows float64 \(1 of 1 entries are inf or NaN\); "
                                         r"the data or the point are outside the problem's domain$"):
        P.f_ij(X, 0, 0)
    with pytest.raises(ValueError, match=r"^SPDFrechetMean\.rgrad_ij: the result overflows float64 \(1 of 4 entries"):
        P.rgrad_ij(X, 0, 0)
    for method, args in (("rgrad_i", (0,)), ("rgrad", ())):
        with pytest.raises(ValueError, match=rf"^SPDFrechetMean\.{method}: a gradient overflows float64 \(the data or the "
                                             r"point are outside the problem's domain\)$"):
            getattr(P, method)(X, *args)
    assert SPDFrechetMean([Z], c=1.0).f_ij(X, 0, 0) == pytest.approx(4.0, rel=1e-14, abs=0)


def test_a_sample_off_the_manifold_is_named_by_its_own_index():
    """The constructor checks every sample and names the offending one: agent 0's second of three
    samples is not positive definite, so the message names Z[0][1]."""
    good = np.eye(2)
    with pytest.raises(ValueError, match=r"^SPDFrechetMean: Z\[0\]\[1\]"):
        SPDFrechetMean([np.stack([good, np.diag([1.0, -1.0]), 2 * good])])
