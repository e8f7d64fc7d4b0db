"""Sphere(d): the contract (both twins), twin equivalence, and the numerics DESIGN.md section 3 demands.

Independent oracles: mpmath at 50 digits (sinc, the angle and the log between the actual double
inputs), closed forms on the circle S^1, the spherical law of cosines (curvature 1), and the
rotation form of parallel transport (a different formula from the one the code uses).
"""

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from prirfed.reference.manifolds import Sphere as RefSphere
from prirfed.reference.manifolds.sphere import ANTIPODAL_TOL, sinc
from prirfed.testing.manifold_contract import ManifoldContract, VerifiedEquivalence, contract_case
from prirfed.verified.manifolds import Sphere as VerSphere
from prirfed.verified.manifolds import sphere as vsphere

EPS = np.finfo(np.float64).eps
mpmath.mp.dps = 50
TWINS = [RefSphere, VerSphere]


# ---------------------------------------------------------------------------- contract
class _SphereDraws:
    def small_radius(self, x):
        return 3.0  # below pi: Log_x(Exp_x(v)) = v needs ||v|| < pi; 3.0 * 0.9 = 2.7 stays clear of the antipode

    def off_manifold(self, x):
        return 1.5 * np.asarray(x)


TestSphereContract = contract_case("TestSphereContract", RefSphere(4), _SphereDraws)


TestVerifiedSphereContract = contract_case("TestVerifiedSphereContract", VerSphere(4), _SphereDraws)


class TestCircleContract(_SphereDraws, ManifoldContract):
    """S^1: the smallest case (tangent_basis has a single row)."""
    manifold = RefSphere(1)


class TestVerifiedSphereEqualsReference(VerifiedEquivalence):
    reference = RefSphere(6)
    verified = VerSphere(6)

    def small_radius(self, x):
        return 3.0


# ---------------------------------------------------------------------------- mpmath oracles
def mp_vec(a):
    return [mpmath.mpf(float(t)) for t in a]


def mp_dot(a, b):
    return mpmath.fsum(p * q for p, q in zip(a, b))


def mp_unit(a):
    n = mpmath.sqrt(mp_dot(a, a))
    return [t / n for t in a]


def mp_log(x, y):
    """Exact (50-digit) angle and Log between the directions of the double vectors x and y."""
    xh, yh = mp_unit(mp_vec(x)), mp_unit(mp_vec(y))
    c = mp_dot(xh, yh)
    p = [b - c * a for a, b in zip(xh, yh)]
    s = mpmath.sqrt(mp_dot(p, p))
    theta = mpmath.atan2(s, c)
    return theta, np.array([float(theta * t / s) for t in p])


def mp_exp(x, v):
    xm, vm = mp_vec(x), mp_vec(v)
    t = mpmath.sqrt(mp_dot(vm, vm))
    if t == 0:
        return np.array(x, dtype=float)
    c, s = mpmath.cos(t), mpmath.sin(t) / t
    return np.array([float(c * a + s * b) for a, b in zip(xm, vm)])


def frame(d, seed):
    """A point x and a unit tangent u at x, both exact to rounding (built in mpmath, then rounded)."""
    rng = np.random.default_rng(seed)
    xm = mp_unit(mp_vec(rng.standard_normal(d + 1)))
    g = mp_vec(rng.standard_normal(d + 1))
    c = mp_dot(xm, g)
    um = mp_unit([b - c * a for a, b in zip(xm, g)])
    return xm, um


ANGLES = sorted(set(np.logspace(-9, math.log10(math.pi - 1e-6), 25).tolist()
                    + [1e-9, 1e-7, 1e-5, 1e-3, 0.5, math.pi / 2, 3.0, math.pi - 1e-4, math.pi - 1e-6]))


