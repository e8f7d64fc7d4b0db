"""The experiment framework, session 2 (issue 7): ``reproduce all`` and its index.md, ``--calibrate``,
Ctrl-C and ``--resume`` on a tiny stand-in experiment, and serial / process pool / Dask
LocalCluster giving byte-identical CSVs. Proofs note: proofs_notes/experiments.md.

The stand-in experiments here are registered with ``monkeypatch`` (never left in the registry)
and run serially, so their closures need no pickling; the executor test runs a ``prirfed run``
configuration, whose ``run_trial`` is a module-level function that worker processes import.
"""

from __future__ import annotations

import io
import json
import math
import sys

import numpy as np
import pytest
from scipy import optimize, stats

import prirfed.experiments as experiments
from prirfed import cli
from prirfed.experiments.custom import experiment_from_toml
from prirfed.experiments.framework import Check, Experiment, make_executor, reproduce, reproduce_all
from exp_helpers import read_csv


_csv = read_csv


# ----------------------------------------------------------------------------- stand-in experiments


def _tiny(name, *, fail=False, calibrate=None, interrupt_at=None, counter=None, n_trials=4):
    """An experiment of ``n_trials`` trials, each one standard normal draw of its own generator;
    report writes values.csv and claims 'the draws are finite'."""

    def make_config(mode, seed, backend):
        cfg = dict(mode=mode, seed=seed, backend=backend, n=n_trials)
        if calibrate is not None:
            cfg["calibrate"] = calibrate
        return cfg

    def trial_specs(config):
        return [dict(k=k) for k in range(config["n"])]

    def run_trial(config, spec, seq):
        if counter is not None:
            counter.append(spec["k"])
            if interrupt_at is not None and len(counter) == interrupt_at + 1:
                raise KeyboardInterrupt
        if fail:
            raise RuntimeError(f"{name} breaks | on purpose")
        return dict(x=float(np.random.default_rng(seq).standard_normal()), calibrate=bool(config.get("calibrate")))

    def report(config, results, out):
        (out / "values.csv").write_text("k,x\n" + "".join(f"{k},{r['x']!r}\n" for k, r in enumerate(results)))
        return [Check("the draws are finite", all(math.isfinite(r["x"]) for r in results), "values.csv"),
                Check("an impossible claim", False, "none")]

    return Experiment(name=name, description=f"stand-in {name}", source="tests", make_config=make_config,
                      trial_specs=trial_specs, run_trial=run_trial, report=report)


# ----------------------------------------------------------------------------- reproduce all


def test_reproduce_all_writes_every_experiment_and_an_index(tmp_path, registry, capsys):
    """Three experiments, the middle one failing: the others' results are kept, index.md has one
    row each (claims shown / total, link, time, status with the error), a total line, and the CLI
    exits 1 after running everything."""
    registry.update({"a-one": _tiny("a-one"), "b-broken": _tiny("b-broken", fail=True), "c-three": _tiny("c-three")})
    buf = io.StringIO()
    rc = cli.main(["reproduce", "all", "--tiny", "--out", str(tmp_path / "res"), "--no-progress"], out=buf)
    assert rc == 1
    err = capsys.readouterr().err
    assert "1 experiment(s) failed: b-broken" in err and len(err.strip().splitlines()) == 1
    assert "2 of 3 experiments ran; 2 of 4 claims shown" in buf.getvalue()
    for nm in ("a-one", "c-three"):
        assert (tmp_path / "res" / nm / "summary.md").exists()
        assert len(_csv(tmp_path / "res" / nm / "values.csv")) == 4
    index = (tmp_path / "res" / "index.md").read_text().splitlines()
    rows = [ln for ln in index if ln.startswith("| ") and not ln.startswith("| experiment")]
    assert [r.split(" | ")[0][2:] for r in rows] == ["a-one", "b-broken", "c-three"]
    cells = {r.split(" | ")[0][2:]: [c.strip() for c in r.strip("|").split(" | ")] for r in rows}
    assert cells["a-one"][2] == "1 / 2" and cells["a-one"][3] == "[a-one/summary.md](a-one/summary.md)"
    assert float(cells["a-one"][4]) >= 0 and cells["a-one"][5] == "ok"
    assert cells["b-broken"][2] == "-" and "**failed**: RuntimeError: b-broken breaks \\| on purpose" in cells["b-broken"][5]
    total = [ln for ln in index if ln.startswith("**Total**")]
    assert total and total[0].startswith("**Total**: 2 of 4 claims shown by 2 experiments; 1 failed;")


def test_reproduce_all_all_ok_exits_0_and_default_names(tmp_path, registry):
    registry.update({"a-one": _tiny("a-one"), "c-three": _tiny("c-three")})
    r = reproduce_all(tmp_path / "res", mode="tiny", backend="reference", progress=False)
    assert r["failed"] == [] and [row["name"] for row in r["rows"]] == ["a-one", "c-three"]
    assert cli.main(["reproduce", "all", "--tiny", "--out", str(tmp_path / "r2"), "--no-progress"], out=io.StringIO()) == 0


