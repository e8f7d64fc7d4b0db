"""frontier (issue 14): tiny end to end with the reference backend, HSP included (every round
recorded, figure titles naming the data, the CSV columns); the verdict rule against hand-made
samples, and the whole report (verdicts, frontier sizes, diverged repeats) on constructed gap curves
whose excesses are known; the frontier size rule; the clipping thresholds against the per-sample
gradients of the data (so clipping does not bias the non-private direction), HSP's against the
closed form 2 |alpha_ij| dist(x, y_ij); the HSP subsets built with the ridge rule of Figures 5/6;
the full-batch calibration against the exact Gaussian-DP epsilon (Dong, Roth, Su 2022), an oracle
independent of prirfed's accountants.
Proofs note: proofs_notes/experiment_frontier.md.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from prirfed.experiments import frontier as fr
from exp_helpers import gdp_eps, run_tiny, tiny_run_fixture
from exp_helpers import read_csv as _csv

tiny = tiny_run_fixture("frontier", "frontier")


def test_tiny_outputs_every_round_and_titles(tiny):
    out, r = tiny
    c = json.loads((out / "config.json").read_text())["config"]
    for stem in ("frontier", "frontier_sizes", "curves"):
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = _csv(out / "frontier.csv")
    assert set(c["problems"]) == set(fr.PROBLEMS) and "hsp" in {q["problem"] for q in rows}
    # HSP's grid is capped by the training nodes, and its largest size is that cap
    assert c["problems"]["hsp"]["N_i"][-1] == fr.hsp_pool_size(c["hsp"]) // c["N"]
    n_sizes = sum(len(p["N_i"]) for p in c["problems"].values())
    assert len(rows) == n_sizes * len(c["eps"])
    curves = _csv(out / "curves.csv")
    for name, p in c["problems"].items():
        for key in ["inf"] + [repr(float(e)) for e in c["eps"]]:
            sel = [q for q in curves if q["problem"] == name and q["N_i"] == str(p["N_i"][-1]) and q["eps"] == key]
            div = [q for q in rows if q["problem"] == name and q["N_i"] == str(p["N_i"][-1]) and repr(float(q["eps"])) == key
                   and q["verdict"].startswith("not reached (")]
            if not div:  # every round 0..T recorded
                assert [int(q["round"]) for q in sel] == list(range(c["T"] + 1))
    for q in rows:
        assert q["verdict"] in ("reached", "not reached", "inconclusive") or q["verdict"].startswith("not reached (")
        # the calibrated sigma meets eps (upper bound) and the attainable lower bound is below it
        assert float(q["eps_lower"]) <= float(q["eps_upper"]) <= float(q["eps"]) * (1 + 1e-6)
    summary = (out / "summary.md").read_text()
    assert "**Sanity checks of ours**" in summary and "**Claims of the paper**" not in summary
    assert all(ch.kind == "ours" for ch in r["checks"])


def test_figure_titles_name_the_data():
    config = fr.make_config("quick", 0, "reference")
    for name in fr.PROBLEMS:
        assert "data:" in fr._title(config, name)
    assert "WordNet" in fr._title(dict(config, hsp=dict(config["hsp"], data="wordnet")), "hsp") or not \
        fr.hsp_common.closure_available()
    tiny = fr.make_config("tiny", 0, "reference")
    assert "not WordNet" in fr._title(tiny, "hsp") and "FALLBACK" not in fr._title(tiny, "hsp")
    assert "MNIST" in fr._title(dict(config, mnist="mnist"), "sphere_mnist")
    assert "FALLBACK" in fr._title(dict(config, mnist="digits"), "sphere_mnist")


def test_verdict_rule():
    assert fr.verdict([0.01, 0.02, 0.03, 0.02], 0.1)[0] == "reached"
    assert fr.verdict([0.5, 0.6, 0.55, 0.52], 0.1)[0] == "not reached"
    # mean 0.1 exactly: neither side can be decided
    assert fr.verdict([0.0, 0.2, 0.05, 0.15], 0.1)[0] == "inconclusive"
    assert fr.verdict([0.0], 0.1)[0] == "inconclusive"  # one repeat: no spread
    m, se = fr.verdict([1.0, 3.0], 0.1)[1:]
    assert m == 2.0 and math.isclose(se, math.sqrt(2.0) / math.sqrt(2.0))
    # the margin is the one-sided 1% Student t quantile with R - 1 = 3 degrees of freedom (scipy as the
    # oracle): mean 0.05, se 0.01 is reached (0.05 + 4.54 * 0.01 < 0.1), mean 0.06 is not decided
    from scipy import stats

    z3 = stats.t.ppf(0.99, 3)
    assert 4.5 < z3 < 4.6
    e = np.array([-1.0, -1.0, 1.0, 1.0]) * 0.02 / math.sqrt(4.0 / 3.0)  # standard error exactly 0.01
    assert math.isclose(fr.verdict(0.05 + e, 0.1)[2], 0.01)
    assert fr.verdict(0.05 + e, 0.1)[0] == "reached"  # 0.05 + 4.54 * 0.01 = 0.0954 <= 0.1
    assert fr.verdict(0.06 + e, 0.1)[0] == "inconclusive"  # 0.06 + 0.0454 > 0.1 > 0.06 - 0.0454


def test_frontier_size_rule():
    rows = [dict(total=t, verdict=v) for t, v in ((100, "reached"), (300, "not reached"), (1000, "reached"), (3000, "reached"))]
    assert fr.frontier_size(rows) == 1000
    rows[-1]["verdict"] = "inconclusive"
    assert fr.frontier_size(rows) is None
    assert fr.frontier_size([dict(total=10, verdict="reached")]) == 10


def _constructed_results(config, excess):
    """Trial results whose non-private gap is 1 at round 0 and 0 after, and whose private gap is
    1 then e (``excess[(N_i, eps)]``: one e per repeat, or "diverged"): the relative excess of a
    repeat is exactly e."""
    T = config["T"]
    results = []
    for (N_i, eps), es in excess.items():
        for r, e in enumerate(es):
            res = next((q for q in results if q["N_i"] == N_i and q["rep"] == r), None)
            if res is None:
                res = dict(problem="sphere_synthetic", N_i=N_i, rep=r, b=1, tau=1.0, f_star=0.0, redraws=0,
                           runs={"inf": dict(gap=[1.0] + [0.0] * T, sigma=0.0, eps_lower=0.0, eps_upper=math.inf)})
                results.append(res)
            run = dict(sigma=1.0, eps_lower=0.5 * eps, eps_upper=eps)
            run.update(dict(gap=None, diverged="overflow") if e == "diverged" else dict(gap=[1.0] + [e] * T, diverged=""))
            res["runs"][repr(eps)] = run
    return results


def test_report_on_constructed_excesses(tmp_path):
    """report() from gap curves with known excesses: reached (mean + t se <= 0.1), not reached
    (mean - t se > 0.1), inconclusive (the 10% inside the margin), a diverged repeat makes its size
    "not reached", and the frontier is the smallest size from which on every larger one is reached."""
    config = dict(fr.make_config("tiny", 0, "reference"), eps=[1.0, 3.0], repeats=4)
    config["problems"] = {"sphere_synthetic": dict(tau=1.0, alpha=1.0, N_i=[10, 30, 100])}
    low, high, mid = [0.01, 0.02, 0.03, 0.02], [0.5, 0.6, 0.55, 0.52], [0.0, 0.2, 0.05, 0.15]
    excess = {(10, 1.0): high, (30, 1.0): mid, (100, 1.0): low,
              (10, 3.0): low, (30, 3.0): low[:3] + ["diverged"], (100, 3.0): low}
    checks = fr.report(config, _constructed_results(config, excess), tmp_path)
    rows = {(int(q["N_i"]), float(q["eps"])): q for q in _csv(tmp_path / "frontier.csv")}
    assert rows[(10, 1.0)]["verdict"] == "not reached"
    assert rows[(30, 1.0)]["verdict"] == "inconclusive"
    assert rows[(100, 1.0)]["verdict"] == "reached" and rows[(10, 3.0)]["verdict"] == "reached"
    assert rows[(30, 3.0)]["verdict"] == "not reached (1 of 4 diverged)"
    assert math.isclose(float(rows[(100, 1.0)]["excess_mean"]), 0.02, rel_tol=1e-12)
    assert math.isclose(float(rows[(10, 1.0)]["excess_mean"]), np.mean(high), rel_tol=1e-12)
    summary = {float(q["eps"]): q for q in _csv(tmp_path / "frontier_summary.csv")}
    # eps 1: only the largest size (N * N_i = 4 * 100) is reached; eps 3: reached at 10 and 100 but
    # not at 30 (a diverged repeat), so the frontier is 400, not 40
    assert summary[1.0]["frontier_total"] == "400" and summary[3.0]["frontier_total"] == "400"
    assert [ch.shown for ch in checks if "meets its eps" in ch.claim] == [True]
    # both eps reached (400, 400): the monotonicity check compares them
    assert [ch.shown for ch in checks if "does not grow with eps" in ch.claim] == [True]
    for stem in ("frontier", "frontier_sizes", "curves"):
        assert (tmp_path / f"{stem}.png").is_file()


@pytest.mark.parametrize("reached_at, expect", [((), None), ((1.0,), None), ((1.0, 3.0), True)])
def test_monotonicity_check_needs_two_reached_eps(tmp_path, reached_at, expect):
    """"The frontier size does not grow with eps" compares reached sizes: with fewer than two eps
    reached it is inconclusive (None), not a vacuous yes (the quick HSP row reaches no eps)."""
    config = dict(fr.make_config("tiny", 0, "reference"), eps=[1.0, 3.0], repeats=4)
    config["problems"] = {"sphere_synthetic": dict(tau=1.0, alpha=1.0, N_i=[10, 30])}
    low, high = [0.01, 0.02, 0.03, 0.02], [0.5, 0.6, 0.55, 0.52]
    excess = {(n, e): (low if e in reached_at else high) for n in (10, 30) for e in (1.0, 3.0)}
    checks = fr.report(config, _constructed_results(config, excess), tmp_path)
    assert [ch.shown for ch in checks if "does not grow with eps" in ch.claim] == [expect]


def test_hsp_subsets_follow_figures_5_and_6():
    """subset_problem on the very agents of Figures 5/6's problem gives that problem back (same
    features, ridge rule gamma = lam N_i, width and kernel: the weights alpha_ij(w) agree), and the
    pool is the problem's training nodes."""
    from prirfed.experiments import hsp_common as hc

    config = fr.make_config("tiny", 0, "reference")
    st = hc.build_setting(config["hsp"])
    p = st["problem"]
    q = hc.subset_problem(config["hsp"], p.W, p.Y, p.w)
    assert q.gamma == p.gamma == config["hsp"]["lam"] * p.N_i[0]
    for a, b in zip(p.alpha, q.alpha):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)
    W, Y, w = hc.training_pool(config["hsp"])
    assert W.shape[0] == Y.shape[0] == sum(p.N_i) and np.array_equal(w, p.w)
    with pytest.raises(ValueError, match="subset_problem: the agents must hold equally many nodes"):
        hc.subset_problem(config["hsp"], [W[:3], W[3:5]], [Y[:3], Y[3:5]], w)


