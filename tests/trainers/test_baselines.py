"""Baselines of 001: DP-PGD (section 5.1) and DP-FM with the Riemannian Laplace law on SPD (section 5.2)."""

import math
import re

import numpy as np

from prirfed.reference.randomness import agent_stream, run_key
import pytest
from scipy import integrate, stats

from prirfed.reference.manifolds import SPD
from prirfed.reference.problems.spd_frechet import SPDFrechetMean
from prirfed.reference.problems.sphere_pca import SpherePCA
from prirfed.reference.trainers.baselines import (
    dp_frechet_mean,
    dp_pgd,
    haar_orthogonal,
    laplace_sigma_max,
    sample_spd_laplace_eigenvalues,
    spd_laplace_log_density,
)


def test_dp_pgd_without_noise_converges_and_stays_on_the_sphere():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((40, 5)) * np.array([3.0, 1, 1, 1, 1]) / math.sqrt(5)
    P = SpherePCA(Z)
    x0 = P.manifold.random_point(rng)
    r = dp_pgd(P, x0, 0.1, T=300, b=40, sigma=0.0, rng=rng)
    assert min(P.manifold.dist(r.x, P.x_star), P.manifold.dist(r.x, -P.x_star)) < 1e-8
    r = dp_pgd(P, x0, 0.1, T=20, b=10, sigma=0.5, rng=rng, tau=1.0, keep_iterates=True, record_every=1)
    for x in r.history.iterates:
        P.manifold.check_point(x)


def test_dp_pgd_refuses_other_manifolds():
    rng = np.random.default_rng(0)
    Z = [np.array([np.eye(2), 2 * np.eye(2)])]
    P = SPDFrechetMean(Z)
    with pytest.raises(ValueError, match="dp_pgd: DP-PGD is defined on the sphere"):
        dp_pgd(P, np.eye(2), 0.1, T=1, b=1, sigma=0.0, rng=rng)


def _chains(n, sigma, n_chains, n_steps, seed):
    rng = np.random.default_rng(seed)
    return np.array([sample_spd_laplace_eigenvalues(n, sigma, rng, n_steps=n_steps) for _ in range(n_chains)])


def test_laplace_eigenvalue_sampler_n1_is_the_laplace_law():
    """n = 1: no sinh factors, lambda ~ Laplace(0, sigma). KS test on 400 independent chains,
    false-alarm probability 1e-3 (fixed seed)."""
    sigma = 0.7
    lam = _chains(1, sigma, 400, 200, 1)[:, 0]
    assert stats.kstest(lam, stats.laplace(scale=sigma).cdf).pvalue > 1e-3


def test_laplace_eigenvalue_sampler_n2_radial_law():
    """n = 2: r = ||lambda|| has density proportional to r exp(-r/sigma) int_0^{2 pi}
    sinh(r |cos t - sin t| / 2) dt (polar coordinates). KS against the numerically integrated CDF,
    400 independent chains, false-alarm probability 1e-3 (fixed seed)."""
    sigma = 0.5

    def dens(r):
        g = integrate.quad(lambda t: math.sinh(r * abs(math.cos(t) - math.sin(t)) / 2), 0, 2 * math.pi, limit=200)[0]
        return r * math.exp(-r / sigma) * g

    Z = integrate.quad(dens, 0, 60 * sigma, limit=200)[0]

    def cdf(r):
        r = np.atleast_1d(r)
        return np.array([integrate.quad(dens, 0, min(x, 60 * sigma), limit=200)[0] / Z for x in r])

    lam = _chains(2, sigma, 400, 300, 2)
    r = np.linalg.norm(lam, axis=1)
    assert stats.kstest(r, cdf).pvalue > 1e-3


def test_haar_orthogonal_is_orthogonal():
    U = haar_orthogonal(4, np.random.default_rng(0))
    np.testing.assert_allclose(U.T @ U, np.eye(4), atol=1e-13)


