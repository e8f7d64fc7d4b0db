"""Mutation testing of prirfed: does a test fail when the code is wrong?

``python -m prirfed.testing.mutation --help``. An AST-based mutator of our own: mutmut (3.x)
rewrites every function into a trampoline that dispatches between mutants at run time, which
Numba cannot type inside an ``@njit`` kernel, and cosmic-ray mutates the files of a working copy in
place; neither knows about Numba's on-disk cache (a mutated kernel must be compiled fresh, and
so must every cached loop that inlined it).

How one mutant runs (never written into the working tree):

1. the mutated source of one module is written to a fresh temporary folder;
2. a forked child installs an import hook (first on ``sys.meta_path``) that loads the module's
   dotted name (``prirfed.reference.accounting.rdp``) from that file, points Numba's cache at an
   empty folder of its own when the module is one of the verified kernels (so the kernel *and every
   kernel that calls it* are compiled from source, i.e. the compiled code is what is tested, not
   its Python semantics), turns off pytest's assertion rewriting (its import hook would load the
   unmutated ``prirfed.*`` modules, the package of a pytest plugin), keeps Hypothesis' database
   out of the repository, and runs pytest on the tests mapped to the module
   (``mutation_config.toml``, checked in) with ``-x``;
3. the parent kills the child after the per-mutant time limit.

Outcomes: ``killed`` (a test failed or errored), ``survived`` (all passed), ``timeout``,
``equivalent`` (listed in ``mutation_equivalents.toml`` with a one-line reason each; such a mutant is
still generated and reported, never silently dropped, and is not run), ``not-imported`` (the tests
never imported the mutated module: a mapping error, counted as survived). A survivor listed in the
same file's ``[[tolerated]]`` table (a change of the result within what the function promises) is
still run and still counted as survived (also when it times out); the report prints its reason
beside it.

Operators (each names its change in the report): ``arith`` (``+ -``, ``* /``, ``** *``, ``// /``,
augmented assignments), ``compare`` (boundary ``< <=``, ``> >=``, ``== !=``), ``const`` (an int
``c+1``/``c-1``, a float ``2c``/``c/2``), ``sign`` (a float ``-c``), ``unary`` (``-x``, ``not x``
-> ``x``), ``boolop`` (``and or``), ``swap`` (the first two positional arguments of a call),
``return`` (``return None``), ``delete`` (a ``raise``, an ``assert`` or a call statement -> ``pass``),
``index`` (``a[i]`` -> ``a[i - 1]``), and ``named``: hand-written mutants of the config (the
survivors named in the issue tracker), run on every invocation.

The score: killed + timeout over all run mutants that are not equivalent. Sampling
(``--sample F --seed S``) keeps a mutant when a hash of its key and the seed falls under F: the
same code gives the same subset on every machine, and an edit elsewhere does not reshuffle it.

A long run in pieces: ``--resume`` keeps ``OUT/progress.jsonl`` and runs only the mutants not
recorded there, so the full run (about 15,600 mutants, days of CPU on two cores) can be stopped
and started again with the same arguments; each record names the commit it ran at, and the report
lists the commits of all pieces. A record is reused only while its key still names the same
mutated line (its fingerprint, or for older records the file rebuilt at its commit): an edit that
renumbers repeated literals moves a key onto another mutant, and that mutant runs again.

Covering tests first (``--covering``): the area's tests are run once on the unmutated code under
line coverage, each test under its own coverage context, and a mutant then runs first against only
the tests that executed its statement. A mutant they kill is killed; one that survives them (or
whose statement ran at import time, outside every test, or in no traced test) is run against all
the area's tests as without the option. So every outcome is the one the area's tests give; only
the time changes (a kill no longer waits for the tests that come before the killing one).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import fnmatch
import functools
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

__all__ = ["Mutant", "mutants_of", "load_config", "main"]

CONFIG = Path(__file__).with_name("mutation_config.toml")
EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.toml")

_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.Pow: ast.Mult,
          ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv, ast.MatMult: ast.Mult}
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
# calls whose argument order or deletion means nothing numerically (messages, type tests, logging)
_NO_SWAP = {"isinstance", "issubclass", "getattr", "setattr", "hasattr", "ValueError", "TypeError",
            "RuntimeError", "print", "warn", "format", "join", "get", "setdefault", "__init__"}


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One mutation of one module: ``key`` is stable under edits elsewhere in the file.

    Parameters
    ----------
    path : str
        Repository-relative file, e.g. ``reference/accounting/rdp.py``.
    module : str
        Dotted import name, e.g. ``prirfed.reference.accounting.rdp``.
    line : int
        Line of the mutated node.
    qualname : str
        Enclosing function or class, ``"<module>"`` at top level.
    op : str
        The mutation operator.
    original : str
        The original text (shortened).
    replacement : str
        The replacement text (shortened).
    key : str
        Stable identifier (``path::qualname::op::original => replacement``, numbered on repeats).
    span : tuple
        ``(source bytes, start, end, new text)`` to build the mutated file.
    """

    path: str          # repository-relative, e.g. reference/accounting/rdp.py
    module: str        # dotted import name, e.g. prirfed.reference.accounting.rdp
    line: int
    qualname: str      # enclosing function/class, "<module>" at top level
    op: str
    original: str
    replacement: str
    key: str
    span: tuple = dataclasses.field(repr=False, compare=False)  # (source bytes, start, end, new text)

    @property
    def source(self) -> str:
        """The whole mutated file (built on demand)."""
        raw, a, b, text = self.span
        return (raw[:a] + text.encode("utf-8") + raw[b:]).decode("utf-8")

    def compiles(self) -> bool:
        try:
            compile(self.source, self.path, "exec")
        except SyntaxError:
            return False
        return True

    def describe(self) -> str:
        return f"{self.path}:{self.line} [{self.op}] {self.qualname}: {self.original!r} -> {self.replacement!r}"

    def fingerprint(self) -> str:
        """Hash of the mutated line as it reads before and after the mutation (whitespace at its ends
        stripped): the key says where a mutant is only up to its repeat number, so an edit that adds
        or removes an equal literal earlier in the function moves a key onto another mutant; the
        fingerprint tells them apart (``--resume`` re-runs a record whose mutant it no longer names)."""
        raw, a, b, text = self.span
        start, end = raw.rfind(b"\n", 0, a) + 1, raw.find(b"\n", b)
        end = len(raw) if end < 0 else end
        before = raw[start:end].decode("utf-8").strip()
        after = (raw[start:a] + text.encode("utf-8") + raw[b:end]).decode("utf-8").strip()
        return hashlib.sha256(f"{before}\n{after}".encode("utf-8")).hexdigest()[:16]


