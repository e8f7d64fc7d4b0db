"""Sphere PCA (000 (6.1), 001 (2), 002 (4)): gradients, Hessian, optimum, constants, errata, bad input.

Known answers come from closed forms (data built with a prescribed spectrum, the angle pi/4 where
the gradient norm peaks), finite differences along the manifold's Exp, and an mpmath 50-digit
eigen-solver; nothing is compared with a value computed by the code under test.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.problems.sphere_pca import SpherePCA
from problem_probes import central_points, point_and_direction

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def random_problem(seed, paper="000"):
    rng = np.random.default_rng(seed)
    D1 = int(rng.integers(2, 7))
    N = 1 if paper == "001" else int(rng.integers(1, 4))
    Z = [rng.standard_normal((int(rng.integers(1, 6)), D1)) * rng.uniform(0.2, 2.0) for _ in range(N)]
    return SpherePCA(Z, paper=paper), rng


def fd_along_exp(M, fun, x, v, h=1e-5):
    return (fun(M.exp(x, h * v)) - fun(M.exp(x, -h * v))) / (2 * h)


@given(seed=seeds, paper=st.sampled_from(["000", "001", "002"]))
def test_per_sample_gradient_matches_finite_difference_along_exp(seed, paper):
    """d/dt f_ij(Exp_x(t v)) at 0 equals <grad f_ij(x), v>; grad is tangent; egrad2rgrad(egrad) = grad."""
    P, rng = random_problem(seed, paper)
    M, x, v = point_and_direction(P, rng)
    for i, j in P.samples():
        g = P.rgrad_ij(x, i, j)
        assert abs(x @ g) <= 1e-12 * (1 + np.linalg.norm(g))
        fd = fd_along_exp(M, lambda y: P.f_ij(y, i, j), x, v)
        assert abs(fd - g @ v) <= 1e-6 * (1 + P.theta) * (1 + np.linalg.norm(v))
        np.testing.assert_allclose(M.egrad2rgrad(x, P.egrad_ij(x, i, j)), g, atol=1e-12 * (1 + P.theta))


@given(seed=seeds)
def test_euclidean_gradient_matches_ambient_finite_difference(seed):
    """egrad_ij is the gradient of the ambient extension -c (z^T x)^2 (central differences in R^{d+1})."""
    P, rng = random_problem(seed)
    x = rng.standard_normal(P.d + 1)
    e = rng.standard_normal(P.d + 1)
    h = 1e-5
    for i, j in P.samples():
        z, c = P.Z[i][j], P.c[i]
        fd = (-c * (z @ (x + h * e)) ** 2 + c * (z @ (x - h * e)) ** 2) / (2 * h)
        x_unit = x / np.linalg.norm(x)
        # evaluate at a point of the sphere through the public API; the formula is linear in x
        g = P.egrad_ij(x_unit, i, j) * np.linalg.norm(x)
        assert abs(fd - g @ e) <= 1e-6 * (1 + P.theta) * (1 + np.linalg.norm(x)) * np.linalg.norm(e)


@given(seed=seeds, paper=st.sampled_from(["000", "002"]))
def test_agent_and_global_gradients_are_weighted_means_of_per_sample_ones(seed, paper):
    """grad f_i = mean_j grad f_ij (batched), grad f = sum_i p_i grad f_i; same for f and egrad."""
    P, rng = random_problem(seed, paper)
    x = P.manifold.random_point(rng)
    tot_g, tot_f, tot_e = 0.0, 0.0, 0.0
    for i in range(P.N):
        B = P.rgrad_batch(x, i, np.arange(P.N_i[i]))
        assert B.shape == (P.N_i[i], P.d + 1)
        np.testing.assert_allclose(P.rgrad_i(x, i), B.mean(axis=0), atol=1e-12 * (1 + P.theta))
        assert math.isclose(P.f_i(x, i), np.mean([P.f_ij(x, i, j) for j in range(P.N_i[i])]), rel_tol=1e-12, abs_tol=1e-12 * P.theta)
        np.testing.assert_allclose(P.egrad_i(x, i), P.egrad_batch(x, i, range(P.N_i[i])).mean(axis=0), atol=1e-12 * (1 + P.theta))
        tot_g = tot_g + P.p[i] * B.mean(axis=0)
        tot_f += P.p[i] * P.f_i(x, i)
        tot_e = tot_e + P.p[i] * P.egrad_i(x, i)
    np.testing.assert_allclose(P.rgrad(x), tot_g, atol=1e-12 * (1 + P.theta))
    np.testing.assert_allclose(P.egrad(x), tot_e, atol=1e-12 * (1 + P.theta))
    assert math.isclose(P.f(x), tot_f, rel_tol=1e-12, abs_tol=1e-12 * P.theta)
    assert math.isclose(P.f(x), -(x @ P.A @ x), rel_tol=1e-10, abs_tol=1e-12 * P.theta)
    assert math.isclose(sum(P.p), 1.0)
    # trainer-interface aliases
    np.testing.assert_array_equal(P.grad(x), P.rgrad(x))
    np.testing.assert_array_equal(P.grad_sample(x, 0, 0), P.rgrad_ij(x, 0, 0))
    assert P.sizes == P.N_i


@given(seed=seeds)
def test_hessian_matches_derivative_of_transported_gradient(seed):
    """Hess f_ij(x)[v] = d/dt Gamma_{y(t)}^x grad f_ij(y(t)) at 0, y(t) = Exp_x(t v) (central difference)."""
    P, rng = random_problem(seed)
    h = 1e-5
    M, x, v, yp, ym = central_points(P, rng, h)
    for i, j in P.samples():
        fd = (M.transp(yp, x, P.rgrad_ij(yp, i, j)) - M.transp(ym, x, P.rgrad_ij(ym, i, j))) / (2 * h)
        np.testing.assert_allclose(P.rhess_ij(x, i, j, v), fd, atol=1e-6 * (1 + P.theta) * (1 + np.linalg.norm(v)))


def test_000_printed_hessian_has_the_wrong_sign():
    """000 section 6.1 prints Hess f_ij(x)[v] = 2 zz^T v - 2 (x^T zz^T v) x - 2 (x^T zz^T x) v, the Hessian
    of +x^T zz^T x; for f_ij = -x^T zz^T x it is the negative (checked against finite differences)."""
    rng = np.random.default_rng(7)
    z = rng.standard_normal(4)
    P = SpherePCA([z[None, :]])
    h = 1e-5
    M, x, v, yp, ym = central_points(P, rng, h)
    fd = (M.transp(yp, x, P.rgrad_ij(yp, 0, 0)) - M.transp(ym, x, P.rgrad_ij(ym, 0, 0))) / (2 * h)
    printed = 2 * z * (z @ v) - 2 * (x @ z) * (z @ v) * x - 2 * (x @ z) ** 2 * v
    np.testing.assert_allclose(-printed, fd, atol=1e-7)
    assert np.linalg.norm(printed - fd) > 0.1 * np.linalg.norm(fd)


def spectrum_problem(lams, n_per_agent, rng):
    """Data with a prescribed covariance: Z = sqrt(n) U diag(sqrt(lam)) V^T, U (n x D) orthonormal
    columns, so Z^T Z / n = V diag(lam) V^T; one agent per entry of n_per_agent, same V."""
    D1 = len(lams)
    V, _ = np.linalg.qr(rng.standard_normal((D1, D1)))
    Z = []
    for n in n_per_agent:
        U, _ = np.linalg.qr(rng.standard_normal((n, D1)))
        Z.append(math.sqrt(n) * U @ np.diag(np.sqrt(lams)) @ V.T)
    return Z, V


@given(seed=seeds)
def test_optimum_is_the_top_eigenvector_of_a_prescribed_spectrum(seed):
    """With covariance V diag(lam) V^T built in, x* = +-V[:, k] for the largest lam_k (placed at a
    random position, so an unsorted solver would be caught), f(x*) = -max lam, grad f(x*) = 0,
    and f(x*) <= f at random points."""
    rng = np.random.default_rng(seed)
    D1 = int(rng.integers(2, 7))
    lams = np.sort(rng.uniform(0.1, 1.0, D1))
    lams[-1] = lams[-2] + rng.uniform(0.05, 1.0)  # a gap
    perm = rng.permutation(D1)
    lams = lams[perm]
    k = int(np.argmax(lams))
    Z, V = spectrum_problem(lams, [int(rng.integers(D1, D1 + 4)) for _ in range(int(rng.integers(1, 4)))], rng)
    P = SpherePCA(Z)
    x = P.optimum()
    assert min(np.linalg.norm(x - V[:, k]), np.linalg.norm(x + V[:, k])) <= 1e-10
    assert math.isclose(P.f(x), -lams[k], rel_tol=1e-11)
    assert P.rgrad_norm(x) <= 1e-10
    np.testing.assert_allclose(P.eigenvalues(), np.sort(lams)[::-1], rtol=1e-11)
    for _ in range(20):
        assert P.f(x) <= P.f(P.manifold.random_point(rng)) + 1e-12
    assert P.angle_to_optimum(-V[:, k]) <= 1e-10
    assert math.isclose(P.angle_to_optimum(V[:, (k + 1) % D1]), math.pi / 2, rel_tol=1e-12)


def test_optimum_agrees_with_mpmath_eigensolver_at_50_digits():
    """An independent oracle: mpmath.eigsy at 50 digits on the same matrix A."""
    rng = np.random.default_rng(3)
    Z = [rng.standard_normal((n, 5)) for n in (4, 7)]
    P = SpherePCA(Z)
    with mpmath.workdps(50):
        A = mpmath.matrix(P.A.tolist())
        E, Q = mpmath.eigsy(A)
        k = max(range(5), key=lambda t: E[t])
        q = np.array([float(Q[r, k]) for r in range(5)])
        lam = float(E[k])
    x = P.optimum()
    assert min(np.linalg.norm(x - q), np.linalg.norm(x + q)) <= 1e-12
    assert math.isclose(P.f(x), -lam, rel_tol=1e-13)


@given(seed=seeds)
def test_optimum_from_fewer_samples_than_coordinates_is_the_top_eigenvector_of_A(seed):
    """n < d + 1 takes the Gram route (the n x n matrix W W^T): its x* must be the top eigenvector of
    A = sum_i p_i (c_i / N_i) Z_i^T Z_i from the full ``numpy.linalg.eigh`` of A itself (a different
    matrix, a different solver), f(x*) = -lambda_1, and grad f(x*) = 0. Random agents, sizes from 1 to d,
    both papers' scalings; draws whose relative gap is under 1e-3 are redrawn (x* is then
    ill-conditioned and the comparison would measure conditioning, not the route)."""
    rng = np.random.default_rng(seed)
    while True:
        D1 = int(rng.integers(3, 12))
        n_agents = int(rng.integers(1, min(4, D1)))
        sizes = rng.multinomial(int(rng.integers(n_agents, D1)) - n_agents, [1 / n_agents] * n_agents) + 1
        Z = [rng.standard_normal((int(k), D1)) * rng.uniform(0.2, 3.0) for k in sizes]
        paper = "002" if rng.random() < 0.5 else "000"
        P = SpherePCA(Z, paper=paper)
        lam, V = np.linalg.eigh(P.A)
        if lam[-1] - lam[-2] > 1e-3 * lam[-1]:
            break
    assert sum(P.N_i) < D1
    x = P.optimum()
    assert min(np.linalg.norm(x - V[:, -1]), np.linalg.norm(x + V[:, -1])) <= 1e-9
    assert math.isclose(np.linalg.norm(x), 1.0, rel_tol=1e-14)
    assert math.isclose(P.f(x), -lam[-1], rel_tol=1e-11)
    assert P.rgrad_norm(x) <= 1e-9 * lam[-1]
    k = int(np.argmax(np.abs(x)))
    assert x[k] > 0


def test_optimum_with_fewer_samples_than_coordinates_never_forms_A(monkeypatch):
    """The Gram route's promise (O(n^2 (d + 1)), not O((d + 1)^3)): with n < d + 1 the d x d matrix A is
    never built. One sample: A = c p z z^T / 1 has lambda_2 = 0, so x* = z / ||z|| (sign fixed)."""
    z = np.array([0.5, -3.0, 1.0, 2.0])
    P = SpherePCA([z[None, :]])

    def no_A(self):
        raise AssertionError("A was formed")

    monkeypatch.setattr(SpherePCA, "A", property(no_A))
    x = P.optimum()
    np.testing.assert_allclose(x, -z / np.linalg.norm(z), rtol=1e-15)
    # lambda_1 = ||z||^2 / 100 = 0.1425 < 1: still simple (lambda_2 = 0), whatever its size
    np.testing.assert_allclose(SpherePCA([z[None, :] / 10]).optimum(), -z / np.linalg.norm(z), rtol=1e-15)


@pytest.mark.parametrize("lam1", [1.0, 4.0, 0.25])
@pytest.mark.parametrize("route", ["A", "Gram"])
def test_optimum_refuses_exactly_the_gaps_up_to_1e_12_lambda_1(lam1, route):
    """The documented threshold: refused when lambda_1 - lambda_2 <= 1e-12 lambda_1, accepted above. A
    diagonal covariance built in (A = diag(lam), computed to about 1e-16 relative) with gaps of 1.5e-12
    and 0.8e-12 lambda_1: the first is accepted (x* = e_1), the second refused. ``route="Gram"`` gives
    the same A from two samples in four coordinates (n < d + 1)."""
    for rel_gap, accepted in ((1.5e-12, True), (0.8e-12, False)):
        lam = np.array([lam1, lam1 * (1 - rel_gap), 0.5 * lam1])
        if route == "A":
            Z = [np.diag(np.sqrt(3 * lam))]  # A = (1/3) Z^T Z = diag(lam)
        else:
            Z = [np.diag(np.sqrt(2 * lam[:2])) @ np.eye(2, 4)]  # A = diag(lam_1, lam_2, 0, 0)
        P = SpherePCA(Z)
        if accepted:
            np.testing.assert_allclose(P.optimum(), np.eye(Z[0].shape[1])[0], atol=1e-15)
        else:
            with pytest.raises(ValueError, match="the top eigenvalue is not simple"):
                P.optimum()


def test_A_is_kept_and_read_only():
    """A is computed once and shared (the optimum and the verified history read it), so a caller must not
    be able to change it in place."""
    P = SpherePCA([np.arange(6.0).reshape(2, 3)])
    A = P.A
    assert P.A is A
    with pytest.raises(ValueError, match="read-only"):
        A[0, 0] = 1.0


@pytest.mark.parametrize("sizes,D1", [((4, 7), 5), ((2, 3), 8), ((1,), 6)])
def test_optimum_agrees_with_mpmath_eigensolver_on_both_routes(sizes, D1):
    """mpmath.eigsy at 50 digits on A itself, for n >= d + 1 (A's top two eigenpairs) and n < d + 1
    (the Gram route), with paper 002's scale c_i = N_i / 2 so that the weights enter W."""
    rng = np.random.default_rng(11)
    Z = [rng.standard_normal((n, D1)) for n in sizes]
    P = SpherePCA(Z, paper="002")
    with mpmath.workdps(50):
        A = mpmath.matrix(D1, D1)
        for i, z in enumerate(Z):
            w = mpmath.mpf(P.p[i]) * mpmath.mpf(P.c[i]) / len(z)
            for r in range(D1):
                for c in range(D1):
                    A[r, c] += w * mpmath.fsum(mpmath.mpf(z[j, r]) * mpmath.mpf(z[j, c]) for j in range(len(z)))
        E, Q = mpmath.eigsy(A)
        k = max(range(D1), key=lambda t: E[t])
        q = np.array([float(Q[r, k]) for r in range(D1)])
        lam = float(E[k])
    x = P.optimum()
    assert min(np.linalg.norm(x - q), np.linalg.norm(x + q)) <= 1e-12
    assert math.isclose(P.f(x), -lam, rel_tol=1e-13)


def test_lead15_unsorted_eig_first_column_is_not_the_optimum():
    """ERRATA lead 15: np.linalg.eig does not sort; its first eigenvector can be far from x*.
    Here A has eigenvalues (0.1, 0.5, 2.0) on the axes; eig of the diagonal returns e_1 first
    (eigenvalue 0.1), whose f is 20x worse than f(x*) = -2."""
    Z = [np.diag(np.sqrt([0.1, 0.5, 2.0])) * math.sqrt(3)]
    P = SpherePCA(Z)
    w, U = np.linalg.eig(P.A)
    first = np.real(U[:, 0])
    x = P.optimum()
    np.testing.assert_allclose(np.abs(x), [0, 0, 1], atol=1e-14)
    assert P.f(first) > P.f(x) + 1.0
    assert P.angle_to_optimum(first) > 1.0


@pytest.mark.parametrize("Z", [[np.eye(3)], [np.eye(5)[:2]], [np.zeros((1, 4))], [np.zeros((6, 4))]],
                         ids=["A-route", "Gram-route", "Gram-route-zero-data", "A-route-zero-data"])
def test_optimum_refuses_a_double_top_eigenvalue(Z):
    """A = I / 3 (n = d + 1); A = diag(1/2, 1/2, 0, 0, 0) from two samples of five coordinates (the Gram
    route); all-zero data (lambda_1 = lambda_2 = 0) on both routes."""
    with pytest.raises(ValueError, match="SpherePCA.optimum: the top eigenvalue is not simple"):
        SpherePCA(Z).optimum()


# ---------------------------------------------------------------------- constants
@given(seed=seeds, paper=st.sampled_from(["000", "001", "002"]))
def test_sampled_gradient_norms_are_below_L_f(seed, paper):
    """||grad f_ij(x)|| <= L_f = vartheta at random points (closed form c ||z||^2 |sin 2 phi|)."""
    P, rng = random_problem(seed, paper)
    for _ in range(5):
        x = P.manifold.random_point(rng)
        for i, j in P.samples():
            g = np.linalg.norm(P.rgrad_ij(x, i, j))
            z = P.Z[i][j]
            phi = math.atan2(np.linalg.norm(z - (z @ x) * x), z @ x)
            assert math.isclose(g, P.c[i] * (z @ z) * abs(math.sin(2 * phi)), rel_tol=1e-9, abs_tol=1e-12 * P.theta)
            assert g <= P.L_f * (1 + 1e-12)


def test_L_f_is_attained_so_001_bound_is_tight_and_000_bound_is_twice_it():
    """ERRATA lead 7. At phi = pi/4 from the longest z, ||grad f_ij|| = z^T z = vartheta exactly, so
    L_f = vartheta (001's conclusion) is the best constant; 000's 2 vartheta~ is valid but twice it.
    001's intermediate step 2 ||z z^T w|| <= vartheta is false (at w = z/||z|| it reads 2||z||^2 <= ||z||^2)."""
    z = np.array([3.0, 4.0, 0.0])  # ||z||^2 = 25
    P = SpherePCA([z[None, :], np.array([[0.0, 1.0, 0.0]])], paper="000")
    u = np.array([-4.0, 3.0, 0.0]) / 5.0
    x = (z / 5.0 + u) / math.sqrt(2.0)
    assert math.isclose(np.linalg.norm(P.rgrad_ij(x, 0, 0)), 25.0, rel_tol=1e-14)
    assert P.L_f == 25.0 and P.paper_L_f == 50.0
    assert SpherePCA(z[None, :], paper="001").paper_L_f == 25.0
    w = z / 5.0
    assert 2 * np.linalg.norm(np.outer(z, z) @ w) == 50.0 > P.theta  # the false intermediate step


def test_L_g_is_attained_in_both_directions():
    """||Hess f_ij|| <= 2 vartheta with equality: at x orthogonal to z, <z/|z|, Hess z/|z|> = -2||z||^2;
    at x = z/||z||, Hess = +2||z||^2 on all of T_x (closed forms of the eigenvalues)."""
    z = np.array([0.0, 2.0, 0.0])
    P = SpherePCA(z[None, :])
    x = np.array([1.0, 0.0, 0.0])
    v = z / 2.0
    assert math.isclose(v @ P.rhess_ij(x, 0, 0, v), -8.0, rel_tol=1e-14)
    x2 = z / 2.0
    v2 = np.array([0.0, 0.0, 1.0])
    assert math.isclose(v2 @ P.rhess_ij(x2, 0, 0, v2), 8.0, rel_tol=1e-14)
    assert P.L_g == 8.0 == P.paper_L_g


@given(seed=seeds)
def test_sampled_gradient_lipschitz_quotients_are_below_L_g(seed):
    """Definition 2.2 of 000: ||Gamma_y^x grad f_ij(y) - grad f_ij(x)|| <= L_g dist(x, y) at random pairs."""
    P, rng = random_problem(seed)
    M, x, v = point_and_direction(P, rng)
    v *= rng.uniform(0.01, 3.0) / np.linalg.norm(v)
    y = M.exp(x, v)
    for i, j in P.samples():
        lhs = np.linalg.norm(M.transp(y, x, P.rgrad_ij(y, i, j)) - P.rgrad_ij(x, i, j))
        assert lhs <= P.L_g * M.dist(x, y) * (1 + 1e-9) + 1e-12 * P.theta


# ---------------------------------------------------------------------- the three papers
def test_paper_002_is_minus_half_x_A_i_x_averaged_uniformly():
    """002 (4): f(x) = (1/n) sum_i -(1/2) x^T A_i x with A_i = Z_i^T Z_i (002 section 5.2)."""
    rng = np.random.default_rng(11)
    Z = [rng.standard_normal((n, 4)) for n in (2, 5, 3)]
    P = SpherePCA(Z, paper="002")
    x = P.manifold.random_point(rng)
    expected = np.mean([-0.5 * x @ (Zi.T @ Zi) @ x for Zi in Z])
    assert math.isclose(P.f(x), expected, rel_tol=1e-13)
    np.testing.assert_allclose(P.p, [1 / 3] * 3)
    assert P.paper_L_f is None and P.paper_L_g is None


def test_paper_000_weights_and_001_single_agent():
    """000 (6.1): p_i = N_i / sum N_k, f = -(1/n) sum over all samples; 001 (2) is the one-agent case."""
    rng = np.random.default_rng(12)
    Z = [rng.standard_normal((n, 3)) for n in (1, 3)]
    P = SpherePCA(Z)
    x = P.manifold.random_point(rng)
    allz = np.concatenate(Z)
    assert math.isclose(P.f(x), -np.mean((allz @ x) ** 2), rel_tol=1e-13)
    np.testing.assert_allclose(P.p, [0.25, 0.75])
    P1 = SpherePCA(allz, paper="001")
    assert math.isclose(P1.f(x), P.f(x), rel_tol=1e-13)


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "Z, kwargs, match",
    [
        ([], {}, "SpherePCA: Z is empty"),
        ([np.zeros((0, 3))], {}, "no samples"),
        ([np.ones((2, 3)), np.ones((2, 4))], {}, r"expected \(3,\)"),
        ([np.array([[1.0, np.nan, 0.0]])], {}, "non-finite"),
        ([np.ones((2, 1))], {}, "d \\+ 1 >= 2"),
        ([np.ones(3)], {}, "2-D"),
        ([np.ones((2, 3)), np.ones((2, 3))], {"paper": "001"}, "single-agent"),
        ([np.ones((2, 3))], {"paper": "003"}, "paper must be one of"),
    ],
)
def test_bad_data_raises(Z, kwargs, match):
    with pytest.raises(ValueError, match=match):
        SpherePCA(Z, **kwargs)


