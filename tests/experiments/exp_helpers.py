"""Helpers shared by the experiment tests (plain functions, imported as ``exp_helpers``)."""

from __future__ import annotations

import csv
import math

import pytest

from scipy import optimize, stats

from prirfed.experiments import reproduce


def read_csv(path) -> list[dict]:
    """Rows of a CSV written by the experiments, as dicts of strings."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def run_tiny(name, out, **kw):
    """``reproduce(name, out)`` in tiny mode with the reference backend and no progress bar,
    unless the caller says otherwise."""
    kw.setdefault("mode", "tiny")
    kw.setdefault("backend", "reference")
    kw.setdefault("progress", False)
    return reproduce(name, out, **kw)


def tiny_run_fixture(name, folder, **kw):
    """A module-scoped fixture: experiment ``name`` run once in tiny mode (``run_tiny``'s keywords
    ``kw``) into a fresh folder; gives (folder, reproduce's result)."""

    @pytest.fixture(scope="module")
    def tiny(tmp_path_factory):
        out = tmp_path_factory.mktemp(folder) / "tiny"
        return out, run_tiny(name, out, **kw)

    return tiny


def gdp_eps(mu, delta, hi=500.0):
    """Exact eps of a mu-GDP mechanism at delta (Dong, Roth, Su 2022, Cor. 2.13), by root finding:
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    g = lambda e: stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta  # noqa: E731
    return optimize.brentq(g, 0.0, hi, xtol=1e-12)