def test_dp_frechet_mean_output_distance_is_the_laplace_radius():
    """By affine invariance dist(X, W_hat) = ||lambda||; sigma = 2 D / (n eps)."""
    rng = np.random.default_rng(3)
    M = SPD(2)
    pts = np.array([M.exp(np.eye(2), 0.3 * M.random_tangent(np.eye(2), rng)) for _ in range(6)])
    P = SPDFrechetMean([pts[:3], pts[3:]])
    r = dp_frechet_mean(P, eps=0.5, D=1.0, rng=np.random.default_rng(4), n_steps=300)
    assert r.info["sigma"] == pytest.approx(2 * 1.0 / 6 / 0.5, rel=1e-15, abs=0)
    M.check_point(r.x)
    # replay the draws to get lambda: the run key from the Generator, then agent 0's stream of round 0
    g = agent_stream(run_key(np.random.default_rng(4)), 0, 0)
    haar_orthogonal(2, g)
    lam = sample_spd_laplace_eigenvalues(2, r.info["sigma"], g, n_steps=300)
    assert M.dist(r.x, r.info["W_hat"]) == pytest.approx(float(np.linalg.norm(lam)), rel=1e-9, abs=0)
    # the un-noised W_hat is the Frechet mean: zero Riemannian gradient
    W = r.info["W_hat"]
    assert M.norm(W, P.rgrad(W)) < 1e-9


def test_dp_frechet_mean_bad_input():
    rng = np.random.default_rng(0)
    P = SPDFrechetMean([np.array([np.eye(2), 2 * np.eye(2)])])
    with pytest.raises(ValueError, match="dp_frechet_mean: eps"):
        dp_frechet_mean(P, eps=0.0, D=1.0, rng=rng)
    with pytest.raises(ValueError, match="sample_spd_laplace_eigenvalues: sigma"):
        sample_spd_laplace_eigenvalues(2, -1.0, rng)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_laplace_sigma_max_is_where_the_density_stops_decaying(n):
    """Closed form: along the worst direction u = c / ||c|| (c_k = 2k - n - 1) the log-density has
    asymptotic slope -1/sigma + ||c|| / 2, negative just below laplace_sigma_max(n) and positive
    just above (an improper law). Along any other direction the slope is smaller (Cauchy-Schwarz),
    checked on random directions. sqrt 2 for n = 2."""
    c = np.array([2 * k - n - 1 for k in range(1, n + 1)], dtype=float)
    u = c / np.linalg.norm(c)
    smax = laplace_sigma_max(n)
    for factor, sign in ((0.95, -1), (1.05, 1)):
        s = factor * smax
        slope = (spd_laplace_log_density(400 * u, s) - spd_laplace_log_density(200 * u, s)) / 200
        assert math.isclose(slope, -1 / s + np.linalg.norm(c) / 2, rel_tol=1e-6)
        assert np.sign(slope) == sign
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.standard_normal(n)
        v /= np.linalg.norm(v)
        s = 1.0001 * smax
        slope = (spd_laplace_log_density(400 * v, s) - spd_laplace_log_density(200 * v, s)) / 200
        assert slope <= -1 / s + np.linalg.norm(c) / 2 + 1e-9
    assert math.isclose(laplace_sigma_max(2), math.sqrt(2), rel_tol=1e-15)
    assert laplace_sigma_max(1) == math.inf


