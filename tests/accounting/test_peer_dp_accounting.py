"""Peer check against Google's dp-accounting (a test-only dependency no one here wrote).

Convention compared (dp-accounting issue #378): dp-accounting's RDP accountant reads the noise
multiplier of a ``GaussianDpEvent`` as sigma / (sensitivity under the accountant's relation),
which is our ``Gaussian(z)`` convention: under REPLACE_ONE both give ``alpha / (2 z^2)``. Its PLD
accountant under REPLACE_ONE instead assumes the replace-one sensitivity is 2 (twice the
add/remove one): its eps for ``GaussianDpEvent(z)`` is the exact Gaussian eps at shift
``mu = 2 / z`` (shown below), a factor 2 apart from its own RDP accountant. We compare with
the RDP accountant only.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

dpa = pytest.importorskip("dp_accounting")  # declared in the test extra; must be installed in CI
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as R  # noqa: E402

from prirfed.reference.accounting import rdp  # noqa: E402
from prirfed.reference.accounting.events import ADD_REMOVE, Gaussian, PoissonSampled, SampledWithoutReplacement, SelfComposed  # noqa: E402
from prirfed.reference.accounting import mp as mpx  # noqa: E402

ORD = rdp.DEFAULT_ORDERS
INT_ORD = np.arange(2, 257, dtype=float)


@pytest.mark.parametrize("z", [0.5, 1.0, 3.0, 11.3])
def test_gaussian_rdp_and_epsilon_agree(z):
    assert np.allclose(R._compute_rdp_poisson_subsampled_gaussian(1.0, z, ORD), rdp.gaussian_rdp(ORD, z), rtol=1e-13, atol=0)
    peer = R.RdpAccountant(list(ORD), dpa.NeighboringRelation.REPLACE_ONE)
    peer.compose(dpa.GaussianDpEvent(z), 7)
    ours = rdp.RdpAccountant(ORD).compose(SelfComposed(Gaussian(z), 7))
    assert ours.get_epsilon(1e-5) == pytest.approx(peer.get_epsilon(1e-5), rel=1e-9, abs=0)
    # the adaptive grid (extended, then searched around its local minima) can only do better
    assert rdp.RdpAccountant().compose(SelfComposed(Gaussian(z), 7)).get_epsilon(1e-5) <= peer.get_epsilon(1e-5) * (1 + 1e-12)


@pytest.mark.parametrize("q,z", [(0.01, 1.1), (0.1, 0.8), (0.003, 3.0), (0.5, 2.0)])
def test_poisson_subsampled_gaussian_agrees_at_integer_orders_and_is_not_larger_at_fractional(q, z):
    peer_int = R._compute_rdp_poisson_subsampled_gaussian(q, z, INT_ORD[:62])
    assert np.allclose(rdp.poisson_gaussian_rdp(INT_ORD[:62], q, z), peer_int, rtol=1e-9, atol=0)
    frac = np.array([1.5, 2.5, 3.5, 7.25])
    ours = rdp.poisson_gaussian_rdp(frac, q, z)
    peer = R._compute_rdp_poisson_subsampled_gaussian(q, z, frac)
    assert np.all(ours <= peer * (1 + 1e-9))
    # ours is the exact value (50-digit quadrature); dp-accounting's fractional orders can be above it
    assert ours[0] == pytest.approx(float(mpx.poisson_gaussian_log_a_quad(1.5, q, z)) / 0.5, rel=1e-8, abs=0)


def test_poisson_epsilon_agrees_within_the_fractional_order_slack():
    peer = R.RdpAccountant(list(INT_ORD[:62]), dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    peer.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000)
    ours = rdp.RdpAccountant(INT_ORD[:62], relation=ADD_REMOVE).compose(PoissonSampled(0.01, Gaussian(1.1, ADD_REMOVE)), 1000)
    assert ours.get_epsilon(1e-5) == pytest.approx(peer.get_epsilon(1e-5), rel=1e-9, abs=0)


@pytest.mark.parametrize("n,m,z", [(1000, 10, 1.1), (600, 60, 0.8), (100, 50, 2.0), (250, 1, 0.5)])
def test_without_replacement_theorem9_is_never_below_the_peers_strengthened_bound(n, m, z):
    """dp-accounting implements WBK19's strengthened Gaussian bound (their Thm 27, arXiv v4); ours is the
    general Thm 9: equal at alpha = 2 (same j = 2 term), >= elsewhere."""
    q = m / n
    ints = np.array(list(range(2, 33)) + [48, 64])  # the peer is O(alpha^2) per order in pure Python
    eps_int = np.zeros(65)
    eps_int[2:] = rdp.gaussian_rdp(np.arange(2, 65, dtype=float), z)
    ours = rdp.wbk19_theorem9_log_a(ints, q, eps_int) / (ints - 1)
    peer = R._compute_rdp_sample_wor_gaussian(q, z, ints.astype(float))
    assert ours[0] == pytest.approx(peer[0], rel=1e-12, abs=0)
    assert np.all(ours >= peer * (1 - 1e-12))


def test_pld_replace_one_uses_twice_the_sensitivity_issue_378():
    """Documents the convention split: PLD REPLACE_ONE eps for z equals the exact Gaussian eps at mu = 2/z."""
    z, delta = 3.0, 1e-5
    pld = pld_privacy_accountant.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4)
    pld.compose(dpa.GaussianDpEvent(z))

    def exact(mu):
        f = lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta  # noqa: E731
        lo, hi = 0.0, 50.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if f(mid) <= 0 else (mid, hi)
        return hi

    assert pld.get_epsilon(delta) == pytest.approx(exact(2 / z), rel=1e-4, abs=0)
    assert abs(pld.get_epsilon(delta) - exact(1 / z)) > 1.0  # not the RDP accountant's convention
    ours = rdp.RdpAccountant().compose(Gaussian(z)).get_epsilon(delta)
    assert ours >= exact(1 / z)


@pytest.mark.parametrize("q,z", [(0.1, 0.8), (0.01, 1.1), (0.5, 2.0), (0.004, 0.5), (0.1, 5.0), (0.06, 0.3)])
def test_wbk19_gaussian_bound_equals_the_peer(q, z):
    """WBK19's Gaussian-specific bound (their Thm 27) against dp-accounting's implementation of it,
    pinned both ways at every integer order 2..256 where the peer's forward differences are well
    conditioned."""
    ints = np.arange(2, 257)
    ours = rdp.wbk19_gaussian_log_a(ints, q, z) / (ints - 1)
    peer = R._compute_rdp_sample_wor_gaussian(q, z, ints.astype(float))
    assert np.allclose(ours, peer, rtol=1e-8, atol=0)


def test_the_peers_gaussian_bound_loses_digits_at_large_noise_ours_does_not():
    """q = 0.1, z = 30: the peer's forward differences cancel catastrophically at high orders (its
    alpha = 256 value is 0.0297); the formula evaluated with 400 digits gives 0.004988, which ours
    reproduces. The peer errs on the safe side (above), so this is a precision finding, not a soundness one."""
    q, z = 0.1, 30.0
    ours = rdp.wbk19_gaussian_log_a([20, 256], q, z) / np.array([19, 255])
    peer = R._compute_rdp_sample_wor_gaussian(q, z, [20.0, 256.0])
    assert ours[0] == pytest.approx(peer[0], rel=1e-9, abs=0)
    want = float(mpx.wbk19_gaussian_specific_log_a(256, q, z, dps=400)) / 255
    assert want <= ours[1] <= want * (1 + 1e-9)
    assert peer[1] > 5 * ours[1]


@pytest.mark.parametrize("rho,T,delta_prime", [(0.05, 2000, 1e-2), (0.3, 500, 2e-2), (1.0, 300, 5e-2)])
def test_exact_blackbox_composition_agrees_with_the_peer_pld(rho, T, delta_prime):
    """blackbox_exact_epsilon (O(T) binomial form) against dp-accounting's PLD of the same activated
    Kairouz-Oh-Viswanath pair: its (eps, delta) PLD mixed with the identity at weight rho, composed
    T times by FFT. The peer rounds the loss 0.15 up to its grid (0.1501, as 0.15/1e-4 is a hair above
    1500 in floating point), so it is slightly above the exact value: pinned both ways, within 0.3%."""
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    one = pld.from_privacy_parameters(DifferentialPrivacyParameters(0.15, 1e-4), value_discretization_interval=1e-4)
    if rho < 1:
        one = one.compute_mixture(pld.identity(value_discretization_interval=1e-4), rho)
    peer = one.self_compose(T).get_epsilon_for_delta(delta_prime)
    from prirfed.reference.accounting.prirfed_accountant import blackbox_exact_epsilon

    ours = blackbox_exact_epsilon(0.15, 1e-4, rho, T, delta_prime)
    assert peer * (1 - 3e-3) <= ours <= peer
