"""Lazy public names of a package (PEP 562): a name is imported from its submodule on first access,
so importing one manifold or problem does not import the others (nor SciPy before it is needed).

    __getattr__, __dir__ = lazy_exports(__name__, {"Sphere": ".sphere"}, eager=["Manifold"])
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["lazy_exports"]


def lazy_exports(package: str, names: dict, eager=()):
    """Module-level ``__getattr__`` and ``__dir__`` (PEP 562) that import a package's public names on first use.

    Parameters
    ----------
    package : str
        The package's dotted name.
    names : dict of str to str
        Public name to the submodule (relative to ``package``) that defines it.
    eager : sequence of str, optional
        Names already defined in the package (listed by ``__dir__``).

    Returns
    -------
    __getattr__ : callable
        Imports the defining submodule of a name on first access; ``AttributeError`` for others.
    __dir__ : callable
        The sorted public names.
    """

    def __getattr__(name):
        if name in names:
            return getattr(import_module(names[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted([*eager, *names])

    return __getattr__, __dir__
