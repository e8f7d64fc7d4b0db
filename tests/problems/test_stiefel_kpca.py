"""Stiefel kPCA (002 (3)) and its r = 1 case, sphere PCA of 002 (4): gradients, Hessian, optimum,
principal angles, constants, bad input.

Known answers: data with a prescribed covariance, principal angles of explicitly rotated frames
(down to 1e-9 rad), scipy.linalg.subspace_angles as a peer, finite differences along the Stiefel
manifold's exact Exp, and the closed forms of the extreme gradient/Hessian values.
"""

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.problems.stiefel_kpca import StiefelKPCA, principal_angles
from problem_probes import central_points, exp_pair, point_and_ambient_direction, point_and_direction

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def random_problem(seed, weights="uniform"):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 6))
    r = int(rng.integers(1, d))
    Z = [rng.standard_normal((int(rng.integers(1, 5)), d)) * rng.uniform(0.3, 1.5) for _ in range(int(rng.integers(1, 4)))]
    return StiefelKPCA(Z, r, weights=weights), rng


@given(seed=seeds, weights=st.sampled_from(["uniform", "samples"]))
def test_per_sample_gradient_matches_finite_difference_along_exp(seed, weights):
    """d/dt f_ij(Exp_X(t V)) = <grad f_ij(X), V>; grad = egrad2rgrad(egrad); grad is tangent."""
    P, rng = random_problem(seed, weights)
    h = 1e-5
    M, X, V, Yp, Ym = central_points(P, rng, h)
    for i, j in P.samples():
        G = P.rgrad_ij(X, i, j)
        fd = (P.f_ij(Yp, i, j) - P.f_ij(Ym, i, j)) / (2 * h)
        assert abs(fd - np.sum(G * V)) <= 1e-6 * (1 + P.theta) * (1 + np.linalg.norm(V))
        np.testing.assert_allclose(M.egrad2rgrad(X, P.egrad_ij(X, i, j)), G, atol=1e-12 * (1 + P.theta))
        np.testing.assert_allclose(M.proj(X, G), G, atol=1e-12 * (1 + P.theta))


@given(seed=seeds)
def test_euclidean_gradient_matches_ambient_finite_difference(seed):
    """egrad_ij is the gradient of -c ||X^T z||^2 on R^{d x r} (its value at X scales linearly)."""
    P, rng = random_problem(seed)
    X, E = point_and_ambient_direction(P, rng)
    h = 1e-5
    for i, j in P.samples():
        z, c = P.Z[i][j], P.c[i]
        fd = (-c * np.sum(((X + h * E).T @ z) ** 2) + c * np.sum(((X - h * E).T @ z) ** 2)) / (2 * h)
        assert abs(fd - np.sum(P.egrad_ij(X, i, j) * E)) <= 1e-6 * (1 + P.theta) * np.linalg.norm(E)


@given(seed=seeds, weights=st.sampled_from(["uniform", "samples"]))
def test_agent_and_global_gradients_are_weighted_means_of_per_sample_ones(seed, weights):
    """grad f_i = mean_j grad f_ij; grad f = sum p_i grad f_i; f_i = -(1/2) tr(X^T Z_i^T Z_i X) (002 (3))."""
    P, rng = random_problem(seed, weights)
    X = P.manifold.random_point(rng)
    tot = 0.0
    for i in range(P.N):
        B = P.rgrad_batch(X, i, range(P.N_i[i]))
        np.testing.assert_allclose(P.rgrad_i(X, i), B.mean(axis=0), atol=1e-12 * (1 + P.theta))
        assert math.isclose(P.f_i(X, i), np.mean([P.f_ij(X, i, j) for j in range(P.N_i[i])]), rel_tol=1e-12, abs_tol=1e-12 * P.theta)
        Zi = P.Z[i]
        assert math.isclose(P.f_i(X, i), -0.5 * np.trace(X.T @ Zi.T @ Zi @ X), rel_tol=1e-12, abs_tol=1e-12 * P.theta)
        tot = tot + P.p[i] * B.mean(axis=0)
    np.testing.assert_allclose(P.rgrad(X), tot, atol=1e-12 * (1 + P.theta))
    if weights == "uniform":
        np.testing.assert_allclose(P.p, 1.0 / P.N)
    else:
        np.testing.assert_allclose(P.p, np.array(P.N_i) / sum(P.N_i))


