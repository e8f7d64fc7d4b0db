"""The tutorials (docs/tutorials/) are executed at every docs build, and a failing cell fails it.

Each tutorial is a MyST text notebook (``file_format: mystnb``) in the tutorials' toctree; the
docs configuration executes every notebook on every build (``nb_execution_mode = "force"``, no
cache that could show stale output) and turns a cell's exception into a build error. The last
test builds a one-page site with the same execution settings and a cell that raises, and checks
that Sphinx fails and names the exception: the setting is not just present, it works.
"""

import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"

pytest.importorskip("myst_nb", reason="myst-nb (the docs extra) is not installed")


def tutorial_pages() -> list[Path]:
    return sorted(p for p in TUTORIALS.glob("*.md") if p.name != "index.md")


def conf() -> dict:
    return runpy.run_path(str(ROOT / "docs" / "conf.py"))


def test_every_tutorial_is_an_executed_notebook_in_the_toctree():
    pages = tutorial_pages()
    assert len(pages) >= 5, pages
    toc = (TUTORIALS / "index.md").read_text()
    listed = set(re.search(r"```\{toctree\}(.*?)```", toc, re.S).group(1).split())
    for page in pages:
        text = page.read_text()
        assert text.startswith("---\nfile_format: mystnb\n"), f"{page.name}: not a MyST notebook (front matter)"
        assert "```{code-cell} ipython3" in text, f"{page.name}: no code cell"
        assert page.stem in listed, f"{page.name} is not in the tutorials' toctree"
    assert "tutorials/index" in (ROOT / "docs" / "index.md").read_text()


def test_the_docs_execute_every_notebook_and_fail_on_errors():
    c = conf()
    assert "myst_nb" in c["extensions"]
    assert c["nb_execution_mode"] == "force"
    assert c["nb_execution_raise_on_error"] is True
    assert c["nb_execution_show_tb"] is True  # the failing cell's traceback is in the build log


@pytest.mark.slow
def test_a_raising_cell_fails_the_build(tmp_path):
    c = conf()
    settings = {k: c[k] for k in ("nb_execution_mode", "nb_execution_raise_on_error", "nb_execution_timeout",
                                  "nb_execution_show_tb")}
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['myst_nb']\n" + "".join(f"{k} = {v!r}\n" for k, v in settings.items()))
    (src / "index.md").write_text("---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n  language: python\n---\n\n"
                                  "# Broken\n\n```{code-cell} ipython3\nraise RuntimeError('tutorial cell failed on purpose')\n```\n")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode != 0, "a tutorial cell raised and the build still passed"
    log = r.stdout + r.stderr
    saved = re.search(r"full traceback has been saved in:\s*(\S+)", log)  # Sphinx writes long tracebacks to a file
    if saved and Path(saved.group(1)).is_file():
        log += Path(saved.group(1)).read_text(errors="replace")
    assert "ExecutionError" in log and "tutorial cell failed on purpose" in log, log[-3000:]