def test_bad_points_and_indices_raise_naming_the_method():
    P = SpherePCA([np.ones((2, 3)), np.ones((1, 3))])
    x = np.array([1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="SpherePCA.f_ij"):
        P.f_ij(np.array([1.0, 1.0, 0.0]), 0, 0)
    with pytest.raises(ValueError, match=r"SpherePCA.rgrad: x has shape \(4,\)"):
        P.rgrad(np.ones(4) / 2)
    with pytest.raises(ValueError, match=r"SpherePCA.rgrad_ij: agent index i=2 out of range \[0, 1\]"):
        P.rgrad_ij(x, 2, 0)
    with pytest.raises(ValueError, match=r"sample index j=1 out of range \[0, 0\] for agent 1"):
        P.rgrad_ij(x, 1, 1)
    with pytest.raises(ValueError, match="non-empty"):
        P.rgrad_batch(x, 0, [])
    with pytest.raises(ValueError, match="out of range"):
        P.rgrad_batch(x, 0, [0, 5])
    with pytest.raises(ValueError, match="integer"):
        P.f_i(x, 0.5)
    with pytest.raises(ValueError, match="SpherePCA.rhess_ij"):
        P.rhess_ij(x, 0, 0, np.array([1.0, 0.0, 0.0]))


def test_angle_to_optimum_solves_the_eigenproblem_once(monkeypatch):
    """Histories call angle_to_optimum every recorded round: x* is computed once (x_star), and the
    angle is the closed form: pi/4 for x = (x* + u)/sqrt 2 with u a unit vector orthogonal to x*."""
    rng = np.random.default_rng(5)
    P = SpherePCA([rng.standard_normal((20, 6)) for _ in range(3)])
    calls = []
    real = SpherePCA.optimum
    monkeypatch.setattr(SpherePCA, "optimum", lambda self: calls.append(1) or real(self))
    xs = P.x_star
    u = rng.standard_normal(6)
    u -= (u @ xs) * xs
    u /= np.linalg.norm(u)
    for _ in range(3):
        assert P.angle_to_optimum((xs + u) / math.sqrt(2)) == pytest.approx(math.pi / 4, rel=1e-12, abs=0)
    assert P.angle_to_optimum(-xs) == pytest.approx(0.0, abs=1e-12)
    assert len(calls) == 1


def test_data_bound_is_inclusive_at_two_to_the_1000():
    """The domain N_i c_i max_j ||z_ij||^2 <= 2^1000 includes its edge: two records, c = 1/2 and
    ||z||^2 = 2^1000 (z = 2^500 e_1, exact) give N_i c ||z||^2 = 2^1000, accepted; one float more
    (2^500 (1 + 2^-52)) is refused with the value in the message."""
    from prirfed.reference.problems.sphere_pca import check_data_bound

    z = np.zeros((2, 3))
    z[:, 0] = 2.0**500
    check_data_bound("f", [z], [0.5])
    z[0, 0] = math.nextafter(2.0**500, math.inf)
    with pytest.raises(ValueError, match="f: Z\\[0\\] is outside the domain"):
        check_data_bound("f", [z], [0.5])


def test_paper_002_scales_covariances_hessian_and_constants_by_N_i_over_2():
    """002 (4) has f_ij = -c_i (z^T x)^2 with c_i = N_i / 2 (so c != 1 shows). Agent 0: z = (3, 1, 0), N_0 = 1,
    c_0 = 1/2; agent 1: rows (1, 0, 0), (0, 2, 0), (0, 0, 1), N_1 = 3, c_1 = 3/2. By hand:
    covariance_0 = (c_0 / N_0) z z^T = [[4.5, 1.5, 0], [1.5, 0.5, 0], 0], covariance_1 = (1/2) diag(1, 4, 1),
    A = (covariance_0 + covariance_1) / 2 (uniform weights), eigenvalues in decreasing order;
    vartheta = max_i c_i max_j ||z_ij||^2 = max(5, 6) = 6 = L_f, L_g = 12. Hessian at x = e1 along v = e2:
    f_ij(cos t e1 + sin t e2) = -c (a cos t + b sin t)^2 has second derivative 2 c (a^2 - b^2) at t = 0, and
    Hess f_ij(e1)[e2] = 2 c (a^2 - b^2) e2: 8 e2 for sample (0, 0), -12 e2 for sample (1, 1)."""
    Z = [np.array([[3.0, 1.0, 0.0]]), np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]])]
    P = SpherePCA(Z, paper="002")
    C0 = np.array([[4.5, 1.5, 0.0], [1.5, 0.5, 0.0], [0.0, 0.0, 0.0]])
    C1 = np.diag([0.5, 2.0, 0.5])
    np.testing.assert_allclose(P.covariance_i(0), C0, rtol=1e-15)
    np.testing.assert_allclose(P.covariance_i(1), C1, rtol=1e-15)
    np.testing.assert_allclose(P.A, (C0 + C1) / 2, rtol=1e-15)
    np.testing.assert_allclose(P.eigenvalues(), np.sort(np.linalg.eigvalsh((C0 + C1) / 2))[::-1], rtol=1e-13)
    assert P.theta == 6.0 and P.L_f == 6.0 and P.L_g == 12.0
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    np.testing.assert_allclose(P.rhess_ij(e1, 0, 0, e2), 8.0 * e2, atol=1e-14)
    np.testing.assert_allclose(P.rhess_ij(e1, 1, 1, e2), -12.0 * e2, atol=1e-14)