def test_sinc_against_mpmath():
    """sinc (reference and kernel) has relative error <= 2 ulp (mpmath 50 digits) from 0 and the least
    subnormal to pi, at 1e-9, 1e-5, 1e-3, and around 1e-4, where a Taylor branch used to start
    (measured worst: 1.4 ulp over 20,000 log-spaced points)."""
    ts = np.concatenate([[0.0, 5e-324, 1e-310, 1e-300, 1e-12, 1e-9, 1e-5, 1e-3, math.pi],
                         1e-4 * np.array([0.5, 0.999999, 1.0, 1.000001, 2.0]),
                         np.logspace(-320, math.log10(math.pi), 300)])
    for t in ts:
        exact = mpmath.mpf(1) if t == 0 else mpmath.sin(mpmath.mpf(float(t))) / mpmath.mpf(float(t))
        ulp = math.ulp(float(exact))
        for f in (sinc, vsphere.sinc_kernel):
            err = abs(mpmath.mpf(f(float(t))) - exact)
            assert err <= 2 * ulp, f"{f.__name__}({t!r}): error {float(err / ulp):.2f} ulp"


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
@pytest.mark.parametrize("d", [4, 99])
def test_ground_truth_by_construction(cls, d):
    """y = cos(t) x + sin(t) u, t log-spaced in [1e-9, pi - 1e-6]: dist(x, y) = t, Log_x(y) = t u,
    Exp_x(t u) = y, to relative 1e-12 against mpmath at 50 digits.

    The oracle is the exact angle/Log between the *rounded* doubles x, y (rounding y moves its
    angle by ~eps absolute, i.e. relative 1e-7 at t = 1e-9, and its direction by ~eps/(pi - t)
    near the antipode). Against t itself we allow that rounding: 8 eps absolute on the angle.
    """
    M = cls(d)
    for seed in range(2):
        xm, um = frame(d, seed)
        x = np.array([float(a) for a in xm])
        u = np.array([float(a) for a in um])
        for t in ANGLES:
            tm = mpmath.mpf(t)
            y = np.array([float(mpmath.cos(tm) * a + mpmath.sin(tm) * b) for a, b in zip(xm, um)])
            theta, log_ref = mp_log(x, y)
            dxy = M.dist(x, y)
            assert abs(dxy - float(theta)) <= 1e-12 * float(theta), f"dist at t={t:.3e}: {dxy!r} vs {float(theta)!r}"
            assert abs(dxy - t) <= 1e-12 * t + 8 * EPS, f"dist at t={t:.3e} vs t"
            L = M.log(x, y)
            err = np.linalg.norm(L - log_ref)
            assert err <= 1e-12 * float(theta), f"log at t={t:.3e}: relative error {err / float(theta):.2e}"
            slack = 8 * EPS / np.linalg.norm(x + y) if t > 1 else 8 * EPS / t
            assert np.linalg.norm(L - t * u) <= t * (1e-12 + slack), f"log at t={t:.3e} vs t u"
            E = M.exp(x, t * u)
            err = np.linalg.norm(E - mp_exp(x, t * u))
            assert err <= 1e-12, f"exp at t={t:.3e}: error {err:.2e}"
            assert np.linalg.norm(E - y) <= 1e-12 + 8 * EPS * math.sqrt(d + 1)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_log_exact_at_tiny_angles_on_axes(cls):
    """x = e_0, y = (1, 1e-9, 0, ...) (norm 1 to within 5e-19): dist = atan(1e-9), Log = (0, atan(1e-9), 0, ...)."""
    M = cls(3)
    for s in (1e-9, 1e-12, 1e-15):
        x = np.array([1.0, 0, 0, 0])
        y = np.array([1.0, s, 0, 0])
        exact = float(mpmath.atan(mpmath.mpf(s)))
        assert abs(M.dist(x, y) - exact) <= 2 * math.ulp(exact)
        L = M.log(x, y)
        assert L[0] == 0.0 and L[2] == 0.0 and L[3] == 0.0
        assert abs(L[1] - exact) <= 2 * math.ulp(exact)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_circle_closed_forms(cls):
    """S^1: x = (cos a, sin a), y = (cos b, sin b): dist = |b - a| (wrapped to [0, pi]),
    Log_x(y) = (b - a)(-sin a, cos a), transport along the arc fixes the angular component."""
    M = cls(1)
    rng = np.random.default_rng(7)
    for _ in range(50):
        a = rng.uniform(-math.pi, math.pi)
        delta = rng.uniform(-3.1, 3.1)
        b = a + delta
        x, y = np.array([math.cos(a), math.sin(a)]), np.array([math.cos(b), math.sin(b)])
        tx, ty = np.array([-math.sin(a), math.cos(a)]), np.array([-math.sin(b), math.cos(b)])
        assert abs(M.dist(x, y) - abs(delta)) <= 1e-14
        np.testing.assert_allclose(M.log(x, y), delta * tx, atol=1e-14)
        np.testing.assert_allclose(M.transp(x, y, 0.7 * tx), 0.7 * ty, atol=1e-14)
        np.testing.assert_allclose(M.exp(x, delta * tx), y, atol=1e-14)


# ---------------------------------------------------------------------------- why not the naive formulas
def test_naive_formulas_fail_where_ours_do_not():
    """Documentation of why: arccos(x^T y) returns 0 at 1e-9 (x^T y rounds to 1) and ~1.5e-8-scale
    garbage at 1e-8; the printed Exp divides 0/0 at v = 0; the printed Log (004 slides) is 0/0 at
    y = x; 1 + x^T y loses its digits near the antipode. Our versions are exact at the same inputs."""
    M = RefSphere(2)
    x = np.array([1.0, 0.0, 0.0])
    for t in (1e-9, 1e-8):
        y = np.array([math.cos(t), math.sin(t), 0.0])
        naive = float(np.arccos(np.clip(x @ y, -1, 1)))
        assert abs(naive - t) > 0.05 * t  # arccos: 0.0 at 1e-9, 1.49e-8 at 1e-8
        assert abs(M.dist(x, y) - t) <= 1e-15 * t
    v0 = np.zeros(3)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.linalg.norm(v0)
        naive_exp = math.cos(t) * x + np.sin(t) * v0 / t
        Pxy = x - (x @ x) * x
        naive_log = np.arccos(np.clip(x @ x, -1, 1)) * Pxy / np.linalg.norm(Pxy)
    assert np.all(np.isnan(naive_exp)) and np.array_equal(M.exp(x, v0), x)
    assert np.all(np.isnan(naive_log)) and np.array_equal(M.log(x, x), np.zeros(3))
    # transport near the antipode: 1 + x^T y = -0.9999999999995 + 1 keeps 4 digits
    delta = 1e-6
    y = np.array([math.cos(math.pi - delta), math.sin(math.pi - delta), 0.0])
    w = np.array([0.0, 1.0, 0.0])
    naive_T = w - (y @ w) / (1 + x @ y) * (x + y)
    ours = M.transp(x, y, w)
    exact = np.array([-math.sin(math.pi - delta), math.cos(math.pi - delta), 0.0])  # rotation of e_1
    assert np.linalg.norm(naive_T - exact) > 1e-7
    assert np.linalg.norm(ours - exact) <= 1e-15


