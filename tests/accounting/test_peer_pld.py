"""Whole-run epsilons against an independent PLD (dp-accounting, a test-only dependency no one here
wrote), and known answers from peers' own test files, pinned in both directions.

The peer is driven as a careful user would (issue 13): PLDs built from explicit Gaussian
mechanisms with an explicit sensitivity of 1 and standard deviation z (so dp-accounting's
REPLACE_ONE sensitivity convention, its issue #378, plays no role), mixtures with the identity for
activation/coupling, its own FFT composition, pessimistic (upper) and optimistic (lower) rounding.
For every run type: prirfed's upper bound is never below an attainable lower bound (the peer's
optimistic PLD of a pair a real trainer produces) and within 1.02x of a valid independent upper
bound; the attainable lower bound of prirfed is never above the peer's pessimistic value of the
same attained pair.
"""

import math

import numpy as np
import pytest

dpa = pytest.importorskip("dp_accounting")  # declared in the test extra
from dp_accounting.rdp import rdp_privacy_accountant as R  # noqa: E402

from prirfed.reference.accounting import calibration as cal  # noqa: E402
from prirfed.testing import peer_pld as peer  # noqa: E402
from prirfed.reference.accounting import pld, rdp  # noqa: E402
from prirfed.reference.accounting import prirfed_accountant as pa  # noqa: E402
from prirfed.reference.accounting.accountants import privacy_report  # noqa: E402
from prirfed.reference.accounting.events import ADD_REMOVE, Gaussian, MixtureOfGaussians, PoissonSampled, SampledWithoutReplacement, SelfComposed  # noqa: E402

H = 1e-4
DELTA = 1e-5


def gauss(z, pess=True, h=H, q=1.0):
    return peer.gaussian(z, pessimistic=pess, h=h, q=q)


def activate(p, rho, pess=True, h=H):
    return peer.activate(p, rho, pessimistic=pess, h=h)


def stitched(z, q, h=H):
    """Our without-replacement pair from the peer's own remove PMF (prirfed.testing.peer_pld)."""
    return peer.stitched_without_replacement(z, q, h=h)


def ours(ev):
    a = pld.PldAccountant().compose(ev)
    return a.get_epsilon(DELTA), a.get_epsilon_lower(DELTA)


# ------------------------------------------------------------------------------- run types


@pytest.mark.parametrize("s,T", [(1, 50), (5, 50), (10, 500), (5, 500)])
def test_activated_gaussian_run_against_the_peer(s, T):
    """PriRFed with full-batch DP-RSGD (K = 3, N_i = 600): T rounds of Activation(s/100, Gaussian).
    The pair is attained, so prirfed is exact (binomial mixture): inside the peer's [optimistic,
    pessimistic] bracket, and within 1.01x of the peer's upper bound."""
    sigma = 0.02 if T == 50 else 0.05
    z_round = sigma * 600 / 2 / math.sqrt(3)
    ev = pa.prirfed_event(pa.dp_rsgd_event(sigma, 1.0, 600, 600, 3), 100, s, T)
    up, lo = ours(ev)
    peer_up = activate(gauss(z_round), s / 100).self_compose(T).get_epsilon_for_delta(DELTA)
    peer_lo = activate(gauss(z_round, pess=False), s / 100, pess=False).self_compose(T).get_epsilon_for_delta(DELTA)
    assert peer_lo <= up <= peer_up * 1.01
    assert lo == up  # exact and attained
    rdp_eps = rdp.RdpAccountant().compose(ev).get_epsilon(DELTA)
    assert up <= rdp_eps


