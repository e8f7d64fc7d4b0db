"""Every formula in the Markdown sources is parsed as math by MyST (no browser needed).

The sources are parsed with myst-parser's own markdown-it parser, configured from docs/conf.py.
A ``$`` left in a text token means a formula MyST did not recognise: for instance ``$$...$$``
inside a paragraph (dollarmath only parses display math that starts a block), after which the
remaining ``$`` signs pair up wrongly and prose is typeset as math. tests/docs/test_browser.py
checks the rendered pages; this test names the source line.
"""

import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

myst_mdit = pytest.importorskip("myst_parser.parsers.mdit", reason="myst-parser (the docs extra) is not installed")


def sources() -> list[Path]:
    skip = {"_build", "_generated", "notes", "reproduced"}  # build output, or copies of proofs_notes/
    docs = [p for p in DOCS.rglob("*.md") if not skip & set(p.relative_to(DOCS).parts[:-1])]
    return sorted(docs) + sorted((ROOT / "proofs_notes").glob("*.md"))


def parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig

    conf = runpy.run_path(str(DOCS / "conf.py"))
    cfg = MdParserConfig(enable_extensions=set(conf["myst_enable_extensions"]))
    return myst_mdit.create_md_parser(cfg, RendererHTML)


def stray_dollars(md, text: str) -> list[tuple[int, str]]:
    """(line, text) of every text token of ``text`` that still holds a ``$`` after parsing."""
    out = []
    for tok in md.parse(text):
        if tok.type != "inline":
            continue
        line = tok.map[0] + 1 if tok.map else 0
        for child in tok.children or []:
            if child.type == "text" and "$" in child.content:
                out.append((line, child.content.strip()[:100]))
    return out


def test_the_check_sees_display_math_inside_a_paragraph():
    md = parser()
    assert stray_dollars(md, "Hence\n$$a=b,$$\nwith $c$.\n")
    assert not stray_dollars(md, "Hence\n\n$$a=b,$$\n\nwith $c$.\n")


@pytest.mark.parametrize("path", sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_dollar_is_parsed_as_math(path):
    bad = stray_dollars(parser(), path.read_text())
    assert not bad, (f"{path.relative_to(ROOT)}: '$' left as text (give display math $$...$$ its own "
                     f"block: a blank line before and after):\n" + "\n".join(f"  line {n}: {t}" for n, t in bad))