def module_name(path: str) -> str:
    """Dotted import name of a repository file (reference/ and verified/ are prirfed's subpackages)."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] in ("reference", "verified"):
        parts = ["prirfed", *parts]
    return ".".join(parts)


def _short(text: str, n: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


class _Collector(ast.NodeVisitor):
    """Walks a module and records (node or statement, replacement text, op) candidates."""

    def __init__(self):
        self.found = []      # (node, replacement_text, op, qualname)
        self.stack = []

    # -- context ---------------------------------------------------------------------------
    def _qual(self):
        return ".".join(self.stack) or "<module>"

    def _scope(self, node):
        # decorators (njit options), argument defaults and annotations are not mutated
        self.stack.append(node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def _add(self, node, text, op):
        self.found.append((node, text, op, self._qual()))

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        if isinstance(node.value, ast.Call):
            self._add(node, "pass", "delete")
        self.generic_visit(node)

    def visit_Raise(self, node):
        self._add(node, "pass", "delete")  # the message itself is not mutated

    def visit_Assert(self, node):
        self._add(node, "pass", "delete")

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)

    def visit_Assign(self, node):
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.visit(node.value)
        for t in node.targets:   # indices of subscript targets
            if isinstance(t, ast.Subscript):
                self._index(t)

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add(node, "return None", "return")
        self.generic_visit(node)

    def visit_JoinedStr(self, node):
        return  # f-strings: messages

    def visit_If(self, node):
        t = node.test
        if (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"):
            return
        self.generic_visit(node)

    # -- expressions -----------------------------------------------------------------------
    def visit_BinOp(self, node):
        new = _ARITH.get(type(node.op))
        if new is not None:
            self._add(node, "(" + ast.unparse(ast.BinOp(node.left, new(), node.right)) + ")", "arith")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        new = _ARITH.get(type(node.op))
        if new is not None:
            self._add(node, ast.unparse(ast.AugAssign(node.target, new(), node.value)), "arith")
        self.visit(node.value)

    def visit_Compare(self, node):
        for i, op in enumerate(node.ops):
            new = _COMPARE.get(type(op))
            if new is not None:
                ops = list(node.ops)
                ops[i] = new()
                self._add(node, "(" + ast.unparse(ast.Compare(node.left, ops, node.comparators)) + ")", "compare")
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        new = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add(node, "(" + ast.unparse(ast.BoolOp(new, node.values)) + ")", "boolop")
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, (ast.USub, ast.Not)):
            if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
                pass  # a negative literal: mutated as a constant below
            else:
                self._add(node, "(" + ast.unparse(node.operand) + ")", "unary")
        self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return
        if isinstance(v, int):
            for w in (v + 1, v - 1):
                self._add(node, f"({w!r})", "const")
        else:
            if v == 0.0:
                self._add(node, "(1.0)", "const")
            else:
                for w in (v * 2.0, v / 2.0):
                    self._add(node, f"({w!r})", "const")
                self._add(node, f"({-v!r})", "sign")

    def visit_Call(self, node):
        fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        pos = [a for a in node.args]
        if (len(pos) >= 2 and fname not in _NO_SWAP and not any(isinstance(a, ast.Starred) for a in pos[:2])
                and ast.unparse(pos[0]) != ast.unparse(pos[1])
                and not any(isinstance(a, (ast.Constant, ast.JoinedStr)) and isinstance(getattr(a, "value", None), str)
                            for a in pos[:2])):
            args = [pos[1], pos[0], *pos[2:]]
            self._add(node, "(" + ast.unparse(ast.Call(node.func, args, node.keywords)) + ")", "swap")
        if fname in ("ValueError", "TypeError", "RuntimeError"):
            return
        self.generic_visit(node)

    def visit_Subscript(self, node):
        self._index(node)
        self.generic_visit(node)

    def _index(self, node):
        s = node.slice
        if isinstance(s, ast.Constant) and isinstance(s.value, int) and not isinstance(s.value, bool):
            return  # the constant operator already moves it by +-1
        if isinstance(s, ast.Name):
            self._add(s, f"({s.id} - 1)", "index")
        elif isinstance(s, ast.Tuple):
            for e in s.elts:
                if isinstance(e, ast.Name):
                    self._add(e, f"({e.id} - 1)", "index")


def _byte_offsets(src_bytes: bytes):
    starts = [0]
    for i, b in enumerate(src_bytes):
        if b == 10:
            starts.append(i + 1)
    return starts


def mutants_of(path: str | Path, root: str | Path = ".") -> list[Mutant]:
    """Every mutant of one file (``path`` relative to ``root``), in source order (a few may not
    compile: :meth:`Mutant.compiles`; :func:`collect` drops those).

    Parameters
    ----------
    path : str or pathlib.Path
        The file, relative to ``root``.
    root : str or pathlib.Path, optional
        Repository root (default ``"."``).

    Returns
    -------
    list of Mutant
        The mutants.
    """
    root = Path(root)
    rel = Path(path).as_posix()
    src = (root / rel).read_text(encoding="utf-8")
    tree = ast.parse(src)
    col = _Collector()
    col.visit(tree)
    raw = src.encode("utf-8")
    starts = _byte_offsets(raw)
    out, seen = [], {}
    for node, text, op, qual in col.found:
        a = starts[node.lineno - 1] + node.col_offset
        b = starts[node.end_lineno - 1] + node.end_col_offset
        orig = raw[a:b].decode("utf-8")
        if text.strip("()") == orig.strip("()"):
            continue
        base = f"{rel}::{qual}::{op}::{_short(orig)} => {_short(text)}"
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.append(Mutant(rel, module_name(rel), node.lineno, qual, op, _short(orig), _short(text),
                          base if k == 0 else f"{base} #{k + 1}", (raw, a, b, text)))
    return out


# ---------------------------------------------------------------------------------------------
# configuration


def load_config(path: Path = CONFIG) -> dict:
    """The checked-in mapping: ``[[area]]`` tables with ``modules`` (globs), ``tests``, ``target``.

    Parameters
    ----------
    path : pathlib.Path, optional
        The TOML file (default: the checked-in ``mutation_config.toml``).

    Returns
    -------
    dict
        The parsed configuration.
    """
    with open(path, "rb") as f:
        return tomllib.load(f)


def load_equivalents(path: Path = EQUIVALENTS, table: str = "equivalent") -> dict[str, str]:
    """``{mutant key: reason}`` of one table of the file; every entry must give a reason.

    ``table="equivalent"``: mutants that cannot change any result (not run, not scored).
    ``table="tolerated"``: mutants that do change a result, within what the function promises
    (a search stopping at a different point of its tolerance, a larger valid error allowance);
    they are still run and a survivor still counts as survived, its reason printed beside it.
    """
    with open(path, "rb") as f:
        data = tomllib.load(f)
    eq = {}
    for e in data.get(table, []):
        if not e.get("reason", "").strip():
            raise ValueError(f"mutation_equivalents.toml: {e.get('key')!r} has no reason")
        eq[e["key"]] = e["reason"]
    return eq


def load_fingerprints(path: Path = EQUIVALENTS) -> dict[str, str]:
    """``{mutant key: fingerprint}`` of the ``[[equivalent]]`` and ``[[tolerated]]`` entries that record
    one (:meth:`Mutant.fingerprint`): the mutated line the reason was written for. A key says where a
    mutant is only up to its repeat number, so an edit can move a key onto another mutant; the
    well-formedness test then finds the entry's fingerprint no longer matches and the entry must be
    triaged again (its reason was about another line)."""
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {e["key"]: e["fingerprint"] for t in ("equivalent", "tolerated") for e in data.get(t, []) if "fingerprint" in e}


def area_of(config: dict, path: str) -> dict | None:
    """The first area whose module globs match ``path`` (minus its ``exclude`` globs)."""
    for area in config["area"]:
        if any(fnmatch.fnmatch(path, g) for g in area["modules"]) and not any(
                fnmatch.fnmatch(path, g) for g in area.get("exclude", [])):
            return area
    return None


def tests_of(root: Path, area: dict, path: str) -> list[str]:
    """The area's tests for one module: ``{stem}`` in an entry is the module's file stem (an entry
    whose file does not exist for that stem is left out, and the area's ``fallback`` tests are
    added when every ``{stem}`` entry was left out)."""
    out, stems, missing = [], 0, 0
    for t in area["tests"]:
        if "{stem}" in t:
            stems += 1
            t = t.replace("{stem}", Path(path).stem)
            if not (root / t).exists():
                missing += 1
                continue
        out.append(t)
    if stems and missing == stems:
        out += [t for t in area.get("fallback", []) if t not in out]
    if not out:
        raise ValueError(f"mutation_config.toml: no tests for {path} in area {area['name']}")
    return out


def rank(key: str, seed: int) -> float:
    """A stable pseudo-random number in [0, 1) of (seed, key)."""
    h = hashlib.sha256(f"{seed}|{key}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def selected(key: str, fraction: float, seed: int) -> bool:
    """Stable sampling: a hash of (seed, key) under ``fraction``."""
    return fraction >= 1.0 or rank(key, seed) < fraction


# ---------------------------------------------------------------------------------------------
# running


class _MutantFinder:
    """Meta-path finder: loads one dotted module from the mutant's file."""

    def __init__(self, name, file, package_dir=None):
        self.name, self.file, self.package_dir = name, file, package_dir

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        import importlib.util

        locs = [self.package_dir] if self.package_dir else None
        return importlib.util.spec_from_file_location(fullname, self.file, submodule_search_locations=locs)


