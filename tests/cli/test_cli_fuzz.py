"""Fuzz suite of the command line and the TOML schema (issue 19): Hypothesis throws generated TOML
configurations, raw text, and command lines (random and adversarial keys, values and types) at
``prirfed run``, ``reproduce``, ``account`` and ``privacy-table``, in-process through
``prirfed.cli.main`` and, for a few examples, as real subprocesses, into output folders that hold
nothing, a user's file, or a previous run.

Every example must end in one of two ways:

- exit 0 with valid outputs: the summary line lists files that exist, config.json's hash is the
  hash of its configuration, the CSVs parse, summary.md has its claims table, plots have their
  magic bytes; or
- exit 2 (bad input) or 1 (runtime failure) with exactly one line on stderr,
  ``prirfed CMD: error: ...``, never a traceback, and never the marker of an unexpected exception
  (``unexpected; rerun with --debug``): an exception the code did not anticipate is a bug the fuzz
  reports;

and in both cases nothing is lost: every file the output folder held before is afterwards at its
place with the same bytes, or (``--overwrite``) in the ``.old-`` sibling with the same bytes
(a successful ``--resume`` of the same configuration may rewrite its own outputs), and no
temporary or staging folder remains.

Bounded in time: each command runs under an alarm (an example that runs for minutes fails); the
values that could make a valid run long (large counts) are drawn only beyond the schema's limits,
where they must be refused. Example counts follow the Hypothesis profile (registered by
prirfed/testing/pytest_plugin.py), capped per test under ``prirfed-ci`` (225 in-process examples and
3 subprocess ones: 402 s wall, 32 s CPU in the test process, on the shared 2-core machine);
``HYPOTHESIS_PROFILE=prirfed-thorough`` runs the profile's full counts. Proofs note:
proofs_notes/experiments.md.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from prirfed.experiments.core import config_hash
from prirfed.experiments.custom import TRAINER_KEY_KINDS
from cli_helpers import leftovers, run_cli, small_doc, snapshot, toml_text

RUN = ["--backend", "reference", "--no-progress"]
PROFILE_EXAMPLES = settings.default.max_examples
SECONDS_PER_COMMAND = 180


def _budget(ci: int) -> settings:
    """This test's example count: ``ci`` under the ``prirfed-ci`` profile (60 examples per test elsewhere), the
    profile's own count when it asks for more (``prirfed-thorough``: 2000), at most ``ci`` under ``prirfed-dev``."""
    n = PROFILE_EXAMPLES if PROFILE_EXAMPLES > 60 else ci if PROFILE_EXAMPLES == 60 else min(PROFILE_EXAMPLES, ci)
    return settings(max_examples=n, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                         HealthCheck.filter_too_much])


class CommandTooSlow(BaseException):
    """Raised by the alarm inside a command (a BaseException, so the CLI's handlers do not catch it)."""


def _alarm(signum, frame):
    raise CommandTooSlow(f"a command ran for more than {SECONDS_PER_COMMAND} s")


