"""Reproductions of the papers' experiments: ``prirfed list`` / ``prirfed reproduce``.

:data:`EXPERIMENTS` (:mod:`prirfed.experiments.registry`) maps a name to its
:class:`~prirfed.experiments.core.Experiment`; :func:`~prirfed.experiments.framework.reproduce`
runs one into an output folder. Layout: ``core`` (what an experiment is), ``framework`` (the
runner), ``registry`` (discovery), the shared policy (``validate``, ``privacy``, ``plots``,
``rfed_common``, ``spd_common``) and one module per reproduced figure or table.
Proofs note: ``proofs_notes/experiments.md``.
"""

from __future__ import annotations

from .core import Check, Experiment
from .framework import reproduce
from .registry import EXPERIMENTS

__all__ = ["EXPERIMENTS", "Experiment", "Check", "reproduce"]
