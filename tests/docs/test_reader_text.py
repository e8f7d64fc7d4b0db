"""docs/reader_text.py: papers named author-year on the pages, code and math left exactly as written.

Expected strings are written out by hand from the rules (a citation role in prose, the plain
name in headings and link texts, nothing inside code, math, roles or link targets).
"""

import importlib.util
import re
from pathlib import Path

import pytest

from prirfed.papers import PAPERS, name_papers

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("_reader_text", ROOT / "docs" / "reader_text.py")
reader_text = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reader_text)
for_readers = reader_text.for_readers

HUANG = "{cite:t}`huang2024prirfed`"


@pytest.mark.parametrize("src, out", [
    ("Theorem 4.2 of 000.", f"Theorem 4.2 of {HUANG}."),
    ("(000, 6.1) and 001's Lemma", f"({HUANG}, 6.1) and {{cite:t}}`han2024dp`'s Lemma"),
    ("000/001/002 and the 004 slides",
     f"{HUANG}/{{cite:t}}`han2024dp`/{{cite:t}}`li2022federated` and the {{cite:t}}`sutti2022slides` slides"),
    ("eps = 0.001, N = 1000, 1,000 points, seeds/000_x.txt", "eps = 0.001, N = 1000, 1,000 points, seeds/000_x.txt"),
    ("`test_table_1_of_000` and `000` in code", "`test_table_1_of_000` and `000` in code"),
    ("math $x_{000}$ and $$y=002$$ stay", "math $x_{000}$ and $$y=002$$ stay"),
    ("see [Table 1 of 000](notes/000.md)", "see [Table 1 of Huang et al. (2024)](notes/000.md)"),
    ("{cite}`li2022federated` 002", "{cite}`li2022federated` {cite:t}`li2022federated`"),
    ("h(K) <= h(t); 002's Karcher > x", "h(K) <= h(t); {cite:t}`li2022federated`'s Karcher > x"),
    ("# Theorem 5.1 of 000", "# Theorem 5.1 of Huang et al. (2024)"),
    ("ERRATA lead 17 and ERRATA_LEADS 13, 16", "{ref}`lead 17 <errata-leads>` and {ref}`leads 13, 16 <errata-leads>`"),
    ("the lead-17 accounting; Lead 1 shows", "the {ref}`lead 17 <errata-leads>` accounting; {ref}`Lead 1 <errata-leads>` shows"),
    ("`test_lead_3_x` misleads 3 people", "`test_lead_3_x` misleads 3 people"),
])
def test_line_rules(src, out):
    assert for_readers(src) == out


def test_inline_math_and_code_spanning_lines_of_a_paragraph_are_left_alone():
    src = "a $x =\n\\|v\\|$, $y$ (000 §6.1). Code: `f(\n001)` and $\\sin\nt$ and 002.\n\nnext 004"
    assert for_readers(src) == ("a $x =\n\\|v\\|$, $y$ ({cite:t}`huang2024prirfed` §6.1). Code: `f(\n001)` and $\\sin\nt$ "
                                "and {cite:t}`li2022federated`.\n\nnext {cite:t}`sutti2022slides`")


def test_code_blocks_math_blocks_and_options_are_left_alone():
    src = "\n".join([
        "```python", "x = 000  # 001", "```",
        "$$", "a_{000} = 001", "$$",
        "```{image} /reproduced/000.png", ":alt: 000 figure", "```",
        "```{admonition} Code and tests", "Source: 000 section 6", "```",
        "::: {note}", "see 002", ":::",
    ])
    out = for_readers(src).split("\n")
    assert out[:9] == src.split("\n")[:9]
    assert out[10] == f"Source: {HUANG} section 6"
    assert out[13] == "see {cite:t}`li2022federated`"


def test_every_paper_key_is_in_the_bibliography_with_the_year_shown():
    bib = (ROOT / "docs" / "refs.bib").read_text()
    for paper in PAPERS.values():
        start = bib.index(f"{{{paper.key},")
        entry = bib[start:bib.find("\n@", start) if "\n@" in bib[start:] else len(bib)]
        year = re.search(r"year\s*=\s*\{(\d{4})\}", entry).group(1)
        assert paper.short.endswith(f"({year})"), (paper.key, paper.short, year)


def test_name_papers_plain_text():
    assert name_papers("Table 1 of 000 [001 Section 5]") == "Table 1 of Huang et al. (2024) [Han et al. (2024) Section 5]"
    assert name_papers("1e-3, 0.002, 2002, x_000") == "1e-3, 0.002, 2002, x_000"