def run_bounded(argv):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS_PER_COMMAND)
    try:
        return run_cli(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ----------------------------------------------------------------------------- values


ADVERSARIAL_INTS = [-(2**63) - 1, -(2**63), -1, 0, 1, 2, 3, 5, 2**53 + 1, 2**63 - 1, 2**63, 10**30]
ADVERSARIAL_FLOATS = [0.0, -0.0, -1.0, 1e-300, 5e-324, 0.5, 2.5, 1e308, float("inf"), float("-inf"), float("nan")]
ADVERSARIAL_STRINGS = ["", "0", "3", "0.1", "1e5", "nan", "inf", "true", "prirfed", "sphere_pca", "eigengap", "exp",
                       "dp_rsgd", "tangent", "\u00e9\u4e2d", " ", "a\nb", "x" * 300, "[1, 2]"]
DATES = [datetime.date(1979, 5, 27), datetime.datetime(1979, 5, 27, 7, 32, tzinfo=datetime.timezone.utc),
         datetime.time(7, 32)]

scalars = st.one_of(
    st.sampled_from(ADVERSARIAL_INTS), st.integers(-3, 8), st.sampled_from(ADVERSARIAL_FLOATS),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.sampled_from(ADVERSARIAL_STRINGS),
    st.text(max_size=12), st.sampled_from(DATES),
)
values = st.one_of(scalars, scalars, st.lists(scalars, max_size=4), st.lists(st.lists(scalars, max_size=3), max_size=3),
                   st.dictionaries(st.sampled_from(["a", "T", "x"]), scalars, max_size=2))

SECTIONS = ["problem", "data", "trainer", "privacy", "run"]
KNOWN_KEYS = {
    "problem": ["kind", "paper", "c", "r", "weights"],
    "data": ["source", "N", "N_i", "d", "nu", "variant", "r", "D_W", "preprocess"],
    "trainer": ["name", *TRAINER_KEY_KINDS],
    "privacy": ["eps", "delta"],
    "run": ["seed", "repeats", "record_every"],
}
CHOICES = {
    ("problem", "kind"): ["sphere_pca", "spd_frechet", "stiefel_kpca", "frechet_mean"],
    ("data", "source"): ["eigengap", "wishart", "kpca_gaussian", "iris", "wine", "digits"],
    ("trainer", "name"): ["prirfed", "rgd", "dp_rgd", "rfedsvrg", "rfedavg", "rfedprox", "dp_pgd", "dp_frechet_mean"],
    ("trainer", "local"): ["dp_rsgd", "dp_rsvrg"],
    ("trainer", "maps"): ["exp", "retraction"],
}


def _base(trainer, problem=None, data=None, privacy=True):
    doc = small_doc(trainer=trainer, run={"seed": 1, "repeats": 1})
    if problem is not None:
        doc["problem"] = problem
    if data is not None:
        doc["data"] = data
    if not privacy:
        doc.pop("privacy")
    return doc


_WISHART = {"source": "wishart", "N": 2, "N_i": 3, "r": 2}
#: valid, fast configurations of every trainer and problem kind (as tests/experiments/test_cli_run.py runs them)
VALID_BASES = [
    small_doc(),
    _base({"name": "rgd", "alpha": 0.5, "T": 3}, privacy=False),
    _base({"name": "prirfed", "T": 3, "s": 1, "alpha": 0.5, "sigma": [0.1, 0.3], "b": [3, 4], "tau": 1.0,
           "local": "dp_rsvrg", "m": 2}),
    _base({"name": "dp_rgd", "alpha": 0.1, "T": 3, "b": 4, "sigma": 0.1, "tau": 1.0}),
    _base({"name": "dp_pgd", "eta": 0.1, "T": 3, "b": 4, "sigma": 0.1, "tau": 1.0}),
    _base({"name": "rfedavg", "T": 2, "k": 2, "eta": 0.1, "tau": 2}, {"kind": "spd_frechet"}, _WISHART, privacy=False),
    _base({"name": "rfedprox", "T": 2, "k": 2, "eta": 0.1, "tau": 2, "mu": 0.1}, {"kind": "frechet_mean"}, _WISHART,
          privacy=False),
    _base({"name": "dp_frechet_mean", "eps": 1.0, "D": 2.0, "n_steps": 200}, {"kind": "spd_frechet"}, _WISHART),
    _base({"name": "rfedsvrg", "T": 2, "k": 2, "eta": 0.01, "tau": 2}, {"kind": "stiefel_kpca", "r": 2},
          {"source": "kpca_gaussian", "N": 2, "N_i": 5, "d": 4}, privacy=False),
]
#: plausible values a user would write (most valid somewhere): the mutations that keep a run running
BENIGN = {
    "T": [1, 2, 4], "alpha": [0.05, 0.5, [0.5, 0.4, 0.3]], "sigma": [0.0, 0.01, 1.0, [0.1, 0.2]], "tau": [0.5, 1, 2],
    "K": [1, 2], "b": [1, 2, 3, [2, 3]], "s": [1, 2], "m": [1, 2], "k": [1, 2], "eta": [0.01, 0.1],
    "record_every": [1, 2, 5], "repeats": [1, 2], "seed": [0, 1, 12345], "maps": ["exp", "retraction"],
    "aggregation": ["tangent", "karcher"], "local": ["dp_rsgd", "dp_rsvrg"], "option": [1, 2], "eps": [0.5, 5.0],
    "delta": [1e-5, 0.5], "N": [2, 3], "N_i": [6, 8, [6, 7]], "d": [4, 5], "nu": [1e-3, 0.1], "paper": ["000", "001"],
    "variant": ["paper", "authors_code"], "c": [0.5, 2.0], "D_W": [0.5, 1.0], "n_steps": [50, 100], "mu": [0.1, 1.0],
}


@st.composite
def mutated_docs(draw):
    """One of VALID_BASES with 0-3 mutations: a key set to a plausible value (BENIGN) or an adversarial
    one (known or random key, known or random section), a key or a section removed, a section
    replaced by a non-table."""
    doc = json.loads(json.dumps(draw(st.sampled_from(VALID_BASES))))
    for _ in range(draw(st.integers(0, 3))):
        what = draw(st.sampled_from(["benign", "benign", "set", "set", "choice", "drop_key", "drop_section", "not_a_table"]))
        section = draw(st.sampled_from([*SECTIONS, *SECTIONS, *SECTIONS, "extra", "Trainer", "run.x"]))
        if what == "benign":
            section = draw(st.sampled_from(SECTIONS))
            table = doc.setdefault(section, {})
            keys = [k for k in KNOWN_KEYS[section] if k in BENIGN]
            if isinstance(table, dict) and keys:
                key = draw(st.sampled_from(keys))
                table[key] = draw(st.sampled_from(BENIGN[key]))
        elif what in ("set", "choice"):
            table = doc.setdefault(section, {})
            if not isinstance(table, dict):
                continue
            keys = KNOWN_KEYS.get(section, ["x"])
            key = draw(st.sampled_from([*keys, *keys, "", "T ", "t", "lr", "__class__"]))
            if what == "choice" and (section, key) in CHOICES:
                table[key] = draw(st.sampled_from(CHOICES[(section, key)]))
            else:
                table[key] = draw(values)
        elif what == "drop_key" and isinstance(doc.get(section), dict) and doc[section]:
            doc[section].pop(draw(st.sampled_from(sorted(doc[section]))))
        elif what == "drop_section":
            doc.pop(section, None)
        elif what == "not_a_table":
            doc[section] = draw(scalars)
    return doc


def _toml_or_none(doc):
    try:
        return toml_text(doc)
    except (TypeError, ValueError):
        return None


# ----------------------------------------------------------------------------- folder states and the invariants


def _prepare(base: Path, state: str, previous: Path) -> Path:
    out = base / "out"
    if state == "empty":
        out.mkdir()
    elif state == "user_file":
        out.mkdir()
        (out / "notes.txt").write_text("the user's own notes\n")
        (out / "summary.md").write_text("the user's own summary\n")
    elif state == "previous_run":
        shutil.copytree(previous, out, symlinks=True)
    return out


def _olds(out: Path) -> list:
    return sorted(out.parent.glob(out.name + ".old-*"))


def _check_nothing_lost(out: Path, before: dict, rc: int, flags: list) -> None:
    after = snapshot(out)
    moved = {}
    for old in _olds(out):
        moved.update(snapshot(old))
    own_rewrite = rc == 0 and "--resume" in flags
    for rel, entry in before.items():
        if after.get(rel) == entry or moved.get(rel) == entry:
            continue
        if own_rewrite and rel in after:  # a resumed run of its own configuration rewrote its outputs
            continue
        raise AssertionError(f"{rel} was lost or changed (rc {rc}, flags {flags})")
    assert leftovers(out) == [] if out.exists() else True


def _check_outputs(stdout: str, out: Path, command: str) -> None:
    line = stdout.strip()
    assert "\n" not in line, stdout
    head = "run .*" if command == "run" else r"[\w-]+"
    m = re.match(rf"^{head}: (\d+) trials run, (\d+) reused; (\d+) of (\d+) (checks|claims) shown; outputs in "
                 rf"(.+?): ([^;]+)(; the folder's previous contents are in .+)?$", line)
    assert m, stdout
    files = m.group(7).split(", ")
    assert "config.json" in files and "summary.md" in files
    for f in files:
        assert (out / f).is_file() and not (out / f).is_symlink(), f
    rec = json.loads((out / "config.json").read_text())
    assert rec["config_hash"] == config_hash(rec["config"])
    assert rec["n_trials"] == len(rec["trials"]) == len(rec["trial_seeds"]) == len(list((out / "trials").glob("trial_*.json")))
    for f in files:
        p = out / f
        if f.endswith(".csv"):
            with open(p, newline="") as fh:
                rows = list(csv.reader(fh))
            assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), f
        elif f.endswith(".png"):
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        elif f.endswith(".pdf"):
            assert p.read_bytes()[:5] == b"%PDF-"
    # a claims table: the paper's claims (a paper experiment) or, for a custom run, which states no
    # paper claim, our sanity checks (framework.write_summary)
    summary = (out / "summary.md").read_text()
    assert ("| paper's claim | reproduced |" in summary
            or "| our check (thresholds and settings ours, not the paper's) | reproduced |" in summary), summary
    assert leftovers(out) == []


