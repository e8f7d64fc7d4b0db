"""Build-time generated parts of the docs (run by conf.py at ``builder-inited``; also importable
by the tests). Everything lands in ``docs/_generated/`` (not committed) and is ``{include}``d:

- ``theorems.md``: the theorem index, from the front matter of ``proofs_notes/theorem_*.md``;
- ``accounting_row.md``: Table 1 of 000, one row recomputed by hand, beside the sound accountant,
  and the counterexample's gap; numbers from the functions of ``tests/docs/test_snippets.py``;
- ``citation.md``: BibTeX for the software (from ``CITATION.cff``) and for the papers it implements
  (their entries in ``docs/refs.bib``);
- ``reproduced.md``: the committed outputs of ``prirfed reproduce all --quick --out docs/reproduced``
  (one section per ``docs/reproduced/NAME/`` that holds a config.json), or "not generated yet".
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from prirfed.testing.notes import parse_front_matter

ROOT = Path(__file__).resolve().parent.parent
NOT_GENERATED = "Not generated yet"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# ------------------------------------------------------------------------------------ theorems
def theorem_index(notes: Path) -> str:
    lines = ["| theorem | source | derivation | empirical checks (pytest ids) |", "|---|---|---|---|"]
    for note in sorted(notes.glob("theorem_*.md")):
        meta = parse_front_matter(note.read_text(), note.name)
        tests = "<br>".join(f"`{t}`" for t in meta.get("tests", []))
        lines.append(f"| {_cell(meta.get('title', note.stem))} | {_cell(meta.get('source', ''))} | "
                     f"{{doc}}`notes/{note.stem}` | {tests} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------- accounting
def _snippets():
    spec = importlib.util.spec_from_file_location("_prirfed_doc_snippets", ROOT / "tests" / "docs" / "test_snippets.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def accounting_row(N: int = 100, s: int = 1) -> str:
    sn = _snippets()
    from prirfed.reference.accounting.paper import TABLE_1_DELTA, TABLE_1_DELTA_HAT, TABLE_1_EPS

    out = [f"Row $N={N}$, $s={s}$ ($\\rho={s / N:g}$), local $(\\epsilon,\\delta)=({TABLE_1_EPS:g},{TABLE_1_DELTA:g})$, "
           f"$\\hat\\delta={TABLE_1_DELTA_HAT:g}$.", "",
           "| $T$ | by hand: $\\epsilon'$ | printed $\\epsilon'$ | by hand: $\\delta'$ | printed $\\delta'$ "
           "| sound $\\epsilon'$ at the same $\\delta'$ | sound, advanced composition: $\\epsilon'$ ($\\delta'$) |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    printed = dict(zip([r["T"] for r in sn.table_1_row(N, s)], sn.PRINTED_ROW_100_1)) if (N, s) == (100, 1) else {}
    for r in sn.table_1_row(N, s):
        e, d = sn.theorem_4_2_by_hand(TABLE_1_EPS, TABLE_1_DELTA, N, s, r["T"], TABLE_1_DELTA_HAT)
        pe, pd = printed.get(r["T"], (float("nan"), float("nan")))
        out.append(f"| {r['T']} | {e:#.4g} | {pe:#.3g} | {d:#.4g} | {pd:#.3g} | {r['eps_exact']:#.3g} | "
                   f"{r['eps_advanced']:#.3g} ({r['delta_advanced']:#.3g}) |")
    out += ["", "Counterexample ($N=2$, $s=1$, $T=1$, randomized response), "
            "$P_D(S)-e^{\\epsilon'}P_{D'}(S)-\\delta'$ with Theorem 4.2's $(\\epsilon',\\delta')$ at $\\hat\\delta=10^{-3}$:", "",
            "| local $\\epsilon$ | gap (positive: the claim fails) |", "|---:|---:|"]
    for eps in (0.15, 1.0):
        out.append(f"| {eps:g} | {sn.counterexample_gap(eps):.4g} |")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------- citation
def software_bibtex(cff: dict) -> str:
    """A BibTeX ``@software`` entry from the fields of CITATION.cff."""
    authors = " and ".join("{" + a["name"] + "}" if "name" in a else f"{a['family-names']}, {a['given-names']}"
                           for a in cff["authors"])
    fields = [("author", authors), ("title", cff["title"]), ("version", cff["version"]), ("license", cff["license"])]
    if cff.get("url"):
        fields.append(("url", cff["url"]))
    if cff.get("date-released"):
        fields.append(("year", str(cff["date-released"])[:4]))
    body = ",\n".join(f"  {k:<8}= {{{v}}}" for k, v in fields)
    return f"@software{{prirfed,\n{body}\n}}\n"


def bib_entries(bib: str, keys) -> str:
    """The raw entries of ``keys`` in a .bib text, in that order."""
    out = []
    for key in keys:
        m = re.search(r"^@\w+\{" + re.escape(key) + r",.*?^\}", bib, re.M | re.S)
        if m is None:
            raise ValueError(f"gen_pages.bib_entries: no entry {key!r} in docs/refs.bib")
        out.append(m.group(0))
    return "\n".join(out) + "\n"


def citation_page(root: Path = ROOT) -> str:
    import yaml

    from prirfed.papers import PAPERS

    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    keys = [PAPERS[c].key for c in ("000", "001", "002")]
    return ("The software (from `CITATION.cff`, version " + cff["version"] + "):\n\n```bibtex\n" + software_bibtex(cff)
            + "```\n\nThe papers it implements:\n\n```bibtex\n" + bib_entries((root / "docs" / "refs.bib").read_text(), keys)
            + "```\n")


# ---------------------------------------------------------------------------------- reproduced
def reproduced_outputs(folder: Path) -> list[Path]:
    """The experiment folders of ``folder`` that hold a config.json (sorted by name)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and (p / "config.json").is_file())


