"""Lorentz(d), the hyperboloid model of H^d: contract, verified twin, and ground truth.

Ground truth comes from construction (points at a known distance along a known unit tangent),
mpmath at 50 digits (sinh(t)/t, t/sinh(t), the asinh distance form, the Poincare-ball distance),
and closed forms (transport of the geodesic velocity, the boost basis, the Hessian of dist^2).

Rounding model used for every tolerance: a point at radius r has x_0 = cosh(r) and coordinates
of size x_0, each rounded to relative eps = 2.2e-16; a coordinate error of eps*x_0 in the time
direction is an intrinsic displacement of eps*x_0^2 (the L-projection of e_0 onto T_x has
Lorentz norm sqrt(x_0^2 - 1)). So absolute errors of unit-scale results are
C * eps * x_0^2 with a small C; at radius 10 (x_0 = 1.1e4) this is about C * 2.7e-8.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Lorentz as RefLorentz
from prirfed.reference.manifolds.lorentz import chord_to_dist, minkowski_inner, sinhc, t_over_sinh
from prirfed.testing.manifold_contract import VerifiedEquivalence, contract_case
from prirfed.verified.manifolds import Lorentz as VerLorentz
from prirfed.verified.manifolds import lorentz as vl

mpmath.mp.dps = 50
EPS = np.finfo(float).eps
RADII = [0.0, 5.0, 10.0]


# ---------------------------------------------------------------------------- constructions
def unit_vector(rng, n):
    u = rng.standard_normal(n)
    return u / np.linalg.norm(u)


def point_at_radius(r, u):
    """x = Exp_o(r (0, u)) = (cosh r, sinh r u) for a unit u in R^d: dist(o, x) = r by construction."""
    return np.concatenate([[math.cosh(r)], math.sinh(r) * u])


def unit_tangent(x, rng):
    """A unit tangent at x built without the code under test: L-project a Gaussian, L-normalise."""
    w = rng.standard_normal(x.shape[0])
    a = -x[0] * w[0] + x[1:] @ w[1:]
    v = w + a * x
    n2 = -v[0] ** 2 + v[1:] @ v[1:]
    return v / math.sqrt(n2)


def draw_radius_point(data, rng, d):
    r = data.draw(st.sampled_from(RADII) | st.floats(0.0, 10.0), label="radius")
    return point_at_radius(r, unit_vector(rng, d))


def x0sq(x):
    return float(np.asarray(x)[0]) ** 2


class _LorentzStrategies:
    """Base points at radius 0, 5, 10 (or anywhere in [0, 10]); tolerances scale with x_0^2."""

    def draw_point(self, data):
        return draw_radius_point(data, self.rng(data), self.manifold.d)

    def small_radius(self, x):
        return 2.0

    def tol(self, x):
        """1e-12 + 256 eps x_0^2.

        The contract compares coordinates. A tangent vector at a far point has coordinates up to
        x_0 ||v||_x, and proj multiplies the L-normal part of their rounding (about
        eps x_0 ||v||_2 (d + 1)) by x, of size x_0: so "proj fixes tangents" holds to
        C eps x_0^2 (1 + |v|_inf); the thorough profile (2000 examples) observed C up to 90 for
        random_tangent vectors, whose d boosted summands (coordinates ~ x_0 |z_k|) partly cancel.
        """
        return 1e-12 + 256 * EPS * x0sq(x)

    def off_manifold(self, x):
        return 2.0 * np.asarray(x)


TestLorentzContract = contract_case("TestLorentzContract", RefLorentz(3), _LorentzStrategies)


TestVerifiedLorentzContract = contract_case("TestVerifiedLorentzContract", VerLorentz(3), _LorentzStrategies)


class TestVerifiedLorentzEqualsReference(VerifiedEquivalence):
    reference = RefLorentz(3)
    verified = VerLorentz(3)

    def draw_point(self, data):
        return draw_radius_point(data, self.rng(data), self.reference.d)

    def small_radius(self, x):
        return 2.0

    def scale(self, x):
        return x0sq(x)


# ---------------------------------------------------------------------------- basic attributes
def test_attributes_and_bad_dimension():
    M = RefLorentz(4)
    assert M.dim == 4 and M.ambient_shape == (5,)
    assert M.curvature_bounds == (-1.0, -1.0)
    assert M.exact_transport is True
    assert M.injectivity_radius(M.origin()) == math.inf
    for d in (0, -1, 2.5, True, float("nan"), "3", None):
        with pytest.raises(ValueError, match="Lorentz"):
            RefLorentz(d)
    with pytest.raises(ValueError, match="tol"):
        RefLorentz(2, tol=0.0)


# ---------------------------------------------------------------------------- mpmath scalar oracles
T_GRID = sorted({0.0, 5e-324, 1e-300, 1e-20, 1e-12, 1e-8, 9.999999999999999e-05, 1e-4, 1.0000000000000002e-4,
                 1e-3, 0.1, 0.5, 1.0, 2.0, 10.0, 50.0, 300.0, 700.0, *np.logspace(-16, 2.8, 40).tolist()})


def _rel(a, b):
    return abs(a - b) / abs(b)


@pytest.mark.parametrize("fn,kern,oracle", [
    (sinhc, vl.sinhc_kernel, lambda t: mpmath.sinh(t) / t if t != 0 else mpmath.mpf(1)),
    (t_over_sinh, vl.t_over_sinh_kernel, lambda t: t / mpmath.sinh(t) if t != 0 else mpmath.mpf(1)),
], ids=["sinh(t)/t", "t/sinh(t)"])
def test_series_coefficients_match_mpmath(fn, kern, oracle):
    """sinh(t)/t and t/sinh(t) (both twins) equal mpmath at 50 digits to 4 eps relative on
    [0, 700], including 0, subnormals and both sides of the series threshold 1e-4."""
    for t in T_GRID:
        truth = oracle(mpmath.mpf(t))
        assert _rel(fn(t), truth) <= 4 * EPS, (t, fn(t), truth)
        assert _rel(kern(t), truth) <= 4 * EPS, (t, kern(t), truth)


def test_asinh_distance_form_matches_mpmath():
    """2 asinh(sqrt(q)/2) = acosh(1 + q/2) (mpmath, 100 digits) to 4 eps relative for q in [1e-30, 1e30].

    (acosh(1 + q/2) in floating point is the printed formula of 000 and fails for small q.)"""
    for q in np.logspace(-30, 30, 121):
        with mpmath.workdps(100):
            truth = mpmath.acosh(1 + mpmath.mpf(q) / 2)
        assert _rel(chord_to_dist(q), truth) <= 4 * EPS, q
        assert _rel(vl.chord_to_dist_kernel(q), truth) <= 4 * EPS, q
    assert chord_to_dist(0.0) == 0.0 and chord_to_dist(-1e-20) == 0.0


def _mp_dist(x, y):
    """Distance of the points with space parts x[1:], y[1:] (mpmath, 120 digits).

    h = cosh(dist) - 1 = -<x, y>_L - 1 is evaluated as <c, c>_L / 2 = (||c_bar||^2 - (y_0 - x_0)^2) / 2,
    an exact identity on H^d; at 120 digits its cancellation (at most log10(x_0 y_0) ~ 13 digits
    here) is harmless, while x_0 y_0 - <x_bar, y_bar> - 1 would cancel 2 |log10 ||c_bar||| digits
    (200 for points 1e-100 apart)."""
    with mpmath.workdps(120):
        X = [mpmath.mpf(float(t)) for t in x[1:]]
        Y = [mpmath.mpf(float(t)) for t in y[1:]]
        x0 = mpmath.sqrt(1 + sum(t * t for t in X))
        y0 = mpmath.sqrt(1 + sum(t * t for t in Y))
        h = (sum((b - a) ** 2 for a, b in zip(X, Y)) - (y0 - x0) ** 2) / 2
        return 2 * mpmath.asinh(mpmath.sqrt(max(h, 0) / 2))


def _lift(xb):
    return np.concatenate([[math.sqrt(1.0 + float(xb @ xb))], xb])


@given(data=st.data())
def test_dist_matches_mpmath_oracle(data):
    """dist (both twins) equals the mpmath distance of the same stored points to relative
    4 eps (1 + max(x_0, y_0)): the error analysis of `chord` bounds the relative error by about
    2 eps x_0 (the perpendicular part of the chord loses eps |c_bar|). Pairs: independent
    (radius up to 15), close (chord 1e-12..1 times x_0), and on one ray (relative offset 1e-14..1)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    d = data.draw(st.sampled_from([2, 3, 10]), label="d")
    radius = st.just(0.0) | st.floats(1e-100, 15.0)  # below ~1e-154 squares underflow (see the note)
    r1 = data.draw(st.sampled_from(RADII) | radius, label="r1")
    xb = math.sinh(r1) * unit_vector(rng, d)
    mode = data.draw(st.sampled_from(["independent", "close", "ray"]), label="mode")
    if mode == "independent":
        r2 = data.draw(radius, label="r2")
        yb = math.sinh(r2) * unit_vector(rng, d)
    elif mode == "close":
        yb = xb + 10 ** data.draw(st.floats(-100, 0)) * (1 + np.linalg.norm(xb)) * unit_vector(rng, d)
    else:
        yb = xb * (1 + data.draw(st.sampled_from([-1, 1])) * 10 ** data.draw(st.floats(-14, 0)))
    x, y = _lift(xb), _lift(yb)
    truth = _mp_dist(x, y)
    tol = 4 * EPS * (1 + max(x[0], y[0])) * float(truth)
    for M in (RefLorentz(d), VerLorentz(d)):
        err = float(abs(M.dist(x, y) - truth))
        assert err <= tol, f"{type(M).__module__}: |dist - mpmath| = {err:.3e} > {tol:.3e}"