# ---------------------------------------------------------------------------- antipodes
@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_log_and_transp_refuse_antipodes(cls):
    """Log_x(-x) and transport to -x raise ValueError naming the method, ||x + y|| and the
    threshold (never a silent 0); at pi - 1e-9 too; at pi - 1e-6 they work."""
    M = cls(5)
    rng = np.random.default_rng(3)
    x = M.random_point(rng)
    u = M.random_tangent(x, rng)
    u /= np.linalg.norm(u)
    for y in (-x, math.cos(math.pi - 1e-9) * x + math.sin(math.pi - 1e-9) * u):
        with pytest.raises(ValueError, match=r"Sphere\.log: y is \(numerically\) antipodal.*threshold 1\.49e-08"):
            M.log(x, y)
        with pytest.raises(ValueError, match=r"Sphere\.transp: y is \(numerically\) antipodal"):
            M.transp(x, y, u)
        assert abs(M.dist(x, y) - math.pi) <= 1e-8  # dist is defined at the antipode
    y = math.cos(math.pi - 1e-6) * x + math.sin(math.pi - 1e-6) * u
    L = M.log(x, y)
    assert np.linalg.norm(L - (math.pi - 1e-6) * u) <= 1e-8  # (rounding of y, amplified by 1/||x+y||)
    np.testing.assert_allclose(np.linalg.norm(M.transp(x, y, u)), 1.0, rtol=1e-15)
    with pytest.raises(ValueError, match=r"Sphere\.inv_retr: y is not in the open hemisphere"):
        M.inv_retr(x, -x)