@given(seed=seeds)
def test_hessian_matches_projected_derivative_of_gradient(seed):
    """Hess f_ij(X)[V] = P_X(d/dt grad f_ij(Exp_X(t V)) at 0) (Levi-Civita connection of a submanifold)."""
    P, rng = random_problem(seed)
    h = 1e-5
    M, X, V, Yp, Ym = central_points(P, rng, h)
    for i, j in P.samples():
        fd = M.proj(X, (P.rgrad_ij(Yp, i, j) - P.rgrad_ij(Ym, i, j)) / (2 * h))
        np.testing.assert_allclose(P.rhess_ij(X, i, j, V), fd, atol=1e-6 * (1 + P.theta) * (1 + np.linalg.norm(V)))


def test_r_equal_one_is_the_sphere_pca_of_002():
    """St(d, 1) = S^{d-1}: f, gradients and optimum agree with SpherePCA(paper='002') (002 (4))."""
    rng = np.random.default_rng(4)
    Z = [rng.standard_normal((n, 4)) for n in (3, 2, 5)]
    K = StiefelKPCA(Z, 1)
    S = SpherePCA(Z, paper="002")
    x = S.manifold.random_point(rng)
    X = x[:, None]
    assert math.isclose(K.f(X), S.f(x), rel_tol=1e-13)
    np.testing.assert_allclose(K.rgrad(X)[:, 0], S.rgrad(x), atol=1e-13)
    np.testing.assert_allclose(K.rgrad_ij(X, 2, 4)[:, 0], S.rgrad_ij(x, 2, 4), atol=1e-13)
    assert principal_angles(K.optimum(), S.optimum()[:, None])[0] <= 1e-10
    assert K.L_f == S.L_f and K.L_g == S.L_g


