"""The generic federated Frechet mean: closed-form optimum on flat space, gradient by finite differences."""

import math

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


def three_agents_on_the_plane(**kwargs):
    """Agents of 1, 2 and 3 records on R^2 (p = 1/6, 2/6, 3/6; pooled mean (3, 2))."""
    return FrechetMean(Euclidean(2), [np.array([[0.0, 0.0]]), np.array([[3.0, 0.0], [3.0, 3.0]]),
                                      np.array([[6.0, 0.0], [0.0, 6.0], [6.0, 3.0]])], **kwargs)


def test_every_average_of_the_finite_sum_by_hand():
    """f_ij = |x - a_ij|^2 / 2 and grad = x - a_ij on R^2, at x = (1, 1), by hand:
    f_11 = 8/2 = 4, grad f_11 = (-2, -2); f_2 = mean(26, 26, 29)/2 = 13.5, grad f_2 = x - (4, 3) = (-3, -2);
    f_1 = (5 + 8)/4 = 3.25, grad f_1 = x - (3, 1.5); f = 1/6 * 1 + 2/6 * 3.25 + 3/6 * 13.5 = 8 (= the
    pooled mean of the six halved squared distances 48/6), grad f = x - (3, 2) = (-2, -1), norm sqrt 5.
    The trainer-interface aliases (sizes, weights, grad_sample, grad_agent, f_agent, grad) give the same
    numbers, and the batch stacks the per-sample gradients in the order asked (FrechetMean has no
    Euclidean gradient; the egrad averages are checked on sphere PCA)."""
    P = three_agents_on_the_plane()
    x = np.array([1.0, 1.0])
    assert P.f_ij(x, 1, 1) == pytest.approx(4.0, rel=1e-15, abs=0)
    np.testing.assert_allclose(P.rgrad_ij(x, 1, 1), [-2.0, -2.0], atol=0)
    assert P.f_i(x, 2) == pytest.approx(13.5, rel=1e-15, abs=0) and P.f_agent(x, 1) == pytest.approx(3.25, rel=1e-15, abs=0)
    np.testing.assert_allclose(P.rgrad_i(x, 2), [-3.0, -2.0], rtol=1e-15)
    np.testing.assert_allclose(P.grad_agent(x, 1), [-2.0, -0.5], rtol=1e-15)
    assert P.f(x) == pytest.approx(8.0, rel=1e-15, abs=0)
    for g in (P.rgrad(x), P.grad(x)):
        np.testing.assert_allclose(g, [-2.0, -1.0], rtol=1e-14)
    assert P.rgrad_norm(x) == pytest.approx(math.sqrt(5.0), rel=1e-14, abs=0)
    assert P.sizes == [1, 2, 3]
    np.testing.assert_allclose(P.weights, [1 / 6, 2 / 6, 3 / 6], rtol=1e-15)
    np.testing.assert_allclose(P.grad_sample(x, 2, 0), [-5.0, 1.0], atol=0)
    J = np.array([2, 0])
    np.testing.assert_allclose(P.rgrad_batch(x, 2, J), [[-5.0, -2.0], [-5.0, 1.0]], atol=0)
    assert P.samples() == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_index_checks_name_the_method_and_the_bad_index():
    """Agent and sample indices are integers in range (a bool is not an index), a batch's index set is a
    non-empty 1-D integer array within the agent's samples; each refusal names <Problem>.<method> and
    the value."""
    P = three_agents_on_the_plane()
    x = np.array([1.0, 1.0])
    cases = [
        (lambda: P.f_i(x, True), r"^FrechetMean.f_i: agent index i must be an integer \(got True\)$"),
        (lambda: P.rgrad_ij(x, -1, 0), r"^FrechetMean.rgrad_ij: agent index i=-1 out of range \[0, 2\]$"),
        (lambda: P.rgrad_ij(x, 0, 1.0), r"^FrechetMean.rgrad_ij: sample index j must be an integer \(got 1.0\)$"),
        (lambda: P.f_ij(x, 1, -1), r"^FrechetMean.f_ij: sample index j=-1 out of range \[0, 1\] for agent 1$"),
        (lambda: P.f_ij(x, 1, 2), r"^FrechetMean.f_ij: sample index j=2 out of range \[0, 1\] for agent 1$"),
        (lambda: P.rgrad_batch(x, 1, np.array([[0]])),
         r"^FrechetMean.rgrad_batch: the index set must be a non-empty 1-D sequence \(got shape \(1, 1\)\)$"),
        (lambda: P.rgrad_batch(x, 1, np.array([0.0])), r"^FrechetMean.rgrad_batch: indices must be integers \(got dtype float64\)$"),
        (lambda: P.rgrad_batch(x, 1, np.array([1, -1])), r"^FrechetMean.rgrad_batch: index -1 out of range \[0, 1\] for agent 1$"),
        (lambda: P.rgrad_batch(x, 1, np.array([2, 0])), r"^FrechetMean.rgrad_batch: index 2 out of range \[0, 1\] for agent 1$"),
    ]
    for call, match in cases:
        with pytest.raises(ValueError, match=match):
            call()


