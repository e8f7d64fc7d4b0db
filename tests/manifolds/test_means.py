"""The weights and beta of the tangent mean (3.2) of 000 / (8) of 002, on cases computed by hand
(issue 18: a tangent mean ignoring its weights passed every test)."""

import numpy as np
import pytest

from prirfed.reference.manifolds import Euclidean, Sphere
from prirfed.reference.manifolds.means import karcher_mean, tangent_mean


def test_euclidean_weighted_tangent_mean_is_the_weighted_average_moved_by_beta():
    """Exp_x(beta sum w_i (x_i - x)) = x + beta (sum w_i x_i - x); weights 1:3 normalised to 1/4, 3/4."""
    M = Euclidean(1)
    x, pts = np.array([1.0]), [np.array([0.0]), np.array([4.0])]
    assert tangent_mean(M, x, pts, weights=[1.0, 3.0])[0] == pytest.approx(3.0, abs=1e-15)
    assert tangent_mean(M, x, pts, weights=[2.0, 6.0], beta=0.5)[0] == pytest.approx(2.0, abs=1e-15)
    assert tangent_mean(M, x, pts)[0] == pytest.approx(2.0, abs=1e-15)  # default: equal weights
    assert tangent_mean(M, x, pts, weights=[0.0, 5.0])[0] == pytest.approx(4.0, abs=1e-15)


def test_sphere_tangent_mean_on_a_great_circle_averages_the_angles_with_the_weights():
    """x = e1 and points at angles a, b on the circle through e1, e2: Log_x gives angle * e2, so the
    mean is the point at angle beta (w1 a + w2 b) (no trigonometric identity needed beyond that)."""
    M = Sphere(2)  # S^2 in R^3
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    at = lambda t: np.cos(t) * e1 + np.sin(t) * e2  # noqa: E731
    a, b = 0.2, 1.0
    for w, beta in (([1.0, 3.0], 1.0), ([3.0, 1.0], 1.0), ([1.0, 1.0], 0.5)):
        want = beta * (w[0] * a + w[1] * b) / sum(w)
        np.testing.assert_allclose(tangent_mean(M, e1, [at(a), at(b)], weights=w, beta=beta), at(want), atol=1e-14)
    # on a geodesic through both points the Karcher mean is the same weighted angle
    m, _ = karcher_mean(M, [at(a), at(b)], weights=[1.0, 3.0], tol=1e-13)
    np.testing.assert_allclose(m, at(0.25 * a + 0.75 * b), atol=1e-12)


def test_weights_are_checked():
    M = Euclidean(1)
    pts = [np.zeros(1), np.ones(1)]
    for bad, msg in (([1.0], "weights has shape"), ([-1.0, 2.0], "finite, >= 0"), ([0.0, 0.0], "not all 0"),
                     ([np.nan, 1.0], "finite")):
        with pytest.raises(ValueError, match=f"tangent_mean: .*{msg}"):
            tangent_mean(M, np.zeros(1), pts, weights=bad)
    with pytest.raises(ValueError, match="tangent_mean: no points to aggregate"):
        tangent_mean(M, np.zeros(1), [])


def test_tangent_mean_of_one_point_is_that_point_or_the_beta_step_to_it():
    """One point y: the weights are (1,), so x^+ = Exp_x(beta Log_x(y)); beta = 1 gives y, beta = 1/2
    the geodesic midpoint (on S^2 from e_1 to e_2: (e_1 + e_2) / sqrt 2); the tests had always
    aggregated two or more points."""
    S = Sphere(2)
    x, y = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    np.testing.assert_allclose(tangent_mean(S, x, [y]), y, atol=1e-15)
    np.testing.assert_allclose(tangent_mean(S, x, [y], beta=0.5), np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0), atol=1e-15)
    np.testing.assert_allclose(tangent_mean(Euclidean(3), x, [y], weights=[2.0]), y, atol=0)


def test_tangent_mean_takes_fractional_weights_and_refuses_negative_ones():
    """Weights are any finite non-negative numbers, not all 0, normalised: on Euclidean(2) the tangent
    mean with weights (0.25, 0.75) is the weighted average 0.25 a + 0.75 b (beta = 1), the same for
    (1, 3); a negative weight is refused (a mutant refusing weights below 1 survived the tests, which
    used unit weights or none)."""
    E = Euclidean(2)
    a, b = np.array([0.0, 4.0]), np.array([8.0, 0.0])
    x = np.zeros(2)
    np.testing.assert_allclose(tangent_mean(E, x, [a, b], weights=[0.25, 0.75]), [6.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(tangent_mean(E, x, [a, b], weights=[1.0, 3.0]), [6.0, 1.0], atol=1e-15)
    with pytest.raises(ValueError, match=r"weights must be finite, >= 0 and not all 0"):
        tangent_mean(E, x, [a, b], weights=[-0.5, 1.5])


def test_karcher_mean_iterations_start_tolerance_and_refusals_on_a_line():
    """On R^1 the Karcher gradient at x is mean(x_i) - x, so one unit step lands on the mean: every count
    below is a hand computation. The default start is the first point (0 iterations when it is the
    mean), max_iter = 1 suffices for one step and its check, the stop rule is gradient norm <= tol
    (inclusive: norm exactly tol stops at once), a run that cannot reach tol raises, and tol and
    max_iter are checked."""
    E = Euclidean(1)
    pts = [np.array([0.0]), np.array([-1.0]), np.array([1.0])]
    m, it = karcher_mean(E, pts)
    assert m[0] == 0.0 and it == 0  # the default start points[0] is the mean
    m, it = karcher_mean(E, [np.array([-1.0]), np.array([1.0])], x0=np.array([3.0]), max_iter=1)
    assert m[0] == 0.0 and it == 1  # gradient -3 at 3 (weights 1/2, exact), then 0 at 0
    two = [np.array([0.0]), np.array([2.0])]
    m, it = karcher_mean(E, two, tol=1.0)  # gradient at 0 is 1.0 = tol: stop there
    assert m[0] == 0.0 and it == 0
    # on S^2 from e_1 towards e_2 and e_3: the first step (gradient pi/4 (e_2 + e_3)) stops at angle
    # pi/(2 sqrt 2) ~ 1.11 short of the mean (e_2 + e_3)/sqrt 2 at angle pi/2, so max_iter = 1 is too few
    S = Sphere(2)
    e1, e2, e3 = np.eye(3)
    with pytest.raises(ValueError, match=r"^karcher_mean: gradient norm \d\.\d{3}e-01 > tol 1\.0e-10 after 1 iterations$"):
        karcher_mean(S, [e2, e3], x0=e1, max_iter=1)
    m, _ = karcher_mean(S, [e2, e3], x0=e1)
    np.testing.assert_allclose(m, (e2 + e3) / np.sqrt(2.0), rtol=0, atol=1e-10)
    for kw, msg in (({"tol": 0.0}, "karcher_mean: tol must be a positive finite number"),
                    ({"max_iter": -1}, r"karcher_mean: max_iter must be >= 1")):
        with pytest.raises(ValueError, match=msg):
            karcher_mean(E, pts, **kw)
