"""HSP on the Lorentz model in the verified twins (prirfed.verified.problems.hsp and the fused loops).

Oracles: the reference problem prirfed.reference.problems.hsp (tested against 000 section 6.3 and
finite differences in tests/problems/test_hsp.py), a closed form of Log on H^d, and the reference
trainers. Same data, settings and seed: gradients agree entrywise, and the fused PriRFed, DP-RGD,
RGD and RFedSVRG runs agree iterate by iterate, with equal final Generator states.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prirfed.reference.manifolds import Lorentz
from prirfed.reference.problems.hsp import HyperbolicStructuredPrediction as RefHSP
from prirfed.reference.trainers.prirfed import prirfed as ref_prirfed
from prirfed.reference.trainers.rfed import rfedsvrg as ref_rfedsvrg
from prirfed.reference.trainers.rgd import dp_rgd as ref_dp_rgd
from prirfed.reference.trainers.rgd import rgd as ref_rgd
from prirfed.verified.manifolds.lorentz import tangent_basis_kernel
from prirfed.verified.problems.hsp import HyperbolicStructuredPrediction, hsp_rgrad_kernel
from prirfed.verified.trainers.prirfed import prirfed
from prirfed.verified.trainers.rfed import rfedsvrg
from prirfed.verified.trainers.rgd import dp_rgd, rgd
from verified_cases import assert_same_generator, assert_same_history


def make_problems(seed, wide=False):
    """(reference, verified, x0). ``wide``: features near 0 and a wide kernel, so that every
    alpha_ij is close to 1/(N_i + gamma) > 0 and the optimum (used by the history) exists."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 4))
    r = int(rng.integers(1, 3))
    M = Lorentz(d)
    sizes = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]
    W = [(0.1 if wide else 1.0) * rng.standard_normal((n, r)) for n in sizes]
    Y = [np.stack([M.exp(M.origin(), M.proj(M.origin(), np.concatenate([[0.0], rng.standard_normal(d)])))
                   for _ in range(n)]) for n in sizes]
    w = (0.1 if wide else 1.0) * rng.standard_normal(r)
    args = (W, Y, w, float(rng.uniform(0.1, 1.0)), 10.0 if wide else float(rng.uniform(0.5, 2.0)))
    x0 = M.exp(M.origin(), M.proj(M.origin(), np.concatenate([[0.0], 0.5 * rng.standard_normal(d)])))
    return RefHSP(*args), HyperbolicStructuredPrediction(*args), x0


@given(seed=st.integers(0, 2**32 - 1))
def test_hsp_gradients_equal_reference(seed):
    """rgrad_ij, rgrad_batch, rgrad_i, rgrad of the verified class equal the reference's to
    1e-12 (1 + |alpha| dist) entrywise (the size of each term times a few ulps)."""
    P_ref, P_ver, x = make_problems(seed)
    M = P_ref.manifold
    for i in range(P_ref.N):
        for j in range(P_ref.N_i[i]):
            tol = 1e-12 * (1.0 + abs(P_ref.alpha[i][j]) * (1.0 + M.dist(x, P_ref.Y[i][j]))) * max(1.0, np.max(np.abs(x)))
            np.testing.assert_allclose(P_ver.rgrad_ij(x, i, j), P_ref.rgrad_ij(x, i, j), rtol=1e-12, atol=tol)
        J = np.arange(P_ref.N_i[i])[::-1]
        scale = max(1.0, P_ref.alpha_max) * max(1.0, *(M.dist(x, y) for y in P_ref.Y[i])) * max(1.0, np.max(np.abs(x)))
        np.testing.assert_allclose(P_ver.rgrad_batch(x, i, J), P_ref.rgrad_batch(x, i, J), rtol=1e-12, atol=1e-12 * scale)
        np.testing.assert_allclose(P_ver.rgrad_i(x, i), P_ref.rgrad_i(x, i), rtol=1e-11, atol=1e-11 * scale)
    np.testing.assert_allclose(P_ver.rgrad(x), P_ref.rgrad(x), rtol=1e-11, atol=1e-11 * P_ref.alpha_max * 10)


def test_hsp_gradient_closed_form_at_the_origin():
    """x = o = (1, 0, 0), y = (cosh t, sinh t, 0): Log_o(y) = (0, t, 0), so grad f = -2 a (0, t, 0)."""
    t, a = 0.7, 0.3
    g = hsp_rgrad_kernel(np.array([1.0, 0.0, 0.0]), np.array([math.cosh(t), math.sinh(t), 0.0]), a)
    np.testing.assert_allclose(g, [0.0, -2.0 * a * t, 0.0], rtol=1e-14, atol=1e-15)


def test_lorentz_tangent_bases_agree_so_noise_draws_agree():
    """The fused loops draw the noise through the verified basis: it equals the reference basis."""
    rng = np.random.default_rng(0)
    M = Lorentz(3)
    for _ in range(5):
        x = M.random_point(rng)
        np.testing.assert_allclose(tangent_basis_kernel(x), M.tangent_basis(x), rtol=1e-13, atol=1e-13 * np.max(np.abs(x)))


def assert_same(a, b, r_ref, r_ver, scale):
    assert_same_history(a, b, scale)
    assert a.event == b.event
    if r_ref is not None:
        assert_same_generator(r_ref, r_ver)