class _RootFinder:
    """Meta-path finder: ``prirfed``, ``prirfed.reference`` and ``prirfed.verified`` from the repository
    under test (``root``), so that every module a mutant's tests import is that checkout's. Without it
    a run in a clone imported the unmutated modules from wherever the environment's editable install
    points (``package-dir`` maps the two subpackages to ``reference/`` and ``verified/`` of the
    installed checkout): edits there leaked into the clone's results. Their submodules then load
    through the packages' ``__path__``."""

    def __init__(self, root: Path):
        self.dirs = {"prirfed": root / "prirfed", "prirfed.reference": root / "reference", "prirfed.verified": root / "verified"}

    def find_spec(self, fullname, path=None, target=None):
        d = self.dirs.get(fullname)
        if d is None:
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(fullname, str(d / "__init__.py"), submodule_search_locations=[str(d)])


_CODE = {"passed": 0, "killed": 1, "no-tests": 5, "not-imported": 7}


def _in_child(root: Path, workdir: Path, log: Path, body):
    """The frame of a forked child: output to ``log``, its own process group, Hypothesis' database
    under ``workdir``, the checkout under test first on the import path; ``body()`` returns the exit
    code (any exception: 3). Never returns."""
    code = 3
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.setpgid(0, 0)
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(workdir / "hypothesis")
        os.environ.setdefault("HYPOTHESIS_PROFILE", "prirfed-ci")
        # the checkout under test, not the installed one (the parent has imported only prirfed and
        # prirfed.testing, lazy packages without the modules under test)
        sys.meta_path.insert(0, _RootFinder(Path(root).resolve()))
        code = body()
    except BaseException:  # noqa: BLE001 - report anything as an error exit
        import traceback

        traceback.print_exc()
        code = 3
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _child(root: Path, mutant: Mutant | None, tests: list[str], workdir: Path, fresh_numba: bool, log: Path):
    """Runs in the forked child: ``tests`` against ``mutant``; never returns."""

    def body():
        if fresh_numba:
            os.environ["NUMBA_CACHE_DIR"] = str(workdir / "numba_cache")
        if mutant is not None:
            file = workdir / "src" / mutant.path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(mutant.source, encoding="utf-8")
            pkg = str((root / mutant.path).parent) if mutant.path.endswith("__init__.py") else None
            sys.meta_path.insert(0, _MutantFinder(mutant.module, str(file), pkg))
        import pytest

        os.chdir(root)
        rc = pytest.main([*tests, "-x", "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", "--assert=plain",
                          "--strict-markers", "-W", "ignore::DeprecationWarning"])
        rc = int(rc)
        if mutant is not None and rc == 0:
            mod = sys.modules.get(mutant.module)
            if mod is None or getattr(mod, "__file__", None) != str(workdir / "src" / mutant.path):
                rc = _CODE["not-imported"]
        return rc

    _in_child(root, workdir, log, body)


