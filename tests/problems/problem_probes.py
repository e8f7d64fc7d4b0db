"""Small helpers shared by the problem tests (tests/problems): where a derivative is probed.

They draw from the test's Generator in the order the tests always drew (a point, then a tangent
vector there), so the Hypothesis examples are unchanged.
"""


def point_and_direction(P, rng):
    """(M, x, v): the problem's manifold, a random point of it and a random tangent vector at x."""
    M = P.manifold
    x = M.random_point(rng)
    return M, x, M.random_tangent(x, rng)


def exp_pair(M, x, v, h):
    """(Exp_x(h v), Exp_x(-h v)): the two points of a central difference along the geodesic."""
    return M.exp(x, h * v), M.exp(x, -h * v)


def central_points(P, rng, h):
    """(M, x, v, Exp_x(h v), Exp_x(-h v)): :func:`point_and_direction` and the two points of a
    central difference of step h along the geodesic."""
    M, x, v = point_and_direction(P, rng)
    return (M, x, v, *exp_pair(M, x, v, h))


def point_and_ambient_direction(P, rng):
    """(x, e): a random point of the problem's manifold and a standard normal ambient direction."""
    x = P.manifold.random_point(rng)
    return x, rng.standard_normal(x.shape)