# ---------------------------------------------------------------------------- ground truth by construction
KINDS = ["out", "in", "perp", "oblique"]
T_VALUES = [1e-12, 1e-8, 1e-4, 0.1, 1.0, 1.3, 1.5, 5.0, 10.0, 20.0]


def construct(r, t, kind, d=3):
    """x at radius r on the e_1 axis, a unit u in T_x (radial out/in, perpendicular, or
    cos(0.7) radial + sin(0.7) perpendicular), y = cosh(t) x + sinh(t) u, all at 60 digits; returns
    the stored points (space parts rounded, time coordinate sqrt(1 + ||.||^2)), t u rounded and t.

    By construction dist(x, y) = t and Log_x(y) = t u exactly for the 60-digit points."""
    with mpmath.workdps(60):
        r, t = mpmath.mpf(r), mpmath.mpf(t)
        z = [mpmath.mpf(0)] * (d - 1)
        x = [mpmath.cosh(r), mpmath.sinh(r), *z]
        radial = [mpmath.sinh(r), mpmath.cosh(r), *z]
        perp = [mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(1), *z[1:]]
        a = mpmath.mpf("0.7")
        u = {"out": radial, "in": [-c for c in radial], "perp": perp,
             "oblique": [mpmath.cos(a) * p + mpmath.sin(a) * q for p, q in zip(radial, perp)]}[kind]
        y = [mpmath.cosh(t) * p + mpmath.sinh(t) * q for p, q in zip(x, u)]
        tu = np.array([float(t * c) for c in u])
    lift = lambda v: _lift(np.array([float(c) for c in v[1:]]))  # noqa: E731
    return lift(x), lift(y), tu


def construction_tolerance(x, y, t):
    """Rounding the space parts moves each point by at most eps sqrt(d) ||x_bar|| / 2 (the metric
    of the chart x_bar -> x is <= I); the arithmetic adds 4 eps (1 + x_0) t below distance 1.3
    (chord form, relative error ~ 2 eps x_0) and 4 eps (1 + sqrt(x_0 y_0)) above (polar form)."""
    d = x.shape[0] - 1
    rep = EPS * math.sqrt(d) * (np.linalg.norm(x[1:]) + np.linalg.norm(y[1:]))
    comp = 4 * EPS * (1 + max(x[0], y[0])) * t if t <= 1.3 else 4 * EPS * (1 + math.sqrt(x[0] * y[0]))
    return rep + comp


@pytest.mark.parametrize("M", [RefLorentz(3), VerLorentz(3)], ids=["reference", "verified"])
@pytest.mark.parametrize("r", RADII)
def test_dist_and_log_ground_truth_by_construction(M, r):
    """dist(x, y) = t and Log_x(y) = t u for y = cosh(t) x + sinh(t) u, base points at radius
    0, 5, 10, t from 1e-12 to 20, four directions; tolerance of `construction_tolerance` for dist
    and (1 + t) times it for ||Log_x(y) - t u||_x (observed errors are below 0.1 of it)."""
    for t in T_VALUES:
        for kind in KINDS:
            x, y, tu = construct(r, t, kind)
            tol = construction_tolerance(x, y, t)
            assert abs(M.dist(x, y) - t) <= tol, (r, t, kind, M.dist(x, y) - t, tol)
            err = RefLorentz(3, validate=False).norm(x, M.log(x, y) - tu)
            assert err <= tol * (1 + t), (r, t, kind, err, tol)