def _forked(child, timeout: float):
    """Forks; the child runs ``child()`` (which never returns), the parent waits at most ``timeout``
    seconds and then ends the child's process group. Returns ``(exit code or None if timed out,
    seconds)``."""
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        child()
    try:
        os.setpgid(pid, pid)  # also done by the child: whichever runs first
    except (PermissionError, ProcessLookupError):
        pass
    status = None
    try:
        status = _wait(pid, t0, timeout)
    finally:
        if status is None:  # timed out, or the parent is being stopped: end the child's group
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return status, time.monotonic() - t0


def run_one(root: Path, mutant: Mutant | None, tests: list[str], timeout: float, fresh_numba: bool,
            keep_log: Path | None = None) -> tuple[str, float]:
    """Runs ``tests`` against ``mutant`` (``None``: the unmutated code) in a forked child."""
    with tempfile.TemporaryDirectory(prefix="prirfed-mutant-") as tmp:
        workdir = Path(tmp)
        log = keep_log or workdir / "pytest.log"
        status, dt = _forked(lambda: _child(root, mutant, tests, workdir, fresh_numba, log), timeout)
    if status is None:
        return "timeout", dt
    if status == 0:
        return "survived", dt
    if status == _CODE["not-imported"]:
        return "not-imported", dt
    if status == _CODE["no-tests"]:
        return "no-tests", dt
    return "killed", dt


def _wait(pid, t0, timeout):
    """The child's exit code, or None after ``timeout`` seconds."""
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(st)
        if time.monotonic() - t0 > timeout:
            return None
        time.sleep(0.05)


@functools.lru_cache(maxsize=8)
def _statement_spans(raw: bytes) -> tuple:
    """``(start byte, end byte, first line)`` of every statement of one source (all mutants of a
    file share it, so it is parsed once)."""
    starts = _byte_offsets(raw)
    return tuple((starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset, n.lineno)
                 for n in ast.walk(ast.parse(raw.decode("utf-8"))) if isinstance(n, ast.stmt))


def _statement_lines(m: Mutant) -> list[int]:
    """The lines under which line coverage records the mutated code: from the first line of the
    innermost statement holding the mutated span to the span's last line (coverage files a
    multi-line statement under its first line). Empty when no statement holds the span."""
    raw, a, b, _ = m.span
    inside = [(hi - lo, line) for lo, hi, line in _statement_spans(raw) if lo <= a and b <= hi]
    if not inside:
        return []
    first = min(inside)[1]  # the innermost statement: the shortest span holding the mutation
    last = raw[:max(a, b - 1)].count(b"\n") + 1
    return list(range(first, max(first, last) + 1))


