"""Known answers for the row-wise Lorentz formulas (prirfed.reference.manifolds.lorentz_rows).

The point-by-point agreement with the Lorentz class is in tests/data/test_data_wordnet.py; here
each function is checked against closed forms on a geodesic through the origin (where distance,
gradient and exponential are hyperbolic functions of one parameter) and against a 50-digit mpmath
evaluation of acosh(-<u, v>_L) away from such geodesics, in batches of rows (the broadcasting that
the batched HSP objective relies on).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from prirfed.reference.manifolds import lorentz_rows as lr


def _on_axis(a, theta=0.0):
    """The point at signed distance a from the origin along the direction (cos theta, sin theta) of H^2."""
    a = np.asarray(a, dtype=float)
    return np.stack([np.cosh(a), np.sinh(a) * np.cos(theta), np.sinh(a) * np.sin(theta)], axis=-1)


def _mp_dist(u, v):
    """acosh(-<u, v>_L) at 50 digits from the float64 coordinates, the time coordinate recomputed
    from the space part (as the module does), so the oracle sees the same point."""
    with mp.workdps(50):
        ub = [mp.mpf(float(t)) for t in u[1:]]
        vb = [mp.mpf(float(t)) for t in v[1:]]
        u0 = mp.sqrt(1 + sum(t * t for t in ub))
        v0 = mp.sqrt(1 + sum(t * t for t in vb))
        ip = sum(a * b for a, b in zip(ub, vb)) - u0 * v0
        return float(mp.acosh(-ip))


def test_inner_rows_hand_computed():
    """<u, v>_L = u^T v - 2 u0 v0: (1, 2, 3).(4, 5, 6) = 32, minus 2*1*4 = 24; rows broadcast."""
    U = np.array([[1.0, 2.0, 3.0], [2.0, 0.0, -1.0]])
    V = np.array([4.0, 5.0, 6.0])
    assert np.array_equal(lr.inner_rows(U, V), [24.0, 8.0 - 6.0 - 16.0])


def test_dist_rows_on_a_geodesic_through_the_origin():
    """dist((cosh a, sinh a, 0), (cosh b, sinh b, 0)) = |a - b|, row by row, 0 on equal rows."""
    a = np.array([0.0, 0.3, 2.0, -1.5, 4.0, 1e-7])
    b = np.array([0.0, 1.3, 0.5, 1.5, 4.0, 3e-7])
    d = lr.dist_rows(_on_axis(a), _on_axis(b))
    assert d.shape == (6,)
    assert np.allclose(d, np.abs(a - b), rtol=1e-12, atol=0.0)
    assert d[0] == 0.0 and d[4] == 0.0


def test_dist_rows_from_the_origin_in_any_direction():
    """dist(o, (cosh a, sinh a cos t, sinh a sin t)) = a for every direction t; broadcast of one row."""
    o = np.array([1.0, 0.0, 0.0])
    for theta in (0.0, 0.7, 2.0, -2.9):
        a = np.array([0.1, 1.0, 5.0])
        assert np.allclose(lr.dist_rows(o, _on_axis(a, theta)), a, rtol=1e-12, atol=0)


def test_dist_rows_against_mpmath_off_the_axes():
    """Points in general position, 50-digit acosh(-<u, v>_L) as oracle, relative error 1e-12
    (distances from 1e-9 to about 8, where the acosh form itself would lose all digits at the
    small end)."""
    rng = np.random.default_rng(11)
    for scale in (1e-9, 1e-4, 0.5, 3.0):
        ub = rng.normal(size=(5, 2))
        vb = ub + scale * rng.normal(size=(5, 2))
        U = np.concatenate([np.sqrt(1 + np.sum(ub ** 2, 1))[:, None], ub], 1)
        V = np.concatenate([np.sqrt(1 + np.sum(vb ** 2, 1))[:, None], vb], 1)
        d = lr.dist_rows(U, V)
        want = np.array([_mp_dist(u, v) for u, v in zip(U, V)])
        assert np.allclose(d, want, rtol=1e-12, atol=0.0), (scale, d, want)


def test_grad_dist_rows_is_minus_the_unit_tangent_towards_v():
    """On the x-axis geodesic the unit tangent at u = (cosh a, sinh a, 0) pointing to larger a is
    (sinh a, cosh a, 0); the gradient of dist(., v) is minus the unit tangent towards v: -(sinh a,
    cosh a, 0) when b > a, +(sinh a, cosh a, 0) when b < a, and 0 when v = u."""
    a = np.array([0.5, 0.5, 1.2, -2.0, 0.4, 0.4, -0.7])
    b = np.array([2.0, -1.0, 1.2, -1.0, 0.7, 0.4 - 1e-3, -0.7 + 1e-9])  # distances 1.5 ... 0.3, 1e-3, 1e-9
    U, V = _on_axis(a), _on_axis(b)
    d = lr.dist_rows(U, V)
    with np.errstate(all="raise"):  # zero at d = 0 without dividing by sinh(0) = 0
        g = lr.grad_dist_rows(U, V, d)
    sgn = np.sign(b - a)
    want = -sgn[:, None] * np.stack([np.sinh(a), np.cosh(a), np.zeros_like(a)], axis=-1)
    assert np.allclose(g[:5], want[:5], rtol=0.0, atol=1e-12)
    # at d = 1e-3 and 1e-9 the chord (b - a) e is known only to the rounding of cosh and sinh of a
    assert np.allclose(g[5:], want[5:], rtol=0.0, atol=1e-7)
    assert np.array_equal(g[2], np.zeros(3))


def test_grad_dist_rows_is_a_unit_tangent_in_general_position():
    """Off the axes: <g, u>_L = 0 (tangent), <g, g>_L = 1 (unit speed), and a first-order step
    against it shortens the distance by its length: dist(Exp_u(-h g), v) = d - h + O(h^2)."""
    rng = np.random.default_rng(5)
    ub, vb = rng.normal(size=(4, 2)), rng.normal(size=(4, 2))
    U = np.concatenate([np.sqrt(1 + np.sum(ub ** 2, 1))[:, None], ub], 1)
    V = np.concatenate([np.sqrt(1 + np.sum(vb ** 2, 1))[:, None], vb], 1)
    d = lr.dist_rows(U, V)
    g = lr.grad_dist_rows(U, V, d)
    assert np.allclose(lr.inner_rows(g, U), 0.0, atol=1e-10)
    assert np.allclose(lr.inner_rows(g, g), 1.0, rtol=1e-10, atol=0)
    h = 1e-6
    moved = lr.dist_rows(lr.exp_rows(U, -h * g), V)
    assert np.allclose(moved, d - h, rtol=0.0, atol=1e-10)


def test_exp_rows_along_the_axis():
    """Exp_u(t (sinh a, cosh a, 0)) = (cosh(a + t), sinh(a + t), 0) at u = (cosh a, sinh a, 0), for
    t on both sides of the series switch at 1e-8 and t = 0."""
    a = np.array([0.0, 0.4, -1.1, 2.0, 0.3, 0.3, 0.3])
    t = np.array([1.0, -0.25, 3.0, 0.0, 1e-9, 1e-8, 2e-8])
    U = _on_axis(a)
    V = t[:, None] * np.stack([np.sinh(a), np.cosh(a), np.zeros_like(a)], axis=-1)
    with np.errstate(all="raise"):  # v = 0 without dividing sinh(0) by 0
        Y = lr.exp_rows(U, V)
    assert np.allclose(Y, _on_axis(a + t), rtol=1e-13, atol=1e-15)


def test_exp_rows_series_branch_against_mpmath():
    """Near the switch t = 1e-8 the coefficient of v is sinh(t)/t; at the origin o with v = (0, t, 0)
    the result's space part is sinh(t), compared with 50-digit mpmath on both sides (exactly equal
    below the switch, where sinh(t) rounds to t)."""
    o = np.array([[1.0, 0.0, 0.0]])
    for t in (3e-9, 9.999e-9, 1e-8, 1.0001e-8, 4e-8, 1e-4):
        y = lr.exp_rows(o, np.array([[0.0, t, 0.0]]))[0]
        with mp.workdps(50):
            want = float(mp.sinh(mp.mpf(t)))
        if t < 1e-8:  # series branch: 1 + t^2/6 rounds to 1 and sinh(t) rounds to t: exact
            assert y[1] == want, t
        else:  # np.sinh(t) / t * t: three roundings
            assert y[1] == pytest.approx(want, rel=4 * 2.2e-16, abs=0), t
        assert y[0] == pytest.approx(float(mp.cosh(mp.mpf(t))), rel=1e-15, abs=0)