def reproduced_page(folder: Path, srcdir: Path) -> str:
    outs = reproduced_outputs(folder)
    if not outs:
        return (f"**{NOT_GENERATED}.** No experiment outputs are committed in `docs/reproduced/`; run "
                "`prirfed reproduce all --quick --out docs/reproduced` with the shared data folder and rebuild the docs.\n")
    lines = ["These are the committed outputs of `prirfed reproduce all --quick --out docs/reproduced`, run with the "
             "shared data folder (`../shared/data`: MNIST t10k and the WordNet mammal closure, as CI has it): the "
             "scaled-down `--quick` sizes on the real data; every figure's title says which data it used. "
             "`tests/docs/test_reproduced.py` fails when an experiment's configuration changes and these outputs were "
             "not regenerated, and regenerates the summaries and compares their verdicts and numbers with these. "
             "Each summary separates the paper's claims from our own sanity checks (thresholds ours), and an "
             "ordering that the spread over trials does not decide is reported as inconclusive.", ""]
    for p in outs:
        cfg = json.loads((p / "config.json").read_text())
        lines += [f"## {p.name}", "",
                  f"Source: {cfg.get('source', '')}. Mode `{cfg.get('config', {}).get('mode', '?')}`, seed "
                  f"{cfg.get('seed', '?')}, configuration hash `{cfg.get('config_hash', '?')}` "
                  f"(`docs/reproduced/{p.name}/config.json`).", ""]
        summary = p / "summary.md"
        if summary.is_file():
            body = summary.read_text().splitlines()
            if body and body[0].startswith("# "):
                body = body[1:]
            lines += [re.sub(r"^(#+) ", r"\1## ", ln) for ln in body] + [""]
        for png in sorted(p.glob("*.png")):
            rel = png.relative_to(srcdir).as_posix()
            lines += [f"```{{image}} /{rel}", f":alt: {p.name}: {png.stem}", ":width: 90%", "```", ""]
    return "\n".join(lines) + "\n"


def generate(srcdir: Path = ROOT / "docs") -> None:
    gen = srcdir / "_generated"
    _write(gen / "theorems.md", theorem_index(ROOT / "proofs_notes"))
    _write(gen / "accounting_row.md", accounting_row())
    _write(gen / "reproduced.md", reproduced_page(srcdir / "reproduced", srcdir))
    _write(gen / "citation.md", citation_page())