class _TestContexts:
    """pytest plugin of the coverage run: each test's lines under a context named by its test
    function (``file::Class::name``, parameters dropped); code run outside a test (imports,
    collection) stays under the empty context."""

    def __init__(self, cov):
        self.cov = cov

    def pytest_runtest_setup(self, item):
        self.cov.switch_context(item.nodeid.split("[", 1)[0])

    def pytest_runtest_teardown(self, item, nextitem):
        self.cov.switch_context(item.nodeid.split("[", 1)[0])

    def pytest_runtest_logreport(self, report):
        if report.when == "teardown":
            self.cov.switch_context("")


def _coverage_child(root: Path, tests: list[str], files: list[str], workdir: Path, out_json: Path, log: Path):
    """Runs in a forked child: the unmutated ``tests`` under line coverage of ``files``; writes
    ``{file: {line: [contexts]}}`` to ``out_json``; never returns."""

    def body():
        import coverage
        import pytest

        cov = coverage.Coverage(data_file=None, include=[str((root / f).resolve()) for f in files], config_file=False)
        cov.start()
        os.chdir(root)
        rc = int(pytest.main([*tests, "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", "--assert=plain",
                              "-W", "ignore::DeprecationWarning"], plugins=[_TestContexts(cov)]))
        cov.stop()
        data = cov.get_data()
        lines = {}
        for f in files:
            by_line = data.contexts_by_lineno(str((root / f).resolve()))
            lines[f] = {str(n): sorted(c) for n, c in by_line.items()}
        out_json.write_text(json.dumps(lines), encoding="utf-8")
        return rc

    _in_child(root, workdir, log, body)


def covering_map(root: Path, tests: list[str], files: list[str], out: Path, commit: str | None) -> dict:
    """Which test functions execute which lines of ``files``: ``{file: {line: [contexts]}}``, the
    empty context meaning outside any test. Cached in ``out/covering.json`` for one commit and one
    list of tests (a dirty checkout is measured afresh every time)."""
    cache = out / "covering.json"
    want = dict(commit=commit, tests=sorted(tests), files=sorted(files))
    if cache.is_file() and commit and not commit.endswith("+dirty"):
        old = json.loads(cache.read_text(encoding="utf-8"))
        if {k: old.get(k) for k in want} == want:
            return old["lines"]
    with tempfile.TemporaryDirectory(prefix="prirfed-covering-") as tmp:
        workdir = Path(tmp)
        got, log = workdir / "lines.json", out / "covering.log"
        status, dt = _forked(lambda: _coverage_child(root, tests, files, workdir, got, log), 4 * 3600)
        if status != 0 or not got.is_file():
            raise RuntimeError(f"--covering: the unmutated tests under coverage did not pass (exit {status}): see {log}")
        lines = json.loads(got.read_text(encoding="utf-8"))
    print(f"[covering] {len(tests)} test entries under line coverage: {dt:.1f} s", flush=True)
    cache.write_text(json.dumps(dict(want, lines=lines)), encoding="utf-8")
    return lines


def covering_tests(lines: dict, m: Mutant, area_tests: list[str]) -> list[str] | None:
    """The area's test functions that executed the mutant's statement, in the order the area lists
    its tests; None (run them all) when the statement ran outside every test (at import) or in
    none of them."""
    got = set()
    for n in _statement_lines(m):
        got.update(lines.get(m.path, {}).get(str(n), []))
    if not got or "" in got:
        return None

    def place(ctx):
        for i, t in enumerate(a.rstrip("/") for a in area_tests):
            if ctx == t or ctx.startswith(t + "::") or ctx.startswith(t + "/"):
                return i
        return None

    mine = sorted((i, c) for i, c in ((place(c), c) for c in got) if i is not None)
    return [c for _, c in mine] or None


