"""The generic federated Frechet mean: closed-form optimum on flat space, gradient by finite differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Euclidean, Sphere
from prirfed.reference.problems.frechet_mean import FrechetMean


@given(seed=st.integers(0, 2**32 - 1))
def test_optimum_on_euclidean_is_the_weighted_mean(seed):
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal((int(n), 3)) for n in rng.integers(1, 5, size=3)]
    P = FrechetMean(Euclidean(3), data)
    np.testing.assert_allclose(P.optimum(), np.concatenate(data).mean(axis=0), atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1))
def test_gradient_matches_finite_difference_on_the_sphere(seed):
    rng = np.random.default_rng(seed)
    M = Sphere(3)
    x = M.random_point(rng)
    data = [np.array([M.exp(x, 0.5 * M.random_tangent(x, rng) / 2) for _ in range(3)])]
    P = FrechetMean(M, data)
    v = M.random_tangent(x, rng)
    h = 1e-6
    fd = (P.f(M.exp(x, h * v)) - P.f(M.exp(x, -h * v))) / (2 * h)
    assert fd == pytest.approx(M.inner(x, P.rgrad(x), v), rel=1e-6, abs=1e-8)


def test_bad_input():
    with pytest.raises(ValueError, match="FrechetMean"):
        FrechetMean(Euclidean(2), [np.zeros((0, 2))])
    with pytest.raises(ValueError, match="FrechetMean"):
        FrechetMean(Sphere(2), [np.ones((1, 3))])


def test_optimum_weights_every_record_alike_across_agents_of_different_sizes():
    """p_i = N_i / sum N_k and f_i averages over N_i records, so each record weighs 1 / sum N_k: on
    the plane the minimiser is the plain mean of all records pooled. Agents of 1, 2 and 3 records
    (unequal, so a weight read from the wrong agent shows): mean of (0,0), (3,0), (3,3), (6,0),
    (0,6), (6,3) = (3, 2)."""
    P = FrechetMean(Euclidean(2), [np.array([[0.0, 0.0]]), np.array([[3.0, 0.0], [3.0, 3.0]]),
                                   np.array([[6.0, 0.0], [0.0, 6.0], [6.0, 3.0]])])
    np.testing.assert_allclose(P.optimum(), [3.0, 2.0], rtol=0, atol=1e-12)
