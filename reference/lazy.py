"""Lazy public names of a package (PEP 562): a name is imported from its submodule on first access,
so importing one manifold or problem does not import the others (nor SciPy before it is needed).

    __getattr__, __dir__ = lazy_exports(__name__, {"Sphere": ".sphere"}, eager=["Manifold"])
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: dict, eager=()):
    """(``__getattr__``, ``__dir__``) for ``package``: ``names`` maps a public name to the submodule
    (relative to ``package``) that defines it; ``eager`` are the names already in the package."""

    def __getattr__(name):
        if name in names:
            return getattr(import_module(names[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted([*eager, *names])

    return __getattr__, __dir__