def test_a_given_optimum_is_used_and_checked_and_a_bad_point_is_named():
    """x_star given in closed form is returned as is (no Karcher iteration; here deliberately not the mean,
    so a recomputation would show), and checked as a point of the manifold; a data point off the sphere
    is refused naming its agent and sample."""
    P = three_agents_on_the_plane(x_star=np.array([1.0, 2.0]))
    np.testing.assert_array_equal(P.x_star, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"FrechetMean"):
        FrechetMean(Sphere(2), [np.array([[0.0, 0.0, 1.0]])], x_star=np.array([1.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match=r"FrechetMean \(agent 1, sample 1\)"):
        FrechetMean(Sphere(2), [np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])])


def test_problem_helpers_refuse_with_their_messages():
    """agent_weights knows two rules; positive_float takes finite numbers > 0 only (not a bool or a
    string); a loss that overflows (|x - a|^2 / 2 at distance 2e200: Python's float power raises
    OverflowError) is refused by the public wrapper, naming the problem and the method."""
    from prirfed.reference.problems.base import agent_weights, positive_float

    np.testing.assert_allclose(agent_weights([1, 3], "samples"), [0.25, 0.75], rtol=1e-15)
    np.testing.assert_allclose(agent_weights([1, 3, 4], "uniform"), [1 / 3] * 3, rtol=1e-15)
    with pytest.raises(ValueError, match=r"^agent_weights: rule must be 'samples' or 'uniform' \(got 'equal'\)$"):
        agent_weights([1, 3], "equal")
    assert positive_float("w", "c", 2) == 2.0 and positive_float("w", "c", np.float32(0.5)) == 0.5
    for bad in (True, 0, -1.0, math.inf, math.nan, "1"):
        with pytest.raises(ValueError, match=r"^w: c must be a positive finite number \(got "):
            positive_float("w", "c", bad)
    P = FrechetMean(Euclidean(1), [np.array([[1e200]])])
    with pytest.raises(ValueError, match=r"^FrechetMean.f_ij: not computable in float64 \("):
        P.f_ij(np.array([-1e200]), 0, 0)


def test_a_refusal_of_the_manifold_names_the_problem_method_in_front():
    """A manifold map's own refusal (Euclidean.log: y - x = 2e308 overflows; Sphere.log: antipodal
    points) reaches the caller with ``<Problem>.<method>: `` in front of the manifold's words, so the
    user learns both which problem call and which map failed; a refusal the method makes itself is
    not prefixed twice."""
    P = FrechetMean(Euclidean(1), [np.array([[1e308]])])
    with pytest.raises(ValueError, match=r"^FrechetMean\.rgrad_ij: Euclidean\.log: the result overflows float64"):
        P.rgrad_ij(np.array([-1e308]), 0, 0)
    with pytest.raises(ValueError, match=r"^FrechetMean\.rgrad: Euclidean\.log: the result overflows float64"):
        P.rgrad(np.array([-1e308]))
    with pytest.raises(ValueError, match=r"^FrechetMean\.f_ij: Euclidean\.dist: the result overflows float64"):
        P.f_ij(np.array([-1e308]), 0, 0)
    S = FrechetMean(Sphere(2), [np.array([[1.0, 0.0, 0.0]])])
    with pytest.raises(ValueError, match=r"^FrechetMean\.rgrad_ij: Sphere\.log: y is \(numerically\) antipodal to x"):
        S.rgrad_ij(np.array([-1.0, 0.0, 0.0]), 0, 0)
    with pytest.raises(ValueError, match=r"^FrechetMean\.rgrad_ij: agent index i=3 out of range \[0, 0\]$"):
        S.rgrad_ij(np.array([1.0, 0.0, 0.0]), 3, 0)


def test_the_euclidean_gradient_is_not_provided():
    """FrechetMean defines the loss and its Riemannian gradient only: asking for a Euclidean gradient
    raises NotImplementedError (a ValueError blaming the data or the point, as for a result that
    overflows, would be false)."""
    P = FrechetMean(Euclidean(2), [np.array([[0.0, 0.0], [1.0, 2.0]])])
    x = np.array([0.5, 0.5])
    for method, args in (("egrad_ij", (0, 0)), ("egrad_batch", (0, [0, 1])), ("egrad_i", (0,)), ("egrad", ())):
        with pytest.raises(NotImplementedError):
            getattr(P, method)(x, *args)
