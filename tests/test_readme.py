"""The README's Python example runs, meets its epsilon, learns, and prints the numbers the README shows."""

import contextlib
import io
import math
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _block(kind: str, after: str = "") -> str:
    text = README.read_text()
    return re.search(rf"```{kind}\n(.*?)```", text[text.index(after):] if after else text, re.S).group(1)


def test_readme_python_example_prints_what_the_readme_shows():
    """Runs the block and compares its output with the ```text block below it: the same words, and
    every number within a relative tolerance of 1e-3 (the printed digits; BLAS builds may differ in the
    last bits of a sum). Then independent checks: the run's own event is (1, 1e-5)-DP by the upper
    bound, and the angle to the optimum fell below a quarter of its start."""
    code = _block("python")
    ns: dict = {}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "README.md", "exec"), ns)
    shown = _block("text", "It prints").strip().splitlines()
    got = buf.getvalue().strip().splitlines()
    assert len(got) == len(shown), (got, shown)
    for g, s in zip(got, shown):
        assert NUMBER.sub("#", g) == NUMBER.sub("#", s), (g, s)
        for a, b in zip(NUMBER.findall(g), NUMBER.findall(s)):
            assert math.isclose(float(a), float(b), rel_tol=1e-3, abs_tol=1e-12), (g, s)
    from prirfed.reference.accounting.accountants import epsilon

    assert epsilon(ns["run"].event, 1e-5) <= 1.0 * (1 + 1e-9)
    p = ns["problem"]
    assert p.angle_to_optimum(ns["run"].x) < 0.25 * p.angle_to_optimum(ns["x0"])
    p.manifold.check_point(ns["run"].x)


def test_readme_gives_the_ci_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    cmd = re.search(r"```bash\n(HYPOTHESIS_PROFILE=prirfed-ci python -m pytest[^\n]*)\n```", README.read_text()).group(1)
    assert cmd in ci



def test_readme_frontier_table_is_the_committed_summary():
    """The frontier table of the README (section "Does private learning work?") shows exactly the
    smallest sizes of the committed docs/reproduced/frontier/frontier_summary.csv, problem by problem
    (named in backticks in the first column) and eps by eps (the header's eps values)."""
    import csv

    summary = README.parent / "docs" / "reproduced" / "frontier" / "frontier_summary.csv"
    rows = list(csv.DictReader(summary.open()))
    text = README.read_text()
    section = text[text.index("## Does private learning work?"):]
    section = section[: section.index("\n## ", 3)]
    table = [ln for ln in section.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    eps = [float(c.split("=")[1]) for c in header[1:]]
    shown = {}
    for ln in table[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        key = re.search(r"`(\w+)`", cells[0]).group(1)
        for e, c in zip(eps, cells[1:]):
            shown[(key, e)] = c.replace(",", "")
    want = {(r["problem"], float(r["eps"])): r["frontier_total"] for r in rows}
    assert shown == want