def _check_failure(rc: int, err: str, command: str) -> None:
    assert rc in (1, 2), (rc, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith(f"prirfed {command}: error: ") or lines[0].startswith("prirfed: error: "), err
    assert "Traceback" not in err
    assert "unexpected; rerun with --debug" not in err, f"an unanticipated exception: {err}"


def _check(rc, stdout, err, command, out=None, before=None, flags=()):
    event(f"{command}: exit {rc}")
    if rc == 0:
        if out is not None:
            _check_outputs(stdout, out, command)
    else:
        _check_failure(rc, err, command)
    if out is not None:
        _check_nothing_lost(out, before, rc, list(flags))


@pytest.fixture(scope="module")
def previous_run(tmp_path_factory) -> Path:
    """A finished run of small_doc(), copied into the folders of the examples that need one."""
    base = tmp_path_factory.mktemp("previous")
    cfg = base / "c.toml"
    cfg.write_text(toml_text(small_doc()))
    rc, _, err = run_cli(["run", cfg, "--out", base / "run", *RUN])
    assert rc == 0, err
    return base / "run"


folder_states = st.sampled_from(["missing", "empty", "user_file", "previous_run"])
run_flags = st.sampled_from([[], [], ["--resume"], ["--resume"], ["--overwrite"], ["--overwrite"], ["--resume", "--overwrite"],
                             ["--workers", "0"], ["--calibrate"], ["--calibrate", "--overwrite"], ["--seed", "1"]])


# ----------------------------------------------------------------------------- prirfed run


@_budget(ci=80)
@given(doc=mutated_docs(), state=folder_states, flags=run_flags)
def test_run_generated_configurations(previous_run, doc, state, flags):
    with tempfile.TemporaryDirectory() as d:
        _run_generated(d, doc, state, flags, previous_run, run_bounded)


def _run_generated(d, doc, state, flags, previous_run, runner) -> None:
    """``prirfed run`` of the generated configuration into a folder in the given state, in folder
    ``d``, by ``runner(argv)`` (in this process or a fresh interpreter), and its outcome checked."""
    text = _toml_or_none(doc)
    assume(text is not None)
    base = Path(d)
    (base / "c.toml").write_text(text)
    out = _prepare(base, state, previous_run)
    before = snapshot(out)
    rc, stdout, err = runner(["run", base / "c.toml", "--out", out, *RUN, *flags])
    _check(rc, stdout, err, "run", out, before, flags)


@st.composite
def damaged_texts(draw):
    """The valid configuration's text with bytes inserted, deleted or replaced (syntax errors,
    invalid UTF-8, truncation)."""
    data = bytearray(toml_text(small_doc()).encode())
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "truncate"]))
        b = draw(st.one_of(st.binary(min_size=1, max_size=4), st.sampled_from([b"[", b"]", b"=", b'"', b"\n", b"\xff", b"#"])))
        if op == "insert":
            data[i:i] = b
        elif op == "delete":
            del data[i:i + len(b)]
        elif op == "replace":
            data[i:i + len(b)] = b
        else:
            del data[i:]
    return bytes(data)


