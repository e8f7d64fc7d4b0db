"""Sphinx configuration for prirfed.

The proofs notes (../proofs_notes/*.md) are the single source of the derivations: at build time
each is copied into docs/notes/ without its front matter, with a header naming the code and tests
it covers (generated files, not committed).
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))

project = "prirfed"
author = "the prirfed developers"
copyright = "2026, the prirfed developers"
release = "0.1.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    # MathJax 3 served from the built site (_static/mathjax/), copied from the installed package:
    # no CDN, so a downloaded copy of the docs typesets its formulas offline
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinxcontrib.bibtex",
]
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
bibtex_bibfiles = ["refs.bib"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# _generated/ is included by pages; reproduced/ holds experiment outputs (shown by reproduced.md)
exclude_patterns = ["_build", "_generated", "reproduced", ".venv*"]
html_theme = "alabaster"
html_theme_options = {"page_width": "1300px", "sidebar_width": "220px"}
html_static_path = ["_static"]
html_css_files = ["prirfed.css"]
suppress_warnings = ["myst.header"]

# one macro file shared with proofs_notes
_macros = json.loads((ROOT / "proofs_notes" / "macros.json").read_text())
mathjax3_config = {
    # without 'noundefined', an unknown macro is a MathJax error (visible, and caught by the browser
    # check in tests/docs/test_browser.py) instead of silently printing its name in red
    "tex": {"macros": _macros, "packages": {"[-]": ["noundefined"]}},
}
# myst-parser (myst_update_mathjax, on by default) makes MathJax typeset only the elements Sphinx
# marked as math: a stray $$ or \( in prose stays visible, and the browser check catches it


def _generate_notes(app):
    from notes_pages import write_note_pages

    write_note_pages(ROOT / "proofs_notes", ROOT / "docs" / "notes")
    from gen_pages import generate

    generate(ROOT / "docs")


_RST_SPECIAL = str.maketrans({c: "\\" + c for c in "\\*|`_"})


def _verbatim_docstring(app, what, name, obj, options, lines):
    """The docstrings of this project are plain text with ASCII formulas (``|x|``, ``x_bar``,
    ``A^T B``, indented derivations), not reStructuredText. Show them as written: the first
    paragraph as escaped prose, the rest (including the doctest examples) as a literal block.
    Runs before numpydoc (lower priority number), which then has nothing to reinterpret."""
    if not lines:
        return
    try:
        cut = lines.index("")
    except ValueError:
        cut = len(lines)
    summary = [ln.strip().translate(_RST_SPECIAL) for ln in lines[:cut]]
    rest = lines[cut:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    out = summary[:]
    if rest:
        out += ["", "::", ""] + ["    " + ln if ln.strip() else "" for ln in rest]
    lines[:] = out + [""]  # numpydoc appends a comment: it must start a new paragraph


def setup(app):
    app.connect("builder-inited", _generate_notes)
    app.connect("autodoc-process-docstring", _verbatim_docstring, priority=400)
