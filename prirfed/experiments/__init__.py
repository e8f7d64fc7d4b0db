"""Reproductions of the papers' experiments (issue 7): ``prirfed list`` / ``prirfed reproduce``.

:data:`EXPERIMENTS` maps a name to its :class:`~prirfed.experiments.framework.Experiment`. Every
module of this package that defines a module-level ``EXPERIMENT`` is one experiment; they are
found by name (sorted), so adding an experiment is adding its module.
:func:`~prirfed.experiments.framework.reproduce` runs one into an output folder.
Proofs note: ``proofs_notes/experiments.md``.
"""

from __future__ import annotations

import importlib
import pkgutil

from .framework import Check, Experiment, reproduce

__all__ = ["EXPERIMENTS", "Experiment", "Check", "reproduce"]


def _discover() -> dict[str, Experiment]:
    found: dict[str, Experiment] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "framework":
            continue
        exp = getattr(importlib.import_module(f"{__name__}.{info.name}"), "EXPERIMENT", None)
        if isinstance(exp, Experiment):
            if exp.name in found:
                raise RuntimeError(f"prirfed.experiments: two modules define the experiment {exp.name!r}")
            found[exp.name] = exp
    return found


EXPERIMENTS: dict[str, Experiment] = _discover()
