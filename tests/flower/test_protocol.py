"""prirfed.flower.protocol without Flower: the server and client functions the Flower apps call.

Independent truth: the in-process trainers (prirfed.reference.trainers.prirfed.prirfed and
rfed.rfedsvrg / rfedavg / rfedprox) with the same seed; the accountant called directly for the
budget; the manifold's own point checks for the refusals.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from flower_cases import SETTINGS, drive, make_case
from prirfed.flower.protocol import RoundServer, Sizes, agent_shard, agents_of_node, key_from_words, key_words, make_key
from prirfed.reference.trainers import rfed
from prirfed.reference.trainers.prirfed import prirfed
from prirfed.reference.trainers.privacy import prirfed_run_event, run_epsilon


def assert_same_run(res, ref, T):
    assert res.rounds == T
    assert len(res.iterates) == len(ref.history.iterates) == T + 1
    for t, (a, b) in enumerate(zip(res.iterates, ref.history.iterates)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=f"iterate {t}")
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", ["sphere", "spd"])
def test_shard_holds_one_agent_and_computes_the_same_gradients(name):
    _, problem, x0 = make_case(name)
    for i in range(problem.N):
        shard = agent_shard(problem, i)
        for j in range(problem.sizes[i]):
            np.testing.assert_array_equal(shard.grad_sample(x0, i, j), problem.grad_sample(x0, i, j))
        np.testing.assert_array_equal(shard.grad_agent(x0, i), problem.grad_agent(x0, i))
        other = (i + 1) % problem.N
        with pytest.raises(TypeError):  # the other agents' records are not there
            shard.grad_sample(x0, other, 0)
        assert shard.sizes == problem.sizes
        assert shard.Z[i].base is None  # its own copy, not a view keeping every agent's records alive
        assert all(z is None for k, z in enumerate(shard.Z) if k != i)


@pytest.mark.parametrize("case", sorted(SETTINGS))
def test_protocol_rounds_equal_in_process_prirfed(case):
    _, problem, x0 = make_case(case[0])
    kw = SETTINGS[case]
    ref = prirfed(problem, x0, rng=np.random.default_rng(11), record_every=1, keep_iterates=True, **kw)
    res = drive(problem, x0, "prirfed", np.random.default_rng(11), **kw)
    assert_same_run(res, ref, kw["T"])
    assert res.event == ref.event and res.event is not None


@pytest.mark.parametrize("algorithm,extra", [("rfedsvrg", dict(option=1)), ("rfedsvrg", dict(option=2, aggregation="karcher")),
                                             ("rfedavg", dict(weighting="size")), ("rfedprox", dict(mu=0.5))])
def test_protocol_rounds_equal_in_process_rfed(algorithm, extra):
    _, problem, x0 = make_case("sphere")
    kw = dict(T=4, k=3, eta=0.05, tau=3, **extra)
    fn = getattr(rfed, algorithm)
    args = dict(kw)
    if algorithm == "rfedprox":
        mu = args.pop("mu")
        ref = fn(problem, x0, args.pop("T"), args.pop("k"), args.pop("eta"), args.pop("tau"), mu, np.random.default_rng(5),
                 record_every=1, keep_iterates=True, **args)
    else:
        ref = fn(problem, x0, args.pop("T"), args.pop("k"), args.pop("eta"), args.pop("tau"), np.random.default_rng(5),
                 record_every=1, keep_iterates=True, **args)
    res = drive(problem, x0, algorithm, np.random.default_rng(5), **kw)
    assert_same_run(res, ref, 4)
    assert res.event is None


def test_uploads_with_nan_wrong_shape_or_off_the_manifold_are_refused_with_a_reason():
    _, problem, x0 = make_case("sphere")
    server = RoundServer("prirfed", Sizes.of(problem), x0, SETTINGS[("sphere", "dp_rsgd")], make_key(0))
    good = problem.manifold.random_point(np.random.default_rng(2))
    assert server.check_upload(0, 1, good) is not None
    nan = good.copy()
    nan[0] = np.nan
    assert server.check_upload(0, 2, nan) is None
    assert server.check_upload(0, 3, np.ones(good.size + 1) / math.sqrt(good.size + 1)) is None
    assert server.check_upload(0, 4, 1.01 * good) is None
    reasons = {i: r for _, i, r in server.refused}
    assert sorted(reasons) == [2, 3, 4]
    assert "upload of agent 2 in round 0" in reasons[2] and "finite" in reasons[2]
    assert "shape" in reasons[3]
    assert "not on the sphere" in reasons[4] and "1.0e-02" in reasons[4]


def test_a_round_without_accepted_uploads_keeps_the_iterate_and_counts_for_privacy():
    _, problem, x0 = make_case("sphere")
    kw = SETTINGS[("sphere", "dp_rsgd")]
    everyone = {(t, i) for t in range(kw["T"]) for i in range(problem.N)}
    res = drive(problem, x0, "prirfed", 4, drop=everyone, **kw)
    for x in res.iterates:
        np.testing.assert_array_equal(x, x0)
    ref = prirfed(problem, x0, rng=np.random.default_rng(4), record_every=1, **kw)
    assert res.event == ref.event


def test_budget_stops_before_the_round_that_would_exceed_it():
    _, problem, x0 = make_case("sphere")
    kw = dict(SETTINGS[("sphere", "dp_rsgd")], T=6)
    delta = 1e-5

    def eps(t):
        ev, _ = prirfed_run_event(problem, local="dp_rsgd", N=problem.N, s=kw["s"], T=t, K=kw["K"], m=1,
                                  sigmas=[kw["sigma"]] * problem.N, bs=[kw["b"]] * problem.N, tau=kw["tau"],
                                  tau0=kw["tau"], tau1=kw["tau"])
        return run_epsilon(ev, delta)

    e = [eps(t) for t in range(1, 7)]
    assert all(a < b for a, b in zip(e, e[1:]))
    budget = (0.5 * (e[2] + e[3]), delta)  # rounds 0..2 fit, round 3 would exceed
    res = drive(problem, x0, "prirfed", 9, budget=budget, **kw)
    assert res.rounds == 3 and res.stopped is not None and "round 3" in res.stopped
    np.testing.assert_allclose(res.epsilons, e[:3], rtol=1e-12)
    assert max(res.epsilons) <= budget[0]
    ref = prirfed(problem, x0, rng=np.random.default_rng(9), record_every=1, keep_iterates=True, **dict(kw, T=3))
    assert res.event == ref.event
    for a, b in zip(res.iterates, ref.history.iterates):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_settings_are_checked():
    _, problem, x0 = make_case("sphere")
    sizes = Sizes.of(problem)
    with pytest.raises(ValueError, match="has no setting 'sigmaa'"):
        RoundServer("prirfed", sizes, x0, dict(T=2, s=2, alpha=0.1, sigmaa=1.0), make_key(0))
    with pytest.raises(ValueError, match="s must"):
        RoundServer("prirfed", sizes, x0, dict(T=2, s=9, alpha=0.1), make_key(0))
    with pytest.raises(ValueError, match="applies to 'prirfed' only"):
        RoundServer("rfedavg", sizes, x0, dict(T=2, k=2, eta=0.1, tau=1), make_key(0), budget=(1.0, 1e-5))
    with pytest.raises(ValueError, match="algorithm must be one of"):
        RoundServer("fedavg", sizes, x0, {}, make_key(0))
    with pytest.raises(ValueError, match="x0"):
        RoundServer("prirfed", sizes, 2 * x0, dict(T=2, s=2, alpha=0.1), make_key(0))
    # clipping thresholds and mu by the trainers' shared checks, on the server, before any round
    for key, bad in (("tau", float("nan")), ("tau", -1.0), ("tau0", "1"), ("tau1", 0.0)):
        with pytest.raises(ValueError, match=f"clipping threshold {key} must be > 0"):
            RoundServer("prirfed", sizes, x0, dict(T=2, s=2, alpha=0.1, **{key: bad}), make_key(0))
    for bad in (-0.5, float("inf"), True):
        with pytest.raises(ValueError, match="mu must be finite and >= 0"):
            RoundServer("rfedprox", sizes, x0, dict(T=2, k=2, eta=0.1, tau=1, mu=bad), make_key(0))


def test_key_words_round_trip_and_node_assignment():
    key = np.array([2**64 - 1, 2**63 + 5], dtype=np.uint64)
    np.testing.assert_array_equal(key_from_words(key_words(key)), key)
    with pytest.raises(ValueError):
        key_from_words(["-1", "0"])
    assert sorted(sum((agents_of_node(7, p, 3) for p in range(3)), [])) == list(range(7))
    with pytest.raises(ValueError, match="SuperNodes"):
        agents_of_node(3, 0, 4)


def test_prirfed_imports_without_flower_and_names_the_extra():
    code = ("import sys; sys.modules['flwr'] = None\n"
            "import prirfed, prirfed.flower, prirfed.flower.protocol\n"
            "try:\n    prirfed.flower.run_simulation\nexcept ImportError as e:\n    print('ERR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ERR prirfed.flower needs Flower" in out.stdout and "pip install 'prirfed[flower]'" in out.stdout


@pytest.mark.parametrize("name", ["sphere", "spd"])
def test_one_agent_problem_answers_as_the_full_problem(name):
    from prirfed.reference.problems.spd_frechet import SPDFrechetMean
    from prirfed.reference.problems.sphere_pca import SpherePCA

    from prirfed.flower.protocol import OneAgent

    _, problem, x0 = make_case(name)
    for i in range(problem.N):
        inner = SpherePCA([problem.Z[i]]) if name == "sphere" else SPDFrechetMean([problem.Z[i]], c=problem.c)
        one = OneAgent(inner, i, problem.sizes)
        for j in range(problem.sizes[i]):
            np.testing.assert_array_equal(one.grad_sample(x0, i, j), problem.grad_sample(x0, i, j))
        np.testing.assert_array_equal(one.grad_agent(x0, i), problem.grad_agent(x0, i))
        with pytest.raises(ValueError, match="holds agent"):
            one.grad_sample(x0, (i + 1) % problem.N, 0)
    kw = SETTINGS[(name, "dp_rsvrg")]
    ref = prirfed(problem, x0, rng=np.random.default_rng(2), record_every=1, keep_iterates=True, **kw)
    from prirfed.flower.protocol import client_update

    server = RoundServer("prirfed", Sizes.of(problem), x0, kw, make_key(np.random.default_rng(2)))
    S = server.agents(0)
    inner = {i: (SpherePCA([problem.Z[i]]) if name == "sphere" else SPDFrechetMean([problem.Z[i]], c=problem.c)) for i in S}
    ups = {i: client_update(OneAgent(inner[i], i, problem.sizes), i, x0, server.instructions(0, i), server.key) for i in S}
    np.testing.assert_allclose(server.step(0, S, ups), ref.history.iterates[1], rtol=1e-12, atol=0)


def test_cli_engine_options_are_checked(tmp_path, capsys):
    from prirfed.cli import main

    toml = tmp_path / "rgd.toml"
    toml.write_text('[problem]\nkind = "sphere_pca"\n\n[data]\nsource = "eigengap"\nN = 3\nN_i = 10\nd = 5\n\n'
                    '[trainer]\nname = "rgd"\nT = 2\nalpha = 0.1\n')
    assert main(["run", str(toml), "--out", str(tmp_path / "a"), "--engine", "flower"]) == 2
    assert "--engine flower runs 'prirfed', 'rfedsvrg', 'rfedavg', 'rfedprox' (got 'rgd')" in capsys.readouterr().err
    assert main(["run", str(toml), "--out", str(tmp_path / "b"), "--supernodes", "2"]) == 2
    assert "--supernodes needs --engine flower" in capsys.readouterr().err
    toml.write_text(toml.read_text().replace('name = "rgd"\nT = 2\nalpha = 0.1', 'name = "prirfed"\nT = 2\ns = 1\nalpha = 0.1'))
    assert main(["run", str(toml), "--out", str(tmp_path / "c"), "--engine", "flower", "--supernodes", "4"]) == 2
    assert "--supernodes must be an integer in [1, N = 3] (got 4)" in capsys.readouterr().err
