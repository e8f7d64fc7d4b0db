#!/usr/bin/env python3
"""The import graph of the three packages, drawn from the code (every ``import`` statement,
including those inside functions, found by ``ast``), and the checks on it.

    python tools/import_graph.py            # print the layer graph (mermaid) and the findings
    python tools/import_graph.py --write    # rewrite the graph block of ARCHITECTURE.md

Modules are named by their import path: ``prirfed/`` is ``prirfed``, ``reference/`` is
``prirfed.reference`` and ``verified/`` is ``prirfed.verified`` (pyproject.toml's package-dir).
tests/test_architecture.py runs the same functions: no cycle among modules, no upward edge between
layers, no ``_``-prefixed name imported across modules, and ARCHITECTURE.md's graph up to date.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: folder -> import path of the package it holds
PACKAGES = {"prirfed": "prirfed", "reference": "prirfed.reference", "verified": "prirfed.verified"}
#: layer of a module: the longest matching prefix wins; a layer may import only layers below it
LAYERS = {
    "prirfed.reference": 0,
    "prirfed.verified": 1,
    "prirfed": 2,
}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """{module import path: file} for every .py file of the three packages."""
    out = {}
    for folder, pkg in PACKAGES.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([pkg, *parts])] = path
    return out


def _is_package(name: str, files: dict[str, Path]) -> bool:
    return files[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom, files) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved against ``module``)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not _is_package(module, files):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _internal(name: str) -> bool:
    return name == "prirfed" or name.startswith("prirfed.")


def imports_of(module: str, files) -> list[tuple[str, str | None, int]]:
    """[(imported module, imported name or None, line)] of every internal import in ``module``:
    ``import a.b`` gives (a.b, None); ``from a import b`` gives (a.b, None) when a.b is a module,
    else (a, "b")."""
    tree = ast.parse(files[module].read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _internal(alias.name):
                    out.append((alias.name, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, files)
            if not _internal(target):
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in files:
                    out.append((sub, None, node.lineno))
                else:
                    out.append((target, alias.name, node.lineno))
    return out


def edges(files=None) -> dict[str, set[str]]:
    """{module: set of internal modules it imports} (a package import counts as an edge to its
    ``__init__``; importing ``a.b.c`` also runs ``a`` and ``a.b``, which is not drawn)."""
    files = files or module_files()
    g = defaultdict(set)
    for mod in files:
        g[mod]
        for target, _name, _line in imports_of(mod, files):
            if target in files and target != mod:
                g[mod].add(target)
    return dict(g)


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def upward_edges(g) -> list[tuple[str, str]]:
    """Edges from a lower layer to a higher one (reference -> verified or facade, verified -> facade).
    ``prirfed`` itself (the facade's ``__init__``) is the top."""
    return sorted((a, b) for a, nbrs in g.items() for b in nbrs if layer(b) > layer(a))


def cycles(g) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(files=None) -> list[str]:
    """Every place where a module reaches a ``_``-prefixed name of another internal module:
    ``from m import _x``, an import of a ``_``-prefixed module, or ``alias._x`` on an imported module."""
    files = files or module_files()
    found = []
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target, name, line in _imports_in(mod, node, files):
                    parts = target.split(".") + ([name] if name else [])
                    if any(_private(p) for p in parts):
                        found.append(f"{path.relative_to(ROOT)}:{line}: {'.'.join(parts)}")
                for alias in node.names:
                    full = (alias.name if isinstance(node, ast.Import)
                            else f"{_resolve(mod, node, files)}.{alias.name}")
                    if full in files:
                        aliases[alias.asname or alias.name.split(".")[0]] = full
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and _private(node.attr)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return sorted(set(found))


def _imports_in(mod, node, files):
    if isinstance(node, ast.Import):
        return [(a.name, None, node.lineno) for a in node.names if _internal(a.name)]
    target = _resolve(mod, node, files)
    if not _internal(target):
        return []
    return [((f"{target}.{a.name}", None, node.lineno) if f"{target}.{a.name}" in files
             else (target, a.name, node.lineno)) for a in node.names]


def package_of(module: str, files) -> str:
    """The node of ``module`` in the drawn graph: its subpackage (``prirfed.reference.trainers``,
    ``prirfed.experiments``, ...), or the module itself when it sits directly in one of the three
    packages (``prirfed.cli``, ``prirfed.reference.mechanisms``, ``prirfed.verified.kernels``)."""
    if _is_package(module, files):
        return module
    parent = module.rpartition(".")[0]
    return module if parent in PACKAGES.values() else parent


def package_graph(g=None, files=None) -> dict[str, set[str]]:
    """{package: packages it imports} (module edges collapsed; edges inside a package dropped)."""
    files = files or module_files()
    g = g if g is not None else edges(files)
    out = defaultdict(set)
    for a, nbrs in g.items():
        pa = package_of(a, files)
        out[pa]
        for b in nbrs:
            pb = package_of(b, files)
            if pb != pa:
                out[pa].add(pb)
    return dict(out)


BEGIN, END = "<!-- import-graph:begin (tools/import_graph.py --write) -->", "<!-- import-graph:end -->"


def mermaid(pg) -> str:
    """The package graph as a mermaid flowchart (bottom-up: an arrow points at what is imported)."""
    ident = {p: p.replace(".", "_") for p in pg}
    lines = ["```mermaid", "flowchart BT"]
    for p in sorted(pg):
        lines.append(f"  {ident[p]}[{p}]")
    for a in sorted(pg):
        for b in sorted(pg[a]):
            lines.append(f"  {ident[a]} --> {ident[b]}")
    lines.append("```")
    return "\n".join(lines)


def graph_block() -> str:
    """The block of ARCHITECTURE.md between the markers, as this code draws it now."""
    return "\n".join([BEGIN, mermaid(package_graph()), END])


def current_block(path: Path = ROOT / "ARCHITECTURE.md") -> str | None:
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return None
    return text[text.index(BEGIN): text.index(END) + len(END)]


def write(path: Path = ROOT / "ARCHITECTURE.md") -> None:
    text = path.read_text(encoding="utf-8")
    old = current_block(path)
    if old is None:
        raise SystemExit(f"{path}: no {BEGIN} ... {END} block to rewrite")
    path.write_text(text.replace(old, graph_block()), encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the graph block of ARCHITECTURE.md")
    args = ap.parse_args(argv)
    if args.write:
        write()
        return 0
    print(graph_block())
    g = edges()
    for c in cycles(g):
        print("cycle:", " <-> ".join(c))
    for a, b in upward_edges(g):
        print("upward:", a, "->", b)
    for p in private_imports():
        print("private:", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
