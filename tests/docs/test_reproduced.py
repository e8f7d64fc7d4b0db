"""Committed reproduced figures (docs/reproduced/NAME/) cannot go stale silently.

For every experiment folder that holds a config.json, the recorded configuration hash must equal
the hash of the experiment's current configuration ``make_config(mode, seed, backend)`` (as
``prirfed reproduce all --quick --out docs/reproduced`` would write it now), the mode must be
``quick``, and the reproduced-figures page must show exactly those experiments. With no outputs
the test still runs: the page must then say it is not generated and claim no experiment.

The committed outputs are generated without the shared data folder
(``PRIRFED_DATA=/nonexistent prirfed reproduce all --quick --out docs/reproduced``: bundled and
synthetic data), because an experiment's configuration records which data it found; so the
configurations are recomputed here with ``PRIRFED_DATA`` pointing nowhere, and the check means the
same on every machine, with or without ``../shared/data``.
"""

import importlib.util
import json
from pathlib import Path

from prirfed.experiments import EXPERIMENTS
from prirfed.experiments.framework import config_hash

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _gen_pages():
    spec = importlib.util.spec_from_file_location("_prirfed_gen_pages", DOCS / "gen_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_outputs_match_the_current_configuration(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIRFED_DATA", str(tmp_path / "no-shared-data"))
    g = _gen_pages()
    outs = g.reproduced_outputs(DOCS / "reproduced")
    page = g.reproduced_page(DOCS / "reproduced", DOCS)
    if not outs:
        assert g.NOT_GENERATED in page
        assert not any(line.startswith("## ") for line in page.splitlines()), "page claims experiments that are not there"
        return
    assert g.NOT_GENERATED not in page
    shown = [line[3:].strip() for line in page.splitlines() if line.startswith("## ") and not line.startswith("### ")]
    assert shown == [p.name for p in outs]
    for p in outs:
        rec = json.loads((p / "config.json").read_text())
        assert p.name in EXPERIMENTS, f"{p}: no experiment named {p.name!r} any more"
        assert rec.get("experiment") == p.name
        cfg = rec["config"]
        assert cfg.get("mode") == "quick", f"{p}: committed outputs must come from --quick (got {cfg.get('mode')!r})"
        assert (p / "summary.md").is_file(), f"{p}: summary.md missing"
        now = json.loads(json.dumps(EXPERIMENTS[p.name].make_config("quick", int(rec["seed"]), cfg["backend"])))
        assert rec["config_hash"] == config_hash(cfg), f"{p}: config.json was edited (hash does not match its own config)"
        assert config_hash(now) == rec["config_hash"], (
            f"{p}: stale: committed outputs were made with configuration hash {rec['config_hash']}, the current "
            f"make_config('quick', {rec['seed']}, {cfg['backend']!r}) hashes to {config_hash(now)}; rerun "
            "`rm -rf docs/reproduced && PRIRFED_DATA=/nonexistent prirfed reproduce all --quick --out docs/reproduced`")


def test_page_generator_on_a_synthetic_output(tmp_path):
    """The generator shows a folder with config.json, its summary and its PNG, and skips others."""
    g = _gen_pages()
    exp = tmp_path / "reproduced" / "demo"
    exp.mkdir(parents=True)
    (exp / "config.json").write_text(json.dumps(dict(experiment="demo", source="000 Fig. 1", seed=0, config_hash="abc",
                                                     config=dict(mode="quick", backend="reference"))))
    (exp / "summary.md").write_text("# demo: title\n\n| claim | ok |\n|---|---|\n| x | yes |\n")
    (exp / "fig.png").write_bytes(b"")
    (tmp_path / "reproduced" / "not_an_output").mkdir()
    page = g.reproduced_page(tmp_path / "reproduced", tmp_path)
    assert "## demo" in page and "not_an_output" not in page
    assert "| x | yes |" in page and "```{image} /reproduced/demo/fig.png" in page
    assert g.NOT_GENERATED not in page
