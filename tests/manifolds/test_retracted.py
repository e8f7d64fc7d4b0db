"""Retracted(M): Exp/Log replaced by the retraction pair; everything else is M's own."""

import numpy as np
import pytest

from prirfed.reference.manifolds import Sphere
from prirfed.reference.manifolds.retracted import Retracted, geometry


def test_retracted_uses_the_retraction_pair_and_delegates_the_rest():
    M = Sphere(3)
    R = Retracted(M)
    rng = np.random.default_rng(0)
    x = M.random_point(rng)
    v = 0.3 * M.random_tangent(x, rng)
    np.testing.assert_array_equal(R.exp(x, v), M.retr(x, v))
    np.testing.assert_array_equal(R.retr(x, v), M.retr(x, v))  # (x, v) in that order: retr(v, x) survived
    y = R.exp(x, v)
    np.testing.assert_array_equal(R.log(x, y), M.inv_retr(x, y))
    assert R.dist(x, y) == M.dist(x, y) and R.inner(x, v, v) == M.inner(x, v, v)
    np.testing.assert_array_equal(R.tangent_basis(x), M.tangent_basis(x))
    assert R.dim == M.dim and R.ambient_shape == M.ambient_shape and not R.exact_transport
    # the projective retraction differs from Exp at third order: the wrapper really changes the map
    assert not np.allclose(R.exp(x, v), M.exp(x, v), atol=1e-6)


def test_geometry_and_bad_input():
    M = Sphere(2)
    assert geometry(M, "exp") is M
    assert isinstance(geometry(M, "retraction"), Retracted)
    with pytest.raises(ValueError, match="geometry: maps"):
        geometry(M, "qr")
    with pytest.raises(ValueError, match="Retracted"):
        Retracted("sphere")
    with pytest.raises(ValueError, match=r"Retracted\(Sphere\)\.check_point"):
        Retracted(M).check_point(np.ones(3))


def test_retracted_delegates_every_method_to_the_base_closed_forms():
    """Each delegated method of Retracted(Sphere(2)) against the sphere's closed forms, written here
    (projection w - (x^T w) x, norm ||u||, inner u^T v, the projective retraction (x + v)/||x + v||
    and its inverse y/(x^T y) - x, the angle arccos(x^T y), the log-free transport
    v - (y^T v)/(1 + x^T y) (x + y)), at arguments that are not interchangeable (a mutant swapping the
    arguments of a delegation, or returning None, passed the tests, which read exp, log, dist, inner
    and tangent_basis only)."""
    M = Sphere(2)
    R = Retracted(M)
    x = np.array([0.6, 0.8, 0.0])
    u, v = np.array([0.8, -0.6, 0.0]), np.array([0.0, 0.0, 0.5])
    y = np.array([0.0, 0.6, 0.8])
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(R.proj(x, w), w - (x @ w) * x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(R.egrad2rgrad(x, w), w - (x @ w) * x, rtol=0, atol=1e-15)
    assert R.norm(x, v) == 0.5 and R.inner(x, u, u + v) == 1.0
    np.testing.assert_allclose(R.retr(x, u), (x + u) / np.sqrt(2.0), rtol=0, atol=1e-15)
    np.testing.assert_allclose(R.inv_retr(x, y), y / 0.48 - x, rtol=0, atol=1e-14)
    assert abs(R.dist(x, y) - np.arccos(0.48)) <= 1e-15
    np.testing.assert_allclose(R.transp(x, y, u), u - (y @ u) / 1.48 * (x + y), rtol=0, atol=1e-15)
    # the draws are the base's own: the same generator state gives the same point and tangent
    p = R.random_point(np.random.default_rng(5))
    np.testing.assert_array_equal(p, M.random_point(np.random.default_rng(5)))
    assert abs(np.linalg.norm(p) - 1.0) <= 1e-15
    t = R.random_tangent(x, np.random.default_rng(5))
    np.testing.assert_array_equal(t, M.random_tangent(x, np.random.default_rng(5)))
    assert abs(x @ t) <= 1e-15 and np.linalg.norm(t) > 0


def test_retracted_checks_tangents_with_the_base_rule_and_names_itself():
    """check_tangent is the base's: on the sphere |x^T v| <= tol max(1, ||v||), so a long vector with a
    normal component 5 tol is accepted (relative 0.5 tol) and a short one with the same component is
    not; the message and the name carry 'Retracted(Sphere)', the repr the base's repr."""
    M = Sphere(2)
    R = Retracted(M)
    x = np.array([1.0, 0.0, 0.0])
    long_v = np.array([5.0 * M.tol, 10.0, 0.0])
    np.testing.assert_array_equal(R.check_tangent(x, long_v), long_v)
    with pytest.raises(ValueError, match=r"^Retracted\(Sphere\)\.check_tangent: v: not tangent at x"):
        R.check_tangent(x, np.array([5.0 * M.tol, 0.1, 0.0]))
    assert R.name == "Retracted(Sphere)" and repr(R) == "Retracted(Sphere(2))"
    assert R.validate is True and Retracted(Sphere(2, validate=False)).validate is False


def test_check_maps_refuses_an_array_without_comparing_it_elementwise():
    """An array holding 'exp' is not the string 'exp': refused with the message, never read through an
    element-wise comparison (which would return the array as if it were 'exp')."""
    from prirfed.reference.manifolds.retracted import check_maps

    assert check_maps("t", "exp") == "exp" and check_maps("t", "retraction") == "retraction"
    with pytest.raises(ValueError, match=r"^t: maps must be 'exp' or 'retraction' \(got array\(\['exp'\]"):
        check_maps("t", np.array(["exp"]))