@pytest.mark.parametrize("sigma", [0.3, 0.45])
def test_dp_rsgd_without_replacement_run_against_the_peer(sigma):
    """PriRFed N = 100, s = 5, T = 500 with DP-RSGD b = 60 of N_i = 600, K = 3.
    Lower: the peer's optimistic PLD of the Poisson remove/add pair, which DP-RSGD attains (every other
    record's clipped gradient -tau e, the target +tau e vs -tau e): prirfed's upper is above it, and
    prirfed's own lower bound is below the peer's pessimistic value of that pair.
    Upper: the peer's pessimistic PLD of our stitched pair (within 1.02x, both ways), of the coupling
    pair (activation with rho = b/N_i per step) and the WBK19 Gaussian RDP bound (ours at or below both)."""
    z, q, K = sigma * 60 / 2, 0.1, 3
    ev = pa.prirfed_event(pa.dp_rsgd_event(sigma, 1.0, 60, 600, K), 100, 5, 500)
    up, lo = ours(ev)
    attained_lo = activate(gauss(z, pess=False, q=q).self_compose(K), 0.05, pess=False).self_compose(500).get_epsilon_for_delta(DELTA)
    attained_up = activate(gauss(z, q=q).self_compose(K), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
    same_pair = activate(stitched(z, q).self_compose(K), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
    coupling = activate(activate(gauss(z), q).self_compose(K), 0.05).self_compose(500).get_epsilon_for_delta(DELTA)
    peer_rdp = R.RdpAccountant(list(rdp.DEFAULT_ORDERS), dpa.NeighboringRelation.REPLACE_ONE)
    peer_rdp.compose(dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(600, 60, dpa.GaussianDpEvent(z)), K))
    # the peer's RDP accountant has no activation: add it with our (tested) activation formula on its curve
    act = rdp.activation_rdp(rdp.DEFAULT_ORDERS, 0.05, np.asarray(peer_rdp._rdp))
    wbk19 = rdp.rdp_to_dp_improved(rdp.DEFAULT_ORDERS, 500 * act, DELTA)[0]
    assert attained_lo <= up
    assert lo <= attained_up
    assert same_pair / 1.02 <= up <= same_pair * 1.02
    assert up <= coupling and up <= wbk19


def test_dp_rsvrg_run_against_the_peer():
    """PriRFed N = 100, s = 5, T = 50 with DP-RSVRG m = 10, K = 3, N_i = 600, at the sigma the RDP
    accountant calibrates for eps = 1. Lower: DP-RSVRG on linear losses releases only the full-gradient
    Gaussian (shift 2 tau0 / (N_i sigma) per inner step), attained; the peer's optimistic value of it
    is below prirfed's upper. Upper: the peer's pessimistic PLDs of two valid pairs for one inner
    step, the labelled mixture and the split noise (lambda = 0.05): prirfed (the hull of their minimum)
    is at most 1.02x the smaller of the two."""
    sigma = 4.879762263075817
    ev = pa.prirfed_event(pa.dp_rsvrg_event(sigma, 1.0, 1.0, 600, 10, 3), 100, 5, 50)
    up, lo = ours(ev)
    c, d, s_, p = (2 / 600) / sigma, (2 / 600 + 4) / sigma, 4 / sigma, 1 / 600
    h = 2e-4
    g_only = activate(gauss(1 / c, pess=False, h=h).self_compose(30), 0.05, pess=False, h=h).self_compose(50).get_epsilon_for_delta(DELTA)
    g_only_up = activate(gauss(1 / c, h=h).self_compose(30), 0.05, h=h).self_compose(50).get_epsilon_for_delta(DELTA)
    labelled = gauss(1 / c, h=h).compute_mixture(gauss(1 / d, h=h), 1 - p)
    lam = 0.05
    split = gauss(math.sqrt(lam) / c, h=h).compose(stitched(math.sqrt(1 - lam) / s_, p, h=h))
    uppers = [activate(step.self_compose(30), 0.05, h=h).self_compose(50).get_epsilon_for_delta(DELTA) for step in (labelled, split)]
    assert g_only <= up <= 1.02 * min(uppers)
    assert g_only <= lo <= g_only_up  # prirfed's lower bound is the exact value of that pair
    assert up < 0.2 < 0.99 < rdp.RdpAccountant().compose(ev).get_epsilon(DELTA)  # 10x below the RDP bound


def _lower_hull_in_exp_eps(eps, delta):
    """The lower convex envelope of the points (e^eps, delta): a privacy profile is convex in e^eps
    (a supremum of P(S) - e^eps Q(S)), so the envelope of valid bounds is still a valid bound."""
    hull = []
    for pt in zip(np.exp(eps), delta):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (pt[1] - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (pt[0] - hull[-2][0])) <= 0:
            hull.pop()
        hull.append(pt)
    return np.array(hull).T


@pytest.mark.parametrize("c", [0.05, 0.01])
def test_one_dp_rsvrg_step_is_the_hull_of_the_minimum_of_its_bounds_computed_by_the_peer(c):
    """One DP-RSVRG inner step (shift_common c = 0.05 or 0.01, rare p = 0.1, sampled-record shift s = 1,
    rare shift c + s), both directions, where the split bounds win (proofs note
    accounting_pld_dp_rsvrg): the step's curve is the lower convex envelope (in e^eps) of the minimum
    of nine valid bounds, the labelled mixture (1 - p) G(c) + p G(c + s) and, for each split lambda
    of the noise variance, G(c / sqrt(lambda)) composed with the without-replacement pair of
    G(s / sqrt(1 - lambda)) at rate p. Each bound is built in dp-accounting (pessimistic, h = 1e-4),
    the envelope here from their minimum on an eps grid of step 1e-3; prirfed's delta agrees with it to
    1e-4 relative at seven eps (measured: 3e-6). The whole-run test above checks one side only; a
    split with variance 1 + lambda for the sampled part (more noise than there is: unsound) made
    prirfed 40-95% too small here and survived it. The split grid is the proofs note's, written out
    here: at c = 0.01 the smallest fractions decide (0.02 moved to 0.01 or 0.04, or 0.05 to 0.025 or
    0.1, changed delta by 2.5-4.9%), at c = 0.05 the larger ones."""
    s_, p, h = 1.0, 0.1, 1e-4
    grid = np.round(np.arange(0.0, 1.0005, 1e-3), 10)
    bounds = [gauss(1 / c, h=h).compute_mixture(gauss(1 / (c + s_), h=h), 1 - p).get_delta_for_epsilon(grid)]
    for lam in (0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.9):  # the split grid of the proofs note (not read from the code)
        split = gauss(math.sqrt(lam) / c, h=h).compose(stitched(math.sqrt(1 - lam) / s_, p, h=h))
        bounds.append(split.get_delta_for_epsilon(grid))
    hx, hy = _lower_hull_in_exp_eps(grid, np.min(np.array(bounds), axis=0))
    acc = pld.PldAccountant().compose(MixtureOfGaussians(c, c + s_, p, shift_sample=s_))
    for eps in (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5):
        assert acc.get_delta(eps) == pytest.approx(float(np.interp(math.exp(eps), hx, hy)), rel=1e-4, abs=0), eps


def test_every_report_prints_lower_and_upper():
    r = privacy_report(pa.prirfed_event(pa.dp_rsgd_event(0.45, 1.0, 60, 600, 3), 100, 5, 500), DELTA)
    assert 0 < r.lower <= r.upper and r.ratio == pytest.approx(r.upper / r.lower, rel=1e-15, abs=0) and r.accountant == "pld"
    assert "eps in [" in str(r) and "upper/lower" in str(r)


# ------------------------------------------------------------------------------- known answers


def test_dp_accounting_pld_test_values():
    """dp-accounting's pld_privacy_accountant_test.py (add/remove): a Gaussian with noise multiplier
    sqrt(3) composed 3 times has delta(1) = 0.126936 (we are exact: 0.1269367); the Poisson-subsampled
    Gaussian q = 0.2, z = 0.5, 3 times: delta(1) = 0.15594 and eps(0.15594) = 1, at their 1e-3."""
    a = pld.PldAccountant(relation=ADD_REMOVE).compose(Gaussian(math.sqrt(3), ADD_REMOVE), 3)
    assert a.get_delta(1.0) == pytest.approx(0.126936, abs=1e-6)
    assert a.get_epsilon(0.126936) == pytest.approx(1.0, abs=1e-5)
    b = pld.PldAccountant(relation=ADD_REMOVE).compose(PoissonSampled(0.2, Gaussian(0.5, ADD_REMOVE)), 3)
    assert b.get_delta(1.0) == pytest.approx(0.15594, abs=1e-3)
    assert b.get_epsilon(0.15594) == pytest.approx(1.0, abs=1e-3)
    assert b.get_epsilon_lower(0.15594) == pytest.approx(1.0, abs=1e-3)


def test_tensorflow_privacy_rdp_test_values():
    """tensorflow_privacy rdp_accountant_test.py, pinned both ways at their tolerance (1e-5 absolute):
    Poisson q = 0.1, z = 2, 10 steps at order 5: 0.07737; q = 0.01, z = 2.5, 50 steps: [0.00065,
    0.001085, 0.00218075, 0.023846, 167.416307] at orders [1.5, 2.5, 5, 50, 100]; without replacement
    (WBK19's Gaussian bound) q = 0.01, z = 2.5, 50 steps at orders [1.001, 1.5, 2.5, 5, 50, 100]:
    [0.003470, 0.003470, 0.004638, 0.0087633, 0.098474, 167.766388]; constant RDP 1.1 on orders 2..32
    converts to 1.32783806176 at delta = 1e-5; the Gaussian z = 4.530877117 is (1, 1e-6)-DP."""
    AR = ADD_REMOVE
    r = rdp.RdpAccountant([5.0], relation=AR).compose(PoissonSampled(0.1, Gaussian(2, AR)), 10).rdp_curve
    assert r[0] == pytest.approx(0.07737, abs=5e-6)
    r = rdp.RdpAccountant([1.5, 2.5, 5, 50, 100], relation=AR).compose(PoissonSampled(0.01, Gaussian(2.5, AR)), 50).rdp_curve
    assert np.allclose(r, [0.00065, 0.001085, 0.00218075, 0.023846, 167.416307], rtol=0, atol=1e-5)
    r = rdp.RdpAccountant([1.001, 1.5, 2.5, 5, 50, 100]).compose(SampledWithoutReplacement(10_000, 100, Gaussian(2.5)), 50).rdp_curve
    assert np.allclose(r, [0.003470, 0.003470, 0.004638, 0.0087633, 0.098474, 167.766388], rtol=0, atol=1e-5)
    eps, order = rdp.rdp_to_dp_improved(list(range(2, 33)), [1.1] * 31, 1e-5)
    assert eps == pytest.approx(1.32783806176, abs=1e-9) and order == 32
    orders = [0.001 * i for i in range(1001, 100000)]
    assert rdp.RdpAccountant(orders).compose(Gaussian(4.530877117)).get_epsilon(1e-6) == pytest.approx(1.0, abs=1e-7)


def test_tensorflow_privacy_wbk19_value_at_order_256_differs_from_the_formula():
    """Their test pins 792.838516 at alpha = 256; the formula (400 digits) and dp-accounting both give
    792.9744: an older implementation detail of the peer, noted rather than matched."""
    r = rdp.RdpAccountant([256.0]).compose(SampledWithoutReplacement(10_000, 100, Gaussian(2.5)), 50).rdp_curve[0]
    peer = 50 * R._compute_rdp_sample_wor_gaussian(0.01, 2.5, [256.0])[0]
    assert r == pytest.approx(peer, rel=1e-10, abs=0) and r == pytest.approx(792.9744, abs=1e-3)
    assert abs(r - 792.838516) > 0.1


def test_opacus_test_values():
    """Opacus tests/accountants_test.py (Poisson, add/remove, z = 1.5, q = 0.04, 2250 steps, delta 1e-5):
    RDP on their orders 7.32911117143 (equal to 1e-9); PRV 6.777395712150674, an upper bound that our
    PLD upper bound does not exceed and stays within 0.3% of; noise multipliers for eps = 8 over 2250
    steps: 1.416 (RDP) and 1.34765625 (PRV), over 2000 steps: 1.3562 (RDP) and 1.2915 (PRV), which our
    calibrations (finer orders; the PLD) meet or beat by at most 1%."""
    AR = ADD_REMOVE
    ev = PoissonSampled(0.04, Gaussian(1.5, AR))
    opacus_orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    assert rdp.RdpAccountant(opacus_orders, relation=AR).compose(ev, 2250).get_epsilon(1e-5) == pytest.approx(7.32911117143, rel=1e-9, abs=0)
    up = pld.PldAccountant(relation=AR).compose(ev, 2250).get_epsilon(1e-5)
    assert 6.777395712150674 * (1 - 3e-3) <= up <= 6.777395712150674
    for steps, want_rdp, want_prv in [(2250, 1.416, 1.34765625), (2000, 1.3562, 1.2915)]:
        f_rdp = lambda z: rdp.RdpAccountant(relation=AR).compose(PoissonSampled(0.04, Gaussian(z, AR)), steps).get_epsilon(1e-5)  # noqa: E731
        f_pld = lambda z: pld.PldAccountant(relation=AR).compose(PoissonSampled(0.04, Gaussian(z, AR)), steps).get_epsilon(1e-5)  # noqa: E731
        s_rdp = cal.calibrate_sigma(f_rdp, 8.0, sigma0=1.3, rtol=1e-5).sigma
        s_pld = cal.calibrate_sigma(f_pld, 8.0, sigma0=1.3, rtol=1e-5).sigma
        assert 0.99 * want_rdp <= s_rdp <= want_rdp * (1 + 1e-4)
        assert 0.99 * want_prv <= s_pld <= want_prv * (1 + 1e-4)


@pytest.mark.parametrize("s,p,T", [(1.0, 0.1, 20), (0.5, 0.2, 10)])
def test_a_mixture_step_without_common_shift_is_the_without_replacement_gaussian(s, p, T):
    """A DP-RSVRG-shaped step with no common shift (c = 0): one record of 1/p sampled, the mean moving
    by s when it is the differing one; that is the without-replacement subsampled Gaussian (m = 1), whose
    exact pair the peer builds (its stitched pair at z = 1/s, q = p). The split bound writes the step as
    the null mechanism (variance share lambda) composed with the subsampled Gaussian of shift
    s / sqrt(1 - lambda), so with the grid's smallest lambda = 0.02 prirfed's eps lies between the peer's
    exact value and the peer's value at shift s / sqrt(0.98) (within 1e-3 for the discretisation), far
    below the labelled-mixture bound, which reveals the sampled index (measured 10.7 against 3.82 at
    s = 1, p = 0.1, T = 20)."""
    ev = SelfComposed(MixtureOfGaussians(shift_common=0.0, shift_rare=s, p_rare=p, shift_sample=s), T)
    up = pld.PldAccountant().compose(ev).get_epsilon(DELTA)
    exact = stitched(1 / s, p).self_compose(T).get_epsilon_for_delta(DELTA)
    split = stitched(math.sqrt(1 - pld.mixture_split_lambdas().min()) / s, p).self_compose(T).get_epsilon_for_delta(DELTA)
    assert exact <= up <= split * (1 + 1e-3)
    labelled = pld.PldAccountant().compose(SelfComposed(MixtureOfGaussians(shift_common=0.0, shift_rare=s, p_rare=p), T)).get_epsilon(DELTA)
    assert up < 0.5 * labelled