def test_laplace_law_beyond_its_sigma_max_is_refused():
    """001 section 5.2's DP-FM at D_W = 1, eps = 0.1 and n = 10 has sigma = 2 > sqrt 2: no law."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="sample_spd_laplace_eigenvalues: sigma = 2 is not below 1.41421"):
        sample_spd_laplace_eigenvalues(2, 2.0, rng)
    pts = np.array([np.eye(2)] * 10)
    P = SPDFrechetMean([pts[:5], pts[5:]])
    with pytest.raises(ValueError, match=r"dp_frechet_mean: sigma = 2 D / \(n eps\) = 2 .*needs n > 14.14"):
        dp_frechet_mean(P, eps=0.1, D=1.0, rng=rng, W_hat=np.eye(2))


def test_reference_history_rows_are_f_grad_norm_and_error_at_the_recorded_iterates():
    """History.record, row by row: f(x), ||grad f(x)||_x and the angle to x* at each kept iterate,
    computed here from the problem's own formulas on the returned iterates (sphere PCA: f = -x^T A x
    with A = sum_i p_i Z_i^T Z_i / N_i, grad = -2 P_x A x); every list has one entry per recorded
    round (a mutant that dropped the grad-norm append left an empty list and survived)."""
    import numpy as np

    from prirfed.reference.problems import SpherePCA
    from prirfed.reference.trainers.rgd import rgd

    Zs = [np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0]])]
    P = SpherePCA(Zs)
    r = rgd(P, np.array([1.0, 0.0, 0.0]), 0.1, 6, record_every=2, keep_iterates=True)
    h = r.history
    assert h.rounds == [0, 2, 4, 6]
    assert len(h.f) == len(h.grad_norm) == len(h.dist_to_opt) == len(h.iterates) == 4
    A = sum(p * Z.T @ Z / len(Z) for p, Z in zip(P.p, Zs))
    w, V = np.linalg.eigh(A)
    xs = V[:, -1]
    for x, f, g, e in zip(h.iterates, h.f, h.grad_norm, h.dist_to_opt):
        Ax = A @ x
        assert f == pytest.approx(-(x @ Ax), rel=1e-13, abs=0)
        assert g == pytest.approx(np.linalg.norm(-2.0 * (Ax - (x @ Ax) * x)), rel=1e-12, abs=0)
        assert e == pytest.approx(np.arctan2(np.linalg.norm(x - (x @ xs) * xs), abs(x @ xs)), rel=1e-9, abs=1e-12)


def test_federated_histories_start_at_round_0():
    """RFedSVRG, RFedAvg and RFedProx record x^(0) as round 0, then every record_every rounds and T
    (a mutant labelling the first record round 1 survived)."""
    import numpy as np

    from prirfed.reference.problems import SpherePCA
    from prirfed.reference.trainers.rfed import rfedavg, rfedprox, rfedsvrg

    P = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0]])])
    x0 = np.array([1.0, 0.0, 0.0])
    for f, extra in ((rfedsvrg, ()), (rfedavg, ()), (rfedprox, (0.1,))):  # rfedprox's mu before rng
        r = f(P, x0, 5, 1, 0.1, 1, *extra, np.random.default_rng(0), record_every=2)
        assert r.history.rounds == [0, 2, 4, 5], f.__name__
        assert r.history.f[0] == pytest.approx(P.f(x0), rel=1e-15, abs=0)


def test_real_array_takes_sequences_of_big_integers_and_refuses_a_scalar_object():
    """real_array: a sequence of Python integers beyond int64 (an object array of ndim 1) is a
    sequence of real numbers and is converted; a lone object scalar (a Fraction, an arbitrary
    object) is refused with the one-line message (a mutant swapping the ndim test did the reverse)."""
    from fractions import Fraction

    import numpy as np

    from prirfed.reference.trainers.base import real_array

    np.testing.assert_array_equal(real_array("f", "x", [1, 2**70]), np.array([1.0, 2.0**70]))
    for bad in (Fraction(1, 2), object()):
        with pytest.raises(ValueError, match=r"^f: x must be a real number or a sequence of them \(got "):
            real_array("f", "x", bad)


def test_trainer_settings_refuse_at_their_edges_with_the_distance():
    """Edges of the shared settings checks, each with its one-line message: a step size 0 (eta must be
    positive), an unknown weighting, a batch larger than its agent (b[0] = 3 of N_0 = 2), an agent
    index below 0 and past the last; and sampling k = 0 of n agents is the empty draw, k = -1
    refused (each of these passed a mutant of its check)."""
    import numpy as np

    from prirfed.reference.problems import SpherePCA
    from prirfed.reference.trainers.base import sample_without_replacement
    from prirfed.reference.trainers.local import dp_rsgd_local
    from prirfed.reference.trainers.prirfed import prirfed
    from prirfed.reference.trainers.rfed import rfedavg

    P = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0]])])
    x0 = np.array([1.0, 0.0, 0.0])
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    cases = [
        (lambda: rfedavg(P, x0, 2, 1, 0.0, 1, rng()), r"^rfedavg: step sizes eta must be positive and finite \(got 0\.0\)$"),
        (lambda: rfedavg(P, x0, 2, 1, 0.1, 1, rng(), weighting="bogus"), r"^rfedavg: weighting must be 'uniform' \(002 \(8\)\) or 'size'"),
        (lambda: prirfed(P, x0, 2, 1, 0.1, rng(), b=[3, 1]), r"^prirfed: b\[0\] must be in \[1, 2\] \(got b\[0\] = 3, over by 1\)$"),
        (lambda: dp_rsgd_local(P, -1, x0, 2, 1, 0.1, 1.0, 0.1, rng()), r"^dp_rsgd_local: i must be in \[0, 1\] \(got i = -1, short by 1\)$"),
        (lambda: dp_rsgd_local(P, 2, x0, 2, 1, 0.1, 1.0, 0.1, rng()), r"^dp_rsgd_local: i must be in \[0, 1\] \(got i = 2, over by 1\)$"),
        (lambda: sample_without_replacement(rng(), 3, -1), r"^sample_without_replacement: need 0 <= k <= n \(got k=-1, n=3\)$"),
        (lambda: sample_without_replacement(rng(), 3, 4), r"^sample_without_replacement: need 0 <= k <= n \(got k=4, n=3\)$"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    assert sample_without_replacement(rng(), 3, 0).size == 0
    assert sorted(sample_without_replacement(rng(), 3, 3).tolist()) == [0, 1, 2]


def test_every_trainer_records_round_0_every_record_every_rounds_and_the_last_round():
    """With record_every = 3 and T = 7 every trainer records rounds 0, 3, 6 and 7 (the schedule of
    History: x^(0), then each record_every-th round, and round T whatever its remainder), with the
    iterate of that round: the last record is the returned x. Mutants recording at t - 1 instead
    of t + 1 (PriRFed, DP-RGD) survived the tests that used record_every = 1 or a divisor of T."""
    from prirfed.reference.trainers.prirfed import prirfed
    from prirfed.reference.trainers.rgd import dp_rgd, rgd, rsgd

    P = SpherePCA([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]]), np.array([[0.0, 0.5, 1.0], [0.2, 0.1, 0.9]])])
    x0 = np.array([1.0, 0.0, 0.0])
    runs = {
        "prirfed dp_rsgd": lambda: prirfed(P, x0, 7, 2, 0.1, np.random.default_rng(1), K=2, b=1, sigma=0.1, tau=1.0,
                                           record_every=3, keep_iterates=True),
        "prirfed dp_rsvrg": lambda: prirfed(P, x0, 7, 1, 0.1, np.random.default_rng(1), local="dp_rsvrg", K=1, m=2,
                                            sigma=0.1, tau0=1.0, tau1=1.0, record_every=3, keep_iterates=True),
        "dp_rgd": lambda: dp_rgd(P, x0, 0.1, 7, 2, 0.1, np.random.default_rng(1), tau=1.0, record_every=3,
                                 keep_iterates=True),
        "rsgd": lambda: rsgd(P, x0, 0.1, 7, 2, np.random.default_rng(1), record_every=3, keep_iterates=True),
        "rgd": lambda: rgd(P, x0, 0.1, 7, record_every=3, keep_iterates=True),
        "dp_pgd": lambda: dp_pgd(P, x0, 0.1, 7, 2, 0.1, np.random.default_rng(1), tau=1.0, record_every=3,
                                 keep_iterates=True),
    }
    for name, run in runs.items():
        r = run()
        h = r.history
        assert h.rounds == [0, 3, 6, 7], name
        np.testing.assert_array_equal(h.iterates[0], x0)
        if name != "dp_rgd":  # DP-RGD returns its output option's point (option 1: the last iterate w_T)
            np.testing.assert_array_equal(h.iterates[-1], r.x)
        assert h.f[-1] == pytest.approx(P.f(h.iterates[-1]), rel=1e-14, abs=0), name


def test_rgd_armijo_gives_up_after_60_trials_with_the_last_step_in_the_message():
    """Armijo backtracking (Absil, Mahony, Sepulchre 2008, Algorithm 1) tries a, a/2, ..., a/2^59:
    60 trial steps, then refuses with the last step a 2^-60 in the message. A problem whose f is 0
    at x0 and 1 everywhere else (a cliff: no step decreases it) has no acceptable step, so f is
    evaluated exactly 62 times (the history's record of round 0, f(x) once, then each trial)."""
    from prirfed.reference.trainers.rgd import rgd

    x0 = np.array([0.6, 0.8, 0.0])

    class Cliff(SpherePCA):
        calls = 0

        def f(self, x):
            type(self).calls += 1
            return 0.0 if np.array_equal(x, x0) else 1.0

    P = Cliff([np.array([[1.0, 0.2, 0.1], [0.3, 1.0, 0.0]])])
    with pytest.raises(ValueError, match=re.escape(f"no acceptable step (last a = {2.0**-60:.3e}")):
        rgd(P, x0, 1.0, 3, armijo=True, record_every=100)
    assert Cliff.calls == 1 + 1 + 60


def test_local_and_armijo_settings_refuse_the_first_value_outside_their_range():
    """The edges of the shared checks (the agent index: test_trainer_settings_refuse_at_their_edges_with_the_distance):
    the step size alpha > 0 (-0.5 refused: a negative step would ascend; 0 refused; agent 0 taken),
    Armijo's c and shrink in (0, 1) (1 and 1.5 refused, 0.5 taken)."""
    from prirfed.reference.trainers.local import check_local_args
    from prirfed.reference.trainers.rgd import rgd

    P = SpherePCA([np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 0.5, 0.0]])])
    assert check_local_args("f", P, 0, 1, 0.0, 0.1)[0] == 0
    for alpha in (-0.5, 0.0):
        with pytest.raises(ValueError, match="step size alpha must be positive"):
            check_local_args("f", P, 0, 1, 0.0, alpha)
    x0 = np.array([0.6, 0.8, 0.0])
    for name in ("c", "shrink"):
        for bad in (1.0, 1.5):
            with pytest.raises(ValueError, match=f"the Armijo parameter {name} must be in"):
                rgd(P, x0, 0.1, 1, armijo=True, **{name: bad})
        rgd(P, x0, 0.1, 1, armijo=True, **{name: 0.5})


