"""Every CLI failure is one line naming what and where, exit 2 for bad input and 1 for a runtime
failure (issue 19; prirfed/cli.py main and describe_failure): TOML values no setting takes (dates,
booleans and numeric strings for numbers, integers beyond 64 bits), a huge T, a killed worker
process, --set keys the trials would not honour, ``reproduce all`` into a non-empty folder, and
``--debug`` / ``PRIRFED_DEBUG`` for the traceback. Proofs note: proofs_notes/experiments.md.
"""

from __future__ import annotations

import inspect
import io
import json
import math

import numpy as np
import pytest

import prirfed.experiments as experiments
from prirfed import cli
from prirfed.experiments.core import Check, Experiment
from prirfed.experiments.custom import TRAINER_KEY_KINDS, TRAINERS, experiment_from_toml, trainer_keys
from prirfed.experiments.framework import reproduce
from cli_helpers import assert_one_line_error, run_cli, small_doc, snapshot, toml_text, write_toml
import worker_helpers

RUN = ["--backend", "reference", "--no-progress"]


def _with(section: str, **changes) -> dict:
    doc = small_doc()
    doc[section] = {**doc[section], **changes}
    return doc


# ----------------------------------------------------------------------------- TOML values


@pytest.mark.parametrize("text_change, message", [
    (("T = 3", "T = 1979-05-27"), "[trainer] T: a date or time is not a setting (got 1979-05-27)"),
    (("T = 3", "T = 1979-05-27T07:32:00Z"), "[trainer] T: a date or time is not a setting (got 1979-05-27T07:32:00+00:00)"),
    (("T = 3", "T = 07:32:00"), "[trainer] T: a date or time is not a setting (got 07:32:00)"),
    (("seed = 0", "seed = 1979-05-27"), "[run] seed: a date or time is not a setting"),
    (("T = 3", "T = true"), "[trainer] T: must be an integer (got True)"),
    (("sigma = 0.1", 'sigma = "0.1"'), "[trainer] sigma: must be a number or a list of numbers (got '0.1')"),
    (("alpha = 0.5", "alpha = [0.5, true]"), "[trainer] alpha: must be a number or a list of numbers (got [0.5, True])"),
    (("T = 3", 'T = "3"'), "[trainer] T: must be an integer (got '3')"),
    (("tau = 1.0", "tau = false"), "[trainer] tau: must be a number or a list of numbers (got False)"),
    (("seed = 0", 'seed = "1"'), "[run] seed: must be an integer >= 0 (got '1')"),
    (("repeats = 2", "repeats = true"), "[run] repeats: must be an integer >= 1 (got True)"),
    (("repeats = 2", "repeats = 1000000"), "[run] repeats: must be at most 100000"),
    (("N = 2", "N = 99999999999999999999"), "[data] N: integers must lie in (-2^63, 2^63) (got 99999999999999999999)"),
    (("N = 2", "N = 2000000"), "[data] N: must be at most 1000000 agents"),
    (("eps = 1.0", 'eps = "1"'), "[privacy] eps: must be a finite number > 0 (got '1')"),
    (("d = 4", "d = 4.0"), "[data] d: must be an integer >= 1 (got 4.0)"),
    (("T = 3", "T = 3\nlocal = 3"), "[trainer] local: must be a string (got 3)"),
    (("T = 3", "T = 3\n[trainer.extra]\nx = 1"), "[trainer] extra: unknown key"),
])
def test_toml_values_no_setting_takes_are_refused_by_key(tmp_path, text_change, message):
    text = toml_text(small_doc())
    old, new = text_change
    assert old in text
    cfg = tmp_path / "c.toml"
    cfg.write_text(text.replace(old, new, 1))
    rc, _, err = run_cli(["run", cfg, "--out", tmp_path / "o", *RUN])
    line = assert_one_line_error(rc, err, "run", codes=(2,))
    assert message in line
    assert not (tmp_path / "o").exists()  # refused before the folder was created


def test_every_trainer_keyword_has_a_kind():
    """A new keyword of a trainer must get its TOML kind (or TOML files could pass it any value)."""
    for name in TRAINERS:
        req, opt = trainer_keys(name)
        missing = [k for k in req + opt if k not in TRAINER_KEY_KINDS]
        assert not missing, f"{name}: {missing}"


