"""proofs_notes/ERRATA.md: every row names tests and notes that exist, and every lead is judged once.

The errata table's evidence column holds pytest node ids; each must name an existing test file and
a ``def test_...`` / ``class Test...`` in it (as tests/test_proofs_notes.py checks the notes), and
each must be cited by one of the notes the row names (so a row is backed by a derivation that
refers to that test). The leads table must list leads 1..17 exactly once with a verdict.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ERRATA = ROOT / "proofs_notes" / "ERRATA.md"

ERRATA_HEADER = ["id", "paper", "location", "printed", "correct", "evidence (test id)", "note"]
LEADS_HEADER = ["lead", "claim (short)", "verdict", "settled in (note; tests)"]
PAPERS = {"000", "001", "002", "004", "authors' code", "our design notes"}
VERDICTS = {"confirmed", "refuted", "partly", "open"}
NODE_ID = re.compile(r"`(tests/[^`]+?\.py(?:::[^`]+)?)`")
NOTE_NAME = re.compile(r"\b([a-z0-9_]+\.md)\b")


def split_row(line):
    """Cells of a Markdown table row; a pipe escaped as \\| does not split."""
    body = line.strip()
    assert body.startswith("|") and body.endswith("|"), f"ERRATA.md: not a table row: {line!r}"
    cells = re.split(r"(?<!\\)\|", body[1:-1])
    return [c.strip() for c in cells]


def tables(text):
    """Map header tuple -> list of row cell lists, for every pipe table in the text."""
    out = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$", lines[i + 1]):
            header = tuple(split_row(lines[i]))
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append(split_row(lines[j]))
                j += 1
            assert header not in out, f"ERRATA.md: two tables with header {header}"
            out[header] = rows
            i = j
        else:
            i += 1
    return out


@pytest.fixture(scope="module")
def parsed():
    assert ERRATA.exists(), "proofs_notes/ERRATA.md is missing"
    t = tables(ERRATA.read_text())
    assert tuple(ERRATA_HEADER) in t, f"ERRATA.md: no table with header {ERRATA_HEADER}; found {list(t)}"
    assert tuple(LEADS_HEADER) in t, f"ERRATA.md: no table with header {LEADS_HEADER}; found {list(t)}"
    return t[tuple(ERRATA_HEADER)], t[tuple(LEADS_HEADER)]


def check_node_id(node, where):
    path, _, rest = node.partition("::")
    f = ROOT / path
    assert f.is_file(), f"{where}: test file {path} does not exist"
    if rest:
        src = f.read_text()
        parts = rest.split("::")
        for p in parts:
            assert re.search(rf"^\s*(def|class) {re.escape(p)}\b", src, re.M), f"{where}: {node}: {p} not found in {path}"
        leaf = parts[-1]
        assert leaf.startswith(("test_", "Test")), f"{where}: {node} does not name a test"
        if len(parts) == 1:
            assert re.search(rf"^(def|class) {re.escape(leaf)}\b", src, re.M), (
                f"{where}: {node}: {leaf} is not at module level (give Class::method)")


def check_notes(cell, where):
    names = set(NOTE_NAME.findall(cell))
    assert names, f"{where}: names no proofs note"
    texts = []
    for n in sorted(names):
        p = ROOT / "proofs_notes" / n
        assert p.is_file(), f"{where}: proofs note {n} does not exist"
        assert n not in {"ERRATA.md", "README.md"}, f"{where}: {n} is not a derivation note"
        texts.append(p.read_text())
    return "\n".join(texts)


def test_errata_rows_are_well_formed(parsed):
    rows, _ = parsed
    assert rows, "ERRATA.md: the errata table is empty"
    ids = []
    for r in rows:
        assert len(r) == len(ERRATA_HEADER), f"ERRATA.md: row {r[0]!r} has {len(r)} cells, expected 7 (stray '|'?)"
        rid, paper, location, printed, correct = r[:5]
        assert re.fullmatch(r"E\d+", rid), f"ERRATA.md: bad id {rid!r}"
        ids.append(rid)
        for p in (s.strip() for s in paper.split(",")):
            assert p in PAPERS, f"ERRATA.md {rid}: paper {p!r} not one of {sorted(PAPERS)}"
        for name, cell in (("location", location), ("printed", printed), ("correct", correct)):
            assert cell and cell != "—", f"ERRATA.md {rid}: empty {name}"
            assert cell.count("$") % 2 == 0, f"ERRATA.md {rid}: unbalanced $ in {name}"
    assert len(ids) == len(set(ids)), "ERRATA.md: duplicate ids"
    assert ids == [f"E{k}" for k in range(1, len(ids) + 1)], f"ERRATA.md: ids not E1..E{len(ids)} in order: {ids}"


def test_errata_evidence_names_existing_tests_cited_by_the_note(parsed):
    rows, _ = parsed
    for r in rows:
        rid, evidence, note = r[0], r[5], r[6]
        where = f"ERRATA.md {rid}"
        nodes = NODE_ID.findall(evidence)
        assert nodes, f"{where}: evidence names no test node id"
        assert len(nodes) == evidence.count("`") // 2, f"{where}: evidence has a backticked item that is not a node id"
        notes_text = check_notes(note, where)
        for node in nodes:
            check_node_id(node, where)
            leaf = node.split("::")[-1]
            assert leaf in notes_text, f"{where}: {leaf} is not cited by the named note(s)"


def test_every_lead_appears_once_with_a_verdict(parsed):
    _, leads = parsed
    seen = []
    for r in leads:
        assert len(r) == len(LEADS_HEADER), f"ERRATA.md leads: row {r[0]!r} has {len(r)} cells, expected 4"
        lead, claim, verdict, settled = r
        assert re.fullmatch(r"\d+", lead), f"ERRATA.md leads: bad lead number {lead!r}"
        seen.append(int(lead))
        assert claim, f"ERRATA.md lead {lead}: empty claim"
        word = re.match(r"[a-z]+", verdict)
        assert word and word.group(0) in VERDICTS, f"ERRATA.md lead {lead}: verdict {verdict!r} must start with one of {sorted(VERDICTS)}"
        where = f"ERRATA.md lead {lead}"
        if word.group(0) == "open":
            continue
        notes_text = check_notes(settled, where)
        nodes = NODE_ID.findall(settled)
        assert nodes, f"{where}: a verdict other than 'open' needs a test"
        for node in nodes:
            check_node_id(node, where)
            assert node.split("::")[-1] in notes_text, f"{where}: {node} is not cited by the named note(s)"
    assert sorted(seen) == list(range(1, 18)), f"ERRATA.md leads: expected each of 1..17 once, got {sorted(seen)}"


def test_leads_cite_errata_rows_that_exist(parsed):
    rows, leads = parsed
    ids = {r[0] for r in rows}
    for r in leads:
        for ref in re.findall(r"\bE\d+\b", r[2]):
            assert ref in ids, f"ERRATA.md lead {r[0]}: refers to {ref}, which is not in the errata table"


def test_the_parser_refuses_what_it_should():
    """The checks can fail: a stray pipe, a missing test and a missing note are caught."""
    assert len(split_row("| a | b \\| c | d |")) == 3
    with pytest.raises(AssertionError, match="does not exist"):
        check_node_id("tests/no_such_file.py::test_x", "probe")
    with pytest.raises(AssertionError, match="not found"):
        check_node_id("tests/test_errata_table.py::test_no_such_test", "probe")
    with pytest.raises(AssertionError, match="does not exist"):
        check_notes("[no_such_note.md](no_such_note.md)", "probe")
