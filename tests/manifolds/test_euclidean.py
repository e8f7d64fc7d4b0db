"""Euclidean(d): the contract, the verified twin, and the flat closed forms."""

import numpy as np
import pytest

from prirfed.reference.manifolds import Euclidean as RefEuclidean
from prirfed.testing.manifold_contract import ManifoldContract, VerifiedEquivalence
from prirfed.verified.manifolds import Euclidean as VerEuclidean


class TestEuclideanContract(ManifoldContract):
    manifold = RefEuclidean(4)


class TestVerifiedEuclideanContract(ManifoldContract):
    manifold = VerEuclidean(4)


class TestVerifiedEuclideanEqualsReference(VerifiedEquivalence):
    reference = RefEuclidean(4)
    verified = VerEuclidean(4)


def test_closed_forms():
    M = RefEuclidean(2)
    x, y = np.array([1.0, 2.0]), np.array([4.0, 6.0])
    assert M.dist(x, y) == 5.0
    np.testing.assert_array_equal(M.log(x, y), [3.0, 4.0])
    assert M.curvature_bounds == (0.0, 0.0)
    assert M.dim == 2 and M.ambient_shape == (2,)


@pytest.mark.parametrize("d", [0, -1, 2.5])
def test_bad_dimension(d):
    with pytest.raises(ValueError, match="Euclidean"):
        RefEuclidean(d)


def test_repr_and_injectivity_radius():
    """Exp_x(v) = x + v is a bijection of R^d, so the injectivity radius is +inf at every point (the
    return value was read by no test), and the repr names the dimension."""
    import math

    M = RefEuclidean(3)
    assert M.injectivity_radius() == math.inf and M.injectivity_radius(np.zeros(3)) == math.inf
    assert repr(M) == "Euclidean(3)"


@pytest.mark.parametrize("method, args", [
    ("proj", lambda x: (x, np.ones(2))), ("egrad2rgrad", lambda x: (x, np.ones(2))),
    ("tangent_basis", lambda x: (x,)), ("random_tangent", lambda x: (x, np.random.default_rng(0))),
    ("transp", lambda x: (x, x, np.ones(2))), ("transp", lambda x: (np.zeros(2), x, np.ones(2))),
])
def test_every_method_checks_its_points(method, args):
    """A NaN point is refused by each method that takes one, with the method named, also by those that
    return a value not depending on it (proj, egrad2rgrad and tangent_basis return w, g and I, and
    transp returns v: their point checks were deleted by mutants that no test noticed)."""
    bad = np.array([np.nan, 0.0])
    with pytest.raises(ValueError, match=rf"^Euclidean\.{method}: [xy] has 1 non-finite entry"):
        getattr(RefEuclidean(2), method)(*args(bad))
