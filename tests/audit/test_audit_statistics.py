"""The statistics of prirfed.testing.audit against independent truths.

- Clopper-Pearson: the returned p_u solves P(Bin(n, p_u) <= k) = alpha (scipy's binomial CDF,
  a different code path from the Beta quantile the function uses).
- gdp_epsilon: bracketed by dp-accounting's pessimistic and optimistic PLDs of the same Gaussian.
- eps_from_error_rates / gdp_mu_from_error_rates on the exact error rates of a Gaussian shift:
  the hypothesis-testing bound never exceeds the Gaussian's eps and its sup over thresholds
  reaches it; the GDP bound returns mu exactly (closed forms).
- best_test_bound: its false-alarm rate on simulated Gaussian shifts is at most 1 - confidence
  (a binomial test over 300 seeded audits whose own false-alarm probability is below 1e-3).
"""

import math

import numpy as np
import pytest
from scipy import stats

from prirfed.testing import audit as A
from prirfed.testing import peer_pld


@pytest.mark.parametrize("k,n,alpha", [(0, 10, 0.05), (3, 10, 0.025), (17, 1000, 1e-3), (999, 1000, 0.05),
                                       (0, 100000, 0.05)])
def test_clopper_pearson_is_the_exact_binomial_tail(k, n, alpha):
    pu = A.clopper_pearson_upper(k, n, alpha)
    assert stats.binom.cdf(k, n, pu) == pytest.approx(alpha, rel=1e-8, abs=0)
    assert A.clopper_pearson_upper(n, n, alpha) == 1.0


@pytest.mark.parametrize("z,delta", [(1.0, 1e-5), (3.7, 1e-5), (0.8, 1e-3), (10.0, 1e-6)])
def test_gdp_epsilon_is_bracketed_by_dp_accounting(z, delta):
    eps = A.gdp_epsilon(1.0 / z, delta)
    hi = peer_pld.gaussian(z, pessimistic=True).get_epsilon_for_delta(delta)
    lo = peer_pld.gaussian(z, pessimistic=False).get_epsilon_for_delta(delta)
    assert lo - 1e-9 <= eps <= hi + 1e-9, (lo, eps, hi)


@pytest.mark.parametrize("mu", [0.27, 0.93, 2.0])
def test_error_rate_bounds_on_exact_gaussian_rates(mu):
    delta = 1e-5
    truth = A.gdp_epsilon(mu, delta)
    ts = np.linspace(-3.0, 12.0, 30001)
    fpr, fnr = stats.norm.sf(ts), stats.norm.cdf(ts - mu)
    eps = np.array([A.eps_from_error_rates(a, b, delta) for a, b in zip(fpr, fnr)])
    assert np.all(eps <= truth + 1e-9)
    assert eps.max() == pytest.approx(truth, rel=1e-4, abs=0)  # the supporting line touches the trade-off curve
    for t in (-1.0, 0.3, 2.5):
        assert A.gdp_mu_from_error_rates(stats.norm.sf(t), stats.norm.cdf(t - mu)) == pytest.approx(mu, rel=1e-10, abs=0)


@pytest.mark.parametrize("method", A.METHODS)
def test_best_test_bound_false_alarm_rate(method):
    """300 audits of a Gaussian shift at mu = 0.9 (n = 400 per side, confidence 0.9): the number of
    audits whose bound exceeds the truth is Binomial(300, p) with p <= 0.1; we assert it is at most
    the 0.999 quantile of Binomial(300, 0.1), so this test fails for a correct bound with
    probability < 1e-3 (fixed seeds: the outcome is deterministic)."""
    mu, delta, n, conf = 0.9, 1e-5, 400, 0.9
    truth_eps = A.gdp_epsilon(mu, delta)
    bad = 0
    for seed in range(300):
        rng = np.random.default_rng([20, seed])
        b = A.best_test_bound(rng.standard_normal(n), mu + rng.standard_normal(n), delta, conf, method,
                              n_thresholds=60)
        bad += (b.mu_lower > mu) if method == "gdp" else (b.eps_lower > truth_eps)
    assert bad <= stats.binom.ppf(0.999, 300, 0.1), bad


def test_bounds_refuse_bad_input():
    with pytest.raises(ValueError, match="clopper_pearson_upper: k must be"):
        A.clopper_pearson_upper(11, 10, 0.05)
    with pytest.raises(ValueError, match="clopper_pearson_upper: alpha"):
        A.clopper_pearson_upper(1, 10, 1.5)
    with pytest.raises(ValueError, match="best_test_bound: method"):
        A.best_test_bound(np.zeros(10), np.ones(10), 1e-5, method="bayes")
    with pytest.raises(ValueError, match="best_test_bound: the statistics are not all finite"):
        A.best_test_bound(np.array([0, 1, 2, math.nan, 4.0]), np.ones(5), 1e-5)
    with pytest.raises(ValueError, match="best_test_bound: confidence"):
        A.best_test_bound(np.zeros(10), np.ones(10), 1e-5, confidence=1.0)
    with pytest.raises(ValueError, match="gdp_epsilon: mu"):
        A.gdp_epsilon(-1.0, 1e-5)
    with pytest.raises(ValueError, match="sphere_pca_canary: d must be"):
        A.sphere_pca_canary(1.0, d=1)
    with pytest.raises(ValueError, match="spd_frechet_canary: tau"):
        A.spd_frechet_canary(0.0)
    with pytest.raises(ValueError, match="hsp_canary: agent"):
        A.hsp_canary(1.0, sizes=(3, 3), agent=2)
