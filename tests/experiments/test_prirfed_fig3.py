"""prirfed-fig3 (000 Fig. 3, SPD Frechet mean, synthetic Wishart data): tiny end to end with the
reference backend; the optimum against the closed form for commuting data; the sigma and privacy
columns against hand formulas and the exact Gaussian-DP epsilon; bad configurations fail clearly.
Proofs note: proofs_notes/experiment_prirfed_fig3.md.
"""

from __future__ import annotations

import functools
import json
import math
import re

import numpy as np
import pytest

from prirfed.experiments.prirfed_fig3 import make_config, run_spd_trial
from exp_helpers import gdp_eps, run_tiny, tiny_run_fixture
from exp_helpers import read_csv as _csv




_run = functools.partial(run_tiny, "prirfed-fig3")


def _gdp_eps(mu, delta):
    return gdp_eps(mu, delta, hi=200.0)


tiny = tiny_run_fixture("prirfed-fig3", "fig3")


def test_tiny_outputs_exist_and_parse(tiny):
    out, r = tiny
    cfg = json.loads((out / "config.json").read_text())
    c = cfg["config"]
    assert cfg["experiment"] == "prirfed-fig3" and cfg["n_trials"] == c["repeats"]
    assert (out / "fig3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "fig3.pdf").read_bytes()[:5] == b"%PDF-"
    rows = _csv(out / "curves.csv")
    assert list(rows[0]) == ["N", "N_i", "algorithm", "round", "excess_mean", "excess_std", "f_mean", "f_std", "f_star_mean"]
    n_rec = c["T"] // c["record_every"] + 1
    assert len(rows) == len(c["scenarios"]) * len(c["algorithms"]) * n_rec
    for row in rows:
        # x* minimises f (geodesically strongly convex), so every excess risk is >= 0 up to rounding
        assert float(row["excess_mean"]) >= -1e-10
        assert math.isclose(float(row["f_mean"]) - float(row["f_star_mean"]), float(row["excess_mean"]), rel_tol=1e-9, abs_tol=1e-12)
    summary = (out / "summary.md").read_text()
    assert "| paper's claim | reproduced |" in summary
    assert len(r["checks"]) == len(c["scenarios"]) + 2


def test_sigma_and_privacy_columns(tiny):
    """sigma_i of 000 Section 6 by hand (o = o~ = 1); the rigorous eps of one agent's full-batch
    DP-RSGD (K Gaussian steps, sensitivity 2 tau / N_i) lies between the exact GDP eps with
    mu = sqrt(K) 2 tau / (N_i sigma) (a lower bound for every sound accountant) and 1.5 times it."""
    out, _ = tiny
    c = json.loads((out / "config.json").read_text())["config"]
    L = math.log(1 / c["delta"])
    rows = _csv(out / "privacy.csv")
    assert len(rows) == len(c["scenarios"]) * 2
    for row in rows:
        N_i = int(row["N_i"])
        if row["algorithm"] == "dp_rsgd":
            want = math.sqrt(c["K"] * L) * c["tau"] / (N_i * c["eps"])
            mu = math.sqrt(c["K"]) * 2 * c["tau"] / (N_i * want)
            exact = _gdp_eps(mu, c["delta"])
            assert exact <= float(row["eps_local_rigorous"]) <= 1.5 * exact
        else:
            want = math.sqrt(c["m"] * c["K"] * L) * c["tau"] / (N_i * c["eps"])
        assert math.isclose(float(row["sigma_mean"]), want, rel_tol=1e-12)
        assert float(row["eps_rigorous"]) > 0 and float(row["eps_paper"]) > 0


def test_optimum_matches_closed_form_for_commuting_data():
    """Commuting (diagonal) samples: the affine-invariant Frechet mean is exp(mean log Z) and
    f* = mean_j ||log Z_j - mean log Z||_F^2 (dist(X, Z) = ||log X - log Z||_F for commuting X, Z)."""
    cfg = make_config("tiny", 0, "reference")
    cfg.update(T=1, algorithms=["dp_rsgd"])
    rng = np.random.default_rng(5)
    logs = rng.normal(size=(cfg["n_total"], 2)) * 0.4

    def samples(_rng):
        return np.array([np.diag(np.exp(v)) for v in logs])

    res = run_spd_trial(cfg, np.random.SeedSequence(1), samples, "prirfed-fig3")
    for N, N_i in cfg["scenarios"]:
        L = logs[: N * N_i]
        f_star = float(np.mean(np.sum((L - L.mean(axis=0)) ** 2, axis=1)))
        assert math.isclose(res["runs"][f"{N}x{N_i}/f_star"], f_star, rel_tol=1e-10)
        assert res["runs"][f"{N}x{N_i}/optimum_grad_norm"] <= 1e-11


def test_calibrate_gives_the_stated_local_eps(tmp_path):
    """--calibrate: the local DP-RSGD is (eps, delta)-DP by the accountant, and tight (bisection rtol 1e-6)."""
    _run(tmp_path / "cal", overrides=dict(calibrate=True, algorithms=["dp_rsgd"], T=1, repeats=1))
    rows = _csv(tmp_path / "cal" / "privacy.csv")
    for row in rows:
        assert 0.15 * (1 - 1e-3) <= float(row["eps_local_rigorous"]) <= 0.15


def test_divergent_run_is_a_clear_error(tmp_path):
    """--calibrate with the RDP accountant makes DP-RSVRG's sigma at N_i = 20 about 134 (ERRATA E6):
    noise steps of length ~ alpha sigma sqrt(3) = 11.6 drive the iterate out of the double-precision
    SPD matrices; the experiment says which run and why instead of failing deep in the sampler."""
    with pytest.raises(ValueError, match=r"prirfed-fig3: the dp_rsvrg run of scenario \(N, N_i\) = \(2, 20\) with sigma = 13\d\.\d"):
        _run(tmp_path / "div", overrides=dict(calibrate=True, accountant="rdp", algorithms=["dp_rsvrg"], repeats=1))


@pytest.mark.parametrize("overrides, message", [
    (dict(scenarios=[[0, 10]]), "each scenario must be [N, N_i] with positive integers"),
    (dict(scenarios=[[5, 10]]), "needs N * N_i = 50 samples, only 40 available"),
    (dict(algorithms=["dp_rsgd", "sgd"]), "algorithms must be a non-empty list"),
    (dict(eps=-1.0), "eps must be a positive finite number"),
    (dict(delta=1.5), "delta must lie in (0, 1)"),
    (dict(calibrate="yes"), "calibrate must be a boolean"),
    (dict(T=0), "T must be an integer >= 1"),
    (dict(D_W=0), "D_W must be a positive finite number"),
    (dict(s=3), "s = 3 exceeds the number of agents N = 2"),
])
def test_bad_configuration_is_a_clear_error(tmp_path, overrides, message):
    with pytest.raises(ValueError, match="prirfed-fig3: .*" + re.escape(message)):
        _run(tmp_path / "bad", overrides=overrides)