def test_hsp_clipping_threshold_is_the_gradient_bound():
    """HSP's tau = L_f(M) = 2 max|alpha_ij| M bounds every per-sample gradient
    grad f_ij(x) = -2 alpha_ij Log_x(y_ij) (norm 2 |alpha_ij| dist(x, y_ij), closed form) for x within
    distance M of y_ij, and is attained at the largest |alpha_ij| with dist = M."""
    config = fr.make_config("tiny", 0, "reference")
    rng = np.random.default_rng(5)
    problem, f_star, _ = fr._problem("hsp", 4, 8, config, rng)
    M_dist = config["hsp"]["M"]
    tau = problem.L_f(M_dist)
    H = problem.manifold
    worst = 0.0
    for i in range(problem.N):
        for j in range(problem.N_i[i]):
            y = problem.Y[i][j]
            v = H.proj(y, rng.standard_normal(y.size))
            x = H.exp(y, rng.uniform(0, M_dist) * v / H.norm(y, v))  # dist(x, y) <= M
            g = H.norm(x, problem.grad_sample(x, i, j))
            assert math.isclose(g, 2 * abs(problem.alpha[i][j]) * H.dist(x, y), rel_tol=1e-8, abs_tol=1e-14)
            worst = max(worst, g)
    assert worst <= tau * (1 + 1e-12)
    i, j = max(((i, j) for i in range(problem.N) for j in range(problem.N_i[i])), key=lambda ij: abs(problem.alpha[ij[0]][ij[1]]))
    y = problem.Y[i][j]
    v = H.proj(y, rng.standard_normal(y.size))
    x = H.exp(y, M_dist * v / H.norm(y, v))
    assert math.isclose(H.norm(x, problem.grad_sample(x, i, j)), tau, rel_tol=1e-8)
    assert f_star <= problem.f(np.concatenate(problem.Y)[0])  # f* is the minimum (at most f at a data point)


