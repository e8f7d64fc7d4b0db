"""The registry of experiments: :data:`EXPERIMENTS` maps a name to its
:class:`~prirfed.experiments.core.Experiment`.

Every module of this package that defines a module-level ``EXPERIMENT`` is one experiment; they are
found by name (sorted), so adding an experiment is adding its module. The support modules (the
runner, this registry, and the shared policy the experiments import) are skipped, so the registry
imports experiment modules only, and they import the support modules they need: no module of
``prirfed.experiments`` imports the registry except the runner and the package's ``__init__``.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .core import Experiment

__all__ = ["EXPERIMENTS", "SUPPORT_MODULES"]

#: modules of prirfed.experiments that are not experiments (never imported by the discovery)
SUPPORT_MODULES = frozenset({"core", "framework", "registry", "outputs", "custom", "validate", "privacy", "plots", "rfed_common",
                             "spd_common", "hsp_common"})


def _discover() -> dict[str, Experiment]:
    found: dict[str, Experiment] = {}
    package = __name__.rpartition(".")[0]
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in SUPPORT_MODULES:
            continue
        exp = getattr(importlib.import_module(f"{package}.{info.name}"), "EXPERIMENT", None)
        if isinstance(exp, Experiment):
            if exp.name in found:
                raise RuntimeError(f"prirfed.experiments: two modules define the experiment {exp.name!r}")
            found[exp.name] = exp
    return found


EXPERIMENTS: dict[str, Experiment] = _discover()
