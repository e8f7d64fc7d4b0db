"""The interactive examples (``>>>``) in the Markdown pages of the docs run and print what they show.

Every fenced ``python`` block of a page under docs/ that contains ``>>>`` is run as a doctest,
each page in a fresh namespace, so every example must carry its own imports.
"""

import doctest
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^```(?:python|pycon)\n(.*?)^```", re.M | re.S)


def pages_with_examples():
    skip = {"_build", "_generated", "notes", "reproduced"}
    pages = [p for p in sorted(DOCS.rglob("*.md")) if not skip & set(p.relative_to(DOCS).parts[:-1])]
    return [p for p in pages if any(">>>" in b for b in FENCE.findall(p.read_text()))]


def test_the_examples_are_found():
    assert DOCS / "verify_your_code.md" in pages_with_examples()


@pytest.mark.parametrize("page", pages_with_examples(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_examples(page):
    text = "\n".join(b for b in FENCE.findall(page.read_text()) if ">>>" in b)
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    test = parser.get_doctest(text, {}, page.name, str(page), 0)
    assert test.examples, page
    report: list[str] = []
    result = runner.run(test, out=report.append)
    assert result.failed == 0, "".join(report)