def prirfed_twins(P_ref, P_ver, x0, seed, scale, settings):
    """Reference and verified PriRFed (3 rounds, every agent, alpha = 0.2) agree for each settings dict."""
    for kw in settings:
        r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
        a = ref_prirfed(P_ref, x0, 3, P_ref.N, 0.2, r_ref, keep_iterates=True, **kw)
        b = prirfed(P_ver, x0, 3, P_ver.N, 0.2, r_ver, keep_iterates=True, **kw)
        assert_same(a, b, r_ref, r_ver, scale)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fused_trainers_on_hsp_equal_reference(seed):
    """PriRFed (DP-RSGD and DP-RSVRG, clipped, noisy), DP-RGD (output 3), RGD and RFedSVRG on HSP."""
    P_ref, P_ver, x0 = make_problems(seed, wide=True)
    scale = max(1.0, float(np.max(np.abs(x0))), *(float(np.max(np.abs(y))) for y in P_ref.Y))
    N = P_ref.N
    prirfed_twins(P_ref, P_ver, x0, seed, scale, (dict(local="dp_rsgd", K=2, sigma=0.1, tau=0.5, option=2),
                                                   dict(local="dp_rsvrg", K=1, m=2, sigma=0.05, tau0=1.0, tau1=0.5)))
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    n = sum(P_ref.sizes)
    a = ref_dp_rgd(P_ref, x0, 0.2, 3, max(1, n - 1), 0.1, r_ref, output=3, tau=1.0, keep_iterates=True)
    b = dp_rgd(P_ver, x0, 0.2, 3, max(1, n - 1), 0.1, r_ver, output=3, tau=1.0, keep_iterates=True)
    assert_same(a, b, r_ref, r_ver, scale)
    a = ref_rgd(P_ref, x0, 0.3, 4, keep_iterates=True)
    b = rgd(P_ver, x0, 0.3, 4, keep_iterates=True)
    assert_same(a, b, None, None, scale)
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    a = ref_rfedsvrg(P_ref, x0, 3, N, 0.2, 2, r_ref, option=2, keep_iterates=True)
    b = rfedsvrg(P_ver, x0, 3, N, 0.2, 2, r_ver, option=2, keep_iterates=True)
    assert_same(a, b, r_ref, r_ver, scale)


@pytest.mark.parametrize("seed", [1, 2])
def test_fused_trainers_on_hsp_with_every_gradient_clipped_equal_reference(seed):
    """The same twins with thresholds far below every per-sample gradient norm at x0 (checked), so that
    the Lorentz loop's clipping acts on every sample: PriRFed with DP-RSGD (tau) and DP-RSVRG (tau0,
    tau1), and DP-RGD. With the thresholds of the test above no HSP gradient reached them, and a fused
    Lorentz step that skipped clipping altogether passed every twin test."""
    P_ref, P_ver, x0 = make_problems(seed, wide=True)
    scale = max(1.0, float(np.max(np.abs(x0))), *(float(np.max(np.abs(y))) for y in P_ref.Y))
    M = P_ref.manifold
    norms = [M.norm(x0, P_ref.rgrad_ij(x0, i, j)) for i in range(P_ref.N) for j in range(P_ref.sizes[i])]
    tau = 0.01 * min(norms)
    assert tau > 0
    prirfed_twins(P_ref, P_ver, x0, seed, scale, (dict(local="dp_rsgd", K=2, sigma=0.1 * tau, tau=tau),
                                                   dict(local="dp_rsvrg", K=1, m=2, sigma=0.1 * tau, tau0=tau, tau1=tau)))
    r_ref, r_ver = np.random.default_rng(seed), np.random.default_rng(seed)
    n = sum(P_ref.sizes)
    a = ref_dp_rgd(P_ref, x0, 0.2, 3, max(1, n - 1), 0.1 * tau, r_ref, output=3, tau=tau, keep_iterates=True)
    b = dp_rgd(P_ver, x0, 0.2, 3, max(1, n - 1), 0.1 * tau, r_ver, output=3, tau=tau, keep_iterates=True)
    assert_same(a, b, r_ref, r_ver, scale)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fused_prirfed_started_far_from_the_data_equals_reference(seed):
    """PriRFed with DP-RSGD and DP-RSVRG started at distance 20 from the origin (x_0 = 2.4e8), far from
    every y_ij: the twins agree as above. DP-RSVRG transports its correction each step; with the
    transport's former <y, v>_L, which cancelled terms of size x_0^2 ||v|| (proofs note
    manifold_lorentz, section 9), the two twins' iterates differed by 4-9% after three rounds."""
    P_ref, P_ver, _ = make_problems(seed, wide=True)
    M = P_ref.manifold
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(M.dim)
    x0 = M.exp(M.origin(), np.concatenate([[0.0], 20.0 * u / np.linalg.norm(u)]))
    scale = max(1.0, float(np.max(np.abs(x0))), *(float(np.max(np.abs(y))) for y in P_ref.Y))
    prirfed_twins(P_ref, P_ver, x0, seed, scale, (dict(local="dp_rsgd", K=2, sigma=0.1, tau=0.5, option=2),
                                                   dict(local="dp_rsvrg", K=1, m=2, sigma=0.05, tau0=1.0, tau1=0.5)))