def test_data_bound_uses_each_agents_own_scale_and_count():
    """N_i c_i max_j ||z_ij||^2 per agent, by hand: agent 0 has one record with ||z||^2 = 2^998 and c_0 = 4
    (exactly 2^1000: accepted), agent 1 one record with ||z||^2 = 2^999 and c_1 = 1 (2^999: accepted). With
    the scales swapped agent 1 is at 2^1001 and is refused, named Z[1]; with two records of 2^999 at c = 1
    (N_i = 2) agent 0 is at 2^1000 and accepted, a third record makes it 1.5 * 2^1000, refused."""
    from prirfed.reference.problems.sphere_pca import check_data_bound

    z0 = np.array([[2.0**499, 0.0]])
    z1 = np.array([[2.0**499, 2.0**499]])  # ||z||^2 = 2 * 2^998, exact
    assert float(z1[0] @ z1[0]) == 2.0**999
    check_data_bound("f", [z0, z1], [4.0, 1.0])
    with pytest.raises(ValueError, match=r"^f: Z\[1\] is outside the domain of the problem: N_i c_i max_j \|\|z_ij\|\|\^2 = 2\.143e\+301 > 2\^1000"):
        check_data_bound("f", [z0, z1], [1.0, 4.0])
    check_data_bound("f", [np.vstack([z1, z1])], [1.0])
    with pytest.raises(ValueError, match=r"^f: Z\[0\] is outside the domain"):
        check_data_bound("f", [np.vstack([z1, z1, z1])], [1.0])


