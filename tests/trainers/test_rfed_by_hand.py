"""RFedAvg, RFedProx and RFedSVRG (Li and Ma (2023)) and PriRFed's server step on Euclidean space,
written out by hand.

On R^d the federated Frechet mean (1/2 convention) has grad f_i(x) = x - m_i (m_i agent i's mean)
and grad f(x) = x - m (m the mean of all points, weights p_i = N_i / n); Exp_x(v) = x + v,
Log_x(y) = y - x, the transport is the identity and the tangent mean (8) / (3.2) is x + sum_i w_i
(x_i - x) / sum_i w_i. So tau_i local steps of size eta_i give
- RFedAvg: x_i - m_i = (1 - eta_i)^tau_i (x - m_i);
- RFedProx: x_{l+1} = x_l - eta_i ((x_l - m_i) - mu (x_t - x_l));
- RFedSVRG: the corrected direction (x_l - m_i) - ((x_t - m_i) - (x_t - m)) = x_l - m, so
  x_i - m = (1 - eta_i)^tau_i (x - m).
The agents of a round are the partial Fisher-Yates draw of the server's stream of round t; Option
2 uploads path[integers(1, tau_i + 1) - 1] of agent i's stream of round t and returns
outer[integers(1, T + 1) - 1] of the server's stream of round T (module docstring of
``reference/trainers/rfed.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from prirfed.reference.manifolds import Euclidean
from prirfed.reference.problems.frechet_mean import FrechetMean
from prirfed.reference.randomness import agent_stream, run_key, server_stream
from prirfed.reference.trainers.prirfed import prirfed
from prirfed.reference.trainers.rfed import federated_settings, rfedavg, rfedprox, rfedsvrg

# three agents of 2, 1 and 3 points in R^2
DATA = [np.array([[0.0, 0.0], [2.0, 0.0]]), np.array([[0.0, 3.0]]), np.array([[1.0, 1.0], [4.0, -2.0], [1.0, 4.0]])]
MEANS = [d.mean(axis=0) for d in DATA]
M_ALL = np.concatenate(DATA).mean(axis=0)
SIZES = [2, 1, 3]
X0 = np.array([-1.0, 2.5])
ETA, TAU = [0.5, 0.25, 0.4], [1, 2, 3]


def problem():
    return FrechetMean(Euclidean(2), DATA)


def agents_of_round(key, t, k):
    """The server's partial Fisher-Yates draw of k of the 3 agents."""
    stream = server_stream(key, t)
    perm = [0, 1, 2]
    for j in range(k):
        r = int(stream.integers(j, 3))
        perm[j], perm[r] = perm[r], perm[j]
    return perm[:k]


def run_by_hand(seed, T, k, local_path, weights, option=1):
    """T rounds of the Li-Ma server loop: local_path(x, i) is agent i's list of tau_i local points."""
    key = run_key(np.random.default_rng(seed))
    x, outer = X0, []
    for t in range(T):
        S = agents_of_round(key, t, k)
        ups = []
        for i in S:
            path = local_path(x, i)
            ups.append(path[-1] if option == 1 else path[int(agent_stream(key, t, i).integers(1, TAU[i] + 1)) - 1])
        w = np.array([weights[i] for i in S], dtype=float)
        x = x + sum(wi * (u - x) for wi, u in zip(w, ups)) / w.sum()
        outer.append(x)
    return x if option == 1 else outer[int(server_stream(key, T).integers(1, T + 1)) - 1]


def avg_path(x, i):
    return [MEANS[i] + (1 - ETA[i]) ** (ell + 1) * (x - MEANS[i]) for ell in range(TAU[i])]


def svrg_path(x, i):
    return [M_ALL + (1 - ETA[i]) ** (ell + 1) * (x - M_ALL) for ell in range(TAU[i])]


def prox_path(mu):
    def path(x, i):
        out, xl = [], x
        for _ in range(TAU[i]):
            xl = xl - ETA[i] * ((xl - MEANS[i]) - mu * (x - xl))
            out.append(xl)
        return out
    return path