@_budget(ci=25)
@given(raw=damaged_texts())
def test_run_damaged_toml_text(previous_run, raw):
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        (base / "c.toml").write_bytes(raw)
        out = _prepare(base, "user_file", previous_run)
        before = snapshot(out)
        rc, stdout, err = run_bounded(["run", base / "c.toml", "--out", out, *RUN, "--overwrite"])
        _check(rc, stdout, err, "run", out, before, ["--overwrite"])


# ----------------------------------------------------------------------------- prirfed reproduce


TABLE1_KEYS = ["dims", "k", "repeats", "tol", "max_iter", "seed", "mode", "backend", "colour", "calibrate"]
TABLE1_BENIGN = [("dims", [3]), ("dims", [5, 8]), ("k", 5), ("k", 30), ("repeats", 1), ("tol", 1e-3), ("max_iter", 50),
                 ("backend", "reference")]
SET_INTS = [-1, 0, 1, 2, 3, 2**63, 10**30]  # no large valid count: those would make the run long, not wrong
set_values = st.one_of(
    st.sampled_from(SET_INTS), st.sampled_from(ADVERSARIAL_FLOATS), st.booleans(), st.none(),
    st.sampled_from(ADVERSARIAL_STRINGS), st.lists(st.sampled_from(SET_INTS + [2.5, "x", None]), max_size=3),
)


