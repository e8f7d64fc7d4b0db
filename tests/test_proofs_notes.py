"""Every proofs note names code that exists and tests that exist, and is not stale.

A note is stale when the source of an object it names has changed since the note's hash was
recorded: re-read the note against the code, then run
``python -m prirfed.testing.notes --update proofs_notes/NOTE.md``.
"""

import re
from pathlib import Path

import pytest

from prirfed.testing.notes import parse_front_matter, resolve, source_hash

ROOT = Path(__file__).resolve().parent.parent
NOTES = sorted(p for p in (ROOT / "proofs_notes").glob("*.md") if p.name not in {"README.md", "ERRATA.md"})


def test_there_are_notes():
    assert NOTES, "proofs_notes/ has no notes"


@pytest.mark.parametrize("note", NOTES, ids=lambda p: p.name)
def test_note_names_existing_code_and_tests_and_is_fresh(note):
    meta = parse_front_matter(note.read_text(), note.name)
    assert meta.get("title"), f"{note.name}: no title"
    assert meta.get("code"), f"{note.name}: names no code"
    assert meta.get("tests"), f"{note.name}: names no tests"
    hashes = meta.get("hashes", {})
    for name in meta["code"]:
        obj = resolve(name)
        assert name in hashes, f"{note.name}: no hash for {name}; run python -m prirfed.testing.notes --update"
        assert hashes[name] == source_hash(obj), (
            f"{note.name}: {name} changed since the note was written (stale proof): re-read the note, "
            "then refresh with python -m prirfed.testing.notes --update"
        )
    for t in meta["tests"]:
        path, _, func = t.partition("::")
        f = ROOT / path
        assert f.exists(), f"{note.name}: test file {path} does not exist"
        if func:
            leaf = func.split("::")[-1]
            # a test function or class, or a test class built by a factory (``TestX = contract_case(...)``)
            pattern = rf"\b(def|class) {re.escape(leaf)}\b|^{re.escape(leaf)} = "
            assert re.search(pattern, f.read_text(), re.M), f"{note.name}: {t} not found"
