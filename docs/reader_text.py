"""Markdown as readers see it: papers named author-year, leads linked (run by conf.py on every page).

The proofs notes and the pages refer to the papers by short codes (``000``, ``001``, ...). At build
time every Markdown source (``source-read``) and every included file (``include-read``) goes
through :func:`for_readers`, which

- replaces a standalone paper code by a citation, ``{cite:t}`KEY``` (rendered "Huang et al.
  (2024)", a link to the full reference on the bibliography page), or by the plain author-year
  name in headings and link texts, where a link cannot nest;
- turns "ERRATA lead 17", "ERRATA_LEADS 13, 16", "lead 3" into "lead 17", "leads 13, 16", "lead 3"
  linked to the table of leads on the errata page (target ``errata-leads``).

Code (fenced blocks, inline code), math, roles, link targets and HTML tags are left exactly as
written, so identifiers such as ``test_table_1_of_000`` and numbers such as ``0.001`` keep their
digits. ``tests/docs/test_reader_text.py`` checks these rules; the browser check
(``tests/docs/test_browser.py``) checks that no code is left on any rendered page.
"""

from __future__ import annotations

import re

from prirfed.papers import CODE, PAPERS

# fenced directives whose body is Markdown (translated); every other fence is code or options
MARKDOWN_DIRECTIVES = {"admonition", "note", "warning", "important", "tip", "hint", "seealso", "attention",
                       "caution", "danger", "error", "topic", "sidebar", "dropdown", "epigraph"}

_PROTECTED = re.compile(
    r"(?P<code>(`+)[\s\S]+?(?<!`)\2(?!`))"      # inline code (may span the lines of a paragraph)
    r"|(?P<role>\{[\w:.+-]+\}(`+)[\s\S]*?\4)"    # a role with its content: {cite}`x`, {doc}`y`
    r"|(?P<dmath>\$\$[\s\S]+?\$\$)"              # display math inside a paragraph
    r"|(?P<math>\$[^$]+?\$)"                     # inline math (may span lines)
    r"|(?P<link>\[(?P<ltext>[^\]\n]*)\]\((?P<ltarget>[^)\n]*)\))"  # [text](target)
    r"|(?P<html></?[A-Za-z][\w-]*(?:\s[^<>\n]*)?/?>|<[a-z]+:[^<>\s]+>)"  # an HTML tag or autolink
)
_ERRATA_LEADS = re.compile(r"\bERRATA(?:_LEADS| leads)\b")
_ERRATA_LEAD = re.compile(r"\bERRATA lead\b")
_LEAD = re.compile(r"\b([Ll]eads?)[ -](\d+(?:(?:, and |, | and | or |/)\d+)*)\b")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([\w:-]+)\})?(.*)$")


def _papers(text: str, plain: bool) -> str:
    def sub(m):
        paper = PAPERS.get(m.group(1))
        if paper is None:
            return m.group(0)
        return paper.short if plain else f"{{cite:t}}`{paper.key}`"

    return CODE.sub(sub, text)


def _leads(text: str, plain: bool) -> str:
    text = _ERRATA_LEADS.sub("leads", text)
    text = _ERRATA_LEAD.sub("lead", text)
    if plain:
        return _LEAD.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    return _LEAD.sub(lambda m: f"{{ref}}`{m.group(1)} {m.group(2)} <errata-leads>`", text)


def _prose(text: str, plain: bool) -> str:
    return _papers(_leads(text, plain), plain)


def translate_line(line: str, plain: bool = False) -> str:
    """One line of Markdown prose; ``plain`` for headings (no roles)."""
    out, pos = [], 0
    for m in _PROTECTED.finditer(line):
        out.append(_prose(line[pos:m.start()], plain))
        if m.group("link") is not None:
            out.append(f"[{_prose(m.group('ltext'), True)}]({m.group('ltarget')})")
        else:
            out.append(m.group(0))
        pos = m.end()
    out.append(_prose(line[pos:], plain))
    return "".join(out)


def for_readers(text: str) -> str:
    """The Markdown ``text`` with paper codes and leads translated (see the module docstring)."""
    lines = text.split("\n")
    out: list[str] = []
    para: list[str] = []  # the lines of the current paragraph: inline math and code may span them
    fences: list[tuple[str, bool]] = []  # open fences: (marker, body is Markdown)
    in_math = False

    def flush():
        if para:
            out.extend(translate_line("\n".join(para)).split("\n"))
            para.clear()

    for line in lines:
        m = _FENCE.match(line)
        if m:
            flush()
            marker, directive, rest = m.group(2), m.group(4), m.group(5)
            if fences and marker[0] == fences[-1][0][0] and len(marker) >= len(fences[-1][0]) and not directive and not rest.strip():
                fences.pop()
                out.append(line)
                continue
            if not fences or fences[-1][1]:
                markdown = marker[0] == ":" or (directive or "") in MARKDOWN_DIRECTIVES
                fences.append((marker, markdown))
                # the title of an admonition is prose
                out.append(m.group(1) + marker + (m.group(3) or "") + (translate_line(rest, True) if markdown else rest))
                continue
        if fences and not fences[-1][1]:
            out.append(line)
            continue
        stripped = line.strip()
        if in_math or stripped.startswith("$$"):
            flush()
            # display math over several lines (one-line $$...$$ is handled inline)
            if not in_math and stripped.count("$$") >= 2:
                out.append(translate_line(line))
                continue
            if in_math and "$$" in stripped:
                in_math = False
            elif not in_math:
                in_math = True
            out.append(line)
            continue
        if not stripped or stripped.startswith("#") or (fences and re.match(r"^\s*:[\w-]+:", line)):
            flush()
            if stripped.startswith("#"):
                out.append(translate_line(line, plain=True))
            else:
                out.append(line)  # a blank line or a directive option
            continue
        para.append(line)
    flush()
    return "\n".join(out)
