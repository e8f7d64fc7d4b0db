"""The documentation as a reader sees it: every page of the built site loaded in headless Chromium.

Each page is served over HTTP from 127.0.0.1 (the browser itself is offline: no host name
resolves), loaded, and inspected after MathJax has typeset it (``probe.js``). A page fails if it
has math that is not typeset, a MathJax error, a raw ``$``/``$$`` or LaTeX command outside math,
raw Markdown or RST markup (``**``, a backtick, ``:func:```, ``{cite}```), an internal paper code
or process word, a link to a missing page or anchor, a resource from the network or a script
error, or, at 1280 px, content wider than the text column or a sidebar that is not beside it. The
manifold and tutorial pages are screenshot at 1280 px into ``docs/_build/browser-check/`` (or
``$PRIRFED_SCREENSHOTS``) for a reviewer, with ``report.json`` (every page's findings).

The site: ``$PRIRFED_DOCS_HTML`` if set (``.ci/run`` builds it once with ``sphinx -W`` and sets
it), else a fresh ``sphinx -W`` build in a temporary folder.

Chromium: ``$PRIRFED_CHROMIUM`` or ``chromium`` on ``PATH`` (Debian: ``apt-get install chromium``).
Without it the test is skipped with that reason on a developer's machine, and fails when
``PRIRFED_REQUIRE_BROWSER=1`` (set by ``.ci/run``) or ``CI`` is set: CI must not pass silently
without the browser check.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from _cdp import Chromium, find_chromium

from prirfed.papers import CODE

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROBE = (Path(__file__).parent / "probe.js").read_text()
WIDTH, HEIGHT = 1280, 900
SHOTS = Path(os.environ.get("PRIRFED_SCREENSHOTS") or ROOT / "docs" / "_build" / "browser-check")


def browser_required() -> bool:
    return os.environ.get("PRIRFED_REQUIRE_BROWSER") == "1" or os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


# ------------------------------------------------------------------------------------ checks
# Each check takes one page's report (probe.js plus "console") and returns a list of problems.

RAW_MARKUP = [
    (re.compile(r"\$"), "a raw $ (math MyST did not parse)"),
    (re.compile(r"\\[A-Za-z]+|\\[()\[\]{}]"), "raw LaTeX outside math"),
    (re.compile(r"\*\*"), "raw ** (Markdown bold)"),
    (re.compile(r"`"), "a raw backtick (Markdown/RST code or role)"),
    (re.compile(r"(?<![\w])::?[a-z]+:(?=`|\s*$)"), "a raw RST role"),
    (re.compile(r"\{[a-z][\w:-]*\}"), "a raw MyST role or directive name"),
    (re.compile(r"\]\("), "a raw Markdown link"),
]
INTERNAL_WORDS = [
    (CODE, "a paper code (name the paper: author-year)"),
    (re.compile(r"DESIGN\.md|ERRATA_LEADS|\bbriefs?\b|\bhelpers?'|\b(?:this|other) helpers?\b|\bsearch tool\b", re.I),
     "an internal process word"),
    (re.compile(r"\bissue \d+|\bsession[ -]\d+\b", re.I), "an internal issue or session number"),
]


def _context(text: str, m: re.Match) -> str:
    return " ".join(text[max(0, m.start() - 50): m.end() + 50].split())


def problems_math(rep: dict, base: str) -> list[str]:
    out = []
    if rep["mathCount"]:
        if not rep["mathjax"]:
            out.append(f"{rep['mathCount']} formulas but MathJax did not start (script {rep['mathjaxSrc']})")
        elif not (rep["mathjaxSrc"] or "").startswith(base):
            out.append(f"MathJax is not served by the site: {rep['mathjaxSrc']}")
    out += [f"formula not typeset: {t!r}" for t in rep["unrendered"]]
    out += [f"MathJax error: {t!r}" for t in rep["mathErrors"]]
    return out


def _scan(rep: dict, patterns) -> list[str]:
    out = []
    for text in [rep["title"], *rep["texts"]]:
        for rx, what in patterns:
            for m in rx.finditer(text):
                out.append(f"{what}: ...{_context(text, m)}...")
    return out


def problems_markup(rep: dict, base: str) -> list[str]:
    return _scan(rep, RAW_MARKUP)


def problems_words(rep: dict, base: str) -> list[str]:
    return _scan(rep, INTERNAL_WORDS)


def problems_resources(rep: dict, base: str) -> list[str]:
    out = [f"resource not served by the site: {u}" for u in rep["resources"] if not (u.startswith(base) or u.startswith("data:"))]
    # the browser asks every site for /favicon.ico by itself; the page does not
    return out + [f"browser: {e}" for e in rep["console"] if not e.rstrip().endswith("/favicon.ico")]


def problems_layout(rep: dict, base: str) -> list[str]:
    out = []
    vp = rep["viewport"]
    if vp["scrollWidth"] > vp["clientWidth"]:
        out.append(f"the page scrolls sideways at {vp['width']} px (content {vp['scrollWidth']} px wide)")
    out += [f"wider than the text column: {o}" for o in rep["overflow"]]
    body, side = rep["bodyRect"], rep["sidebarRect"]
    if body and side:
        beside = side["right"] <= body["left"] + 1 or side["left"] >= body["right"] - 1
        if not beside or side["top"] > body["top"] + 200:
            out.append(f"the sidebar is not beside the text (sidebar {side}, text {body})")
    return out


def problems_links(rep: dict, base: str, site: Path, ids_of) -> list[str]:
    out = []
    for link in rep["links"]:
        href = link["href"]
        if not href.startswith(base):
            continue  # an external link (not fetched: the check runs offline)
        parts = urlsplit(href)
        rel = unquote(parts.path)[len(urlsplit(base).path):].lstrip("/")
        target = site / rel
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            out.append(f"broken link {link['raw']!r} ({link['text']!r}): {rel} does not exist")
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in ids_of(target):
            out.append(f"broken anchor {link['raw']!r} ({link['text']!r}): no id {parts.fragment!r} in {rel}")
    return out


CHECKS = {"math": problems_math, "markup": problems_markup, "words": problems_words,
          "resources": problems_resources, "layout": problems_layout}


# ------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def chromium() -> str:
    exe = find_chromium()
    if exe is None:
        msg = ("Chromium not found (looked for $PRIRFED_CHROMIUM, chromium, chromium-browser, google-chrome): "
               "the docs browser check needs it (Debian/Ubuntu: apt-get install chromium)")
        if browser_required():
            pytest.fail(msg + "; PRIRFED_REQUIRE_BROWSER/CI is set, so its absence is a failure")
        pytest.skip(msg)
    return exe


@pytest.fixture(scope="module")
def site(chromium, tmp_path_factory) -> Path:
    given = os.environ.get("PRIRFED_DOCS_HTML")
    if given:
        path = Path(given).resolve()
        assert (path / "index.html").is_file(), f"PRIRFED_DOCS_HTML={given}: no index.html there (build the docs first)"
        return path
    out = tmp_path_factory.mktemp("docs-html")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", str(ROOT / "docs"), str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, f"sphinx -W failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serve():
    """serve(folder) -> base URL of an HTTP server on 127.0.0.1 for that folder (stopped at the end)."""
    servers = []

    def start(folder: Path) -> str:
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium(chromium, WIDTH, HEIGHT) as b:
        yield b


def load(browser: Chromium, url: str) -> dict:
    browser.goto(url)
    rep = browser.evaluate(PROBE)
    rep["console"] = browser.console_errors()
    return rep


def html_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if not p.relative_to(site).parts[0] in ("_static", "_sources"))


MANIFOLD_PAGES = ("manifolds/index.html", "manifolds/sphere.html", "manifolds/spd.html", "manifolds/lorentz.html",
                  "manifolds/stiefel.html", "manifolds/euclidean.html")
TUTORIAL_PAGES = ("tutorials/private_run.html", "tutorials/own_manifold.html", "tutorials/own_problem.html",
                  "tutorials/accounting_pipeline.html", "tutorials/reproduce_figure.html")
SCREENSHOT_PAGES = MANIFOLD_PAGES + TUTORIAL_PAGES


@pytest.fixture(scope="module")
def site_report(site, serve, browser):
    """Every page loaded once: {page: report}; screenshots of the manifold pages; report.json."""
    base = serve(site)
    if SHOTS.exists():
        shutil.rmtree(SHOTS)
    SHOTS.mkdir(parents=True)
    reports, t0 = {}, time.monotonic()
    for page in html_pages(site):
        reports[page] = load(browser, base + page)
        if page in SCREENSHOT_PAGES:
            stem = page.replace("/", "_").removesuffix(".html")
            browser.screenshot(SHOTS / f"{stem}.png")
            browser.screenshot(SHOTS / f"{stem}-full.png", full_page=True)
    elapsed = time.monotonic() - t0
    summary = {page: {name: check(rep, base) for name, check in CHECKS.items()} for page, rep in reports.items()}
    (SHOTS / "report.json").write_text(json.dumps({"site": str(site), "seconds": round(elapsed, 1), "pages": summary}, indent=1))
    return base, reports


def _ids_reader(site: Path, reports: dict, base: str):
    cache = {}

    def ids_of(target: Path) -> set[str]:
        rel = target.relative_to(site).as_posix()
        if rel in reports:
            return set(reports[rel]["ids"])
        if rel not in cache:
            cache[rel] = set(re.findall(r'\b(?:id|name)="([^"]+)"', target.read_text(errors="replace")))
        return cache[rel]

    return ids_of


def _assert_none(found: dict[str, list[str]], what: str):
    found = {p: v for p, v in found.items() if v}
    lines = [f"{page}:\n    " + "\n    ".join(v[:15]) + (f"\n    ... and {len(v) - 15} more" if len(v) > 15 else "")
             for page, v in sorted(found.items())]
    assert not found, f"{what} on {len(found)} page(s) (details in {SHOTS / 'report.json'}):\n" + "\n".join(lines)


# ------------------------------------------------------------------------------------ tests
def test_every_page_was_loaded(site, site_report):
    base, reports = site_report
    assert len(reports) >= 50, f"only {len(reports)} pages found in {site}"
    assert {"index.html", "bibliography.html", *SCREENSHOT_PAGES} <= set(reports)
    with_math = [p for p, r in reports.items() if r["mathCount"]]
    assert len(with_math) >= 20, f"MathJax ran on only {len(with_math)} pages"


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_pages(check, site_report):
    base, reports = site_report
    _assert_none({p: CHECKS[check](r, base) for p, r in reports.items()}, f"{check} problems")


_NUMPY_HEADING = re.compile(r"^\s*(Parameters|Returns|Yields|Raises|Attributes|Examples)\n\s*-{5,}\s*$", re.M)


def literal_block_problems(html: str) -> list[str]:
    """A docstring rendered by numpydoc shows its Parameters/Returns/Raises as field lists; one shown
    as written (not valid reStructuredText, or printed verbatim) shows a NumPy section heading with
    its dashes inside preformatted text. Problems of one API page."""
    out = []
    for pre in re.findall(r"<pre>(.*?)</pre>", html, re.S):
        plain = re.sub(r"<[^>]+>", "", pre)
        m = _NUMPY_HEADING.search(plain)
        if m:
            out.append(f"literal block with the heading {m.group(1)!r}: {plain[:80]!r}")
    if 'class="field-list' not in html:
        out.append("no field list (no rendered Parameters/Returns)")
    return out


def test_api_pages_show_no_literal_block_docstrings(site):
    """No API page shows a NumPy section heading inside a literal block, and each shows field lists."""
    pages = sorted((site / "api").glob("*.html"))
    assert len(pages) >= 10, pages
    bad, checked = {}, 0
    for page in pages:
        if page.name == "index.html":
            continue
        checked += 1
        found = literal_block_problems(page.read_text())
        if found:
            bad[page.name] = found
    assert checked >= 10, checked
    assert not bad, "API pages show docstrings as literal blocks:\n" + "\n".join(f"{p}: {v[:5]}" for p, v in bad.items())


def test_the_literal_block_check_can_fail():
    verbatim = ('<dl class="py function"><dd><pre>Sum of x and y.\n\nParameters\n----------\nx : float\n'
                '    A number.</pre></dd></dl>')
    found = literal_block_problems(verbatim)
    assert any("heading 'Parameters'" in p for p in found) and any("no field list" in p for p in found), found
    rendered = '<dl class="field-list simple"><dt class="field-odd">Parameters</dt></dl><pre>&gt;&gt;&gt; f(1)</pre>'
    assert literal_block_problems(rendered) == []


def test_internal_links_resolve(site, site_report):
    base, reports = site_report
    ids_of = _ids_reader(site, reports, base)
    _assert_none({p: problems_links(r, base, site, ids_of) for p, r in reports.items()}, "broken internal links")


def test_search_results_show_no_raw_latex(site_report, browser):
    base, _ = site_report
    browser.goto(base + "search.html?q=geodesic")
    summaries = browser.evaluate("""(async () => {
        const deadline = Date.now() + 30000;
        while (Date.now() < deadline) {
          const done = document.querySelector('#search-results h2');
          if (done && !document.querySelector('#search-progress').textContent.includes('Preparing')) {
            const ps = [...document.querySelectorAll('#search-results p.context')];
            if (ps.length >= 5 || Date.now() > deadline - 20000) return ps.map((p) => p.textContent);
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        return null; })()""")
    assert summaries, "the search page showed no result summaries for 'geodesic'"
    raw = [s for s in summaries if re.search(r"\\[A-Za-z()\[\]]|\$", s)]
    assert not raw, "search result summaries show raw LaTeX:\n" + "\n".join(raw[:5])


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_manifold_and_tutorial_pages_are_screenshot_at_1280px(site_report):
    for page in SCREENSHOT_PAGES:
        stem = page.replace("/", "_").removesuffix(".html")
        for name in (f"{stem}.png", f"{stem}-full.png"):
            w, h = _png_size(SHOTS / name)
            assert w == WIDTH and h >= HEIGHT, f"{name}: {w}x{h}"


# ------------------------------------------------------------------------------------ the checks can fail
BAD_BODY = r"""
<p>raw $x$ and $$y$$, **bold**, {cite}`huang2024prirfed`, :func:`f`, [text](target.md), \frac12</p>
<p>see 000 and DESIGN.md (issue 2)</p>
<p><span class="math notranslate nohighlight">\(\undefinedmacro x\)</span></p>
<p><a href="missing-page.html">a missing page</a> <a href="#no-such-anchor">a missing anchor</a></p>
<div style="width: 2000px">a block wider than the column</div>
"""


def _bad_page(site: Path, base: str, folder: Path, name: str, mathjax_ok: bool) -> None:
    html = (site / "manifolds" / "sphere.html").read_text()
    html = html.replace("<head>", f'<head><base href="{base}manifolds/">', 1)
    html = re.sub(r'(<div class="body" role="main">)', r"\1" + BAD_BODY.replace("\\", "\\\\"), html, count=1)
    if not mathjax_ok:
        html = html.replace("mathjax/tex-chtml.js", "mathjax/missing.js")
    (folder / name).write_text(html)


def test_the_checks_fail_on_a_broken_page(site, site_report, serve, browser, tmp_path):
    """A copy of a real page with every defect injected: each check reports it."""
    base, reports = site_report
    _bad_page(site, base, tmp_path, "bad.html", mathjax_ok=True)
    _bad_page(site, base, tmp_path, "no-mathjax.html", mathjax_ok=False)
    bad_base = serve(tmp_path)
    rep = load(browser, bad_base + "bad.html")
    found = {name: check(rep, base) for name, check in CHECKS.items()}
    assert any("undefinedmacro" in p for p in found["math"]), found["math"]
    markup = "\n".join(found["markup"])
    for what in ("raw $", "raw **", "backtick", "RST role", "MyST role", "Markdown link", "raw LaTeX"):
        assert what in markup, (what, markup)
    words = "\n".join(found["words"])
    assert "paper code" in words and "process word" in words and "issue" in words, words
    assert any("wider than the text column" in p for p in found["layout"]), found["layout"]
    links = problems_links(rep, base, site, _ids_reader(site, reports, base))
    assert any("missing-page.html" in p for p in links) and any("no-such-anchor" in p for p in links), links

    rep = load(browser, bad_base + "no-mathjax.html")
    math = problems_math(rep, base)
    assert any("MathJax did not start" in p for p in math) and any("not typeset" in p for p in math), math
    assert any("missing.js" in p for p in problems_resources(rep, base)), rep["console"]
