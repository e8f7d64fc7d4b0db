"""Whole-run epsilons against values computed without prirfed's accountants (issue 18).

Independent truths used here:

- Google's dp-accounting PLD (a test-only peer): one activated round of PriRFed is the pair
  ``((1-rho) U + rho N(0,1), (1-rho) U + rho N(mu,1))`` with ``U`` not depending on the record; the
  peer's ``from_gaussian_mechanism(1/mu)`` mixed with its identity PLD at weight ``rho``
  (``compute_mixture``) and composed ``T`` times is that run's privacy loss, computed by FFT on a
  1e-4 grid. Its pessimistic estimate is an upper bound within the grid error of the exact value.
- The Gaussian mechanism's exact tradeoff (Balle & Wang 2018, Theorem 8):
  ``delta(eps) = Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2)`` for the composed shift
  ``m = mu sqrt(T)`` (T Gaussian steps compose to one Gaussian), solved for eps by bisection.

Each run epsilon is pinned in both directions, so an accountant that forgets the activation
probability, squares it, or drops a factor 2 of the sensitivity fails on one side.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

pld_peer = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")  # test extra

from prirfed.reference.manifolds import Euclidean  # noqa: E402
from prirfed.reference.problems.frechet_mean import FrechetMean  # noqa: E402
from prirfed.reference.trainers.prirfed import prirfed  # noqa: E402
from prirfed.reference.trainers.privacy import run_epsilon, run_privacy_report  # noqa: E402
from prirfed.reference.trainers.rgd import dp_rgd  # noqa: E402


def peer_activated_gaussian_epsilon(mu, rho, T, delta):
    """dp-accounting: T rounds of (rho N(mu,1) vs N(0,1)) mixed with the identity at weight 1-rho."""
    one = pld_peer.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0,
                                           value_discretization_interval=1e-4)
    if rho < 1.0:
        one = one.compute_mixture(pld_peer.identity(value_discretization_interval=1e-4), rho)
    return one.self_compose(T).get_epsilon_for_delta(delta)


def gaussian_epsilon(m, delta):
    """Exact eps of the Gaussian mechanism with shift m (Balle & Wang 2018, Thm 8): the root of
    delta(eps) - delta, delta(eps) decreasing from delta(0) = 2 Phi(m/2) - 1."""
    def excess(e):
        return norm.cdf(m / 2 - e / m) - math.exp(e) * norm.cdf(-m / 2 - e / m) - delta

    return brentq(excess, 0.0, 200.0, xtol=1e-14, rtol=1e-14)


def frechet(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return FrechetMean(Euclidean(2), [rng.standard_normal((n, 2)) for n in sizes]), rng


@pytest.mark.parametrize("N,s,T,sigma,tau,delta", [(5, 2, 40, 2.0, 1.0, 1e-5), (10, 1, 100, 1.0, 0.5, 1e-3),
                                                   (4, 4, 20, 3.0, 1.0, 1e-5)])
def test_prirfed_run_epsilon_equals_the_peer_pld(N, s, T, sigma, tau, delta):
    """PriRFed with full-batch DP-RSGD, K = 1: each round of the record's agent is activated with
    rho = s/N and then is a Gaussian with shift mu = 2 tau / (N_i sigma) (replace-one sensitivity
    2 tau / N_i of the clipped mean). The run's eps (tightest accountant, and the PLD one) equals
    the peer's within its 1e-4 grid, in both directions; the RDP accountant is a valid upper bound
    within 25% of it; the attainable lower bound of the report is below it and within 1%."""
    N_i = 8
    P, rng = frechet([N_i] * N)
    r = prirfed(P, np.zeros(2), T=T, s=s, alpha=0.1, rng=rng, K=1, b=N_i, sigma=sigma, tau=tau)
    want = peer_activated_gaussian_epsilon(2 * tau / (N_i * sigma), s / N, T, delta)
    for accountant in ("best", "pld"):
        assert run_epsilon(r, delta, accountant) == pytest.approx(want, rel=2e-3, abs=1e-3)
    rdp = run_epsilon(r, delta, "rdp")
    assert want * (1 - 2e-3) <= rdp <= 1.25 * want
    rep = run_privacy_report(r, delta)
    lower, upper = rep.lower, rep.upper
    assert want * 0.99 <= lower <= upper <= want * (1 + 2e-3) + 1e-3


def test_prirfed_run_epsilon_grows_with_the_activation_probability_as_the_peer_says():
    """rho = s/N enters once: doubling s from 1 to 2 of N = 8 moves eps exactly as the peer's does
    (a rho^2 accountant would give the s = 2 run the s = 1 eps of a quarter rho)."""
    P, rng = frechet([6] * 8, seed=1)
    for s in (1, 2):
        r = prirfed(P, np.zeros(2), T=60, s=s, alpha=0.1, rng=rng, K=1, b=6, sigma=1.5, tau=1.0)
        want = peer_activated_gaussian_epsilon(2.0 / (6 * 1.5), s / 8, 60, 1e-5)
        assert run_epsilon(r, 1e-5, "pld") == pytest.approx(want, rel=2e-3, abs=0)


@pytest.mark.parametrize("n,T,sigma,r_clip,delta", [(20, 10, 1.0, 1.0, 1e-5), (50, 300, 0.05, 0.5, 1e-6)])
def test_full_batch_dp_rgd_run_epsilon_is_the_exact_gaussian_one(n, T, sigma, r_clip, delta):
    """Full-batch DP-RGD: T Gaussian steps of shift 2 r / (n sigma) compose to one Gaussian with
    shift m = 2 r sqrt(T) / (n sigma); its eps has a closed form (Balle & Wang 2018, Thm 8)."""
    P, rng = frechet([n])
    event = dp_rgd(P, np.zeros(2), alpha=0.1, T=T, b=n, sigma=sigma, rng=rng, tau=r_clip).event
    m = 2 * r_clip * math.sqrt(T) / (n * sigma)
    want = gaussian_epsilon(m, delta)
    assert run_epsilon(event, delta, "pld") == pytest.approx(want, rel=1e-3, abs=1e-4)
    rep = run_privacy_report(event, delta)
    lower, upper = rep.lower, rep.upper
    assert want * (1 - 1e-3) - 1e-4 <= lower <= upper <= want * (1 + 1e-3) + 1e-4


def test_heterogeneous_agents_run_epsilon_is_the_worst_agents_peer_value():
    """Agents with different N_i and sigma_i: the record sits with one agent, so the run's eps is
    the largest of the per-agent eps (each agent's own mu = 2 tau / (N_i sigma_i)), by the peer.
    Pairing agent i's size with another agent's sigma would change the maximum."""
    sizes, sigmas, tau, T, s = [4, 12, 6], [0.6, 3.0, 2.0], 1.0, 30, 1
    P, rng = frechet(sizes, seed=2)
    r = prirfed(P, np.zeros(2), T=T, s=s, alpha=0.1, rng=rng, K=1, b=sizes, sigma=sigmas, tau=tau)
    per_agent = [peer_activated_gaussian_epsilon(2 * tau / (n * sg), s / 3, T, 1e-5) for n, sg in zip(sizes, sigmas)]
    assert max(per_agent) > 1.5 * sorted(per_agent)[-2]  # the worst agent is not a near tie
    assert run_epsilon(r, 1e-5, "pld") == pytest.approx(max(per_agent), rel=2e-3, abs=0)


def test_non_private_runs_carry_no_event_and_their_epsilon_is_refused():
    """sigma = 0 (PriRFed, DP-RGD) or no clipping: no event, and run_epsilon / run_privacy_report
    say why instead of returning a number."""
    P, rng = frechet([5, 5])
    runs = [prirfed(P, np.zeros(2), T=1, s=1, alpha=0.1, rng=rng, sigma=0.0, tau=1.0),
            prirfed(P, np.zeros(2), T=1, s=1, alpha=0.1, rng=rng, sigma=1.0),
            dp_rgd(P, np.zeros(2), alpha=0.1, T=2, b=10, sigma=0.0, rng=rng, tau=1.0)]
    for r in runs:
        assert r.event is None and "not private" in r.info["privacy"]
        with pytest.raises(ValueError, match="run_epsilon: the run is not differentially private"):
            run_epsilon(r, 1e-5)
        with pytest.raises(ValueError, match="run_privacy_report: the run is not differentially private"):
            run_privacy_report(r, 1e-5)


def test_output_perturbation_is_pure_epsilon_dp():
    """DP-FM's event is pure eps-DP: its tight eps at delta is that of the randomized-response
    pair of Kairouz, Oh & Viswanath (2015), the worst pure eps-DP pair: with p = e^eps / (1 + e^eps),
    delta(eps') = p - e^eps' (1 - p), so eps'(delta) = log((p - delta) / (1 - p)) (= eps as delta -> 0)."""
    from prirfed.reference.trainers.privacy import output_perturbation_event

    eps = 0.7
    event, why = output_perturbation_event(eps)
    assert "pure eps-DP" in why
    p = math.exp(eps) / (1 + math.exp(eps))
    for delta in (1e-12, 1e-5, 0.2):
        want = math.log((p - delta) / (1 - p))
        assert run_epsilon(event, delta, "pld") == pytest.approx(want, rel=1e-12, abs=0)
        rep = run_privacy_report(event, delta)
        assert rep.lower == pytest.approx(want, rel=1e-12, abs=0) and rep.upper == pytest.approx(want, rel=1e-12, abs=0)