@pytest.mark.parametrize("weighting", ["uniform", "size"])
def test_rfedavg_and_rfedprox_by_hand(weighting):
    """k = 2 of 3 agents per round, per-agent step sizes (0.5, 0.25, 0.4) and local step counts
    (1, 2, 3), weights 1 (Li and Ma (2023) (8)) or N_i (Huang et al. (2024) (3.2)); mu = 0.3."""
    weights = [1.0, 1.0, 1.0] if weighting == "uniform" else SIZES
    for seed in (2, 5):
        want = run_by_hand(seed, 3, 2, avg_path, weights)
        got = rfedavg(problem(), X0, 3, 2, ETA, TAU, np.random.default_rng(seed), weighting=weighting).x
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
        want = run_by_hand(seed, 3, 2, prox_path(0.3), weights)
        got = rfedprox(problem(), X0, 3, 2, ETA, TAU, 0.3, np.random.default_rng(seed), weighting=weighting).x
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("option", [1, 2])
def test_rfedsvrg_options_by_hand(option):
    """RFedSVRG's local direction on R^d is x_l - m whatever the agent: option 1 uploads the last
    local point and returns x^(T); option 2 uploads a drawn local point and returns a drawn outer
    iterate (T = 4: seeds whose draws are 2, 3, 1 and 4, so an upper end T in place of T + 1
    would miss one)."""
    seeds = (1, 4, 7, 18)
    drawn = [int(server_stream(run_key(np.random.default_rng(seed)), 4).integers(1, 5)) for seed in seeds]
    assert drawn == [2, 3, 1, 4]  # the last outer iterate x^(T) is among the draws, and earlier ones
    for seed in seeds:
        want = run_by_hand(seed, 4, 2, svrg_path, SIZES, option=option)
        got = rfedsvrg(problem(), X0, 4, 2, ETA, TAU, np.random.default_rng(seed), option=option, weighting="size").x
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)


@pytest.mark.parametrize("option, local_option", [(1, 1), (2, 1), (2, 2)])
def test_prirfed_server_step_and_options_by_hand(option, local_option):
    """PriRFed's (3.2): weights N_i / sum_{k in S_t} N_k. With sigma = 0, K = 1 and full batches an
    agent's local point is x - alpha_t (x - m_i) (Algorithm 2 reads no draw for them); s = 2 of 3
    agents; step sizes (0.3, 0.6, 0.45) differ per round. The agents of round t are the server
    stream's draw, as for the Li-Ma trainers. Local option 2 uploads iterate integers(0, K + 1) of
    {x, x - alpha_t (x - m_i)} (the first draw of agent i's stream of round t); option 2 returns
    x^(j), j = integers(1, T + 1) of the server's stream of round T."""
    alphas = [0.3, 0.6, 0.45]
    outs = set()
    for seed in (1, 2, 8):  # their option-2 draws: 1, 2, 3
        key = run_key(np.random.default_rng(seed))
        x, outer = X0, []
        for t, a in enumerate(alphas):
            S = agents_of_round(key, t, 2)
            w = np.array([SIZES[i] for i in S], dtype=float)
            ups = [x - a * (x - MEANS[i]) for i in S]
            if local_option == 2:
                ups = [[x, u][int(agent_stream(key, t, i).integers(0, 2))] for u, i in zip(ups, S)]
            x = x + sum(wi * (u - x) for wi, u in zip(w, ups)) / w.sum()
            outer.append(x)
        j = 3 if option == 1 else int(server_stream(key, 3).integers(1, 4))
        outs.add(j)
        got = prirfed(problem(), X0, 3, 2, alphas, np.random.default_rng(seed), option=option,
                      local_option=local_option).x
        np.testing.assert_allclose(got, outer[j - 1], rtol=0, atol=1e-14)
    assert outs == ({3} if option == 1 else {1, 2, 3})