@pytest.mark.parametrize("name", ["sphere_synthetic", "sphere_mnist", "spd_frechet", "stiefel_kpca"])
def test_clipping_threshold_bounds_the_per_sample_gradients(name):
    """tau of PROBLEMS is at least every per-sample gradient norm (so clipping leaves the non-private
    direction unbiased) and is attained or nearly (a larger tau only adds noise): the closed forms of
    the proofs note, 2 |a| sqrt(1 - a^2) <= 1 on the sphere (a = z^T x, unit z) and
    sqrt(1 - c^2) c <= 1/2 on Stiefel, equality at a = c = 1/sqrt(2); dist(X, Z) <= 2 D_W on SPD."""
    config = fr.make_config("tiny", 0, "reference")
    rng = np.random.default_rng(3)
    problem, _, _ = fr._problem(name, 3, 20, config, rng)
    M = problem.manifold
    tau = fr.PROBLEMS[name]["tau"]
    if name == "spd_frechet":
        points = list(problem.Z[0][:5])  # points of the data ball
    else:
        points = [M.random_point(rng) for _ in range(5)]
    worst = max(M.norm(x, problem.grad_sample(x, i, j)) for x in points for i in range(3) for j in range(20))
    assert worst <= tau * (1 + 1e-12)
    if name.startswith("sphere"):
        z = problem.Z[0][0]
        w = rng.standard_normal(z.size)
        w -= (w @ z) * z
        x = (z + w / np.linalg.norm(w)) / np.sqrt(2.0)  # z^T x = 1/sqrt(2)
        assert math.isclose(M.norm(x, problem.grad_sample(x, 0, 0)), tau, rel_tol=1e-9)
    elif name == "stiefel_kpca":
        u = problem.Z[0][0] * math.sqrt(20)  # the unit record
        q, _ = np.linalg.qr(np.column_stack([u, rng.standard_normal((u.size, 2))]))
        X = np.column_stack([(q[:, 0] + q[:, 1]) / np.sqrt(2.0), q[:, 2]])  # ||X^T u|| = 1/sqrt(2)
        assert math.isclose(M.norm(X, problem.grad_sample(X, 0, 0)), tau, rel_tol=1e-9)
    else:
        assert worst >= 0.2 * tau