def test_printed_acosh_distance_fails_at_small_distances():
    """Why not dist = acosh(-<x, y>_L) (000 section 6.3): -<x, y>_L = cosh(t) rounds to 1 at
    t = 1e-8, so the printed form returns 0, and it keeps only half the digits for larger t."""
    M = RefLorentz(3)
    x, y, _ = construct(0.0, 1e-8, "oblique")
    printed = math.acosh(max(1.0, -minkowski_inner(x, y)))
    assert printed == 0.0
    assert _rel(M.dist(x, y), 1e-8) <= 1e-14
    x, y, _ = construct(5.0, 1e-5, "oblique")
    printed = math.acosh(max(1.0, -minkowski_inner(x, y)))
    # at radius 5, -<x, y>_L has absolute error ~ eps x_0^2, so acosh is off by ~ sqrt(eps) x_0 ...
    assert abs(printed - 1e-5) > 1e3 * construction_tolerance(x, y, 1e-5)
    # ... while the chord form is within the rounding of the construction
    assert abs(M.dist(x, y) - 1e-5) <= construction_tolerance(x, y, 1e-5)


def test_chord_form_fails_far_out_on_one_ray():
    """Why `chord` switches to the polar form beyond distance 1.3: for x, y on one ray at radii
    10 and 30 (distance 20), <y-x, y-x>_L = ||c_bar||^2 - c_0^2 cancels 17 digits, in the stored
    form (the brief's 2 asinh(sqrt(<x-y, x-y>_L)/2)) and even with the exact c_0; the plain
    x_0 y_0 - <x_bar, y_bar> is off by 2e-8 in dist; the polar form is exact to rounding. (Below
    distance 1.3 the chord form had a failure of its own far out on a coordinate axis, its c_perp
    by projection: tests/manifolds/test_lorentz_far_rays.py.)"""
    x, y, _ = construct(10.0, 20.0, "out")
    c = x - y
    q_stored = minkowski_inner(c, c)
    assert abs(chord_to_dist(q_stored) - 20.0) > 1e-3
    c0 = float((y[1:] - x[1:]) @ (x[1:] + y[1:])) / (x[0] + y[0])
    q_exact_c0 = float((y[1:] - x[1:]) @ (y[1:] - x[1:])) - c0 * c0
    assert abs(chord_to_dist(q_exact_c0) - 20.0) > 1e-3
    plain = math.acosh(x[0] * y[0] - float(x[1:] @ y[1:]))
    assert abs(plain - 20.0) > 1e-9
    assert abs(RefLorentz(3).dist(x, y) - 20.0) <= 1e-14 * 20
    assert abs(VerLorentz(3).dist(x, y) - 20.0) <= 1e-14 * 20


def test_printed_exp_breaks_far_out_and_ours_does_not():
    """Why Exp takes t from `tangent_inner`: at radius 10, v = Log_x(o) (length 10) has
    coordinates ~ 1e5, <v, v>_L = -v_0^2 + ||v_bar||^2 cancels 8 digits, and the printed
    cosh(t) x + sinh(t)/t v lands about 1 away from o (coordinates of size 1e8 cancel)."""
    M = RefLorentz(3)
    o = M.origin()
    x = point_at_radius(10.0, np.array([0.6, 0.8, 0.0]))
    x = _lift(x[1:])
    v = M.log(x, o)
    t = math.sqrt(max(0.0, minkowski_inner(v, v)))
    printed = math.cosh(t) * x + math.sinh(t) / t * v
    assert np.max(np.abs(printed - o)) > 1e-3
    assert np.max(np.abs(M.exp(x, v) - o)) <= 1e-7
    assert np.max(np.abs(VerLorentz(3).exp(x, v) - o)) <= 1e-7
    assert abs(M.norm(x, v) - 10.0) <= 1e-14 * 10


def test_exp_and_log_exact_near_zero():
    """Exp_x(s v) and Log_x at s = 1e-300 .. 1e-5: no 0/0, first-order exact (series branch)."""
    for M in (RefLorentz(3), VerLorentz(3)):
        for r in RADII:
            x = point_at_radius(r, np.array([0.0, 1.0, 0.0]))
            x = _lift(x[1:])
            u = np.array([0.0, 0.0, 0.0, 1.0])  # perpendicular unit tangent, exact
            for s in (1e-300, 1e-200, 1e-20, 1e-8, 1e-5):
                y = M.exp(x, s * u)
                assert np.all(np.isfinite(y))
                L = M.log(x, y)
                assert abs(L[3] - s) <= 4 * EPS * s, (r, s, L)
            np.testing.assert_array_equal(M.exp(x, np.zeros(4)), x)
            np.testing.assert_array_equal(M.log(x, x), np.zeros(4))


# ---------------------------------------------------------------------------- Poincare ball
def _mp_poincare_dist(p, q):
    with mpmath.workdps(50):
        P = [mpmath.mpf(float(t)) for t in p]
        Q = [mpmath.mpf(float(t)) for t in q]
        pp = sum(t * t for t in P)
        qq = sum(t * t for t in Q)
        dd = sum((a - b) ** 2 for a, b in zip(P, Q))
        return mpmath.acosh(1 + 2 * dd / ((1 - pp) * (1 - qq)))


