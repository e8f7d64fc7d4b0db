"""prirfed.verified.mechanisms equals prirfed.reference.mechanisms draw for draw.

Both twins consume the caller's Generator in the documented order; fed Generators in the same
state they return the same samples (rtol 1e-12 relative to the sample's scale) on every
manifold that has a verified twin.
"""

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from mech_cases import VERIFIED_CASES
from prirfed.reference import mechanisms as R
from prirfed.reference.manifolds import Euclidean
from prirfed.verified import mechanisms as V

seeds = st.integers(0, 2**32 - 1)
sigmas = st.floats(0.05, 5.0)
ids = [c.name for c in VERIFIED_CASES]
SPD_V = [c for c in VERIFIED_CASES if type(c.ref).__name__ == "SPD"]


def same(a, b, what, rtol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    scale = max(1.0, float(np.max(np.abs(a))) if a.size else 0.0)
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    assert err <= rtol * scale, f"{what}: max|diff| = {err:.3e} > {rtol:.0e} * {scale:.3e}"


@pytest.mark.parametrize("case", VERIFIED_CASES, ids=ids)
@given(seed=seeds, sigma=sigmas, n=st.integers(1, 5))
def test_sampler_and_mechanism_equal_reference_draw_for_draw(case, seed, sigma, n):
    """Single draw, batched draws, with a mean, and the mechanism: verified (on the verified
    manifold, basis from its tangent_basis_kernel) == reference (on the reference manifold);
    both Generators end in the same state."""
    Mr, Mv = case.ref, case.ver
    x = Mr.random_point(np.random.default_rng(seed))
    mu = Mr.random_tangent(x, np.random.default_rng(seed + 1))
    r1, r2 = np.random.default_rng(seed + 2), np.random.default_rng(seed + 2)
    same(R.sample_tangent_gaussian(Mr, x, sigma, r1), V.sample_tangent_gaussian(Mv, x, sigma, r2), "single")
    same(R.sample_tangent_gaussian(Mr, x, sigma, r1, mu=mu, size=n),
         V.sample_tangent_gaussian(Mv, x, sigma, r2, mu=mu, size=n), "batch with mu")
    same(R.tangent_gaussian_mechanism(Mr, x, mu, sigma, r1), V.tangent_gaussian_mechanism(Mv, x, mu, sigma, r2), "mechanism")
    assert r1.random() == r2.random()


@pytest.mark.parametrize("case", SPD_V, ids=[c.name for c in SPD_V])
@given(seed=seeds, sigma=sigmas)
def test_spd_closed_form_equals_reference(case, seed, sigma):
    Mr, Mv = case.ref, case.ver
    X = Mr.random_point(np.random.default_rng(seed))
    r1, r2 = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    same(R.sample_tangent_gaussian_spd(Mr, X, sigma, r1), V.sample_tangent_gaussian_spd(Mv, X, sigma, r2), "spd")
    assert r1.random() == r2.random()
    # with a mean: the same draw shifted by mu in both twins (the mean is added, not subtracted)
    mu = Mr.random_tangent(X, np.random.default_rng(seed + 2))
    state = r1.bit_generator.state
    centred = V.sample_tangent_gaussian_spd(Mv, X, sigma, r2)
    r2.bit_generator.state = state
    shifted = V.sample_tangent_gaussian_spd(Mv, X, sigma, r2, mu=mu)
    same(shifted, centred + mu, "verified spd with mu = the centred draw + mu")
    same(R.sample_tangent_gaussian_spd(Mr, X, sigma, r1, mu=mu), shifted, "spd with mu")


def _mh_params():
    out = [pytest.param(c, False, id=f"{c.name}") for c in VERIFIED_CASES]
    out += [pytest.param(c, True, id=f"{c.name}-paper-chart") for c in SPD_V]
    return out


@pytest.mark.parametrize("case,paper", _mh_params())
@given(seed=seeds, sigma=sigmas, steps=st.integers(1, 40))
def test_mh_equals_reference_draw_for_draw(case, paper, seed, sigma, steps):
    """The MH chains (all states and the acceptance rate) coincide: same proposals, same
    uniforms, same accept decisions."""
    Mr, Mv = case.ref, case.ver
    x = Mr.random_point(np.random.default_rng(seed))
    F = R.symmetric_matrix_chart(Mr.n) if paper else None
    xi0 = Mr.random_tangent(x, np.random.default_rng(seed + 1))
    r1, r2 = np.random.default_rng(seed + 2), np.random.default_rng(seed + 2)
    a, pa = R.sample_tangent_gaussian_mh(Mr, x, sigma, r1, steps, chart=F, xi0=xi0, return_acceptance=True, return_chain=True)
    b, pb = V.sample_tangent_gaussian_mh(Mv, x, sigma, r2, steps, chart=F, xi0=xi0, return_acceptance=True, return_chain=True)
    same(a, b, "chain", rtol=1e-10)
    assert pa == pb
    same(R.sample_tangent_gaussian_mh(Mr, x, sigma, r1, steps), V.sample_tangent_gaussian_mh(Mv, x, sigma, r2, steps), "last state", rtol=1e-10)


@pytest.mark.parametrize("case", VERIFIED_CASES, ids=ids)
@given(seed=seeds, tau=st.floats(1e-3, 10.0), scale=st.floats(1e-3, 30.0))
def test_clip_equals_reference(case, seed, tau, scale):
    """clip (metric norm from the verified manifold's kernel) == reference; exact identity in the ball."""
    Mr, Mv = case.ref, case.ver
    rng = np.random.default_rng(seed)
    x = Mr.random_point(rng)
    v = scale * Mr.random_tangent(x, rng)
    a = R.clip(Mr, x, v, tau)
    # the verified clip hands an input to the reference only when its kernel refuses (an overflow):
    # on these finite inputs it must answer itself, or a kernel that always refused would pass here
    with mock.patch.object(V._ref, "clip", side_effect=AssertionError("verified clip fell back to the reference")):
        b = V.clip(Mv, x, v, tau)
    same(a, b, "clip")
    if Mr.norm(x, v) < tau * (1 - 1e-12):
        np.testing.assert_array_equal(b, v)


def test_wrappers_fall_back_to_the_manifold_methods():
    """A reference manifold (no kernels in its module) works with the verified wrappers too."""
    M = Euclidean(4)
    x = np.zeros(4)
    same(R.sample_tangent_gaussian(M, x, 0.5, np.random.default_rng(3)), V.sample_tangent_gaussian(M, x, 0.5, np.random.default_rng(3)), "fallback")
    same(R.clip(M, x, np.ones(4), 1.0), V.clip(M, x, np.ones(4), 1.0), "fallback clip")


@njit(cache=True)
def _fused(rng, basis_kernel_output, sigma, n):
    """What a fused trainer does: repeated draws from the kernel inside njit code."""
    out = np.zeros(basis_kernel_output.shape[1:])
    for _ in range(n):
        out = out + V.sample_tangent_gaussian_kernel(rng, basis_kernel_output, sigma)
    return out


@pytest.mark.parametrize("case", [c for c in VERIFIED_CASES if hasattr(c.ver_module, "tangent_basis_kernel")][:1],
                         ids=lambda c: c.name)
def test_kernels_are_callable_from_njit_code(case):
    """sample_tangent_gaussian_kernel called inside another njit function, with the basis from
    the manifold's tangent_basis_kernel, consumes the stream like n reference calls."""
    Mr = case.ref
    x = Mr.random_point(np.random.default_rng(0))
    E = case.ver_module.tangent_basis_kernel(np.ascontiguousarray(x))
    got = _fused(np.random.default_rng(9), E, 0.3, 4)
    r = np.random.default_rng(9)
    want = sum(R.sample_tangent_gaussian(Mr, x, 0.3, r) for _ in range(4))
    same(got, want, "fused")


@pytest.mark.parametrize("sigma", [0.0, -1.0, math.nan])
def test_verified_bad_input(sigma):
    M = Euclidean(2)
    x = np.zeros(2)
    with pytest.raises(ValueError, match="sample_tangent_gaussian: sigma"):
        V.sample_tangent_gaussian(M, x, sigma, np.random.default_rng(0))
    with pytest.raises(ValueError, match="clip: tau"):
        V.clip(M, x, np.ones(2), sigma)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        V.sample_tangent_gaussian(M, x, 1.0, None)
    with pytest.raises(ValueError, match="SPD"):
        V.sample_tangent_gaussian_spd(M, x, 1.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_steps"):
        V.sample_tangent_gaussian_mh(M, x, 1.0, np.random.default_rng(0), -3)


@pytest.mark.parametrize("twin", [R, V], ids=["reference", "verified"])
def test_both_twins_refuse_a_chart_that_is_not_a_basis_at_the_same_threshold(twin):
    """The Metropolis-Hastings samplers refuse a chart whose Gram matrix G has smallest eigenvalue
    <= 1e-12 tr G. For F = [[1, 0], [1, h]] on R^2, G = [[1, 1], [1, 1 + h^2]], det G = h^2 and the
    smallest eigenvalue is 2 det / (tr + sqrt(tr^2 - 4 det)) (by hand): h^2 = 2.8e-12 puts it at about
    0.7e-12 tr G (refused), h^2 = 6e-12 at 1.5e-12 tr G (taken). A chart of two equal rows (eigenvalues 0
    and tr G) is refused by each twin: a test of the largest eigenvalue would take it."""
    M = Euclidean(2)
    call = lambda F: twin.sample_tangent_gaussian_mh(M, np.zeros(2), 1.0, np.random.default_rng(0), 3, chart=F)  # noqa: E731
    for F in (np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [1.0, math.sqrt(2.8e-12)]])):
        with pytest.raises(ValueError, match=r"^sample_tangent_gaussian_mh: chart is not a basis of T_x"):
            call(F)
    assert call(np.array([[1.0, 0.0], [1.0, math.sqrt(6e-12)]])).shape == (2,)


@njit
def _clip_factor(norm_v, tau):
    return V.clip_factor_kernel(norm_v, tau)


@pytest.mark.parametrize("norm_v,tau,want", [
    (2.0, 1.0, 0.5),            # clipped: tau / ||v||
    (8.0, 0.25, 1.0 / 32.0),
    (0.5, 1.0, 1.0),            # inside the ball: unchanged
    (0.8, 1.0, 1.0),            # inside, never scaled up (tau / ||v|| = 1.25)
    (1.0, 1.0, 1.0),            # on the sphere: tau / ||v|| = 1
    (0.0, 1.0, 1.0),            # a zero gradient
    (3.0, math.inf, 1.0),       # no clipping
])
def test_clip_factor_kernel_by_hand(norm_v, tau, want):
    """The factor min{1, tau / ||v||} the SPD and Lorentz fused loops scale by (Huang et al. 2024,
    Algorithm 2, line 4), at hand-computed points: a factor that never clipped passed every
    mechanism test, since only the fused loops call it."""
    assert _clip_factor(norm_v, tau) == want