def test_spiked_records_unit_norm_and_leading_direction():
    Z = fr.spiked_records(20000, 6, [9.0], np.random.default_rng(0))
    assert np.allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=0, atol=1e-14)
    w, V = np.linalg.eigh(Z.T @ Z / Z.shape[0])
    assert abs(V[0, -1]) > 0.999  # E[z z^T] has e_1 as leading eigenvector (symmetry of the other axes)


def test_full_batch_calibration_matches_exact_gdp(tmp_path):
    """With b = N_i and s = N, a run is T K Gaussian steps with sensitivity 2 tau / N_i, i.e. exactly
    mu-GDP with mu = sqrt(T K) 2 tau / (N_i sigma): the calibrated sigma must give the target eps
    by the exact GDP formula (up to the calibration's tolerance and the PLD's discretisation)."""
    config = fr.make_config("tiny", 0, "reference")
    for eps in (0.3, 3.0):
        sigma = fr.calibrated_sigma(eps, 1e-5, 10, 10, config["T"], config["K"], 2.0, 50, 50, "best")
        mu = math.sqrt(config["T"] * config["K"]) * 2 * 2.0 / (50 * sigma)
        e = gdp_eps(mu, 1e-5)
        assert eps * (1 - 2e-3) <= e <= eps * (1 + 1e-6)