@given(data=st.data())
def test_poincare_round_trip_and_distance(data):
    """from_poincare/to_poincare are inverse, and dist equals the Poincare-ball distance
    arcosh(1 + 2||p-q||^2/((1-||p||^2)(1-||q||^2))) computed by mpmath at 50 digits, for ||p|| up
    to tanh(5) (radius 10). Tolerance: rounding p by eps/2 moves the point by eps/(1 - ||p||^2)
    (conformal factor 2/(1-||p||^2)), i.e. eps x_0, plus the relative error of dist."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    d = data.draw(st.sampled_from([2, 3]), label="d")
    M = RefLorentz(d)
    V = VerLorentz(d)
    pts = []
    for _ in range(2):
        r = data.draw(st.sampled_from(RADII) | st.floats(0.0, 10.0), label="radius")
        pts.append(math.tanh(r / 2) * unit_vector(rng, d))
    p, q = pts
    x, y = M.from_poincare(p), M.from_poincare(q)
    M.check_point(x)
    M.check_point(y)
    np.testing.assert_allclose(M.to_poincare(x), p, rtol=0, atol=4 * EPS)
    np.testing.assert_allclose(V.to_poincare(y), q, rtol=0, atol=4 * EPS)
    np.testing.assert_allclose(M.from_poincare(M.to_poincare(x)), x, rtol=8 * EPS * x[0], atol=0)
    truth = _mp_poincare_dist(p, q)
    tol = 4 * EPS * (x[0] + y[0]) * (1 + float(truth))
    assert float(abs(M.dist(x, y) - truth)) <= tol
    assert float(abs(V.dist(x, y) - truth)) <= tol


def test_poincare_refuses_the_boundary_and_outside():
    M = RefLorentz(2)
    for p in ([1.0, 0.0], [0.6, 0.8], [2.0, 0.0]):
        with pytest.raises(ValueError, match=r"Lorentz\.from_poincare: p is not in the open unit ball"):
            M.from_poincare(p)
    with pytest.raises(ValueError, match=r"Lorentz\.from_poincare: p has shape"):
        M.from_poincare([0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match=r"Lorentz\.to_poincare"):
        M.to_poincare([-1.0, 0.0, 0.0])
    np.testing.assert_array_equal(M.from_poincare([0.0, 0.0]), M.origin())


# ---------------------------------------------------------------------------- transport, basis, gradient
@pytest.mark.parametrize("M", [RefLorentz(3), VerLorentz(3)], ids=["reference", "verified"])
@pytest.mark.parametrize("r", RADII)
def test_transport_closed_forms(M, r):
    """Along y = Exp_x(t u): PT u = sinh(t) x + cosh(t) u (the geodesic's velocity, which is
    parallel), and PT w = w for w L-orthogonal to x and u. Built at 60 digits; t up to 10."""
    for t in (1e-8, 0.5, 3.0, 10.0):
        with mpmath.workdps(60):
            rr, tt = mpmath.mpf(r), mpmath.mpf(t)
            x = [mpmath.cosh(rr), mpmath.sinh(rr), 0, 0]
            u = [mpmath.sinh(rr), mpmath.cosh(rr), 0, 0]
            y = [mpmath.cosh(tt) * a + mpmath.sinh(tt) * b for a, b in zip(x, u)]
            vel = [mpmath.sinh(tt) * a + mpmath.cosh(tt) * b for a, b in zip(x, u)]
        xs = _lift(np.array([float(c) for c in x[1:]]))
        ys = _lift(np.array([float(c) for c in y[1:]]))
        us = np.array([float(c) for c in u])
        vs = np.array([float(c) for c in vel])
        w = np.array([0.0, 0.0, 0.3, -0.4])
        tol = 8 * EPS * (1 + ys[0]) * (1 + xs[0])
        np.testing.assert_allclose(M.transp(xs, ys, us), vs, rtol=0, atol=tol * (1 + np.max(np.abs(vs))))
        np.testing.assert_allclose(M.transp(xs, ys, w), w, rtol=0, atol=tol)


@pytest.mark.parametrize("M", [RefLorentz(3), VerLorentz(3)], ids=["reference", "verified"])
def test_transport_far_apart_is_isometric_and_invertible(M):
    """x, y at radius 10 on opposite sides (distance 20, 1 - <x,y>_L = 2 cosh^2 10 ~ 2.4e8):
    PT stays in T_y, keeps <., .>, and PT_{y->x} PT_{x->y} = id to relative 1e-12."""
    rng = np.random.default_rng(7)
    x = _lift(math.sinh(10.0) * np.array([1.0, 0.0, 0.0]))
    y = _lift(math.sinh(10.0) * np.array([-1.0, 0.0, 0.0]))
    assert abs(M.dist(x, y) - 20.0) <= 1e-13
    E = M.tangent_basis(x)
    for _ in range(5):
        v = rng.standard_normal(3) @ E
        Pv = M.transp(x, y, v)
        M.check_tangent(y, Pv)
        assert _rel(M.norm(y, Pv), M.norm(x, v)) <= 1e-12
        back = M.transp(y, x, Pv)
        assert RefLorentz(3, validate=False).norm(x, back - v) <= 1e-12 * M.norm(x, v)


@pytest.mark.parametrize("r", RADII)
def test_tangent_basis_is_the_boost_and_twins_agree_bitwise(r):
    """tangent_basis(x) = rows of the boost B(x) = [[x_0, x_bar^T], [x_bar, I + x_bar x_bar^T/(1+x_0)]]
    applied to e_1..e_d (independent closed form); at the origin it is [0 | I]. The verified
    kernel returns the same array bit for bit, so a Gaussian sampler sum_k z_k E_k draws the same
    vector in both twins (checked with random_tangent and one seed)."""
    rng = np.random.default_rng(3)
    d = 4
    x = _lift(math.sinh(r) * unit_vector(rng, d))
    R, V = RefLorentz(d), VerLorentz(d)
    E = R.tangent_basis(x)
    B = np.empty((d + 1, d + 1))
    B[0, 0] = x[0]
    B[0, 1:] = x[1:]
    B[1:, 0] = x[1:]
    B[1:, 1:] = np.eye(d) + np.outer(x[1:], x[1:]) / (1 + x[0])
    np.testing.assert_allclose(E, B[:, 1:].T, rtol=4 * EPS, atol=0)
    np.testing.assert_array_equal(V.tangent_basis(x), E)
    np.testing.assert_array_equal(vl.tangent_basis_kernel(x), E)
    np.testing.assert_array_equal(R.tangent_basis(R.origin()), np.hstack([np.zeros((d, 1)), np.eye(d)]))
    np.testing.assert_array_equal(V.random_tangent(x, np.random.default_rng(11)), R.random_tangent(x, np.random.default_rng(11)))
    # B is a Lorentz transformation: B^T J B = J, so its columns e_k -> E_k are L-orthonormal
    J = np.diag([-1.0] + [1.0] * d)
    np.testing.assert_allclose(B.T @ J @ B, J, rtol=0, atol=16 * EPS * x[0] ** 2)


@pytest.mark.parametrize("M", [RefLorentz(3), VerLorentz(3)], ids=["reference", "verified"])
@pytest.mark.parametrize("r", RADII)
def test_egrad2rgrad_closed_form(M, r):
    """f(x) = x_0 = cosh(dist(o, x)) has Euclidean gradient e_0 and Riemannian gradient
    sinh(r) * (radial unit) = sinh(r) (sinh r, cosh r e); egrad2rgrad(x, e_0) = -e_0 + x_0 x."""
    e = np.array([0.0, 0.6, 0.8])
    x = np.concatenate([[math.cosh(r)], math.sinh(r) * e])
    truth = math.sinh(r) * np.concatenate([[math.sinh(r)], math.cosh(r) * e])
    g = M.egrad2rgrad(x, np.array([1.0, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(g, truth, rtol=0, atol=8 * EPS * (1 + x[0] ** 2))


# ---------------------------------------------------------------------------- errata of 000 section 6.3
def _dist2_along(M, x, w, y, h):
    return [M.dist(M.exp(x, s * w), y) ** 2 for s in (-h, 0.0, h)]


@pytest.mark.parametrize("r", [0.5, 2.0, 4.0])
def test_erratum_000_gradient_of_squared_distance_has_a_minus_sign(r):
    """000 section 6.3 prints grad f_ij(x) = 2 alpha_ij Exp_x^{-1}(y_ij) for f_ij = alpha_ij dist^2(x, y_ij).
    The gradient of dist^2(., y) is -2 Log_x(y): a central difference of dist^2 along Exp_x(s w)
    matches <-2 Log_x(y), w>_x and has the opposite sign of the printed formula."""
    M = RefLorentz(3)
    x = point_at_radius(1.0, np.array([1.0, 0.0, 0.0]))
    y = M.exp(x, r * unit_tangent(x, np.random.default_rng(5)))
    L = M.log(x, y)
    w = L / M.norm(x, L)  # steepest direction
    h = 1e-5
    lo, _, hi = _dist2_along(M, x, w, y, h)
    fd = (hi - lo) / (2 * h)
    assert abs(fd - M.inner(x, -2 * L, w)) <= 1e-6 * (1 + r)
    assert abs(fd - M.inner(x, 2 * L, w)) >= 3.9 * r  # the printed sign is wrong by 2 * 2r


@pytest.mark.parametrize("r", [0.5, 2.0, 4.0])
def test_erratum_000_hessian_of_squared_distance_is_2_r_coth_r(r):
    """000 section 6.3 bounds ||Hess dist^2(., y)|| by L_1 = M / tanh(M) (citing AOBL20 Lemma 2).
    In curvature -1 the Hessian of dist^2(., y) at distance r has eigenvalues 2 (radial) and
    2 r coth(r) (perpendicular), so the bound is 2 M / tanh(M): M/tanh(M) bounds Hess (1/2) dist^2.
    Second differences along geodesics through x (exact for the Hessian) confirm both eigenvalues."""
    M = RefLorentz(3)
    x = point_at_radius(1.0, np.array([1.0, 0.0, 0.0]))
    y = M.exp(x, r * unit_tangent(x, np.random.default_rng(5)))
    L = M.log(x, y)
    radial = L / M.norm(x, L)
    E = M.tangent_basis(x)
    perp = E[0] - M.inner(x, E[0], radial) * radial
    perp = perp / M.norm(x, perp)
    h = 1e-4
    for w, truth in ((radial, 2.0), (perp, 2 * r / math.tanh(r))):
        lo, mid, hi = _dist2_along(M, x, w, y, h)
        second = (hi - 2 * mid + lo) / h**2
        assert abs(second - truth) <= 1e-5 * truth, (second, truth)
    assert 2 * r / math.tanh(r) > r / math.tanh(r)  # the printed L_1 misses the factor 2


# ---------------------------------------------------------------------------- bad input
def test_check_messages_name_the_defect():
    M = RefLorentz(2)
    x = point_at_radius(5.0, np.array([0.6, 0.8]))
    with pytest.raises(ValueError, match=r"Lorentz\.check_point: x_0 = .* is not > 0"):
        M.check_point(-x)
    with pytest.raises(ValueError, match=r"Lorentz\.check_point: not on the hyperboloid \(\|<x, x>_L \+ 1\| = 3\.0"):
        M.check_point(2 * x)
    with pytest.raises(ValueError, match=r"Lorentz\.check_point: x has shape"):
        M.check_point(np.ones(4))
    with pytest.raises(ValueError, match=r"Lorentz\.check_tangent: v: not tangent at x"):
        M.check_tangent(x, np.array([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"Lorentz\.exp: v: not tangent"):
        M.exp(x, np.array([1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"Lorentz\.transp: y"):
        M.transp(x, 2 * x, np.zeros(3))
    # a point at radius 10 whose space part is off by 1e-9 relative is refused ...
    y = point_at_radius(10.0, np.array([0.6, 0.8]))
    bad = y.copy()
    bad[1:] *= 1 + 1e-9
    with pytest.raises(ValueError, match="not on the hyperboloid"):
        M.check_point(bad)
    # ... while the rounding of the construction (defect ~ eps x_0^2) is accepted
    M.check_point(y)


@pytest.mark.parametrize("M", [RefLorentz(2), VerLorentz(2)], ids=["reference", "verified"])
def test_exp_overflow_raises(M):
    x = M.origin()
    with pytest.raises(ValueError, match=r"Lorentz\.exp: .*overflow"):
        M.exp(x, np.array([0.0, 800.0, 0.0]))
    with pytest.raises(ValueError, match=r"Lorentz\.exp: .*overflow"):
        M.exp(x, np.array([0.0, 400.0, 0.0]))


def test_batched_methods_validate_rows():
    V = VerLorentz(2)
    rng = np.random.default_rng(0)
    X = np.array([V.random_point(rng) for _ in range(3)])
    T = np.array([V.random_tangent(x, rng) for x in X])
    Xbad = X.copy()
    Xbad[1] *= 2
    with pytest.raises(ValueError, match=r"Lorentz\.exp_batch: row 1: x: not on the hyperboloid"):
        V.exp_batch(Xbad, T)
    Tbad = T.copy()
    Tbad[2, 0] += 1.0
    with pytest.raises(ValueError, match=r"Lorentz\.transp_batch: row 2: v: not tangent"):
        V.transp_batch(X, X, Tbad)
    with pytest.raises(ValueError, match=r"Lorentz\.dist_batch: stacks have different lengths"):
        V.dist_batch(X, X[:2])
    with pytest.raises(ValueError, match=r"Lorentz\.log_batch: Y has shape"):
        V.log_batch(X, X[:, :2])
    Xnan = X.copy()
    Xnan[0, 1] = np.nan
    with pytest.raises(ValueError, match=r"Lorentz\.dist_batch: row 0: x has 1 non-finite"):
        V.dist_batch(Xnan, X)
    with pytest.raises(ValueError, match=r"Lorentz\.exp_batch: row 0: \|\|v\|\|_L = 800 overflows cosh"):
        V.exp_batch(V.origin()[None, :], np.array([[0.0, 800.0, 0.0]]))
    with pytest.raises(ValueError, match=r"Lorentz\.exp_batch: row 0: the result overflows the domain of the model"):
        V.exp_batch(V.origin()[None, :], np.array([[0.0, 400.0, 0.0]]))
    assert V.exp_batch(np.empty((0, 3)), np.empty((0, 3))).shape == (0, 3)


# ---------------------------------------------------------------------------- kernels usable from njit code
def test_kernels_compose_inside_njit_code():
    """Samplers and trainers call the kernels from other njit code: a jitted Gaussian step
    x -> Exp_x(sum_k z_k E_k(x)) built from tangent_basis_kernel, retr_kernel, inner_kernel,
    proj_kernel, egrad2rgrad_kernel, inv_retr_kernel equals the same step through the classes."""
    from numba import njit

    @njit(cache=False)
    def step(x, z, g):
        E = vl.tangent_basis_kernel(x)
        v = np.zeros(x.shape[0])
        for k in range(E.shape[0]):
            v += z[k] * E[k]
        y = vl.retr_kernel(x, v)
        back = vl.inv_retr_kernel(x, y)
        grad = vl.egrad2rgrad_kernel(x, g)
        p = vl.proj_kernel(x, g)
        return y, back, vl.inner_kernel(x, v, v), grad, p

    R = RefLorentz(3)
    x = R.random_point(np.random.default_rng(1))
    z = np.random.default_rng(2).standard_normal(3)
    g = np.random.default_rng(3).standard_normal(4)
    y, back, vv, grad, p = step(x, z, g)
    v = R.random_tangent(x, np.random.default_rng(0)) * 0 + z @ R.tangent_basis(x)
    np.testing.assert_allclose(y, R.exp(x, v), rtol=1e-13)
    np.testing.assert_allclose(back, v, rtol=1e-12, atol=1e-13)
    assert _rel(vv, R.inner(x, v, v)) <= 1e-13
    np.testing.assert_allclose(grad, R.egrad2rgrad(x, g), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(p, R.proj(x, g), rtol=1e-13, atol=1e-14)


def _outcome(call):
    """"ok" if ``call()`` returns, else the message of its ValueError (the twins must agree on it)."""
    try:
        call()
        return "ok"
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("k", [0.0, 0.3, 0.49, 0.51, 0.75, 0.99, 1.01, 2.0, 1e6])
def test_verified_fast_validation_accepts_exactly_what_the_reference_accepts(k):
    """The verified wrappers pre-check inputs in Numba at half the tolerance and leave the rest to
    the reference check: points with defect k * tol * x_0^2 and tangents with defect
    k * tol * x_0 * ||v||_2 are accepted or refused (with the same message) by both twins alike."""
    R, V = RefLorentz(2), VerLorentz(2)
    xb = math.sinh(5.0) * np.array([0.6, 0.8])
    x_ok = _lift(xb)
    defect = k * R.tol * x_ok[0] ** 2
    x = np.concatenate([[math.sqrt(1.0 + float(xb @ xb) + defect)], xb])
    outcomes = [_outcome(lambda: M.dist(x, x_ok)) for M in (R, V)]
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] == "ok") == (abs(minkowski_inner(x, x) + 1) <= R.tol * x[0] ** 2)
    v = R.tangent_basis(x_ok)[0]
    w = v + np.array([k * R.tol * np.linalg.norm(v), 0.0, 0.0])  # <x, w>_L = -x_0 * that
    outcomes = [_outcome(lambda: M.exp(x_ok, w)) for M in (R, V)]
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] == "ok") == (abs(minkowski_inner(x_ok, w)) <= R.tol * x_ok[0] * np.linalg.norm(w))


@pytest.mark.parametrize("M", [RefLorentz(3), VerLorentz(3)], ids=["reference", "verified"])
@pytest.mark.parametrize("r", [1e-300, 1e-159, 1e-100, 1e-20])
def test_base_points_very_close_to_the_origin(M, r):
    """Regression (found by the thorough Hypothesis profile): at radius 1e-159, ||x_bar||^2
    underflows and normalising x_bar gave a wrong metric (Gram matrix off by 5e-8, Log of Exp off
    by 4e-6). Near the origin the metric and the chord are now evaluated without normalising."""
    rng = np.random.default_rng(4)
    x = _lift(r * unit_vector(rng, 3))
    E = M.tangent_basis(x)
    G = np.array([[M.inner(x, a, b) for b in E] for a in E])
    np.testing.assert_allclose(G, np.eye(3), rtol=0, atol=4 * EPS)
    for t in (1e-8, 0.5, 2.0):
        v = t * (rng.standard_normal(3) @ E) / math.sqrt(3.0)
        v = t * v / M.norm(x, v)
        y = M.exp(x, v)
        assert abs(M.dist(x, y) - t) <= 8 * EPS * t * (1 + y[0])
        np.testing.assert_allclose(M.log(x, y), v, rtol=0, atol=16 * EPS * t * (1 + y[0]))
        np.testing.assert_allclose(M.transp(y, x, M.transp(x, y, v)), v, rtol=0, atol=16 * EPS * t * (1 + y[0]))


def test_tangency_check_accepts_near_cancelling_sums_and_refuses_normal_components():
    """A gradient near an optimum is a near-cancelling sum of unit-scale tangent vectors; its
    residue along x is ~eps x_0^2 however small the sum (found by the trainers on HSP). The check
    has an absolute floor 64 eps x_0^2 for it; a genuine normal component is still refused."""
    M = RefLorentz(3)
    rng = np.random.default_rng(0)
    for radius in (0.0, 5.0, 10.0):
        x = M.exp(M.origin(), radius * np.r_[0.0, 1.0, 0.0, 0.0]) if radius else M.origin()
        for _ in range(20):
            a, b = M.random_tangent(x, rng), M.random_tangent(x, rng)  # unit scale in the metric
            v = (a + 1e-9 * b) - a
            M.check_tangent(x, v)
        with pytest.raises(ValueError, match="not tangent"):
            M.check_tangent(x, 1e-3 * x)


def test_the_domain_bound_is_on_the_time_coordinate_whatever_the_direction():
    """x_0 <= 2^500 (proofs_notes/manifold_lorentz.md): the point at distance 350 from the origin
    along the second space axis, (cosh 350, 0, sinh 350), has x_0 = 5e151 > 2^500 = 3.3e150 and is
    refused, although x_1 = 0; the same along the first axis is refused too; at distance 340
    (x_0 = 1.1e147) both are points."""
    M = RefLorentz(2)
    for r, ok in ((350.0, False), (340.0, True)):
        for p in (np.array([math.cosh(r), 0.0, math.sinh(r)]), np.array([math.cosh(r), math.sinh(r), 0.0])):
            if ok:
                M.check_point(p)
            else:
                with pytest.raises(ValueError, match="beyond the domain x_0 <= 2\\^500"):
                    M.check_point(p)


# ---------------------------------------------------------------------------- limits at themselves and on both sides
TWIN_LORENTZ = pytest.mark.parametrize("cls", [RefLorentz, VerLorentz], ids=["reference", "verified"])


@TWIN_LORENTZ
def test_exp_step_limit_700_on_both_sides_and_a_long_step_inside_the_domain(cls):
    """Exp refuses ||v||_L > 700 as overflowing cosh; at 700 itself it computes and refuses the result,
    which is beyond the domain (x_0 = cosh 700 = 5.07e303 > 2^500); a step of 351 from the point at
    distance 10 on one side of the origin to the point at distance 341 on the other, along the
    geodesic (cosh s, sinh s, 0), is a valid Exp (closed form; the terms cosh(351) sinh(10) cancel
    e^20 of the digits: tolerance 64 eps e^20)."""
    M = cls(2)
    o = M.origin()
    for t in (math.nextafter(700.0, 800.0), 800.0):
        with pytest.raises(ValueError, match=rf"^Lorentz\.exp: \|\|v\|\|_L = {t:.6g} overflows cosh \(limit 700\)$"):
            M.exp(o, np.array([0.0, t, 0.0]))
    with pytest.raises(ValueError, match=r"^Lorentz\.exp: the result overflows the domain of the model \(x_0 = "):
        M.exp(o, np.array([0.0, 700.0, 0.0]))
    x = np.array([math.cosh(10.0), -math.sinh(10.0), 0.0])
    v = 351.0 * np.array([-math.sinh(10.0), math.cosh(10.0), 0.0])  # 351 times the geodesic's unit velocity
    y = M.exp(x, v)
    want = np.array([math.cosh(341.0), math.sinh(341.0), 0.0])
    np.testing.assert_allclose(y, want, rtol=64 * EPS * math.exp(20.0), atol=0)


@TWIN_LORENTZ
def test_point_domain_bounds_at_themselves(cls):
    """x_0 > 0 and x_0 <= 2^500, at the bounds: x_0 = 0 is refused for its sign (not for the
    hyperboloid defect); (2^500, 2^500, 0) (|<x, x>_L + 1| = 1 <= tol 2^1000) is a point, the next
    double of x_0 is beyond the domain."""
    M = cls(2)
    with pytest.raises(ValueError, match=r"^Lorentz\.check_point: x_0 = 0\.000e\+00 is not > 0"):
        M.check_point(np.zeros(3))
    b = 2.0**500
    M.check_point(np.array([b, b, 0.0]))
    with pytest.raises(ValueError, match=r"^Lorentz\.check_point: x_0 = 3\.273e\+150 is beyond the domain"):
        M.check_point(np.array([math.nextafter(b, math.inf), b, 0.0]))


@TWIN_LORENTZ
def test_membership_tolerance_is_the_given_tol_and_inclusive(cls):
    """|<x, x>_L + 1| <= tol x_0^2 with the caller's tol: x = (1, 2^-20, 0) has defect exactly 2^-40
    (x_0 = 1), so it is a point for tol = 2^-40 (on the bound) and for the default 1e-10, not for
    tol = 2^-41 (the tests had only used the default)."""
    x = np.array([1.0, 2.0**-20, 0.0])
    cls(2, tol=2.0**-40).check_point(x)
    cls(2).check_point(x)
    with pytest.raises(ValueError, match=r"not on the hyperboloid \(\|<x, x>_L \+ 1\| = 9\.095e-13, tolerance 4\.547e-13 "):
        cls(2, tol=2.0**-41).check_point(x)


@TWIN_LORENTZ
def test_chord_switch_at_h_equal_1_on_both_sides_and_the_polar_form_on_a_far_ray(cls):
    """`chord` switches from the chord form to the polar form where h = cosh(dist) - 1 passes 1 (dist
    acosh 2 = 1.3170): at radii 2 and 5, on a ray and at an angle of 0.3, dist at acosh(2) (1 -+ 1e-9)
    equals the 120-digit distance of the stored points to 8 eps relative on both sides; beyond the
    switch, on a ray at radius 30 (x_0 = 5.3e12), the polar form is exact to rounding where the chord
    form would lose 6 digits at distance 1.7 (a switch moved to h = 2 passed every test)."""
    M = cls(2)
    switch = math.acosh(2.0)
    for r, dists in ((2.0, (switch * (1 - 1e-9), switch * (1 + 1e-9))), (5.0, (switch * (1 - 1e-9), switch * (1 + 1e-9))),
                     (30.0, (1.5, 1.7))):
        for angle in ((0.0, 0.3) if r < 30 else (0.0,)):
            x = point_at_radius(r, np.array([1.0, 0.0]))
            for dist in dists:
                y = point_at_radius(r + dist, np.array([math.cos(angle), math.sin(angle)]))
                want = float(_mp_dist(x, y))
                assert abs(M.dist(x, y) - want) <= 8 * EPS * want, (r, angle, dist)


@TWIN_LORENTZ
def test_tangent_inner_switch_at_unit_space_part_on_both_sides(cls):
    """The metric switches from ub.vb - (xb.ub)(xb.vb)/(1 + ||xb||^2) to the split into parts along and
    across xb where ||xb||^2 passes 1: at ||xb||^2 = 1 exactly, at the next double above it and at 1/2
    and 2, <u, v>_L (u_0 = xb.ub/x_0 on T_x) equals its 50-digit value -u_0 v_0 + ub.vb to 4 eps
    (which is why moving the switch to 1/2 or 2 is listed as tolerated)."""
    M = cls(2)
    ub, vb = np.array([0.3, -1.1]), np.array([0.7, 0.4])
    for x1 in (1.0, math.nextafter(1.0, 2.0), math.sqrt(0.5), math.sqrt(2.0)):
        xb = np.array([x1, 0.0])
        x = np.array([math.sqrt(1.0 + x1 * x1), x1, 0.0])
        u, v = (np.concatenate([[float(xb @ b) / x[0]], b]) for b in (ub, vb))
        X, U, V = ([mpmath.mpf(float(t)) for t in a] for a in (xb, ub, vb))
        x0 = mpmath.sqrt(1 + X[0] ** 2 + X[1] ** 2)
        u0, v0 = (sum(a * b for a, b in zip(X, W)) / x0 for W in (U, V))
        want = float(-u0 * v0 + U[0] * V[0] + U[1] * V[1])
        assert abs(M.inner(x, u, v) - want) <= 4 * EPS, x1


@TWIN_LORENTZ
def test_tangency_bound_is_tol_x0_plus_64_eps_x0_squared_over_the_norm(cls):
    """|<x, v>_L| / ||v||_2 <= tol x_0 + 64 eps x_0^2 / ||v||_2, written here, at x = (2, sqrt 3, 0) (so
    that neither x_0 nor x_0^2 is 1) and ||v||_2 = 1e-4 (so that the floor, 5.7e-10, outweighs the
    relative part, 2e-10): v = s (u + k e_0), u the unit tangent direction (sqrt 3, 2, 0)/sqrt 7, has
    <x, v>_L = -2 k s; at 0.999 times the bound it is tangent, at 1.001 times not (the tests had
    checked the floor far inside and far outside only)."""
    M = cls(2)
    x = np.array([2.0, math.sqrt(3.0), 0.0])
    u = np.array([math.sqrt(3.0), 2.0, 0.0]) / math.sqrt(7.0)
    e0 = np.array([1.0, 0.0, 0.0])
    nv = 1e-4
    bound = 1e-10 * 2.0 + 64.0 * EPS * 4.0 / nv
    for frac, ok in ((0.999, True), (1.001, False)):
        k = 0.0
        for _ in range(4):  # rel(k) = 2k / ||u + k e0|| = frac * bound
            k = frac * bound * np.linalg.norm(u + k * e0) / 2.0
        v = nv * (u + k * e0) / np.linalg.norm(u + k * e0)
        rel = abs(-x[0] * v[0] + x[1:] @ v[1:]) / np.linalg.norm(v)
        assert abs(rel / bound - frac) <= 1e-6
        if ok:
            M.check_tangent(x, v)
        else:
            with pytest.raises(ValueError, match="not tangent at x"):
                M.check_tangent(x, v)


@TWIN_LORENTZ
def test_exp_refuses_a_result_beyond_the_domain_x0_2_to_the_500_on_both_sides(cls):
    """Points of the model have x_0 <= 2^500 (X0_MAX; acosh(2^500) = 347.3 from the origin). Exp from the
    origin along either space axis by 347.0 lands at x_0 = cosh(347) = 2.5e150 and is returned; by
    347.5 it would land at 4.1e150 and is refused, naming x_0, the bound, the start and the step. (A check
    of another coordinate, or of finiteness only, survived the manifolds run: the test above refuses
    x_0 = 5e303 only, where every coordinate is huge.)"""
    M = cls(2)
    for axis in (1, 2):  # the other space coordinate stays 0
        e = np.zeros(3)
        e[axis] = 1.0
        y = M.exp(M.origin(), 347.0 * e)
        assert y[0] == pytest.approx(math.cosh(347.0), rel=1e-13, abs=0) and y[3 - axis] == 0.0
        with pytest.raises(ValueError, match=r"^Lorentz\.exp: the result overflows the domain of the model \(x_0 = 4\.133e\+150 > "
                                             r"2\^500 = 3\.27e\+150; from x_0 = 1\.000e\+00 with \|\|v\|\|_L = 347\.5\)$"):
            M.exp(M.origin(), 347.5 * e)


@TWIN_LORENTZ
def test_norm_of_tiny_and_huge_tangent_vectors_is_the_scaled_norm(cls):
    """||2^k w||_x = 2^k ||w||_x: for 2^k far from 1 the squared norm under- or overflows float64
    (below 1e-290 or inf), and the norm is taken of w / max|w_bar| instead and scaled back. Checked for
    k = -1000, -600, -540, 500, 600, 1000 against 2^k times the norm of w itself (a unit combination of
    the boosted basis), at the origin and at radius 3 and 15, to 8 eps x_0 (the division by max|w_bar|
    rounds each component: eps x_0 across the ray, as for every tangent computation far out); the zero
    vector has norm 0, and so has nothing to scale. (Mutants of this path, v * m for v / m and a division
    for the scaling back among them, survived the full manifolds run: no test reached it.)"""
    M, R = cls(3), RefLorentz(3)
    rng = np.random.default_rng(17)
    for r in (0.0, 3.0, 15.0):
        u = rng.standard_normal(3)
        x = R.exp(R.origin(), np.concatenate([[0.0], r * u / np.linalg.norm(u)]))
        c = rng.standard_normal(3)
        w = (c @ R.tangent_basis(x)) / np.linalg.norm(c)
        n = M.norm(x, w)
        assert 0.5 < n < 2.0
        for k in (-1000, -600, -540, 500, 600, 1000):
            assert M.norm(x, np.ldexp(w, k)) == pytest.approx(math.ldexp(n, k), rel=8 * EPS * x[0], abs=0), (r, k)
        assert M.norm(x, np.zeros(4)) == 0.0
    for k in (-1000, 1000):  # at the origin, a vector along the first space axis only (the scale reads every space entry)
        assert M.norm(M.origin(), np.array([0.0, math.ldexp(3.0, k), 0.0, 0.0])) == math.ldexp(3.0, k)


def test_repr_names_the_dimension():
    """repr(Lorentz(d)) is the constructor call."""
    assert repr(RefLorentz(4)) == "Lorentz(4)" and repr(RefLorentz(1)) == "Lorentz(1)"