def _preimport():
    """Heavy third-party imports done once in the parent (the children fork from it)."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.special  # noqa: F401
    import scipy.stats  # noqa: F401
    import mpmath  # noqa: F401
    import pytest  # noqa: F401
    import hypothesis  # noqa: F401
    # Numba is not imported here: its cache folder is read from the environment at import time.


def named_mutants(root: Path, config: dict) -> list[Mutant]:
    """The hand-written mutants of the config's ``[[named]]`` tables (``path``, ``find``: a unique
    piece of the source, ``replace``, ``why``): mutations a reviewer found to survive once; always run."""
    out = []
    for n in config.get("named", []):
        src = (root / n["path"]).read_text(encoding="utf-8")
        if src.count(n["find"]) != 1:
            raise ValueError(f"mutation_config.toml: named mutant {n['find']!r} occurs {src.count(n['find'])} times "
                             f"in {n['path']} (must be exactly once)")
        line = src[: src.index(n["find"])].count("\n") + 1
        raw = src.encode("utf-8")
        a = raw.index(n["find"].encode("utf-8"))
        out.append(Mutant(n["path"], module_name(n["path"]), line, n["why"], "named", _short(n["find"]),
                          _short(n["replace"]), f"{n['path']}::named::{_short(n['find'])} => {_short(n['replace'])}",
                          (raw, a, a + len(n["find"].encode("utf-8")), n["replace"])))
    return out


def collect(root: Path, config: dict, paths: list[str] | None, fraction: float, seed: int,
            per_area: int | None = None, interleave: bool = False):
    """(area, mutant) pairs of the configured modules (or of ``paths``), sampled, then the named ones.

    ``interleave``: the sampled mutants in round-robin order over the areas (the first of each
    area by rank, then the second of each, ...) instead of source order."""
    files = []
    for area in config["area"]:
        for g in area["modules"]:
            for p in sorted(root.glob(g)):
                rel = p.relative_to(root).as_posix()
                if area_of(config, rel) is area and rel not in files:
                    files.append(rel)
    if paths:
        files = [f for f in files if any(fnmatch.fnmatch(f, p) or f == p for p in paths)]
    pairs = []
    for f in files:
        area = area_of(config, f)
        for m in mutants_of(f, root):
            if selected(m.key, fraction, seed):
                pairs.append((area, m))
    if per_area is not None:  # the per_area lowest ranks of each area, in source order
        keep = set()
        for area in config["area"]:
            mine = sorted((rank(m.key, seed), m.key) for a, m in pairs if a is area)
            keep.update(k for _, k in mine[:per_area])
        pairs = [(a, m) for a, m in pairs if m.key in keep]
    pairs = [(a, m) for a, m in pairs if m.compiles()]  # a splice that is not valid Python is no mutant
    if interleave:  # round robin over the areas, each in rank order: a run stopped early covers every area
        order = {}
        for a, m in pairs:
            order.setdefault(a["name"], []).append((rank(m.key, seed), m.key))
        pos = {k: (i, n) for n, (name, ks) in enumerate(order.items()) for i, (_, k) in enumerate(sorted(ks))}
        pairs.sort(key=lambda am: pos[am[1].key])
    for m in named_mutants(root, config):
        area = area_of(config, m.path)
        if area is not None and (not paths or m.path in files):
            pairs.append((area, m))
    return pairs


def summarise(results: list[dict]) -> dict:
    """Per-module and per-area counts, and the score of each area."""
    per = {}
    for r in results:
        for key in (("module", r["path"]), ("area", r["area"])):
            d = per.setdefault(key, {"killed": 0, "survived": 0, "timeout": 0, "equivalent": 0, "not-imported": 0,
                                     "no-tests": 0})
            d[r["outcome"]] += 1
    for d in per.values():
        live = d["killed"] + d["timeout"] + d["survived"] + d["not-imported"] + d["no-tests"]
        d["score"] = (d["killed"] + d["timeout"]) / live if live else 1.0
    return per


def write_report(results, per, config, out: Path, header: str):
    lines = [f"# Mutation report\n\n{header}\n", "| area / module | killed | survived | timed out | equivalent | score | target |",
             "|---|---|---|---|---|---|---|"]
    targets = {a["name"]: a["target"] for a in config["area"]}
    for (kind, name), d in sorted(per.items(), key=lambda kv: (kv[0][0] != "area", kv[0][1])):
        surv = d["survived"] + d["not-imported"] + d["no-tests"]
        t = f"{targets[name]:.0%}" if kind == "area" else ""
        label = f"**{name}**" if kind == "area" else name
        lines.append(f"| {label} | {d['killed']} | {surv} | {d['timeout']} | {d['equivalent']} | {d['score']:.1%} | {t} |")
    lines.append("\n## Survivors\n")
    for r in results:
        if r["outcome"] in ("survived", "not-imported", "no-tests"):
            why = f"; tolerated: {r['tolerated']}" if r.get("tolerated") else ""
            lines.append(f"- `{r['describe']}` ({r['outcome']}{why})  \n  key: `{r['key']}`")
    lines.append("\n## Equivalent (mutation_equivalents.toml)\n")
    for r in results:
        if r["outcome"] == "equivalent":
            lines.append(f"- `{r['describe']}`: {r['reason']}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _names_the_same_mutant(rec: dict, m: Mutant, root: Path, cache: dict) -> bool:
    """Whether an earlier record of ``m.key`` was made on the mutant ``m`` is today: by the record's
    fingerprint, or, for records written before fingerprints, by rebuilding the mutants of the file at
    the record's commit (``git show``). A record that cannot be checked (no commit, a dirty or unknown
    one, or a key the file's mutants did not hold then, such as a named mutant of the area config) is
    kept, as before fingerprints."""
    if "fingerprint" in rec:
        return rec["fingerprint"] == m.fingerprint()
    commit = rec.get("commit")
    if not commit or "+" in str(commit):
        return True
    if (commit, m.path) not in cache:
        cache[commit, m.path] = None
        try:
            text = subprocess.run(["git", "show", f"{commit}:{m.path}"], cwd=root, capture_output=True,
                                  timeout=60, check=True).stdout
        except (OSError, subprocess.SubprocessError):
            text = None
        if text:
            with tempfile.TemporaryDirectory() as tmp:
                (Path(tmp) / m.path).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / m.path).write_bytes(text)
                cache[commit, m.path] = {o.key: o.fingerprint() for o in mutants_of(Path(m.path), Path(tmp))}
    old = cache[commit, m.path]
    return old is None or m.key not in old or old[m.key] == m.fingerprint()


def _commit_of(root: Path) -> str | None:
    """The checkout's commit (with ``+dirty`` when its tracked files differ from it), or None outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (head + ("+dirty" if dirty else "")) if head else None


