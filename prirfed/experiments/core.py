"""What an experiment is made of: :class:`Experiment`, :class:`Check`, and the helpers every
experiment module uses to write its outputs (CSV, figures) and to seed its trials.

``write_csv`` and ``save_figure`` are :mod:`prirfed.experiments.outputs`' atomic writers (a file is
replaced whole or not at all; no symbolic link in the output folder is followed).

The experiment modules (``prirfed_fig1`` ... ``rfed_table1``) import this module, never the runner
(:mod:`prirfed.experiments.framework`) or the registry (:mod:`prirfed.experiments.registry`), which
import them: so the experiments package has no import circle.
Proofs note: ``proofs_notes/experiments.md``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .outputs import save_figure, write_csv  # noqa: F401 - the writers experiments import from here (atomic, no symlink followed)

__all__ = ["Experiment", "experiment", "Check", "MODES", "BACKENDS", "config_hash", "trial_seeds", "write_csv", "mean_and_spread",
           "save_figure"]

MODES = ("full", "quick", "tiny")
BACKENDS = ("reference", "verified")


@dataclass(frozen=True)
class Check:
    """One claim and whether the reproduction shows it (computed): ``kind`` is ``"paper"`` (a claim of
    the paper) or ``"ours"`` (a sanity check or threshold of this project); ``shown`` is True, False, or
    None when the comparison is inconclusive (the spread over trials does not decide it)."""

    claim: str
    shown: bool | None
    evidence: str
    kind: str = "paper"

    def __post_init__(self):
        if self.kind not in ("paper", "ours"):
            raise ValueError(f"Check: kind must be 'paper' or 'ours' (got {self.kind!r})")
        if isinstance(self.shown, np.bool_):  # a comparison of NumPy numbers
            object.__setattr__(self, "shown", bool(self.shown))
        if not (self.shown is None or isinstance(self.shown, bool)):
            raise ValueError(f"Check: shown must be True, False or None (inconclusive) (got {self.shown!r})")

    @property
    def verdict(self) -> str:
        """``"yes"``, ``"**no**"`` or ``"inconclusive"`` (as the summaries print it)."""
        return "inconclusive" if self.shown is None else ("yes" if self.shown else "**no**")


@dataclass(frozen=True)
class Experiment:
    """An experiment: its name (``prirfed reproduce NAME``), a one-line description, the paper's
    place it reproduces, and the four functions of :mod:`prirfed.experiments.framework`'s contract."""

    name: str
    description: str
    source: str
    make_config: Callable[[str, int, str], dict]
    trial_specs: Callable[[dict], list]
    run_trial: Callable[[dict, dict, np.random.SeedSequence], dict]
    report: Callable[[dict, list, Path], list]
    nondeterministic_files: tuple = ()  # outputs that hold timings (differ between runs by nature)


def experiment(module: str, name: str, description: str, source: str, figures=(), files=()) -> Experiment:
    """The :class:`Experiment` of an experiment module, written at its end as
    ``EXPERIMENT = experiment(__name__, NAME, description, source, figures=("fig1",))``: the four
    functions are the module's own ``make_config``, ``trial_specs``, ``run_trial`` and ``report``;
    the outputs that differ between identical runs are each figure stem's PNG and PDF, and ``files``."""
    mod = sys.modules[module]
    return Experiment(name=name, description=description, source=source, make_config=mod.make_config,
                      trial_specs=mod.trial_specs, run_trial=mod.run_trial, report=mod.report,
                      nondeterministic_files=tuple(f"{stem}.{ext}" for stem in figures for ext in ("png", "pdf")) + tuple(files))


def config_hash(config: dict) -> str:
    """sha256 (first 16 hex digits) of the configuration's canonical JSON."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def trial_seeds(seed: int, n_trials: int) -> list[np.random.SeedSequence]:
    """Child ``i`` of ``SeedSequence(seed).spawn(n_trials)`` is the seed of trial ``i``."""
    return np.random.SeedSequence(seed).spawn(n_trials)


def mean_and_spread(values) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; 0 for a single run) over runs."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0