def test_reproduce_all_progress_bar_over_experiments(tmp_path, registry, capsys):
    registry.update({"a-one": _tiny("a-one"), "c-three": _tiny("c-three")})
    reproduce_all(tmp_path / "res", mode="tiny", backend="reference", progress=True)
    err = capsys.readouterr().err
    assert "experiments" in err and "2/2" in err and "a-one" in err


def test_reproduce_all_refuses_bad_arguments_before_running(tmp_path, registry):
    registry.update({"a-one": _tiny("a-one")})
    with pytest.raises(ValueError, match="reproduce_all: mode must be one of"):
        reproduce_all(tmp_path / "res", mode="huge", progress=False)
    assert not (tmp_path / "res").exists()
    with pytest.raises(ValueError, match="unknown experiment 'zzz'"):
        reproduce_all(tmp_path / "res", names=["zzz"], progress=False)


# ----------------------------------------------------------------------------- --calibrate


def test_calibrate_sets_the_setting_or_refuses_a_non_private_experiment(tmp_path, registry, capsys):
    registry.update({"priv": _tiny("priv", calibrate=False), "plain": _tiny("plain")})
    r = reproduce("priv", tmp_path / "p", mode="tiny", progress=False, calibrate=True)
    assert r["config"]["calibrate"] is True
    assert json.loads((tmp_path / "p" / "config.json").read_text())["config"]["calibrate"] is True
    with pytest.raises(ValueError, match="experiment plain is not private \\(no calibrate setting\\)"):
        reproduce("plain", tmp_path / "q", mode="tiny", progress=False, calibrate=True)
    rc = cli.main(["reproduce", "plain", "--tiny", "--calibrate", "--out", str(tmp_path / "q"), "--no-progress"], out=io.StringIO())
    assert rc == 2 and "experiment plain is not private (no calibrate setting)" in capsys.readouterr().err
    # reproduce all --calibrate: calibrates the private ones, runs the others as they are, says so
    res = reproduce_all(tmp_path / "all", mode="tiny", progress=False, calibrate=True)
    assert res["failed"] == []
    index = (tmp_path / "all" / "index.md").read_text()
    assert "ok (calibrated)" in index and "ok (not private: run without calibration)" in index


# ----------------------------------------------------------------------------- Ctrl-C and --resume


def test_keyboard_interrupt_keeps_finished_trials_and_resume_runs_the_rest(tmp_path, registry):
    """Ctrl-C (KeyboardInterrupt) in trial 2: trials 0 and 1 are on disk; --resume runs only trials
    2 and 3 and the CSV equals that of an uninterrupted run."""
    calls: list = []
    registry["stand-in"] = _tiny("stand-in", interrupt_at=2, counter=calls)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        reproduce("stand-in", out, mode="tiny", progress=False)
    assert sorted(p.name for p in (out / "trials").glob("trial_*.json")) == ["trial_0000.json", "trial_0001.json"]
    assert not (out / "values.csv").exists()
    again: list = []
    registry["stand-in"] = _tiny("stand-in", counter=again)
    r = reproduce("stand-in", out, mode="tiny", progress=False, resume=True)
    assert (r["ran"], r["skipped"]) == (2, 2) and again == [2, 3]
    reproduce("stand-in", tmp_path / "whole", mode="tiny", progress=False)
    assert (out / "values.csv").read_bytes() == (tmp_path / "whole" / "values.csv").read_bytes()


def test_cli_ctrl_c_exits_130_with_a_resume_hint(tmp_path, registry, capsys):
    registry["stand-in"] = _tiny("stand-in", interrupt_at=1, counter=[])
    rc = cli.main(["reproduce", "stand-in", "--tiny", "--out", str(tmp_path / "r"), "--no-progress"], out=io.StringIO())
    assert rc == 130 and "rerun with --resume" in capsys.readouterr().err
    assert len(list((tmp_path / "r" / "trials").glob("trial_*.json"))) == 1


def test_resume_with_another_configuration_is_a_clear_cli_error(tmp_path, registry, capsys):
    registry["stand-in"] = _tiny("stand-in")
    out = str(tmp_path / "r")
    assert cli.main(["reproduce", "stand-in", "--tiny", "--out", out, "--no-progress"], out=io.StringIO()) == 0
    rc = cli.main(["reproduce", "stand-in", "--tiny", "--out", out, "--no-progress", "--resume", "--seed", "5"], out=io.StringIO())
    err = capsys.readouterr().err
    assert rc == 2 and "holds a different configuration" in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- executors


