"""The API reference: every public function and class documented in NumPy style.

The public API is enumerated from the code (every module of ``prirfed.reference``,
``prirfed.verified`` and ``prirfed.testing``, its ``__all__`` or, without one, its names not
starting with ``_``; the names of the ``prirfed`` facade; the ``prirfed`` command's ``main``).
A public function or class fails when its docstring

- lacks a ``Parameters`` section while it takes parameters (a class: its constructor's),
- lacks a ``Returns`` (or ``Yields``) section while it returns something (a ``return`` with a
  value in its source, or a return annotation other than ``None``),
- lacks its source (an author-year citation such as "Huang et al. (2024), eq. (5)") in a
  paper-derived module (:data:`PAPER_DERIVED`; argument validators ``check_*`` excepted, and a
  helper that implements no formula says so on a line "Helper, not a paper formula: ..."),
- shows an internal paper code (000, 001, 002: readers get author-year names, prirfed.papers) in
  its prose (a code in a doctest or a ````literal```` is a value a user types, e.g. ``paper="000"``).

A Numba twin that does exactly what its reference does is documented by one line,
"Verified twin of :func:`...`" (the reference carries the documentation).

There is no list of exceptions: a new public module or name is checked as soon as it exists. The rendered page (no docstring
shown as a literal block) is checked on the built site in ``tests/docs/test_browser.py``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path

import pytest

from prirfed.papers import CODE, PAPERS

ROOTS = ("prirfed.reference", "prirfed.verified", "prirfed.testing")

#: modules whose functions implement formulas of a paper (or of the literature): every public
#: callable names its source
PAPER_DERIVED = re.compile(r"^prirfed\.(reference|verified)\.(manifolds|mechanisms|accounting|bounds|problems|trainers)\b")

#: the facade's modules documented on the API pages besides the three roots
EXTRA_MODULES = ("prirfed.backend", "prirfed.papers", "prirfed.cli", "prirfed.experiments.framework")


SOURCE = re.compile(
    r"\b[A-Z][A-Za-z'\-]+(?: et al\.| and [A-Z][A-Za-z'\-]+| & [A-Z][A-Za-z'\-]+)? \(\d{4}[a-z]?\)"  # Name et al. (2024)
    r"|:cite:[a-z]*:`"
    r"|^Verified twin of "
    r"|^Helper, not a paper formula\b", re.M)
TWIN = re.compile(r"^Verified twin of :(?:func|class|meth):`[\w.]+`")


def public_modules() -> list[str]:
    out = []
    for root in ROOTS:
        pkg = importlib.import_module(root)
        out.append(root)
        for m in pkgutil.walk_packages(pkg.__path__, root + "."):
            if not any(part.startswith("_") for part in m.name.split(".")[1:]):
                out.append(m.name)
    return sorted(out + list(EXTRA_MODULES))


def public_callables(modname: str) -> list[tuple[str, object]]:
    """(qualified name, object) of the functions and classes a module defines and exports."""
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    out = []
    for n in names:
        obj = getattr(mod, n, None)
        obj = getattr(obj, "py_func", obj)  # a Numba dispatcher: its Python function
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, "__module__", None) == modname:
            out.append((f"{modname}.{n}", obj))
    return out


def _parameters(obj) -> list[str]:
    target = obj.__init__ if inspect.isclass(obj) else obj
    if inspect.isclass(obj):
        owner = next((k for k in obj.__mro__ if "__init__" in vars(k)), object)
        if not owner.__module__.startswith("prirfed"):  # object's, an exception's: nothing to document
            return []
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters if p not in ("self", "cls")]


def _returns_value(fn) -> bool:
    ann = inspect.signature(fn).return_annotation
    if ann not in (inspect.Signature.empty, None, "None"):
        return True
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    top = tree.body[0]
    for node in ast.walk(top):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not top:
            continue
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
    return False


def _section(doc: str, *titles: str) -> bool:
    return any(re.search(rf"^{t}\n-{{{len(t)}}}\s*$", doc, re.M) for t in titles)


def prose(doc: str) -> str:
    """The text a reader reads as prose: without doctest lines and ````literal```` spans (a value
    such as ``paper="000"`` is an argument, shown as code)."""
    lines = [ln for ln in doc.splitlines() if not ln.lstrip().startswith((">>>", "..."))]
    return re.sub(r"``.+?``", "", "\n".join(lines), flags=re.S)


def _is_input_check(qualname: str) -> bool:
    """An argument validator (``check_*``) implements no formula: it needs no source."""
    return qualname.rsplit(".", 1)[-1].startswith("check_")


def docstring_problems(qualname: str, obj) -> list[str]:
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return ["no docstring"]
    out = [f"paper code {m.group(1)!r} (name the paper: {PAPERS[m.group(1)].short})"
           for m in CODE.finditer(prose(doc)) if m.group(1) in PAPERS]
    if TWIN.match(doc):
        return out
    if _parameters(obj) and not _section(doc, "Parameters"):
        out.append("no Parameters section")
    if inspect.isfunction(obj) and _returns_value(obj) and not _section(doc, "Returns", "Yields"):
        out.append("no Returns section")
    if PAPER_DERIVED.match(qualname) and not SOURCE.search(doc) and not _is_input_check(qualname):
        out.append("no source (author-year citation of the paper and equation)")
    return out


def module_problems(modname: str) -> dict[str, list[str]]:
    out = {q: docstring_problems(q, o) for q, o in public_callables(modname)}
    mod = importlib.import_module(modname)
    out[modname + " (module)"] = [f"paper code {m.group(1)!r}" for m in CODE.finditer(prose(mod.__doc__ or ""))
                                  if m.group(1) in PAPERS]
    return {q: v for q, v in out.items() if v}


MODULES = public_modules()


def test_the_public_api_is_enumerated():
    assert len(MODULES) >= 60, MODULES
    names = {q for m in MODULES for q, _ in public_callables(m)}
    for expected in ("prirfed.reference.manifolds.sphere.Sphere", "prirfed.reference.mechanisms.clip",
                     "prirfed.reference.accounting.calibration.calibrate_sigma_prirfed",
                     "prirfed.testing.manifold_contract.ManifoldContract", "prirfed.reference.trainers.prirfed.prirfed"):
        assert expected in names, expected


def test_the_facade_names_are_documented_where_defined():
    """Every name of ``import prirfed as pr`` (and the command's entry point) passes the same check."""
    import prirfed
    import prirfed.cli

    bad = {}
    for name in prirfed.__all__:
        if name == "__version__":
            continue
        obj = getattr(prirfed, name)
        home = obj.__module__
        found = docstring_problems(f"{home}.{obj.__qualname__}", obj)
        if found:
            bad[f"prirfed.{name}"] = found
    found = docstring_problems("prirfed.cli.main", prirfed.cli.main)
    if found:
        bad["prirfed.cli.main"] = found
    assert not bad, "\n".join(f"{k}: {', '.join(v)}" for k, v in sorted(bad.items()))


@pytest.mark.parametrize("modname", MODULES)
def test_public_docstrings(modname):
    bad = module_problems(modname)
    assert not bad, f"{modname}:\n" + "\n".join(f"  {k}: {', '.join(v)}" for k, v in sorted(bad.items()))


# ------------------------------------------------------------------------------------ the check can fail
def _bare(x, y):
    return x + y


def _documented(x, y):
    """Sum of two numbers, Huang et al. (2024), eq. (1).

    Parameters
    ----------
    x, y : float
        The summands.

    Returns
    -------
    float
        ``x + y``.
    """
    return x + y


def _coded(x):
    """From 000, eq. (1).

    Parameters
    ----------
    x : float
        A number.
    """


def test_the_check_fails_on_bad_docstrings():
    assert docstring_problems("prirfed.reference.mechanisms._bare", _bare) == ["no docstring"]
    assert docstring_problems("prirfed.reference.mechanisms._documented", _documented) == []
    stripped = _documented.__doc__.replace("Returns\n    -------", "Result\n    ------")
    _documented.__doc__, saved = stripped, _documented.__doc__
    try:
        assert docstring_problems("prirfed.reference.mechanisms._documented", _documented) == ["no Returns section"]
        assert docstring_problems("prirfed.testing._documented", _documented) == ["no Returns section"]
    finally:
        _documented.__doc__ = saved
    found = docstring_problems("prirfed.reference.mechanisms._coded", _coded)
    assert any("paper code '000'" in p for p in found) and any("no source" in p for p in found), found
    assert docstring_problems("prirfed.testing._coded", _coded) == [found[0]]
