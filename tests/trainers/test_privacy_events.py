"""Every private trainer returns its privacy event, built from the run's own settings."""

import math

import numpy as np
import pytest

from prirfed.reference.accounting.events import EpsilonDelta, Gaussian, SampledWithoutReplacement, SelfComposed, WorstCase
from prirfed.reference.accounting.prirfed_accountant import dp_rsgd_event, dp_rsvrg_event, prirfed_event
from prirfed.reference.accounting.rdp import RdpAccountant
from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.trainers.prirfed import prirfed
from prirfed.reference.trainers.rgd import dp_rgd


def problem(sizes):
    rng = np.random.default_rng(0)
    return FrechetMean(Euclidean(2), [rng.standard_normal((n, 2)) for n in sizes]), rng


def test_prirfed_dp_rsgd_event_matches_its_settings():
    P, rng = problem([6, 6, 6, 6])
    r = prirfed(P, np.zeros(2), T=3, s=2, alpha=0.1, rng=rng, K=2, b=3, sigma=0.8, tau=1.5)
    assert r.event == prirfed_event(dp_rsgd_event(0.8, 1.5, 3, 6, 2), N=4, s=2, T=3)


def test_prirfed_dp_rsvrg_event_matches_its_settings():
    P, rng = problem([5, 5, 5])
    r = prirfed(P, np.zeros(2), T=2, s=1, alpha=0.1, rng=rng, local="dp_rsvrg", K=2, m=3, sigma=0.6, tau0=1.0,
                tau1=0.5)
    assert r.event == prirfed_event(dp_rsvrg_event(0.6, 1.0, 0.5, 5, 3, 2), N=3, s=1, T=2)


def test_heterogeneous_agents_give_the_worst_case_over_agents():
    P, rng = problem([4, 9, 4])
    r = prirfed(P, np.zeros(2), T=2, s=2, alpha=0.1, rng=rng, K=1, b=2, sigma=[0.5, 0.9, 0.5], tau=1.0)
    assert isinstance(r.event, WorstCase) and len(r.event.events) == 2
    acc = RdpAccountant()
    eps_run = acc.rdp(r.event)
    per_agent = [acc.rdp(prirfed_event(dp_rsgd_event(sig, 1.0, 2, n, 1), 3, 2, 2)) for sig, n in ((0.5, 4), (0.9, 9))]
    np.testing.assert_array_equal(eps_run, np.maximum(*per_agent))


def test_heterogeneous_dp_rsvrg_agents_pair_each_size_with_its_own_sigma():
    """Agent i's DP-RSVRG event is built from its own N_i and sigma_i (and the shared tau0, tau1, m,
    K): with sizes (5, 9) and sigmas (0.6, 1.3) the run is the worst case of exactly those two
    per-agent events, in agent order; swapping the pairing gives different events."""
    P, rng = problem([5, 9])
    r = prirfed(P, np.zeros(2), T=2, s=1, alpha=0.1, rng=rng, local="dp_rsvrg", K=2, m=3, sigma=[0.6, 1.3],
                tau0=1.0, tau1=0.5)
    mine = [prirfed_event(dp_rsvrg_event(sig, 1.0, 0.5, n, 3, 2), N=2, s=1, T=2) for sig, n in ((0.6, 5), (1.3, 9))]
    swapped = [prirfed_event(dp_rsvrg_event(sig, 1.0, 0.5, n, 3, 2), N=2, s=1, T=2) for sig, n in ((1.3, 5), (0.6, 9))]
    assert r.event == WorstCase(tuple(mine))
    assert set(mine).isdisjoint(swapped)


@pytest.mark.parametrize("sizes, sigmas, bs", [
    ([6, 6, 8, 6], [0.7, 0.7, 0.7, 0.7], [3, 3, 3, 3]),      # only N_i differs (agent 2)
    ([6, 6, 6, 6], [0.7, 0.7, 0.7, 1.1], [3, 3, 3, 3]),      # only sigma_i differs (agent 3)
    ([6, 6, 6, 6], [0.7, 0.7, 0.7, 0.7], [3, 2, 3, 3]),      # only b_i differs (agent 1)
])
def test_agents_sharing_a_setting_share_one_event_and_any_difference_shows(sizes, sigmas, bs):
    """Agents whose (sigma_i, b_i, N_i) agree have one event between them; an agent that differs in
    exactly one of the three has its own: the run is the worst case of the two per-agent events, in
    order of first appearance, each built here from the accounting API with that agent's settings."""
    P, rng = problem(sizes)
    r = prirfed(P, np.zeros(2), T=2, s=2, alpha=0.1, rng=rng, K=1, b=bs, sigma=sigmas, tau=1.0)
    per_agent = [prirfed_event(dp_rsgd_event(sig, 1.0, b, n, 1), N=4, s=2, T=2) for sig, b, n in zip(sigmas, bs, sizes)]
    assert r.event == WorstCase(tuple(dict.fromkeys(per_agent)))
    assert len(r.event.events) == 2


def test_non_private_runs_say_so():
    P, rng = problem([4, 4])
    r = prirfed(P, np.zeros(2), T=1, s=1, alpha=0.1, rng=rng)
    assert r.event is None and "sigma_i = 0" in r.info["privacy"]
    r = prirfed(P, np.zeros(2), T=1, s=1, alpha=0.1, rng=rng, sigma=1.0)
    assert r.event is None and "no clipping" in r.info["privacy"]


def test_dp_rgd_event_uses_clipping_or_the_lipschitz_constant():
    P, rng = problem([10])
    r = dp_rgd(P, np.zeros(2), 0.1, T=4, b=5, sigma=0.3, rng=rng, lipschitz=2.0)
    assert r.event == SelfComposed(SampledWithoutReplacement(10, 5, Gaussian(0.3 * 5 / (2 * 2.0))), 4)
    r = dp_rgd(P, np.zeros(2), 0.1, T=4, b=10, sigma=0.3, rng=rng, tau=1.0, lipschitz=2.0)
    assert r.event == SelfComposed(Gaussian(0.3 * 10 / 2.0), 4)
    r = dp_rgd(P, np.zeros(2), 0.1, T=1, b=10, sigma=0.3, rng=rng)
    assert r.event is None


def test_worst_case_event_refuses_empty_and_mixed():
    with pytest.raises(ValueError, match="WorstCase"):
        WorstCase(())
    with pytest.raises(ValueError, match="WorstCase"):
        WorstCase((Gaussian(1.0), 3))
    assert EpsilonDelta(1.0, 0.0) == EpsilonDelta(1.0, 0.0)
    assert math.isfinite(RdpAccountant().compose(WorstCase((Gaussian(1.0), Gaussian(2.0)))).get_epsilon(1e-5))


def test_dp_rgd_run_event_refuses_a_zero_sensitivity_radius():
    """min(tau, lipschitz) = 0 would make the noise multiplier sigma b / (2 * 0) infinite: refused."""
    from prirfed.reference.trainers.privacy import dp_rgd_run_event

    with pytest.raises(ValueError, match="the sensitivity radius min\\(tau, lipschitz\\) must be > 0"):
        dp_rgd_run_event(n=10, b=10, T=1, sigma=1.0, sensitivity_radius=0.0)