_EXEC_TOML = {
    "problem": {"kind": "sphere_pca"},
    "data": {"source": "eigengap", "N": 3, "N_i": 8, "d": 4},
    "trainer": {"name": "prirfed", "T": 5, "s": 2, "alpha": 0.5, "K": 2, "b": 4, "sigma": 0.01, "tau": 1.0},
    "privacy": {"eps": 1.0, "delta": 1e-5},
    "run": {"seed": 11, "repeats": 4},
}


def test_serial_process_pool_and_dask_local_cluster_give_identical_csvs(tmp_path):
    """Trial i's seed is child i of SeedSequence(seed).spawn(n), so the executor cannot matter:
    serial, ProcessPool(2) and a Dask LocalCluster (2 worker processes, 1 thread each) give
    byte-identical CSVs for a 4-trial PriRFed run (reference backend)."""
    distributed = pytest.importorskip("distributed", reason="the test extra installs distributed")
    exp = experiment_from_toml(_EXEC_TOML)
    kw = dict(mode="full", seed=11, backend="reference", progress=False)
    a = reproduce(exp, tmp_path / "serial", **kw)
    reproduce(exp, tmp_path / "pool", workers=2, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        d = reproduce(exp, tmp_path / "dask", dask_scheduler=cluster.scheduler_address, **kw)
    assert d["ran"] == 4
    csvs = [f for f in a["files"] if f.endswith(".csv")]
    assert csvs == ["curves.csv", "privacy.csv"]
    for f in csvs:
        ref = (tmp_path / "serial" / f).read_bytes()
        assert ref == (tmp_path / "pool" / f).read_bytes(), f
        assert ref == (tmp_path / "dask" / f).read_bytes(), f
    # and the repeats differ from each other (the comparison is not between constant outputs)
    assert float(_csv(tmp_path / "serial" / "curves.csv")[-1]["f_std"]) > 0


def test_missing_distributed_gives_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ValueError, match=r"pip install 'prirfed\[dask\]'"):
        make_executor(1, "tcp://127.0.0.1:1")


def test_bad_dask_address_is_a_value_error():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match="dask_scheduler must be a non-empty address"):
        make_executor(1, "  ")
    with pytest.raises(ValueError, match="give workers \\(local processes\\) or dask_scheduler"):
        make_executor(2, "tcp://127.0.0.1:1")


# ----------------------------------------------------------------------------- calibration, known answer


def _gdp_exact_eps(mu, delta):
    """Optimal eps of mu-GDP at delta (Dong, Roth, Su 2022, Cor. 2.13), by root finding."""
    f = lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta  # noqa: E731
    return optimize.brentq(f, 0.0, 500.0, xtol=1e-12)


def _rdp_classic_eps(z, T, delta):
    """Classic RDP conversion (Mironov 2017, Prop. 3) of T Gaussians with noise multiplier z:
    min over alpha > 1 of T alpha / (2 z^2) + log(1/delta) / (alpha - 1) (an upper bound)."""
    a = 1.0 + math.sqrt(2.0 * z * z * math.log(1 / delta) / T)  # the minimiser of the smooth bound
    return T * a / (2 * z * z) + math.log(1 / delta) / (a - 1)


def test_calibrated_dp_rgd_sigma_brackets_the_target(tmp_path):
    """prirfed run --calibrate with full-batch DP-RGD (b = n, clip tau): the run is T Gaussian
    mechanisms of sensitivity 2 tau / n, noise multiplier z = sigma n / (2 tau). At the calibrated
    sigma the target eps must lie between the exact GDP eps (mu = sqrt(T) / z; no accountant can
    certify less) and the classic RDP conversion (which the accountant's conversion improves on),
    and 0.99 sigma must not be enough for the exact GDP eps to be below the classic bound."""
    doc = {"problem": {"kind": "sphere_pca"}, "data": {"source": "eigengap", "N": 2, "N_i": 10, "d": 4},
           "trainer": {"name": "dp_rgd", "alpha": 0.1, "T": 6, "b": 20, "sigma": 1.0, "tau": 0.5},
           "privacy": {"eps": 1.5, "delta": 1e-5}, "run": {"seed": 3, "repeats": 1}}
    exp = experiment_from_toml(doc)
    r = reproduce(exp, tmp_path / "c", seed=3, backend="reference", progress=False, calibrate=True)
    row = _csv(tmp_path / "c" / "privacy.csv")[0]
    sigma, eps_rig = float(row["sigma"]), float(row["eps_rigorous"])
    assert row["calibrate"] == "True"
    z = sigma * 20 / (2 * 0.5)
    assert _gdp_exact_eps(math.sqrt(6) / z, 1e-5) <= 1.5 <= _rdp_classic_eps(z, 6, 1e-5)
    assert eps_rig <= 1.5 * (1 + 1e-9) and eps_rig >= 1.5 * (1 - 1e-3)
    shown = {c.claim.split(" by ")[0]: c.shown for c in r["checks"]}
    assert shown["the run is (1.5, 1e-05)-DP"] is True