def test_constructor_refuses_data_outside_the_domain():
    """The domain N_i c_i max_j ||z_ij||^2 <= 2^1000 (DATA_BOUND, where every loss and gradient is
    finite) is enforced by the constructor, for each paper's c_i: a sample (2^501, 0) gives
    1 * 1 * 2^1002 = 4.286e301 for 000; at the bound itself, (2^500, 0), it is accepted. For 002
    (c_i = N_i/2) two samples (2^500, 0) give 2 * 1 * 2^1000 = 2^1001 = 2.143e301, refused."""
    with pytest.raises(ValueError, match=r"^SpherePCA: Z\[0\] is outside the domain of the problem: N_i c_i max_j "
                                         r"\|\|z_ij\|\|\^2 = 4\.286e\+301 > 2\^1000"):
        SpherePCA([np.array([[2.0**501, 0.0]])])
    P = SpherePCA([np.array([[2.0**500, 0.0]])])
    assert math.isfinite(P.f(np.array([1.0, 0.0])))
    with pytest.raises(ValueError, match=r"^SpherePCA: Z\[1\] is outside the domain of the problem: N_i c_i max_j "
                                         r"\|\|z_ij\|\|\^2 = 2\.143e\+301 > 2\^1000"):
        SpherePCA([np.ones((1, 2)), np.array([[2.0**500, 0.0], [1.0, 0.0]])], paper="002")
