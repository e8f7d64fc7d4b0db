"""prirfed.flower on Flower itself: the simulation engine (Ray) and a local deployment
(flower-superlink + 2 flower-supernode). Needs the extra: pip install -e '.[flower]'.

Independent truth: the in-process trainer prirfed.reference.trainers.prirfed.prirfed with the
same seed (iterates at every round, rtol 1e-12, and the privacy event); for faulty runs, the
Flower-free driver of tests/flower/flower_cases.py with the same uploads removed (that driver is
itself proven equal to the in-process trainers by tests/flower/test_protocol.py).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("flwr", reason="Flower is not installed: pip install -e '.[flower]'")

from flower_cases import SETTINGS, drive, make_case  # noqa: E402
from prirfed.flower import make_job, run_deployment, run_simulation  # noqa: E402
from prirfed.flower.deployment import problem_of_job  # noqa: E402
from prirfed.flower.protocol import RoundServer, Sizes, make_key  # noqa: E402
from prirfed.reference.trainers.prirfed import prirfed  # noqa: E402

pytestmark = pytest.mark.slow


def assert_same_iterates(a, b):
    assert len(a) == len(b)
    for t, (u, v) in enumerate(zip(a, b)):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=0, err_msg=f"iterate {t}")


@pytest.mark.parametrize("case,supernodes", [(("sphere", "dp_rsgd"), 2), (("sphere", "dp_rsvrg"), None),
                                             (("spd", "dp_rsgd"), None), (("spd", "dp_rsvrg"), 2)])
def test_simulation_equals_in_process_prirfed(case, supernodes):
    _, problem, x0 = make_case(case[0])
    kw = SETTINGS[case]
    ref = prirfed(problem, x0, rng=np.random.default_rng(21), record_every=1, keep_iterates=True, **kw)
    res = run_simulation(problem, x0, rng=np.random.default_rng(21), supernodes=supernodes, delta=1e-5, **kw)
    assert res.rounds == kw["T"] and not res.refused and not res.missing
    assert_same_iterates(res.iterates, ref.history.iterates)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12, atol=0)
    assert res.event == ref.event and res.event is not None
    assert len(res.epsilons) == kw["T"] and all(a < b for a, b in zip(res.epsilons, res.epsilons[1:]))


def _first_agents(problem, x0, kw, seed, rounds):
    server = RoundServer("prirfed", Sizes.of(problem), x0, kw, make_key(seed))
    return [server.agents(t) for t in range(rounds)]


def test_bad_uploads_are_refused_and_the_run_continues():
    _, problem, x0 = make_case("sphere")
    kw = SETTINGS[("sphere", "dp_rsgd")]
    S = _first_agents(problem, x0, kw, 8, 3)
    bad = {(0, S[0][0]): "nan", (1, S[1][1]): "shape", (2, S[2][0]): "off"}

    def corrupt(t, i, up):
        kind = bad.get((t, i))
        if kind == "nan":
            up = up.copy()
            up[2] = np.nan
        elif kind == "shape":
            up = np.append(up, 0.0)
        elif kind == "off":
            up = 1.5 * up
        return up

    res = run_simulation(problem, x0, seed=8, supernodes=problem.N, upload_hook=corrupt, **kw)
    expected = drive(problem, x0, "prirfed", 8, drop=set(bad), **kw)
    assert res.rounds == kw["T"]
    assert [(t, i) for t, i, _ in res.refused] == sorted(bad)
    reasons = {(t, i): r for t, i, r in res.refused}
    assert "finite" in reasons[(0, S[0][0])]
    assert "shape" in reasons[(1, S[1][1])]
    assert "not on the sphere" in reasons[(2, S[2][0])]
    assert_same_iterates(res.iterates, expected.iterates)
    clean = prirfed(problem, x0, rng=np.random.default_rng(8), record_every=1, keep_iterates=True, **kw)
    assert np.max(np.abs(res.iterates[1] - clean.history.iterates[1])) > 1e-8  # the refusal changed the round
    assert res.event == clean.event


def test_a_node_that_fails_mid_round_is_a_missing_upload_and_still_counts_for_privacy():
    _, problem, x0 = make_case("spd")
    kw = SETTINGS[("spd", "dp_rsgd")]
    S = _first_agents(problem, x0, kw, 13, 2)
    gone = (1, S[1][1])

    def fail(t, i):
        if (t, i) == gone:
            raise RuntimeError("node lost in the middle of round 1")

    res = run_simulation(problem, x0, seed=13, supernodes=problem.N, fail_hook=fail, delta=1e-5, **kw)
    assert res.rounds == kw["T"] and not res.refused
    assert [(t, i) for t, i, _ in res.missing] == [gone]
    assert_same_iterates(res.iterates, drive(problem, x0, "prirfed", 13, drop={gone}, **kw).iterates)
    ref = prirfed(problem, x0, rng=np.random.default_rng(13), record_every=1, **kw)
    assert res.event == ref.event  # the dropped agent's participation is counted
    full = drive(problem, x0, "prirfed", 13, delta=1e-5, **kw)
    np.testing.assert_allclose(res.epsilons, full.epsilons, rtol=0, atol=0)


def test_deployment_equals_simulation_and_in_process():
    cfg, problem, x0 = make_case("sphere")
    kw = dict(SETTINGS[("sphere", "dp_rsgd")], T=3)
    job = make_job(cfg, 3, x0, "prirfed", kw, seed=17, supernodes=2, delta=1e-5, timeout=300)
    problem = problem_of_job(job)
    lines = []
    dep = run_deployment(job, timeout=300, log=lines.append)
    sim = run_simulation(problem, x0, seed=17, supernodes=2, delta=1e-5, **kw)
    ref = prirfed(problem, x0, rng=np.random.default_rng(17), record_every=1, keep_iterates=True, **kw)
    assert dep.rounds == 3 and not dep.refused and not dep.missing
    assert_same_iterates(dep.iterates, sim.iterates)
    assert_same_iterates(dep.iterates, ref.history.iterates)
    assert dep.event == sim.event == ref.event
    assert dep.epsilons == sim.epsilons
    started = [ln for ln in lines if ln.startswith("started")]
    ended = [ln for ln in lines if ln.startswith("ended")]
    assert len(started) == len(ended) == 3  # superlink + 2 supernodes, each ended by its id


def test_cli_run_with_engine_flower_gives_the_in_process_curves(tmp_path):
    import csv

    from prirfed.cli import main

    toml = tmp_path / "run.toml"
    toml.write_text('[problem]\nkind = "sphere_pca"\n\n[data]\nsource = "eigengap"\nN = 4\nN_i = 30\nd = 5\n\n'
                    '[trainer]\nname = "prirfed"\nT = 3\ns = 2\nalpha = 0.5\nlocal = "dp_rsgd"\nK = 2\nb = 10\n'
                    'sigma = 0.05\ntau = 1.5\n\n[run]\nseed = 4\nrepeats = 1\nrecord_every = 1\n')
    rows = {}
    for engine in ("flower", "inprocess"):
        out = tmp_path / engine
        argv = ["run", str(toml), "--out", str(out), "--backend", "reference", "--no-progress"]
        if engine == "flower":
            argv += ["--engine", "flower", "--supernodes", "2"]
        assert main(argv) == 0
        with open(out / "curves.csv") as f:
            rows[engine] = list(csv.DictReader(f))
    assert len(rows["flower"]) == len(rows["inprocess"]) == 4
    for a, b in zip(rows["flower"], rows["inprocess"]):
        for key in ("round", "f_mean", "grad_norm_mean", "error_mean"):
            np.testing.assert_allclose(float(a[key]), float(b[key]), rtol=1e-12, atol=0, err_msg=key)
    assert main(["run", str(toml), "--out", str(tmp_path / "x"), "--engine", "flower", "--workers", "2"]) == 2


def test_the_docs_simulation_example_runs_and_checks_itself(capsys):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "flower.md"
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(), re.M | re.S)
    example = next(b for b in blocks if "run_simulation(" in b)
    exec(compile(example, str(page), "exec"), {})  # its asserts: equal iterates and event, three rounds
    assert "eps after each round:" in capsys.readouterr().out


def test_simulation_of_rfedsvrg_equals_in_process():
    """RFedSVRG's extra message of each round (every agent's grad f_i(x^(t)) for grad f(x^(t)))."""
    from prirfed.reference.trainers.rfed import rfedsvrg

    _, problem, x0 = make_case("sphere")
    ref = rfedsvrg(problem, x0, 3, 2, 0.05, 3, np.random.default_rng(6), option=2, record_every=1, keep_iterates=True)
    res = run_simulation(problem, x0, "rfedsvrg", rng=np.random.default_rng(6), supernodes=2, T=3, k=2, eta=0.05, tau=3,
                         option=2)
    assert res.rounds == 3 and res.event is None and not res.refused and not res.missing
    assert_same_iterates(res.iterates, ref.history.iterates)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12, atol=0)