def _json_value(v) -> str:
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    return json.dumps(v)


@st.composite
def set_options(draw):
    opts = []
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.one_of(st.sampled_from(TABLE1_KEYS), st.sampled_from(TABLE1_KEYS), st.text(max_size=6)))
        form = draw(st.sampled_from(["json", "json", "json", "benign", "benign", "raw", "noeq"]))
        if form == "benign":
            key, value = draw(st.sampled_from(TABLE1_BENIGN))
            opts += ["--set", f"{key}={json.dumps(value)}"]
            continue
        if form == "json":
            opts += ["--set", f"{key}={_json_value(draw(set_values))}"]
        elif form == "raw":
            opts += ["--set", f"{key}={draw(st.text(max_size=8))}"]
        else:
            opts += ["--set", key]
    return opts


other_options = st.lists(st.sampled_from([
    ["--seed", "-1"], ["--seed", "7"], ["--seed", "x"], ["--seed", str(2**70)], ["--workers", "0"], ["--workers", "-3"],
    ["--workers", "99999999999999999999"], ["--workers", "two"], ["--backend", "fast"], ["--calibrate"], ["--resume"],
    ["--overwrite"], ["--quick", "--tiny"], ["--dask-scheduler", " "], ["--nonsense"],
]), max_size=2).map(lambda xs: [a for x in xs for a in x])


#: a token of other_options that makes any reproduce command a refusal
REFUSED_TOKENS = ("-1", "x", "0", "-3", "99999999999999999999", "two", "fast", "--quick", " ", "--nonsense")


@_budget(ci=40)
@given(name=st.sampled_from(["rfed-table1"] * 6 + ["no-such", "", "all"]), sets=set_options(), other=other_options,
       state=st.sampled_from(["missing", "empty", "user_file"]))
def test_reproduce_generated_command_lines(previous_run, name, sets, other, state):
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        out = _prepare(base, state, previous_run)
        before = snapshot(out)
        argv = ["reproduce", name, "--tiny", *sets, *other, "--out", out, "--backend", "reference", "--no-progress"]
        if name == "all":  # `all` runs every experiment: only its refusals are fuzzed here (cheap)
            assume(sets or any(tok in other for tok in REFUSED_TOKENS))
        rc, stdout, err = run_bounded(argv)
        flags = [a for a in other if a in ("--resume", "--overwrite")]
        _check(rc, stdout, err, "reproduce", out if name != "all" else None, before, flags)
        if name == "all":
            assert rc != 0
            _check_nothing_lost(out, before, rc, flags)