def test_a_huge_T_is_one_line(tmp_path):
    """T = 2^63 - 1 is refused by the schema (counts at most 2^53); T = 2^53 passes it and cannot be
    allocated: a runtime failure (exit 1) naming the trial, no traceback."""
    cfg = write_toml(tmp_path / "c.toml", _with("trainer", T=2**63 - 1))
    rc, _, err = run_cli(["run", cfg, "--out", tmp_path / "o", *RUN])
    assert "[trainer] T: counts must be at most 2^53" in assert_one_line_error(rc, err, "run", codes=(2,))
    cfg = write_toml(tmp_path / "c.toml", _with("trainer", T=2**53))
    rc, _, err = run_cli(["run", cfg, "--out", tmp_path / "o", *RUN])
    line = assert_one_line_error(rc, err, "run", codes=(1,))
    assert line.startswith("prirfed run: error: out of memory (in trial 0 of run-c)")


def test_invalid_utf8_and_binary_toml_are_one_line(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(b"[problem]\nkind = \"\xff\xfe\"\n")
    rc, _, err = run_cli(["run", cfg, "--out", tmp_path / "o", *RUN])
    assert "c.toml is not valid TOML" in assert_one_line_error(rc, err, "run", codes=(2,))
    rc, _, err = run_cli(["run", tmp_path, "--out", tmp_path / "o", *RUN])  # a folder, not a file
    assert "cannot read" in assert_one_line_error(rc, err, "run", codes=(2,))


# ----------------------------------------------------------------------------- --set


@pytest.mark.parametrize("setting, message", [
    ("seed=5", "override 'seed' is set by --seed"),
    ('mode="full"', "override 'mode' is set by --quick / --tiny"),
    ("k=true", "rfed-table1: k must be a number like its generated value 20 (the override true is a boolean)"),
    ('k="4"', 'rfed-table1: k must be a number like its generated value 20 (the override "4" is a string)'),
    ("dims=3", "rfed-table1: dims must be a list like its generated value [10, 20]"),
    ("k=99999999999999999999", "rfed-table1: k: integers must lie in (-2^63, 2^63)"),
    ('backend="fast"', "rfed-table1: backend must be one of ('reference', 'verified')"),
    ("k=1", "--set k given twice"),
    # null is accepted by kind (a setting not given); one the experiment cannot use is a one-line
    # refusal naming the override (a TypeError traceback before; thorough CLI fuzz run)
    ("dims=null", "rfed-table1 cannot run with the override dims=null (TypeError: 'NoneType' object is not iterable)"),
])
def test_set_keys_the_trials_would_not_honour_are_refused(tmp_path, setting, message):
    argv = ["reproduce", "rfed-table1", "--tiny", "--set", setting, "--out", tmp_path / "o", *RUN]
    if setting == "k=1":
        argv += ["--set", "k=2"]
    rc, _, err = run_cli(argv)
    assert message in assert_one_line_error(rc, err, "reproduce", codes=(2,))
    assert not (tmp_path / "o").exists()


def test_the_recorded_seed_is_the_seed_the_trials_use(tmp_path):
    """`--seed 5` records seed 5 and every trial's seed is child i of SeedSequence(5) (config.json);
    a configuration recording another seed than the one the trials would use is refused."""
    rc, _, err = run_cli(["reproduce", "rfed-table1", "--tiny", "--seed", "5", "--out", tmp_path / "o", *RUN])
    assert rc == 0, err
    rec = json.loads((tmp_path / "o" / "config.json").read_text())
    assert rec["seed"] == rec["config"]["seed"] == 5
    assert [s["entropy"] for s in rec["trial_seeds"]] == ["5"] * rec["n_trials"]
    exp = experiment_from_toml(small_doc(run={"seed": 7, "repeats": 1}))
    with pytest.raises(ValueError, match="seed=3 but the configuration of run-custom records seed 7"):
        reproduce(exp, tmp_path / "p", seed=3, backend="reference", progress=False)
    assert not (tmp_path / "p").exists()


# ----------------------------------------------------------------------------- a killed worker


def _stand_in(name, run_trial, n=4, victim=2):
    def make_config(mode, seed, backend):
        return dict(mode=mode, seed=seed, backend=backend, n=n, victim=victim)

    def trial_specs(config):
        return [dict(k=k) for k in range(config["n"])]

    def report(config, results, out):
        (out / "values.csv").write_text("k,x\n" + "".join(f"{k},{r['x']!r}\n" for k, r in enumerate(results)))
        return [Check("the draws are finite", all(math.isfinite(r["x"]) for r in results), "values.csv")]

    return Experiment(name=name, description="stand-in", source="tests", make_config=make_config,
                      trial_specs=trial_specs, run_trial=run_trial, report=report)


def test_a_killed_worker_is_one_line_exit_1_and_resume_finishes(tmp_path, registry):
    """Trial 2 SIGKILLs its worker process (as the out-of-memory killer would): exit 1, one line
    saying a worker died and to rerun with --resume; the trials that finished are on disk; --resume
    (same configuration, a run_trial that does not kill) runs only the missing ones and gives the
    values of an uninterrupted run."""
    registry["killer"] = _stand_in("killer", worker_helpers.killing_trial)
    out = tmp_path / "o"
    argv = ["reproduce", "killer", "--tiny", "--workers", "2", "--out", out, "--no-progress"]
    rc, _, err = run_cli(argv)
    line = assert_one_line_error(rc, err, "reproduce", codes=(1,))
    assert line.startswith("prirfed reproduce: error: a worker process of killer died (killed, or out of memory)"), line
    assert "rerun with --resume" in line and "unexpected" not in line and "WorkerDied" not in line, line
    kept = sorted(p.name for p in (out / "trials").glob("trial_*.json"))
    assert "trial_0002.json" not in kept
    registry["killer"] = _stand_in("killer", worker_helpers.gentle_trial)
    rc, stdout, err = run_cli(argv + ["--resume"])
    assert rc == 0, err
    assert f"{4 - len(kept)} trials run, {len(kept)} reused" in stdout
    rc, _, err = run_cli(["reproduce", "killer", "--tiny", "--out", tmp_path / "whole", "--no-progress"])
    assert rc == 0, err
    assert (out / "values.csv").read_bytes() == (tmp_path / "whole" / "values.csv").read_bytes()


def test_a_failing_trial_names_the_trial(tmp_path, registry):
    def bad_trial(config, spec, seq):
        if spec["k"] == 1:
            raise ZeroDivisionError("division by zero")
        return dict(x=0.0)

    registry["bad"] = _stand_in("bad", bad_trial)
    rc, _, err = run_cli(["reproduce", "bad", "--tiny", "--out", tmp_path / "o", "--no-progress"])
    line = assert_one_line_error(rc, err, "reproduce", codes=(1,))
    assert "ZeroDivisionError: division by zero (in trial 1 of bad) (unexpected; rerun with --debug" in line
    assert [p.name for p in (tmp_path / "o" / "trials").glob("trial_*.json")] == ["trial_0000.json"]


# ----------------------------------------------------------------------------- --debug


def test_debug_flag_and_environment_variable_show_the_traceback(tmp_path, monkeypatch):
    cfg = write_toml(tmp_path / "c.toml", _with("trainer", T=True))
    base = ["run", cfg, "--out", tmp_path / "o", *RUN]
    rc, _, err = run_cli(base)
    assert rc == 2 and "Traceback" not in err
    for argv in (["--debug", *base], [*base, "--debug"]):
        rc, _, err = run_cli(argv)
        assert rc == 2 and "Traceback (most recent call last)" in err
        assert err.strip().splitlines()[-1].startswith("prirfed run: error: [trainer] T: must be an integer")
    monkeypatch.setenv("PRIRFED_DEBUG", "1")
    rc, _, err = run_cli(base)
    assert rc == 2 and "Traceback (most recent call last)" in err
    monkeypatch.setenv("PRIRFED_DEBUG", "0")
    assert "Traceback" not in run_cli(base)[2]


def test_describe_failure_codes():
    from prirfed.experiments.outputs import FolderLocked, OutputError

    assert cli.describe_failure(ValueError("prirfed run: [x] y: bad"), "run") == (2, "[x] y: bad")
    assert cli.describe_failure(OutputError("cannot write a/b: No space left on device"), "run")[0] == 1
    assert cli.describe_failure(FolderLocked("o is in use"), "run")[0] == 1
    code, line = cli.describe_failure(PermissionError(13, "Permission denied", "/x/y"), "run")
    assert (code, line) == (1, "/x/y: Permission denied")
    code, line = cli.describe_failure(MemoryError("Unable to allocate 8 EiB"), "run")
    assert code == 1 and line.startswith("out of memory: Unable to allocate 8 EiB")
    code, line = cli.describe_failure(RuntimeError("x\n  y" * 2000), "run")
    assert code == 1 and "\n" not in line and len(line) < cli.MAX_ERROR_CHARS + 200


def test_broken_pipe_on_an_output_object_is_one_line(capsys):
    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

    rc = cli.main(["list"], out=Closed())
    err = capsys.readouterr().err
    assert rc == 1 and err.strip() == "prirfed list: error: Broken pipe"


# ----------------------------------------------------------------------------- reproduce all


def _tiny(name):
    def run_trial(config, spec, seq):
        return dict(x=float(np.random.default_rng(seq).standard_normal()))

    return _stand_in(name, run_trial, victim=-1)


def test_reproduce_all_into_a_non_empty_folder(tmp_path, registry):
    """`reproduce all` refuses a non-empty folder before running anything; --overwrite moves it all
    aside; --resume reuses every experiment's trials; an experiment folder of another configuration
    or an index.md it did not write is refused up front under --resume, with nothing run."""
    registry.update({"a-one": _tiny("a-one"), "b-two": _tiny("b-two")})
    out = tmp_path / "res"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    before = snapshot(out)
    argv = ["reproduce", "all", "--tiny", "--out", out, "--no-progress"]
    rc, _, err = run_cli(argv)
    assert "is not empty (1 entries: 'notes.txt')" in assert_one_line_error(rc, err, "reproduce", codes=(2,))
    assert snapshot(out) == before
    rc, stdout, err = run_cli(argv + ["--overwrite"])
    assert rc == 0, err
    (old,) = list(tmp_path.glob("res.old-*"))
    assert snapshot(old) == before and "previous contents are in" in stdout
    rc, stdout, err = run_cli(argv + ["--resume"])
    assert rc == 0, err
    assert json.loads((out / "a-one" / "config.json").read_text())["n_trials"] == 4
    # another configuration in one experiment's folder: refused before anything runs
    rc, _, err = run_cli(["reproduce", "b-two", "--tiny", "--seed", "3", "--out", tmp_path / "b3", "--no-progress"])
    assert rc == 0, err
    (out / "b-two").rename(tmp_path / "b-two-seed0")
    (tmp_path / "b3").rename(out / "b-two")
    before = snapshot(out)
    rc, _, err = run_cli(argv + ["--resume"])
    assert "holds a different configuration" in assert_one_line_error(rc, err, "reproduce", codes=(2,))
    assert snapshot(out) == before
    # an index.md that reproduce all did not write
    (out / "b-two").rename(tmp_path / "b3")
    (out / "index.md").write_text("# my index\n")
    before = snapshot(out)
    rc, _, err = run_cli(argv + ["--resume"])
    assert "was not written by prirfed reproduce all" in assert_one_line_error(rc, err, "reproduce", codes=(2,))
    assert snapshot(out) == before


def test_workers_and_seed_limits_are_one_line_exit_2(tmp_path):
    for argv, message in ((["--workers", "5000"], "workers must be at most 4096"),
                          (["--workers", "0"], "workers must be an integer >= 1")):
        rc, _, err = run_cli(["reproduce", "rfed-table1", "--tiny", *argv, "--out", tmp_path / "o", *RUN])
        assert message in assert_one_line_error(rc, err, "reproduce", codes=(2,))


def test_signature_kinds_cover_only_real_keywords():
    """The kinds table names no keyword that no trainer takes (a stale entry hides a renamed one)."""
    from prirfed.experiments.custom import _reference_trainer

    taken = {p for n in TRAINERS for p in inspect.signature(_reference_trainer(n)).parameters}
    assert set(TRAINER_KEY_KINDS) <= taken


def test_a_karcher_tolerance_that_stops_at_x_t_is_reported_not_a_division_by_zero(tmp_path):
    """Found by the fuzz suite: with ``tol=1`` the Karcher mean of a few points on S^2 stays at x_t
    (gradient norm <= 1 there), so its mean d^2(x_{t+1}, x_t) is 0; the claim is then not shown
    (ratio inf) instead of the run failing with ZeroDivisionError. ``tol=0`` is refused before the
    output folder is made."""
    rc, _, err = run_cli(["reproduce", "rfed-table1", "--tiny", "--set", "dims=[3]", "--set", "tol=1",
                          "--out", tmp_path / "o", *RUN])
    assert rc == 0, err
    summary = (tmp_path / "o" / "summary.md").read_text()
    row = next(ln for ln in summary.splitlines() if "tangent/Karcher ratio" in ln)
    assert "**no**" in row and "d=3: inf" in row, row
    rc, _, err = run_cli(["reproduce", "rfed-table1", "--tiny", "--set", "tol=0", "--out", tmp_path / "p", *RUN])
    assert "tol (Karcher mean gradient-norm tolerance) must be a positive" in assert_one_line_error(
        rc, err, "reproduce", codes=(2,))
    assert not (tmp_path / "p").exists()