def test_kernels_refuse_antipodes_and_batches_name_the_index():
    x = np.array([0.0, 0.6, 0.8])
    for k, args in ((vsphere.log_kernel, (x, -x)), (vsphere.transp_kernel, (x, -x, np.array([1.0, 0, 0]))),
                    (vsphere.inv_retr_kernel, (x, -x))):
        with pytest.raises(ValueError, match="Sphere"):
            k(*args)
    M = VerSphere(2)
    X = np.array([x, x, x])
    Y = np.array([x, [1.0, 0, 0], -x])
    with pytest.raises(ValueError, match=r"Sphere\.log_batch: row 2: y is \(numerically\) antipodal"):
        M.log_batch(X, Y)
    with pytest.raises(ValueError, match=r"Sphere\.transp_batch: row 2: y is \(numerically\) antipodal"):
        M.transp_batch(X, Y, np.array([[1.0, 0, 0]] * 3))
    with pytest.raises(ValueError, match=r"Sphere\.dist_batch: row 1: y: not on the sphere"):
        M.dist_batch(X, np.array([x, 2 * x, x]))
    with pytest.raises(ValueError, match=r"Sphere\.exp_batch: row 0: v: not tangent at x"):
        M.exp_batch(X, X)
    with pytest.raises(ValueError, match=r"Sphere\.exp_batch: V has shape \(3, 4\), expected \(n, 3\)"):
        M.exp_batch(X, np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"Sphere\.exp_batch: stacks have different lengths"):
        M.exp_batch(X, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"Sphere\.exp_batch: row 1: \|\|v\|\| = 1\.000e\+200 is not below 2\^52"):
        M.exp_batch(X[:2], np.array([[0.0, 0.0, 0.0], [1e200, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"Sphere\.log_batch: row 1: x has 1 non-finite"):
        M.log_batch(np.array([x, [np.nan, 0, 1]]), np.array([x, x]))


# ---------------------------------------------------------------------------- transport
def mp_transp(x, y, v):
    """Textbook parallel transport at 50 digits: rotation by theta in the plane of x and u = P_x y/||P_x y||
    (v + (cos(theta) - 1)(u^T v) u - sin(theta)(u^T v) x), for the directions of the doubles x, y."""
    xh, yh = mp_unit(mp_vec(x)), mp_unit(mp_vec(y))
    c = mp_dot(xh, yh)
    p = [b - c * a for a, b in zip(xh, yh)]
    s = mpmath.sqrt(mp_dot(p, p))
    u = [t / s for t in p]
    vm = mp_vec(v)
    uv = mp_dot(u, vm)
    theta = mpmath.atan2(s, c)
    return np.array([float(vk + (mpmath.cos(theta) - 1) * uv * uk - mpmath.sin(theta) * uv * xk)
                     for vk, uk, xk in zip(vm, u, xh)])


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_transport_against_rotation_form_and_printed_log_free_form(cls):
    """Gamma_x^y v equals the textbook rotation form (mpmath, 50 digits) to 1e-14 from theta = 1e-7 to
    pi - 1e-6, keeps the norm to 4 eps, equals the printed log-free form v - (y^T v)/(1 + x^T y)(x + y)
    away from the antipode, and maps Log_x(y) to -Log_y(x)."""
    M = cls(6)
    for seed in range(20):
        xm, um = frame(6, 100 + seed)
        x = np.array([float(a) for a in xm])
        rng = np.random.default_rng(seed)
        v = M.proj(x, rng.standard_normal(7))
        t = [1e-7, 0.3, 1.5, 2.9, math.pi - 1e-6][seed % 5]
        tm = mpmath.mpf(t)
        y = np.array([float(mpmath.cos(tm) * a + mpmath.sin(tm) * b) for a, b in zip(xm, um)])
        T = M.transp(x, y, v)
        err = np.linalg.norm(T - mp_transp(x, y, v))
        assert err <= 1e-14 * (1 + np.linalg.norm(v)), f"t={t}: {err:.2e}"
        assert abs(np.linalg.norm(T) - np.linalg.norm(v)) <= 4 * EPS * np.linalg.norm(v)
        if t < 3:
            printed = v - (y @ v) / (1 + x @ y) * (x + y)
            assert np.linalg.norm(T - printed) <= 1e-13 * (1 + np.linalg.norm(v))
        L = M.log(x, y)
        np.testing.assert_allclose(M.transp(x, y, L), -M.log(y, x), atol=1e-13)


# ---------------------------------------------------------------------------- basis and draws
@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_tangent_basis_stable_everywhere(cls):
    """Orthonormal to 1e-15 and orthogonal to x at the poles +-e_0, on and near the equator x_0 = 0
    (where the sign switches), and at random points."""
    d = 5
    M = cls(d)
    pts = [np.eye(d + 1)[0], -np.eye(d + 1)[0], np.eye(d + 1)[3]]
    for x0 in (1e-300, -1e-300, 1e-9, -1e-9, 1 - 1e-12, -(1 - 1e-12)):
        p = np.zeros(d + 1)
        p[0] = x0
        p[1] = math.sqrt((1 - x0) * (1 + x0))
        pts.append(p)
    rng = np.random.default_rng(11)
    pts += [M.random_point(rng) for _ in range(20)]
    for x in pts:
        E = M.tangent_basis(x)
        assert E.shape == (d, d + 1)
        assert np.max(np.abs(E @ E.T - np.eye(d))) <= 4 * EPS
        assert np.max(np.abs(E @ x)) <= 4 * EPS


def test_tangent_basis_and_random_tangent_identical_in_twins():
    """Same basis bit for bit (same order and signs), so samplers are draw-for-draw identical."""
    R, V = RefSphere(9), VerSphere(9)
    rng = np.random.default_rng(5)
    for _ in range(20):
        x = R.random_point(rng)
        assert np.array_equal(R.tangent_basis(x), V.tangent_basis(x))
        assert np.array_equal(vsphere.tangent_basis_kernel(x), R.tangent_basis(x))
        seed = int(rng.integers(2**32))
        assert np.array_equal(R.random_tangent(x, np.random.default_rng(seed)),
                              V.random_tangent(x, np.random.default_rng(seed)))


def test_random_point_is_uniform():
    """Uniform on S^d makes (x_0 + 1)/2 ~ Beta(d/2, d/2). Kolmogorov-Smirnov on 4000 draws
    (fixed seed) rejected at level 1e-3: false-alarm probability 1e-3 under a correct sampler."""
    d = 4
    M = RefSphere(d)
    rng = np.random.default_rng(2024)
    x0 = np.array([M.random_point(rng)[0] for _ in range(4000)])
    assert stats.kstest((x0 + 1) / 2, stats.beta(d / 2, d / 2).cdf).pvalue > 1e-3


def test_random_tangent_is_standard_gaussian_on_T_x():
    """v = sum z_k E_k: coordinates in any orthonormal frame of T_x are N(0, 1). Check E||v||^2 = d
    (chi-square with 2000 d degrees of freedom, two-sided level 1e-3) and tangency."""
    d = 6
    M = RefSphere(d)
    rng = np.random.default_rng(99)
    x = M.random_point(rng)
    vs = np.array([M.random_tangent(x, rng) for _ in range(2000)])
    assert np.max(np.abs(vs @ x)) <= 1e-14
    s = float(np.sum(vs * vs))
    chi = stats.chi2(2000 * d)
    assert chi.ppf(5e-4) < s < chi.ppf(1 - 5e-4)


# ---------------------------------------------------------------------------- curvature, drift, retraction
@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_spherical_law_of_cosines(cls):
    """Curvature exactly 1: cos a = cos b cos c + sin b sin c cos A for geodesic triangles (it holds
    for no other constant curvature), with A the angle between Log_x(y) and Log_x(z)."""
    M = cls(4)
    assert M.curvature_bounds == (1.0, 1.0) and M.injectivity_radius() == math.pi
    assert M.dim == 4 and M.ambient_shape == (5,)
    rng = np.random.default_rng(8)
    for _ in range(50):
        x, y, z = (M.random_point(rng) for _ in range(3))
        b, c, a = M.dist(x, y), M.dist(x, z), M.dist(y, z)
        cosA = (M.log(x, y) @ M.log(x, z)) / (b * c)
        assert abs(math.cos(a) - (math.cos(b) * math.cos(c) + math.sin(b) * math.sin(c) * cosA)) <= 1e-13


def test_no_drift_over_many_steps():
    """20000 chained steps of length up to 3 with tangent inputs leave | ||x|| - 1 | below 1e-13,
    far inside the point tolerance 1e-10 (exp renormalises its output; see the next test for the
    non-tangent gradients that made that necessary)."""
    M = VerSphere(24)
    rng = np.random.default_rng(1)
    x = M.random_point(rng)
    for _ in range(20000):
        v = M.random_tangent(x, rng)
        v *= rng.uniform(0, 3) / np.linalg.norm(v)
        x = vsphere.exp_kernel(x, v)
    assert abs(np.linalg.norm(x) - 1) <= 1e-13
    M.check_point(x)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_projective_retraction(cls):
    """R_x(v) = (x+v)/||x+v|| and R_x^{-1}(y) = y/(x^T y) - x: the inverse is accurate to relative
    1e-13 (mpmath oracle) at tiny and large steps, and R_x(v) is the point at angle atan(||v||) along v."""
    M = cls(3)
    rng = np.random.default_rng(4)
    x = M.random_point(rng)
    u = M.random_tangent(x, rng)
    u /= np.linalg.norm(u)
    for s in (1e-12, 1e-9, 1e-3, 1.0, 100.0):
        y = M.retr(x, s * u)
        # oracle: y/(x^T y) - x at 50 digits for the directions of the doubles x, y
        xh, yh = mp_unit(mp_vec(x)), mp_unit(mp_vec(y))
        c = mp_dot(xh, yh)
        ref = np.array([float(b / c - a) for a, b in zip(xh, yh)])
        V = M.inv_retr(x, y)
        assert np.linalg.norm(V - ref) <= 1e-13 * np.linalg.norm(ref)
        assert np.linalg.norm(V - s * u) <= 1e-14 * s * max(1.0, s) + 8 * EPS * max(1.0, s * s)  # + rounding of y
        assert abs(M.dist(x, y) - math.atan(s)) <= 8 * EPS + 1e-14 * math.atan(s)
    # second order: R_x(t u) - Exp_x(t u) = -(t^3/3) u + O(t^4)  (series of (x + t u)/sqrt(1 + t^2) vs cos t x + sin t u)
    for t in (1e-2, 1e-3):
        diff = M.retr(x, t * u) - M.exp(x, t * u)
        np.testing.assert_allclose(diff / t**3, -u / 3, atol=2 * t)


def test_001_printed_pgd_step_ascends():
    """001 section 5.1 prints the DP-PGD step as w_{t+1} = (w_t + zeta_t)/||w_t + zeta_t||, zeta_t =
    grad F(w_t) + noise (extraction: no step size, + sign). With a step size h, (w + h grad F)/||.||
    has d/dh F = ||P_w grad F||^2 > 0 at h = 0: it ascends F(w) = -w^T A w (001 (2)); the descent step
    is (w - h zeta)/||.||. (With h large, (I - 2hA) w is a power step that can still reach the top
    eigenvector because F(w) = F(-w), which may hide the sign in experiments.) Noise-free, h = 1e-3."""
    A = np.diag([3.0, 2.0, 1.0])
    F = lambda w: -w @ A @ w  # noqa: E731
    w = np.array([1.0, 1.0, 1.0]) / math.sqrt(3)
    g = -2 * A @ w
    h = 1e-3
    printed = (w + h * g) / np.linalg.norm(w + h * g)
    descent = (w - h * g) / np.linalg.norm(w - h * g)
    assert F(printed) > F(w) > F(descent)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_bad_input(cls):
    for d in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="Sphere: dimension"):
            cls(d)
    M = cls(2)
    x = np.array([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"Sphere\.check_point: not on the sphere \(\| \|\|x\|\| - 1 \| = 1\.0e-06, tolerance 1\.0e-10\)"):
        M.check_point(np.array([0.0, 0.0, 1.0 + 1e-6]))
    with pytest.raises(ValueError, match=r"Sphere\.exp: v: not tangent at x \(\|x\^T v\| = 1\.0e-03"):
        M.exp(x, np.array([1.0, 0.0, 1e-3]))
    with pytest.raises(ValueError, match=r"Sphere\.exp: \|\|v\|\| = 1\.414e\+200 is not below 2\^52"):
        M.exp(x, np.array([1e200, 1e200, 0.0]))
    with pytest.raises(ValueError, match=r"Sphere\.log: y has shape \(2,\), expected \(3,\)"):
        M.log(x, np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"Sphere\.transp: y: not on the sphere"):
        M.transp(x, np.array([1.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"Sphere\.proj: w has 1 non-finite entry"):
        M.proj(x, np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"Sphere\.inv_retr: y is not in the open hemisphere.*x\^T y = 0\.00e\+00"):
        M.inv_retr(x, np.array([1.0, 0.0, 0.0]))
    # tolerances scale: with validate=False nothing is checked but antipodes are still refused
    N = cls(2, validate=False)
    with pytest.raises(ValueError, match="antipodal"):
        N.log(x, -x)


def test_tolerance_scales_with_dimension_and_tangent_norm():
    assert RefSphere(3).tol == 1e-10
    assert RefSphere(10**6).tol == pytest.approx(1000 * (10**6 + 1) * EPS, rel=1e-15, abs=0)
    M = RefSphere(2)
    x = np.array([0.0, 0.0, 1.0])
    M.check_tangent(x, np.array([1e6, 0.0, 5e-5]))  # |x^T v| = 5e-5 <= 1e-10 * 1e6
    with pytest.raises(ValueError, match="not tangent"):
        M.check_tangent(x, np.array([1.0, 0.0, 5e-5]))


def test_verified_constants_match_reference():
    """Numba caches kernel globals without tracking them: the verified literals must equal the reference."""
    assert vsphere._ANTI == ANTIPODAL_TOL


def test_batch_into_kernels_equal_batch_kernels():
    """The *_batch_into kernels (caller's buffer) return the same bits as the allocating batch kernels."""
    M = VerSphere(7)
    rng = np.random.default_rng(21)
    X = np.array([M.random_point(rng) for _ in range(30)])
    V = np.array([0.9 * M.random_tangent(x, rng) / math.sqrt(7) for x in X])
    Y = vsphere.exp_batch(X, V)
    W = np.array([M.random_tangent(x, rng) for x in X])
    buf = np.empty_like(X)
    vsphere.exp_batch_into(X, V, buf)
    assert np.array_equal(buf, vsphere.exp_batch(X, V))
    vsphere.log_batch_into(X, Y, buf)
    assert np.array_equal(buf, vsphere.log_batch(X, Y))
    vsphere.transp_batch_into(X, Y, W, buf)
    assert np.array_equal(buf, vsphere.transp_batch(X, Y, W))


@pytest.mark.parametrize("cls", [RefSphere, VerSphere])
def test_exp_keeps_iterated_gradient_steps_on_the_sphere(cls):
    """Sphere PCA gradient steps -2 a (z - a x) (tangent only when ||x|| = 1) at a large step:
    without renormalising Exp, | ||x|| - 1 | grows geometrically (about 1.28x per step here, the
    verified-trainer benchmark's finding at 000 Fig. 1's step 1/(2 L_g)); with it, it stays at
    rounding level for 300 steps."""
    M = cls(24, validate=False)
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((40, 25)) / 5
    A = Z.T @ Z / 40
    alpha = 1.0 / (2 * 2 * np.max(np.sum(Z * Z, axis=1)))  # 1/(2 L_g), L_g = 2 max ||z||^2
    alpha *= 40  # a deliberately large step, as in the paper's setting
    x = M.random_point(rng)
    worst = 0.0
    for _ in range(300):
        a = A @ x
        g = -2.0 * (a - (x @ a) * x)
        x = M.exp(x, -alpha * g)
        worst = max(worst, abs(float(np.linalg.norm(x)) - 1.0))
    assert worst < 1e-14


@pytest.mark.parametrize("Sph", [RefSphere, VerSphere])
def test_inner_overflow_is_the_same_refusal_in_both_twins_and_exact_when_finite(Sph):
    """<u, v> whose partial sums overflow. Finite inner products are returned exactly:
    (1e308, 1e308) . (3, -3) = 0, (1.5e308, 1.5e308, -1.5e308) . (1, 1, 1) = 1.5e308 and
    . (1e10, 1e10, 2e10) = 0 (the power-of-two scaling is exact). An inner product beyond the range
    is refused alike by both twins with its sign, never NaN: the thorough fuzz run found the
    reference's pairwise sum giving inf where the verified loop gave NaN (inf - inf) for the same
    vectors."""
    M = Sph(2)
    x = np.array([0.0, 0.0, 1.0])
    u = np.array([1e308, 1e308, 0.0])
    assert M.inner(x, u, np.array([3.0, -3.0, 0.0])) == 0.0
    w = np.array([1.0, 1.0, 0.0]) * 1e10
    with pytest.raises(ValueError, match=r"^Sphere\.inner: the result overflows float64 \(got inf\)"):
        M.inner(x, u, w)
    with pytest.raises(ValueError, match=r"^Sphere\.inner: the result overflows float64 \(got -inf\)"):
        M.inner(x, u, -w)
    M4 = Sph(3)
    x4 = np.array([0.0, 0.0, 0.0, 1.0])
    u4 = np.array([1.5e308, 1.5e308, -1.5e308, 0.0])
    assert M4.inner(x4, u4, np.array([1.0, 1.0, 1.0, 0.0])) == 1.5e308
    assert M4.inner(x4, u4, np.array([1e10, 1e10, 2e10, 0.0])) == 0.0


def test_dot2_of_non_finite_input_is_the_plain_sum():
    """base.dot2 (and its verified twin) on non-finite input: the plain sum, inf with its sign or NaN
    (the scaled path is for finite arrays only); on finite input the scaled value, never NaN."""
    from prirfed.reference.manifolds.base import dot2
    from prirfed.verified.manifolds.checks import dot2_kernel

    for f in (dot2, dot2_kernel):
        assert f(np.array([np.inf, 1.0]), np.array([1.0, 1.0])) == math.inf
        assert f(np.array([np.inf, 1.0]), np.array([-1.0, 1.0])) == -math.inf
        assert math.isnan(f(np.array([np.nan, 1.0]), np.array([1.0, 1.0])))
        assert f(np.array([1e308, -1e308, 1e308]), np.array([2.0, 2.0, 0.5])) == 5e307


# ---------------------------------------------------------------------------- thresholds at their switch points
@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_transport_of_a_quarter_turn_on_the_axes(cls):
    """From e_0 to e_1 (x^T y = 0, ||P_x y|| = 1 exactly): the rotation by pi/2 in the (e_0, e_1) plane
    takes e_1 to -e_0 and fixes e_2 (a hand computation; a mutant taking ||P_x y|| = 1 for y = x
    returned v unchanged and passed every test, whose pairs never had ||P_x y|| exactly 1)."""
    M = cls(2)
    e0, e1, e2 = np.eye(3)
    np.testing.assert_allclose(M.transp(e0, e1, e1), -e0, rtol=0, atol=1e-16)
    np.testing.assert_array_equal(M.transp(e0, e1, e2), e2)
    np.testing.assert_allclose(M.log(e0, e1), (math.pi / 2) * e1, rtol=0, atol=1e-16)


def _antipodal_pair(a):
    """x = e_0 and y = (-1, a, 0): ||x + y|| = a exactly (1 - 1 = 0), ||y|| = 1 to within a^2/2."""
    return np.array([1.0, 0.0, 0.0]), np.array([-1.0, a, 0.0])


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_antipodal_threshold_is_refused_at_itself_and_passed_just_above(cls):
    """log and transp refuse ||x + y|| <= ANTIPODAL_TOL, the threshold itself included, and just above
    it (the next double) return the 50-digit Log and rotation-form transport of the double inputs (the
    tests had reached 1e-9 and 1e-6, never the threshold)."""
    M = cls(2)
    x, y = _antipodal_pair(ANTIPODAL_TOL)
    for call in (lambda: M.log(x, y), lambda: M.transp(x, y, np.array([0.0, 1.0, 0.0]))):
        with pytest.raises(ValueError, match=r"y is \(numerically\) antipodal to x \(\|\|x \+ y\|\| = 1\.49e-08"):
            call()
    x, y = _antipodal_pair(math.nextafter(ANTIPODAL_TOL, 1.0))
    theta, want = mp_log(x, y)
    np.testing.assert_allclose(M.log(x, y), want, rtol=4 * EPS, atol=0)
    for v in (np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.3, 0.4])):
        np.testing.assert_allclose(M.transp(x, y, v), mp_transp(x, y, v), rtol=0, atol=4 * EPS)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_inv_retr_refuses_the_hemisphere_threshold_itself(cls):
    """inv_retr refuses x^T y <= ANTIPODAL_TOL: at x^T y = ANTIPODAL_TOL exactly (x = e_0) it raises;
    at the next double it returns P_x y/(x^T y) = (0, y_1/y_0, 0) (50 digits: ~6.7e7 long)."""
    M = cls(2)
    x = np.array([1.0, 0.0, 0.0])
    c = ANTIPODAL_TOL
    with pytest.raises(ValueError, match=r"inv_retr: y is not in the open hemisphere.*x\^T y = 1\.49e-08"):
        M.inv_retr(x, np.array([c, math.sqrt(1.0 - c * c), 0.0]))
    c = math.nextafter(ANTIPODAL_TOL, 1.0)
    y = np.array([c, math.sqrt(1.0 - c * c), 0.0])
    want = float(mpmath.mpf(float(y[1])) / mpmath.mpf(c))
    got = M.inv_retr(x, y)
    assert got[0] == 0.0 and got[2] == 0.0 and abs(got[1] - want) <= 2 * math.ulp(want)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_tangent_tolerance_is_tol_times_max_of_1_and_the_norm(cls):
    """|x^T v| <= tol max(1, ||v||), inclusive: at x = e_2 and ||v|| <= 1 the bound is tol itself
    (|x^T v| = tol accepted, the next double refused), for ||v|| = 1/2 it is still tol (not tol/2), for
    ||v|| = 3/2 it is 1.5 tol; the message gives the scaled tolerance (the tests used ||v|| = 1 and 1e6
    and never sat on the bound, so constants 2 and 1/2 in place of the 1 survived)."""
    M = cls(2)
    x, tol = np.array([0.0, 0.0, 1.0]), M.tol
    for v in (np.array([0.5, 0.0, tol]), np.array([0.0, 0.5, tol]), np.array([1.5, 0.0, 1.4 * tol])):
        M.check_tangent(x, v)
    for v in (np.array([0.5, 0.0, math.nextafter(tol, 1.0)]), np.array([1.0, 0.0, 1.5 * tol]),
              np.array([1.5, 0.0, 1.6 * tol])):
        with pytest.raises(ValueError, match="not tangent at x"):
            M.check_tangent(x, v)
    with pytest.raises(ValueError, match=r"\(\|x\^T v\| = 1\.0e\+00, tolerance 1\.0e-04 = 1\.0e-10 \* max\(1, \|\|v\|\| = 1e\+06\)\)$"):
        M.check_tangent(x, np.array([1e6, 0.0, 1.0]))


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_point_tolerance_is_inclusive(cls):
    """Sphere(450): tol = 1000 * 451 * eps (> 1e-10), a multiple of eps, so ||x|| = 1 + 451000 eps (x a
    multiple of e_0: its norm is exact) sits on the bound and is a point; one eps more is not."""
    M = cls(450)
    assert M.tol == 451000 * EPS
    x = np.zeros(451)
    x[0] = 1.0 + 451000 * EPS
    M.check_point(x)
    x[0] = 1.0 + 451001 * EPS
    with pytest.raises(ValueError, match=r"not on the sphere \(\| \|\|x\|\| - 1 \| = 1\.0e-10, tolerance 1\.0e-10\)"):
        M.check_point(x)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_log_and_transport_at_their_form_switch_x_dot_y_equal_0(cls):
    """log and transp switch from P_x(y - x) to P_x(y + x) (and transp from s^2/(1 + c) to 1 - c) where
    c = x^T y changes sign: at c = 0 and at c = +-1e-17 (x = e_0, so c = y_0 exactly) both sides equal
    the 50-digit Log and rotation-form transport of the double inputs to a few ulp (which is why
    moving the switch is listed as tolerated)."""
    M = cls(2)
    x = np.array([1.0, 0.0, 0.0])
    for c in (-1e-17, 0.0, 1e-17, -0.25, 0.25):
        y = np.array([c, math.sqrt(1.0 - c * c), 0.0])
        _, want = mp_log(x, y)
        np.testing.assert_allclose(M.log(x, y), want, rtol=0, atol=4 * EPS)
        for v in (np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.6, -0.8])):
            np.testing.assert_allclose(M.transp(x, y, v), mp_transp(x, y, v), rtol=0, atol=4 * EPS)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_tangent_basis_by_hand_on_both_hemispheres_and_on_the_equator(cls):
    """E_k = e_k - x_k (x + s e_0)/(1 + s x_0), s = sign(x_0) with s = 1 at x_0 = 0, by hand on S^2:
    at (0.6, 0.8, 0) m = (1, 0.5, 0) and E_1 = (-0.8, 0.6, 0); at (-0.6, 0.8, 0) m = (-1, 0.5, 0) and
    E_1 = (0.8, 0.6, 0); at e_1 (x_0 = 0, s = 1) m = (1, 1, 0) and E_1 = -e_0; at +-e_0 the basis is
    (e_1, e_2); E_2 = e_2 throughout."""
    M = cls(2)
    e0, e1, e2 = np.eye(3)
    for x, E1 in (((0.6, 0.8, 0.0), (-0.8, 0.6, 0.0)), ((-0.6, 0.8, 0.0), (0.8, 0.6, 0.0)),
                  ((0.0, 1.0, 0.0), -e0), ((1.0, 0.0, 0.0), e1), ((-1.0, 0.0, 0.0), e1)):
        np.testing.assert_allclose(M.tangent_basis(np.array(x)), np.array([E1, e2]), rtol=0, atol=2 * EPS)


class _ScriptedDraws:
    """A stand-in Generator whose standard_normal returns the listed vectors in turn."""

    def __init__(self, *draws):
        self.draws = [np.array(z, dtype=float) for z in draws]

    def standard_normal(self, size):
        z = self.draws.pop(0)
        assert z.shape == (size,)
        return z


def test_random_point_redraws_only_the_zero_vector():
    """random_point normalises its Gaussian draw and redraws only when it is 0 (norm 0, probability 0):
    draws 0, then (0.3, 0, 0.4) of norm 1/2 give (0.6, 0, 0.8) (no draw of norm in (0, 1] is skipped)."""
    p = RefSphere(2).random_point(_ScriptedDraws([0.0, 0.0, 0.0], [0.3, 0.0, 0.4], [1.0, 0.0, 0.0]))
    np.testing.assert_allclose(p, [0.6, 0.0, 0.8], rtol=0, atol=EPS)


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_exp_step_limit_is_refused_at_2_to_the_52(cls):
    """Exp refuses ||v|| >= 2^52 (one ulp of ||v|| is then 1 radian): ||v|| = 2^52 exactly (x = e_0,
    v = 2^52 e_1) is refused; the double below, 2^52 - 1/2, is taken (cos and sin of the double:
    Exp = cos(t) e_0 + sin(t) e_1, mpmath)."""
    M = cls(2)
    x = np.array([1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"Sphere\.exp: \|\|v\|\| = 4\.504e\+15 is not below 2\^52"):
        M.exp(x, np.array([0.0, 2.0**52, 0.0]))
    t = math.nextafter(2.0**52, 0.0)
    want = [float(mpmath.cos(mpmath.mpf(t))), float(mpmath.sin(mpmath.mpf(t))), 0.0]
    np.testing.assert_allclose(M.exp(x, np.array([0.0, t, 0.0])), want, rtol=0, atol=4 * EPS)


def test_repr_names_the_dimension():
    """repr(Sphere(d)) is the constructor call (read by Retracted's repr and in messages)."""
    assert repr(RefSphere(3)) == "Sphere(3)" and repr(RefSphere(1)) == "Sphere(1)"


@pytest.mark.parametrize("cls", TWINS, ids=lambda c: c.__module__.split(".")[1])
def test_transport_to_the_same_point_is_the_identity_and_retr_refuses_an_overflowing_norm(cls):
    """Gamma_x^x v = v (the branch for p = 0, returned as a new array), and R_x(v) refuses a v whose
    ||x + v|| is beyond float64 (1.875e308 here) instead of returning (x + v)/inf = 0. (Returning None
    from the first and dropping the second's refusal survived the manifolds run.)"""
    M = cls(2)
    x = np.array([0.6, 0.0, 0.8])
    v = np.array([0.8, 0.3, -0.6])
    w = M.transp(x, x, v)
    assert w is not v and np.array_equal(w, v)
    big = np.array([1.5e308, 0.0, -1.125e308])  # tangent at x: x . big = 0
    with pytest.raises(ValueError, match=r"^Sphere\.retr: \|\|x \+ v\|\| overflows float64 \(entries up to 1\.500e\+308\)$"):
        M.retr(x, big)
    assert M.retr(x, 0.5 * big)[2] == pytest.approx(-0.6, rel=1e-15, abs=0)  # ||x + v|| = 9.4e307: fine