def test_step_sizes_and_generator_refusals():
    """alpha_t must be positive and finite: 0 (the boundary) is refused, as are 3 step sizes for
    T = 2 (named by shape) and a seed in place of a Generator (for PriRFed and RFedAvg)."""
    P = problem()
    with pytest.raises(ValueError, match=r"^prirfed: step sizes must be positive and finite \(the step of round 0 "
                                         r"is 0\.0; 2 of 2 are not\)$"):
        prirfed(P, X0, 2, 1, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^prirfed: step sizes must be positive and finite \(the step of round 2 "
                                         r"is nan; 1 of 4 are not\)$"):
        prirfed(P, X0, 4, 1, [0.1, 0.2, math.nan, 0.3], np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^prirfed: step sizes have shape \(3,\), expected \(2,\)$"):
        prirfed(P, X0, 2, 1, [0.1, 0.2, 0.3], np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^prirfed: rng must be a numpy.random.Generator \(got int\)$"):
        prirfed(P, X0, 2, 1, 0.1, 0)
    with pytest.raises(ValueError, match=r"^rfedavg: rng must be a numpy.random.Generator \(got int\)$"):
        rfedavg(P, X0, 2, 1, 0.1, 1, 0)


def test_federated_settings_local_step_counts_at_their_edges():
    """tau_i are integers in [1, 2^62): 1 and 2^62 - 1024 (the largest float below 2^62 that is
    exact) are taken, 0, 1.5 and 2^62 refused; k = 0 and k = N + 1 are refused; mu < 0 is
    refused by RFedProx, keep_iterates = "no" by the settings."""
    P = problem()
    args = dict(T=2, k=1, eta=0.1, option=1, aggregation="tangent", weighting="uniform", record_every=1)
    for tau in (1, 2.0**62 - 1024):
        assert federated_settings("f", P, tau=tau, **args)[3][0] == tau
    for tau in (0, 1.5, 2.0**62):
        with pytest.raises(ValueError, match=r"^f: local step counts tau_i must be integers in \[1, 2\^62\)"):
            federated_settings("f", P, tau=tau, **args)
    for k in (0, 4):
        with pytest.raises(ValueError, match=r"^f: k must be in \[1, 3\]"):
            federated_settings("f", P, **{**args, "k": k}, tau=1)
    with pytest.raises(ValueError, match=r"^rfedprox: mu must be finite and >= 0"):
        rfedprox(P, X0, 1, 1, 0.1, 1, -0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^f: keep_iterates must be True or False"):
        federated_settings("f", P, tau=1, **{**args, "keep_iterates": "no"})


def test_federated_auto_record_period_counts_the_local_steps():
    """A round of the Li-Ma trainers reads w = k mean(tau_i) n / N samples (k agents, tau_i local
    gradients of f_i each, n / N samples per agent on average): with n = 6, N = 3, k = 2 and tau =
    (1, 2, 3), w = 2 * 2 * 6 / 3 = 8 and the "auto" period is ceil(20 * 6 / 8) = 15."""
    args = dict(T=1000, k=2, eta=0.1, option=1, aggregation="tangent", weighting="uniform", record_every="auto")
    assert federated_settings("f", problem(), tau=[1, 2, 3], **args)[4] == 15


def test_prirfed_with_dp_rsvrg_follows_the_step_schedule_by_hand():
    """PriRFed with DP-RSVRG (Algorithm 3), sigma = 0, K = 1, m = 1: the inner step starts at the anchor
    x~ = x, where the variance-reduced direction is grad f_il(x) - grad f_il(x) + grad f_i(x) = x - m_i,
    so an agent uploads x - alpha_t (x - m_i), as with DP-RSGD; the server step is (3.2). Step sizes
    (0.3, 0.6, 0.45) differ per round, so a trainer that read round t - 1's step in its DP-RSVRG branch
    (a mutant that survived the trainers' run: only the DP-RSGD branch had a schedule test) fails."""
    alphas = [0.3, 0.6, 0.45]
    for seed in (1, 2, 8):
        key = run_key(np.random.default_rng(seed))
        x = X0
        for t, a in enumerate(alphas):
            S = agents_of_round(key, t, 2)
            w = np.array([SIZES[i] for i in S], dtype=float)
            ups = [x - a * (x - MEANS[i]) for i in S]
            x = x + sum(wi * (u - x) for wi, u in zip(w, ups)) / w.sum()
        got = prirfed(problem(), X0, 3, 2, alphas, np.random.default_rng(seed), local="dp_rsvrg", K=1, m=1).x
        np.testing.assert_allclose(got, x, rtol=0, atol=1e-14)
