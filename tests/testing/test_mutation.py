"""The mutation harness itself (prirfed.testing.mutation): which mutants it makes, that a mutant
is run from a temporary copy (never the working tree) and is killed or survives as it should."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prirfed.testing import mutation as M

SRC = '''"""doc"""
import math


def f(x, y):
    """doc"""
    if x < 0:
        raise ValueError(f"f: x must be >= 0 (got {x})")
    z = x + 2.0 * y
    return math.sqrt(z) - y
'''


def test_operators_on_a_small_module(tmp_path):
    (tmp_path / "mod.py").write_text(SRC)
    ms = M.mutants_of("mod.py", tmp_path)
    got = {(m.line, m.op, m.original, m.replacement) for m in ms}
    assert (7, "compare", "x < 0", "(x <= 0)") in got
    assert (8, "delete", 'raise ValueError(f"f: x must be >= 0 (got {x})")', "pass") in got
    assert (9, "arith", "x + 2.0 * y", "(x - 2.0 * y)") in got
    assert (9, "arith", "2.0 * y", "(2.0 / y)") in got
    assert (9, "const", "2.0", "(4.0)") in got and (9, "const", "2.0", "(1.0)") in got
    assert (9, "sign", "2.0", "(-2.0)") in got
    assert (10, "return", "return math.sqrt(z) - y", "return None") in got
    # docstrings, the message of the raise and the import are not mutated
    assert not any(m.line in (1, 2, 6) for m in ms)
    assert not any(m.op != "delete" and m.line == 8 for m in ms)
    # every mutant compiles and differs from the source in exactly its own place
    for m in ms:
        assert m.compiles()
        assert m.source != SRC
    assert len({m.key for m in ms}) == len(ms)


def test_stable_sampling_does_not_depend_on_other_mutants():
    keys = [f"k{i}" for i in range(2000)]
    a = [k for k in keys if M.selected(k, 0.1, 3)]
    b = [k for k in keys[::2] if M.selected(k, 0.1, 3)]
    assert set(b) == set(a) & set(keys[::2])
    assert 150 <= len(a) <= 250  # binomial(2000, 0.1): 200 +- 4.7 sd


def test_a_mutant_is_loaded_from_a_temporary_copy_and_killed(tmp_path):
    """Mutate prirfed.reference.trainers.privacy (dp_rgd_run_event's factor 2 of the sensitivity):
    the test below sees the mutated value, the working tree stays unchanged."""
    root = Path(__file__).resolve().parents[2]
    path = "reference/trainers/privacy.py"
    before = (root / path).read_bytes()
    m = next(x for x in M.mutants_of(path, root) if x.qualname == "dp_rgd_run_event" and x.op == "const"
             and x.original == "2.0" and x.replacement == "(1.0)")
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "from prirfed.reference.trainers.privacy import dp_rgd_run_event\n"
        "def test_sensitivity():\n"
        "    ev, _ = dp_rgd_run_event(n=10, b=10, T=1, sigma=1.0, sensitivity_radius=1.0)\n"
        "    assert ev.inner.noise_multiplier == 5.0\n")
    # a fresh interpreter: this pytest process has imported the unmutated module already
    script = (f"import sys; from pathlib import Path; from prirfed.testing import mutation as M\n"
              f"root = Path({str(root)!r}); m = [x for x in M.mutants_of({path!r}, root) if x.key == {m.key!r}][0]\n"
              f"print(M.run_one(root, None, [{str(probe)!r}], 300, False)[0], M.run_one(root, m, [{str(probe)!r}], 300, False)[0])")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.stdout.split() == ["survived", "killed"], out.stderr
    assert (root / path).read_bytes() == before


def test_named_mutants_must_match_once(tmp_path):
    (tmp_path / "reference").mkdir()
    (tmp_path / "reference" / "a.py").write_text("x = 1\ny = 1\n")
    cfg = {"named": [{"path": "reference/a.py", "find": "= 1", "replace": "= 2", "why": "w"}]}
    with pytest.raises(ValueError, match="occurs 2 times"):
        M.named_mutants(tmp_path, cfg)
    cfg["named"][0].update(find="y = 1", replace="y = 2")
    (m,) = M.named_mutants(tmp_path, cfg)
    assert m.line == 2 and m.module == "prirfed.reference.a" and m.source == "x = 1\ny = 2\n"


def test_checked_in_config_and_equivalents_are_well_formed():
    cfg = M.load_config()
    root = Path(__file__).resolve().parents[2]
    for area in cfg["area"]:
        assert 0.5 < area["target"] <= 1.0
        for t in area["tests"] + area.get("fallback", []):
            if "{stem}" not in t:
                assert (root / t).exists(), t
    for n in cfg["named"]:
        assert M.area_of(cfg, n["path"]) is not None
    # every module an area mutates has tests (verified/manifolds/checks.py had none: a sample that drew
    # one of its mutants stopped with "no tests for ..." before running anything)
    for area in cfg["area"]:
        for g in area["modules"]:
            for p in sorted(root.glob(g)):
                rel = p.relative_to(root).as_posix()
                if M.area_of(cfg, rel) is area:
                    assert all((root / t).exists() for t in M.tests_of(root, area, rel)), rel
    assert len(M.named_mutants(root, cfg)) == len(cfg["named"])
    for key, reason in M.load_equivalents().items():
        assert key.split("::")[0] and reason
    # every equivalent or tolerated entry names a mutant the harness generates today (a stale key,
    # after an edit of its line, would silently stop applying)
    entries = {**M.load_equivalents(), **M.load_equivalents(table="tolerated")}
    generated = {}
    for path in {k.split("::")[0] for k in entries}:
        generated |= {m.key: m.fingerprint() for m in M.mutants_of(path, root)}
    assert sorted(set(entries) - set(generated)) == []
    # ... and, where the entry records the mutated line's fingerprint, still the mutant its reason is
    # about: an edit that removed an equal literal earlier in a function moved keys such as
    # "const::1 => (2) #3" onto other lines, whose entries then gave the reasons of the old ones
    fingerprints = M.load_fingerprints()
    # and no mutant is both equivalent (not run) and tolerated (run): one of the two reasons is wrong
    assert sorted(set(M.load_equivalents()) & set(M.load_equivalents(table="tolerated"))) == []
    assert sorted(k for k, fp in fingerprints.items() if generated.get(k) != fp) == []


def test_interleaved_order_is_round_robin_over_the_areas():
    """--interleave: the k-th mutant of every area runs before the (k+1)-th of any area, each area
    in its own rank order, and the set of mutants is the one of the plain order."""
    root = Path(__file__).resolve().parents[2]
    config = M.load_config()
    config = dict(config, area=[a for a in config["area"] if a["name"] in ("checks", "privacy-events", "mechanisms")])
    plain = M.collect(root, config, None, 1.0, 7, per_area=4)
    inter = M.collect(root, config, None, 1.0, 7, per_area=4, interleave=True)
    sampled = [(a["name"], m.key) for a, m in plain if m.op != "named"]
    assert sorted(k for _, k in sampled) == sorted(m.key for a, m in inter if m.op != "named")
    names = [a["name"] for a, m in inter if m.op != "named"]
    assert names[:3] == sorted(set(names), key=names.index) and len(set(names[:3])) == 3
    assert names[3:6] == names[:3]
    for name in set(names):
        ranks = [M.rank(m.key, 7) for a, m in inter if a["name"] == name and m.op != "named"]
        assert ranks == sorted(ranks)


def test_a_stopped_run_writes_the_report_of_what_ran(tmp_path):
    """SIGTERM during a run: the running mutant's child is ended, report.md names the mutants run
    so far and says the run was stopped, and the exit code is 130 (not a pass). A toy repository
    whose test writes its process id and then sleeps, so the signal lands while a mutant runs; the
    check is that this process is gone afterwards, not how long anything took."""
    import os
    import signal
    import time

    pid_file = tmp_path / "child.pid"
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text("")
    (tmp_path / "toy" / "mod.py").write_text("def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 3\n")
    (tmp_path / "test_toy.py").write_text(
        "import os, time\nfrom toy.mod import f, g\n\n\ndef test_f():\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n    time.sleep(600)\n    assert f(1) == 2\n")
    (tmp_path / "cfg.toml").write_text('[[area]]\nname = "toy"\nmodules = ["toy/mod.py"]\n'
                                       'tests = ["test_toy.py"]\ntarget = 0.9\n')
    out = tmp_path / "rep"
    proc = subprocess.Popen([sys.executable, "-m", "prirfed.testing.mutation", "--root", str(tmp_path),
                             "--config", str(tmp_path / "cfg.toml"), "--timeout", "900", "--out", str(out)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300  # generous: only a bound on a hang, not a measurement
    while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    child = int(pid_file.read_text())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "stopped by SystemExit after 0 of" in err
    assert "stopped by SystemExit after 0 of" in (out / "report.md").read_text()
    alive = True
    while alive and time.monotonic() < deadline:  # the child is killed and reaped by run_one's cleanup
        try:
            os.kill(child, 0)
            time.sleep(0.2)
        except ProcessLookupError:
            alive = False
    assert not alive, "the running mutant's process was left running"


def _toy_repo(tmp_path, source, test, equivalents=""):
    """A one-module repository for the harness: toy/mod.py, its test file, an area mapping and an
    equivalents file."""
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text("")
    (tmp_path / "toy" / "mod.py").write_text(source)
    (tmp_path / "test_toy.py").write_text(test)
    (tmp_path / "cfg.toml").write_text('[[area]]\nname = "toy"\nmodules = ["toy/mod.py"]\n'
                                       'tests = ["test_toy.py"]\ntarget = 0.9\n')
    (tmp_path / "eq.toml").write_text(equivalents)


def _run_harness(tmp_path, out, *extra):
    """The harness on the toy repository (exit code 0 expected); its stdout."""
    proc = subprocess.run([sys.executable, "-m", "prirfed.testing.mutation", "--root", str(tmp_path),
                           "--config", str(tmp_path / "cfg.toml"), "--equivalents", str(tmp_path / "eq.toml"),
                           "--out", str(out), *extra],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_tolerated_survivor_is_run_counted_as_survived_and_its_reason_printed(tmp_path):
    """[[tolerated]] in the equivalents file: unlike [[equivalent]] the mutant is run; when it
    survives it still counts against the score (here 0 killed of 1: 0%), and report.md prints the
    reason beside it. A toy module f(x) = x + 1 whose test checks only f(1) > 0, so its 'const'
    mutant 1 -> 2 survives."""
    key = "toy/mod.py::f::const::1 => (2)"
    _toy_repo(tmp_path, "def f(x):\n    return x + 1\n",
              "from toy.mod import f\n\n\ndef test_f():\n    assert f(1) > 0\n",
              f'[[tolerated]]\nkey = "{key}"\nreason = "a toy reason"\n')
    assert key in [m.key for m in M.mutants_of("toy/mod.py", tmp_path)]
    out = tmp_path / "rep"

    def run_and_read_report(limit):
        stdout = _run_harness(tmp_path, out, "--timeout", str(limit), "--match", "'1' -> '(2)'")
        assert "total score: 0.0% of 1 non-equivalent mutants" in stdout
        return (out / "report.md").read_text()

    assert "(survived; tolerated: a toy reason)" in run_and_read_report(300)

    # a tolerated mutant that runs out of time is not a kill either: the test hangs on the mutant
    (tmp_path / "test_toy.py").write_text("import time\nfrom toy.mod import f\n\n\ndef test_f():\n"
                                          "    if f(1) != 2:\n        time.sleep(600)\n")
    assert "(survived; tolerated: a toy reason (timed out at 20 s))" in run_and_read_report(20)


def test_survivors_of_an_earlier_run_are_run_again_and_nothing_else(tmp_path):
    """--survivors-of PROGRESS re-runs exactly the mutants that survived in that run (the triage
    step of RESULTS.md). Toy: f(x) = 2 * x + 1 tested only by f(0) == 1, so mutants of the '2'
    survive and mutants of the '+ 1' are killed; the second run holds the survivors only."""
    _toy_repo(tmp_path, "def f(x):\n    return 2 * x + 1\n",
              "from toy.mod import f\n\n\ndef test_f():\n    assert f(0) == 1\n")

    def run(out, *extra):
        _run_harness(tmp_path, out, "--timeout", "300", *extra)
        return [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]

    first = run(tmp_path / "rep0")
    survivors = {r["key"] for r in first if r["outcome"] == "survived"}
    assert survivors and len(survivors) < len(first)
    second = run(tmp_path / "rep1", "--survivors-of", str(tmp_path / "rep0" / "progress.jsonl"))
    assert {r["key"] for r in second} == survivors


def test_a_resumed_run_runs_only_the_mutants_not_yet_recorded(tmp_path):
    """--resume: a run in pieces (the full run does not fit in one sitting). After a first piece,
    two records are removed and a third is cut mid-line (a kill during the write); the second
    piece runs exactly those three again, keeps the other records as they were (a marker added to
    one survives), and its report counts every mutant once and says how many were resumed."""
    _toy_repo(tmp_path, "def f(x):\n    return 2 * x + 1\n",
              "from toy.mod import f\n\n\ndef test_f():\n    assert f(0) == 1\n")
    out = tmp_path / "rep"
    _run_harness(tmp_path, out, "--timeout", "300", "--resume")
    first = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert len(first) >= 5 and all("commit" in r for r in first)
    kept = first[:-3]
    kept[0] = dict(kept[0], marker="from the first piece")
    lines = [json.dumps(r) for r in kept] + [json.dumps(first[-3])[:20]]
    (out / "progress.jsonl").write_text("\n".join(lines) + "\n")
    stdout = _run_harness(tmp_path, out, "--timeout", "300", "--resume")
    second = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()[len(lines):]]
    assert sorted(r["key"] for r in second) == sorted(r["key"] for r in first[-3:])
    results = json.loads((out / "results.json").read_text())["results"]
    assert sorted(r["key"] for r in results) == sorted(r["key"] for r in first)
    assert [r for r in results if r["key"] == kept[0]["key"]][0]["marker"] == "from the first piece"
    assert f"resumed: {len(kept)} of them recorded by earlier pieces" in (out / "report.md").read_text()
    assert f"of {len(first)} non-equivalent mutants" in stdout


def test_a_resumed_run_reruns_a_record_whose_key_now_names_another_mutant(tmp_path):
    """A key locates a mutant by function, operator, text and repeat number, so adding an equal literal
    earlier in the function (here y = 2 before return 2 * x + 1) moves "const::2 => (3)" onto the new
    literal. Each record carries the fingerprint of its mutated line; --resume runs such a record
    again (the earlier pieces counted the other literal's outcome under this key) and keeps the
    records whose line still reads the same (the mutants of '+ 1')."""
    _toy_repo(tmp_path, "def f(x):\n    return 2 * x + 1\n",
              "from toy.mod import f\n\n\ndef test_f():\n    assert f(0) == 1\n")
    out = tmp_path / "rep"
    _run_harness(tmp_path, out, "--timeout", "300", "--resume")
    first = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert all(len(r["fingerprint"]) == 16 for r in first)
    (tmp_path / "toy" / "mod.py").write_text("def f(x):\n    y = 2\n    return 2 * x + 1\n")
    now = {m.key: m for m in M.mutants_of("toy/mod.py", tmp_path)}
    moved = {r["key"] for r in first if r["key"] in now and now[r["key"]].fingerprint() != r["fingerprint"]}
    assert "toy/mod.py::f::const::2 => (3)" in moved  # now the literal of y = 2
    _run_harness(tmp_path, out, "--timeout", "300", "--resume")
    second = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()[len(first):]]
    recorded_same = {r["key"] for r in first if r["key"] in now and r["key"] not in moved}
    assert recorded_same  # some records still name their mutant (their line did not change)
    assert {r["key"] for r in second} == set(now) - recorded_same


def test_a_record_without_fingerprint_is_checked_against_the_file_at_its_commit(tmp_path):
    """Records written before fingerprints carry the commit they ran at: the file is rebuilt from git
    at that commit and the record kept only if its key named the same mutated line there. A record
    without a commit, at a commit with uncommitted changes (+dirty), or with a key the file's mutants
    did not hold (a named mutant) cannot be checked and is kept."""
    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    _toy_repo(tmp_path, "def f(x):\n    return 2 * x + 1\n", "")
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    git("add", "toy/mod.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    a = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    (tmp_path / "toy" / "mod.py").write_text("def f(x):\n    y = 2\n    return 2 * x + 1\n")
    now = {m.key: m for m in M.mutants_of("toy/mod.py", tmp_path)}
    cache = {}
    assert not M._names_the_same_mutant({"key": "toy/mod.py::f::const::2 => (3)", "commit": a},
                                        now["toy/mod.py::f::const::2 => (3)"], tmp_path, cache)
    assert M._names_the_same_mutant({"key": "toy/mod.py::f::const::1 => (2)", "commit": a},
                                    now["toy/mod.py::f::const::1 => (2)"], tmp_path, cache)
    for commit in (None, a + "+dirty"):
        assert M._names_the_same_mutant({"key": "toy/mod.py::f::const::2 => (3)", "commit": commit},
                                        now["toy/mod.py::f::const::2 => (3)"], tmp_path, cache)
    # a key the file's own mutants did not hold at that commit (a named mutant of the area config, found
    # by its text, not by position) cannot have moved: kept
    named = M.Mutant(path="toy/mod.py", module="toy.mod", line=3, qualname="named", op="named", original="2 * x",
                     replacement="3 * x", key="toy/mod.py::named::2 * x => 3 * x", span=now["toy/mod.py::f::const::2 => (3) #2"].span)
    assert M._names_the_same_mutant({"key": named.key, "commit": a}, named, tmp_path, cache)


@pytest.mark.parametrize("option", ["--survivors-of", "--equivalents", "--config"])
def test_a_missing_file_is_a_one_line_refusal(option, tmp_path, capsys):
    """A file option naming no file ends with argparse's exit code 2 and the option in the message,
    not a traceback."""
    with pytest.raises(SystemExit) as exc:
        M.main([option, str(tmp_path / "none.toml"), "--list"])
    assert exc.value.code == 2
    assert f"{option}: no such file" in capsys.readouterr().err


def test_the_tests_of_a_mutant_import_the_checkout_under_test(tmp_path):
    """A run in a clone must test the clone: the child's finder maps prirfed, prirfed.reference and
    prirfed.verified to the root's own folders, before the environment's editable install (which maps
    the two subpackages to the installed checkout's reference/ and verified/). Checked in a fresh
    interpreter on a stand-in checkout whose three packages say where they are."""
    for pkg in ("prirfed", "reference", "verified"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text(f"WHERE = 'stand-in {pkg}'\n")
    (tmp_path / "reference" / "checks.py").write_text("WHERE = 'stand-in checks'\n")
    script = ("import sys; from pathlib import Path; from prirfed.testing import mutation as M\n"
              f"sys.meta_path.insert(0, M._RootFinder(Path({str(tmp_path)!r})))\n"
              "for k in [k for k in sys.modules if k == 'prirfed']: del sys.modules[k]\n"
              "import prirfed, prirfed.reference, prirfed.verified, prirfed.reference.checks as c\n"
              "print(prirfed.WHERE, '|', prirfed.reference.WHERE, '|', prirfed.verified.WHERE, '|', c.WHERE, '|', c.__file__)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
    got = [s.strip() for s in out.stdout.split("|")]
    assert got[:4] == ["stand-in prirfed", "stand-in reference", "stand-in verified", "stand-in checks"], out.stderr
    assert got[4] == str(tmp_path / "reference" / "checks.py")


def test_covering_tests_first_give_the_same_outcomes(tmp_path):
    """--covering runs a mutant first against the tests that executed its statement, then (if it
    survives them) against the whole area: outcomes equal the plain run's. Toy: f is checked by
    test_f only, g by test_g only and weakly (g(2) > 0); K is a module constant (run at import, so
    its mutants go to the whole area). The coverage map files f's line under test_f alone and K's
    under the empty (import-time) context; f's killed mutants ran one test, g's survivors ran the
    covering test and then the area."""
    _toy_repo(tmp_path, "K = 3\n\n\ndef f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * K\n",
              "from toy.mod import f, g\n\n\ndef test_f():\n    assert f(1) == 2\n\n\n"
              "def test_g():\n    assert g(2) > 0\n")

    def run(out, *extra):
        _run_harness(tmp_path, out, "--timeout", "300", *extra)
        return {r["key"]: r for r in map(json.loads, (out / "progress.jsonl").read_text().splitlines())}

    plain = run(tmp_path / "rep0")
    cov = run(tmp_path / "rep1", "--covering")
    assert {k: r["outcome"] for k, r in cov.items()} == {k: r["outcome"] for k, r in plain.items()}
    lines = json.loads((tmp_path / "rep1" / "covering.json").read_text())["lines"]["toy/mod.py"]
    assert lines["5"] == ["test_toy.py::test_f"] and lines["9"] == ["test_toy.py::test_g"] and lines["1"] == [""]
    f_kills = [r for k, r in cov.items() if "::f::" in k]
    assert f_kills and all(r["outcome"] == "killed" and r["covering"] == 1 for r in f_kills)
    assert all("covering" not in r for k, r in cov.items() if "<module>" in k)
    weak = [r for k, r in cov.items() if "::g::" in k and r["outcome"] == "survived"]
    assert weak and all(r["covering"] == 1 and r["covering_then_area"] for r in weak)


def test_covering_refuses_when_the_unmutated_tests_fail(tmp_path):
    """--covering measures coverage on the unmutated code, whose tests must pass (as the baseline's
    do): a failing test ends the run with exit code 2 and a one-line reason naming the log."""
    _toy_repo(tmp_path, "def f(x):\n    return x + 1\n", "from toy.mod import f\n\n\ndef test_f():\n    assert f(1) == 3\n")
    proc = subprocess.run([sys.executable, "-m", "prirfed.testing.mutation", "--root", str(tmp_path),
                           "--config", str(tmp_path / "cfg.toml"), "--equivalents", str(tmp_path / "eq.toml"),
                           "--out", str(tmp_path / "rep"), "--timeout", "300", "--covering"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert "--covering: the unmutated tests under coverage did not pass (exit 1): see " in proc.stderr
    assert "Traceback" not in proc.stderr