def test_federated_settings_refuse_a_zero_step_and_an_unknown_weighting():
    """002's eta_i must be positive: eta = 0 (the boundary) and -0.1 are refused, for a scalar and
    for one agent's entry; weighting must be 'uniform' (002 (8)) or 'size' (000 (3.2)): 'sizes'
    (one letter off) is refused with both names in the message, and 'size' is taken."""
    from prirfed.reference.trainers.rfed import federated_settings

    P = SpherePCA([np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 0.5, 0.0]])])
    args = dict(T=2, k=1, tau=1, option=1, aggregation="tangent", record_every=1, keep_iterates=False)
    for eta in (0.0, -0.1, [0.1, 0.0]):
        with pytest.raises(ValueError, match="step sizes eta must be positive"):
            federated_settings("f", P, eta=eta, weighting="uniform", **args)
    with pytest.raises(ValueError, match="weighting must be 'uniform' \\(002 \\(8\\)\\) or 'size'"):
        federated_settings("f", P, eta=0.1, weighting="sizes", **args)
    T, k, etas, taus, _ = federated_settings("f", P, eta=[0.1, 0.2], weighting="size", **args)
    np.testing.assert_array_equal(etas, [0.1, 0.2])


def test_refusals_name_the_function_first_then_the_parameter():
    """Errors say which function, then what was wrong: a negative clipping threshold of DP-RSGD's
    local trainer reads "dp_rsgd_local: clipping threshold tau must be > 0", and a batch size of 0
    for agent 0 of PriRFed reads "prirfed: b[0] ..." (function and parameter in that order)."""
    from prirfed.reference.trainers.local import dp_rsgd_local
    from prirfed.reference.trainers.prirfed import prirfed

    P = SpherePCA([np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), np.array([[0.0, 0.5, 0.0]])])
    x0 = np.array([0.6, 0.8, 0.0])
    with pytest.raises(ValueError, match=r"^dp_rsgd_local: clipping threshold tau must be > 0"):
        dp_rsgd_local(P, 0, x0, 1, 1, 0.1, -1.0, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^prirfed: b\[0\]"):
        prirfed(P, x0, 1, 1, 0.1, np.random.default_rng(0), K=1, b=[0, 1], sigma=0.1, tau=1.0)


def test_dp_rsgd_local_refuses_an_unknown_option_and_dp_rsvrg_runs_on_one_record():
    """Algorithms 2 and 3 output option 1 (last iterate) or 2 (a uniformly drawn one): option 3 is
    refused by DP-RSGD's local trainer. DP-RSVRG draws its inner index l uniformly from the agent's
    N_i records, all of them: an agent with a single record (N_i = 1) runs, with l = 0 every time."""
    from prirfed.reference.trainers.local import dp_rsgd_local, dp_rsvrg_local

    P = SpherePCA([np.array([[1.0, 0.2, 0.0]]), np.array([[0.0, 0.5, 0.0], [0.1, 0.0, 1.0]])])
    x0 = np.array([0.6, 0.8, 0.0])
    with pytest.raises(ValueError, match="dp_rsgd_local: option"):
        dp_rsgd_local(P, 0, x0, 1, 1, 0.1, 1.0, 0.1, np.random.default_rng(0), option=3)
    # sigma = 0 and one record: g is grad f_0 at the anchor and the correction vanishes, so the
    # K m = 6 inner steps are Riemannian gradient steps on f_0: rgd on the one-agent problem
    from prirfed.reference.trainers.rgd import rgd

    x = dp_rsvrg_local(P, 0, x0, 2, 3, 0.0, 10.0, 10.0, 0.1, np.random.default_rng(0))
    want = rgd(SpherePCA([np.array([[1.0, 0.2, 0.0]])]), x0, 0.1, 6, record_every=6).x
    np.testing.assert_allclose(x, want, rtol=0, atol=1e-14)


def test_auto_record_period_counts_each_local_trainers_work():
    """record_every="auto" records every ceil(20 n / w) rounds, w the samples a round reads: DP-RSGD
    reads s K mean(b) (here 1 * 2 * 2 = 4), DP-RSVRG s K (mean(N_i) + 2 m) (1 * 2 * (10 + 6) = 32);
    with n = 20 samples and T = 1000 rounds: periods ceil(400 / 4) = 100 and ceil(400 / 32) = 13."""
    from prirfed.reference.trainers.prirfed import prirfed_local_settings

    rng = np.random.default_rng(0)
    P = SpherePCA([rng.standard_normal((10, 3)), rng.standard_normal((10, 3))])
    b = np.array([2, 2])
    rsgd = prirfed_local_settings("f", P, 1000, 1, "dp_rsgd", b, 2, 3, 1.0, None, None, 1, None, "auto")
    rsvrg = prirfed_local_settings("f", P, 1000, 1, "dp_rsvrg", b, 2, 3, 1.0, None, None, 1, None, "auto")
    assert rsgd[-1] == 100
    assert rsvrg[-1] == 13


def test_prirfed_refuses_a_local_option_other_than_1_or_2_and_laplace_density_is_minus_inf_on_ties():
    """local_option picks Algorithm 2/3's output (1: last iterate, 2: a uniformly drawn one): 3 is
    refused. The eigenvalue density of the Riemannian Laplace law has the factor prod sinh(|l_i -
    l_j| / 2), zero on a tie, so its log is -inf there (and finite off ties)."""
    from prirfed.reference.trainers.baselines import spd_laplace_log_density
    from prirfed.reference.trainers.prirfed import prirfed

    P = SpherePCA([np.array([[1.0, 0.2, 0.0]]), np.array([[0.0, 0.5, 0.0], [0.1, 0.0, 1.0]])])
    with pytest.raises(ValueError, match="prirfed: local_option must be 1 or 2"):
        prirfed(P, np.array([0.6, 0.8, 0.0]), 1, 1, 0.1, np.random.default_rng(0), K=1, b=1, sigma=0.1, tau=1.0,
                local_option=3)
    assert spd_laplace_log_density([0.3, 0.3, 1.0], 1.0) == -math.inf
    # off ties, by hand: -||l|| / sigma + log sinh(0.35) + log sinh(0.5) + log sinh(0.15)
    lam = np.array([0.3, 1.0, 0.0])
    want = -np.linalg.norm(lam) / 2.0 + sum(math.log(math.sinh(a)) for a in (0.35, 0.15, 0.5))
    assert spd_laplace_log_density(lam, 2.0) == pytest.approx(want, rel=1e-14, abs=0)


def test_dp_frechet_mean_records_its_one_release_as_round_0():
    """DP-FM releases once (output perturbation): its history has the single round 0, with f at the
    released point."""
    P = SPDFrechetMean([np.array([np.eye(2), np.diag([2.0, 0.5])]), np.array([np.diag([1.5, 1.5])])])
    r = dp_frechet_mean(P, eps=0.5, D=1.0, rng=np.random.default_rng(4), n_steps=300)
    assert r.history.rounds == [0]
    assert r.history.f[0] == pytest.approx(P.f(r.x), rel=1e-14, abs=0)


def test_local_batch_of_zero_and_unknown_aggregation_are_refused_and_check_generator_returns_its_rng():
    """DP-RSGD's local batch size b is in [1, N_i]: b = 0 is refused with the range (a minimum of 0
    survived the trainers' mutation run); an aggregation other than 'tangent' or 'karcher' is refused by
    PriRFed and RFedAvg before any work (its refusal's deletion survived: the aggregation step then fell
    back silently); check_generator returns the Generator it was given, as documented."""
    from prirfed.reference.trainers.base import check_generator
    from prirfed.reference.trainers.local import dp_rsgd_local
    from prirfed.reference.trainers.prirfed import prirfed
    from prirfed.reference.trainers.rfed import rfedavg

    P = SpherePCA([np.array([[1.0, 0.2, 0.0], [0.0, 0.5, 0.1]]), np.array([[0.0, 0.5, 0.0], [0.1, 0.0, 1.0]])])
    x0 = np.array([0.6, 0.8, 0.0])
    with pytest.raises(ValueError, match=r"^dp_rsgd_local: b must be in \[1, 2\] \(got b = 0, short by 1\)"):
        dp_rsgd_local(P, 0, x0, 1, 0, 0.1, 1.0, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^prirfed: aggregation must be 'tangent' or 'karcher' \(got 'mean'\)"):
        prirfed(P, x0, 2, 1, 0.1, np.random.default_rng(0), aggregation="mean")
    with pytest.raises(ValueError, match=r"^rfedavg: aggregation must be 'tangent' or 'karcher' \(got 'mean'\)"):
        rfedavg(P, x0, 2, 1, 0.1, 1, np.random.default_rng(0), aggregation="mean")
    g = np.random.default_rng(5)
    assert check_generator("w", g) is g