def main(argv=None) -> int:
    """The command ``python -m prirfed.testing.mutation``: collect, run and report mutants.

    Parameters
    ----------
    argv : list of str or None, optional
        Command-line arguments (default ``sys.argv[1:]``); ``--help`` lists them.

    Returns
    -------
    int
        Exit status: 0, 1 when a score is under its target (``--fail-under``,
        ``--fail-under-total``), 2 when the unmutated tests of a module do not pass.
    """
    ap = argparse.ArgumentParser(prog="python -m prirfed.testing.mutation", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="files or globs (default: every module of mutation_config.toml)")
    ap.add_argument("--root", default=".", help="repository root (default: .)")
    ap.add_argument("--sample", type=float, default=1.0, help="fraction of mutants kept (stable hash sampling)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-area", type=int, default=None, help="at most this many mutants per area (stable choice)")
    ap.add_argument("--timeout-factor", type=float, default=3.0,
                    help="per-mutant time limit = factor x the module's unmutated test time + 30 s")
    ap.add_argument("--timeout", type=float, default=None,
                    help="a fixed per-mutant time limit in seconds (then the unmutated tests are not run first)")
    ap.add_argument("--fail-under-total", type=float, default=None,
                    help="exit 1 when the score over all run mutants is under this fraction")
    ap.add_argument("--out", default="mutation-report", help="folder for report.md and results.json")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument("--fail-under", action="store_true", help="exit 1 when an area is under its target")
    ap.add_argument("--area", action="append", default=[], help="only these areas (by name)")
    ap.add_argument("--match", action="append", default=[],
                    help="only mutants whose description contains this text (repeatable: any of them)")
    ap.add_argument("--config", default=str(CONFIG), help="the area mapping (default: the checked-in one)")
    ap.add_argument("--equivalents", default=str(EQUIVALENTS),
                    help="the equivalent and tolerated mutants (default: the checked-in mutation_equivalents.toml)")
    ap.add_argument("--survivors-of", action="append", default=[], metavar="PROGRESS",
                    help="only the mutants that survived (or were not imported) in this earlier run's "
                         "progress.jsonl (repeatable): re-runs a sample's survivors against today's tests")
    ap.add_argument("--resume", action="store_true",
                    help="keep OUT/progress.jsonl and run only the mutants not recorded there: a long run (the "
                         "full run) made in pieces, each stopped any time (Ctrl-C, SIGTERM) and started again "
                         "with the same arguments; the report covers every recorded mutant and names the "
                         "commits the pieces ran at; a record whose key now names another mutated line "
                         "(the code changed) runs again")
    ap.add_argument("--interleave", action="store_true",
                    help="run the areas' mutants round robin, so a run stopped early (Ctrl-C, SIGTERM) has "
                         "sampled every area alike; the report then covers the mutants run so far")
    ap.add_argument("--covering", action="store_true",
                    help="run each mutant first against only the area's tests that execute its statement "
                         "(line coverage of the unmutated code, measured once and kept in OUT/covering.json); "
                         "a survivor of those, or a statement run at import or by no traced test, is run "
                         "against all the area's tests: the same outcomes, in less time")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    for name, files in (("--config", [args.config]), ("--equivalents", [args.equivalents]),
                        ("--survivors-of", args.survivors_of)):
        for f in files:
            if not Path(f).is_file():
                ap.error(f"{name}: no such file: {f}")
    config = load_config(Path(args.config))
    if args.area:
        config = dict(config, area=[a for a in config["area"] if a["name"] in args.area])
    equivalents = load_equivalents(Path(args.equivalents))
    tolerated = load_equivalents(Path(args.equivalents), table="tolerated")
    pairs = collect(root, config, args.paths, args.sample, args.seed, args.per_area, args.interleave)
    if args.match:
        pairs = [(a, m) for a, m in pairs if any(t in m.describe() for t in args.match)]
    if args.survivors_of:
        keep = set()
        for f in args.survivors_of:
            for n, line in enumerate(Path(f).read_text(encoding="utf-8").splitlines(), 1):
                try:
                    rec = json.loads(line) if line.strip() else {}
                except json.JSONDecodeError:
                    ap.error(f"--survivors-of: {f} line {n} is not a progress.jsonl record")
                if rec.get("outcome") in ("survived", "not-imported", "no-tests"):
                    keep.add(rec["key"])
        pairs = [(a, m) for a, m in pairs if m.key in keep]
    if args.list:
        for area, m in pairs:
            print(f"{area['name']:<24} {m.describe()}")
        print(f"{len(pairs)} mutants")
        return 0
    _preimport()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run_one's cleanup ends the running child
    stopped = None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    done = {}  # --resume: the mutants an earlier piece of this run recorded, by key
    if args.resume and (out / "progress.jsonl").is_file():
        for n, line in enumerate((out / "progress.jsonl").read_text(encoding="utf-8").splitlines(), 1):
            try:
                rec = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:  # a line cut by a kill mid-write: that mutant runs again
                print(f"--resume: {out / 'progress.jsonl'} line {n} is not a record; ignored", file=sys.stderr)
                continue
            if rec is not None:
                done[rec["key"]] = rec
    else:
        (out / "progress.jsonl").write_text("", encoding="utf-8")
    commit = _commit_of(root)
    at_commit, moved = {}, []  # records checked against the file at their commit; keys now on other mutants
    for a, m in pairs:
        if m.key in done and m.key not in equivalents and not _names_the_same_mutant(done[m.key], m, root, at_commit):
            moved.append(m.key)
            del done[m.key]
    if moved:
        print(f"--resume: {len(moved)} records were made on other code under their key (an edit moved the key "
              "onto another mutant, or changed its line); those mutants run again", file=sys.stderr)
    lines = {}
    if args.covering:
        todo = [(a, m) for a, m in pairs if m.key not in equivalents and m.key not in done]
        all_tests, files = [], []
        for a, m in todo:
            all_tests += [t for t in tests_of(root, a, m.path) if t not in all_tests]
            files += [m.path] if m.path not in files else []
        if todo:
            try:
                lines = covering_map(root, all_tests, files, out, commit)
            except RuntimeError as exc:  # as the baseline's refusal: the unmutated tests must pass
                print(exc, file=sys.stderr)
                return 2
    t_start = time.monotonic()
    baseline = {}
    results = []
    for i, (area, m) in enumerate(pairs):
        if stopped is not None:
            break
        rec = dict(path=m.path, area=area["name"], key=m.key, describe=m.describe(), line=m.line, op=m.op,
                   fingerprint=m.fingerprint())
        if m.key in equivalents:
            rec.update(outcome="equivalent", reason=equivalents[m.key], seconds=0.0)
            results.append(rec)
            continue
        if m.key in done:
            results.append(done[m.key])
            continue
        tests = tests_of(root, area, m.path)
        fresh = bool(area.get("fresh_numba", False))
        bkey = tuple(tests)
        if args.timeout is not None:
            baseline.setdefault(bkey, None)
        elif bkey not in baseline:
            log = out / f"baseline-{len(baseline)}.log"
            outcome, dt = run_one(root, None, tests, 3600, fresh, keep_log=log)
            if outcome != "survived":
                print(f"baseline of {' '.join(tests)} does not pass ({outcome}): see {log}", file=sys.stderr)
                return 2
            baseline[bkey] = dt
            print(f"[baseline] {' '.join(tests)}: {dt:.1f} s", flush=True)
        limit = args.timeout if args.timeout is not None else args.timeout_factor * baseline[bkey] + 30.0
        first = covering_tests(lines, m, tests) if args.covering else None
        try:
            if first is not None:
                outcome, dt = run_one(root, m, first, limit, fresh)
                rec["covering"] = len(first)
                if outcome in ("survived", "not-imported", "no-tests"):  # the whole area decides
                    outcome, dt2 = run_one(root, m, tests, limit, fresh)
                    dt += dt2
                    rec["covering_then_area"] = True
            else:
                outcome, dt = run_one(root, m, tests, limit, fresh)
        except (KeyboardInterrupt, SystemExit) as exc:  # the running child is ended by run_one's cleanup
            stopped = f"stopped by {type(exc).__name__} after {i} of {len(pairs)} mutants"
            print(stopped, file=sys.stderr, flush=True)
            break
        rec.update(outcome=outcome, seconds=round(dt, 2), commit=commit)
        if outcome in ("survived", "timeout") and m.key in tolerated:
            # a tolerated mutant that ran out of time is not evidence of a kill either
            rec["tolerated"] = tolerated[m.key] + (f" (timed out at {limit:.0f} s)" if outcome == "timeout" else "")
            rec["outcome"] = outcome = "survived"
        results.append(rec)
        with open(out / "progress.jsonl", "a", encoding="utf-8") as f:  # readable while the run goes on
            f.write(json.dumps(rec) + "\n")
        print(f"[{i + 1}/{len(pairs)}] {outcome:<12} {dt:6.1f}s {m.describe()}", flush=True)
    elapsed = time.monotonic() - t_start
    per = summarise(results)
    header = (f"command: `python -m prirfed.testing.mutation {' '.join(argv if argv is not None else sys.argv[1:])}`; "
              f"{len(results)} mutants, {elapsed:.0f} s wall" + (f"; {stopped}" if stopped else ""))
    resumed = [r for r in results if r["key"] in done and r["outcome"] != "equivalent"]
    if resumed:
        commits = sorted({str(r.get("commit")) for r in results if r["outcome"] != "equivalent"})
        header += (f"; resumed: {len(resumed)} of them recorded by earlier pieces of this run; the pieces' "
                   f"mutant time {sum(r.get('seconds', 0.0) for r in results):.0f} s in all, at "
                   f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits)}")
    (out / "results.json").write_text(json.dumps(dict(results=results, elapsed=elapsed), indent=1), encoding="utf-8")
    write_report(results, per, config, out / "report.md", header)
    print((out / "report.md").read_text(encoding="utf-8"))
    under = [name for (kind, name), d in per.items()
             if kind == "area" and d["score"] < next(a["target"] for a in config["area"] if a["name"] == name)]
    if args.fail_under and under:
        print(f"mutation score under target in: {', '.join(under)}", file=sys.stderr)
        return 1
    live = [r for r in results if r["outcome"] != "equivalent"]
    if stopped:
        print(f"{stopped}: the report covers those only", file=sys.stderr)
    total = sum(r["outcome"] in ("killed", "timeout") for r in live) / len(live) if live else 1.0
    print(f"total score: {total:.1%} of {len(live)} non-equivalent mutants")
    if args.fail_under_total is not None and total < args.fail_under_total:
        print(f"mutation score {total:.1%} is under {args.fail_under_total:.0%}", file=sys.stderr)
        return 1
    return 130 if stopped else 0


if __name__ == "__main__":
    sys.exit(main())