# ---------------------------------------------------------------------- optimum and angles
@given(seed=seeds)
def test_optimum_spans_the_top_eigenspace_of_a_prescribed_spectrum(seed):
    """Covariance V diag(lam) V^T built in (top r entries at random positions): span(X*) = span of
    those columns of V, f(X*) = -(1/2) sum of the top r lam, grad f(X*) = 0, f(X*) <= f at random
    points, f(X Q) = f(X) for orthogonal Q (002 footnote 3), and each column's largest-magnitude
    entry is positive (the optimum's documented signs)."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 6))
    r = int(rng.integers(1, d))
    lams = np.concatenate([rng.uniform(2.0, 3.0, r), rng.uniform(0.1, 1.0, d - r)])
    perm = rng.permutation(d)
    lams = lams[perm]
    top = np.argsort(lams)[::-1][:r]
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    Z = []
    for _ in range(int(rng.integers(1, 4))):
        n = int(rng.integers(d, d + 3))
        U, _ = np.linalg.qr(rng.standard_normal((n, d)))
        Z.append(U @ np.diag(np.sqrt(lams)) @ V.T)  # Z_i^T Z_i = V diag(lam) V^T for every agent
    P = StiefelKPCA(Z, r)
    Xs = P.optimum()
    assert np.max(principal_angles(Xs, V[:, top])) <= 1e-10
    assert math.isclose(P.f(Xs), -0.5 * lams[top].sum(), rel_tol=1e-11)
    assert P.rgrad_norm(Xs) <= 1e-10
    # the documented sign rule (eigenvalues distinct, so each column is an eigenvector up to sign):
    # every column's largest-magnitude entry is positive
    assert all(Xs[int(np.argmax(np.abs(Xs[:, k]))), k] > 0 for k in range(r))
    for _ in range(10):
        X = P.manifold.random_point(rng)
        assert P.f(Xs) <= P.f(X) + 1e-12
        Q, _ = np.linalg.qr(rng.standard_normal((r, r)))
        assert math.isclose(P.f(X @ Q), P.f(X), rel_tol=1e-12, abs_tol=1e-12)
    assert P.sum_of_principal_angles(Xs @ np.linalg.qr(rng.standard_normal((r, r)))[0]) <= 1e-9
    assert P.x_star is None


def test_optimum_refuses_a_degenerate_eigenspace():
    with pytest.raises(ValueError, match="StiefelKPCA.optimum: lambda_r = lambda_\\(r\\+1\\)"):
        StiefelKPCA([np.diag([2.0, 1.0, 1.0])], 2).optimum()


@pytest.mark.parametrize("t", [1e-9, 1e-4, 0.3, 1.2, math.pi / 2])
def test_principal_angles_of_a_rotated_frame(t):
    """X = [e1, e2], Y = [cos t e1 + sin t e3, e2]: angles (0, t) exactly, also at t = 1e-9 where
    arccos of the cosine returns 0."""
    X = np.eye(4)[:, :2]
    Y = np.zeros((4, 2))
    Y[0, 0], Y[2, 0], Y[1, 1] = math.cos(t), math.sin(t), 1.0
    ang = principal_angles(X, Y)
    assert ang[0] <= 1e-15
    assert math.isclose(ang[1], t, rel_tol=1e-12)


@given(seed=seeds)
def test_principal_angles_agree_with_scipy(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 7))
    r = int(rng.integers(1, d + 1))
    X = np.linalg.qr(rng.standard_normal((d, r)))[0]
    Y = np.linalg.qr(rng.standard_normal((d, r)))[0]
    # scipy (a peer, not an exact oracle) returns sqrt(eps) ~ 1.5e-8 instead of 0 for angles that are
    # exactly 0 (subspaces that must intersect when 2r > d), hence the tolerance 1e-7 here and the
    # exact-zero test below
    np.testing.assert_allclose(principal_angles(X, Y), np.sort(scipy.linalg.subspace_angles(X, Y)), atol=1e-7)


@given(seed=seeds)
def test_intersecting_subspaces_have_exactly_zero_angles(seed):
    """If 2r > d, span(X) and span(Y) share a subspace of dimension >= 2r - d: that many angles are 0."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 7))
    r = int(rng.integers(d // 2 + 1, d))
    X = np.linalg.qr(rng.standard_normal((d, r)))[0]
    Y = np.linalg.qr(rng.standard_normal((d, r)))[0]
    ang = principal_angles(X, Y)
    assert np.all(ang[: 2 * r - d] <= 1e-14)
    assert np.all(np.diff(ang) >= -1e-15)


def test_principal_angles_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        principal_angles(np.eye(3)[:, :2], np.eye(3)[:, :1])
    with pytest.raises(ValueError, match="orthonormal"):
        principal_angles(np.ones((3, 1)), np.eye(3)[:, :1])
    with pytest.raises(ValueError, match="finite"):
        principal_angles(np.full((3, 1), np.nan), np.eye(3)[:, :1])


# ---------------------------------------------------------------------- constants
@given(seed=seeds)
def test_sampled_gradient_norms_are_below_L_f(seed):
    """||grad f_ij(X)|| = c ||z||^2 sin(2 phi) <= L_f, cos phi = ||X^T z|| / ||z|| (closed form)."""
    P, rng = random_problem(seed)
    for _ in range(5):
        X = P.manifold.random_point(rng)
        for i, j in P.samples():
            z = P.Z[i][j]
            g = np.linalg.norm(P.rgrad_ij(X, i, j))
            phi = math.atan2(np.linalg.norm(z - X @ (X.T @ z)), np.linalg.norm(X.T @ z))
            assert math.isclose(g, P.c[i] * (z @ z) * math.sin(2 * phi), rel_tol=1e-9, abs_tol=1e-12 * (1 + P.theta))
            assert g <= P.L_f * (1 + 1e-12)


def test_constants_are_attained():
    """L_f at ||X^T z|| = ||z||/sqrt 2; L_g = 2 vartheta at X orthogonal to z with V = (z/||z||) e_1^T."""
    z = np.array([0.0, 0.0, 2.0, 0.0])
    P = StiefelKPCA(z[None, :], 2)  # c = 1/2, vartheta = 2
    X = np.zeros((4, 2))
    X[2, 0] = X[0, 0] = 1 / math.sqrt(2)
    X[1, 1] = 1.0
    assert math.isclose(np.linalg.norm(P.rgrad_ij(X, 0, 0)), 2.0, rel_tol=1e-14) and P.L_f == 2.0
    X2 = np.eye(4)[:, :2]
    V = np.zeros((4, 2))
    V[2, 0] = 1.0
    assert math.isclose(np.sum(V * P.rhess_ij(X2, 0, 0, V)), -4.0, rel_tol=1e-14) and P.L_g == 4.0


@given(seed=seeds)
def test_sampled_hessian_quadratic_forms_are_below_the_smoothness_constants(seed):
    """|<V, Hess f_ij V>| <= L_g ||V||^2 and |<V, Hess f_i V>| <= lambda_max(A_i) ||V||^2 (Hess f_i by
    projected finite differences of grad f_i); 002's L = sum L_i >= the weighted mean sum p_i L_i."""
    P, rng = random_problem(seed)
    M, X, V = point_and_direction(P, rng)
    nv2 = float(np.sum(V * V))
    h = 1e-5
    Yp, Ym = exp_pair(M, X, V, h)
    for i in range(P.N):
        for j in range(P.N_i[i]):
            assert abs(np.sum(V * P.rhess_ij(X, i, j, V))) <= P.L_g * nv2 * (1 + 1e-12)
        Hi = M.proj(X, (P.rgrad_i(Yp, i) - P.rgrad_i(Ym, i)) / (2 * h))
        assert abs(np.sum(V * Hi)) <= P.L_g_agent(i) * nv2 * (1 + 1e-6) + 1e-8 * (1 + P.theta)
    assert P.paper_L_g_global >= P.L_g_global * (1 - 1e-12)


# ---------------------------------------------------------------------- bad input
def test_bad_input_raises():
    with pytest.raises(ValueError, match="StiefelKPCA: Z is empty"):
        StiefelKPCA([], 1)
    with pytest.raises(ValueError, match="r must be an integer in \\[1, d - 1\\] \\(d = 3"):
        StiefelKPCA([np.ones((2, 3))], 3)
    with pytest.raises(ValueError, match="r must be an integer"):
        StiefelKPCA([np.ones((2, 3))], 0)
    with pytest.raises(ValueError, match="weights must be"):
        StiefelKPCA([np.ones((2, 3))], 1, weights="equal")
    with pytest.raises(ValueError, match="no samples"):
        StiefelKPCA([np.ones((2, 3)), np.ones((0, 3))], 1)
    with pytest.raises(ValueError, match=r"expected \(3,\)"):
        StiefelKPCA([np.ones((2, 3)), np.ones((2, 2))], 1)
    P = StiefelKPCA([np.ones((2, 3))], 2)
    with pytest.raises(ValueError, match="StiefelKPCA.f"):
        P.f(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"StiefelKPCA.rgrad_ij: sample index j=2"):
        P.rgrad_ij(np.eye(3)[:, :2], 0, 2)
    with pytest.raises(ValueError, match="StiefelKPCA.rhess_ij"):
        P.rhess_ij(np.eye(3)[:, :2], 0, 0, np.eye(3)[:, :2])


def test_angles_to_optimum_solve_the_eigenproblem_once_and_agree_with_scipy(monkeypatch):
    """Histories call angles_to_optimum every recorded round: X* comes from one optimum() call, and
    the angles equal scipy.linalg.subspace_angles to the top-r eigenvectors of A (independent eigh)."""
    rng = np.random.default_rng(6)
    P = StiefelKPCA([rng.standard_normal((30, 7)) for _ in range(3)], 2)
    calls = []
    real = StiefelKPCA.optimum
    monkeypatch.setattr(StiefelKPCA, "optimum", lambda self: calls.append(1) or real(self))
    U = np.linalg.eigh(P.A)[1][:, ::-1][:, :2]
    for _ in range(3):
        X = np.linalg.qr(rng.standard_normal((7, 2)))[0]
        np.testing.assert_allclose(np.sort(P.angles_to_optimum(X)), np.sort(scipy.linalg.subspace_angles(X, U)), atol=1e-10)
    assert len(calls) == 1


def test_agent_and_global_smoothness_constants_by_hand_and_attained():
    """Agent 0: rows (1, 0, 0), (0, 2, 0), so A_0 = diag(1, 4, 0), L_0 = lambda_max = 4, c_0 = N_0/2 = 1;
    agent 1: row (3, 0, 0), A_1 = diag(9, 0, 0), L_1 = 9, c_1 = 1/2. By hand: vartheta = max(1 * 4, 0.5 * 9)
    = 4.5 = L_f, L_g = 9; 002's L = L_0 + L_1 = 13; the weighted means sum p_i L_i are 6.5 (uniform weights)
    and 2/3 * 4 + 1/3 * 9 = 17/3 (weights by samples). L_0 is attained (r = 1): at X = e3, V = e2 the
    quadratic form of Hess f_0 = mean_j Hess f_0j is -tr(V^T A_0 V) + tr(V^T V X^T A_0 X) = -4 + 0.
    The eigenvalues of A and the optimum are read too (eigenvalues() was read by no test)."""
    Z = [np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]), np.array([[3.0, 0.0, 0.0]])]
    P = StiefelKPCA(Z, 1)
    Ps = StiefelKPCA(Z, 1, weights="samples")
    assert P.L_g_agent(0) == pytest.approx(4.0, rel=1e-15, abs=0) and P.L_g_agent(1) == pytest.approx(9.0, rel=1e-15, abs=0)
    assert P.theta == 4.5 and P.L_f == 4.5 and P.L_g == 9.0
    assert P.paper_L_g_global == pytest.approx(13.0, rel=1e-15, abs=0)
    assert P.L_g_global == pytest.approx(6.5, rel=1e-15, abs=0)
    assert Ps.L_g_global == pytest.approx(17.0 / 3.0, rel=1e-15, abs=0)
    X, V = np.eye(3)[:, 2:3], np.eye(3)[:, 1:2]
    form = np.mean([np.sum(V * P.rhess_ij(X, 0, j, V)) for j in range(2)])
    assert form == pytest.approx(-P.L_g_agent(0), rel=1e-15, abs=0)
    # A = sum p_i A_i: diag(5, 2, 0) (uniform) and diag(11/3, 8/3, 0) (by samples), eigenvalues decreasing;
    # the top-1 eigenspace is e1 in both, returned with its largest entry positive
    np.testing.assert_allclose(P.eigenvalues(), [5.0, 2.0, 0.0], rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(Ps.eigenvalues(), [11 / 3, 8 / 3, 0.0], rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(np.abs(P.optimum()), [[1.0], [0.0], [0.0]])
    assert P.optimum()[0, 0] == 1.0


def test_constructor_refuses_malformed_r_data_and_data_outside_the_domain():
    """Each agent's data are a matrix (N_i, d); r is an integer (a bool is not one, a string is not a
    number; an integral float is accepted); the data domain N_i c_i max_j ||z_ij||^2 <= 2^1000 with
    c_i = N_i/2: two samples (2^500, 0, 0) give 2 * 1 * 2^1000 = 2.143e301 > 2^1000, refused, while one
    gives 1 * 0.5 * 2^1000, accepted."""
    with pytest.raises(ValueError, match=r"^StiefelKPCA: each agent's data must be a 2-D array \(N_i, d\) \(got ndim 1\)$"):
        StiefelKPCA([np.ones(3)], 1)
    for r in (True, "1"):
        with pytest.raises(ValueError, match=r"^StiefelKPCA: r must be an integer in \[1, d - 1\] \(d = 3; r = d makes f constant\)"):
            StiefelKPCA([np.eye(3)], r)
    assert StiefelKPCA([np.eye(3)], 2.0).r == 2
    big = np.array([[2.0**500, 0.0, 0.0]])
    with pytest.raises(ValueError, match=r"^StiefelKPCA: Z\[0\] is outside the domain of the problem: N_i c_i max_j "
                                         r"\|\|z_ij\|\|\^2 = 2\.143e\+301 > 2\^1000"):
        StiefelKPCA([np.vstack([big, big])], 1)
    P = StiefelKPCA([big], 1)
    assert math.isfinite(P.f(np.eye(3)[:, :1]))


def test_principal_angles_orthonormality_tolerance_is_the_stated_1e_8():
    """principal_angles refuses frames with max |A^T A - I| above the 1e-08 its message states: the column
    (1 + delta) e_1 has A^T A - I = 2 delta + delta^2, so delta = 7.5e-9 (1.5e-8) is refused and
    delta = 3.75e-9 (7.5e-9) accepted, with angle 0 to e_1."""
    e1 = np.eye(3)[:, :1]
    with pytest.raises(ValueError, match=r"^principal_angles: X does not have orthonormal columns \(max \|A\^T A - I\| = 1\.5e-08, tolerance 1e-08\)$"):
        principal_angles((1 + 7.5e-9) * e1, e1)
    assert principal_angles((1 + 3.75e-9) * e1, e1)[0] == pytest.approx(0.0, rel=0, abs=1e-8)


def test_optimum_gap_test_is_relative_to_the_largest_eigenvalue():
    """optimum refuses when lambda_r - lambda_(r+1) <= 1e-12 |lambda_1|: a symmetric eigensolver's
    eigenvalue errors are of order eps ||A|| = eps |lambda_1| (A is positive semidefinite), so smaller
    gaps are rounding. One agent whose rows are multiples of unit vectors makes A exactly diagonal.
    (a) A = diag(2^20, 2^20 (1 - 2^-43), 0) rounded, r = 1: gap 1.2e-7 <= 1e-12 * 2^20 = 1.05e-6,
    refused (a tolerance taken from the smallest eigenvalue, or 1e-12 / 2^20, would accept it).
    (b) A = diag(2^20, 1, 1 - 2^-30), r = 2: gap 9.3e-10 is 4 eps ||A||: refused, though it is 9.3e-10 of
    lambda_2 = 1. (c) A = diag(2^20, 1, 0.25), r = 2: resolvable, accepted: X* = (e_1, e_2)."""
    b = 1024.0 * (1 - 2.0**-44)
    for diag, r in (((1024.0, b, 0.0), 1), ((1024.0, 1.0, 1 - 2.0**-31), 2)):
        P = StiefelKPCA([np.diag(diag)], r)
        lam = P.eigenvalues()
        assert lam[r - 1] - lam[r] <= 1e-12 * 2.0**20
        with pytest.raises(ValueError, match=r"^StiefelKPCA\.optimum: lambda_r = lambda_\(r\+1\) to rounding \(gap .*, "
                                             r"tolerance 1\.049e-06\): the optimal subspace is not unique$"):
            P.optimum()
    P = StiefelKPCA([np.diag([1024.0, 1.0, 0.5])], 2)
    np.testing.assert_array_equal(P.optimum(), np.eye(3)[:, :2])
