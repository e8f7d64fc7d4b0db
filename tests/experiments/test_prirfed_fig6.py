"""``prirfed-fig6`` (000 Fig. 6, best HSP predictions on the Poincare disk): tiny mode end to end with
the reference backend, outputs parse, the Poincare coordinates and the distances checked by the
Poincare-ball distance formula (an independent route from the Lorentz one), the best-run choice,
bad configurations refused. Proofs note: proofs_notes/experiment_prirfed_fig6.md.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest

from prirfed.experiments import EXPERIMENTS
from prirfed.experiments import prirfed_fig5 as f5
from prirfed.experiments import prirfed_fig6 as f6
from prirfed.reference.manifolds import Lorentz
from exp_helpers import run_tiny, tiny_run_fixture
from exp_helpers import read_csv as _csv

NAME = "prirfed-fig6"




_run = functools.partial(run_tiny, NAME)


tiny = tiny_run_fixture(NAME, "fig6")


def _poincare_dist(p, q):
    """d(p, q) = acosh(1 + 2 |p - q|^2 / ((1 - |p|^2)(1 - |q|^2))) on the Poincare disk (curvature -1)."""
    p, q = np.asarray(p), np.asarray(q)
    return math.acosh(1 + 2 * float((p - q) @ (p - q)) / ((1 - float(p @ p)) * (1 - float(q @ q))))


def test_registered_and_same_configuration_as_fig5():
    assert EXPERIMENTS[NAME].source == "000 Section 6.3, Figure 6"
    assert f6.make_config("quick", 3, "verified") == f5.make_config("quick", 3, "verified")


def test_tiny_outputs_exist_and_parse(tiny):
    out, r = tiny
    cfg = json.loads((out / "config.json").read_text())
    c = cfg["config"]
    assert cfg["experiment"] == NAME and cfg["n_trials"] == c["runs"]
    assert (out / "fig6.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "fig6.pdf").read_bytes()[:5] == b"%PDF-"
    preds = _csv(out / "predictions.csv")
    assert list(preds[0]) == ["run", "method", "best", "x0", "x1", "x2", "poincare_u", "poincare_v", "dist_true"]
    assert len(preds) == c["runs"] * len(c["methods"])
    emb = _csv(out / "embeddings.csv")
    st = f5.build_setting(c)
    assert len(emb) == st["closure"].n + 1
    assert [e["role"] for e in emb].count("test") == 1 and [e["role"] for e in emb].count("optimum") == 1
    assert "| paper's claim | reproduced |" in (out / "summary.md").read_text()
    assert len(r["checks"]) == 3


def test_poincare_coordinates_and_distances(tiny):
    """Each prediction's Poincare point is x_bar / (1 + x_0) of its Lorentz row, lies in the open unit
    disk, maps back to the row (Lorentz.from_poincare), and its Poincare-ball distance to the true
    embedding's Poincare point equals the recorded Lorentz distance dist_true."""
    out, _ = tiny
    emb = {e["node"]: e for e in _csv(out / "embeddings.csv")}
    test = next(e for e in emb.values() if e["role"] == "test")
    pt = np.array([float(test["poincare_u"]), float(test["poincare_v"])])
    L = Lorentz(2)
    for row in _csv(out / "predictions.csv"):
        x = np.array([float(row["x0"]), float(row["x1"]), float(row["x2"])])
        p = np.array([float(row["poincare_u"]), float(row["poincare_v"])])
        assert p == pytest.approx(x[1:] / (1 + x[0]), rel=1e-14, abs=1e-15)
        assert float(p @ p) < 1
        # 1 - |p|^2 ~ 2 / x_0 is computed with an absolute error ~ machine eps, so mapping back loses
        # ~ eps x_0 relative (a noisy private run can end at x_0 ~ 1e10)
        assert L.from_poincare(p) == pytest.approx(x, rel=1e-9 + 4 * np.finfo(float).eps * x[0], abs=0)
        assert _poincare_dist(p, pt) == pytest.approx(float(row["dist_true"]), rel=1e-7, abs=1e-7)


def test_best_run_is_the_nearest_output(tiny):
    out, _ = tiny
    rows = _csv(out / "predictions.csv")
    for m in {r["method"] for r in rows}:
        mine = [r for r in rows if r["method"] == m]
        best = [r for r in mine if r["best"] == "True"]
        assert len(best) == 1
        assert float(best[0]["dist_true"]) == min(float(r["dist_true"]) for r in mine)


def test_nearer_fraction_known_answer():
    """Points on one geodesic through the origin o at radii 1, 2, 3, 4: from o, a point at radius 2.5
    has exactly the radii 1 and 2 nearer (2 of 4)."""
    L = Lorentz(2)
    o = L.origin()
    pts = np.array([[math.cosh(r), math.sinh(r), 0.0] for r in (1.0, 2.0, 3.0, 4.0)])
    x = np.array([math.cosh(2.5), 0.0, math.sinh(2.5)])
    assert f6.nearer_fraction(o, x, pts) == 0.5


def test_bad_configuration_raises(tmp_path):
    with pytest.raises(ValueError, match=r"prirfed-fig6: methods must be a non-empty list"):
        _run(tmp_path / "bad", overrides=dict(methods=["rsgd", "rsgd"]))
    with pytest.raises(ValueError, match=r"prirfed-fig6: runs must be an integer >= 1"):
        _run(tmp_path / "bad", overrides=dict(runs=0))


def test_diverged_runs_are_left_out_and_reported(tmp_path):
    """Calibrated tiny run where DP-RSVRG leaves the float range (see the fig5 test of the same
    setting): no DP-RSVRG prediction is drawn or listed, and the closeness check says no."""
    out = tmp_path / "div"
    r = _run(out, calibrate=True, overrides=dict(T=2, runs=1, accountant="rdp"))
    methods = {row["method"] for row in _csv(out / "predictions.csv")}
    assert "PriRFed-DP-RSVRG" not in methods and "PriRFed-DP-RSGD" in methods
    close = next(c for c in r["checks"] if c.claim.startswith("the best private predictions are close"))
    assert close.shown is False and "every run diverged" in close.evidence
    assert (out / "fig6.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