def test_bad_configuration_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="frontier: problems.sphere_synthetic.N_i must be an increasing list"):
        run_tiny("frontier", tmp_path / "a", overrides=dict(problems=dict(sphere_synthetic=dict(tau=2.0, alpha=1.0, N_i=[30, 10]))))
    with pytest.raises(ValueError, match="frontier: accountant must be one of"):
        run_tiny("frontier", tmp_path / "b", overrides=dict(accountant="moments"))


def test_hsp_smoothness_bounds_every_agents_curvature_and_is_attained_by_one_node():
    """hsp_smoothness(problem, M) = max_i (2 zeta(-1, M) / N_i) sum_j |alpha_ij| bounds the second
    derivative of every agent's f_i along unit-speed geodesics through points near the data
    (independent truth: central second differences of f_i(Exp_x(t v)), t = 1e-4, error ~1e-6); for
    one node with weight 1 the tangential curvature 2 M coth M at distance M attains the bound."""
    from types import SimpleNamespace

    from prirfed.reference.manifolds import Lorentz
    config = fr.make_config("tiny", 0, "reference")
    rng = np.random.default_rng(11)
    problem, _, _ = fr._problem("hsp", 4, 8, config, rng)
    M = config["hsp"]["M"]
    L = fr.hsp_smoothness(problem, M)
    H = problem.manifold
    worst = 0.0
    for i in range(problem.N):
        Y = problem.Y[i]
        f_i = lambda x: sum(float(a) * H.dist(x, y) ** 2 for a, y in zip(problem.alpha[i], Y)) / len(Y)
        for _ in range(20):
            x = Y[int(rng.integers(len(Y)))]
            x = H.exp(x, 0.3 * H.proj(x, rng.standard_normal(x.size)))
            if max(H.dist(x, y) for y in Y) > M:
                continue
            u = H.proj(x, rng.standard_normal(x.size))
            u = u / H.norm(x, u)
            t = 1e-4
            d2 = (f_i(H.exp(x, t * u)) - 2 * f_i(x) + f_i(H.exp(x, -t * u))) / t ** 2
            worst = max(worst, abs(d2))
    assert 0 < worst <= L * (1 + 1e-4)
    # one node, weight 1: f(x) = dist^2(x, y); at dist M in a direction orthogonal to the geodesic to y
    H2 = Lorentz(2)
    y = np.array([1.0, 0.0, 0.0])
    x = H2.exp(y, np.array([0.0, M, 0.0]))  # (cosh M, sinh M, 0)
    single = SimpleNamespace(alpha=[np.array([1.0])])
    assert math.isclose(fr.hsp_smoothness(single, M), 2 * M / math.tanh(M), rel_tol=1e-12)
    u = np.array([0.0, 0.0, 1.0])  # tangent at x (orthogonal to x's spatial direction), unit
    t = 1e-4
    g = lambda z: H2.dist(z, y) ** 2
    d2 = (g(H2.exp(x, t * u)) - 2 * g(x) + g(H2.exp(x, -t * u))) / t ** 2
    assert math.isclose(d2, 2 * M / math.tanh(M), rel_tol=1e-5)
    with pytest.raises(ValueError, match="hsp_smoothness: M must be a positive finite number"):
        fr.hsp_smoothness(problem, 0.0)
