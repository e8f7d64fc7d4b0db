"""Committed reproduced figures (docs/reproduced/NAME/) cannot go stale silently.

The committed outputs are generated WITH the shared data folder (``prirfed reproduce all --quick
--out docs/reproduced`` beside ``../shared/data``, as CI has it: MNIST t10k and the WordNet closure),
because an experiment's configuration records which data it found. So both checks below need the
shared data and skip (saying so) only when it is absent:

- every committed config.json's hash equals that of the experiment's current configuration
  ``make_config("quick", seed, backend)``, the mode is ``quick``, and the page shows exactly those
  experiments;
- the summaries regenerate: the experiments of :data:`REGENERATED` are run again in quick mode and
  their summary tables compared with the committed ones: the same claims in the same order, the same
  verdicts (yes / no / inconclusive), and every number of the evidence within a relative tolerance of
  1e-4 (absolute 1e-9; a claim about measured CPU time, whose seconds differ between runs by nature,
  by its verdict only): the runs are seeded and deterministic, the tolerance covers rounding
  differences between BLAS/LAPACK builds. ``frontier`` is left out of the regeneration (its quick run
  takes many minutes; its configuration is still checked by hash).

Every committed experiment but the frontier is regenerated in the default run (CI's ``pytest -q``):
about 3.3 minutes for the seven that were once opt-in and about 1.5 for the rest (measured in
benchmarks/RESULTS.md, section "Reproduced pages: CPU time per experiment"). The tests skip only
when the shared data folder the pages were made with is absent.
"""

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest

from prirfed.experiments import EXPERIMENTS
from prirfed.experiments.framework import config_hash
from prirfed.reference.data import real
from prirfed.reference.data.wordnet import MAMMAL_CLOSURE

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: experiments whose committed quick summaries are regenerated and compared: every committed one but
#: the frontier (none while docs/reproduced/ holds no outputs: then pytest reports the empty set)
REGENERATED = tuple(p.name for p in sorted((DOCS / "reproduced").glob("*/config.json"))
                    for p in [p.parent] if p.name != "frontier")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
#: claims whose evidence is a measured CPU time (rfed-table1): compared by verdict only
TIMED = re.compile(r"CPU time", re.IGNORECASE)


def _shared_data_or_skip():
    root = real.shared_data_dir()
    need = (real.MNIST_T10K_IMAGES, real.MNIST_T10K_LABELS, MAMMAL_CLOSURE)
    if root is None or not all((root / n).is_file() for n in need):
        pytest.skip(f"the shared data folder ($PRIRFED_DATA or ../shared/data: {', '.join(need)}) is absent; the "
                    "committed reproduced pages were generated with it")


def _gen_pages():
    spec = importlib.util.spec_from_file_location("_prirfed_gen_pages", DOCS / "gen_pages.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_outputs_match_the_current_configuration():
    _shared_data_or_skip()
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
    # every experiment's quick outputs are committed; the frontier's come with the frontier's own work
    missing = sorted(set(EXPERIMENTS) - set(shown) - {"frontier"})
    assert not missing, f"quick outputs of {missing} are not committed in docs/reproduced/"
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
            "`prirfed reproduce all --quick --out docs/reproduced` with the shared data folder")


def _table_rows(summary: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in summary.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 3 and cells[1] in ("yes", "**no**", "inconclusive"):
            rows.append(tuple(cells))
    return rows


def _same_text_and_numbers(a: str, b: str) -> bool:
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    return all(math.isclose(float(x), float(y), rel_tol=1e-4, abs_tol=1e-9) for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)))


def test_summary_comparison_rule():
    """The comparison itself: equal verdicts and numbers within the tolerance pass, others fail."""
    a = "| c (1) | yes | f: 0.123456 -> 1e-05 |"
    assert _table_rows(a) == [("c (1)", "yes", "f: 0.123456 -> 1e-05")]
    assert _same_text_and_numbers("f: 0.123456 -> 1e-05", "f: 0.123457 -> 1.00001e-05")
    assert not _same_text_and_numbers("f: 0.123456 -> 1e-05", "f: 0.1236 -> 1e-05")
    assert not _same_text_and_numbers("f: 0.1 up", "f: 0.1 down")


def _regenerate_and_compare(name, tmp_path):
    _shared_data_or_skip()
    from prirfed.experiments import reproduce

    folder = DOCS / "reproduced" / name
    rec = json.loads((folder / "config.json").read_text())
    reproduce(name, tmp_path / name, mode="quick", seed=int(rec["seed"]), backend=rec["config"]["backend"], progress=False)
    old = _table_rows((folder / "summary.md").read_text())
    new = _table_rows((tmp_path / name / "summary.md").read_text())
    assert [r[0] for r in new] == [r[0] for r in old], f"{name}: the claims changed"
    for (claim, v_old, e_old), (_, v_new, e_new) in zip(old, new):
        assert v_new == v_old, f"{name}: verdict of {claim!r} changed: committed {v_old}, regenerated {v_new}"
        if TIMED.search(claim):  # measured CPU seconds differ between runs by nature: the verdict only
            continue
        assert _same_text_and_numbers(e_new, e_old), f"{name}: evidence of {claim!r} changed:\n{e_old}\n{e_new}"


@pytest.mark.slow
@pytest.mark.parametrize("name", REGENERATED)
def test_committed_summaries_regenerate(name, tmp_path):
    """Every committed quick summary but the frontier's (in the default run and CI: about 5 minutes
    of CPU for the 14, measured in benchmarks/RESULTS.md; the frontier's 6 minutes are checked by
    its README table test and regenerated by hand)."""
    _regenerate_and_compare(name, tmp_path)


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
