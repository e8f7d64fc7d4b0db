"""The files a user relies on to reuse and cite prirfed: LICENSE, CITATION.cff, CHANGELOG.md.

Checked against pyproject.toml (version, license) and the papers' own reference lists (years).
"""

import tomllib
from pathlib import Path

import yaml

from prirfed.papers import PAPERS

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_license_is_bsd_3_clause_as_pyproject_says():
    assert PROJECT["license"] == {"text": "BSD-3-Clause"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) 2026, the prirfed developers" in text
    assert "Neither the name of the copyright holder nor the names of its" in text  # clause 3


def test_citation_cff_matches_the_package():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "type", "version", "license"):
        assert cff.get(key), key
    assert cff["version"] == PROJECT["version"]
    assert cff["license"] == PROJECT["license"]["text"]
    assert cff["authors"] == [{"name": "The prirfed developers"}]
    # the implemented papers, with the years their author-year names show
    years = {r["title"]: r["year"] for r in cff["references"]}
    for code in ("000", "001", "002"):
        paper = PAPERS[code]
        assert paper.short.endswith(f"({years[paper.title]})"), (paper, years)


def test_changelog_has_an_unreleased_section():
    lines = (ROOT / "CHANGELOG.md").read_text().splitlines()
    assert lines[0] == "# Changelog"
    assert "## Unreleased" in lines
    assert lines.index("## Unreleased") < min((i for i, ln in enumerate(lines) if ln.startswith("## [")), default=len(lines))
