"""Sphinx configuration for prirfed.

The proofs notes (../proofs_notes/*.md) are the single source of the derivations: at build time
each is copied into docs/notes/ without its front matter, with a header naming the code and tests
it covers (generated files, not committed).
"""

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import sphinxcontrib.bibtex.plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))

from reader_text import for_readers  # noqa: E402

project = "prirfed"
author = "the prirfed developers"
copyright = "2026, the prirfed developers"
release = "0.1.0"

extensions = [
    # myst-nb: MyST Markdown (it brings myst-parser) plus the tutorials, text notebooks whose code
    # cells run when the site is built (docs/tutorials/)
    "myst_nb",
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
# citations read "Huang et al. (2024)" / "(Mironov, 2017)" and link to the bibliography page
bibtex_reference_style = "author_year_round"
source_suffix = {".md": "myst-nb", ".rst": "restructuredtext"}
# _generated/ is included by pages; reproduced/ holds experiment outputs (shown by reproduced.md)
exclude_patterns = ["_build", "_generated", "reproduced", ".venv*"]
html_theme = "alabaster"
# alabaster moves the sidebar below the text when the window is narrower than page_width: at
# 1240 px it stays beside the text on a 1280 px screen (checked by tests/docs/test_browser.py)
# body_max_width: the text column takes the page's width (alabaster caps it at 800 px by default),
# which the wide errata and theorem tables need
html_theme_options = {"page_width": "1240px", "sidebar_width": "220px", "body_max_width": "none"}
html_static_path = ["_static"]
html_css_files = ["prirfed.css"]
html_js_files = ["prirfed-search.js"]
suppress_warnings = ["myst.header"]

# the tutorials run at every build, so they cannot rot: a cell that raises fails the build
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_merge_streams = True
# Markdown printed by a tutorial (a run's summary.md) is parsed as MyST: its tables render
nb_render_markdown_format = "myst"
# the kernel ("python3", whose command is `python`) is this interpreter: its folder goes first on
# PATH, so a build started as /path/to/venv/bin/python -m sphinx runs the tutorials in that venv
# even when the venv is not activated
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

# one macro file shared with proofs_notes
_macros = json.loads((ROOT / "proofs_notes" / "macros.json").read_text())
mathjax3_config = {
    # without 'noundefined', an unknown macro is a MathJax error (visible, and caught by the browser
    # check in tests/docs/test_browser.py) instead of silently printing its name in red
    "tex": {"macros": _macros, "packages": {"[-]": ["noundefined"]}},
}
# myst-parser (myst_update_mathjax, on by default) makes MathJax typeset only the elements Sphinx
# marked as math: a stray $$ or \( in prose stays visible, and the browser check catches it


@dataclass
class _AuthorYearRound(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's author-year citations with round brackets."""

    bracket_parenthetical: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")"))
    bracket_textual: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")"))
    bracket_author: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")"))
    bracket_label: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")"))
    bracket_year: BracketStyle = field(default_factory=lambda: BracketStyle(left="(", right=")"))


sphinxcontrib.bibtex.plugin.register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round", _AuthorYearRound)


def _for_readers(app, docname, source):
    """Every Markdown page: papers named author-year, leads linked (docs/reader_text.py)."""
    if str(app.env.doc2path(docname)).endswith(".md"):
        source[0] = for_readers(source[0])


def _include_for_readers(app, relative_path, parent_docname, content):
    if str(relative_path).endswith(".md"):
        content[0] = for_readers(content[0])


def _generate_notes(app):
    from notes_pages import write_note_pages

    write_note_pages(ROOT / "proofs_notes", ROOT / "docs" / "notes")
    from gen_pages import generate

    generate(ROOT / "docs")


def _module_headings_as_rubrics(app, what, name, obj, options, lines):
    """A module docstring's NumPy-style headings ("Examples" over dashes) become rubrics: as
    sections they would collide (duplicate ids) when several modules share one API page."""
    if what != "module":
        return
    out, i = [], 0
    while i < len(lines):
        if (i + 1 < len(lines) and lines[i].strip() and not lines[i][0].isspace()
                and set(lines[i + 1].rstrip()) == {"-"} and len(lines[i + 1].rstrip()) == len(lines[i].rstrip())):
            out += [f".. rubric:: {lines[i].strip()}", ""]
            i += 2
        else:
            out.append(lines[i])
            i += 1
    lines[:] = out


def setup(app):
    app.connect("builder-inited", _generate_notes)
    app.connect("source-read", _for_readers)
    app.connect("include-read", _include_for_readers)
    app.connect("autodoc-process-docstring", _module_headings_as_rubrics, priority=450)
