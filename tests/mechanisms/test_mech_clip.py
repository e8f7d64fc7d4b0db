"""clip_tau(v) = min{1, tau/||v||_x} v (000 Algorithm 2 line 4), norm in the metric at x."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mech_cases import CASES
from prirfed.reference import mechanisms as R
from prirfed.reference.manifolds import Euclidean

seeds = st.integers(0, 2**32 - 1)
ids = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=ids)
@given(seed=seeds, tau=st.floats(1e-3, 10.0), scale=st.floats(1e-3, 30.0))
def test_clip_properties(case, seed, tau, scale):
    """||clip(v)||_x <= tau (to one rounding, relative 4e-16 * dim); clip(v) = v exactly when
    ||v||_x <= tau; otherwise ||clip(v)||_x = tau (rtol 1e-12) and clip(v) = c v with 0 < c < 1
    (same direction: <clip(v), v>_x = ||clip(v)||_x ||v||_x); the result is tangent."""
    M = case.ref
    rng = np.random.default_rng(seed)
    x = M.random_point(rng)
    v = scale * M.random_tangent(x, rng)
    c = R.clip(M, x, v, tau)
    M.check_tangent(x, c)
    nv, nc = M.norm(x, v), M.norm(x, c)
    assert nc <= tau * (1 + 1e-15 * M.dim + 4e-16)
    if nv <= tau:
        np.testing.assert_array_equal(c, v)
    else:
        assert abs(nc - tau) <= 1e-12 * tau
        ratio = tau / nv
        np.testing.assert_allclose(c, ratio * v, rtol=0, atol=1e-15 * float(np.max(np.abs(v))))
        assert abs(M.inner(x, c, v) - nc * nv) <= 1e-12 * nc * nv


def test_clip_closed_forms_euclidean():
    """(3, 4) has norm 5: clip at 1 is (0.6, 0.8), at 5 and above it is unchanged, 0 stays 0."""
    M = Euclidean(2)
    x = np.zeros(2)
    np.testing.assert_allclose(R.clip(M, x, np.array([3.0, 4.0]), 1.0), [0.6, 0.8], rtol=1e-15)
    np.testing.assert_array_equal(R.clip(M, x, np.array([3.0, 4.0]), 5.0), [3.0, 4.0])
    np.testing.assert_array_equal(R.clip(M, x, np.array([3.0, 4.0]), 7.0), [3.0, 4.0])
    np.testing.assert_array_equal(R.clip(M, x, np.zeros(2), 1.0), [0.0, 0.0])


@pytest.mark.parametrize("case", [c for c in CASES if type(c.ref).__name__ == "SPD"], ids=lambda c: c.name)
def test_clip_uses_the_affine_invariant_norm_on_spd(case):
    """Closed form: V = X has ||V||_X = ||I||_F = sqrt(n) at EVERY X (not its Frobenius norm), so
    clip_tau(X) = tau/sqrt(n) X; V = t X with t sqrt(n) <= tau is unchanged."""
    M = case.ref
    n = M.n
    for seed in range(3):
        X = M.random_point(np.random.default_rng(seed)) * (10.0 ** (seed - 1))
        np.testing.assert_allclose(R.clip(M, X, X, 1.0), X / math.sqrt(n), rtol=1e-12, atol=0)
        V = 0.9 / math.sqrt(n) * X
        np.testing.assert_array_equal(R.clip(M, X, V, 1.0), V)


@pytest.mark.parametrize("case", [c for c in CASES if type(c.ref).__name__ == "Lorentz"], ids=lambda c: c.name)
def test_clip_uses_the_minkowski_norm_on_lorentz(case):
    """At x = cosh(r) e_0 + sinh(r) e_1 the unit tangent u = sinh(r) e_0 + cosh(r) e_1 has
    Euclidean length sqrt(cosh 2r) but Minkowski norm 1: clip at 0.5 halves it for every r."""
    M = case.ref
    for r in (0.0, 1.0, 3.0):
        x = np.zeros(M.ambient_shape)
        u = np.zeros(M.ambient_shape)
        x[0], x[1] = math.cosh(r), math.sinh(r)
        u[0], u[1] = math.sinh(r), math.cosh(r)
        np.testing.assert_allclose(R.clip(M, x, 3.0 * u, 0.5), 0.5 * u, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("tau", [0.0, -1.0, math.nan, math.inf, None])
def test_bad_tau_raises(tau):
    with pytest.raises(ValueError, match="clip: tau"):
        R.clip(Euclidean(2), np.zeros(2), np.ones(2), tau)


def test_bad_vector_raises():
    with pytest.raises(ValueError, match="clip: v has shape"):
        R.clip(Euclidean(2), np.zeros(2), np.ones(3), 1.0)
    with pytest.raises(ValueError, match="clip: M must be"):
        R.clip(None, np.zeros(2), np.ones(2), 1.0)


def test_a_vector_whose_norm_overflows_is_refused_and_one_just_below_is_clipped():
    """||(1.5e308, 1.5e308)|| = 1.5e308 sqrt 2 = 2.12e308 exceeds the float64 maximum 1.797e308 (by
    hand): tau / ||v|| cannot be formed, and the refusal names clip and the reason. Just below,
    ||(1.2e308, 1.2e308)|| = 1.70e308 is clipped to tau (1, 1) / sqrt 2 (the definition)."""
    with pytest.raises(ValueError, match=r"^clip: \|\|v\|\|_x overflows float64 \(the metric norm of v exceeds 1\.8e308\)"):
        R.clip(Euclidean(2), np.zeros(2), np.array([1.5e308, 1.5e308]), 1.0)
    c = R.clip(Euclidean(2), np.zeros(2), np.array([1.2e308, 1.2e308]), 2.0)
    np.testing.assert_allclose(c, [math.sqrt(2.0), math.sqrt(2.0)], rtol=1e-15)


@pytest.mark.parametrize("geom", ["Euclidean", "Stiefel", "SPD"])
@pytest.mark.parametrize("tau, length", [(1e-170, 1e304), (1e-300, 5e15), (1e-300, 1e10)])
def test_clip_with_a_subnormal_factor_keeps_length_tau_in_both_twins(geom, tau, length):
    """tau / ||v||_x below 2^-1022 (subnormal, or 0 once it underflows): the clipped vector still has
    metric norm tau (relative 1e-14) and the direction of v, in both twins. Found by the thorough
    fuzz run: the product with the factor returned 0 (tau = 1e-170 against ||v|| = 1e304) or lost
    1e-8 relative (Stiefel, factor 2e-316). Known answer: the definition min(1, tau/||v||) v, whose
    length is exactly tau here."""
    from prirfed.reference.manifolds import SPD, Stiefel
    from prirfed.verified import manifolds as VMf
    from prirfed.verified import mechanisms as V

    rng = np.random.default_rng(3)
    R_M, V_M = {"Euclidean": (Euclidean(3), VMf.Euclidean(3)), "Stiefel": (Stiefel(4, 2), VMf.Stiefel(4, 2)),
                "SPD": (SPD(2), VMf.SPD(2))}[geom]
    x = R_M.random_point(rng)
    v = R_M.proj(x, rng.standard_normal(np.shape(x)))
    v = v * (length / R_M.norm(x, v))
    assert tau / R_M.norm(x, v) < 2.0**-1022
    for mod, M in ((R, R_M), (V, V_M)):
        c = mod.clip(M, x, v, tau)
        assert math.isclose(R_M.norm(x, c), tau, rel_tol=1e-14), (mod.__name__, R_M.norm(x, c))
        assert math.isclose(R_M.inner(x, c, v) / (tau * R_M.norm(x, v)), 1.0, rel_tol=1e-12)


def test_clip_threshold_floor_is_two_to_the_minus_1000_in_both_twins():
    """The documented floor of tau (proofs_notes/mechanism_clipping.md): tau = 2^-1000 is accepted
    and clips to length 2^-1000 (to two roundings); 0.75 * 2^-1000 (a normal float, above 2^-1001) is refused in both
    twins with a message naming the floor. Known answer: clip of (3, 4) to tau is tau (0.6, 0.8)."""
    from prirfed.verified import manifolds as VMf
    from prirfed.verified import mechanisms as V

    floor = math.ldexp(1.0, -1000)
    v = np.array([3.0, 4.0])
    for mod, M in ((R, Euclidean(2)), (V, VMf.Euclidean(2))):
        c = mod.clip(M, np.zeros(2), v, floor)
        np.testing.assert_allclose(c, np.array([0.6, 0.8]) * floor, rtol=4.5e-16, atol=0.0)  # two roundings
        with pytest.raises(ValueError, match="below 2\\^-1000"):
            mod.clip(M, np.zeros(2), v, 0.75 * floor)


def test_clip_of_a_zero_vector_is_a_new_zero_vector_in_both_twins():
    """clip(0) = 0 for every finite tau > 0 (min(1, tau / 0) is not formed): both twins return a new zero array
    of the input's shape, not None and not the input itself (the verified kernel's zero branch
    returning None survived a sampled mutation run, seed 52: no test clipped a zero vector)."""
    from prirfed.reference.manifolds import Sphere
    from prirfed.verified import mechanisms as V

    M = Sphere(3)
    x = np.array([0.0, 0.0, 0.0, 1.0])
    v = np.zeros(4)
    for clip in (R.clip, V.clip):
        for tau in (1e-3, 1.0, 1e300):
            out = clip(M, x, v, tau)
            assert isinstance(out, np.ndarray) and out.shape == (4,) and not np.any(out)
            assert out is not v
