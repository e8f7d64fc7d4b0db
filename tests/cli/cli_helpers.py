"""Helpers of the CLI tests (tests/cli/): a small valid ``prirfed run`` configuration (from
``run_configs``), a TOML writer for the values the tests use, a byte-exact snapshot of a folder,
and running the CLI in-process with its stderr captured. Plain functions, imported as ``cli_helpers``."""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import math
import os
import stat
import sys
from pathlib import Path

from prirfed import cli
from run_configs import small_doc  # noqa: F401  (re-exported for the CLI tests)


def _bare_key_ok(k: str) -> bool:
    return bool(k) and all(c.isalnum() and c.isascii() or c in "-_" for c in k)


def toml_key(k: str) -> str:
    """A TOML key: bare when it may be, else a basic string with JSON escapes (valid TOML)."""
    return k if _bare_key_ok(k) else json.dumps(k)


def toml_value(v) -> str:
    """One TOML value (booleans, integers, floats incl. inf/nan, strings, dates, arrays, inline tables)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # JSON's escapes are TOML basic-string escapes (\uXXXX for controls)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"no TOML form for {v!r}")


def toml_text(doc: dict) -> str:
    """A TOML document: each table value of ``doc`` as a [section], anything else as a top-level key
    (written first, as TOML requires)."""
    top = [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    parts = ["\n".join(top)] if top else []
    for sec, tab in doc.items():
        if isinstance(tab, dict):
            parts.append(f"[{toml_key(sec)}]\n" + "\n".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in tab.items()))
    return "\n\n".join(parts) + "\n"


def write_toml(path: Path, doc: dict) -> Path:
    path.write_text(toml_text(doc))
    return path


def snapshot(root: Path) -> dict:
    """Everything under ``root`` without following links: relative path -> ("file", bytes) |
    ("dir", None) | ("link", target) | ("other", mode). Two equal snapshots: nothing changed."""
    out = {}
    root = Path(root)
    if not os.path.lexists(root):
        return {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", None)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", p.read_bytes())
            else:
                out[rel] = ("other", stat.S_IFMT(st.st_mode))
    return out


def leftovers(root: Path) -> list:
    """Temporaries and staging folders of the writers anywhere under ``root``."""
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob(".prirfed-*") if p.name != ".prirfed.lock")


def run_cli(argv: list) -> tuple[int, str, str]:
    """``prirfed ARGV`` in this process: (exit code, stdout, stderr); argparse's exits are returned
    as their code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            rc = cli.main([str(a) for a in argv], out=out)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
    return rc, out.getvalue(), err.getvalue()


def assert_one_line_error(rc: int, err: str, command: str, codes=(1, 2)) -> str:
    """A failure: exit code in ``codes`` and exactly one line on stderr, ``prirfed COMMAND: error: ...``
    (argparse's own errors name the subcommand's parser), no traceback. Returns the line."""
    assert rc in codes, (rc, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith(f"prirfed {command}: error: ") or lines[0].startswith("prirfed: error: "), err
    assert "Traceback" not in err
    return lines[0]


def python() -> str:
    return sys.executable