# ----------------------------------------------------------------------------- account, privacy-table


NUMBER_TOKENS = ["0", "1", "-1", "0.5", "1e-5", "1e-300", "1e308", "nan", "inf", "-inf", "2.5", "10", "100",
                 "99999999999999999999", "x", "", "1e5", "1000000"]


ACCOUNT_BASES = [
    ["--trainer", "dp-rsgd", "--sigma", "1", "--delta", "1e-5", "--K", "10", "--N-i", "100"],
    ["--trainer", "dp-rsgd", "--eps", "1", "--delta", "1e-5", "--K", "10", "--N-i", "100", "--batch", "10"],
    ["--trainer", "dp-rsvrg", "--sigma", "2", "--delta", "1e-5", "--K", "3", "--N-i", "50", "--m", "5"],
    ["--trainer", "dp-rsgd", "--sigma", "1", "--delta", "1e-5", "--K", "2", "--N-i", "100", "--N", "10", "--s", "2",
     "--T", "20"],
]
ACCOUNT_OPTIONS = ["--trainer", "--sigma", "--eps", "--delta", "--K", "--N-i", "--tau", "--batch", "--m", "--tau0", "--tau1",
                   "--N", "--s", "--T"]


@st.composite
def account_argv(draw):
    """A valid ``account`` command line with 0-3 options set to adversarial tokens, dropped or added."""
    argv = list(draw(st.sampled_from(ACCOUNT_BASES)))
    pick = lambda: draw(st.one_of(st.sampled_from(NUMBER_TOKENS), st.text(max_size=5)))  # noqa: E731
    for _ in range(draw(st.integers(0, 3))):
        opt = draw(st.sampled_from(ACCOUNT_OPTIONS))
        what = draw(st.sampled_from(["set", "set", "drop"]))
        if opt in argv:
            i = argv.index(opt)
            del argv[i:i + 2]
        if what == "set":
            argv += [opt, pick() if opt != "--trainer" else draw(st.sampled_from(["dp-rsgd", "dp-rsvrg", "sgd", ""]))]
    return ["account", *argv]


@_budget(ci=60)
@given(argv=account_argv())
def test_account_generated_command_lines(argv):
    rc, stdout, err = run_bounded(argv)
    _check(rc, stdout, err, "account")
    if rc == 0:
        assert re.search(r"(gives eps = |needs sigma = )[0-9.e+-]+", stdout), stdout
        assert "nan" not in stdout.lower()


@_budget(ci=20)
@given(extra=st.lists(st.sampled_from(["--format", "text", "csv", "markdown", "json", "--debug", "-x", ""]), max_size=3))
def test_privacy_table_generated_command_lines(extra):
    rc, stdout, err = run_bounded(["privacy-table", *extra])
    _check(rc, stdout, err, "privacy-table")
    if rc == 0:
        assert "eps_rigorous" in stdout


# ----------------------------------------------------------------------------- real subprocesses


def _subprocess(argv, cwd):
    env = dict(os.environ)
    env.pop("PRIRFED_DEBUG", None)
    p = subprocess.run([sys.executable, "-m", "prirfed.cli", *map(str, argv)], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=SECONDS_PER_COMMAND)
    return p.returncode, p.stdout, p.stderr


@settings(max_examples=3 if PROFILE_EXAMPLES <= 60 else 20, suppress_health_check=[HealthCheck.too_slow])
@given(doc=mutated_docs(), state=folder_states, flags=run_flags, account=account_argv())
def test_real_processes(previous_run, doc, state, flags, account):
    """The same properties with the console entry point in a fresh interpreter (what a user runs):
    one generated configuration and one generated ``account`` command line per example."""
    with tempfile.TemporaryDirectory() as d:
        _run_generated(d, doc, state, flags, previous_run, lambda argv: _subprocess(argv, d))
        rc, stdout, err = _subprocess(account, d)
        _check(rc, stdout, err, "account")
